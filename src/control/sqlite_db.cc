#include "control/sqlite_db.h"

#include <sqlite3.h>

#include <cctype>
#include <utility>

#include "fmt/format.h"

namespace strata::control {

struct SqliteDb::Handle {
  sqlite3* db = nullptr;
  ~Handle() {
    if (db != nullptr) sqlite3_close_v2(db);
  }
};

namespace {

// Maps an SQLite result code (extended codes are enabled) to a Status, with
// SQLite's message for the connection.
absl::Status SqlError(int rc, std::string_view what, std::string_view detail) {
  std::string message = fmt::format("sqlite: {}: {}", what, detail);
  switch (rc & 0xff) {
    case SQLITE_ERROR:
    case SQLITE_RANGE:
    case SQLITE_MISMATCH:
    case SQLITE_TOOBIG:
      return absl::InvalidArgumentError(message);
    case SQLITE_CONSTRAINT:
      if (rc == SQLITE_CONSTRAINT_UNIQUE || rc == SQLITE_CONSTRAINT_PRIMARYKEY) {
        return absl::AlreadyExistsError(message);
      }
      return absl::InvalidArgumentError(message);
    case SQLITE_BUSY:
    case SQLITE_LOCKED:
    case SQLITE_CANTOPEN:
    case SQLITE_READONLY:
    case SQLITE_FULL:
    case SQLITE_IOERR:
      return absl::UnavailableError(message);
    case SQLITE_CORRUPT:
    case SQLITE_NOTADB:
      return absl::DataLossError(message);
    default:
      return absl::InternalError(message);
  }
}

absl::Status SqlError(sqlite3* db, int rc, std::string_view what) {
  return SqlError(rc, what, sqlite3_errmsg(db));
}

// Owns a prepared statement.
class Statement {
 public:
  Statement() = default;
  ~Statement() { sqlite3_finalize(stmt_); }
  Statement(const Statement&) = delete;
  Statement& operator=(const Statement&) = delete;
  sqlite3_stmt** out() { return &stmt_; }
  sqlite3_stmt* get() const { return stmt_; }

 private:
  sqlite3_stmt* stmt_ = nullptr;
};

bool OnlyWhitespace(const char* begin, const char* end) {
  for (const char* p = begin; p < end; ++p) {
    if (!std::isspace(static_cast<unsigned char>(*p))) return false;
  }
  return true;
}

int BindOne(sqlite3_stmt* stmt, int index, const SqlValue& value) {
  if (std::holds_alternative<std::nullptr_t>(value)) return sqlite3_bind_null(stmt, index);
  if (const auto* i = std::get_if<int64_t>(&value)) return sqlite3_bind_int64(stmt, index, *i);
  if (const auto* text = std::get_if<std::string>(&value)) {
    return sqlite3_bind_text64(stmt, index, text->data(), text->size(), SQLITE_TRANSIENT,
                               SQLITE_UTF8);
  }
  const std::string& bytes = std::get<SqlBlob>(value).bytes;
  return sqlite3_bind_blob64(stmt, index, bytes.data(), bytes.size(), SQLITE_TRANSIENT);
}

std::optional<std::string> ColumnValue(sqlite3_stmt* stmt, int column) {
  switch (sqlite3_column_type(stmt, column)) {
    case SQLITE_NULL:
      return std::nullopt;
    case SQLITE_BLOB: {
      const void* blob = sqlite3_column_blob(stmt, column);
      const int size = sqlite3_column_bytes(stmt, column);
      if (blob == nullptr) return std::string();
      return std::string(static_cast<const char*>(blob), static_cast<size_t>(size));
    }
    default: {
      const unsigned char* text = sqlite3_column_text(stmt, column);
      const int size = sqlite3_column_bytes(stmt, column);
      if (text == nullptr) return std::string();
      return std::string(reinterpret_cast<const char*>(text), static_cast<size_t>(size));
    }
  }
}

}  // namespace

SqliteDb::SqliteDb(std::string path, std::unique_ptr<Handle> handle)
    : path_(std::move(path)), handle_(std::move(handle)) {}

SqliteDb::~SqliteDb() = default;

absl::StatusOr<std::unique_ptr<SqliteDb>> SqliteDb::Open(const std::string& path) {
  return Open(path, SqliteDbOptions{});
}

absl::StatusOr<std::unique_ptr<SqliteDb>> SqliteDb::Open(const std::string& path,
                                                         const SqliteDbOptions& options) {
  auto handle = std::make_unique<Handle>();
  const int flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_FULLMUTEX;
  const int rc = sqlite3_open_v2(path.c_str(), &handle->db, flags, nullptr);
  if (rc != SQLITE_OK) {
    std::string message = handle->db != nullptr ? sqlite3_errmsg(handle->db) : sqlite3_errstr(rc);
    return absl::UnavailableError(fmt::format("sqlite: cannot open {}: {}", path, message));
  }
  sqlite3_extended_result_codes(handle->db, 1);
  // Before the first statement: switching to WAL itself needs a lock that
  // another process may hold for a moment.
  sqlite3_busy_timeout(handle->db, options.busy_timeout_ms);
  auto db = std::unique_ptr<SqliteDb>(new SqliteDb(path, std::move(handle)));
  auto mode = db->Query("PRAGMA journal_mode=WAL");
  if (!mode.ok()) return mode.status();
  if (mode->size() != 1 || (*mode)[0].size() != 1 || (*mode)[0][0] != "wal") {
    return absl::InternalError(fmt::format("sqlite: {} did not switch to WAL mode", path));
  }
  if (absl::Status s = db->Exec("PRAGMA synchronous=FULL; PRAGMA foreign_keys=ON"); !s.ok()) {
    return s;
  }
  return db;
}

absl::Status SqliteDb::ExecScriptLocked(std::string_view sql) {
  const std::string text(sql);
  char* error = nullptr;
  const int rc = sqlite3_exec(handle_->db, text.c_str(), nullptr, nullptr, &error);
  if (rc != SQLITE_OK) {
    std::string message = error != nullptr ? error : sqlite3_errstr(rc);
    sqlite3_free(error);
    return SqlError(rc, "exec", message);
  }
  return absl::OkStatus();
}

absl::Status SqliteDb::RunLocked(std::string_view sql, const SqlParams& params, SqlRows* rows) {
  sqlite3* db = handle_->db;
  Statement stmt;
  const char* tail = nullptr;
  int rc = sqlite3_prepare_v2(db, sql.data(), static_cast<int>(sql.size()), stmt.out(), &tail);
  if (rc != SQLITE_OK) return SqlError(db, rc, "prepare");
  if (stmt.get() == nullptr) return absl::InvalidArgumentError("sqlite: no statement in the SQL");
  if (tail != nullptr && !OnlyWhitespace(tail, sql.data() + sql.size())) {
    return absl::InvalidArgumentError(
        fmt::format("sqlite: one statement at a time; extra SQL after it: {}",
                    std::string_view(tail, static_cast<size_t>(sql.data() + sql.size() - tail))));
  }
  const int expected = sqlite3_bind_parameter_count(stmt.get());
  if (static_cast<size_t>(expected) != params.size()) {
    return absl::InvalidArgumentError(fmt::format(
        "sqlite: the statement has {} parameters, {} were given", expected, params.size()));
  }
  for (size_t i = 0; i < params.size(); ++i) {
    rc = BindOne(stmt.get(), static_cast<int>(i + 1), params[i]);
    if (rc != SQLITE_OK) return SqlError(db, rc, fmt::format("bind parameter {}", i + 1));
  }
  const int columns = sqlite3_column_count(stmt.get());
  while ((rc = sqlite3_step(stmt.get())) == SQLITE_ROW) {
    if (rows == nullptr) continue;
    SqlRow& row = rows->emplace_back();
    row.reserve(static_cast<size_t>(columns));
    for (int c = 0; c < columns; ++c) row.push_back(ColumnValue(stmt.get(), c));
  }
  if (rc != SQLITE_DONE) return SqlError(db, rc, "step");
  return absl::OkStatus();
}

absl::Status SqliteDb::Exec(std::string_view sql) {
  MutexLock lock(&mu_);
  return ExecScriptLocked(sql);
}

absl::Status SqliteDb::Exec(std::string_view sql, const SqlParams& params) {
  MutexLock lock(&mu_);
  return RunLocked(sql, params, nullptr);
}

absl::StatusOr<SqlRows> SqliteDb::Query(std::string_view sql, const SqlParams& params) {
  MutexLock lock(&mu_);
  SqlRows rows;
  if (absl::Status s = RunLocked(sql, params, &rows); !s.ok()) return s;
  return rows;
}

absl::Status SqliteDb::Transaction::ExecScript(std::string_view sql) {
  db_->mu_.AssertHeld();  // InTransaction() holds it for the body's whole run
  return db_->ExecScriptLocked(sql);
}

absl::Status SqliteDb::Transaction::Exec(std::string_view sql, const SqlParams& params) {
  db_->mu_.AssertHeld();
  return db_->RunLocked(sql, params, nullptr);
}

absl::StatusOr<SqlRows> SqliteDb::Transaction::Query(std::string_view sql,
                                                     const SqlParams& params) {
  db_->mu_.AssertHeld();
  SqlRows rows;
  if (absl::Status s = db_->RunLocked(sql, params, &rows); !s.ok()) return s;
  return rows;
}

absl::Status SqliteDb::InTransaction(const std::function<absl::Status(Transaction&)>& body) {
  MutexLock lock(&mu_);
  if (absl::Status s = ExecScriptLocked("BEGIN IMMEDIATE"); !s.ok()) return s;
  Transaction transaction(this);
  absl::Status status = body(transaction);
  if (status.ok()) status = ExecScriptLocked("COMMIT");
  if (!status.ok() && !sqlite3_get_autocommit(handle_->db)) {
    // Best effort: a failed ROLLBACK leaves nothing more to report than the
    // error that caused it, and SQLite rolls back on close regardless.
    (void)ExecScriptLocked("ROLLBACK");
  }
  return status;
}

std::string SqliteDb::LibraryVersion() { return sqlite3_libversion(); }

}  // namespace strata::control
