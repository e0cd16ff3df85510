// PostgresOAuth (postgres_oauth.h): OAuth in the PostgreSQL control store.

#include "control/postgres_oauth.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_join.h"
#include "common/status_macros.h"
#include "control/control_db.h"
#include "control/oauth_rows.h"
#include "control/postgres_account_store.h"
#include "control/postgres_migrations.h"
#include "control/token.h"
#include "fmt/format.h"

namespace strata::control {
namespace {

using postgres::PgConnection;
using postgres::PgRows;

// The WHERE clause of the clients no user has consented to: no code was
// issued for them and no grant made.
constexpr std::string_view kPgUnusedClient =
    "WHERE NOT EXISTS (SELECT 1 FROM strata_oauth_codes c WHERE c.client_id = "
    "strata_oauth_clients.client_id) AND NOT EXISTS (SELECT 1 FROM strata_oauth_grants g WHERE "
    "g.client_id = strata_oauth_clients.client_id)";

absl::Status RevokePgGrantIn(PgConnection::Transaction& txn, int64_t grant_id, absl::Time now) {
  return txn.Exec(
      "UPDATE strata_oauth_grants SET revoked_at = $1 WHERE id = $2 AND revoked_at IS NULL",
      {DbMillis(now), grant_id});
}

}  // namespace

absl::Status PostgresOAuth::Annotate(const absl::Status& status, std::string_view what) const {
  if (status.ok() || absl::IsNotFound(status) || absl::IsUnauthenticated(status) ||
      absl::IsInvalidArgument(status) || absl::IsResourceExhausted(status)) {
    return status;
  }
  return absl::Status(status.code(), fmt::format("control store {}: {}: {}", db_->server(), what,
                                                 std::string(status.message())));
}

absl::StatusOr<std::unique_ptr<PostgresOAuth>> PostgresOAuth::Open(const std::string& url,
                                                                   OAuthOptions options) {
  STRATA_ASSIGN_OR_RETURN(std::unique_ptr<PgConnection> db, PgConnection::Connect(url));
  STRATA_RETURN_IF_ERROR(ApplyPostgresMigrations(*db));
  return std::unique_ptr<PostgresOAuth>(new PostgresOAuth(std::move(db), options));
}

absl::StatusOr<OAuthClient> PostgresOAuth::RegisterClient(
    std::string_view name, const std::vector<std::string>& redirect_uris, absl::Time now) {
  OAuthClient client{.client_id = std::string(kOAuthClientPrefix) + GenerateSecret(),
                     .name = std::string(name),
                     .redirect_uris = redirect_uris,
                     .created_at = now};
  STRATA_RETURN_IF_ERROR(Annotate(db_->InTransaction([&](PgConnection::Transaction& txn)
                                                         -> absl::Status {
    // The counts hold until the insert, whichever node registers.
    STRATA_RETURN_IF_ERROR(txn.Exec("LOCK TABLE strata_oauth_clients IN SHARE ROW EXCLUSIVE MODE"));
    STRATA_ASSIGN_OR_RETURN(
        const PgRows unused_rows,
        txn.Query(fmt::format("SELECT COUNT(*) FROM strata_oauth_clients {}", kPgUnusedClient)));
    STRATA_ASSIGN_OR_RETURN(const int64_t unused, pg_accounts::OneInt(unused_rows, "COUNT(*)"));
    const int64_t keep = static_cast<int64_t>(std::max<size_t>(1, options_.max_unused_clients)) - 1;
    if (unused > keep) {
      STRATA_RETURN_IF_ERROR(
          txn.Exec(fmt::format("DELETE FROM strata_oauth_clients WHERE id IN "
                               "(SELECT id FROM strata_oauth_clients {} ORDER BY id LIMIT $1)",
                               kPgUnusedClient),
                   {unused - keep}));
    }
    STRATA_ASSIGN_OR_RETURN(const PgRows rows,
                            txn.Query("SELECT COUNT(*) FROM strata_oauth_clients"));
    STRATA_ASSIGN_OR_RETURN(const int64_t count, pg_accounts::OneInt(rows, "COUNT(*)"));
    if (count >= static_cast<int64_t>(options_.max_clients)) {
      return absl::ResourceExhaustedError(
          fmt::format("this server holds its limit of {} OAuth clients", options_.max_clients));
    }
    return txn.Exec(
        "INSERT INTO strata_oauth_clients(client_id, name, redirect_uris, created_at) "
        "VALUES ($1, $2, $3, $4)",
        {client.client_id, client.name, absl::StrJoin(redirect_uris, "\n"), DbMillis(now)});
  }),
                                  "register OAuth client"));
  return client;
}

absl::StatusOr<OAuthClient> PostgresOAuth::GetClient(std::string_view client_id) {
  absl::StatusOr<PgRows> rows =
      db_->Query(fmt::format("SELECT {} FROM strata_oauth_clients WHERE client_id = $1",
                             oauth_rows::kClientColumns),
                 {std::string(client_id)});
  if (!rows.ok()) return Annotate(rows.status(), "get OAuth client");
  if (rows->empty()) return absl::NotFoundError("invalid_client: no such client_id");
  return oauth_rows::ClientFromRow((*rows)[0]);
}

absl::StatusOr<std::string> PostgresOAuth::IssueCode(const OAuthApproval& approval,
                                                     absl::Time now) {
  const std::string code = GenerateSecret();
  STRATA_RETURN_IF_ERROR(
      Annotate(db_->InTransaction([&](PgConnection::Transaction& txn) -> absl::Status {
        // Expired codes are of no use to anyone.
        STRATA_RETURN_IF_ERROR(txn.Exec("DELETE FROM strata_oauth_codes WHERE expires_at < $1",
                                        {DbMillis(now - absl::Hours(1))}));
        return txn.Exec(
            "INSERT INTO strata_oauth_codes(code_hash, client_id, user_id, redirect_uri, "
            "code_challenge, resource, created_at, expires_at) "
            "VALUES ($1, $2, $3, $4, $5, $6, $7, $8)",
            {pg_accounts::HashBytes(HashToken(code)), approval.client_id, approval.user_id,
             approval.redirect_uri, approval.code_challenge, approval.resource, DbMillis(now),
             DbMillis(now + options_.code_lifetime)});
      }),
               "issue OAuth code"));
  return code;
}

absl::StatusOr<OAuthTokens> PostgresOAuth::IssueTokens(PgConnection::Transaction& txn,
                                                       int64_t grant_id, absl::Time now) {
  const OAuthTokens tokens = oauth_rows::NewTokens(options_);
  STRATA_RETURN_IF_ERROR(txn.Exec("DELETE FROM strata_oauth_tokens WHERE expires_at < $1",
                                  {DbMillis(now - absl::Hours(1))}));
  const std::string insert =
      "INSERT INTO strata_oauth_tokens(grant_id, kind, token_hash, created_at, expires_at) "
      "VALUES ($1, $2, $3, $4, $5)";
  STRATA_RETURN_IF_ERROR(txn.Exec(
      insert,
      {grant_id, std::string("access"), pg_accounts::HashBytes(HashToken(tokens.access_token)),
       DbMillis(now), DbMillis(now + options_.access_lifetime)}));
  STRATA_RETURN_IF_ERROR(txn.Exec(
      insert,
      {grant_id, std::string("refresh"), pg_accounts::HashBytes(HashToken(tokens.refresh_token)),
       DbMillis(now), DbMillis(now + options_.refresh_lifetime)}));
  return tokens;
}

absl::StatusOr<OAuthTokens> PostgresOAuth::ExchangeCode(std::string_view code,
                                                        std::string_view client_id,
                                                        std::string_view redirect_uri,
                                                        std::string_view verifier,
                                                        std::string_view resource, absl::Time now) {
  STRATA_RETURN_IF_ERROR(oauth_rows::CheckVerifierLength(verifier));
  const TokenHash hash = HashToken(code);
  OAuthTokens tokens;
  absl::Status refused;
  absl::Status status = db_->InTransaction([&](PgConnection::Transaction& txn) -> absl::Status {
    // FOR UPDATE: another node exchanging this code waits for this
    // transaction, then reads the code as used.
    STRATA_ASSIGN_OR_RETURN(
        const PgRows rows,
        txn.Query(fmt::format("SELECT {} FROM strata_oauth_codes c WHERE c.code_hash = $1 "
                              "FOR UPDATE",
                              oauth_rows::kCodeColumns),
                  {pg_accounts::HashBytes(hash)}));
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
        STRATA_RETURN_IF_ERROR(RevokePgGrantIn(txn, *stored.grant_id, now));
      }
      refused =
          oauth_rows::InvalidGrant("the code was used already; the tokens it gave are revoked");
      return absl::OkStatus();
    }
    // One presentation, whatever comes of it.
    STRATA_RETURN_IF_ERROR(txn.Exec("UPDATE strata_oauth_codes SET used_at = $1 WHERE id = $2",
                                    {DbMillis(now), stored.id}));
    refused = oauth_rows::CodeRefusal(stored, client_id, redirect_uri, verifier, resource, now);
    if (!refused.ok()) return absl::OkStatus();
    STRATA_ASSIGN_OR_RETURN(
        const PgRows grant,
        txn.Query("INSERT INTO strata_oauth_grants(client_id, user_id, resource, created_at) "
                  "VALUES ($1, $2, $3, $4) RETURNING id",
                  {stored.client_id, stored.user_id, stored.resource, DbMillis(now)}));
    STRATA_ASSIGN_OR_RETURN(const int64_t grant_id, pg_accounts::OneInt(grant, "grant id"));
    STRATA_RETURN_IF_ERROR(txn.Exec("UPDATE strata_oauth_codes SET grant_id = $1 WHERE id = $2",
                                    {grant_id, stored.id}));
    STRATA_ASSIGN_OR_RETURN(tokens, IssueTokens(txn, grant_id, now));
    return absl::OkStatus();
  });
  STRATA_RETURN_IF_ERROR(Annotate(status, "exchange OAuth code"));
  // The transaction commits the code's use (and a revocation) even when
  // the exchange is refused.
  if (!refused.ok()) return refused;
  return tokens;
}

absl::StatusOr<OAuthTokens> PostgresOAuth::Refresh(std::string_view refresh_token,
                                                   std::string_view client_id,
                                                   std::string_view resource, absl::Time now) {
  const TokenHash hash = HashToken(refresh_token);
  OAuthTokens tokens;
  absl::Status refused;
  absl::Status status = db_->InTransaction([&](PgConnection::Transaction& txn) -> absl::Status {
    // The token and its grant FOR UPDATE: of two nodes rotating one
    // refresh token, the second waits and finds it used; a revocation
    // waits for a rotation in progress.
    STRATA_ASSIGN_OR_RETURN(
        const PgRows rows,
        txn.Query(fmt::format("SELECT {} FROM strata_oauth_tokens t "
                              "JOIN strata_oauth_grants g ON g.id = t.grant_id "
                              "JOIN strata_users u ON u.id = g.user_id "
                              "WHERE t.token_hash = $1 AND t.kind = 'refresh' FOR UPDATE OF t, g",
                              oauth_rows::kRefreshColumns),
                  {pg_accounts::HashBytes(hash)}));
    if (rows.empty()) {
      refused = oauth_rows::InvalidGrant("unknown refresh token");
      return absl::OkStatus();
    }
    STRATA_ASSIGN_OR_RETURN(const oauth_rows::StoredRefresh stored,
                            oauth_rows::RefreshFromRow(rows[0]));
    const oauth_rows::RefreshVerdict verdict =
        oauth_rows::JudgeRefresh(stored, hash, client_id, resource, now);
    if (verdict.revoke_grant) {
      STRATA_RETURN_IF_ERROR(RevokePgGrantIn(txn, stored.grant_id, now));
    }
    refused = verdict.refusal;
    if (!refused.ok()) return absl::OkStatus();
    STRATA_RETURN_IF_ERROR(txn.Exec("UPDATE strata_oauth_tokens SET used_at = $1 WHERE id = $2",
                                    {DbMillis(now), stored.id}));
    STRATA_ASSIGN_OR_RETURN(tokens, IssueTokens(txn, stored.grant_id, now));
    return absl::OkStatus();
  });
  STRATA_RETURN_IF_ERROR(Annotate(status, "refresh OAuth token"));
  if (!refused.ok()) return refused;
  return tokens;
}

absl::StatusOr<std::optional<OAuthAccess>> PostgresOAuth::ResolveAccess(
    std::string_view access_token, std::string_view resource, absl::Time now) {
  const TokenHash hash = HashToken(access_token);
  absl::StatusOr<PgRows> rows =
      db_->Query(fmt::format("SELECT {} FROM strata_oauth_tokens t "
                             "JOIN strata_oauth_grants g ON g.id = t.grant_id "
                             "JOIN strata_users u ON u.id = g.user_id "
                             "WHERE t.token_hash = $1 AND t.kind = 'access' "
                             "AND g.revoked_at IS NULL AND u.active = 1",
                             oauth_rows::kAccessColumns),
                 {pg_accounts::HashBytes(hash)});
  if (!rows.ok()) return Annotate(rows.status(), "resolve OAuth access token");
  if (rows->empty()) return std::nullopt;
  return oauth_rows::AccessFromRow((*rows)[0], hash, resource, now);
}

absl::StatusOr<std::vector<OAuthGrant>> PostgresOAuth::ListGrants(int64_t user_id) {
  absl::StatusOr<PgRows> rows = db_->Query(
      "SELECT g.id, g.client_id, c.name, g.resource, g.created_at, "
      "(SELECT MAX(t.created_at) FROM strata_oauth_tokens t WHERE t.grant_id = g.id "
      "AND t.kind = 'access') "
      "FROM strata_oauth_grants g JOIN strata_oauth_clients c USING (client_id) "
      "WHERE g.user_id = $1 AND g.revoked_at IS NULL ORDER BY g.id DESC LIMIT 1000",
      {user_id});
  if (!rows.ok()) return Annotate(rows.status(), "list OAuth grants");
  std::vector<OAuthGrant> grants;
  grants.reserve(rows->size());
  for (const postgres::PgRow& row : *rows) {
    STRATA_ASSIGN_OR_RETURN(OAuthGrant grant, oauth_rows::GrantFromRow(row));
    grants.push_back(std::move(grant));
  }
  return grants;
}

absl::Status PostgresOAuth::RevokeGrant(int64_t user_id, int64_t grant_id, absl::Time now) {
  // One conditional UPDATE: of two nodes revoking at once, one finds the
  // grant live and the other NotFound.
  absl::StatusOr<PgRows> rows = db_->Query(
      "UPDATE strata_oauth_grants SET revoked_at = $1 WHERE id = $2 AND user_id = $3 "
      "AND revoked_at IS NULL RETURNING id",
      {DbMillis(now), grant_id, user_id});
  if (!rows.ok()) return Annotate(rows.status(), "revoke OAuth grant");
  if (rows->empty()) return absl::NotFoundError(fmt::format("no grant {} of yours", grant_id));
  return absl::OkStatus();
}

absl::StatusOr<int64_t> PostgresOAuth::UnusedClients() {
  absl::StatusOr<PgRows> rows =
      db_->Query(fmt::format("SELECT COUNT(*) FROM strata_oauth_clients {}", kPgUnusedClient));
  if (!rows.ok()) return Annotate(rows.status(), "count unused OAuth clients");
  return pg_accounts::OneInt(*rows, "COUNT(*)");
}

}  // namespace strata::control
