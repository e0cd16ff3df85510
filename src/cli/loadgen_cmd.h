#pragma once

// `strata loadgen`: its flags (src/workload/loadgen.h does the work).
//
// Thread-safety: main thread only, like the rest of the CLI.

#include <set>
#include <string>

#include "cli/command.h"

namespace strata::cli {

// Adds `loadgen` to `app`; its --token has a STRATA_* variable, recorded in
// `env_names`.
Command RegisterLoadgen(CLI::App* app, std::set<std::string>* env_names);

}  // namespace strata::cli
