#pragma once

// Every strata flag can also be set by a STRATA_* environment variable. A
// STRATA_* variable that no flag reads is almost always a typo that would
// otherwise be silently ignored, so startup refuses it by name.
//
// Errors: InvalidArgument naming the first unknown variable.

#include <set>
#include <string>

#include "absl/status/status.h"

namespace strata::cli {

inline constexpr char kEnvPrefix[] = "STRATA_";

// Checks `environ`-style `envp` (NULL-terminated "NAME=value" strings)
// against the variable names flags read.
[[nodiscard]] absl::Status CheckStrataEnvironment(const char* const* envp,
                                                  const std::set<std::string>& known);

}  // namespace strata::cli
