#include "control/control_db.h"

#include <filesystem>
#include <system_error>

#include "absl/strings/numbers.h"
#include "common/runbook.h"
#include "common/status_macros.h"
#include "control/migrations.h"
#include "fmt/format.h"

namespace strata::control {
namespace {

absl::Status CannotOpen(const std::string& path, const absl::Status& cause) {
  return absl::Status(cause.code(),
                      fmt::format("control database {}: {}; {}", path, std::string(cause.message()),
                                  RunbookRef("control-database-cannot-be-opened")));
}

}  // namespace

absl::StatusOr<std::unique_ptr<SqliteDb>> OpenControlDb(const std::string& db_path,
                                                        absl::Time now) {
  const std::filesystem::path path(db_path);
  std::error_code ec;
  std::filesystem::create_directories(path.parent_path(), ec);
  if (ec) {
    return CannotOpen(path.string(),
                      absl::UnavailableError(fmt::format(
                          "cannot create {}: {}", path.parent_path().string(), ec.message())));
  }
  absl::StatusOr<std::unique_ptr<SqliteDb>> db = SqliteDb::Open(path.string());
  if (!db.ok()) return CannotOpen(path.string(), db.status());
  absl::StatusOr<int> version = ApplyMigrations(**db, ControlMigrations(), now);
  if (!version.ok()) {
    // A newer database has its own runbook section, named in the message.
    if (absl::IsFailedPrecondition(version.status())) return version.status();
    return CannotOpen(path.string(), version.status());
  }
  return db;
}

absl::StatusOr<int64_t> ColumnInt(const std::optional<std::string>& value,
                                  std::string_view column) {
  int64_t out = 0;
  if (!value.has_value() || !absl::SimpleAtoi(*value, &out)) {
    return absl::DataLossError(fmt::format("{} is not an integer", column));
  }
  return out;
}

absl::StatusOr<absl::Time> ColumnTime(const std::optional<std::string>& value,
                                      std::string_view column) {
  STRATA_ASSIGN_OR_RETURN(const int64_t millis, ColumnInt(value, column));
  return absl::FromUnixMillis(millis);
}

absl::StatusOr<std::optional<absl::Time>> ColumnOptionalTime(
    const std::optional<std::string>& value, std::string_view column) {
  if (!value.has_value()) return std::nullopt;
  return ColumnTime(value, column);
}

absl::StatusOr<TokenHash> ColumnHash(const std::optional<std::string>& value,
                                     std::string_view column) {
  TokenHash hash{};
  if (!value.has_value() || value->size() != hash.size()) {
    return absl::DataLossError(fmt::format("{} is not 32 bytes", column));
  }
  std::copy(value->begin(), value->end(), hash.begin());
  return hash;
}

SqlBlob HashBlob(const TokenHash& hash) {
  return SqlBlob{std::string(reinterpret_cast<const char*>(hash.data()), hash.size())};
}

}  // namespace strata::control
