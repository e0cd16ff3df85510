#pragma once

// SqliteTokenStore: the TokenStore of a single node, in the control
// database <data>/control/strata.sqlite (docs/format/control-db.md,
// "tokens").
//
// Several processes may hold one on a data directory at once: the server
// (through its TokenAuthenticator) and `strata token` from a shell. Each
// write is one SQLite transaction.
//
// Thread-safety: safe for concurrent use (SqliteDb serializes statements).
// Errors: as TokenStore; Open() as below; every database error names the
// file.

#include <functional>
#include <memory>
#include <string>

#include "control/sqlite_db.h"
#include "control/token_store.h"

namespace strata::control {

struct TokenStoreOptions {
  // Stamps created_at and revoked_at; tests inject their own.
  std::function<absl::Time()> clock = [] { return absl::Now(); };
};

class SqliteTokenStore final : public TokenStore {
 public:
  // Opens the control database at `db_path` (a data directory's
  // control/strata.sqlite: storage::DataDirPaths::ControlDb()), creating
  // its folder and the database if needed, and applies the control
  // migrations. It does not check or initialise the data directory itself
  // (the caller has done that: boot, or `strata token`). Errors:
  // FailedPrecondition for a database newer than this binary (runbook
  // #control-database-newer); otherwise the SqliteDb or filesystem error,
  // naming the file and the runbook section
  // #control-database-cannot-be-opened.
  [[nodiscard]] static absl::StatusOr<std::unique_ptr<SqliteTokenStore>> Open(
      const std::string& db_path, TokenStoreOptions options = {});

  SqliteTokenStore(const SqliteTokenStore&) = delete;
  SqliteTokenStore& operator=(const SqliteTokenStore&) = delete;

  const std::string& path() const { return db_->path(); }

  absl::StatusOr<CreatedToken> Create(std::string_view name, TokenScope scope) override;
  absl::StatusOr<std::optional<CreatedToken>> CreateIfNone(std::string_view name,
                                                           TokenScope scope) override;
  absl::StatusOr<std::vector<TokenInfo>> List() override;
  absl::StatusOr<RevokedToken> Revoke(std::string_view id_or_name) override;
  absl::StatusOr<std::vector<LiveToken>> LoadLive() override;
  absl::Status RecordLastUsed(const absl::flat_hash_map<int64_t, absl::Time>& times) override;
  absl::StatusOr<int64_t> Count() override;

 private:
  SqliteTokenStore(std::unique_ptr<SqliteDb> db, TokenStoreOptions options);

  // Prefixes the database path and `what`, except to NotFound and
  // AlreadyExists, whose messages are complete answers.
  absl::Status Annotate(const absl::Status& status, std::string_view what) const;

  // Constant after construction.
  const std::unique_ptr<SqliteDb> db_;
  const TokenStoreOptions options_;
};

}  // namespace strata::control
