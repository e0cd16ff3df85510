#pragma once

// Command: one runnable `strata` command as its Register*() function added
// it to the command line. cli::Main() (app.h) registers every command, lets
// CLI11 parse, and runs the one command that was parsed; each command's
// flags and the values CLI11 parses into live beside the command, in its
// Register*() function.
//
// Thread-safety: main thread only, like the rest of the CLI.

#include <functional>

namespace CLI {
class App;
}  // namespace CLI

namespace strata::cli {

struct Command {
  // The (sub)command CLI11 parses; owned by the CLI::App it was added to.
  CLI::App* app = nullptr;
  // Runs the command with the values parsed into its flags and returns the
  // process exit code. Owns those values, so it outlives parsing.
  std::function<int()> run;
};

}  // namespace strata::cli
