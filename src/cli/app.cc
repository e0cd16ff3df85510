#include "cli/app.h"

#include <memory>
#include <set>
#include <string>
#include <vector>

#include "CLI/CLI.hpp"
#include "cli/bench.h"
#include "cli/command.h"
#include "cli/environment.h"
#include "cli/exit_codes.h"
#include "cli/flags.h"
#include "cli/loadgen_cmd.h"
#include "cli/mcp_cmd.h"
#include "cli/quarantine_cmd.h"
#include "cli/rollups_cmd.h"
#include "cli/serve.h"
#include "cli/sql_cmd.h"
#include "cli/token_cmd.h"
#include "cli/usage.h"
#include "cli/user_cmd.h"
#include "cli/verify_cmd.h"
#include "common/runbook.h"
#include "spdlog/spdlog.h"

namespace strata::cli {
namespace {

constexpr char kVersion[] = "strata " STRATA_VERSION;

// `strata sql`'s flags. They belong beside RunSql (sql_cmd.cc); they stay
// here while that file is being changed on another branch.

}  // namespace

std::vector<Command> RegisterCommands(CLI::App* app, std::set<std::string>* env_names) {
  std::vector<Command> commands = {RegisterServe(app, env_names), RegisterLoadgen(app, env_names)};
  for (Command& bench : RegisterBenchCommands(app)) commands.push_back(std::move(bench));
  commands.push_back(RegisterSql(app, env_names));
  commands.push_back(RegisterMcp(app, env_names));
  for (Command& token : RegisterTokenCommands(app, env_names)) commands.push_back(std::move(token));
  for (Command& user : RegisterUserCommands(app, env_names)) commands.push_back(std::move(user));
  commands.push_back(RegisterVerify(app, env_names));
  commands.push_back(RegisterQuarantine(app, env_names));
  commands.push_back(RegisterRollups(app, env_names));
  return commands;
}

int Main(int argc, char** argv, char** envp) {
  CLI::App app{"strata: a single-binary OpenTelemetry backend (traces, logs, metrics as Parquet)",
               "strata"};
  app.set_version_flag("--version", kVersion);
  app.require_subcommand(1);
  // Options a subcommand does not know go to its parent, so `strata serve
  // --log-level error` works as `strata --log-level error serve` does.
  app.fallthrough();
  std::set<std::string> env_names;
  std::string log_level = "info";
  AddFlag(&app, &env_names, "log-level", &log_level, "Log level")
      ->check(CLI::IsMember({"trace", "debug", "info", "warn", "error"}));
  const std::vector<Command> commands = RegisterCommands(&app, &env_names);

  if (absl::Status s = CheckEnvironmentValues(app, envp); !s.ok()) {
    spdlog::error("strata: {}; {}", std::string(s.message()), RunbookRef("invalid-configuration"));
    return kExitUsage;
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return ReportParseError(app, e);
  }
  if (absl::Status s = CheckStrataEnvironment(envp, env_names); !s.ok()) {
    spdlog::error("strata: {}; {}", s.ToString(), RunbookRef("unknown-environment-variable"));
    return kExitUsage;
  }
  spdlog::set_level(spdlog::level::from_str(log_level));
  for (const Command& command : commands) {
    if (command.app->parsed()) return command.run();
  }
  return kExitUsage;
}

}  // namespace strata::cli
