#pragma once

// AddOption() and AddFlag(): the one way a strata command registers a
// flag that takes a value. Every numeric value is range-checked here, for
// every command, before CLI11 converts it (CLI11 alone wraps "-1" into an
// unsigned flag's largest value and reads "010" as octal); AddFlag() also
// gives the flag its STRATA_* environment variable and records the variable
// for CheckStrataEnvironment() (environment.h) and CheckEnvironmentValues().
//
// Thread-safety: main thread only, like the rest of the CLI.

#include <cstdint>
#include <limits>
#include <set>
#include <string>
#include <string_view>
#include <type_traits>

#include "CLI/CLI.hpp"
#include "absl/status/status.h"
#include "cli/environment.h"

namespace strata::cli {

// The name of the validator AddOption() gives every numeric option.
inline constexpr char kNumberValidatorName[] = "strata-number";

// Checks that `text` is an integer in [min, max] written in decimal (a
// leading "-" only when min < 0; no "+", spaces, "0x" or exponent).
// Returns "" when it is, with `text` rewritten without leading zeros (which
// CLI11 would read as octal); otherwise the reason, naming the range.
std::string CheckIntegerText(std::string& text, int64_t min, uint64_t max);

// Checks that `text` is a finite decimal number ("1.5", "2e3"). Returns ""
// when it is, otherwise the reason.
std::string CheckFloatText(const std::string& text);

// Adds `names` (CLI11 syntax: "--spans" or "-c,--command") bound to `value`.
// An integer or floating-point `value` gets a validator (kNumberValidatorName)
// that refuses text outside its type, so the error names the flag.
template <typename T>
CLI::Option* AddOption(CLI::App* app, const std::string& names, T* value, const std::string& help) {
  CLI::Option* option = app->add_option(names, *value, help);
  if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) {
    option->transform(CLI::Validator(
        [](std::string& text) {
          return CheckIntegerText(text, static_cast<int64_t>(std::numeric_limits<T>::min()),
                                  static_cast<uint64_t>(std::numeric_limits<T>::max()));
        },
        "", kNumberValidatorName));
  } else if constexpr (std::is_floating_point_v<T>) {
    option->transform(CLI::Validator([](std::string& text) { return CheckFloatText(text); }, "",
                                     kNumberValidatorName));
  }
  return option;
}

// The STRATA_* variable of flag `name`: STRATA_<NAME>, dashes become
// underscores.
std::string EnvironmentVariableOf(std::string_view name);

// Adds `--name` to `app` as AddOption() does, with the variable
// EnvironmentVariableOf(name), and records the variable in `env_names`.
template <typename T>
CLI::Option* AddFlag(CLI::App* app, std::set<std::string>* env_names, const std::string& name,
                     T* value, const std::string& help) {
  std::string env = EnvironmentVariableOf(name);
  env_names->insert(env);
  return AddOption(app, "--" + name, value, help)->envname(env)->capture_default_str();
}

// Checks the value of every STRATA_* variable in `envp` (NULL-terminated
// "NAME=value" strings) that a flag of `app` or of its subcommands reads,
// with that flag's validators, so a bad value is refused naming the variable
// (CLI11's own error would name only the flag). Run before parsing; a bad
// value is refused even when the command line overrides it.
// InvalidArgument names the variable, its value and the flag.
[[nodiscard]] absl::Status CheckEnvironmentValues(CLI::App& app, const char* const* envp);

}  // namespace strata::cli
