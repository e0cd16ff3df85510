#pragma once

// SqliteAccountStore: the AccountStore of a single node, in the control
// database <data>/control/strata.sqlite (docs/format/control-db.md, tables
// users, sessions, password_links and audit_events). Users and links are in
// sqlite_account_store.cc, sessions in sqlite_sessions.cc, saved queries in
// sqlite_saved_queries.cc, the audit log in sqlite_audit.cc.
//
// Thread-safety: safe for concurrent use (SqliteDb serializes statements).
// Errors: as AccountStore; every database error names the file.

#include <memory>
#include <string>

#include "control/account_store.h"
#include "control/sqlite_db.h"

namespace strata::control {

class SqliteAccountStore final : public AccountStore {
 public:
  // Opens the control database at `db_path` as SqliteTokenStore::Open() does
  // (migrations applied, stamped `now`).
  [[nodiscard]] static absl::StatusOr<std::unique_ptr<SqliteAccountStore>> Open(
      const std::string& db_path, absl::Time now);

  absl::StatusOr<int64_t> CountUsers() override;
  absl::StatusOr<User> CreateUser(const NewUser& user, absl::Time now) override;
  absl::StatusOr<User> CreateFirstUser(const NewUser& user, absl::Time now) override;
  absl::StatusOr<std::optional<UserRecord>> FindUserByEmail(const std::string& email) override;
  absl::StatusOr<User> GetUser(int64_t id) override;
  absl::StatusOr<std::vector<User>> ListUsers() override;
  absl::StatusOr<User> ChangeUser(int64_t id, const UserChange& change, absl::Time now) override;
  absl::Status DeleteUser(int64_t id) override;
  absl::Status SetPasswordHash(int64_t id, const std::string& hash, bool end_sessions,
                               absl::Time now) override;
  absl::Status RecordSignIn(int64_t id, absl::Time now) override;

  absl::StatusOr<int64_t> CreateSession(int64_t user_id, const TokenHash& hash, absl::Time now,
                                        const std::string& address,
                                        const std::string& user_agent) override;
  absl::StatusOr<std::optional<StoredSession>> FindSession(const TokenHash& hash) override;
  absl::Status TouchSession(int64_t id, absl::Time now) override;
  absl::Status DeleteSession(int64_t id) override;
  absl::StatusOr<int64_t> DeleteExpiredSessions(absl::Time idle_before,
                                                absl::Time created_before) override;

  absl::Status CreatePasswordLink(int64_t user_id, const TokenHash& hash, absl::Time now,
                                  absl::Time expires_at) override;
  absl::StatusOr<std::optional<int64_t>> UsePasswordLink(const TokenHash& hash,
                                                         absl::Time now) override;

  absl::StatusOr<SavedQuery> CreateSavedQuery(const SavedQuery& query, absl::Time now) override;
  absl::StatusOr<SavedQuery> GetSavedQuery(int64_t id) override;
  absl::StatusOr<std::vector<SavedQuery>> ListSavedQueries(int64_t user_id) override;
  absl::StatusOr<int64_t> CountSavedQueries(int64_t owner_id) override;
  absl::StatusOr<SavedQuery> ChangeSavedQuery(int64_t id, const SavedQueryChange& change,
                                              absl::Time now) override;
  absl::Status DeleteSavedQuery(int64_t id) override;

  absl::Status AppendAudit(const AuditEvent& event) override;
  absl::StatusOr<std::vector<AuditEvent>> ListAudit(std::optional<int64_t> before_id,
                                                    size_t limit) override;
  absl::StatusOr<int64_t> PruneAudit(absl::Time before) override;

  // For tests: the database.
  SqliteDb& db() { return *db_; }

 private:
  explicit SqliteAccountStore(std::unique_ptr<SqliteDb> db) : db_(std::move(db)) {}

  // Prefixes the database path and `what`, except to the codes whose
  // messages are complete answers (NotFound, AlreadyExists, Aborted,
  // FailedPrecondition).
  absl::Status Annotate(const absl::Status& status, std::string_view what) const;

  const std::unique_ptr<SqliteDb> db_;
};

// Helpers shared by the store's files.
namespace account_rows {
// The columns UserFromRow() reads, in its order.
inline constexpr std::string_view kUserColumns =
    "users.id, users.email, users.name, users.role, users.active, "
    "users.password_hash IS NOT NULL, users.created_at, users.last_sign_in_at";
inline constexpr size_t kUserColumnCount = 8;
// Reads kUserColumnCount columns of `row` from `first`.
absl::StatusOr<User> UserFromRow(const SqlRow& row, size_t first = 0);
}  // namespace account_rows

}  // namespace strata::control
