#pragma once

// `strata bench`: the benchmark commands that print numbers (writer,
// ingest, query, compact; each described in its own header).
//
// Thread-safety: main thread only, like the rest of the CLI.

#include <vector>

#include "cli/command.h"

namespace strata::cli {

// Adds `bench` and its subcommands to `app` and returns the subcommands.
std::vector<Command> RegisterBenchCommands(CLI::App* app);

}  // namespace strata::cli
