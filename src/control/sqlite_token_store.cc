#include "control/sqlite_token_store.h"

#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "common/status_macros.h"
#include "control/control_db.h"
#include "fmt/format.h"

namespace strata::control {
namespace {

constexpr std::string_view kInfoColumns = "id, name, scope, created_at, last_used_at, revoked_at";

absl::StatusOr<int64_t> ParseInt(const std::optional<std::string>& value, std::string_view column) {
  return ColumnInt(value, fmt::format("tokens.{}", column));
}

absl::StatusOr<std::optional<absl::Time>> ParseOptionalTime(const std::optional<std::string>& value,
                                                            std::string_view column) {
  return ColumnOptionalTime(value, fmt::format("tokens.{}", column));
}

absl::StatusOr<TokenScope> ParseScope(const std::optional<std::string>& value) {
  absl::StatusOr<TokenScope> scope = ParseTokenScope(value.value_or(""));
  if (!scope.ok()) return absl::DataLossError(fmt::format("tokens.scope: {}", value.value_or("")));
  return scope;
}

// One row of SELECT kInfoColumns.
absl::StatusOr<TokenInfo> InfoFromRow(const SqlRow& row) {
  if (row.size() != 6) return absl::InternalError("tokens: unexpected column count");
  TokenInfo info;
  STRATA_ASSIGN_OR_RETURN(info.id, ParseInt(row[0], "id"));
  info.name = row[1].value_or("");
  STRATA_ASSIGN_OR_RETURN(info.scope, ParseScope(row[2]));
  STRATA_ASSIGN_OR_RETURN(const int64_t created_ms, ParseInt(row[3], "created_at"));
  info.created_at = absl::FromUnixMillis(created_ms);
  STRATA_ASSIGN_OR_RETURN(info.last_used_at, ParseOptionalTime(row[4], "last_used_at"));
  STRATA_ASSIGN_OR_RETURN(info.revoked_at, ParseOptionalTime(row[5], "revoked_at"));
  return info;
}

// One row of SELECT id, scope, token_hash.
absl::StatusOr<LiveToken> LiveFromRow(const SqlRow& row) {
  if (row.size() != 3) return absl::InternalError("tokens: unexpected column count");
  LiveToken token;
  STRATA_ASSIGN_OR_RETURN(token.id, ParseInt(row[0], "id"));
  STRATA_ASSIGN_OR_RETURN(token.scope, ParseScope(row[1]));
  STRATA_ASSIGN_OR_RETURN(
      token.hash, ColumnHash(row[2], fmt::format("tokens.token_hash of token {}", token.id)));
  return token;
}

bool AllDigits(std::string_view text) {
  if (text.empty()) return false;
  for (char c : text) {
    if (!absl::ascii_isdigit(static_cast<unsigned char>(c))) return false;
  }
  return true;
}

// Inserts a new token inside `txn`; AlreadyExists when the name is taken.
absl::StatusOr<CreatedToken> InsertToken(SqliteDb::Transaction& txn, std::string_view name,
                                         TokenScope scope, absl::Time now) {
  STRATA_ASSIGN_OR_RETURN(const SqlRows existing,
                          txn.Query("SELECT id FROM tokens WHERE name = ?", {std::string(name)}));
  if (!existing.empty()) {
    return absl::AlreadyExistsError(fmt::format("a token named \"{}\" already exists (id {})", name,
                                                existing[0][0].value_or("?")));
  }
  CreatedToken created;
  created.token = GenerateToken();
  STRATA_ASSIGN_OR_RETURN(
      const SqlRows rows,
      txn.Query("INSERT INTO tokens(name, scope, token_hash, created_at) VALUES (?, ?, ?, ?) "
                "RETURNING id",
                {std::string(name), std::string(TokenScopeName(scope)),
                 HashBlob(HashToken(created.token)), absl::ToUnixMillis(now)}));
  if (rows.size() != 1 || rows[0].size() != 1) {
    return absl::InternalError("INSERT ... RETURNING id returned no id");
  }
  STRATA_ASSIGN_OR_RETURN(created.id, ParseInt(rows[0][0], "id"));
  return created;
}

}  // namespace

absl::Status SqliteTokenStore::Annotate(const absl::Status& status, std::string_view what) const {
  if (status.ok() || absl::IsNotFound(status) || absl::IsAlreadyExists(status)) return status;
  return absl::Status(status.code(), fmt::format("control database {}: {}: {}", path(), what,
                                                 std::string(status.message())));
}

SqliteTokenStore::SqliteTokenStore(std::unique_ptr<SqliteDb> db, TokenStoreOptions options)
    : db_(std::move(db)), options_(std::move(options)) {}

absl::StatusOr<std::unique_ptr<SqliteTokenStore>> SqliteTokenStore::Open(
    const std::string& db_path, TokenStoreOptions options) {
  STRATA_ASSIGN_OR_RETURN(std::unique_ptr<SqliteDb> db, OpenControlDb(db_path, options.clock()));
  return std::unique_ptr<SqliteTokenStore>(new SqliteTokenStore(std::move(db), std::move(options)));
}

absl::StatusOr<CreatedToken> SqliteTokenStore::Create(std::string_view name, TokenScope scope) {
  STRATA_RETURN_IF_ERROR(ValidateTokenName(name));
  const absl::Time now = options_.clock();
  CreatedToken created;
  STRATA_RETURN_IF_ERROR(
      Annotate(db_->InTransaction([&](SqliteDb::Transaction& txn) -> absl::Status {
        STRATA_ASSIGN_OR_RETURN(created, InsertToken(txn, name, scope, now));
        return absl::OkStatus();
      }),
               "create token"));
  return created;
}

absl::StatusOr<std::optional<CreatedToken>> SqliteTokenStore::CreateIfNone(std::string_view name,
                                                                           TokenScope scope) {
  STRATA_RETURN_IF_ERROR(ValidateTokenName(name));
  const absl::Time now = options_.clock();
  std::optional<CreatedToken> created;
  STRATA_RETURN_IF_ERROR(
      Annotate(db_->InTransaction([&](SqliteDb::Transaction& txn) -> absl::Status {
        STRATA_ASSIGN_OR_RETURN(const SqlRows rows, txn.Query("SELECT 1 FROM tokens LIMIT 1"));
        if (!rows.empty()) return absl::OkStatus();
        STRATA_ASSIGN_OR_RETURN(created, InsertToken(txn, name, scope, now));
        return absl::OkStatus();
      }),
               "create token"));
  return created;
}

absl::StatusOr<std::vector<TokenInfo>> SqliteTokenStore::List() {
  absl::StatusOr<SqlRows> rows =
      db_->Query(fmt::format("SELECT {} FROM tokens ORDER BY id", kInfoColumns));
  if (!rows.ok()) return Annotate(rows.status(), "list tokens");
  std::vector<TokenInfo> tokens;
  tokens.reserve(rows->size());
  for (const SqlRow& row : *rows) {
    absl::StatusOr<TokenInfo> info = InfoFromRow(row);
    if (!info.ok()) return Annotate(info.status(), "list tokens");
    tokens.push_back(*std::move(info));
  }
  return tokens;
}

absl::StatusOr<RevokedToken> SqliteTokenStore::Revoke(std::string_view id_or_name) {
  const bool by_id = AllDigits(id_or_name);
  int64_t id = 0;
  if (by_id && !absl::SimpleAtoi(absl::string_view(id_or_name.data(), id_or_name.size()), &id)) {
    return absl::NotFoundError(fmt::format("no token has id {}", id_or_name));
  }
  const absl::Time now = options_.clock();
  RevokedToken result;
  absl::Status status = db_->InTransaction([&](SqliteDb::Transaction& txn) -> absl::Status {
    const std::string select =
        fmt::format("SELECT {} FROM tokens WHERE {} = ?", kInfoColumns, by_id ? "id" : "name");
    STRATA_ASSIGN_OR_RETURN(
        const SqlRows rows,
        txn.Query(select, {by_id ? SqlValue(id) : SqlValue(std::string(id_or_name))}));
    if (rows.empty()) {
      return absl::NotFoundError(by_id ? fmt::format("no token has id {}", id)
                                       : fmt::format("no token is named \"{}\"", id_or_name));
    }
    STRATA_ASSIGN_OR_RETURN(result.token, InfoFromRow(rows[0]));
    if (result.token.revoked_at.has_value()) {
      result.already_revoked = true;
      return absl::OkStatus();
    }
    STRATA_RETURN_IF_ERROR(txn.Exec("UPDATE tokens SET revoked_at = ? WHERE id = ?",
                                    {absl::ToUnixMillis(now), result.token.id}));
    result.token.revoked_at = absl::FromUnixMillis(absl::ToUnixMillis(now));
    return absl::OkStatus();
  });
  STRATA_RETURN_IF_ERROR(Annotate(status, "revoke token"));
  return result;
}

absl::StatusOr<std::vector<LiveToken>> SqliteTokenStore::LoadLive() {
  absl::StatusOr<SqlRows> rows =
      db_->Query("SELECT id, scope, token_hash FROM tokens WHERE revoked_at IS NULL ORDER BY id");
  if (!rows.ok()) return Annotate(rows.status(), "load live tokens");
  std::vector<LiveToken> live;
  live.reserve(rows->size());
  for (const SqlRow& row : *rows) {
    absl::StatusOr<LiveToken> token = LiveFromRow(row);
    if (!token.ok()) return Annotate(token.status(), "load live tokens");
    live.push_back(*token);
  }
  return live;
}

absl::Status SqliteTokenStore::RecordLastUsed(
    const absl::flat_hash_map<int64_t, absl::Time>& times) {
  if (times.empty()) return absl::OkStatus();
  return Annotate(db_->InTransaction([&](SqliteDb::Transaction& txn) -> absl::Status {
    for (const auto& [id, time] : times) {
      STRATA_RETURN_IF_ERROR(txn.Exec(
          "UPDATE tokens SET last_used_at = MAX(COALESCE(last_used_at, ?1), ?1) WHERE id = ?2",
          {absl::ToUnixMillis(time), id}));
    }
    return absl::OkStatus();
  }),
                  "record last use");
}

absl::StatusOr<int64_t> SqliteTokenStore::Count() {
  absl::StatusOr<SqlRows> rows = db_->Query("SELECT COUNT(*) FROM tokens");
  if (!rows.ok()) return Annotate(rows.status(), "count tokens");
  if (rows->size() != 1 || (*rows)[0].size() != 1) {
    return Annotate(absl::InternalError("COUNT(*) returned no row"), "count tokens");
  }
  return ParseInt((*rows)[0][0], "COUNT(*)");
}

}  // namespace strata::control
