#include "cli/usage.h"

#include <algorithm>
#include <cstdio>

#include "CLI/CLI.hpp"
#include "cli/exit_codes.h"
#include "fmt/format.h"
#include "fmt/ranges.h"

namespace strata::cli {
namespace {

// The subcommand of `app` that was parsed, or null.
CLI::App* ParsedSubcommand(CLI::App& app) {
  for (CLI::App* sub : app.get_subcommands([](CLI::App*) { return true; })) {
    if (sub->parsed()) return sub;
  }
  return nullptr;
}

// "strata token" for the token command: the names from the root down.
std::string CommandPath(const CLI::App& app) {
  const CLI::App* parent = app.get_parent();
  return parent == nullptr ? app.get_name() : CommandPath(*parent) + " " + app.get_name();
}

std::vector<std::string> SubcommandNames(CLI::App& app) {
  std::vector<std::string> names;
  for (CLI::App* sub : app.get_subcommands([](CLI::App*) { return true; })) {
    names.push_back(sub->get_name());
  }
  return names;
}

// The first argument nothing claimed that looks like a command name rather
// than an option: with fallthrough, a subcommand's leftovers end up in its
// parents' lists.
std::string FirstUnclaimedWord(const CLI::App& root) {
  for (const std::string& arg : root.remaining(/*recurse=*/true)) {
    if (!arg.empty() && arg.front() != '-') return arg;
  }
  return "";
}

// `command` needs a subcommand and got none: names the unknown word it got,
// or prints its help when it got none.
int ReportMissingSubcommand(CLI::App& root, CLI::App& command) {
  const std::string word = FirstUnclaimedWord(root);
  if (word.empty()) {
    fmt::print("{}", command.help());
    return kExitUsage;
  }
  const std::vector<std::string> names = SubcommandNames(command);
  const std::string nearest = NearestName(word, names);
  fmt::print(stderr, "{}: unknown command '{}'{}; the commands are: {} (see {} --help)\n",
             CommandPath(command), word,
             nearest.empty() ? "" : fmt::format(" (did you mean '{}'?)", nearest),
             fmt::join(names, ", "), CommandPath(command));
  return kExitUsage;
}

}  // namespace

size_t EditDistance(std::string_view a, std::string_view b) {
  // One row of the dynamic-programming table at a time.
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diagonal = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      const size_t above = row[j];
      row[j] = std::min({above + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = above;
    }
  }
  return row[b.size()];
}

std::string NearestName(std::string_view typed, const std::vector<std::string>& names) {
  std::string nearest;
  size_t best = std::min<size_t>(3, typed.size());  // must beat this
  for (const std::string& name : names) {
    if (const size_t distance = EditDistance(typed, name); distance < best) {
      best = distance;
      nearest = name;
    }
  }
  return nearest;
}

int ReportParseError(CLI::App& app, const CLI::ParseError& error) {
  CLI::App* command = &app;
  while (CLI::App* sub = ParsedSubcommand(*command)) command = sub;
  if (error.get_name() == "RequiredError" && command->get_require_subcommand_min() > 0 &&
      !command->get_subcommands([](CLI::App*) { return true; }).empty()) {
    return ReportMissingSubcommand(app, *command);
  }
  return app.exit(error) == 0 ? kExitOk : kExitUsage;
}

}  // namespace strata::cli
