// PostgresAccountStore (postgres_account_store.h): users and password links.

#include "control/postgres_account_store.h"

#include <utility>

#include "common/status_macros.h"
#include "control/control_db.h"
#include "control/postgres_migrations.h"
#include "control/sqlite_account_store.h"
#include "fmt/format.h"

namespace strata::control {
namespace pg_accounts {

postgres::PgBytes HashBytes(const TokenHash& hash) {
  return postgres::PgBytes{std::string(reinterpret_cast<const char*>(hash.data()), hash.size())};
}

absl::StatusOr<int64_t> OneInt(const postgres::PgRows& rows, std::string_view what) {
  if (rows.size() != 1 || rows[0].size() != 1) {
    return absl::InternalError(fmt::format("{} returned no value", what));
  }
  return ColumnInt(rows[0][0], what);
}

}  // namespace pg_accounts

namespace {

using postgres::PgConnection;
using postgres::PgRows;
using postgres::PgValue;

// Locks strata_users against other writers (other nodes included) until
// the transaction ends; readers go on.
constexpr std::string_view kLockUsers = "LOCK TABLE strata_users IN SHARE ROW EXCLUSIVE MODE";

absl::StatusOr<User> SelectPgUser(PgConnection::Transaction& txn, int64_t id) {
  STRATA_ASSIGN_OR_RETURN(const PgRows rows,
                          txn.Query(fmt::format("SELECT {} FROM strata_users u WHERE u.id = $1",
                                                pg_accounts::kUserColumns),
                                    {id}));
  if (rows.empty()) return absl::NotFoundError(fmt::format("no user has id {}", id));
  return account_rows::UserFromRow(rows[0]);
}

absl::StatusOr<User> InsertPgUser(PgConnection::Transaction& txn, const NewUser& user,
                                  absl::Time now) {
  STRATA_ASSIGN_OR_RETURN(const PgRows existing,
                          txn.Query("SELECT id FROM strata_users WHERE email = $1", {user.email}));
  if (!existing.empty()) {
    return absl::AlreadyExistsError(fmt::format("a user with email {} already exists", user.email));
  }
  const PgValue hash =
      user.password_hash.has_value() ? PgValue(*user.password_hash) : PgValue(nullptr);
  STRATA_ASSIGN_OR_RETURN(
      const PgRows rows,
      txn.Query("INSERT INTO strata_users(email, name, role, password_hash, active, created_at, "
                "updated_at) VALUES ($1, $2, $3, $4, 1, $5, $5) RETURNING id",
                {user.email, user.name, std::string(RoleName(user.role)), hash, DbMillis(now)}));
  STRATA_ASSIGN_OR_RETURN(const int64_t id, pg_accounts::OneInt(rows, "strata_users.id"));
  return SelectPgUser(txn, id);
}

// Aborted unless an active admin other than `user` exists.
absl::Status RequireAnotherPgAdmin(PgConnection::Transaction& txn, const User& user,
                                   std::string_view change) {
  STRATA_ASSIGN_OR_RETURN(
      const PgRows rows,
      txn.Query(
          "SELECT COUNT(*) FROM strata_users WHERE role = 'admin' AND active = 1 AND id <> $1",
          {user.id}));
  STRATA_ASSIGN_OR_RETURN(const int64_t others, pg_accounts::OneInt(rows, "COUNT(*)"));
  if (others > 0) return absl::OkStatus();
  return absl::AbortedError(
      fmt::format("{} is the last active admin and cannot be {}; make another user admin first",
                  user.email, change));
}

}  // namespace

absl::Status PostgresAccountStore::Annotate(const absl::Status& status,
                                            std::string_view what) const {
  if (status.ok() || absl::IsNotFound(status) || absl::IsAlreadyExists(status) ||
      absl::IsAborted(status) || absl::IsFailedPrecondition(status)) {
    return status;
  }
  return absl::Status(status.code(), fmt::format("control store {}: {}: {}", db_->server(), what,
                                                 std::string(status.message())));
}

absl::StatusOr<std::unique_ptr<PostgresAccountStore>> PostgresAccountStore::Open(
    const std::string& url) {
  STRATA_ASSIGN_OR_RETURN(std::unique_ptr<PgConnection> db, PgConnection::Connect(url));
  STRATA_RETURN_IF_ERROR(ApplyPostgresMigrations(*db));
  return std::unique_ptr<PostgresAccountStore>(new PostgresAccountStore(std::move(db)));
}

absl::StatusOr<int64_t> PostgresAccountStore::CountUsers() {
  absl::StatusOr<PgRows> rows = db_->Query("SELECT COUNT(*) FROM strata_users");
  if (!rows.ok()) return Annotate(rows.status(), "count users");
  return pg_accounts::OneInt(*rows, "COUNT(*)");
}

absl::StatusOr<User> PostgresAccountStore::CreateUser(const NewUser& user, absl::Time now) {
  User created;
  STRATA_RETURN_IF_ERROR(
      Annotate(db_->InTransaction([&](PgConnection::Transaction& txn) -> absl::Status {
        STRATA_RETURN_IF_ERROR(txn.Exec(kLockUsers));
        STRATA_ASSIGN_OR_RETURN(created, InsertPgUser(txn, user, now));
        return absl::OkStatus();
      }),
               "create user"));
  return created;
}

absl::StatusOr<User> PostgresAccountStore::CreateFirstUser(const NewUser& user, absl::Time now) {
  User created;
  STRATA_RETURN_IF_ERROR(
      Annotate(db_->InTransaction([&](PgConnection::Transaction& txn) -> absl::Status {
        STRATA_RETURN_IF_ERROR(txn.Exec(kLockUsers));
        STRATA_ASSIGN_OR_RETURN(const PgRows rows, txn.Query("SELECT 1 FROM strata_users LIMIT 1"));
        if (!rows.empty()) return absl::FailedPreconditionError("a user already exists");
        STRATA_ASSIGN_OR_RETURN(created, InsertPgUser(txn, user, now));
        return absl::OkStatus();
      }),
               "create the first user"));
  return created;
}

absl::StatusOr<std::optional<UserRecord>> PostgresAccountStore::FindUserByEmail(
    const std::string& email) {
  absl::StatusOr<PgRows> rows =
      db_->Query(fmt::format("SELECT {}, u.password_hash FROM strata_users u WHERE u.email = $1",
                             pg_accounts::kUserColumns),
                 {email});
  if (!rows.ok()) return Annotate(rows.status(), "find user");
  if (rows->empty()) return std::nullopt;
  UserRecord record;
  STRATA_ASSIGN_OR_RETURN(record.user, account_rows::UserFromRow((*rows)[0]));
  record.password_hash = (*rows)[0][account_rows::kUserColumnCount];
  return record;
}

absl::StatusOr<User> PostgresAccountStore::GetUser(int64_t id) {
  absl::StatusOr<PgRows> rows = db_->Query(
      fmt::format("SELECT {} FROM strata_users u WHERE u.id = $1", pg_accounts::kUserColumns),
      {id});
  if (!rows.ok()) return Annotate(rows.status(), "get user");
  if (rows->empty()) return absl::NotFoundError(fmt::format("no user has id {}", id));
  return account_rows::UserFromRow((*rows)[0]);
}

absl::StatusOr<std::vector<User>> PostgresAccountStore::ListUsers() {
  absl::StatusOr<PgRows> rows = db_->Query(
      fmt::format("SELECT {} FROM strata_users u ORDER BY u.id", pg_accounts::kUserColumns));
  if (!rows.ok()) return Annotate(rows.status(), "list users");
  std::vector<User> users;
  users.reserve(rows->size());
  for (const postgres::PgRow& row : *rows) {
    STRATA_ASSIGN_OR_RETURN(User user, account_rows::UserFromRow(row));
    users.push_back(std::move(user));
  }
  return users;
}

absl::StatusOr<User> PostgresAccountStore::ChangeUser(int64_t id, const UserChange& change,
                                                      absl::Time now) {
  User changed;
  absl::Status status = db_->InTransaction([&](PgConnection::Transaction& txn) -> absl::Status {
    STRATA_RETURN_IF_ERROR(txn.Exec(kLockUsers));
    STRATA_ASSIGN_OR_RETURN(const User user, SelectPgUser(txn, id));
    const bool loses_admin = user.active && user.role == Role::kAdmin &&
                             ((change.role.has_value() && *change.role != Role::kAdmin) ||
                              (change.active.has_value() && !*change.active));
    if (loses_admin) {
      STRATA_RETURN_IF_ERROR(RequireAnotherPgAdmin(
          txn, user,
          change.active.has_value() && !*change.active ? "deactivated" : "given another role"));
    }
    const bool role_changes = change.role.has_value() && *change.role != user.role;
    const bool active_changes = change.active.has_value() && *change.active != user.active;
    STRATA_RETURN_IF_ERROR(txn.Exec(
        "UPDATE strata_users SET name = $1, role = $2, active = $3, updated_at = $4 WHERE id = $5",
        {change.name.value_or(user.name), std::string(RoleName(change.role.value_or(user.role))),
         int64_t{change.active.value_or(user.active) ? 1 : 0}, DbMillis(now), id}));
    if (role_changes || active_changes) {
      STRATA_RETURN_IF_ERROR(txn.Exec("DELETE FROM strata_sessions WHERE user_id = $1", {id}));
    }
    STRATA_ASSIGN_OR_RETURN(changed, SelectPgUser(txn, id));
    return absl::OkStatus();
  });
  STRATA_RETURN_IF_ERROR(Annotate(status, "change user"));
  return changed;
}

absl::Status PostgresAccountStore::DeleteUser(int64_t id) {
  return Annotate(db_->InTransaction([&](PgConnection::Transaction& txn) -> absl::Status {
    STRATA_RETURN_IF_ERROR(txn.Exec(kLockUsers));
    STRATA_ASSIGN_OR_RETURN(const User user, SelectPgUser(txn, id));
    if (user.active && user.role == Role::kAdmin) {
      STRATA_RETURN_IF_ERROR(RequireAnotherPgAdmin(txn, user, "deleted"));
    }
    // Sessions, links and saved queries go with it (ON DELETE CASCADE).
    return txn.Exec("DELETE FROM strata_users WHERE id = $1", {id});
  }),
                  "delete user");
}

absl::Status PostgresAccountStore::SetPasswordHash(int64_t id, const std::string& hash,
                                                   bool end_sessions, absl::Time now) {
  return Annotate(db_->InTransaction([&](PgConnection::Transaction& txn) -> absl::Status {
    STRATA_ASSIGN_OR_RETURN(
        const PgRows updated,
        txn.Query("UPDATE strata_users SET password_hash = $1, updated_at = $2 WHERE id = $3 "
                  "RETURNING id",
                  {hash, DbMillis(now), id}));
    if (updated.empty()) return absl::NotFoundError(fmt::format("no user has id {}", id));
    if (!end_sessions) return absl::OkStatus();
    return txn.Exec("DELETE FROM strata_sessions WHERE user_id = $1", {id});
  }),
                  "set password");
}

absl::Status PostgresAccountStore::RecordSignIn(int64_t id, absl::Time now) {
  return Annotate(
      db_->Exec("UPDATE strata_users SET last_sign_in_at = $1 WHERE id = $2", {DbMillis(now), id}),
      "record sign-in");
}

absl::Status PostgresAccountStore::CreatePasswordLink(int64_t user_id, const TokenHash& hash,
                                                      absl::Time now, absl::Time expires_at) {
  return Annotate(
      db_->Exec("INSERT INTO strata_password_links(user_id, token_hash, created_at, expires_at) "
                "VALUES ($1, $2, $3, $4)",
                {user_id, pg_accounts::HashBytes(hash), DbMillis(now), DbMillis(expires_at)}),
      "create password link");
}

absl::StatusOr<std::optional<int64_t>> PostgresAccountStore::UsePasswordLink(const TokenHash& hash,
                                                                             absl::Time now) {
  // One conditional UPDATE: of two nodes using one link at once, one
  // updates the row and the other finds it used.
  absl::StatusOr<PgRows> rows = db_->Query(
      "UPDATE strata_password_links SET used_at = $2 WHERE token_hash = $1 AND used_at IS NULL "
      "AND expires_at > $2 RETURNING user_id",
      {pg_accounts::HashBytes(hash), DbMillis(now)});
  if (!rows.ok()) return Annotate(rows.status(), "use password link");
  if (rows->empty()) return std::nullopt;
  return pg_accounts::OneInt(*rows, "strata_password_links.user_id");
}

}  // namespace strata::control
