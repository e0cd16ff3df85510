#pragma once

// The `strata` command line, built with CLI11. Main() registers every
// command (each command's flags and their STRATA_* variables are registered
// beside it, command.h), checks the STRATA_* values, parses, and runs the
// command that was given. It never throws; it returns the process exit code
// (exit_codes.h: 0 success, 1 runtime failure, 2 bad usage or
// configuration, with usage errors worded by usage.h).

#include <set>
#include <string>
#include <vector>

#include "cli/command.h"

namespace strata::cli {

int Main(int argc, char** argv, char** envp);

// Adds every command to `app`, in the order `strata --help` lists them,
// recording their STRATA_* variables in `env_names`.
std::vector<Command> RegisterCommands(CLI::App* app, std::set<std::string>* env_names);

}  // namespace strata::cli
