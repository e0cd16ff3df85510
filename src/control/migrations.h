#pragma once

// Numbered schema migrations for the control database
// (docs/format/control-db.md, "Migrations").
//
// The schema_migrations table records every migration applied: its version,
// when, and a one-line description. ApplyMigrations() brings a database up
// to the newest version this binary knows, one migration per transaction, in
// version order, so a crash leaves the database at some whole version. Each
// transaction re-reads the current version after taking the write lock, so
// two processes opening one new database at once (the server and `strata
// token`) apply each migration exactly once.
//
// A migration, once released, never changes: a new schema is a new
// migration with the next number.
//
// Thread-safety: stateless; safe wherever the SqliteDb is.
//
// Errors: FailedPrecondition when the database is at a version newer than
// the newest migration given (a newer strata wrote it; the message ends with
// the runbook pointer #control-database-newer); SqliteDb's errors when SQL
// fails, with the migration's version and description named (the caller
// adds the database path).

#include <cstdint>
#include <span>
#include <string_view>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "control/sqlite_db.h"

namespace strata::control {

struct Migration {
  int version;  // 1, 2, 3, ... with no gaps
  std::string_view description;
  std::string_view sql;  // one or more statements
};

// strata's control-database migrations, in version order.
std::span<const Migration> ControlMigrations();

// Applies the migrations of `migrations` (versions 1..N in order) that the
// database lacks. Returns the database's version afterwards (N).
[[nodiscard]] absl::StatusOr<int> ApplyMigrations(SqliteDb& db,
                                                  std::span<const Migration> migrations,
                                                  absl::Time now);

// The version the database is at: the highest recorded in
// schema_migrations, 0 for a new database.
[[nodiscard]] absl::StatusOr<int> SchemaVersion(SqliteDb& db);

}  // namespace strata::control
