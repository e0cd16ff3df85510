// PostgresAccountStore (postgres_account_store.h): saved queries.

#include "common/status_macros.h"
#include "control/control_db.h"
#include "control/postgres_account_store.h"
#include "fmt/format.h"

namespace strata::control {
namespace {

using postgres::PgConnection;
using postgres::PgRows;

constexpr std::string_view kPgSavedColumns =
    "q.id, q.owner_id, u.email, q.name, q.kind, q.parameters, q.time_range, q.shared, "
    "q.created_at, q.updated_at";
constexpr std::string_view kPgSavedFrom =
    "FROM strata_saved_queries q JOIN strata_users u ON u.id = q.owner_id";

absl::StatusOr<SavedQuery> PgSavedQuery(const postgres::PgRow& row) {
  if (row.size() != 10) return absl::InternalError("strata_saved_queries: unexpected column count");
  SavedQuery query;
  STRATA_ASSIGN_OR_RETURN(query.id, ColumnInt(row[0], "strata_saved_queries.id"));
  STRATA_ASSIGN_OR_RETURN(query.owner_id, ColumnInt(row[1], "strata_saved_queries.owner_id"));
  query.owner_email = row[2].value_or("");
  query.name = row[3].value_or("");
  absl::StatusOr<SavedQueryKind> kind = ParseSavedQueryKind(row[4].value_or(""));
  if (!kind.ok()) {
    return absl::DataLossError(fmt::format("strata_saved_queries.kind of {}", query.id));
  }
  query.kind = *kind;
  query.parameters = row[5].value_or("");
  query.time_range = row[6].value_or("");
  STRATA_ASSIGN_OR_RETURN(const int64_t shared, ColumnInt(row[7], "strata_saved_queries.shared"));
  query.shared = shared != 0;
  STRATA_ASSIGN_OR_RETURN(query.created_at, ColumnTime(row[8], "strata_saved_queries.created_at"));
  STRATA_ASSIGN_OR_RETURN(query.updated_at, ColumnTime(row[9], "strata_saved_queries.updated_at"));
  return query;
}

absl::StatusOr<SavedQuery> SelectPgSavedQuery(PgConnection::Transaction& txn, int64_t id) {
  STRATA_ASSIGN_OR_RETURN(
      const PgRows rows,
      txn.Query(fmt::format("SELECT {} {} WHERE q.id = $1", kPgSavedColumns, kPgSavedFrom), {id}));
  if (rows.empty()) return absl::NotFoundError(fmt::format("no saved query has id {}", id));
  return PgSavedQuery(rows[0]);
}

absl::Status PgNameTaken(std::string_view name) {
  return absl::AlreadyExistsError(fmt::format("you already have a saved query named \"{}\"", name));
}

}  // namespace

absl::StatusOr<SavedQuery> PostgresAccountStore::CreateSavedQuery(const SavedQuery& query,
                                                                  absl::Time now) {
  SavedQuery created;
  absl::Status status = db_->InTransaction([&](PgConnection::Transaction& txn) -> absl::Status {
    // UNIQUE (owner_id, name) decides between nodes; the message is ours.
    absl::StatusOr<PgRows> rows = txn.Query(
        "INSERT INTO strata_saved_queries(owner_id, name, kind, parameters, time_range, shared, "
        "created_at, updated_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $7) RETURNING id",
        {query.owner_id, query.name, std::string(SavedQueryKindName(query.kind)), query.parameters,
         query.time_range, int64_t{query.shared ? 1 : 0}, DbMillis(now)});
    if (absl::IsAlreadyExists(rows.status())) return PgNameTaken(query.name);
    STRATA_RETURN_IF_ERROR(rows.status());
    STRATA_ASSIGN_OR_RETURN(const int64_t id,
                            pg_accounts::OneInt(*rows, "strata_saved_queries.id"));
    STRATA_ASSIGN_OR_RETURN(created, SelectPgSavedQuery(txn, id));
    return absl::OkStatus();
  });
  STRATA_RETURN_IF_ERROR(Annotate(status, "create saved query"));
  return created;
}

absl::StatusOr<SavedQuery> PostgresAccountStore::GetSavedQuery(int64_t id) {
  absl::StatusOr<PgRows> rows =
      db_->Query(fmt::format("SELECT {} {} WHERE q.id = $1", kPgSavedColumns, kPgSavedFrom), {id});
  if (!rows.ok()) return Annotate(rows.status(), "get saved query");
  if (rows->empty()) return absl::NotFoundError(fmt::format("no saved query has id {}", id));
  return PgSavedQuery((*rows)[0]);
}

absl::StatusOr<std::vector<SavedQuery>> PostgresAccountStore::ListSavedQueries(int64_t user_id) {
  absl::StatusOr<PgRows> rows =
      db_->Query(fmt::format("SELECT {} {} WHERE q.owner_id = $1 OR q.shared = 1 ORDER BY q.id",
                             kPgSavedColumns, kPgSavedFrom),
                 {user_id});
  if (!rows.ok()) return Annotate(rows.status(), "list saved queries");
  std::vector<SavedQuery> queries;
  queries.reserve(rows->size());
  for (const postgres::PgRow& row : *rows) {
    STRATA_ASSIGN_OR_RETURN(SavedQuery query, PgSavedQuery(row));
    queries.push_back(std::move(query));
  }
  return queries;
}

absl::StatusOr<int64_t> PostgresAccountStore::CountSavedQueries(int64_t owner_id) {
  absl::StatusOr<PgRows> rows =
      db_->Query("SELECT COUNT(*) FROM strata_saved_queries WHERE owner_id = $1", {owner_id});
  if (!rows.ok()) return Annotate(rows.status(), "count saved queries");
  return pg_accounts::OneInt(*rows, "COUNT(*)");
}

absl::StatusOr<SavedQuery> PostgresAccountStore::ChangeSavedQuery(int64_t id,
                                                                  const SavedQueryChange& change,
                                                                  absl::Time now) {
  SavedQuery changed;
  absl::Status status = db_->InTransaction([&](PgConnection::Transaction& txn) -> absl::Status {
    STRATA_ASSIGN_OR_RETURN(const SavedQuery current, SelectPgSavedQuery(txn, id));
    const std::string name = change.name.value_or(current.name);
    absl::Status updated = txn.Exec(
        "UPDATE strata_saved_queries SET name = $1, parameters = $2, time_range = $3, "
        "shared = $4, updated_at = $5 WHERE id = $6",
        {name, change.parameters.value_or(current.parameters),
         change.time_range.value_or(current.time_range),
         int64_t{change.shared.value_or(current.shared) ? 1 : 0}, DbMillis(now), id});
    if (absl::IsAlreadyExists(updated)) return PgNameTaken(name);
    STRATA_RETURN_IF_ERROR(updated);
    STRATA_ASSIGN_OR_RETURN(changed, SelectPgSavedQuery(txn, id));
    return absl::OkStatus();
  });
  STRATA_RETURN_IF_ERROR(Annotate(status, "change saved query"));
  return changed;
}

absl::Status PostgresAccountStore::DeleteSavedQuery(int64_t id) {
  absl::StatusOr<PgRows> rows =
      db_->Query("DELETE FROM strata_saved_queries WHERE id = $1 RETURNING id", {id});
  if (!rows.ok()) return Annotate(rows.status(), "delete saved query");
  if (rows->empty()) return absl::NotFoundError(fmt::format("no saved query has id {}", id));
  return absl::OkStatus();
}

}  // namespace strata::control
