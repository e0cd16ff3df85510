#include "postgres/pg_connection.h"

#include <libpq-fe.h>

#include <utility>

#include "fmt/format.h"

namespace strata::postgres {
namespace {

constexpr Oid kByteaOid = 17;

// The message libpq left on the connection, trimmed of its newline.
std::string ConnectionMessage(const PGconn* connection) {
  std::string message = connection != nullptr ? PQerrorMessage(connection) : "out of memory";
  while (!message.empty() && (message.back() == '\n' || message.back() == ' ')) message.pop_back();
  return message;
}

absl::StatusCode CodeForSqlState(std::string_view state) {
  if (state == "23505") return absl::StatusCode::kAlreadyExists;
  if (state == "40001" || state == "40P01") return absl::StatusCode::kAborted;
  if (state.substr(0, 2) == "08" || state.substr(0, 2) == "57") {
    return absl::StatusCode::kUnavailable;
  }
  return absl::StatusCode::kInternal;
}

// The column's text, or for bytea its raw bytes.
std::string CellValue(const PGresult* result, int row, int column) {
  const char* text = PQgetvalue(result, row, column);
  if (PQftype(result, column) != kByteaOid) {
    return std::string(text, PQgetlength(result, row, column));
  }
  size_t length = 0;
  unsigned char* bytes = PQunescapeBytea(reinterpret_cast<const unsigned char*>(text), &length);
  std::string value(reinterpret_cast<const char*>(bytes), length);
  PQfreemem(bytes);
  return value;
}

}  // namespace

absl::StatusOr<std::unique_ptr<PgConnection>> PgConnection::Connect(const std::string& url,
                                                                    PgConnectOptions options) {
  char* parse_error = nullptr;
  PQconninfoOption* parsed = PQconninfoParse(url.c_str(), &parse_error);
  if (parsed == nullptr) {
    std::string message = parse_error != nullptr ? parse_error : "out of memory";
    PQfreemem(parse_error);
    return absl::InvalidArgumentError(
        fmt::format("PostgreSQL URL is malformed ({}); expected "
                    "postgres://user[:password]@host:port/database",
                    message));
  }
  std::string host = "localhost", port = "5432", dbname;
  for (PQconninfoOption* option = parsed; option->keyword != nullptr; ++option) {
    if (option->val == nullptr) continue;
    const std::string_view keyword = option->keyword;
    if (keyword == "host") host = option->val;
    if (keyword == "port") port = option->val;
    if (keyword == "dbname") dbname = option->val;
  }
  PQconninfoFree(parsed);
  std::string server = fmt::format("{}:{}/{}", host, port, dbname);

  const std::string timeout = std::to_string(options.connect_timeout_seconds);
  const char* keywords[] = {"dbname", "connect_timeout", "application_name", nullptr};
  const char* values[] = {url.c_str(), timeout.c_str(), "strata", nullptr};
  PGconn* connection = PQconnectdbParams(keywords, values, /*expand_dbname=*/1);
  if (connection == nullptr || PQstatus(connection) != CONNECTION_OK) {
    std::string message = ConnectionMessage(connection);
    PQfinish(connection);
    return absl::UnavailableError(
        fmt::format("PostgreSQL at {} cannot be reached: {}; check that the server runs and "
                    "that the URL's host, port, user and database are right",
                    server, message));
  }
  // Notices (e.g. "already exists, skipping") are not errors; keep them off stderr.
  PQsetNoticeProcessor(
      connection, [](void*, const char*) {}, nullptr);
  return std::unique_ptr<PgConnection>(new PgConnection(connection, std::move(server)));
}

PgConnection::~PgConnection() { PQfinish(connection_); }

absl::StatusOr<PgRows> PgConnection::QueryLocked(std::string_view sql, const PgParams& params) {
  std::vector<std::string> texts(params.size());
  std::vector<const char*> values(params.size(), nullptr);
  std::vector<int> lengths(params.size(), 0);
  std::vector<int> formats(params.size(), 0);
  for (size_t i = 0; i < params.size(); ++i) {
    const PgValue& value = params[i];
    if (std::holds_alternative<std::nullptr_t>(value)) continue;
    if (const auto* number = std::get_if<int64_t>(&value)) {
      texts[i] = std::to_string(*number);
    } else if (const auto* text = std::get_if<std::string>(&value)) {
      texts[i] = *text;
    } else {
      texts[i] = std::get<PgBytes>(value).bytes;
      formats[i] = 1;
    }
    values[i] = texts[i].data();
    lengths[i] = static_cast<int>(texts[i].size());
  }
  const std::string statement(sql);
  PGresult* result = PQexecParams(connection_, statement.c_str(), static_cast<int>(params.size()),
                                  /*paramTypes=*/nullptr, values.data(), lengths.data(),
                                  formats.data(), /*resultFormat=*/0);
  const ExecStatusType status = PQresultStatus(result);
  if (status != PGRES_COMMAND_OK && status != PGRES_TUPLES_OK) {
    // Copied before PQclear frees the result that holds it.
    const char* field = result != nullptr ? PQresultErrorField(result, PG_DIAG_SQLSTATE) : nullptr;
    const std::string state = field != nullptr ? field : "";
    std::string message = ConnectionMessage(connection_);
    PQclear(result);
    absl::StatusCode code =
        !state.empty() ? CodeForSqlState(state.c_str()) : absl::StatusCode::kUnavailable;
    if (PQstatus(connection_) != CONNECTION_OK) code = absl::StatusCode::kUnavailable;
    if (code == absl::StatusCode::kUnavailable) {
      // Reconnect for the next statement; this one has failed.
      PQreset(connection_);
    }
    return absl::Status(code, fmt::format("PostgreSQL at {}: {}", server_, message));
  }
  PgRows rows;
  const int row_count = PQntuples(result);
  const int column_count = PQnfields(result);
  rows.reserve(row_count);
  for (int r = 0; r < row_count; ++r) {
    PgRow& row = rows.emplace_back(column_count);
    for (int c = 0; c < column_count; ++c) {
      if (!PQgetisnull(result, r, c)) row[c] = CellValue(result, r, c);
    }
  }
  PQclear(result);
  return rows;
}

absl::StatusOr<PgRows> PgConnection::Query(std::string_view sql, const PgParams& params) {
  absl::MutexLock lock(&mu_);
  return QueryLocked(sql, params);
}

absl::Status PgConnection::Exec(std::string_view sql, const PgParams& params) {
  return Query(sql, params).status();
}

absl::Status PgConnection::InTransaction(const std::function<absl::Status(Transaction&)>& fn,
                                         std::string_view begin) {
  absl::MutexLock lock(&mu_);
  absl::StatusOr<PgRows> begun = QueryLocked(begin, {});
  if (!begun.ok()) return begun.status();
  Transaction txn(this);
  absl::Status status = fn(txn);
  if (status.ok()) {
    status = QueryLocked("COMMIT", {}).status();
    if (status.ok()) return status;
  }
  // A failed COMMIT has already ended the transaction; ROLLBACK then only warns.
  (void)QueryLocked("ROLLBACK", {});
  return status;
}

absl::StatusOr<PgRows> PgConnection::Transaction::Query(std::string_view sql,
                                                        const PgParams& params) {
  // The caller holds mu_: Transaction objects exist only inside InTransaction().
  connection_->mu_.AssertHeld();
  return connection_->QueryLocked(sql, params);
}

absl::Status PgConnection::Transaction::Exec(std::string_view sql, const PgParams& params) {
  return Query(sql, params).status();
}

}  // namespace strata::postgres
