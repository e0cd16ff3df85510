#pragma once

// OpenObjectStore(): the BatchStore a `--object-store` URL names, for
// `strata serve`'s offload (docs/operations.md, "Offload to an object
// store").
//
//   s3://<bucket>[/<prefix>]   an S3BatchStore; the endpoint, region,
//                              addressing and credentials come from the
//                              settings' fields when set, else from the
//                              variables S3ConfigFromEnvironment() reads
//                              (STRATA_S3_*, then AWS_*)
//   file:///<absolute path>    a LocalBatchStore on that directory
//
// Errors: InvalidArgument naming the URL or the setting to fix (an unknown
// scheme, a relative path, a bad bucket, missing credentials). Opening
// sends no request; the first listing (the uploader's) proves the store
// answers.

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "io/file_system.h"
#include "objectstore/batch_store.h"
#include "objectstore/s3_config.h"

namespace strata::objectstore {

struct ObjectStoreSettings {
  std::string url;
  // Each overrides its STRATA_S3_* / AWS_* variable when not empty.
  std::string endpoint;
  std::string region;
  std::string addressing;  // "path" or "virtual"
  std::string access_key_id;
  std::string secret_access_key;
};

// `fs` must outlive a local store.
[[nodiscard]] absl::StatusOr<std::unique_ptr<BatchStore>> OpenObjectStore(
    FileSystem& fs, const ObjectStoreSettings& settings, const EnvironmentLookup& environment);

}  // namespace strata::objectstore
