#include "cli/environment.h"

#include <string_view>

#include "fmt/format.h"
#include "fmt/ranges.h"

namespace strata::cli {

absl::Status CheckStrataEnvironment(const char* const* envp, const std::set<std::string>& known) {
  if (envp == nullptr) return absl::OkStatus();
  for (const char* const* entry = envp; *entry != nullptr; ++entry) {
    std::string_view text(*entry);
    if (text.substr(0, sizeof(kEnvPrefix) - 1) != kEnvPrefix) continue;
    std::string name(text.substr(0, text.find('=')));
    if (known.count(name) == 0) {
      return absl::InvalidArgumentError(fmt::format(
          "unknown environment variable {}; strata reads only: {}", name, fmt::join(known, ", ")));
    }
  }
  return absl::OkStatus();
}

}  // namespace strata::cli
