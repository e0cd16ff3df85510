#include "objectstore/s3_config.h"

#include <cstdlib>

#include "common/status_macros.h"
#include "fmt/format.h"

namespace strata::objectstore {
namespace {

std::optional<std::string> First(const EnvironmentLookup& lookup,
                                 std::initializer_list<std::string_view> names) {
  for (std::string_view name : names) {
    std::optional<std::string> value = lookup(name);
    if (value.has_value() && !value->empty()) return value;
  }
  return std::nullopt;
}

}  // namespace

EnvironmentLookup ProcessEnvironment() {
  return [](std::string_view name) -> std::optional<std::string> {
    const char* value = std::getenv(std::string(name).c_str());
    if (value == nullptr) return std::nullopt;
    return std::string(value);
  };
}

absl::StatusOr<S3Config> S3ConfigFromEnvironment(const EnvironmentLookup& lookup) {
  S3Config config;
  config.region =
      First(lookup, {"STRATA_S3_REGION", "AWS_REGION", "AWS_DEFAULT_REGION"}).value_or("us-east-1");
  config.endpoint = First(lookup, {"STRATA_S3_ENDPOINT", "AWS_ENDPOINT_URL_S3", "AWS_ENDPOINT_URL"})
                        .value_or(fmt::format("https://s3.{}.amazonaws.com", config.region));
  while (!config.endpoint.empty() && config.endpoint.back() == '/') config.endpoint.pop_back();
  config.bucket = First(lookup, {"STRATA_S3_BUCKET"}).value_or("");
  config.prefix = First(lookup, {"STRATA_S3_PREFIX"}).value_or("");
  while (!config.prefix.empty() && config.prefix.front() == '/') config.prefix.erase(0, 1);
  if (!config.prefix.empty() && config.prefix.back() != '/') config.prefix += '/';
  std::string addressing = First(lookup, {"STRATA_S3_ADDRESSING"}).value_or("path");
  if (addressing == "path") {
    config.addressing = S3Addressing::kPath;
  } else if (addressing == "virtual") {
    config.addressing = S3Addressing::kVirtualHost;
  } else {
    return absl::InvalidArgumentError(fmt::format(
        "STRATA_S3_ADDRESSING is \"{}\"; set it to \"path\" or \"virtual\"", addressing));
  }
  config.credentials.access_key_id =
      First(lookup, {"STRATA_S3_ACCESS_KEY_ID", "AWS_ACCESS_KEY_ID"}).value_or("");
  config.credentials.secret_access_key =
      First(lookup, {"STRATA_S3_SECRET_ACCESS_KEY", "AWS_SECRET_ACCESS_KEY"}).value_or("");
  STRATA_RETURN_IF_ERROR(ValidateS3Config(config));
  return config;
}

absl::Status ValidateS3Config(const S3Config& config) {
  auto bad = [](std::string message) { return absl::InvalidArgumentError(std::move(message)); };
  std::string_view endpoint = config.endpoint;
  std::string_view rest;
  if (endpoint.starts_with("http://")) {
    rest = endpoint.substr(7);
  } else if (endpoint.starts_with("https://")) {
    rest = endpoint.substr(8);
  } else {
    return bad(
        fmt::format("S3 endpoint \"{}\" is not http://host[:port] or https://host[:port]; set "
                    "STRATA_S3_ENDPOINT (or AWS_ENDPOINT_URL)",
                    endpoint));
  }
  if (rest.empty() || rest.find_first_of("/?#@ ") != std::string_view::npos) {
    return bad(fmt::format(
        "S3 endpoint \"{}\" must be scheme://host[:port] with no path; set STRATA_S3_ENDPOINT",
        endpoint));
  }
  const std::string& bucket = config.bucket;
  if (bucket.empty()) return bad("no S3 bucket: set STRATA_S3_BUCKET");
  bool name_ok = bucket.size() >= 3 && bucket.size() <= 63;
  for (char c : bucket) {
    if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '.'))
      name_ok = false;
  }
  if (!name_ok || bucket.front() == '-' || bucket.front() == '.' || bucket.back() == '-' ||
      bucket.back() == '.') {
    return bad(fmt::format(
        "S3 bucket \"{}\" is not a valid bucket name (3 to 63 of a-z 0-9 . -, starting and "
        "ending with a letter or digit); set STRATA_S3_BUCKET",
        bucket));
  }
  if (!config.prefix.empty()) {
    if (config.prefix.back() != '/' || config.prefix.size() > 256) {
      return bad("STRATA_S3_PREFIX must be at most 256 bytes and end with '/'");
    }
  }
  if (config.region.empty() || config.region.size() > 64) {
    return bad("the S3 region is empty or too long; set STRATA_S3_REGION (or AWS_REGION)");
  }
  if (config.credentials.access_key_id.empty()) {
    return bad("no S3 access key id: set STRATA_S3_ACCESS_KEY_ID (or AWS_ACCESS_KEY_ID)");
  }
  if (config.credentials.secret_access_key.empty()) {
    return bad(
        "no S3 secret access key: set STRATA_S3_SECRET_ACCESS_KEY (or AWS_SECRET_ACCESS_KEY)");
  }
  if (config.part_bytes < kMinS3PartBytes || config.part_bytes > kMaxS3PartBytes) {
    return bad(fmt::format("S3 part_bytes {} is outside {}..{}", config.part_bytes, kMinS3PartBytes,
                           kMaxS3PartBytes));
  }
  if (config.max_attempts < 1 || config.max_attempts > 20) {
    return bad(fmt::format("S3 max_attempts {} is outside 1..20", config.max_attempts));
  }
  if (config.backoff_initial.count() < 0 || config.backoff_max < config.backoff_initial ||
      config.backoff_max.count() > 60000) {
    return bad("S3 backoff must satisfy 0 <= initial <= max <= 60 s");
  }
  return absl::OkStatus();
}

}  // namespace strata::objectstore
