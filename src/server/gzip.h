#pragma once

// gzip (RFC 1952) for the OTLP transports, through zlib (gzip.cc is the only
// file that includes zlib.h).
//
// GunzipLimited is the server's decompressor for untrusted bodies: it stops
// as soon as the output would pass `max_out`, so a gzip bomb (a small body
// that inflates to gigabytes) costs at most `max_out` bytes of memory and
// the time to produce them, never more. Gzip is for clients and tests.
//
// Thread-safety: reentrant. Errors (GunzipLimited):
//  - OutOfRange when the decompressed data would exceed `max_out` bytes
//    (the code HttpStatusFor maps to 413).
//  - InvalidArgument for input that is not gzip: empty, a bad header,
//    corrupt deflate data, a CRC or length mismatch, or truncation, naming
//    what failed, the gzip member (1-based) and its byte offset.

#include <cstddef>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"

namespace strata::server {

// Decompresses `in`, which holds one or more concatenated gzip members (as
// `cat a.gz b.gz` makes); the output is the members' data in order.
[[nodiscard]] absl::StatusOr<std::string> GunzipLimited(std::string_view in, size_t max_out);

// One gzip member holding `in`, at zlib `level` (0-9; -1 is zlib's default).
std::string Gzip(std::string_view in, int level = -1);

}  // namespace strata::server
