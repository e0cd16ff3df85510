// SqliteOAuth (sqlite_oauth.h): OAuth in the single node's control database.

#include "control/sqlite_oauth.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_join.h"
#include "common/status_macros.h"
#include "control/control_db.h"
#include "control/oauth_rows.h"
#include "control/token.h"
#include "fmt/format.h"

namespace strata::control {
namespace {

// The WHERE clause of the clients no user has consented to: no code was
// issued for them and no grant made.
constexpr std::string_view kSqliteUnusedClient =
    "WHERE NOT EXISTS (SELECT 1 FROM oauth_codes WHERE oauth_codes.client_id = "
    "oauth_clients.client_id) AND NOT EXISTS (SELECT 1 FROM oauth_grants WHERE "
    "oauth_grants.client_id = oauth_clients.client_id)";

absl::Status RevokeSqliteGrantIn(SqliteDb::Transaction& txn, int64_t grant_id, absl::Time now) {
  return txn.Exec("UPDATE oauth_grants SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL",
                  {DbMillis(now), grant_id});
}

}  // namespace

absl::StatusOr<std::unique_ptr<OAuth>> OAuth::Open(const std::string& db_path, absl::Time now,
                                                   OAuthOptions options) {
  return SqliteOAuth::Open(db_path, now, options);
}

absl::StatusOr<std::unique_ptr<SqliteOAuth>> SqliteOAuth::Open(const std::string& db_path,
                                                               absl::Time now,
                                                               OAuthOptions options) {
  STRATA_ASSIGN_OR_RETURN(std::unique_ptr<SqliteDb> db, OpenControlDb(db_path, now));
  return std::unique_ptr<SqliteOAuth>(new SqliteOAuth(std::move(db), options));
}

absl::StatusOr<OAuthClient> SqliteOAuth::RegisterClient(
    std::string_view name, const std::vector<std::string>& redirect_uris, absl::Time now) {
  OAuthClient client{.client_id = std::string(kOAuthClientPrefix) + GenerateSecret(),
                     .name = std::string(name),
                     .redirect_uris = redirect_uris,
                     .created_at = now};
  STRATA_RETURN_IF_ERROR(db_->InTransaction([&](SqliteDb::Transaction& txn) -> absl::Status {
    STRATA_ASSIGN_OR_RETURN(
        const SqlRows unused_rows,
        txn.Query(fmt::format("SELECT COUNT(*) FROM oauth_clients {}", kSqliteUnusedClient)));
    STRATA_ASSIGN_OR_RETURN(
        const int64_t unused,
        ColumnInt(unused_rows.empty() ? std::nullopt : unused_rows[0][0], "COUNT(*)"));
    const int64_t keep = static_cast<int64_t>(std::max<size_t>(1, options_.max_unused_clients)) - 1;
    if (unused > keep) {
      STRATA_RETURN_IF_ERROR(
          txn.Exec(fmt::format("DELETE FROM oauth_clients WHERE id IN "
                               "(SELECT id FROM oauth_clients {} ORDER BY id LIMIT ?)",
                               kSqliteUnusedClient),
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

absl::StatusOr<std::vector<OAuthGrant>> SqliteOAuth::ListGrants(int64_t user_id) {
  STRATA_ASSIGN_OR_RETURN(
      const SqlRows rows,
      db_->Query("SELECT g.id, g.client_id, c.name, g.resource, g.created_at, "
                 "(SELECT MAX(created_at) FROM oauth_tokens WHERE oauth_tokens.grant_id = g.id "
                 "AND kind = 'access') "
                 "FROM oauth_grants g JOIN oauth_clients c USING (client_id) "
                 "WHERE g.user_id = ? AND g.revoked_at IS NULL ORDER BY g.id DESC LIMIT 1000",
                 {user_id}));
  std::vector<OAuthGrant> grants;
  grants.reserve(rows.size());
  for (const auto& row : rows) {
    STRATA_ASSIGN_OR_RETURN(OAuthGrant grant, oauth_rows::GrantFromRow(row));
    grants.push_back(std::move(grant));
  }
  return grants;
}

absl::Status SqliteOAuth::RevokeGrant(int64_t user_id, int64_t grant_id, absl::Time now) {
  return db_->InTransaction([&](SqliteDb::Transaction& txn) -> absl::Status {
    STRATA_ASSIGN_OR_RETURN(
        const SqlRows rows,
        txn.Query("SELECT id FROM oauth_grants WHERE id = ? AND user_id = ? AND revoked_at IS NULL",
                  {grant_id, user_id}));
    if (rows.empty()) return absl::NotFoundError(fmt::format("no grant {} of yours", grant_id));
    return RevokeSqliteGrantIn(txn, grant_id, now);
  });
}

absl::StatusOr<int64_t> SqliteOAuth::UnusedClients() {
  STRATA_ASSIGN_OR_RETURN(
      const SqlRows rows,
      db_->Query(fmt::format("SELECT COUNT(*) FROM oauth_clients {}", kSqliteUnusedClient)));
  return ColumnInt(rows.empty() ? std::nullopt : rows[0][0], "COUNT(*)");
}

absl::StatusOr<OAuthClient> SqliteOAuth::GetClient(std::string_view client_id) {
  STRATA_ASSIGN_OR_RETURN(const SqlRows rows,
                          db_->Query(fmt::format("SELECT {} FROM oauth_clients WHERE client_id = ?",
                                                 oauth_rows::kClientColumns),
                                     {std::string(client_id)}));
  if (rows.empty()) return absl::NotFoundError("invalid_client: no such client_id");
  return oauth_rows::ClientFromRow(rows[0]);
}

absl::StatusOr<std::string> SqliteOAuth::IssueCode(const OAuthApproval& approval, absl::Time now) {
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

absl::StatusOr<OAuthTokens> SqliteOAuth::IssueTokens(SqliteDb::Transaction& txn, int64_t grant_id,
                                                     absl::Time now) {
  const OAuthTokens tokens = oauth_rows::NewTokens(options_);
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

absl::StatusOr<OAuthTokens> SqliteOAuth::ExchangeCode(std::string_view code,
                                                      std::string_view client_id,
                                                      std::string_view redirect_uri,
                                                      std::string_view verifier,
                                                      std::string_view resource, absl::Time now) {
  STRATA_RETURN_IF_ERROR(oauth_rows::CheckVerifierLength(verifier));
  const TokenHash hash = HashToken(code);
  OAuthTokens tokens;
  absl::Status refused;
  STRATA_RETURN_IF_ERROR(db_->InTransaction([&](SqliteDb::Transaction& txn) -> absl::Status {
    STRATA_ASSIGN_OR_RETURN(
        const SqlRows rows,
        txn.Query(fmt::format("SELECT {} FROM oauth_codes c WHERE c.code_hash = ?",
                              oauth_rows::kCodeColumns),
                  {HashBlob(hash)}));
    if (rows.empty()) {
      refused = oauth_rows::InvalidGrant("unknown code");
      return absl::OkStatus();
    }
    STRATA_ASSIGN_OR_RETURN(const oauth_rows::StoredCode stored, oauth_rows::CodeFromRow(rows[0]));
    if (!SameHash(stored.hash, hash)) {
      refused = oauth_rows::InvalidGrant("unknown code");
      return absl::OkStatus();
    }
    if (stored.used) {
      // Used before: whatever it bought is revoked.
      if (stored.grant_id.has_value()) {
        STRATA_RETURN_IF_ERROR(RevokeSqliteGrantIn(txn, *stored.grant_id, now));
      }
      refused =
          oauth_rows::InvalidGrant("the code was used already; the tokens it gave are revoked");
      return absl::OkStatus();
    }
    // One presentation, whatever comes of it.
    STRATA_RETURN_IF_ERROR(
        txn.Exec("UPDATE oauth_codes SET used_at = ? WHERE id = ?", {DbMillis(now), stored.id}));
    refused = oauth_rows::CodeRefusal(stored, client_id, redirect_uri, verifier, resource, now);
    if (!refused.ok()) return absl::OkStatus();
    STRATA_ASSIGN_OR_RETURN(
        const SqlRows grant,
        txn.Query("INSERT INTO oauth_grants(client_id, user_id, resource, created_at) "
                  "VALUES (?, ?, ?, ?) RETURNING id",
                  {stored.client_id, stored.user_id, stored.resource, DbMillis(now)}));
    STRATA_ASSIGN_OR_RETURN(const int64_t grant_id,
                            ColumnInt(grant.empty() ? std::nullopt : grant[0][0], "grant id"));
    STRATA_RETURN_IF_ERROR(
        txn.Exec("UPDATE oauth_codes SET grant_id = ? WHERE id = ?", {grant_id, stored.id}));
    STRATA_ASSIGN_OR_RETURN(tokens, IssueTokens(txn, grant_id, now));
    return absl::OkStatus();
  }));
  // The transaction commits the code's use (and a revocation) even when
  // the exchange is refused.
  if (!refused.ok()) return refused;
  return tokens;
}

absl::StatusOr<OAuthTokens> SqliteOAuth::Refresh(std::string_view refresh_token,
                                                 std::string_view client_id,
                                                 std::string_view resource, absl::Time now) {
  const TokenHash hash = HashToken(refresh_token);
  OAuthTokens tokens;
  absl::Status refused;
  STRATA_RETURN_IF_ERROR(db_->InTransaction([&](SqliteDb::Transaction& txn) -> absl::Status {
    STRATA_ASSIGN_OR_RETURN(const SqlRows rows,
                            txn.Query(fmt::format("SELECT {} FROM oauth_tokens t "
                                                  "JOIN oauth_grants g ON g.id = t.grant_id "
                                                  "JOIN users u ON u.id = g.user_id "
                                                  "WHERE t.token_hash = ? AND t.kind = 'refresh'",
                                                  oauth_rows::kRefreshColumns),
                                      {HashBlob(hash)}));
    if (rows.empty()) {
      refused = oauth_rows::InvalidGrant("unknown refresh token");
      return absl::OkStatus();
    }
    STRATA_ASSIGN_OR_RETURN(const oauth_rows::StoredRefresh stored,
                            oauth_rows::RefreshFromRow(rows[0]));
    const oauth_rows::RefreshVerdict verdict =
        oauth_rows::JudgeRefresh(stored, hash, client_id, resource, now);
    if (verdict.revoke_grant) {
      STRATA_RETURN_IF_ERROR(RevokeSqliteGrantIn(txn, stored.grant_id, now));
    }
    refused = verdict.refusal;
    if (!refused.ok()) return absl::OkStatus();
    STRATA_RETURN_IF_ERROR(
        txn.Exec("UPDATE oauth_tokens SET used_at = ? WHERE id = ?", {DbMillis(now), stored.id}));
    STRATA_ASSIGN_OR_RETURN(tokens, IssueTokens(txn, stored.grant_id, now));
    return absl::OkStatus();
  }));
  if (!refused.ok()) return refused;
  return tokens;
}

absl::StatusOr<std::optional<OAuthAccess>> SqliteOAuth::ResolveAccess(std::string_view access_token,
                                                                      std::string_view resource,
                                                                      absl::Time now) {
  const TokenHash hash = HashToken(access_token);
  STRATA_ASSIGN_OR_RETURN(const SqlRows rows,
                          db_->Query(fmt::format("SELECT {} FROM oauth_tokens t "
                                                 "JOIN oauth_grants g ON g.id = t.grant_id "
                                                 "JOIN users u ON u.id = g.user_id "
                                                 "WHERE t.token_hash = ? AND t.kind = 'access' "
                                                 "AND g.revoked_at IS NULL AND u.active = 1",
                                                 oauth_rows::kAccessColumns),
                                     {HashBlob(hash)}));
  if (rows.empty()) return std::nullopt;
  return oauth_rows::AccessFromRow(rows[0], hash, resource, now);
}

}  // namespace strata::control
