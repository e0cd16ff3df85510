#include "control/postgres_token_store.h"

#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "common/status_macros.h"
#include "control/control_db.h"
#include "control/postgres_migrations.h"
#include "fmt/format.h"

namespace strata::control {

// Not an anonymous namespace: unity builds compile this file with
// sqlite_token_store.cc, whose helpers have the same jobs.
namespace pg_tokens {

using postgres::PgBytes;
using postgres::PgConnection;
using postgres::PgRow;
using postgres::PgRows;

constexpr std::string_view kInfoColumns = "id, name, scope, created_at, last_used_at, revoked_at";

PgBytes HashBytes(const TokenHash& hash) {
  return PgBytes{std::string(reinterpret_cast<const char*>(hash.data()), hash.size())};
}

absl::StatusOr<TokenScope> Scope(const std::optional<std::string>& value) {
  absl::StatusOr<TokenScope> scope = ParseTokenScope(value.value_or(""));
  if (!scope.ok()) {
    return absl::DataLossError(fmt::format("strata_tokens.scope: {}", value.value_or("")));
  }
  return scope;
}

// One row of SELECT kInfoColumns.
absl::StatusOr<TokenInfo> Info(const PgRow& row) {
  if (row.size() != 6) return absl::InternalError("strata_tokens: unexpected column count");
  TokenInfo info;
  STRATA_ASSIGN_OR_RETURN(info.id, ColumnInt(row[0], "strata_tokens.id"));
  info.name = row[1].value_or("");
  STRATA_ASSIGN_OR_RETURN(info.scope, Scope(row[2]));
  STRATA_ASSIGN_OR_RETURN(info.created_at, ColumnTime(row[3], "strata_tokens.created_at"));
  STRATA_ASSIGN_OR_RETURN(info.last_used_at,
                          ColumnOptionalTime(row[4], "strata_tokens.last_used_at"));
  STRATA_ASSIGN_OR_RETURN(info.revoked_at, ColumnOptionalTime(row[5], "strata_tokens.revoked_at"));
  return info;
}

bool IsId(std::string_view text) {
  if (text.empty()) return false;
  for (char c : text) {
    if (!absl::ascii_isdigit(static_cast<unsigned char>(c))) return false;
  }
  return true;
}

// Inserts a new token inside `txn`, the table locked against other writers
// (other nodes included) until the transaction ends; AlreadyExists when the
// name is taken.
absl::StatusOr<CreatedToken> Insert(PgConnection::Transaction& txn, std::string_view name,
                                    TokenScope scope, absl::Time now) {
  STRATA_ASSIGN_OR_RETURN(
      const PgRows existing,
      txn.Query("SELECT id FROM strata_tokens WHERE name = $1", {std::string(name)}));
  if (!existing.empty()) {
    return absl::AlreadyExistsError(fmt::format("a token named \"{}\" already exists (id {})", name,
                                                existing[0][0].value_or("?")));
  }
  CreatedToken created;
  created.token = GenerateToken();
  STRATA_ASSIGN_OR_RETURN(
      const PgRows rows, txn.Query("INSERT INTO strata_tokens(name, scope, token_hash, created_at) "
                                   "VALUES ($1, $2, $3, $4) RETURNING id",
                                   {std::string(name), std::string(TokenScopeName(scope)),
                                    HashBytes(HashToken(created.token)), absl::ToUnixMillis(now)}));
  if (rows.size() != 1 || rows[0].size() != 1) {
    return absl::InternalError("INSERT ... RETURNING id returned no id");
  }
  STRATA_ASSIGN_OR_RETURN(created.id, ColumnInt(rows[0][0], "strata_tokens.id"));
  return created;
}

constexpr std::string_view kLockForInsert = "LOCK TABLE strata_tokens IN SHARE ROW EXCLUSIVE MODE";

}  // namespace pg_tokens

absl::Status PostgresTokenStore::Annotate(const absl::Status& status, std::string_view what) const {
  if (status.ok() || absl::IsNotFound(status) || absl::IsAlreadyExists(status)) return status;
  return absl::Status(status.code(), fmt::format("control store {}: {}: {}", db_->server(), what,
                                                 std::string(status.message())));
}

PostgresTokenStore::PostgresTokenStore(std::unique_ptr<postgres::PgConnection> db,
                                       TokenStoreOptions options)
    : db_(std::move(db)), options_(std::move(options)) {}

absl::StatusOr<std::unique_ptr<PostgresTokenStore>> PostgresTokenStore::Open(
    const std::string& url, TokenStoreOptions options) {
  STRATA_ASSIGN_OR_RETURN(std::unique_ptr<postgres::PgConnection> db,
                          postgres::PgConnection::Connect(url));
  STRATA_RETURN_IF_ERROR(ApplyPostgresMigrations(*db));
  return std::unique_ptr<PostgresTokenStore>(
      new PostgresTokenStore(std::move(db), std::move(options)));
}

absl::StatusOr<CreatedToken> PostgresTokenStore::Create(std::string_view name, TokenScope scope) {
  STRATA_RETURN_IF_ERROR(ValidateTokenName(name));
  const absl::Time now = options_.clock();
  CreatedToken created;
  STRATA_RETURN_IF_ERROR(
      Annotate(db_->InTransaction([&](postgres::PgConnection::Transaction& txn) -> absl::Status {
        STRATA_RETURN_IF_ERROR(txn.Exec(pg_tokens::kLockForInsert));
        STRATA_ASSIGN_OR_RETURN(created, pg_tokens::Insert(txn, name, scope, now));
        return absl::OkStatus();
      }),
               "create token"));
  return created;
}

absl::StatusOr<std::optional<CreatedToken>> PostgresTokenStore::CreateIfNone(std::string_view name,
                                                                             TokenScope scope) {
  STRATA_RETURN_IF_ERROR(ValidateTokenName(name));
  const absl::Time now = options_.clock();
  std::optional<CreatedToken> created;
  STRATA_RETURN_IF_ERROR(
      Annotate(db_->InTransaction([&](postgres::PgConnection::Transaction& txn) -> absl::Status {
        STRATA_RETURN_IF_ERROR(txn.Exec(pg_tokens::kLockForInsert));
        STRATA_ASSIGN_OR_RETURN(const postgres::PgRows any,
                                txn.Query("SELECT 1 FROM strata_tokens LIMIT 1"));
        if (!any.empty()) return absl::OkStatus();
        STRATA_ASSIGN_OR_RETURN(created, pg_tokens::Insert(txn, name, scope, now));
        return absl::OkStatus();
      }),
               "create token"));
  return created;
}

absl::StatusOr<std::vector<TokenInfo>> PostgresTokenStore::List() {
  absl::StatusOr<postgres::PgRows> found =
      db_->Query(fmt::format("SELECT {} FROM strata_tokens ORDER BY id", pg_tokens::kInfoColumns));
  if (!found.ok()) return Annotate(found.status(), "list tokens");
  std::vector<TokenInfo> tokens;
  tokens.reserve(found->size());
  for (const postgres::PgRow& row : *found) {
    absl::StatusOr<TokenInfo> info = pg_tokens::Info(row);
    if (!info.ok()) return Annotate(info.status(), "list tokens");
    tokens.push_back(*std::move(info));
  }
  return tokens;
}

absl::StatusOr<RevokedToken> PostgresTokenStore::Revoke(std::string_view id_or_name) {
  const bool by_id = pg_tokens::IsId(id_or_name);
  int64_t id = 0;
  if (by_id && !absl::SimpleAtoi(absl::string_view(id_or_name.data(), id_or_name.size()), &id)) {
    return absl::NotFoundError(fmt::format("no token has id {}", id_or_name));
  }
  const absl::Time now = options_.clock();
  RevokedToken result;
  absl::Status status =
      db_->InTransaction([&](postgres::PgConnection::Transaction& txn) -> absl::Status {
        // FOR UPDATE: two nodes revoking at once agree on who revoked it.
        const std::string select =
            fmt::format("SELECT {} FROM strata_tokens WHERE {} = $1 FOR UPDATE",
                        pg_tokens::kInfoColumns, by_id ? "id" : "name");
        STRATA_ASSIGN_OR_RETURN(
            const postgres::PgRows found,
            txn.Query(select, {by_id ? postgres::PgValue(id)
                                     : postgres::PgValue(std::string(id_or_name))}));
        if (found.empty()) {
          return absl::NotFoundError(by_id ? fmt::format("no token has id {}", id)
                                           : fmt::format("no token is named \"{}\"", id_or_name));
        }
        STRATA_ASSIGN_OR_RETURN(result.token, pg_tokens::Info(found[0]));
        if (result.token.revoked_at.has_value()) {
          result.already_revoked = true;
          return absl::OkStatus();
        }
        STRATA_RETURN_IF_ERROR(txn.Exec("UPDATE strata_tokens SET revoked_at = $1 WHERE id = $2",
                                        {absl::ToUnixMillis(now), result.token.id}));
        result.token.revoked_at = absl::FromUnixMillis(absl::ToUnixMillis(now));
        return absl::OkStatus();
      });
  STRATA_RETURN_IF_ERROR(Annotate(status, "revoke token"));
  return result;
}

absl::StatusOr<std::vector<LiveToken>> PostgresTokenStore::LoadLive() {
  absl::StatusOr<postgres::PgRows> found = db_->Query(
      "SELECT id, scope, token_hash FROM strata_tokens WHERE revoked_at IS NULL ORDER BY id");
  if (!found.ok()) return Annotate(found.status(), "load live tokens");
  std::vector<LiveToken> live;
  live.reserve(found->size());
  for (const postgres::PgRow& row : *found) {
    if (row.size() != 3) {
      return Annotate(absl::InternalError("unexpected column count"), "load live tokens");
    }
    LiveToken token;
    absl::Status status = [&]() -> absl::Status {
      STRATA_ASSIGN_OR_RETURN(token.id, ColumnInt(row[0], "strata_tokens.id"));
      STRATA_ASSIGN_OR_RETURN(token.scope, pg_tokens::Scope(row[1]));
      STRATA_ASSIGN_OR_RETURN(
          token.hash,
          ColumnHash(row[2], fmt::format("strata_tokens.token_hash of token {}", token.id)));
      return absl::OkStatus();
    }();
    if (!status.ok()) return Annotate(status, "load live tokens");
    live.push_back(token);
  }
  return live;
}

absl::Status PostgresTokenStore::RecordLastUsed(
    const absl::flat_hash_map<int64_t, absl::Time>& times) {
  if (times.empty()) return absl::OkStatus();
  return Annotate(db_->InTransaction([&](postgres::PgConnection::Transaction& txn) -> absl::Status {
    for (const auto& [id, time] : times) {
      STRATA_RETURN_IF_ERROR(
          txn.Exec("UPDATE strata_tokens SET last_used_at = "
                   "GREATEST(COALESCE(last_used_at, $1::BIGINT), $1::BIGINT) WHERE id = $2",
                   {absl::ToUnixMillis(time), id}));
    }
    return absl::OkStatus();
  }),
                  "record last use");
}

absl::StatusOr<int64_t> PostgresTokenStore::Count() {
  absl::StatusOr<postgres::PgRows> found = db_->Query("SELECT COUNT(*) FROM strata_tokens");
  if (!found.ok()) return Annotate(found.status(), "count tokens");
  if (found->size() != 1 || (*found)[0].size() != 1) {
    return Annotate(absl::InternalError("COUNT(*) returned no row"), "count tokens");
  }
  return ColumnInt((*found)[0][0], "COUNT(*)");
}

}  // namespace strata::control
