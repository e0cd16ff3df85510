#pragma once

// Gzip for large API answers (docs/api.md, "Compression"): a client that
// sends `Accept-Encoding: gzip` gets an answer of at least
// kMinGzipAnswerBytes compressed, with `Content-Encoding: gzip`; every
// other answer goes out as it is. Trace answers use it: the compact form
// of a 100,000-span trace is about 6 MB of JSON and 2.2 MB gzipped, and
// browsers always ask for gzip.
//
// Thread-safety: reentrant. Errors: none (a malformed Accept-Encoding is
// taken as not accepting gzip; accept_encoding.h).

#include <cstddef>

#include "server/http_adapter.h"

namespace strata::api {

inline constexpr size_t kMinGzipAnswerBytes = 4096;

// Compresses `response`'s body (zlib level 1: the answer is made once and
// read once, so speed matters more than the last percent) when `request`
// accepts gzip and the body is at least kMinGzipAnswerBytes, and says so in
// its headers; adds `Vary: Accept-Encoding` when the body is large enough
// either way.
void GzipIfAccepted(const server::HttpRequest& request, server::HttpResponse* response);

}  // namespace strata::api
