#include "control/sqlite_db.h"

#include <sqlite3.h>

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

absl::Status SqlError(sqlite3* db, int rc, std::string_view what) {
  std::string message = fmt::format("sqlite: {}: {}", what, sqlite3_errmsg(db));
  if (rc == SQLITE_ERROR) return absl::InvalidArgumentError(message);
  return absl::InternalError(message);
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

}  // namespace

SqliteDb::SqliteDb(std::unique_ptr<Handle> handle) : handle_(std::move(handle)) {}

SqliteDb::~SqliteDb() = default;

absl::StatusOr<std::unique_ptr<SqliteDb>> SqliteDb::Open(const std::string& path) {
  auto handle = std::make_unique<Handle>();
  const int flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_FULLMUTEX;
  const int rc = sqlite3_open_v2(path.c_str(), &handle->db, flags, nullptr);
  if (rc != SQLITE_OK) {
    std::string message = handle->db != nullptr ? sqlite3_errmsg(handle->db) : sqlite3_errstr(rc);
    return absl::UnavailableError(fmt::format("sqlite: cannot open {}: {}", path, message));
  }
  auto db = std::unique_ptr<SqliteDb>(new SqliteDb(std::move(handle)));
  auto mode = db->Query("PRAGMA journal_mode=WAL");
  if (!mode.ok()) return mode.status();
  if (mode->size() != 1 || (*mode)[0][0] != "wal") {
    return absl::InternalError(fmt::format("sqlite: {} did not switch to WAL mode", path));
  }
  if (absl::Status s = db->Exec("PRAGMA synchronous=FULL; PRAGMA foreign_keys=ON"); !s.ok()) {
    return s;
  }
  return db;
}

absl::Status SqliteDb::Exec(std::string_view sql) {
  const std::string text(sql);
  MutexLock lock(&mu_);
  char* error = nullptr;
  const int rc = sqlite3_exec(handle_->db, text.c_str(), nullptr, nullptr, &error);
  if (rc != SQLITE_OK) {
    std::string message = error != nullptr ? error : sqlite3_errstr(rc);
    sqlite3_free(error);
    if (rc == SQLITE_ERROR) return absl::InvalidArgumentError(fmt::format("sqlite: {}", message));
    return absl::InternalError(fmt::format("sqlite: {}", message));
  }
  return absl::OkStatus();
}

absl::StatusOr<std::vector<std::vector<std::optional<std::string>>>> SqliteDb::Query(
    std::string_view sql) {
  MutexLock lock(&mu_);
  Statement stmt;
  int rc = sqlite3_prepare_v2(handle_->db, sql.data(), static_cast<int>(sql.size()), stmt.out(),
                              nullptr);
  if (rc != SQLITE_OK) return SqlError(handle_->db, rc, "prepare");
  std::vector<std::vector<std::optional<std::string>>> rows;
  const int columns = sqlite3_column_count(stmt.get());
  while ((rc = sqlite3_step(stmt.get())) == SQLITE_ROW) {
    auto& row = rows.emplace_back();
    for (int c = 0; c < columns; ++c) {
      const unsigned char* text = sqlite3_column_text(stmt.get(), c);
      if (text == nullptr) {
        row.emplace_back(std::nullopt);
      } else {
        row.emplace_back(std::string(reinterpret_cast<const char*>(text),
                                     static_cast<size_t>(sqlite3_column_bytes(stmt.get(), c))));
      }
    }
  }
  if (rc != SQLITE_DONE) return SqlError(handle_->db, rc, "step");
  return rows;
}

std::string SqliteDb::LibraryVersion() { return sqlite3_libversion(); }

}  // namespace strata::control
