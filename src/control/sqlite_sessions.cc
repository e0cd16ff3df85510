// SqliteAccountStore: browser sessions (docs/format/control-db.md,
// "sessions").

#include "common/status_macros.h"
#include "control/control_db.h"
#include "control/sqlite_account_store.h"
#include "fmt/format.h"

namespace strata::control {

absl::StatusOr<int64_t> SqliteAccountStore::CreateSession(int64_t user_id, const TokenHash& hash,
                                                          absl::Time now,
                                                          const std::string& address,
                                                          const std::string& user_agent) {
  absl::StatusOr<SqlRows> rows = db_->Query(
      "INSERT INTO sessions(user_id, token_hash, created_at, last_seen_at, address, "
      "user_agent) VALUES (?, ?, ?, ?, ?, ?) RETURNING id",
      {user_id, HashBlob(hash), DbMillis(now), DbMillis(now), address, user_agent});
  if (!rows.ok()) return Annotate(rows.status(), "create session");
  if (rows->size() != 1) return absl::InternalError("INSERT ... RETURNING id returned no id");
  return ColumnInt((*rows)[0][0], "sessions.id");
}

absl::StatusOr<std::optional<StoredSession>> SqliteAccountStore::FindSession(
    const TokenHash& hash) {
  absl::StatusOr<SqlRows> rows =
      db_->Query(fmt::format("SELECT sessions.id, sessions.created_at, sessions.last_seen_at, {} "
                             "FROM sessions JOIN users ON users.id = sessions.user_id "
                             "WHERE sessions.token_hash = ?",
                             account_rows::kUserColumns),
                 {HashBlob(hash)});
  if (!rows.ok()) return Annotate(rows.status(), "find session");
  if (rows->empty()) return std::nullopt;
  const SqlRow& row = (*rows)[0];
  StoredSession session;
  STRATA_ASSIGN_OR_RETURN(session.id, ColumnInt(row[0], "sessions.id"));
  STRATA_ASSIGN_OR_RETURN(session.created_at, ColumnTime(row[1], "sessions.created_at"));
  STRATA_ASSIGN_OR_RETURN(session.last_seen_at, ColumnTime(row[2], "sessions.last_seen_at"));
  STRATA_ASSIGN_OR_RETURN(session.user, account_rows::UserFromRow(row, 3));
  return session;
}

absl::Status SqliteAccountStore::TouchSession(int64_t id, absl::Time now) {
  return Annotate(db_->Exec("UPDATE sessions SET last_seen_at = MAX(last_seen_at, ?) WHERE id = ?",
                            {DbMillis(now), id}),
                  "touch session");
}

absl::Status SqliteAccountStore::DeleteSession(int64_t id) {
  return Annotate(db_->Exec("DELETE FROM sessions WHERE id = ?", {id}), "delete session");
}

absl::StatusOr<int64_t> SqliteAccountStore::DeleteExpiredSessions(absl::Time idle_before,
                                                                  absl::Time created_before) {
  absl::StatusOr<SqlRows> rows =
      db_->Query("DELETE FROM sessions WHERE last_seen_at < ? OR created_at < ? RETURNING id",
                 {DbMillis(idle_before), DbMillis(created_before)});
  if (!rows.ok()) return Annotate(rows.status(), "delete expired sessions");
  return static_cast<int64_t>(rows->size());
}

}  // namespace strata::control
