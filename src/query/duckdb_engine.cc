#include "query/duckdb_engine.h"

#include <duckdb.h>

#include <algorithm>
#include <cstring>
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

namespace {

// How one Parquet column is held in DuckDB: the SQL type name of a value
// (or list element) and the element's DuckDB type.
struct DuckColumnType {
  std::string sql;
  duckdb_type element;
};

absl::StatusOr<DuckColumnType> ColumnTypeFor(const parquet::ColumnSpec& spec) {
  using Kind = parquet::LogicalType::Kind;
  const parquet::LogicalType& logical = spec.logical_type;
  DuckColumnType t;
  switch (spec.type) {
    case parquet::PhysicalType::kBoolean:
      t = {"BOOLEAN", DUCKDB_TYPE_BOOLEAN};
      break;
    case parquet::PhysicalType::kInt32:
      if (logical.kind == Kind::kInteger && logical.bit_width == 8) {
        t = logical.is_signed ? DuckColumnType{"TINYINT", DUCKDB_TYPE_TINYINT}
                              : DuckColumnType{"UTINYINT", DUCKDB_TYPE_UTINYINT};
      } else if (logical.kind == Kind::kInteger && logical.bit_width == 16) {
        t = logical.is_signed ? DuckColumnType{"SMALLINT", DUCKDB_TYPE_SMALLINT}
                              : DuckColumnType{"USMALLINT", DUCKDB_TYPE_USMALLINT};
      } else if (logical.kind == Kind::kInteger && !logical.is_signed) {
        t = {"UINTEGER", DUCKDB_TYPE_UINTEGER};
      } else {
        t = {"INTEGER", DUCKDB_TYPE_INTEGER};
      }
      break;
    case parquet::PhysicalType::kInt64:
      if (logical.kind == Kind::kInteger && !logical.is_signed) {
        t = {"UBIGINT", DUCKDB_TYPE_UBIGINT};
      } else if (logical.kind == Kind::kTimestamp && logical.unit == parquet::TimeUnit::kNanos) {
        t = {"TIMESTAMP_NS", DUCKDB_TYPE_TIMESTAMP_NS};
      } else {
        t = {"BIGINT", DUCKDB_TYPE_BIGINT};
      }
      break;
    case parquet::PhysicalType::kDouble:
      t = {"DOUBLE", DUCKDB_TYPE_DOUBLE};
      break;
    case parquet::PhysicalType::kByteArray:
      t = logical.kind == Kind::kString ? DuckColumnType{"VARCHAR", DUCKDB_TYPE_VARCHAR}
                                        : DuckColumnType{"BLOB", DUCKDB_TYPE_BLOB};
      break;
    case parquet::PhysicalType::kFixedLenByteArray:
      t = {"BLOB", DUCKDB_TYPE_BLOB};
      break;
    default:
      return absl::InvalidArgumentError(
          fmt::format("duckdb: column {}: no DuckDB type for its Parquet type", spec.name));
  }
  if (spec.list) t.sql += "[]";
  return t;
}

// Writes element `e` of `column` into slot `slot` of `vector` (whose type is
// `type`), or marks the slot null.
void WriteSlot(const parquet::ColumnVector& column, size_t e, duckdb_type type,
               duckdb_vector vector, idx_t slot) {
  if (column.is_null(e)) {
    duckdb_vector_ensure_validity_writable(vector);
    duckdb_validity_set_row_invalid(duckdb_vector_get_validity(vector), slot);
    return;
  }
  void* data = duckdb_vector_get_data(vector);
  switch (type) {
    case DUCKDB_TYPE_BOOLEAN:
      static_cast<bool*>(data)[slot] = column.bools[e] != 0;
      break;
    case DUCKDB_TYPE_TINYINT:
    case DUCKDB_TYPE_UTINYINT:
      static_cast<uint8_t*>(data)[slot] = static_cast<uint8_t>(column.int32s[e]);
      break;
    case DUCKDB_TYPE_SMALLINT:
    case DUCKDB_TYPE_USMALLINT:
      static_cast<uint16_t*>(data)[slot] = static_cast<uint16_t>(column.int32s[e]);
      break;
    case DUCKDB_TYPE_INTEGER:
    case DUCKDB_TYPE_UINTEGER:
      std::memcpy(static_cast<char*>(data) + slot * 4, &column.int32s[e], 4);
      break;
    case DUCKDB_TYPE_BIGINT:
    case DUCKDB_TYPE_UBIGINT:
    case DUCKDB_TYPE_TIMESTAMP_NS:
      std::memcpy(static_cast<char*>(data) + slot * 8, &column.int64s[e], 8);
      break;
    case DUCKDB_TYPE_DOUBLE:
      static_cast<double*>(data)[slot] = column.doubles[e];
      break;
    default: {  // VARCHAR, BLOB
      const std::string_view bytes = column.bytes_at(e);
      duckdb_vector_assign_string_element_len(vector, slot, bytes.data(), bytes.size());
      break;
    }
  }
}

// Fills `vector` with rows [begin, begin + count) of `column`.
void FillVector(const parquet::ColumnVector& column, duckdb_type element, size_t begin,
                size_t count, duckdb_vector vector) {
  if (!column.is_list) {
    for (size_t i = 0; i < count; ++i) WriteSlot(column, begin + i, element, vector, i);
    return;
  }
  auto* entries = static_cast<duckdb_list_entry*>(duckdb_vector_get_data(vector));
  duckdb_vector child = duckdb_list_vector_get_child(vector);
  idx_t child_size = 0;
  for (size_t i = 0; i < count; ++i) {
    const size_t row = begin + i;
    if (column.is_null_list(row)) {
      duckdb_vector_ensure_validity_writable(vector);
      duckdb_validity_set_row_invalid(duckdb_vector_get_validity(vector), i);
      entries[i] = {child_size, 0};
      continue;
    }
    const parquet::ListRange range = column.lists[row];
    duckdb_list_vector_reserve(vector, child_size + range.count);
    child = duckdb_list_vector_get_child(vector);  // reserve may reallocate
    for (uint64_t k = 0; k < range.count; ++k) {
      WriteSlot(column, range.begin + k, element, child, child_size + k);
    }
    entries[i] = {child_size, range.count};
    child_size += range.count;
  }
  duckdb_list_vector_set_size(vector, child_size);
}

}  // namespace

absl::Status DuckDbEngine::CreateTableFromColumns(std::string_view table,
                                                  std::span<const parquet::ColumnSpec> specs,
                                                  std::span<const parquet::ColumnVector> columns) {
  if (specs.size() != columns.size() || specs.empty()) {
    return absl::InvalidArgumentError("duckdb: one column vector per spec is needed");
  }
  std::vector<DuckColumnType> types;
  std::string ddl = fmt::format("CREATE OR REPLACE TABLE \"{}\" (", table);
  for (size_t c = 0; c < specs.size(); ++c) {
    absl::StatusOr<DuckColumnType> type = ColumnTypeFor(specs[c]);
    if (!type.ok()) return type.status();
    if (columns[c].size() != columns[0].size() || columns[c].is_list != specs[c].list) {
      return absl::InvalidArgumentError(
          fmt::format("duckdb: column {} does not match the others", specs[c].name));
    }
    ddl += fmt::format("{}\"{}\" {}", c == 0 ? "" : ", ", specs[c].name, type->sql);
    types.push_back(*std::move(type));
  }
  ddl += ")";
  if (absl::StatusOr<QueryResult> created = Query(ddl); !created.ok()) return created.status();

  MutexLock lock(&mu_);
  std::vector<duckdb_logical_type> logical;
  for (const DuckColumnType& t : types) {
    duckdb_logical_type element = duckdb_create_logical_type(t.element);
    if (t.sql.ends_with("[]")) {
      logical.push_back(duckdb_create_list_type(element));
      duckdb_destroy_logical_type(&element);
    } else {
      logical.push_back(element);
    }
  }
  duckdb_data_chunk chunk = duckdb_create_data_chunk(logical.data(), logical.size());
  for (duckdb_logical_type& t : logical) duckdb_destroy_logical_type(&t);
  duckdb_appender appender = nullptr;
  const std::string table_name(table);
  absl::Status status;
  if (duckdb_appender_create(handles_->connection, nullptr, table_name.c_str(), &appender) !=
      DuckDBSuccess) {
    status = absl::InternalError(fmt::format("duckdb: cannot append to {}", table));
  }
  const size_t rows = columns[0].size();
  const size_t chunk_rows = duckdb_vector_size();
  for (size_t begin = 0; status.ok() && begin < rows; begin += chunk_rows) {
    const size_t count = std::min(chunk_rows, rows - begin);
    duckdb_data_chunk_reset(chunk);
    for (size_t c = 0; c < columns.size(); ++c) {
      FillVector(columns[c], types[c].element, begin, count,
                 duckdb_data_chunk_get_vector(chunk, c));
    }
    duckdb_data_chunk_set_size(chunk, count);
    if (duckdb_append_data_chunk(appender, chunk) != DuckDBSuccess) {
      status = absl::InternalError(
          fmt::format("duckdb: append to {} failed: {}", table, duckdb_appender_error(appender)));
    }
  }
  if (appender != nullptr) {
    if (status.ok() && duckdb_appender_close(appender) != DuckDBSuccess) {
      status = absl::InternalError(
          fmt::format("duckdb: append to {} failed: {}", table, duckdb_appender_error(appender)));
    }
    duckdb_appender_destroy(&appender);
  }
  duckdb_destroy_data_chunk(&chunk);
  return status;
}

std::string DuckDbEngine::LibraryVersion() { return duckdb_library_version(); }

}  // namespace strata::query
