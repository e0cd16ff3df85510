#pragma once

// PostgresOAuth: the OAuth (oauth.h) several nodes share, its rows in the
// PostgreSQL control store (docs/format/postgres-control.md, tables
// strata_oauth_clients, strata_oauth_codes, strata_oauth_grants,
// strata_oauth_tokens), whose grants reference strata_users. A client
// registered, a code issued or a grant revoked through one node holds on
// every node.
//
// Every change is one transaction. An exchange reads its code, and a
// refresh its token and grant, SELECT ... FOR UPDATE: of two nodes
// presenting one code (or one refresh token) at once, the second waits
// for the first to commit and then finds it used, so it revokes the grant
// the first made instead of making a second one. Registration locks
// strata_oauth_clients (SHARE ROW EXCLUSIVE) for its counts.
//
// Thread-safety: safe for concurrent use (one connection; PgConnection
// serializes its statements).
//
// Errors: as OAuth's; the connection's otherwise (Unavailable when the
// server cannot be reached), prefixed with the server.

#include <memory>
#include <string>

#include "control/oauth.h"
#include "postgres/pg_connection.h"

namespace strata::control {

class PostgresOAuth : public OAuth {
 public:
  // Connects to `url` and applies the control store's migrations.
  [[nodiscard]] static absl::StatusOr<std::unique_ptr<PostgresOAuth>> Open(
      const std::string& url, OAuthOptions options = {});

  absl::StatusOr<OAuthClient> RegisterClient(std::string_view name,
                                             const std::vector<std::string>& redirect_uris,
                                             absl::Time now) override;
  absl::StatusOr<OAuthClient> GetClient(std::string_view client_id) override;
  absl::StatusOr<std::string> IssueCode(const OAuthApproval& approval, absl::Time now) override;
  absl::StatusOr<OAuthTokens> ExchangeCode(std::string_view code, std::string_view client_id,
                                           std::string_view redirect_uri, std::string_view verifier,
                                           std::string_view resource, absl::Time now) override;
  absl::StatusOr<OAuthTokens> Refresh(std::string_view refresh_token, std::string_view client_id,
                                      std::string_view resource, absl::Time now) override;
  absl::StatusOr<std::optional<OAuthAccess>> ResolveAccess(std::string_view access_token,
                                                           std::string_view resource,
                                                           absl::Time now) override;
  absl::StatusOr<std::vector<OAuthGrant>> ListGrants(int64_t user_id) override;
  absl::Status RevokeGrant(int64_t user_id, int64_t grant_id, absl::Time now) override;
  absl::StatusOr<int64_t> UnusedClients() override;

 private:
  PostgresOAuth(std::unique_ptr<postgres::PgConnection> db, OAuthOptions options)
      : db_(std::move(db)), options_(options) {}
  // New access and refresh tokens in `grant_id`, inside `txn`.
  absl::StatusOr<OAuthTokens> IssueTokens(postgres::PgConnection::Transaction& txn,
                                          int64_t grant_id, absl::Time now);
  // Prefixes the server and `what`, except to the answers OAuth defines
  // (NotFound, Unauthenticated, InvalidArgument, ResourceExhausted).
  absl::Status Annotate(const absl::Status& status, std::string_view what) const;

  const std::unique_ptr<postgres::PgConnection> db_;
  const OAuthOptions options_;
};

}  // namespace strata::control
