#include "control/oauth.h"

#include <sodium.h>

#include <algorithm>
#include <utility>

#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "common/status_macros.h"
#include "control/control_db.h"
#include "control/token.h"
#include "fmt/format.h"

namespace strata::control {
namespace {

// The WHERE clause of the clients no user has consented to: no code was
// issued for them and no grant made.
constexpr std::string_view kUnusedClient =
    "WHERE NOT EXISTS (SELECT 1 FROM oauth_codes WHERE oauth_codes.client_id = "
    "oauth_clients.client_id) AND NOT EXISTS (SELECT 1 FROM oauth_grants WHERE "
    "oauth_grants.client_id = oauth_clients.client_id)";

// Compares two strings in time that depends only on their lengths.
bool SameText(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  if (a.empty()) return true;
  return sodium_memcmp(a.data(), b.data(), a.size()) == 0;
}

absl::Status InvalidGrant(std::string_view why) {
  return absl::UnauthenticatedError(fmt::format("invalid_grant: {}", why));
}

absl::Status RevokeGrantIn(SqliteDb::Transaction& txn, int64_t grant_id, absl::Time now) {
  return txn.Exec("UPDATE oauth_grants SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL",
                  {DbMillis(now), grant_id});
}

}  // namespace

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

absl::StatusOr<std::unique_ptr<OAuth>> OAuth::Open(const std::string& db_path, absl::Time now,
                                                   OAuthOptions options) {
  STRATA_ASSIGN_OR_RETURN(std::unique_ptr<SqliteDb> db, OpenControlDb(db_path, now));
  return std::unique_ptr<OAuth>(new OAuth(std::move(db), options));
}

absl::StatusOr<OAuthClient> OAuth::RegisterClient(std::string_view name,
                                                  const std::vector<std::string>& redirect_uris,
                                                  absl::Time now) {
  OAuthClient client{.client_id = std::string(kOAuthClientPrefix) + GenerateSecret(),
                     .name = std::string(name),
                     .redirect_uris = redirect_uris,
                     .created_at = now};
  STRATA_RETURN_IF_ERROR(db_->InTransaction([&](SqliteDb::Transaction& txn) -> absl::Status {
    STRATA_ASSIGN_OR_RETURN(
        const SqlRows unused_rows,
        txn.Query(fmt::format("SELECT COUNT(*) FROM oauth_clients {}", kUnusedClient)));
    STRATA_ASSIGN_OR_RETURN(
        const int64_t unused,
        ColumnInt(unused_rows.empty() ? std::nullopt : unused_rows[0][0], "COUNT(*)"));
    const int64_t keep = static_cast<int64_t>(std::max<size_t>(1, options_.max_unused_clients)) - 1;
    if (unused > keep) {
      STRATA_RETURN_IF_ERROR(
          txn.Exec(fmt::format("DELETE FROM oauth_clients WHERE id IN "
                               "(SELECT id FROM oauth_clients {} ORDER BY id LIMIT ?)",
                               kUnusedClient),
                   {unused - keep}));
    }
    STRATA_ASSIGN_OR_RETURN(const SqlRows rows, txn.Query("SELECT COUNT(*) FROM oauth_clients"));
    STRATA_ASSIGN_OR_RETURN(const int64_t count,
                            ColumnInt(rows.empty() ? std::nullopt : rows[0][0], "COUNT(*)"));
    if (count >= static_cast<int64_t>(options_.max_clients)) {
      return absl::ResourceExhaustedError(
          fmt::format("this server holds its limit of {} OAuth clients", options_.max_clients));
    }
    return txn.Exec(
        "INSERT INTO oauth_clients(client_id, name, redirect_uris, created_at) VALUES (?, ?, ?, ?)",
        {client.client_id, client.name, absl::StrJoin(redirect_uris, "\n"), DbMillis(now)});
  }));
  return client;
}

absl::StatusOr<std::vector<OAuthGrant>> OAuth::ListGrants(int64_t user_id) {
  STRATA_ASSIGN_OR_RETURN(
      const SqlRows rows,
      db_->Query("SELECT oauth_grants.id, oauth_grants.client_id, oauth_clients.name, "
                 "oauth_grants.resource, oauth_grants.created_at, "
                 "(SELECT MAX(created_at) FROM oauth_tokens WHERE oauth_tokens.grant_id = "
                 "oauth_grants.id AND kind = 'access') "
                 "FROM oauth_grants JOIN oauth_clients USING (client_id) "
                 "WHERE oauth_grants.user_id = ? AND oauth_grants.revoked_at IS NULL "
                 "ORDER BY oauth_grants.id DESC LIMIT 1000",
                 {user_id}));
  std::vector<OAuthGrant> grants;
  grants.reserve(rows.size());
  for (const auto& row : rows) {
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
    grants.push_back(std::move(grant));
  }
  return grants;
}

absl::Status OAuth::RevokeGrant(int64_t user_id, int64_t grant_id, absl::Time now) {
  return db_->InTransaction([&](SqliteDb::Transaction& txn) -> absl::Status {
    STRATA_ASSIGN_OR_RETURN(
        const SqlRows rows,
        txn.Query("SELECT id FROM oauth_grants WHERE id = ? AND user_id = ? AND revoked_at IS NULL",
                  {grant_id, user_id}));
    if (rows.empty()) return absl::NotFoundError(fmt::format("no grant {} of yours", grant_id));
    return RevokeGrantIn(txn, grant_id, now);
  });
}

absl::StatusOr<int64_t> OAuth::UnusedClients() {
  STRATA_ASSIGN_OR_RETURN(
      const SqlRows rows,
      db_->Query(fmt::format("SELECT COUNT(*) FROM oauth_clients {}", kUnusedClient)));
  return ColumnInt(rows.empty() ? std::nullopt : rows[0][0], "COUNT(*)");
}

absl::StatusOr<OAuthClient> OAuth::GetClient(std::string_view client_id) {
  STRATA_ASSIGN_OR_RETURN(
      const SqlRows rows,
      db_->Query("SELECT client_id, name, redirect_uris, created_at FROM oauth_clients "
                 "WHERE client_id = ?",
                 {std::string(client_id)}));
  if (rows.empty()) return absl::NotFoundError("invalid_client: no such client_id");
  OAuthClient client;
  client.client_id = rows[0][0].value_or("");
  client.name = rows[0][1].value_or("");
  client.redirect_uris = absl::StrSplit(rows[0][2].value_or(""), '\n', absl::SkipEmpty());
  STRATA_ASSIGN_OR_RETURN(client.created_at, ColumnTime(rows[0][3], "oauth_clients.created_at"));
  return client;
}

absl::StatusOr<std::string> OAuth::IssueCode(const OAuthApproval& approval, absl::Time now) {
  const std::string code = GenerateSecret();
  STRATA_RETURN_IF_ERROR(db_->InTransaction([&](SqliteDb::Transaction& txn) -> absl::Status {
    // Expired codes are of no use to anyone.
    STRATA_RETURN_IF_ERROR(
        txn.Exec("DELETE FROM oauth_codes WHERE expires_at < ?", {DbMillis(now - absl::Hours(1))}));
    return txn.Exec(
        "INSERT INTO oauth_codes(code_hash, client_id, user_id, redirect_uri, code_challenge, "
        "resource, created_at, expires_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
        {HashBlob(HashToken(code)), approval.client_id, approval.user_id, approval.redirect_uri,
         approval.code_challenge, approval.resource, DbMillis(now),
         DbMillis(now + options_.code_lifetime)});
  }));
  return code;
}

absl::StatusOr<OAuthTokens> OAuth::IssueTokens(SqliteDb::Transaction& txn, int64_t grant_id,
                                               absl::Time now) {
  OAuthTokens tokens{.access_token = std::string(kOAuthAccessPrefix) + GenerateSecret(),
                     .refresh_token = std::string(kOAuthRefreshPrefix) + GenerateSecret(),
                     .expires_in = options_.access_lifetime};
  STRATA_RETURN_IF_ERROR(
      txn.Exec("DELETE FROM oauth_tokens WHERE expires_at < ?", {DbMillis(now - absl::Hours(1))}));
  const std::string insert =
      "INSERT INTO oauth_tokens(grant_id, kind, token_hash, created_at, expires_at) "
      "VALUES (?, ?, ?, ?, ?)";
  STRATA_RETURN_IF_ERROR(
      txn.Exec(insert, {grant_id, std::string("access"), HashBlob(HashToken(tokens.access_token)),
                        DbMillis(now), DbMillis(now + options_.access_lifetime)}));
  STRATA_RETURN_IF_ERROR(
      txn.Exec(insert, {grant_id, std::string("refresh"), HashBlob(HashToken(tokens.refresh_token)),
                        DbMillis(now), DbMillis(now + options_.refresh_lifetime)}));
  return tokens;
}

absl::StatusOr<OAuthTokens> OAuth::ExchangeCode(std::string_view code, std::string_view client_id,
                                                std::string_view redirect_uri,
                                                std::string_view verifier,
                                                std::string_view resource, absl::Time now) {
  // RFC 7636: 43 to 128 characters of [A-Za-z0-9-._~].
  if (verifier.size() < 43 || verifier.size() > 128) {
    return absl::InvalidArgumentError(
        "invalid_request: code_verifier must be 43 to 128 characters");
  }
  const TokenHash hash = HashToken(code);
  OAuthTokens tokens;
  absl::Status refused;
  STRATA_RETURN_IF_ERROR(db_->InTransaction([&](SqliteDb::Transaction& txn) -> absl::Status {
    STRATA_ASSIGN_OR_RETURN(
        const SqlRows rows,
        txn.Query("SELECT id, code_hash, client_id, user_id, redirect_uri, code_challenge, "
                  "resource, expires_at, used_at, grant_id FROM oauth_codes WHERE code_hash = ?",
                  {HashBlob(hash)}));
    if (rows.empty()) {
      refused = InvalidGrant("unknown code");
      return absl::OkStatus();
    }
    const SqlRow& row = rows[0];
    STRATA_ASSIGN_OR_RETURN(const int64_t id, ColumnInt(row[0], "oauth_codes.id"));
    STRATA_ASSIGN_OR_RETURN(const TokenHash stored, ColumnHash(row[1], "oauth_codes.code_hash"));
    STRATA_ASSIGN_OR_RETURN(const int64_t user_id, ColumnInt(row[3], "oauth_codes.user_id"));
    STRATA_ASSIGN_OR_RETURN(const absl::Time expires, ColumnTime(row[7], "oauth_codes.expires_at"));
    if (!SameHash(stored, hash)) {
      refused = InvalidGrant("unknown code");
      return absl::OkStatus();
    }
    if (row[8].has_value()) {
      // Used before: whatever it bought is revoked.
      if (row[9].has_value()) {
        STRATA_ASSIGN_OR_RETURN(const int64_t grant, ColumnInt(row[9], "oauth_codes.grant_id"));
        STRATA_RETURN_IF_ERROR(RevokeGrantIn(txn, grant, now));
      }
      refused = InvalidGrant("the code was used already; the tokens it gave are revoked");
      return absl::OkStatus();
    }
    // One presentation, whatever comes of it.
    STRATA_RETURN_IF_ERROR(
        txn.Exec("UPDATE oauth_codes SET used_at = ? WHERE id = ?", {DbMillis(now), id}));
    if (now >= expires) {
      refused = InvalidGrant("the code has expired");
    } else if (!SameText(row[2].value_or(""), client_id)) {
      refused = InvalidGrant("the code was issued to another client");
    } else if (!SameText(row[4].value_or(""), redirect_uri)) {
      refused = InvalidGrant("redirect_uri differs from the authorization request's");
    } else if (!SameText(row[5].value_or(""), PkceChallenge(verifier))) {
      refused = InvalidGrant("code_verifier does not match the code_challenge");
    } else if (!resource.empty() && !SameText(row[6].value_or(""), resource)) {
      refused = InvalidGrant("resource differs from the authorization request's");
    }
    if (!refused.ok()) return absl::OkStatus();
    STRATA_ASSIGN_OR_RETURN(
        const SqlRows grant,
        txn.Query("INSERT INTO oauth_grants(client_id, user_id, resource, created_at) "
                  "VALUES (?, ?, ?, ?) RETURNING id",
                  {row[2].value_or(""), user_id, row[6].value_or(""), DbMillis(now)}));
    STRATA_ASSIGN_OR_RETURN(const int64_t grant_id,
                            ColumnInt(grant.empty() ? std::nullopt : grant[0][0], "grant id"));
    STRATA_RETURN_IF_ERROR(
        txn.Exec("UPDATE oauth_codes SET grant_id = ? WHERE id = ?", {grant_id, id}));
    STRATA_ASSIGN_OR_RETURN(tokens, IssueTokens(txn, grant_id, now));
    return absl::OkStatus();
  }));
  // The transaction commits the code's use (and a revocation) even when
  // the exchange is refused.
  if (!refused.ok()) return refused;
  return tokens;
}

absl::StatusOr<OAuthTokens> OAuth::Refresh(std::string_view refresh_token,
                                           std::string_view client_id, std::string_view resource,
                                           absl::Time now) {
  const TokenHash hash = HashToken(refresh_token);
  OAuthTokens tokens;
  absl::Status refused;
  STRATA_RETURN_IF_ERROR(db_->InTransaction([&](SqliteDb::Transaction& txn) -> absl::Status {
    STRATA_ASSIGN_OR_RETURN(
        const SqlRows rows,
        txn.Query("SELECT oauth_tokens.id, oauth_tokens.token_hash, oauth_tokens.expires_at, "
                  "oauth_tokens.used_at, oauth_grants.id, oauth_grants.client_id, "
                  "oauth_grants.resource, oauth_grants.revoked_at, users.active "
                  "FROM oauth_tokens JOIN oauth_grants ON oauth_grants.id = oauth_tokens.grant_id "
                  "JOIN users ON users.id = oauth_grants.user_id "
                  "WHERE oauth_tokens.token_hash = ? AND oauth_tokens.kind = 'refresh'",
                  {HashBlob(hash)}));
    if (rows.empty()) {
      refused = InvalidGrant("unknown refresh token");
      return absl::OkStatus();
    }
    const SqlRow& row = rows[0];
    STRATA_ASSIGN_OR_RETURN(const int64_t id, ColumnInt(row[0], "oauth_tokens.id"));
    STRATA_ASSIGN_OR_RETURN(const TokenHash stored, ColumnHash(row[1], "oauth_tokens.token_hash"));
    STRATA_ASSIGN_OR_RETURN(const absl::Time expires,
                            ColumnTime(row[2], "oauth_tokens.expires_at"));
    STRATA_ASSIGN_OR_RETURN(const int64_t grant_id, ColumnInt(row[4], "oauth_grants.id"));
    if (!SameHash(stored, hash)) {
      refused = InvalidGrant("unknown refresh token");
    } else if (row[7].has_value()) {
      refused = InvalidGrant("the grant was revoked");
    } else if (row[3].has_value()) {
      STRATA_RETURN_IF_ERROR(RevokeGrantIn(txn, grant_id, now));
      refused = InvalidGrant("the refresh token was used already; its grant is revoked");
    } else if (now >= expires) {
      refused = InvalidGrant("the refresh token has expired");
    } else if (!SameText(row[5].value_or(""), client_id)) {
      refused = InvalidGrant("the refresh token was issued to another client");
    } else if (!resource.empty() && !SameText(row[6].value_or(""), resource)) {
      refused = InvalidGrant("resource differs from the grant's");
    } else if (row[8].value_or("0") != "1") {
      refused = InvalidGrant("the user is deactivated");
    }
    if (!refused.ok()) return absl::OkStatus();
    STRATA_RETURN_IF_ERROR(
        txn.Exec("UPDATE oauth_tokens SET used_at = ? WHERE id = ?", {DbMillis(now), id}));
    STRATA_ASSIGN_OR_RETURN(tokens, IssueTokens(txn, grant_id, now));
    return absl::OkStatus();
  }));
  if (!refused.ok()) return refused;
  return tokens;
}

absl::StatusOr<std::optional<OAuthAccess>> OAuth::ResolveAccess(std::string_view access_token,
                                                                std::string_view resource,
                                                                absl::Time now) {
  const TokenHash hash = HashToken(access_token);
  STRATA_ASSIGN_OR_RETURN(
      const SqlRows rows,
      db_->Query("SELECT oauth_tokens.token_hash, oauth_tokens.expires_at, oauth_grants.id, "
                 "oauth_grants.user_id, oauth_grants.resource "
                 "FROM oauth_tokens JOIN oauth_grants ON oauth_grants.id = oauth_tokens.grant_id "
                 "JOIN users ON users.id = oauth_grants.user_id "
                 "WHERE oauth_tokens.token_hash = ? AND oauth_tokens.kind = 'access' "
                 "AND oauth_grants.revoked_at IS NULL AND users.active = 1",
                 {HashBlob(hash)}));
  if (rows.empty()) return std::nullopt;
  const SqlRow& row = rows[0];
  STRATA_ASSIGN_OR_RETURN(const TokenHash stored, ColumnHash(row[0], "oauth_tokens.token_hash"));
  STRATA_ASSIGN_OR_RETURN(const absl::Time expires, ColumnTime(row[1], "oauth_tokens.expires_at"));
  if (!SameHash(stored, hash) || now >= expires || !SameText(row[4].value_or(""), resource)) {
    return std::nullopt;
  }
  OAuthAccess access;
  STRATA_ASSIGN_OR_RETURN(access.grant_id, ColumnInt(row[2], "oauth_grants.id"));
  STRATA_ASSIGN_OR_RETURN(access.user_id, ColumnInt(row[3], "oauth_grants.user_id"));
  return access;
}

}  // namespace strata::control
