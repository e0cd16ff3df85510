#pragma once

// SqliteOAuth: a single node's OAuth (oauth.h), its rows in the control
// database (docs/format/control-db.md, tables oauth_clients, oauth_codes,
// oauth_grants, oauth_tokens), whose users table its grants join.
//
// Thread-safety: safe for concurrent use (SqliteDb serializes statements;
// each exchange is one transaction).
//
// Errors: as OAuth's; the database's otherwise.

#include <memory>
#include <string>

#include "control/oauth.h"
#include "control/sqlite_db.h"

namespace strata::control {

class SqliteOAuth : public OAuth {
 public:
  // Opens the control database at `db_path` (migrations applied).
  [[nodiscard]] static absl::StatusOr<std::unique_ptr<SqliteOAuth>> Open(const std::string& db_path,
                                                                         absl::Time now,
                                                                         OAuthOptions options = {});

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
  SqliteOAuth(std::unique_ptr<SqliteDb> db, OAuthOptions options)
      : db_(std::move(db)), options_(options) {}
  // New access and refresh tokens in `grant_id`, inside `txn`.
  absl::StatusOr<OAuthTokens> IssueTokens(SqliteDb::Transaction& txn, int64_t grant_id,
                                          absl::Time now);

  const std::unique_ptr<SqliteDb> db_;
  const OAuthOptions options_;
};

}  // namespace strata::control
