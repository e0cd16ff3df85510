#include "objectstore/store_url.h"

#include <optional>
#include <string_view>
#include <utility>

#include "fmt/format.h"
#include "objectstore/local_batch_store.h"
#include "objectstore/s3_batch_store.h"

namespace strata::objectstore {
namespace {

constexpr std::string_view kS3Scheme = "s3://";
constexpr std::string_view kFileScheme = "file://";

absl::Status BadUrl(const std::string& url, std::string_view why) {
  return absl::InvalidArgumentError(fmt::format(
      "--object-store {:?}: {}; expected s3://<bucket>[/<prefix>] or file:///<absolute path>", url,
      why));
}

}  // namespace

absl::StatusOr<std::unique_ptr<BatchStore>> OpenObjectStore(FileSystem& fs,
                                                            const ObjectStoreSettings& settings,
                                                            const EnvironmentLookup& environment) {
  const std::string& url = settings.url;
  std::string_view rest = url;
  if (rest.starts_with(kFileScheme)) {
    rest.remove_prefix(kFileScheme.size());
    if (!rest.starts_with('/')) return BadUrl(url, "the path must be absolute (file:///...)");
    while (rest.size() > 1 && rest.ends_with('/')) rest.remove_suffix(1);
    if (rest == "/") return BadUrl(url, "the root directory cannot be a store");
    absl::StatusOr<std::unique_ptr<LocalBatchStore>> local =
        LocalBatchStore::Open(fs, std::string(rest));
    if (!local.ok()) return local.status();
    return std::unique_ptr<BatchStore>(*std::move(local));
  }
  if (!rest.starts_with(kS3Scheme)) return BadUrl(url, "unknown scheme");
  rest.remove_prefix(kS3Scheme.size());
  const size_t slash = rest.find('/');
  const std::string bucket(rest.substr(0, slash));
  std::string prefix(slash == std::string_view::npos ? "" : rest.substr(slash + 1));
  while (!prefix.empty() && prefix.back() == '/') prefix.pop_back();
  if (bucket.empty()) return BadUrl(url, "no bucket");

  // The URL and the settings first, then the variables.
  const std::pair<std::string_view, const std::string*> fixed[] = {
      {"STRATA_S3_BUCKET", &bucket},
      {"STRATA_S3_PREFIX", &prefix},
      {"STRATA_S3_ENDPOINT", &settings.endpoint},
      {"STRATA_S3_REGION", &settings.region},
      {"STRATA_S3_ADDRESSING", &settings.addressing},
      {"STRATA_S3_ACCESS_KEY_ID", &settings.access_key_id},
      {"STRATA_S3_SECRET_ACCESS_KEY", &settings.secret_access_key},
  };
  EnvironmentLookup lookup = [&](std::string_view name) -> std::optional<std::string> {
    for (const auto& [fixed_name, value] : fixed) {
      if (name != fixed_name) continue;
      if (!value->empty()) return *value;
      // The URL alone says where the bucket and prefix are.
      if (name == "STRATA_S3_BUCKET" || name == "STRATA_S3_PREFIX") return std::nullopt;
    }
    return environment(name);
  };
  absl::StatusOr<S3Config> config = S3ConfigFromEnvironment(lookup);
  if (!config.ok()) {
    return absl::InvalidArgumentError(
        fmt::format("--object-store {:?}: {}", url, std::string(config.status().message())));
  }
  absl::StatusOr<std::unique_ptr<S3BatchStore>> s3 = S3BatchStore::Create(*std::move(config));
  if (!s3.ok()) return s3.status();
  return std::unique_ptr<BatchStore>(*std::move(s3));
}

}  // namespace strata::objectstore
