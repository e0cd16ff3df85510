#include "cli/token_cmd.h"

#include <algorithm>
#include <cstdio>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "CLI/CLI.hpp"
#include "absl/time/time.h"
#include "cli/control_data_dir.h"
#include "cli/control_stores.h"
#include "cli/exit_codes.h"
#include "cli/flags.h"
#include "control/sqlite_token_store.h"
#include "control/token_authenticator.h"
#include "fmt/format.h"
#include "io/posix_file_system.h"
#include "storage/commit/data_dir.h"
#include "storage/format/format_file.h"
#include "storage/format/layout.h"

namespace strata::cli {
namespace {

// The values CLI11 parses into, shared by the three subcommands.
struct TokenCommands {
  std::string data_dir = "strata-data";
  std::string catalog;  // several servers: the PostgreSQL URL (tokens live there)
  std::string name;
  std::string scope;
  std::string id_or_name;
};

void PrintError(std::string_view command, const absl::Status& status) {
  fmt::print(stderr, "strata token {}: {}\n", command, std::string(status.message()));
}

absl::StatusOr<std::unique_ptr<control::TokenStore>> OpenStore(const TokenCommands& commands,
                                                               bool may_initialize) {
  if (!commands.catalog.empty()) return OpenTokenStore(commands.data_dir, commands.catalog);
  if (absl::Status s = PrepareControlDataDir(commands.data_dir, may_initialize); !s.ok()) {
    return s;
  }
  return OpenTokenStore(commands.data_dir, "");
}

std::string FormatUtc(absl::Time time) {
  return absl::FormatTime("%Y-%m-%dT%H:%M:%SZ", time, absl::UTCTimeZone());
}

std::string FormatUtc(const std::optional<absl::Time>& time) {
  return time.has_value() ? FormatUtc(*time) : "-";
}

int RunCreate(const TokenCommands& commands) {
  absl::StatusOr<control::TokenScope> scope = control::ParseTokenScope(commands.scope);
  if (!scope.ok()) {
    PrintError("create", scope.status());
    return kExitUsage;
  }
  if (absl::Status s = control::ValidateTokenName(commands.name); !s.ok()) {
    PrintError("create", s);
    return kExitUsage;
  }
  absl::StatusOr<std::unique_ptr<control::TokenStore>> store =
      OpenStore(commands, /*may_initialize=*/true);
  if (!store.ok()) {
    PrintError("create", store.status());
    return kExitFailure;
  }
  absl::StatusOr<control::CreatedToken> created = (*store)->Create(commands.name, *scope);
  if (!created.ok()) {
    PrintError("create", created.status());
    return kExitFailure;
  }
  fmt::print(
      "Created token {} \"{}\" with scope {}. This is the only time it is shown (strata keeps "
      "only a hash of it); store it now:\n{}\n",
      created->id, commands.name, control::TokenScopeName(*scope), created->token);
  return kExitOk;
}

int RunList(const TokenCommands& commands) {
  absl::StatusOr<std::unique_ptr<control::TokenStore>> store =
      OpenStore(commands, /*may_initialize=*/false);
  if (!store.ok()) {
    PrintError("list", store.status());
    return kExitFailure;
  }
  absl::StatusOr<std::vector<control::TokenInfo>> tokens = (*store)->List();
  if (!tokens.ok()) {
    PrintError("list", tokens.status());
    return kExitFailure;
  }
  if (tokens->empty()) {
    fmt::print("No tokens.\n");
    return kExitOk;
  }
  std::vector<std::vector<std::string>> table = {
      {"ID", "NAME", "SCOPE", "CREATED", "LAST USED", "REVOKED"}};
  for (const control::TokenInfo& token : *tokens) {
    table.push_back({std::to_string(token.id), token.name,
                     std::string(control::TokenScopeName(token.scope)), FormatUtc(token.created_at),
                     FormatUtc(token.last_used_at), FormatUtc(token.revoked_at)});
  }
  std::vector<size_t> widths(table[0].size(), 0);
  for (const auto& row : table) {
    for (size_t c = 0; c < row.size(); ++c) widths[c] = std::max(widths[c], row[c].size());
  }
  for (const auto& row : table) {
    std::string line;
    for (size_t c = 0; c < row.size(); ++c) {
      line += c + 1 < row.size() ? fmt::format("{:<{}}  ", row[c], widths[c]) : row[c];
    }
    fmt::print("{}\n", line);
  }
  return kExitOk;
}

int RunRevoke(const TokenCommands& commands) {
  absl::StatusOr<std::unique_ptr<control::TokenStore>> store =
      OpenStore(commands, /*may_initialize=*/false);
  if (!store.ok()) {
    PrintError("revoke", store.status());
    return kExitFailure;
  }
  absl::StatusOr<control::RevokedToken> revoked = (*store)->Revoke(commands.id_or_name);
  if (!revoked.ok()) {
    PrintError("revoke", revoked.status());
    return kExitFailure;
  }
  const control::TokenInfo& token = revoked->token;
  if (revoked->already_revoked) {
    fmt::print("Token {} \"{}\" was already revoked at {}.\n", token.id, token.name,
               FormatUtc(token.revoked_at));
  } else {
    fmt::print(
        "Revoked token {} \"{}\" (scope {}). A running server refuses it from its next token "
        "refresh (every {} by default).\n",
        token.id, token.name, control::TokenScopeName(token.scope),
        absl::FormatDuration(control::TokenAuthenticator::kDefaultRefreshInterval));
  }
  return kExitOk;
}

// Runs `run` unless --data-dir is empty (a usage error).
int WithDataDir(const TokenCommands& commands, int (*run)(const TokenCommands&)) {
  if (commands.data_dir.empty()) {
    fmt::print(stderr, "strata token: --data-dir must not be empty\n");
    return kExitUsage;
  }
  return run(commands);
}

}  // namespace

std::vector<Command> RegisterTokenCommands(CLI::App* app, std::set<std::string>* env_names) {
  auto commands = std::make_shared<TokenCommands>();
  CLI::App* token = app->add_subcommand("token", "Manage ingest, read and admin tokens");
  token->require_subcommand(1);

  CLI::App* create = token->add_subcommand(
      "create", "Create a token and print it (once: strata keeps only its hash)");
  AddFlag(create, env_names, "data-dir", &commands->data_dir, "Data directory");
  AddFlag(create, env_names, "catalog", &commands->catalog,
          "Several servers: the PostgreSQL URL they share (serve --catalog); tokens live there "
          "instead of the data directory");
  create->add_option("--name", commands->name, "Token name (unique)")->required();
  create->add_option("--scope", commands->scope, "ingest, read or admin")
      ->required()
      ->check(CLI::IsMember({"ingest", "read", "admin"}));

  CLI::App* list = token->add_subcommand("list", "List tokens (never their values or hashes)");
  AddFlag(list, env_names, "data-dir", &commands->data_dir, "Data directory");
  AddFlag(list, env_names, "catalog", &commands->catalog,
          "Several servers: the PostgreSQL URL they share (serve --catalog); tokens live there "
          "instead of the data directory");

  CLI::App* revoke = token->add_subcommand(
      "revoke", "Revoke a token by id or name; a running server refuses it within 1 s");
  AddFlag(revoke, env_names, "data-dir", &commands->data_dir, "Data directory");
  AddFlag(revoke, env_names, "catalog", &commands->catalog,
          "Several servers: the PostgreSQL URL they share (serve --catalog); tokens live there "
          "instead of the data directory");
  revoke->add_option("token", commands->id_or_name, "Token id or name")->required();
  return {
      Command{create, [commands] { return WithDataDir(*commands, RunCreate); }},
      Command{list, [commands] { return WithDataDir(*commands, RunList); }},
      Command{revoke, [commands] { return WithDataDir(*commands, RunRevoke); }},
  };
}

}  // namespace strata::cli
