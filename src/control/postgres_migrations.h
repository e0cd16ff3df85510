#pragma once

// The schema of the shared control store in PostgreSQL
// (docs/format/postgres-control.md): numbered migrations, applied in order,
// each in its own transaction with its version recorded in
// strata_schema_migrations. Nodes starting together serialise on a
// transaction-scoped advisory lock, so each migration runs once.
//
// Errors: FailedPrecondition when the database holds a version newer than
// this binary knows; otherwise the connection's errors.

#include <cstdint>

#include "absl/status/status.h"
#include "postgres/pg_connection.h"

namespace strata::control {

// The newest schema version this binary writes.
inline constexpr int64_t kPostgresControlSchemaVersion = 3;

[[nodiscard]] absl::Status ApplyPostgresMigrations(postgres::PgConnection& db);

}  // namespace strata::control
