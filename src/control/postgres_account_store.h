#pragma once

// PostgresAccountStore: the AccountStore of several nodes, in the PostgreSQL
// database they share (docs/format/postgres-control.md, tables
// strata_users, strata_sessions, strata_password_links,
// strata_audit_events, strata_saved_queries), so a user made on one node
// signs in on every node and a session started on one is valid on all.
// Rows are kept as SqliteAccountStore keeps them (times in Unix
// milliseconds, token hashes as 32-byte bytea, the same role, kind and
// outcome names). Users and links are in postgres_account_store.cc,
// sessions in postgres_sessions.cc, saved queries in
// postgres_saved_queries.cc, the audit log in postgres_audit.cc.
//
// The two rules account_store.h puts in a transaction hold across nodes:
// every change that could take away the last active admin, and the first
// user's creation, lock strata_users (SHARE ROW EXCLUSIVE) for their
// check and write, so two nodes demoting the last two admins at once
// cannot both succeed and only one first user is made; a password link is
// used by one conditional UPDATE, so it works once across nodes.
//
// Thread-safety: safe for concurrent use (one connection, statements
// serialised). Errors: as AccountStore; the store's own are the
// PgConnection's (Unavailable when the server cannot be reached), prefixed
// with the server and what was being done.

#include <memory>
#include <string>

#include "control/account_store.h"
#include "postgres/pg_connection.h"

namespace strata::control {

class PostgresAccountStore final : public AccountStore {
 public:
  // Connects to `url` and applies the control store's migrations
  // (ApplyPostgresMigrations).
  [[nodiscard]] static absl::StatusOr<std::unique_ptr<PostgresAccountStore>> Open(
      const std::string& url);

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

 private:
  explicit PostgresAccountStore(std::unique_ptr<postgres::PgConnection> db) : db_(std::move(db)) {}
  // Prefixes the server and `what`, except to the codes whose messages are
  // complete answers (NotFound, AlreadyExists, Aborted, FailedPrecondition).
  absl::Status Annotate(const absl::Status& status, std::string_view what) const;

  const std::unique_ptr<postgres::PgConnection> db_;
};

// Helpers shared by the store's files.
namespace pg_accounts {
// The columns account_rows::UserFromRow() reads, in its order, of
// strata_users aliased `u`.
inline constexpr std::string_view kUserColumns =
    "u.id, u.email, u.name, u.role, u.active, (u.password_hash IS NOT NULL)::INTEGER, "
    "u.created_at, u.last_sign_in_at";
postgres::PgBytes HashBytes(const TokenHash& hash);
// The single integer of a one-row, one-column answer (COUNT(*), RETURNING id).
absl::StatusOr<int64_t> OneInt(const postgres::PgRows& rows, std::string_view what);
}  // namespace pg_accounts

}  // namespace strata::control
