// SqliteAccountStore: saved queries (docs/format/control-db.md,
// "saved_queries").

#include "common/status_macros.h"
#include "control/control_db.h"
#include "control/sqlite_account_store.h"
#include "fmt/format.h"

namespace strata::control {
namespace {

constexpr std::string_view kColumns =
    "saved_queries.id, saved_queries.owner_id, users.email, saved_queries.name, "
    "saved_queries.kind, saved_queries.parameters, saved_queries.time_range, "
    "saved_queries.shared, saved_queries.created_at, saved_queries.updated_at";
constexpr std::string_view kFrom =
    "FROM saved_queries JOIN users ON users.id = saved_queries.owner_id";

absl::StatusOr<SavedQuery> FromRow(const SqlRow& row) {
  if (row.size() != 10) return absl::InternalError("saved_queries: unexpected column count");
  SavedQuery query;
  STRATA_ASSIGN_OR_RETURN(query.id, ColumnInt(row[0], "saved_queries.id"));
  STRATA_ASSIGN_OR_RETURN(query.owner_id, ColumnInt(row[1], "saved_queries.owner_id"));
  query.owner_email = row[2].value_or("");
  query.name = row[3].value_or("");
  absl::StatusOr<SavedQueryKind> kind = ParseSavedQueryKind(row[4].value_or(""));
  if (!kind.ok()) return absl::DataLossError(fmt::format("saved_queries.kind of {}", query.id));
  query.kind = *kind;
  query.parameters = row[5].value_or("");
  query.time_range = row[6].value_or("");
  STRATA_ASSIGN_OR_RETURN(const int64_t shared, ColumnInt(row[7], "saved_queries.shared"));
  query.shared = shared != 0;
  STRATA_ASSIGN_OR_RETURN(query.created_at, ColumnTime(row[8], "saved_queries.created_at"));
  STRATA_ASSIGN_OR_RETURN(query.updated_at, ColumnTime(row[9], "saved_queries.updated_at"));
  return query;
}

absl::StatusOr<SavedQuery> SelectOne(SqliteDb::Transaction& txn, int64_t id) {
  STRATA_ASSIGN_OR_RETURN(
      const SqlRows rows,
      txn.Query(fmt::format("SELECT {} {} WHERE saved_queries.id = ?", kColumns, kFrom), {id}));
  if (rows.empty()) return absl::NotFoundError(fmt::format("no saved query has id {}", id));
  return FromRow(rows[0]);
}

absl::Status NameTaken(std::string_view name) {
  return absl::AlreadyExistsError(fmt::format("you already have a saved query named \"{}\"", name));
}

}  // namespace

std::string_view SavedQueryKindName(SavedQueryKind kind) {
  switch (kind) {
    case SavedQueryKind::kTraces:
      return "traces";
    case SavedQueryKind::kLogs:
      return "logs";
    case SavedQueryKind::kMetrics:
      return "metrics";
    case SavedQueryKind::kSql:
      return "sql";
  }
  return "traces";
}

absl::StatusOr<SavedQueryKind> ParseSavedQueryKind(std::string_view name) {
  for (SavedQueryKind kind : {SavedQueryKind::kTraces, SavedQueryKind::kLogs,
                              SavedQueryKind::kMetrics, SavedQueryKind::kSql}) {
    if (name == SavedQueryKindName(kind)) return kind;
  }
  return absl::InvalidArgumentError(fmt::format(
      "unknown saved query kind \"{}\"; the kinds are traces, logs, metrics and sql", name));
}

absl::StatusOr<SavedQuery> SqliteAccountStore::CreateSavedQuery(const SavedQuery& query,
                                                                absl::Time now) {
  SavedQuery created;
  absl::Status status = db_->InTransaction([&](SqliteDb::Transaction& txn) -> absl::Status {
    STRATA_ASSIGN_OR_RETURN(
        const SqlRows taken,
        txn.Query("SELECT id FROM saved_queries WHERE owner_id = ? AND name = ?",
                  {query.owner_id, query.name}));
    if (!taken.empty()) return NameTaken(query.name);
    STRATA_ASSIGN_OR_RETURN(
        const SqlRows rows,
        txn.Query("INSERT INTO saved_queries(owner_id, name, kind, parameters, time_range, "
                  "shared, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?) RETURNING id",
                  {query.owner_id, query.name, std::string(SavedQueryKindName(query.kind)),
                   query.parameters, query.time_range, int64_t{query.shared ? 1 : 0}, DbMillis(now),
                   DbMillis(now)}));
    if (rows.size() != 1) return absl::InternalError("INSERT ... RETURNING id returned no id");
    STRATA_ASSIGN_OR_RETURN(const int64_t id, ColumnInt(rows[0][0], "saved_queries.id"));
    STRATA_ASSIGN_OR_RETURN(created, SelectOne(txn, id));
    return absl::OkStatus();
  });
  STRATA_RETURN_IF_ERROR(Annotate(status, "create saved query"));
  return created;
}

absl::StatusOr<SavedQuery> SqliteAccountStore::GetSavedQuery(int64_t id) {
  absl::StatusOr<SqlRows> rows =
      db_->Query(fmt::format("SELECT {} {} WHERE saved_queries.id = ?", kColumns, kFrom), {id});
  if (!rows.ok()) return Annotate(rows.status(), "get saved query");
  if (rows->empty()) return absl::NotFoundError(fmt::format("no saved query has id {}", id));
  return FromRow((*rows)[0]);
}

absl::StatusOr<std::vector<SavedQuery>> SqliteAccountStore::ListSavedQueries(int64_t user_id) {
  absl::StatusOr<SqlRows> rows = db_->Query(
      fmt::format("SELECT {} {} WHERE saved_queries.owner_id = ? OR saved_queries.shared = 1 "
                  "ORDER BY saved_queries.id",
                  kColumns, kFrom),
      {user_id});
  if (!rows.ok()) return Annotate(rows.status(), "list saved queries");
  std::vector<SavedQuery> queries;
  queries.reserve(rows->size());
  for (const SqlRow& row : *rows) {
    STRATA_ASSIGN_OR_RETURN(SavedQuery query, FromRow(row));
    queries.push_back(std::move(query));
  }
  return queries;
}

absl::StatusOr<int64_t> SqliteAccountStore::CountSavedQueries(int64_t owner_id) {
  absl::StatusOr<SqlRows> rows =
      db_->Query("SELECT COUNT(*) FROM saved_queries WHERE owner_id = ?", {owner_id});
  if (!rows.ok()) return Annotate(rows.status(), "count saved queries");
  return ColumnInt(rows->empty() ? std::nullopt : (*rows)[0][0], "COUNT(*)");
}

absl::StatusOr<SavedQuery> SqliteAccountStore::ChangeSavedQuery(int64_t id,
                                                                const SavedQueryChange& change,
                                                                absl::Time now) {
  SavedQuery changed;
  absl::Status status = db_->InTransaction([&](SqliteDb::Transaction& txn) -> absl::Status {
    STRATA_ASSIGN_OR_RETURN(const SavedQuery current, SelectOne(txn, id));
    if (change.name.has_value() && *change.name != current.name) {
      STRATA_ASSIGN_OR_RETURN(
          const SqlRows taken,
          txn.Query("SELECT id FROM saved_queries WHERE owner_id = ? AND name = ?",
                    {current.owner_id, *change.name}));
      if (!taken.empty()) return NameTaken(*change.name);
    }
    STRATA_RETURN_IF_ERROR(txn.Exec(
        "UPDATE saved_queries SET name = ?, parameters = ?, time_range = ?, shared = ?, "
        "updated_at = ? WHERE id = ?",
        {change.name.value_or(current.name), change.parameters.value_or(current.parameters),
         change.time_range.value_or(current.time_range),
         int64_t{change.shared.value_or(current.shared) ? 1 : 0}, DbMillis(now), id}));
    STRATA_ASSIGN_OR_RETURN(changed, SelectOne(txn, id));
    return absl::OkStatus();
  });
  STRATA_RETURN_IF_ERROR(Annotate(status, "change saved query"));
  return changed;
}

absl::Status SqliteAccountStore::DeleteSavedQuery(int64_t id) {
  return Annotate(db_->InTransaction([&](SqliteDb::Transaction& txn) -> absl::Status {
    STRATA_RETURN_IF_ERROR(SelectOne(txn, id).status());
    return txn.Exec("DELETE FROM saved_queries WHERE id = ?", {id});
  }),
                  "delete saved query");
}

}  // namespace strata::control
