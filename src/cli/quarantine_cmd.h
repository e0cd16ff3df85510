#pragma once

// `strata quarantine [--data-dir D] <batch-id>`: moves one batch that
// `strata verify --deep` proves corrupt out of telemetry/days/ into
// telemetry/quarantine/<day>/ (storage/quarantine.h), so the server can
// start past it. It takes the data directory's LOCK, so it refuses while a
// server runs; it refuses a healthy batch and a batch named by a live
// COMPACTION.json.
//
// Exit codes (docs/operations.md, "Exit codes"): 0 moved; 1 refused or
// failed (the message says why); 2 usage (including an argument that is
// not a batch id).
//
// Thread-safety: main thread only, like the rest of the CLI.

#include <set>
#include <string>

#include "cli/command.h"

namespace strata::cli {

struct QuarantineCommandOptions {
  std::string data_dir = "strata-data";
  std::string batch_id;
};

int RunQuarantine(const QuarantineCommandOptions& options);

// Adds `quarantine` and its flags to `app`, recording their STRATA_*
// variables in `env_names`.
Command RegisterQuarantine(CLI::App* app, std::set<std::string>* env_names);

}  // namespace strata::cli
