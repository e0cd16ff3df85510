#pragma once

// `strata verify [--data-dir D] [--deep] [--json]`: checks every batch of
// a data directory (storage/verify.h) and reports one line per batch and a
// summary, or one JSON object. Read-only: it takes no LOCK and writes
// nothing, so it runs on a stopped data directory and beside a running
// server (whose compactions and retention can make a batch "gone" while it
// is checked; that counts as ok). --deep also decodes every page through
// strata's reader and through DuckDB (query/parquet_file_check.h).
//
// Exit codes (docs/operations.md, "Exit codes"): 0 every batch ok or gone
// and nothing boot would refuse; 3 corruption found (a corrupt batch, or an
// entry or marker boot would refuse); 1 the directory could not be
// verified (not a data directory, I/O errors, a batch unreadable); 2 usage.
//
// Thread-safety: main thread only, like the rest of the CLI.

#include <set>
#include <string>

#include "cli/command.h"
#include "objectstore/store_url.h"

namespace strata::cli {

struct VerifyCommandOptions {
  std::string data_dir = "strata-data";
  bool deep = false;
  bool json = false;
  // With a URL: also check each batch's copy in this object store
  // (storage/offload/remote_check.h).
  objectstore::ObjectStoreSettings object_store;
};

int RunVerify(const VerifyCommandOptions& options);

// Adds `verify` and its flags to `app`, recording their STRATA_* variables in
// `env_names`.
Command RegisterVerify(CLI::App* app, std::set<std::string>* env_names);

}  // namespace strata::cli
