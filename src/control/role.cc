#include "control/role.h"

#include "common/check.h"
#include "fmt/format.h"

namespace strata::control {

std::string_view RoleName(Role role) {
  switch (role) {
    case Role::kViewer:
      return "viewer";
    case Role::kOperator:
      return "operator";
    case Role::kAdmin:
      return "admin";
  }
  STRATA_CHECK(false, "unknown Role");
  return "";
}

absl::StatusOr<Role> ParseRole(std::string_view name) {
  for (Role role : {Role::kViewer, Role::kOperator, Role::kAdmin}) {
    if (name == RoleName(role)) return role;
  }
  return absl::InvalidArgumentError(
      fmt::format("unknown role \"{}\"; the roles are viewer, operator and admin", name));
}

}  // namespace strata::control
