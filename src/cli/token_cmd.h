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

#include <memory>
#include <optional>
#include <set>
#include <string>

namespace CLI {
class App;
}  // namespace CLI

namespace strata::cli {

// The subcommands and the values CLI11 parses into; the pointers belong to
// the CLI::App they were added to.
struct TokenCommands {
  CLI::App* token = nullptr;
  CLI::App* create = nullptr;
  CLI::App* list = nullptr;
  CLI::App* revoke = nullptr;
  std::string data_dir = "strata-data";
  std::string name;
  std::string scope;
  std::string id_or_name;
};

// Adds `token` and its subcommands to `app`, recording their STRATA_*
// variables in `env_names`. The result must outlive parsing and running
// (CLI11 writes into it).
std::unique_ptr<TokenCommands> AddTokenCommands(CLI::App* app, std::set<std::string>* env_names);

// Runs the token subcommand that was parsed and returns its exit code;
// nullopt when the command line named no token subcommand.
std::optional<int> RunTokenCommands(const TokenCommands& commands);

}  // namespace strata::cli
