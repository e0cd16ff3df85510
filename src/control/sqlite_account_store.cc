#include "control/sqlite_account_store.h"

#include <utility>

#include "common/status_macros.h"
#include "control/control_db.h"
#include "fmt/format.h"

namespace strata::control {
namespace account_rows {

absl::StatusOr<User> UserFromRow(const SqlRow& row, size_t first) {
  if (row.size() < first + kUserColumnCount) {
    return absl::InternalError("users: unexpected column count");
  }
  const auto at = [&](size_t i) -> const std::optional<std::string>& { return row[first + i]; };
  User user;
  STRATA_ASSIGN_OR_RETURN(user.id, ColumnInt(at(0), "users.id"));
  user.email = at(1).value_or("");
  user.name = at(2).value_or("");
  absl::StatusOr<Role> role = ParseRole(at(3).value_or(""));
  if (!role.ok()) {
    return absl::DataLossError(
        fmt::format("users.role of user {}: {}", user.id, at(3).value_or("")));
  }
  user.role = *role;
  STRATA_ASSIGN_OR_RETURN(const int64_t active, ColumnInt(at(4), "users.active"));
  user.active = active != 0;
  STRATA_ASSIGN_OR_RETURN(const int64_t has_password, ColumnInt(at(5), "users.password_hash"));
  user.has_password = has_password != 0;
  STRATA_ASSIGN_OR_RETURN(user.created_at, ColumnTime(at(6), "users.created_at"));
  STRATA_ASSIGN_OR_RETURN(user.last_sign_in_at, ColumnOptionalTime(at(7), "users.last_sign_in_at"));
  return user;
}

}  // namespace account_rows

namespace {

using account_rows::kUserColumns;
using account_rows::UserFromRow;

absl::StatusOr<User> SelectUser(SqliteDb::Transaction& txn, int64_t id) {
  STRATA_ASSIGN_OR_RETURN(
      const SqlRows rows,
      txn.Query(fmt::format("SELECT {} FROM users WHERE id = ?", kUserColumns), {id}));
  if (rows.empty()) return absl::NotFoundError(fmt::format("no user has id {}", id));
  return UserFromRow(rows[0]);
}

absl::StatusOr<User> InsertUser(SqliteDb::Transaction& txn, const NewUser& user, absl::Time now) {
  STRATA_ASSIGN_OR_RETURN(const SqlRows existing,
                          txn.Query("SELECT id FROM users WHERE email = ?", {user.email}));
  if (!existing.empty()) {
    return absl::AlreadyExistsError(fmt::format("a user with email {} already exists", user.email));
  }
  const SqlValue hash =
      user.password_hash.has_value() ? SqlValue(*user.password_hash) : SqlValue(nullptr);
  STRATA_ASSIGN_OR_RETURN(
      const SqlRows rows,
      txn.Query("INSERT INTO users(email, name, role, password_hash, active, created_at, "
                "updated_at) VALUES (?, ?, ?, ?, 1, ?, ?) RETURNING id",
                {user.email, user.name, std::string(RoleName(user.role)), hash, DbMillis(now),
                 DbMillis(now)}));
  if (rows.size() != 1 || rows[0].size() != 1) {
    return absl::InternalError("INSERT ... RETURNING id returned no id");
  }
  STRATA_ASSIGN_OR_RETURN(const int64_t id, ColumnInt(rows[0][0], "users.id"));
  return SelectUser(txn, id);
}

// Aborted unless an active admin other than `id` exists.
absl::Status RequireAnotherAdmin(SqliteDb::Transaction& txn, const User& user,
                                 std::string_view change) {
  STRATA_ASSIGN_OR_RETURN(
      const SqlRows rows,
      txn.Query("SELECT COUNT(*) FROM users WHERE role = 'admin' AND active = 1 AND id != ?",
                {user.id}));
  STRATA_ASSIGN_OR_RETURN(const int64_t others,
                          ColumnInt(rows.empty() ? std::nullopt : rows[0][0], "COUNT(*)"));
  if (others > 0) return absl::OkStatus();
  return absl::AbortedError(
      fmt::format("{} is the last active admin and cannot be {}; make another user admin first",
                  user.email, change));
}

bool Keeps(absl::StatusCode code) {
  return code == absl::StatusCode::kNotFound || code == absl::StatusCode::kAlreadyExists ||
         code == absl::StatusCode::kAborted || code == absl::StatusCode::kFailedPrecondition;
}

}  // namespace

absl::Status SqliteAccountStore::Annotate(const absl::Status& status, std::string_view what) const {
  if (status.ok() || Keeps(status.code())) return status;
  return absl::Status(status.code(), fmt::format("control database {}: {}: {}", db_->path(), what,
                                                 std::string(status.message())));
}

absl::StatusOr<std::unique_ptr<SqliteAccountStore>> SqliteAccountStore::Open(
    const std::string& db_path, absl::Time now) {
  STRATA_ASSIGN_OR_RETURN(std::unique_ptr<SqliteDb> db, OpenControlDb(db_path, now));
  return std::unique_ptr<SqliteAccountStore>(new SqliteAccountStore(std::move(db)));
}

absl::StatusOr<int64_t> SqliteAccountStore::CountUsers() {
  absl::StatusOr<SqlRows> rows = db_->Query("SELECT COUNT(*) FROM users");
  if (!rows.ok()) return Annotate(rows.status(), "count users");
  return ColumnInt(rows->empty() ? std::nullopt : (*rows)[0][0], "COUNT(*)");
}

absl::StatusOr<User> SqliteAccountStore::CreateUser(const NewUser& user, absl::Time now) {
  User created;
  STRATA_RETURN_IF_ERROR(
      Annotate(db_->InTransaction([&](SqliteDb::Transaction& txn) -> absl::Status {
        STRATA_ASSIGN_OR_RETURN(created, InsertUser(txn, user, now));
        return absl::OkStatus();
      }),
               "create user"));
  return created;
}

absl::StatusOr<User> SqliteAccountStore::CreateFirstUser(const NewUser& user, absl::Time now) {
  User created;
  STRATA_RETURN_IF_ERROR(
      Annotate(db_->InTransaction([&](SqliteDb::Transaction& txn) -> absl::Status {
        STRATA_ASSIGN_OR_RETURN(const SqlRows rows, txn.Query("SELECT 1 FROM users LIMIT 1"));
        if (!rows.empty()) return absl::FailedPreconditionError("a user already exists");
        STRATA_ASSIGN_OR_RETURN(created, InsertUser(txn, user, now));
        return absl::OkStatus();
      }),
               "create the first user"));
  return created;
}

absl::StatusOr<std::optional<UserRecord>> SqliteAccountStore::FindUserByEmail(
    const std::string& email) {
  absl::StatusOr<SqlRows> rows = db_->Query(
      fmt::format("SELECT {}, password_hash FROM users WHERE email = ?", kUserColumns), {email});
  if (!rows.ok()) return Annotate(rows.status(), "find user");
  if (rows->empty()) return std::nullopt;
  UserRecord record;
  STRATA_ASSIGN_OR_RETURN(record.user, UserFromRow((*rows)[0]));
  record.password_hash = (*rows)[0][account_rows::kUserColumnCount];
  return record;
}

absl::StatusOr<User> SqliteAccountStore::GetUser(int64_t id) {
  absl::StatusOr<SqlRows> rows =
      db_->Query(fmt::format("SELECT {} FROM users WHERE id = ?", kUserColumns), {id});
  if (!rows.ok()) return Annotate(rows.status(), "get user");
  if (rows->empty()) return absl::NotFoundError(fmt::format("no user has id {}", id));
  return UserFromRow((*rows)[0]);
}

absl::StatusOr<std::vector<User>> SqliteAccountStore::ListUsers() {
  absl::StatusOr<SqlRows> rows =
      db_->Query(fmt::format("SELECT {} FROM users ORDER BY id", kUserColumns));
  if (!rows.ok()) return Annotate(rows.status(), "list users");
  std::vector<User> users;
  users.reserve(rows->size());
  for (const SqlRow& row : *rows) {
    STRATA_ASSIGN_OR_RETURN(User user, UserFromRow(row));
    users.push_back(std::move(user));
  }
  return users;
}

absl::StatusOr<User> SqliteAccountStore::ChangeUser(int64_t id, const UserChange& change,
                                                    absl::Time now) {
  User changed;
  absl::Status status = db_->InTransaction([&](SqliteDb::Transaction& txn) -> absl::Status {
    STRATA_ASSIGN_OR_RETURN(const User user, SelectUser(txn, id));
    const bool loses_admin = user.active && user.role == Role::kAdmin &&
                             ((change.role.has_value() && *change.role != Role::kAdmin) ||
                              (change.active.has_value() && !*change.active));
    if (loses_admin) {
      STRATA_RETURN_IF_ERROR(RequireAnotherAdmin(
          txn, user,
          change.active.has_value() && !*change.active ? "deactivated" : "given another role"));
    }
    if (change.name.has_value()) {
      STRATA_RETURN_IF_ERROR(txn.Exec("UPDATE users SET name = ?, updated_at = ? WHERE id = ?",
                                      {*change.name, DbMillis(now), id}));
    }
    const bool role_changes = change.role.has_value() && *change.role != user.role;
    const bool active_changes = change.active.has_value() && *change.active != user.active;
    if (role_changes) {
      STRATA_RETURN_IF_ERROR(txn.Exec("UPDATE users SET role = ?, updated_at = ? WHERE id = ?",
                                      {std::string(RoleName(*change.role)), DbMillis(now), id}));
    }
    if (active_changes) {
      STRATA_RETURN_IF_ERROR(txn.Exec("UPDATE users SET active = ?, updated_at = ? WHERE id = ?",
                                      {int64_t{*change.active ? 1 : 0}, DbMillis(now), id}));
    }
    if (role_changes || active_changes) {
      STRATA_RETURN_IF_ERROR(txn.Exec("DELETE FROM sessions WHERE user_id = ?", {id}));
    }
    STRATA_ASSIGN_OR_RETURN(changed, SelectUser(txn, id));
    return absl::OkStatus();
  });
  STRATA_RETURN_IF_ERROR(Annotate(status, "change user"));
  return changed;
}

absl::Status SqliteAccountStore::DeleteUser(int64_t id) {
  return Annotate(db_->InTransaction([&](SqliteDb::Transaction& txn) -> absl::Status {
    STRATA_ASSIGN_OR_RETURN(const User user, SelectUser(txn, id));
    if (user.active && user.role == Role::kAdmin) {
      STRATA_RETURN_IF_ERROR(RequireAnotherAdmin(txn, user, "deleted"));
    }
    // Sessions, links and saved queries go with it (ON DELETE CASCADE).
    return txn.Exec("DELETE FROM users WHERE id = ?", {id});
  }),
                  "delete user");
}

absl::Status SqliteAccountStore::SetPasswordHash(int64_t id, const std::string& hash,
                                                 bool end_sessions, absl::Time now) {
  return Annotate(db_->InTransaction([&](SqliteDb::Transaction& txn) -> absl::Status {
    STRATA_RETURN_IF_ERROR(SelectUser(txn, id).status());
    STRATA_RETURN_IF_ERROR(
        txn.Exec("UPDATE users SET password_hash = ?, updated_at = ? WHERE id = ?",
                 {hash, DbMillis(now), id}));
    if (!end_sessions) return absl::OkStatus();
    return txn.Exec("DELETE FROM sessions WHERE user_id = ?", {id});
  }),
                  "set password");
}

absl::Status SqliteAccountStore::RecordSignIn(int64_t id, absl::Time now) {
  return Annotate(
      db_->Exec("UPDATE users SET last_sign_in_at = ? WHERE id = ?", {DbMillis(now), id}),
      "record sign-in");
}

absl::Status SqliteAccountStore::CreatePasswordLink(int64_t user_id, const TokenHash& hash,
                                                    absl::Time now, absl::Time expires_at) {
  return Annotate(
      db_->Exec("INSERT INTO password_links(user_id, token_hash, created_at, expires_at) "
                "VALUES (?, ?, ?, ?)",
                {user_id, HashBlob(hash), DbMillis(now), DbMillis(expires_at)}),
      "create password link");
}

absl::StatusOr<std::optional<int64_t>> SqliteAccountStore::UsePasswordLink(const TokenHash& hash,
                                                                           absl::Time now) {
  std::optional<int64_t> user_id;
  absl::Status status = db_->InTransaction([&](SqliteDb::Transaction& txn) -> absl::Status {
    STRATA_ASSIGN_OR_RETURN(
        const SqlRows rows,
        txn.Query("SELECT id, user_id FROM password_links WHERE token_hash = ? AND used_at IS "
                  "NULL AND expires_at > ?",
                  {HashBlob(hash), DbMillis(now)}));
    if (rows.empty()) return absl::OkStatus();
    STRATA_ASSIGN_OR_RETURN(const int64_t link_id, ColumnInt(rows[0][0], "password_links.id"));
    STRATA_ASSIGN_OR_RETURN(user_id, ColumnInt(rows[0][1], "password_links.user_id"));
    return txn.Exec("UPDATE password_links SET used_at = ? WHERE id = ?", {DbMillis(now), link_id});
  });
  STRATA_RETURN_IF_ERROR(Annotate(status, "use password link"));
  return user_id;
}

}  // namespace strata::control
