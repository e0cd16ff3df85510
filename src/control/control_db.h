#pragma once

// What every store of the control database shares: opening it (creating its
// folder, applying the migrations) and reading typed values out of SqlRows.
//
// Thread-safety: stateless functions.

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "control/sqlite_db.h"
#include "control/token.h"

namespace strata::control {

// Opens the control database at `db_path` (creating its folder and the
// database if needed) and applies the control migrations, stamped `now`.
// Errors: FailedPrecondition for a database newer than this binary (runbook
// #control-database-newer); otherwise the SqliteDb or filesystem error,
// naming the file and the runbook section #control-database-cannot-be-opened.
[[nodiscard]] absl::StatusOr<std::unique_ptr<SqliteDb>> OpenControlDb(const std::string& db_path,
                                                                      absl::Time now);

// A column's value as an integer; DataLoss naming `column` (e.g.
// "users.id") when it is NULL or not an integer.
[[nodiscard]] absl::StatusOr<int64_t> ColumnInt(const std::optional<std::string>& value,
                                                std::string_view column);
// A column of Unix milliseconds.
[[nodiscard]] absl::StatusOr<absl::Time> ColumnTime(const std::optional<std::string>& value,
                                                    std::string_view column);
// As ColumnTime(), NULL being nullopt.
[[nodiscard]] absl::StatusOr<std::optional<absl::Time>> ColumnOptionalTime(
    const std::optional<std::string>& value, std::string_view column);
// A 32-byte hash column; DataLoss when it has another length.
[[nodiscard]] absl::StatusOr<TokenHash> ColumnHash(const std::optional<std::string>& value,
                                                   std::string_view column);

// The hash as a BLOB parameter.
SqlBlob HashBlob(const TokenHash& hash);

// Time as the database keeps it: Unix milliseconds.
inline int64_t DbMillis(absl::Time time) { return absl::ToUnixMillis(time); }

}  // namespace strata::control
