#pragma once

// PostgresTokenStore: the TokenStore of several nodes, in a PostgreSQL
// database they share (docs/format/postgres-control.md, table `tokens`), so
// a token made on one node authenticates on every node. Tokens are kept as
// SqliteTokenStore keeps them: only the SHA-256 of the token text (bytea),
// times in Unix milliseconds, revoked tokens kept with their revocation time.
//
// Thread-safety: safe for concurrent use (one connection, statements
// serialised). Several stores, in one process or many, may share one
// database: Create() and CreateIfNone() lock the table for the check and the
// insert, so names stay unique and only one first-boot token is made.
//
// Errors: as TokenStore; the store's own errors are the PgConnection's
// (Unavailable when the server cannot be reached), prefixed with the
// server and what was being done.

#include <functional>
#include <memory>
#include <string>

#include "control/sqlite_token_store.h"
#include "control/token_store.h"
#include "postgres/pg_connection.h"

namespace strata::control {

class PostgresTokenStore final : public TokenStore {
 public:
  // Connects to `url` and applies the PostgreSQL control migrations
  // (ApplyPostgresMigrations). Errors: the connection's, or
  // FailedPrecondition for a database migrated by a newer strata.
  [[nodiscard]] static absl::StatusOr<std::unique_ptr<PostgresTokenStore>> Open(
      const std::string& url, TokenStoreOptions options = {});

  PostgresTokenStore(const PostgresTokenStore&) = delete;
  PostgresTokenStore& operator=(const PostgresTokenStore&) = delete;

  const std::string& server() const { return db_->server(); }

  absl::StatusOr<CreatedToken> Create(std::string_view name, TokenScope scope) override;
  absl::StatusOr<std::optional<CreatedToken>> CreateIfNone(std::string_view name,
                                                           TokenScope scope) override;
  absl::StatusOr<std::vector<TokenInfo>> List() override;
  absl::StatusOr<RevokedToken> Revoke(std::string_view id_or_name) override;
  absl::StatusOr<std::vector<LiveToken>> LoadLive() override;
  absl::Status RecordLastUsed(const absl::flat_hash_map<int64_t, absl::Time>& times) override;
  absl::StatusOr<int64_t> Count() override;

 private:
  PostgresTokenStore(std::unique_ptr<postgres::PgConnection> db, TokenStoreOptions options);

  // Prefixes the server and `what`, except to NotFound and AlreadyExists,
  // whose messages are complete answers.
  absl::Status Annotate(const absl::Status& status, std::string_view what) const;

  const std::unique_ptr<postgres::PgConnection> db_;
  const TokenStoreOptions options_;
};

}  // namespace strata::control
