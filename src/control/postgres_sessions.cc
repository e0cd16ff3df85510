// PostgresAccountStore (postgres_account_store.h): browser sessions.

#include "common/status_macros.h"
#include "control/control_db.h"
#include "control/postgres_account_store.h"
#include "control/sqlite_account_store.h"
#include "fmt/format.h"

namespace strata::control {

absl::StatusOr<int64_t> PostgresAccountStore::CreateSession(int64_t user_id, const TokenHash& hash,
                                                            absl::Time now,
                                                            const std::string& address,
                                                            const std::string& user_agent) {
  absl::StatusOr<postgres::PgRows> rows = db_->Query(
      "INSERT INTO strata_sessions(user_id, token_hash, created_at, last_seen_at, address, "
      "user_agent) VALUES ($1, $2, $3, $3, $4, $5) RETURNING id",
      {user_id, pg_accounts::HashBytes(hash), DbMillis(now), address, user_agent});
  if (!rows.ok()) return Annotate(rows.status(), "create session");
  return pg_accounts::OneInt(*rows, "strata_sessions.id");
}

absl::StatusOr<std::optional<StoredSession>> PostgresAccountStore::FindSession(
    const TokenHash& hash) {
  absl::StatusOr<postgres::PgRows> rows =
      db_->Query(fmt::format("SELECT s.id, s.created_at, s.last_seen_at, {} "
                             "FROM strata_sessions s JOIN strata_users u ON u.id = s.user_id "
                             "WHERE s.token_hash = $1",
                             pg_accounts::kUserColumns),
                 {pg_accounts::HashBytes(hash)});
  if (!rows.ok()) return Annotate(rows.status(), "find session");
  if (rows->empty()) return std::nullopt;
  const postgres::PgRow& row = (*rows)[0];
  StoredSession session;
  STRATA_ASSIGN_OR_RETURN(session.id, ColumnInt(row[0], "strata_sessions.id"));
  STRATA_ASSIGN_OR_RETURN(session.created_at, ColumnTime(row[1], "strata_sessions.created_at"));
  STRATA_ASSIGN_OR_RETURN(session.last_seen_at, ColumnTime(row[2], "strata_sessions.last_seen_at"));
  STRATA_ASSIGN_OR_RETURN(session.user, account_rows::UserFromRow(row, 3));
  return session;
}

absl::Status PostgresAccountStore::TouchSession(int64_t id, absl::Time now) {
  return Annotate(
      db_->Exec(
          "UPDATE strata_sessions SET last_seen_at = GREATEST(last_seen_at, $1) WHERE id = $2",
          {DbMillis(now), id}),
      "touch session");
}

absl::Status PostgresAccountStore::DeleteSession(int64_t id) {
  return Annotate(db_->Exec("DELETE FROM strata_sessions WHERE id = $1", {id}), "delete session");
}

absl::StatusOr<int64_t> PostgresAccountStore::DeleteExpiredSessions(absl::Time idle_before,
                                                                    absl::Time created_before) {
  absl::StatusOr<postgres::PgRows> rows = db_->Query(
      "DELETE FROM strata_sessions WHERE last_seen_at < $1 OR created_at < $2 RETURNING id",
      {DbMillis(idle_before), DbMillis(created_before)});
  if (!rows.ok()) return Annotate(rows.status(), "delete expired sessions");
  return static_cast<int64_t>(rows->size());
}

}  // namespace strata::control
