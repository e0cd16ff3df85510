#pragma once

// The Accept-Encoding request header (RFC 9110 section 12.5.3), as far as
// the API's gzip answers (gzip_answer.h) and the web UI's brotli and gzip
// files need it.
//
// Thread-safety: reentrant. Errors: none; a malformed value accepts no
// coding it does not name plainly.

#include <string_view>

namespace strata::api {

// Whether an Accept-Encoding value accepts gzip: `gzip` or `x-gzip` listed
// with a nonzero weight, or `*` with a nonzero weight and gzip not listed.
// Codings compare case-insensitively.
bool AcceptsGzip(std::string_view accept_encoding);

// The same for any content coding ("br", "gzip"): listed with a nonzero
// weight, or `*` with a nonzero weight and the coding not listed. For
// "gzip", "x-gzip" counts as gzip.
bool AcceptsCoding(std::string_view accept_encoding, std::string_view coding);

}  // namespace strata::api
