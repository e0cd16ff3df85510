#include "control/postgres_migrations.h"

#include <string_view>

#include "common/status_macros.h"
#include "control/control_db.h"
#include "fmt/format.h"

namespace strata::control {
namespace {

// Migration n is kPostgresMigrations[n - 1]. Never edit one that has shipped;
// add the next.
constexpr std::string_view kPostgresMigrations[] = {
    // 1: tokens, as the SQLite control database keeps them.
    "CREATE TABLE strata_tokens ("
    "  id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,"
    "  name TEXT NOT NULL UNIQUE,"
    "  scope TEXT NOT NULL,"
    "  token_hash BYTEA NOT NULL,"
    "  created_at BIGINT NOT NULL,"
    "  last_used_at BIGINT,"
    "  revoked_at BIGINT)",
};
static_assert(std::size(kPostgresMigrations) == kPostgresControlSchemaVersion);

// Any constant both sides agree on; it only keeps concurrent migrators apart.
constexpr int64_t kMigrationLockKey = 0x7374726174610001;  // "strata" + 1

}  // namespace

absl::Status ApplyPostgresMigrations(postgres::PgConnection& db) {
  STRATA_RETURN_IF_ERROR(
      db.Exec("CREATE TABLE IF NOT EXISTS strata_schema_migrations ("
              "version BIGINT PRIMARY KEY, applied_at_ms BIGINT NOT NULL)"));
  return db.InTransaction([&](postgres::PgConnection::Transaction& txn) -> absl::Status {
    STRATA_RETURN_IF_ERROR(txn.Exec("SELECT pg_advisory_xact_lock($1)", {kMigrationLockKey}));
    STRATA_ASSIGN_OR_RETURN(
        const postgres::PgRows rows,
        txn.Query("SELECT COALESCE(MAX(version), 0) FROM strata_schema_migrations"));
    if (rows.size() != 1 || rows[0].size() != 1) {
      return absl::InternalError("MAX(version) returned no row");
    }
    STRATA_ASSIGN_OR_RETURN(const int64_t current,
                            ColumnInt(rows[0][0], "strata_schema_migrations.version"));
    if (current > kPostgresControlSchemaVersion) {
      return absl::FailedPreconditionError(fmt::format(
          "PostgreSQL control store at {} has schema version {}, newer than this strata's {}; "
          "run the newer strata",
          db.server(), current, kPostgresControlSchemaVersion));
    }
    for (int64_t version = current + 1; version <= kPostgresControlSchemaVersion; ++version) {
      STRATA_RETURN_IF_ERROR(txn.Exec(kPostgresMigrations[version - 1]));
      STRATA_RETURN_IF_ERROR(
          txn.Exec("INSERT INTO strata_schema_migrations(version, applied_at_ms) "
                   "VALUES ($1, (EXTRACT(EPOCH FROM clock_timestamp()) * 1000)::BIGINT)",
                   {version}));
    }
    return absl::OkStatus();
  });
}

}  // namespace strata::control
