#include "control/token_store.h"

#include <utility>

#include "common/status_macros.h"

namespace strata::control {

absl::StatusOr<std::optional<std::string>> EnsureIngestToken(TokenStore& store) {
  STRATA_ASSIGN_OR_RETURN(std::optional<CreatedToken> created,
                          store.CreateIfNone(kDefaultIngestTokenName, TokenScope::kIngest));
  if (!created.has_value()) return std::nullopt;
  return std::move(created->token);
}

}  // namespace strata::control
