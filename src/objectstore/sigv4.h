#pragma once

// AWS Signature Version 4 for S3 requests, written from AWS's description
// of the algorithm: the canonical request, the string to sign, the signing
// key derived from the secret and the credential scope, and the
// Authorization header. Checked against AWS's published examples
// (sigv4_test.cc).
//
// strata always signs the payload's SHA-256 (x-amz-content-sha256 carries
// it, never UNSIGNED-PAYLOAD): the server then refuses a body that differs
// from what was signed, so a truncated or corrupted upload can never be
// stored under a create-only key.
//
// Pure functions; safe to call from any thread.

#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace strata::objectstore {

struct SigV4Credentials {
  std::string access_key_id;
  std::string secret_access_key;
};

struct SigV4Request {
  std::string method;  // "GET", "PUT", ...
  // The path as sent, before encoding ("/bucket/a b.txt"); each segment is
  // URI-encoded once for the canonical request (S3 does not double-encode).
  std::string path;
  // Query parameters, not encoded; sorted by the signer. A parameter with
  // no value ("delete") has an empty second member.
  std::vector<std::pair<std::string, std::string>> query;
  // Headers to sign, names in any case, values as sent; must include host,
  // x-amz-date and x-amz-content-sha256.
  std::vector<std::pair<std::string, std::string>> headers;
  std::string payload_sha256_hex;
};

struct SigV4Signature {
  std::string canonical_request;
  std::string string_to_sign;
  std::string signature_hex;
  std::string authorization;  // the Authorization header's value
};

// `amz_date` is the request's x-amz-date ("20130524T000000Z").
SigV4Signature SignV4(const SigV4Credentials& credentials, std::string_view region,
                      std::string_view service, std::string_view amz_date,
                      const SigV4Request& request);

// RFC 3986 percent-encoding as SigV4 defines it: unreserved characters
// (A-Z a-z 0-9 - . _ ~) stay, everything else becomes %XY (upper-case hex);
// '/' stays when `keep_slash`.
std::string UriEncode(std::string_view text, bool keep_slash);

// The query string in canonical order, encoded ("a=1&b=x%20y"), which is
// also how strata sends it, so the URL and the signature always agree.
std::string CanonicalQueryString(std::vector<std::pair<std::string, std::string>> query);

// "20130524T000000Z" for a time in seconds since the Unix epoch.
std::string AmzDate(int64_t unix_seconds);

}  // namespace strata::objectstore
