#include "cli/app.h"

#include <functional>
#include <set>
#include <string>

#include "CLI/CLI.hpp"
#include "cli/flags.h"
#include "gtest/gtest.h"

namespace strata::cli {
namespace {

// Calls `visit` with every option of `app` and of its subcommands, and the
// command's name.
void ForEachOption(CLI::App& app,
                   const std::function<void(const std::string&, CLI::Option&)>& visit) {
  for (CLI::Option* option : app.get_options()) visit(app.get_name(), *option);
  for (CLI::App* sub : app.get_subcommands([](CLI::App*) { return true; })) {
    ForEachOption(*sub, visit);
  }
}

TEST(AppTest, EveryNumericFlagOfEveryCommandIsRangeChecked) {
  CLI::App app{"strata", "strata"};
  std::set<std::string> env_names;
  RegisterCommands(&app, &env_names);
  int numeric = 0;
  ForEachOption(app, [&numeric](const std::string& command, CLI::Option& option) {
    const std::string type = option.get_type_name();
    if (type != "INT" && type != "UINT" && type != "FLOAT") return;
    ++numeric;
    EXPECT_NO_THROW(option.get_validator(kNumberValidatorName))
        << command << " " << option.get_name() << " (" << type << ") is not range-checked";
  });
  EXPECT_GT(numeric, 40);  // serve, loadgen, bench and sql have that many
}

}  // namespace
}  // namespace strata::cli
