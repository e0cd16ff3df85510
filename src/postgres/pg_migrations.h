#pragma once

// Numbered schema migrations for a PostgreSQL database that several strata
// nodes share. A schema (the control store's, the batch catalog's) is a
// list of statements: migration n is statements[n - 1], never edited once
// shipped. ApplyMigrations() runs the missing ones in order in one
// transaction, each version recorded in the schema's own table, under a
// transaction-scoped advisory lock, so nodes starting together apply each
// migration once.
//
// Errors: FailedPrecondition when the database holds a version newer than
// the list (a newer strata migrated it); otherwise the connection's.

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "postgres/pg_connection.h"

namespace strata::postgres {

struct MigrationSet {
  // What the schema is, for messages ("control store", "batch catalog").
  std::string_view what;
  // The table that records applied versions (created when missing).
  std::string_view versions_table;
  // Any constant unique to this schema: it keeps concurrent migrators apart.
  int64_t lock_key = 0;
  std::span<const std::string_view> statements;
};

[[nodiscard]] absl::Status ApplyMigrations(PgConnection& db, const MigrationSet& schema);

// A column of a text result as an integer; DataLoss naming `column` when it
// is NULL or not a number.
[[nodiscard]] absl::StatusOr<int64_t> ColumnInt64(const std::optional<std::string>& value,
                                                  std::string_view column);

}  // namespace strata::postgres
