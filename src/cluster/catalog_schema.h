#pragma once

// The batch catalog's tables in PostgreSQL (docs/format/postgres-catalog.md)
// as numbered migrations (postgres/pg_migrations.h), recorded in
// strata_catalog_migrations.

#include "absl/status/status.h"
#include "postgres/pg_connection.h"

namespace strata::cluster {

[[nodiscard]] absl::Status ApplyCatalogMigrations(postgres::PgConnection& db);

}  // namespace strata::cluster
