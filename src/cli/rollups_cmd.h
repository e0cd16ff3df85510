#pragma once

// `strata rollups rebuild`: every batch's rollups recomputed from its rows,
// compared, and rewritten where they differ or are missing
// (storage/rollups_rebuild.h; docs/operations.md, "Rebuild
// the rollups"). The server must be stopped (the data directory's lock).

#include <set>
#include <string>

#include "cli/command.h"
#include "objectstore/store_url.h"

namespace strata::cli {

struct RollupsCommandOptions {
  std::string data_dir = "strata-data";
  std::string day;  // "" : every day
  bool check = false;
  // The store strata serve offloads to: batches it evicted are read back
  // from it (empty url: none; an evicted batch then stops the rebuild).
  objectstore::ObjectStoreSettings object_store;
};

int RunRollupsRebuild(const RollupsCommandOptions& options);

Command RegisterRollups(CLI::App* app, std::set<std::string>* env_names);

}  // namespace strata::cli
