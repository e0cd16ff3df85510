#include "cli/user_cmd.h"

#include <memory>

#include "CLI/CLI.hpp"
#include "absl/time/time.h"
#include "cli/control_data_dir.h"
#include "cli/control_stores.h"
#include "cli/exit_codes.h"
#include "cli/flags.h"
#include "control/accounts.h"
#include "control/sqlite_account_store.h"
#include "fmt/format.h"
#include "storage/format/layout.h"

namespace strata::cli {
namespace {

struct UserCommands {
  std::string data_dir = "strata-data";
  std::string catalog;  // several servers: the PostgreSQL URL (users live there)
  std::string api_url = "http://localhost:7520";
  std::string email;
  std::string name;
  std::string role = "viewer";
};

const control::RequestOrigin kCliOrigin{"cli", "strata user"};

void PrintUserError(std::string_view command, const absl::Status& status) {
  fmt::print(stderr, "strata user {}: {}\n", command, std::string(status.message()));
}

void PrintLink(const UserCommands& commands, const control::PasswordLink& link) {
  fmt::print(
      "Open this link to set the password (it works once, until {} UTC; strata keeps only a "
      "hash of it):\n{}/password#token={}\n",
      absl::FormatTime("%Y-%m-%d %H:%M:%S", link.expires_at, absl::UTCTimeZone()), commands.api_url,
      link.token);
}

// Opens the data directory's accounts and runs `run` with them.
int WithAccounts(const UserCommands& commands, std::string_view command, bool may_initialize,
                 const std::function<int(control::Accounts&)>& run) {
  if (commands.data_dir.empty()) {
    fmt::print(stderr, "strata user: --data-dir must not be empty\n");
    return kExitUsage;
  }
  if (commands.catalog.empty()) {
    if (absl::Status s = PrepareControlDataDir(commands.data_dir, may_initialize); !s.ok()) {
      PrintUserError(command, s);
      return kExitFailure;
    }
  }
  absl::StatusOr<std::unique_ptr<control::AccountStore>> store =
      OpenAccountStore(commands.data_dir, commands.catalog, absl::Now());
  if (!store.ok()) {
    PrintUserError(command, store.status());
    return kExitFailure;
  }
  control::Accounts accounts(store->get(), control::AccountsOptions{});
  return run(accounts);
}

int RunUserCreate(const UserCommands& commands) {
  absl::StatusOr<control::Role> role = control::ParseRole(commands.role);
  if (!role.ok()) {
    PrintUserError("create", role.status());
    return kExitUsage;
  }
  if (absl::StatusOr<std::string> email = control::NormalizeEmail(commands.email); !email.ok()) {
    PrintUserError("create", email.status());
    return kExitUsage;
  }
  return WithAccounts(commands, "create", true, [&](control::Accounts& accounts) {
    const std::string name = commands.name.empty() ? commands.email : commands.name;
    absl::StatusOr<control::CreatedUser> created =
        accounts.CreateUser("cli", commands.email, name, *role, kCliOrigin);
    if (!created.ok()) {
      PrintUserError("create", created.status());
      return absl::IsInvalidArgument(created.status()) ? kExitUsage : kExitFailure;
    }
    fmt::print("Created user {} {} with role {}.\n", created->user.id, created->user.email,
               control::RoleName(created->user.role));
    PrintLink(commands, created->link);
    return kExitOk;
  });
}

int RunUserResetLink(const UserCommands& commands) {
  return WithAccounts(commands, "reset-link", false, [&](control::Accounts& accounts) {
    absl::StatusOr<control::PasswordLink> link =
        accounts.ResetLink("cli", commands.email, kCliOrigin);
    if (!link.ok()) {
      PrintUserError("reset-link", link.status());
      return absl::IsInvalidArgument(link.status()) ? kExitUsage : kExitFailure;
    }
    PrintLink(commands, *link);
    return kExitOk;
  });
}

}  // namespace

std::vector<Command> RegisterUserCommands(CLI::App* app, std::set<std::string>* env_names) {
  auto commands = std::make_shared<UserCommands>();
  CLI::App* user = app->add_subcommand("user", "Add users and make password links (no mail)");
  user->require_subcommand(1);

  CLI::App* create = user->add_subcommand(
      "create", "Add a user and print a one-time link where they set their password");
  AddFlag(create, env_names, "data-dir", &commands->data_dir, "Data directory");
  AddFlag(create, env_names, "catalog", &commands->catalog,
          "Several servers: the PostgreSQL URL they share (serve --catalog); users live there "
          "instead of the data directory");
  AddFlag(create, env_names, "api-url", &commands->api_url,
          "How people reach the API, for the link (e.g. https://strata.example.com)");
  create->add_option("--email", commands->email, "The user's email (their sign-in name)")
      ->required();
  create->add_option("--name", commands->name, "Display name (default: the email)");
  create->add_option("--role", commands->role, "viewer, operator or admin")
      ->check(CLI::IsMember({"viewer", "operator", "admin"}));

  CLI::App* reset = user->add_subcommand(
      "reset-link", "Print a new one-time link where a user sets their password");
  AddFlag(reset, env_names, "data-dir", &commands->data_dir, "Data directory");
  AddFlag(reset, env_names, "catalog", &commands->catalog,
          "Several servers: the PostgreSQL URL they share (serve --catalog); users live there "
          "instead of the data directory");
  AddFlag(reset, env_names, "api-url", &commands->api_url,
          "How people reach the API, for the link");
  reset->add_option("email", commands->email, "The user's email")->required();
  return {
      Command{create, [commands] { return RunUserCreate(*commands); }},
      Command{reset, [commands] { return RunUserResetLink(*commands); }},
  };
}

}  // namespace strata::cli
