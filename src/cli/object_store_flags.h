#pragma once

// The object-store flags every command that reads or writes an object store
// shares (serve, verify, rollups rebuild): --object-store with the
// command's own help, then the S3 settings that override the STRATA_S3_* /
// AWS_* variables (docs/operations.md, "Offload to an object store").
//
// Thread-safety: main thread only, like the rest of the CLI.

#include <set>
#include <string>

#include "CLI/CLI.hpp"
#include "objectstore/store_url.h"

namespace strata::cli {

// Adds --object-store (described by `url_help`) and the --s3-* flags to
// `command`, parsing into `settings` (which must outlive parsing), and
// records their variables in `env_names`.
void AddObjectStoreFlags(CLI::App* command, std::set<std::string>* env_names,
                         objectstore::ObjectStoreSettings* settings, const std::string& url_help);

}  // namespace strata::cli
