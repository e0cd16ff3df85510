#include "postgres/pg_migrations.h"

#include <string>

#include "absl/strings/numbers.h"
#include "common/status_macros.h"
#include "fmt/format.h"

namespace strata::postgres {

absl::StatusOr<int64_t> ColumnInt64(const std::optional<std::string>& value,
                                    std::string_view column) {
  int64_t out = 0;
  if (!value.has_value() || !absl::SimpleAtoi(*value, &out)) {
    return absl::DataLossError(fmt::format("{} is not an integer", column));
  }
  return out;
}

absl::Status ApplyMigrations(PgConnection& db, const MigrationSet& schema) {
  const int64_t newest = static_cast<int64_t>(schema.statements.size());
  // The table name is a constant of the caller, never client text.
  STRATA_RETURN_IF_ERROR(
      db.Exec(fmt::format("CREATE TABLE IF NOT EXISTS {} ("
                          "version BIGINT PRIMARY KEY, applied_at_ms BIGINT NOT NULL)",
                          schema.versions_table)));
  return db.InTransaction([&](PgConnection::Transaction& txn) -> absl::Status {
    STRATA_RETURN_IF_ERROR(txn.Exec("SELECT pg_advisory_xact_lock($1)", {schema.lock_key}));
    STRATA_ASSIGN_OR_RETURN(
        const PgRows rows,
        txn.Query(fmt::format("SELECT COALESCE(MAX(version), 0) FROM {}", schema.versions_table)));
    if (rows.size() != 1 || rows[0].size() != 1) {
      return absl::InternalError("MAX(version) returned no row");
    }
    STRATA_ASSIGN_OR_RETURN(
        const int64_t current,
        ColumnInt64(rows[0][0], fmt::format("{}.version", schema.versions_table)));
    if (current > newest) {
      return absl::FailedPreconditionError(
          fmt::format("PostgreSQL {} at {} has schema version {}, newer than this strata's {}; "
                      "run the newer strata",
                      schema.what, db.server(), current, newest));
    }
    for (int64_t version = current + 1; version <= newest; ++version) {
      STRATA_RETURN_IF_ERROR(txn.Exec(schema.statements[version - 1]));
      STRATA_RETURN_IF_ERROR(txn.Exec(
          fmt::format("INSERT INTO {}(version, applied_at_ms) "
                      "VALUES ($1, (EXTRACT(EPOCH FROM clock_timestamp()) * 1000)::BIGINT)",
                      schema.versions_table),
          {version}));
    }
    return absl::OkStatus();
  });
}

}  // namespace strata::postgres
