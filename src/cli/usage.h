#pragma once

// What `strata` says when CLI11 cannot parse its command line. CLI11's own
// message is kept, except where it misleads: a command name strata does not
// know ("strata serv", "strata token crate") is named as unknown, with the
// nearest known name, instead of "A subcommand is required"; and a command
// that needs a subcommand and got none (a bare `strata`, `strata token`)
// prints its help. Every usage error exits kExitUsage (exit_codes.h).
//
// Thread-safety: main thread only, like the rest of the CLI.

#include <string>
#include <string_view>
#include <vector>

namespace CLI {
class App;
class ParseError;
}  // namespace CLI

namespace strata::cli {

// The Levenshtein distance: single-character insertions, deletions and
// substitutions that turn `a` into `b`.
size_t EditDistance(std::string_view a, std::string_view b);

// The name in `names` nearest to `typed`, when it is near enough to be what
// was meant (at most two edits, and fewer edits than `typed` has
// characters); "" otherwise.
std::string NearestName(std::string_view typed, const std::vector<std::string>& names);

// Prints what `error` (thrown by app.parse()) means to the user, help on
// standard output and errors on standard error, and returns the exit code:
// kExitOk for --help and --version, kExitUsage otherwise.
int ReportParseError(CLI::App& app, const CLI::ParseError& error);

}  // namespace strata::cli
