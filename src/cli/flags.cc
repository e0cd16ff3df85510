#include "cli/flags.h"

#include <charconv>
#include <cmath>
#include <cstdlib>
#include <map>
#include <string_view>

#include "fmt/format.h"

namespace strata::cli {
namespace {

// Reads all of `text` as a decimal magnitude; false if anything else is in
// it or it does not fit 64 bits.
bool ParseMagnitude(std::string_view text, uint64_t* magnitude) {
  const char* end = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(text.data(), end, *magnitude);
  return !text.empty() && ec == std::errc() && ptr == end;
}

// The STRATA_* variables `envp` sets, by name.
std::map<std::string, std::string> StrataVariables(const char* const* envp) {
  std::map<std::string, std::string> variables;
  if (envp == nullptr) return variables;
  for (const char* const* entry = envp; *entry != nullptr; ++entry) {
    std::string_view text(*entry);
    if (text.substr(0, sizeof(kEnvPrefix) - 1) != kEnvPrefix) continue;
    const size_t equals = text.find('=');
    if (equals == std::string_view::npos) continue;
    variables.emplace(text.substr(0, equals), text.substr(equals + 1));
  }
  return variables;
}

// What the first validator of `option` that refuses `value` says; "" if
// none does. Each validator sees what the ones before it made of the value,
// as in CLI11's own parse.
std::string Validate(CLI::Option& option, std::string value) {
  for (int i = 0;; ++i) {
    CLI::Validator* validator = nullptr;
    try {
      validator = option.get_validator(i);
    } catch (const CLI::OptionNotFound&) {
      return "";  // past the last one
    }
    if (std::string error = (*validator)(value); !error.empty()) return error;
  }
}

absl::Status CheckOptions(CLI::App& app, const std::map<std::string, std::string>& variables) {
  for (CLI::Option* option : app.get_options()) {
    auto it = variables.find(option->get_envname());
    // CLI11 ignores an empty variable, as if it were unset.
    if (option->get_envname().empty() || it == variables.end() || it->second.empty()) continue;
    if (std::string error = Validate(*option, it->second); !error.empty()) {
      return absl::InvalidArgumentError(fmt::format("{}={} (from the environment, for {}): {}",
                                                    it->first, it->second, option->get_name(),
                                                    error));
    }
  }
  for (CLI::App* sub : app.get_subcommands([](CLI::App*) { return true; })) {
    if (absl::Status s = CheckOptions(*sub, variables); !s.ok()) return s;
  }
  return absl::OkStatus();
}

}  // namespace

std::string CheckIntegerText(std::string& text, int64_t min, uint64_t max) {
  const bool negative = !text.empty() && text.front() == '-';
  const std::string range = fmt::format("a whole number from {} to {}", min, max);
  if (negative && min >= 0) return fmt::format("must not be negative (want {})", range);
  uint64_t magnitude = 0;
  if (!ParseMagnitude(std::string_view(text).substr(negative ? 1 : 0), &magnitude)) {
    return fmt::format("\"{}\" is not {}", text, range);
  }
  // -min as an unsigned magnitude, without overflowing int64.
  const uint64_t min_magnitude = min < 0 ? static_cast<uint64_t>(-(min + 1)) + 1 : 0;
  if (negative ? magnitude > min_magnitude : magnitude > max) {
    return fmt::format("{} is out of range (want {})", text, range);
  }
  text = negative ? fmt::format("-{}", magnitude) : fmt::format("{}", magnitude);
  return "";
}

std::string CheckFloatText(const std::string& text) {
  double value = 0;
  const char* end = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(text.data(), end, value);
  if (text.empty() || ec != std::errc() || ptr != end || !std::isfinite(value)) {
    return fmt::format("\"{}\" is not a finite decimal number", text);
  }
  return "";
}

std::string EnvironmentVariableOf(std::string_view name) {
  std::string env = std::string(kEnvPrefix);
  for (char c : name) {
    env += c == '-' ? '_' : static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  }
  return env;
}

absl::Status CheckEnvironmentValues(CLI::App& app, const char* const* envp) {
  return CheckOptions(app, StrataVariables(envp));
}

}  // namespace strata::cli
