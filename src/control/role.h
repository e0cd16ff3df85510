#pragma once

// People's roles (docs/api.md, "Accounts"): viewer reads telemetry and keeps
// their own saved queries; operator also manages shared saved queries (and
// later alert rules); admin also manages users, tokens, settings and
// maintenance. Each role allows everything the ones before it allow.
//
// Thread-safety: stateless functions.

#include <string_view>

#include "absl/status/statusor.h"

namespace strata::control {

enum class Role { kViewer = 0, kOperator = 1, kAdmin = 2 };

// "viewer", "operator", "admin": the names used by the API, the CLI and the
// database.
std::string_view RoleName(Role role);
// The inverse of RoleName(); InvalidArgument listing the valid names.
[[nodiscard]] absl::StatusOr<Role> ParseRole(std::string_view name);
// True when `granted` allows what `required` allows.
inline bool RoleAllows(Role granted, Role required) {
  return static_cast<int>(granted) >= static_cast<int>(required);
}

}  // namespace strata::control
