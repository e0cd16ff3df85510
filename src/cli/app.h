#pragma once

// The `strata` command line: subcommands, flags and their STRATA_*
// environment variables, built with CLI11. Main() never throws; it returns
// the process exit code (0 success, 1 runtime failure, 2 bad usage or
// configuration).

namespace strata::cli {

int Main(int argc, char** argv, char** envp);

}  // namespace strata::cli
