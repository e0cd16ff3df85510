#pragma once

// S3Config: where an S3BatchStore sends its requests and how it signs and
// retries them, ready for flags: each field has a STRATA_S3_* variable, and
// the standard AWS_* variables fill what those leave unset.
//
//   endpoint     STRATA_S3_ENDPOINT, AWS_ENDPOINT_URL_S3, AWS_ENDPOINT_URL
//                (default https://s3.<region>.amazonaws.com)
//   region       STRATA_S3_REGION, AWS_REGION, AWS_DEFAULT_REGION (us-east-1)
//   bucket       STRATA_S3_BUCKET (required)
//   prefix       STRATA_S3_PREFIX (default none; "a/b" is stored as "a/b/")
//   addressing   STRATA_S3_ADDRESSING: "path" (bucket in the path, the
//                default, which any S3 server takes) or "virtual" (bucket in
//                the host name, as AWS prefers)
//   credentials  STRATA_S3_ACCESS_KEY_ID, AWS_ACCESS_KEY_ID;
//                STRATA_S3_SECRET_ACCESS_KEY, AWS_SECRET_ACCESS_KEY
//
// Plain values; ValidateS3Config() names the variable to fix.

#include <chrono>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "objectstore/curl_http.h"
#include "objectstore/sigv4.h"

namespace strata::objectstore {

enum class S3Addressing { kPath, kVirtualHost };

struct S3Config {
  std::string endpoint;  // scheme://host[:port], no path
  std::string region = "us-east-1";
  std::string bucket;
  std::string prefix;  // empty, or ends with '/'
  S3Addressing addressing = S3Addressing::kPath;
  SigV4Credentials credentials;
  // Retries: a request is tried at most `max_attempts` times in all; before
  // attempt n+1 it waits between half and all of
  // min(backoff_max, backoff_initial * 2^(n-1)).
  int max_attempts = 5;
  std::chrono::milliseconds backoff_initial{100};
  std::chrono::milliseconds backoff_max{2000};
  HttpClientOptions http;
  // PutStreamIfAbsent sends an object larger than this as a multipart
  // upload of parts this size (the last one smaller), holding one part in
  // memory; S3 takes parts of kMinS3PartBytes to kMaxS3PartBytes.
  uint64_t part_bytes = uint64_t{16} << 20;
};

inline constexpr uint64_t kMinS3PartBytes = uint64_t{5} << 20;
inline constexpr uint64_t kMaxS3PartBytes = uint64_t{5} << 30;
// S3's most parts in one multipart upload.
inline constexpr uint64_t kMaxS3Parts = 10000;

// Looks a variable up; std::nullopt when unset.
using EnvironmentLookup = std::function<std::optional<std::string>(std::string_view name)>;
// The process environment.
EnvironmentLookup ProcessEnvironment();

// The config the variables describe, checked by ValidateS3Config().
[[nodiscard]] absl::StatusOr<S3Config> S3ConfigFromEnvironment(const EnvironmentLookup& lookup);

// InvalidArgument naming the variable when a field cannot work: no bucket,
// an endpoint that is not http(s)://host[:port], missing credentials, a
// bucket name S3 would refuse, limits out of range.
[[nodiscard]] absl::Status ValidateS3Config(const S3Config& config);

}  // namespace strata::objectstore
