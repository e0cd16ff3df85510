// The OAuth rules both stores share (oauth_rows.h) and the PKCE challenge.

#include "control/oauth.h"

#include <sodium.h>

#include "absl/strings/str_split.h"
#include "common/status_macros.h"
#include "control/control_db.h"
#include "control/oauth_rows.h"
#include "fmt/format.h"

namespace strata::control {

std::string PkceChallenge(std::string_view verifier) {
  unsigned char digest[crypto_hash_sha256_BYTES];
  crypto_hash_sha256(digest, reinterpret_cast<const unsigned char*>(verifier.data()),
                     verifier.size());
  char encoded[sodium_base64_ENCODED_LEN(crypto_hash_sha256_BYTES,
                                         sodium_base64_VARIANT_URLSAFE_NO_PADDING)];
  sodium_bin2base64(encoded, sizeof(encoded), digest, sizeof(digest),
                    sodium_base64_VARIANT_URLSAFE_NO_PADDING);
  return std::string(encoded);
}

namespace oauth_rows {

absl::Status InvalidGrant(std::string_view why) {
  return absl::UnauthenticatedError(fmt::format("invalid_grant: {}", why));
}

bool SameText(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  if (a.empty()) return true;
  return sodium_memcmp(a.data(), b.data(), a.size()) == 0;
}

absl::Status CheckVerifierLength(std::string_view verifier) {
  if (verifier.size() < 43 || verifier.size() > 128) {
    return absl::InvalidArgumentError(
        "invalid_request: code_verifier must be 43 to 128 characters");
  }
  return absl::OkStatus();
}

OAuthTokens NewTokens(const OAuthOptions& options) {
  return OAuthTokens{.access_token = std::string(kOAuthAccessPrefix) + GenerateSecret(),
                     .refresh_token = std::string(kOAuthRefreshPrefix) + GenerateSecret(),
                     .expires_in = options.access_lifetime};
}

absl::StatusOr<OAuthClient> ClientFromRow(const std::vector<std::optional<std::string>>& row) {
  OAuthClient client;
  client.client_id = row[0].value_or("");
  client.name = row[1].value_or("");
  client.redirect_uris = absl::StrSplit(row[2].value_or(""), '\n', absl::SkipEmpty());
  STRATA_ASSIGN_OR_RETURN(client.created_at, ColumnTime(row[3], "oauth_clients.created_at"));
  return client;
}

absl::StatusOr<OAuthGrant> GrantFromRow(const std::vector<std::optional<std::string>>& row) {
  OAuthGrant grant;
  STRATA_ASSIGN_OR_RETURN(grant.id, ColumnInt(row[0], "oauth_grants.id"));
  grant.client_id = row[1].value_or("");
  grant.client_name = row[2].value_or("");
  grant.resource = row[3].value_or("");
  STRATA_ASSIGN_OR_RETURN(grant.created_at, ColumnTime(row[4], "oauth_grants.created_at"));
  grant.last_issued_at = grant.created_at;
  if (row[5].has_value()) {
    STRATA_ASSIGN_OR_RETURN(grant.last_issued_at, ColumnTime(row[5], "oauth_tokens.created_at"));
  }
  return grant;
}

absl::StatusOr<StoredCode> CodeFromRow(const std::vector<std::optional<std::string>>& row) {
  StoredCode code;
  STRATA_ASSIGN_OR_RETURN(code.id, ColumnInt(row[0], "oauth_codes.id"));
  STRATA_ASSIGN_OR_RETURN(code.hash, ColumnHash(row[1], "oauth_codes.code_hash"));
  code.client_id = row[2].value_or("");
  STRATA_ASSIGN_OR_RETURN(code.user_id, ColumnInt(row[3], "oauth_codes.user_id"));
  code.redirect_uri = row[4].value_or("");
  code.code_challenge = row[5].value_or("");
  code.resource = row[6].value_or("");
  STRATA_ASSIGN_OR_RETURN(code.expires_at, ColumnTime(row[7], "oauth_codes.expires_at"));
  code.used = row[8].has_value();
  if (row[9].has_value()) {
    STRATA_ASSIGN_OR_RETURN(code.grant_id, ColumnInt(row[9], "oauth_codes.grant_id"));
  }
  return code;
}

absl::Status CodeRefusal(const StoredCode& code, std::string_view client_id,
                         std::string_view redirect_uri, std::string_view verifier,
                         std::string_view resource, absl::Time now) {
  if (now >= code.expires_at) return InvalidGrant("the code has expired");
  if (!SameText(code.client_id, client_id)) {
    return InvalidGrant("the code was issued to another client");
  }
  if (!SameText(code.redirect_uri, redirect_uri)) {
    return InvalidGrant("redirect_uri differs from the authorization request's");
  }
  if (!SameText(code.code_challenge, PkceChallenge(verifier))) {
    return InvalidGrant("code_verifier does not match the code_challenge");
  }
  if (!resource.empty() && !SameText(code.resource, resource)) {
    return InvalidGrant("resource differs from the authorization request's");
  }
  return absl::OkStatus();
}

absl::StatusOr<StoredRefresh> RefreshFromRow(const std::vector<std::optional<std::string>>& row) {
  StoredRefresh stored;
  STRATA_ASSIGN_OR_RETURN(stored.id, ColumnInt(row[0], "oauth_tokens.id"));
  STRATA_ASSIGN_OR_RETURN(stored.hash, ColumnHash(row[1], "oauth_tokens.token_hash"));
  STRATA_ASSIGN_OR_RETURN(stored.expires_at, ColumnTime(row[2], "oauth_tokens.expires_at"));
  stored.used = row[3].has_value();
  STRATA_ASSIGN_OR_RETURN(stored.grant_id, ColumnInt(row[4], "oauth_grants.id"));
  stored.client_id = row[5].value_or("");
  stored.resource = row[6].value_or("");
  stored.revoked = row[7].has_value();
  stored.user_active = row[8].value_or("0") == "1";
  return stored;
}

RefreshVerdict JudgeRefresh(const StoredRefresh& stored, const TokenHash& presented,
                            std::string_view client_id, std::string_view resource, absl::Time now) {
  if (!SameHash(stored.hash, presented)) return {InvalidGrant("unknown refresh token")};
  if (stored.revoked) return {InvalidGrant("the grant was revoked")};
  if (stored.used) {
    return {InvalidGrant("the refresh token was used already; its grant is revoked"), true};
  }
  if (now >= stored.expires_at) return {InvalidGrant("the refresh token has expired")};
  if (!SameText(stored.client_id, client_id)) {
    return {InvalidGrant("the refresh token was issued to another client")};
  }
  if (!resource.empty() && !SameText(stored.resource, resource)) {
    return {InvalidGrant("resource differs from the grant's")};
  }
  if (!stored.user_active) return {InvalidGrant("the user is deactivated")};
  return {};
}

absl::StatusOr<std::optional<OAuthAccess>> AccessFromRow(
    const std::vector<std::optional<std::string>>& row, const TokenHash& presented,
    std::string_view resource, absl::Time now) {
  STRATA_ASSIGN_OR_RETURN(const TokenHash stored, ColumnHash(row[0], "oauth_tokens.token_hash"));
  STRATA_ASSIGN_OR_RETURN(const absl::Time expires, ColumnTime(row[1], "oauth_tokens.expires_at"));
  if (!SameHash(stored, presented) || now >= expires || !SameText(row[4].value_or(""), resource)) {
    return std::nullopt;
  }
  OAuthAccess access;
  STRATA_ASSIGN_OR_RETURN(access.grant_id, ColumnInt(row[2], "oauth_grants.id"));
  STRATA_ASSIGN_OR_RETURN(access.user_id, ColumnInt(row[3], "oauth_grants.user_id"));
  return access;
}

}  // namespace oauth_rows
}  // namespace strata::control
