#include "control/migrations.h"

#include <string>

#include "absl/strings/numbers.h"
#include "common/check.h"
#include "common/runbook.h"
#include "common/status_macros.h"
#include "fmt/format.h"

namespace strata::control {
namespace {

// Never changes: every strata release, older and newer, must read it to
// learn the database's version.
constexpr std::string_view kCreateSchemaMigrations =
    "CREATE TABLE IF NOT EXISTS schema_migrations ("
    " version INTEGER PRIMARY KEY,"
    " description TEXT NOT NULL,"
    " applied_at INTEGER NOT NULL"
    ") STRICT";

constexpr Migration kControlMigrations[] = {
    {1, "ingest, read and admin tokens",
     "CREATE TABLE tokens ("
     " id INTEGER PRIMARY KEY AUTOINCREMENT,"
     " name TEXT NOT NULL UNIQUE,"
     " scope TEXT NOT NULL CHECK (scope IN ('ingest', 'read', 'admin')),"
     " token_hash BLOB NOT NULL UNIQUE CHECK (length(token_hash) = 32),"
     " created_at INTEGER NOT NULL,"
     " last_used_at INTEGER,"
     " revoked_at INTEGER"
     ") STRICT"},
    {2, "users, sessions, password links, audit events, saved queries",
     "CREATE TABLE users ("
     " id INTEGER PRIMARY KEY AUTOINCREMENT,"
     " email TEXT NOT NULL UNIQUE,"
     " name TEXT NOT NULL,"
     " role TEXT NOT NULL CHECK (role IN ('viewer', 'operator', 'admin')),"
     " password_hash TEXT,"
     " active INTEGER NOT NULL CHECK (active IN (0, 1)),"
     " created_at INTEGER NOT NULL,"
     " updated_at INTEGER NOT NULL,"
     " last_sign_in_at INTEGER"
     ") STRICT;"
     "CREATE TABLE sessions ("
     " id INTEGER PRIMARY KEY AUTOINCREMENT,"
     " user_id INTEGER NOT NULL REFERENCES users(id) ON DELETE CASCADE,"
     " token_hash BLOB NOT NULL UNIQUE CHECK (length(token_hash) = 32),"
     " created_at INTEGER NOT NULL,"
     " last_seen_at INTEGER NOT NULL,"
     " address TEXT NOT NULL,"
     " user_agent TEXT NOT NULL"
     ") STRICT;"
     "CREATE INDEX sessions_by_user ON sessions(user_id);"
     "CREATE TABLE password_links ("
     " id INTEGER PRIMARY KEY AUTOINCREMENT,"
     " user_id INTEGER NOT NULL REFERENCES users(id) ON DELETE CASCADE,"
     " token_hash BLOB NOT NULL UNIQUE CHECK (length(token_hash) = 32),"
     " created_at INTEGER NOT NULL,"
     " expires_at INTEGER NOT NULL,"
     " used_at INTEGER"
     ") STRICT;"
     "CREATE TABLE audit_events ("
     " id INTEGER PRIMARY KEY AUTOINCREMENT,"
     " at INTEGER NOT NULL,"
     " actor TEXT NOT NULL,"
     " action TEXT NOT NULL,"
     " target TEXT NOT NULL,"
     " outcome TEXT NOT NULL CHECK (outcome IN ('ok', 'failed', 'denied')),"
     " address TEXT NOT NULL,"
     " user_agent TEXT NOT NULL,"
     " detail TEXT NOT NULL"
     ") STRICT;"
     "CREATE INDEX audit_events_by_time ON audit_events(at);"
     "CREATE TABLE saved_queries ("
     " id INTEGER PRIMARY KEY AUTOINCREMENT,"
     " owner_id INTEGER NOT NULL REFERENCES users(id) ON DELETE CASCADE,"
     " name TEXT NOT NULL,"
     " kind TEXT NOT NULL CHECK (kind IN ('traces', 'logs', 'metrics', 'sql')),"
     " parameters TEXT NOT NULL,"
     " time_range TEXT NOT NULL,"
     " shared INTEGER NOT NULL CHECK (shared IN (0, 1)),"
     " created_at INTEGER NOT NULL,"
     " updated_at INTEGER NOT NULL,"
     " UNIQUE (owner_id, name)"
     ") STRICT"},
    {3, "OAuth clients, codes, grants and tokens (the MCP server's authorization)",
     "CREATE TABLE oauth_clients ("
     " id INTEGER PRIMARY KEY AUTOINCREMENT,"
     " client_id TEXT NOT NULL UNIQUE,"
     " name TEXT NOT NULL,"
     " redirect_uris TEXT NOT NULL,"
     " created_at INTEGER NOT NULL"
     ") STRICT;"
     "CREATE TABLE oauth_grants ("
     " id INTEGER PRIMARY KEY AUTOINCREMENT,"
     " client_id TEXT NOT NULL REFERENCES oauth_clients(client_id) ON DELETE CASCADE,"
     " user_id INTEGER NOT NULL REFERENCES users(id) ON DELETE CASCADE,"
     " resource TEXT NOT NULL,"
     " created_at INTEGER NOT NULL,"
     " revoked_at INTEGER"
     ") STRICT;"
     "CREATE TABLE oauth_codes ("
     " id INTEGER PRIMARY KEY AUTOINCREMENT,"
     " code_hash BLOB NOT NULL UNIQUE CHECK (length(code_hash) = 32),"
     " client_id TEXT NOT NULL REFERENCES oauth_clients(client_id) ON DELETE CASCADE,"
     " user_id INTEGER NOT NULL REFERENCES users(id) ON DELETE CASCADE,"
     " redirect_uri TEXT NOT NULL,"
     " code_challenge TEXT NOT NULL,"
     " resource TEXT NOT NULL,"
     " created_at INTEGER NOT NULL,"
     " expires_at INTEGER NOT NULL,"
     " used_at INTEGER,"
     " grant_id INTEGER REFERENCES oauth_grants(id) ON DELETE CASCADE"
     ") STRICT;"
     "CREATE TABLE oauth_tokens ("
     " id INTEGER PRIMARY KEY AUTOINCREMENT,"
     " grant_id INTEGER NOT NULL REFERENCES oauth_grants(id) ON DELETE CASCADE,"
     " kind TEXT NOT NULL CHECK (kind IN ('access', 'refresh')),"
     " token_hash BLOB NOT NULL UNIQUE CHECK (length(token_hash) = 32),"
     " created_at INTEGER NOT NULL,"
     " expires_at INTEGER NOT NULL,"
     " used_at INTEGER"
     ") STRICT;"
     "CREATE INDEX oauth_tokens_by_grant ON oauth_tokens(grant_id)"},
};

void CheckMigrationList(std::span<const Migration> migrations) {
  for (size_t i = 0; i < migrations.size(); ++i) {
    STRATA_CHECK(migrations[i].version == static_cast<int>(i + 1),
                 "migrations must be numbered 1, 2, 3, ... in order");
  }
}

absl::Status NewerThanKnown(const SqliteDb& db, int version, int known) {
  return absl::FailedPreconditionError(fmt::format(
      "control database {} is at schema version {}, newer than this strata knows (version {}): "
      "a newer strata wrote it; {}",
      db.path(), version, known, RunbookRef("control-database-newer")));
}

absl::StatusOr<int> VersionFromRows(const SqlRows& rows) {
  if (rows.size() != 1 || rows[0].size() != 1) {
    return absl::InternalError("schema_migrations: MAX(version) returned no single value");
  }
  if (!rows[0][0].has_value()) return 0;  // no migration applied yet
  int version = 0;
  if (!absl::SimpleAtoi(*rows[0][0], &version) || version < 0) {
    return absl::DataLossError(fmt::format(
        "schema_migrations: version \"{}\" is not a non-negative integer", *rows[0][0]));
  }
  return version;
}

constexpr std::string_view kMaxVersion = "SELECT MAX(version) FROM schema_migrations";

}  // namespace

std::span<const Migration> ControlMigrations() { return kControlMigrations; }

absl::StatusOr<int> SchemaVersion(SqliteDb& db) {
  STRATA_RETURN_IF_ERROR(db.Exec(kCreateSchemaMigrations));
  STRATA_ASSIGN_OR_RETURN(const SqlRows rows, db.Query(kMaxVersion));
  return VersionFromRows(rows);
}

absl::StatusOr<int> ApplyMigrations(SqliteDb& db, std::span<const Migration> migrations,
                                    absl::Time now) {
  CheckMigrationList(migrations);
  const int known = static_cast<int>(migrations.size());
  STRATA_ASSIGN_OR_RETURN(const int start, SchemaVersion(db));
  if (start > known) return NewerThanKnown(db, start, known);
  for (const Migration& migration : migrations) {
    if (migration.version <= start) continue;
    absl::Status applied = db.InTransaction([&](SqliteDb::Transaction& txn) -> absl::Status {
      // Another process may have migrated since `start` was read; the write
      // lock this transaction holds makes this read final.
      STRATA_ASSIGN_OR_RETURN(const SqlRows rows, txn.Query(kMaxVersion));
      STRATA_ASSIGN_OR_RETURN(const int current, VersionFromRows(rows));
      if (current > known) return NewerThanKnown(db, current, known);
      if (current >= migration.version) return absl::OkStatus();
      STRATA_RETURN_IF_ERROR(txn.ExecScript(migration.sql));
      return txn.Exec(
          "INSERT INTO schema_migrations(version, description, applied_at) VALUES (?, ?, ?)",
          {int64_t{migration.version}, std::string(migration.description),
           absl::ToUnixMillis(now)});
    });
    if (!applied.ok()) {
      if (absl::IsFailedPrecondition(applied)) return applied;
      return absl::Status(applied.code(),
                          fmt::format("migration {} ({}): {}", migration.version,
                                      migration.description, std::string(applied.message())));
    }
  }
  return known;
}

}  // namespace strata::control
