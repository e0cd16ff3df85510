#pragma once

// The rules of OAuth (oauth.h) that do not depend on where the rows live,
// shared by SqliteOAuth and PostgresOAuth so that both decide alike: the
// columns each store selects (table aliases c: codes, t: tokens, g: grants,
// u: users), how a row reads, and which presentations are refused. The
// stores keep only the SQL and the transactions.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "control/oauth.h"
#include "control/token.h"

namespace strata::control::oauth_rows {

// Unauthenticated "invalid_grant: <why>".
absl::Status InvalidGrant(std::string_view why);
// Compares two strings in time that depends only on their lengths.
bool SameText(std::string_view a, std::string_view b);
// RFC 7636: 43 to 128 characters; InvalidArgument otherwise.
absl::Status CheckVerifierLength(std::string_view verifier);
// New access and refresh token texts with the options' lifetime.
OAuthTokens NewTokens(const OAuthOptions& options);

// The columns ClientFromRow() reads, in its order (no alias).
inline constexpr std::string_view kClientColumns = "client_id, name, redirect_uris, created_at";
absl::StatusOr<OAuthClient> ClientFromRow(const std::vector<std::optional<std::string>>& row);

// g.id, g.client_id, the client's name, g.resource, g.created_at and the
// newest access token's created_at (NULL: none).
absl::StatusOr<OAuthGrant> GrantFromRow(const std::vector<std::optional<std::string>>& row);

inline constexpr std::string_view kCodeColumns =
    "c.id, c.code_hash, c.client_id, c.user_id, c.redirect_uri, c.code_challenge, c.resource, "
    "c.expires_at, c.used_at, c.grant_id";
struct StoredCode {
  int64_t id = 0;
  TokenHash hash{};
  std::string client_id;
  int64_t user_id = 0;
  std::string redirect_uri;
  std::string code_challenge;
  std::string resource;
  absl::Time expires_at;
  bool used = false;
  std::optional<int64_t> grant_id;  // the grant its use made
};
absl::StatusOr<StoredCode> CodeFromRow(const std::vector<std::optional<std::string>>& row);
// Why an unused, now used, code buys nothing (OK: it buys a grant).
absl::Status CodeRefusal(const StoredCode& code, std::string_view client_id,
                         std::string_view redirect_uri, std::string_view verifier,
                         std::string_view resource, absl::Time now);

inline constexpr std::string_view kRefreshColumns =
    "t.id, t.token_hash, t.expires_at, t.used_at, g.id, g.client_id, g.resource, g.revoked_at, "
    "u.active";
struct StoredRefresh {
  int64_t id = 0;
  TokenHash hash{};
  absl::Time expires_at;
  bool used = false;
  int64_t grant_id = 0;
  std::string client_id;
  std::string resource;
  bool revoked = false;
  bool user_active = false;
};
absl::StatusOr<StoredRefresh> RefreshFromRow(const std::vector<std::optional<std::string>>& row);
struct RefreshVerdict {
  absl::Status refusal;  // OK: rotate
  bool revoke_grant = false;
};
RefreshVerdict JudgeRefresh(const StoredRefresh& stored, const TokenHash& presented,
                            std::string_view client_id, std::string_view resource, absl::Time now);

// Of a live grant whose user is active.
inline constexpr std::string_view kAccessColumns =
    "t.token_hash, t.expires_at, g.id, g.user_id, g.resource";
absl::StatusOr<std::optional<OAuthAccess>> AccessFromRow(
    const std::vector<std::optional<std::string>>& row, const TokenHash& presented,
    std::string_view resource, absl::Time now);

}  // namespace strata::control::oauth_rows
