#pragma once

// The hashes S3 requests need: SHA-256 and HMAC-SHA-256 for Signature V4,
// MD5 for the Content-MD5 a multi-object delete must carry. digests.cc is
// the object store's OpenSSL adapter (libcrypto only; TLS to the server is
// libcurl's, in curl_http.cc). server/tls_context.cc is the other OpenSSL
// adapter; the two sit at layers that cannot share a file.
//
// Pure functions; safe to call from any thread.

#include <string>
#include <string_view>

namespace strata::objectstore {

// Raw digests (32, 32 and 16 bytes).
std::string Sha256(std::string_view data);
std::string HmacSha256(std::string_view key, std::string_view data);
std::string Md5(std::string_view data);

// Lower-case hexadecimal, and standard base64 with padding.
std::string HexLower(std::string_view bytes);
std::string Base64(std::string_view bytes);

}  // namespace strata::objectstore
