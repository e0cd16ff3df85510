#include "query/duckdb_engine.h"

#include <duckdb.h>

#include <utility>

#include "fmt/format.h"

namespace strata::query {

struct DuckDbEngine::Handles {
  duckdb_database database = nullptr;
  duckdb_connection connection = nullptr;

  ~Handles() {
    if (connection != nullptr) duckdb_disconnect(&connection);
    if (database != nullptr) duckdb_close(&database);
  }
};

namespace {

// Owns a duckdb_config for the duration of Open().
class ConfigGuard {
 public:
  ConfigGuard() = default;
  ~ConfigGuard() {
    if (config_ != nullptr) duckdb_destroy_config(&config_);
  }
  ConfigGuard(const ConfigGuard&) = delete;
  ConfigGuard& operator=(const ConfigGuard&) = delete;

  absl::Status Create() {
    if (duckdb_create_config(&config_) != DuckDBSuccess) {
      return absl::InternalError("duckdb: cannot create a configuration");
    }
    return absl::OkStatus();
  }
  absl::Status Set(const char* name, const std::string& value) {
    if (duckdb_set_config(config_, name, value.c_str()) != DuckDBSuccess) {
      return absl::InvalidArgumentError(
          fmt::format("duckdb: rejected setting {}={}", name, value));
    }
    return absl::OkStatus();
  }
  duckdb_config get() const { return config_; }

 private:
  duckdb_config config_ = nullptr;
};

// Owns a duckdb_result.
class ResultGuard {
 public:
  ResultGuard() = default;
  ~ResultGuard() { duckdb_destroy_result(&result_); }
  ResultGuard(const ResultGuard&) = delete;
  ResultGuard& operator=(const ResultGuard&) = delete;
  duckdb_result* get() { return &result_; }

 private:
  duckdb_result result_{};
};

QueryResult CollectRows(duckdb_result* result) {
  QueryResult out;
  const idx_t columns = duckdb_column_count(result);
  const idx_t rows = duckdb_row_count(result);
  out.columns.reserve(columns);
  for (idx_t c = 0; c < columns; ++c) out.columns.emplace_back(duckdb_column_name(result, c));
  out.rows.reserve(rows);
  for (idx_t r = 0; r < rows; ++r) {
    auto& row = out.rows.emplace_back();
    row.reserve(columns);
    for (idx_t c = 0; c < columns; ++c) {
      if (duckdb_value_is_null(result, c, r)) {
        row.emplace_back(std::nullopt);
        continue;
      }
      char* text = duckdb_value_varchar(result, c, r);
      row.emplace_back(text != nullptr ? std::string(text) : std::string());
      duckdb_free(text);
    }
  }
  return out;
}

}  // namespace

DuckDbEngine::DuckDbEngine(std::unique_ptr<Handles> handles) : handles_(std::move(handles)) {}

DuckDbEngine::~DuckDbEngine() = default;

absl::StatusOr<std::unique_ptr<DuckDbEngine>> DuckDbEngine::Open(const EngineOptions& options) {
  ConfigGuard config;
  if (absl::Status s = config.Create(); !s.ok()) return s;
  if (options.threads > 0) {
    if (absl::Status s = config.Set("threads", std::to_string(options.threads)); !s.ok()) return s;
  }
  if (!options.memory_limit.empty()) {
    if (absl::Status s = config.Set("memory_limit", options.memory_limit); !s.ok()) return s;
  }
  auto handles = std::make_unique<Handles>();
  char* error = nullptr;
  const char* path = options.database_path.empty() ? nullptr : options.database_path.c_str();
  if (duckdb_open_ext(path, &handles->database, config.get(), &error) != DuckDBSuccess) {
    std::string message = error != nullptr ? error : "unknown error";
    duckdb_free(error);
    return absl::InternalError(fmt::format("duckdb: cannot open database: {}", message));
  }
  if (duckdb_connect(handles->database, &handles->connection) != DuckDBSuccess) {
    return absl::InternalError("duckdb: cannot connect");
  }
  return std::unique_ptr<DuckDbEngine>(new DuckDbEngine(std::move(handles)));
}

absl::StatusOr<QueryResult> DuckDbEngine::Query(std::string_view sql) {
  const std::string text(sql);
  MutexLock lock(&mu_);
  ResultGuard result;
  if (duckdb_query(handles_->connection, text.c_str(), result.get()) != DuckDBSuccess) {
    const char* error = duckdb_result_error(result.get());
    return absl::InvalidArgumentError(
        fmt::format("duckdb: {}", error != nullptr ? error : "query failed"));
  }
  return CollectRows(result.get());
}

std::string DuckDbEngine::LibraryVersion() { return duckdb_library_version(); }

}  // namespace strata::query
