#pragma once

// `strata user create|reset-link`: headless account setup (docs/operations.md,
// "Accounts"). `create --email E --role R [--name N]` adds a user without a
// password and prints a one-time link (valid 15 minutes) where they set
// one; `reset-link E` prints a new such link for an existing user (for a
// forgotten password, or the first admin of a server nobody can reach with
// a browser). No mail server is involved: whoever runs the command passes
// the link on. Both work while a server runs on the same data directory and
// are recorded in the audit log as actor "cli".
//
// Exit codes: 0 done, 1 operational failure (the data directory or
// database cannot be used, no such user, an email already taken), 2 usage.
//
// Thread-safety: main thread only, like the rest of the CLI.

#include <set>
#include <string>
#include <vector>

#include "cli/command.h"

namespace strata::cli {

std::vector<Command> RegisterUserCommands(CLI::App* app, std::set<std::string>* env_names);

}  // namespace strata::cli
