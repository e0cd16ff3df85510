#pragma once

// `strata token create|list|revoke`: manage ingest, read and admin tokens
// in the control database of a data directory (docs/operations.md, "Ingest
// tokens"). They work while a server runs on the same data directory: they
// do not take its LOCK, and the server picks up a change within its token
// refresh interval (1 s).
//
// `create` prints the token once (strata keeps only its hash); `list` shows
// id, name, scope and times, never a token or hash; `revoke` takes an id or
// a name. Exit codes: 0 done, 1 operational failure (the data directory or
// database cannot be used, no such token, a name already taken), 2 usage
// (bad flags, scope or name).
//
// Thread-safety: main thread only, like the rest of the CLI.

#include <set>
#include <string>
#include <vector>

#include "cli/command.h"

namespace strata::cli {

// Adds `token` and its subcommands `create`, `list` and `revoke` to `app`,
// recording their STRATA_* variables in `env_names`. Returns the three
// runnable subcommands.
std::vector<Command> RegisterTokenCommands(CLI::App* app, std::set<std::string>* env_names);

}  // namespace strata::cli
