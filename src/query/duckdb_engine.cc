#include "query/duckdb_engine.h"

#include <duckdb.h>

#include <algorithm>
#include <cctype>
#include <cstring>
#include <deque>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/cord.h"
#include "absl/strings/str_cat.h"
#include "common/check.h"
#include "fmt/format.h"
#include "otlp/any_value_codec.h"
#include "otlp/any_value_path.h"
#include "otlp/json_writer.h"
#include "query/sql_helpers.h"
#include "query/typed_chunk.h"
#include "query/value_json.h"

namespace strata::query {

std::string SqlLiteral(std::string_view text) {
  std::string out = "'";
  for (char c : text) {
    if (c == '\'') out += '\'';
    out += c;
  }
  out += '\'';
  return out;
}

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
      return absl::InvalidArgumentError(fmt::format("duckdb: rejected setting {}={}", name, value));
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

absl::StatusOr<std::string> DuckDbTypeName(const parquet::ColumnSpec& spec) {
  absl::StatusOr<DuckColumnType> type = ColumnTypeFor(spec);
  if (!type.ok()) return type.status();
  return std::move(type->sql);
}

// ---------------------------------------------------------------------------
// QueryDatabase and QueryConnection.

struct QueryDatabase::Handle {
  duckdb_database database = nullptr;
  ~Handle() {
    if (database != nullptr) duckdb_close(&database);
  }
};

struct QueryConnection::Handle {
  duckdb_connection connection = nullptr;
  ~Handle() {
    if (connection != nullptr) duckdb_disconnect(&connection);
  }
};

namespace {

// Runs one setup statement on `connection`.
absl::Status RunSetup(duckdb_connection connection, const std::string& sql) {
  ResultGuard result;
  if (duckdb_query(connection, sql.c_str(), result.get()) != DuckDBSuccess) {
    const char* error = duckdb_result_error(result.get());
    return absl::InternalError(
        fmt::format("duckdb: {} failed: {}", sql, error != nullptr ? error : "unknown error"));
  }
  return absl::OkStatus();
}

// Owns a duckdb_logical_type.
class LogicalTypeGuard {
 public:
  explicit LogicalTypeGuard(duckdb_logical_type type) : type_(type) {}
  ~LogicalTypeGuard() {
    if (type_ != nullptr) duckdb_destroy_logical_type(&type_);
  }
  LogicalTypeGuard(const LogicalTypeGuard&) = delete;
  LogicalTypeGuard& operator=(const LogicalTypeGuard&) = delete;
  duckdb_logical_type get() const { return type_; }

 private:
  duckdb_logical_type type_;
};

// Takes ownership of a string DuckDB allocated.
std::string TakeString(char* text) {
  std::string out = text != nullptr ? text : "";
  duckdb_free(text);
  return out;
}

// otlp_value_strings(type UTINYINT, bytes BLOB) -> VARCHAR[]: the string
// values inside a stored array or kvlist value (type 5 or 6, `bytes` its
// encoded AnyValue; docs/format/attributes.md), at any depth, in order
// (otlp::AppendAnyValueStrings); an empty list for other types, NULL for
// NULL bytes. A value that does not decode is an error of the statement.
// DuckDB calls this from its worker threads at once; it keeps no state.
void OtlpValueStrings(duckdb_function_info info, duckdb_data_chunk input, duckdb_vector output) {
  const idx_t rows = duckdb_data_chunk_get_size(input);
  duckdb_vector types = duckdb_data_chunk_get_vector(input, 0);
  duckdb_vector blobs = duckdb_data_chunk_get_vector(input, 1);
  const auto* type_data = static_cast<const uint8_t*>(duckdb_vector_get_data(types));
  auto* blob_data = static_cast<duckdb_string_t*>(duckdb_vector_get_data(blobs));
  uint64_t* type_validity = duckdb_vector_get_validity(types);
  uint64_t* blob_validity = duckdb_vector_get_validity(blobs);
  duckdb_vector_ensure_validity_writable(output);
  uint64_t* output_validity = duckdb_vector_get_validity(output);
  idx_t total = duckdb_list_vector_get_size(output);
  std::vector<std::string_view> strings;
  for (idx_t row = 0; row < rows; ++row) {
    auto* entries = static_cast<duckdb_list_entry*>(duckdb_vector_get_data(output));
    if (!duckdb_validity_row_is_valid(blob_validity, row)) {
      duckdb_validity_set_row_invalid(output_validity, row);
      entries[row] = duckdb_list_entry{total, 0};
      continue;
    }
    strings.clear();
    const bool nested = duckdb_validity_row_is_valid(type_validity, row) &&
                        (type_data[row] == 5 || type_data[row] == 6);
    if (nested) {
      const std::string_view bytes(duckdb_string_t_data(&blob_data[row]),
                                   duckdb_string_t_length(blob_data[row]));
      if (absl::Status s = otlp::AppendAnyValueStrings(bytes, &strings); !s.ok()) {
        const std::string message = absl::StrCat("otlp_value_strings: ", s.message());
        duckdb_scalar_function_set_error(info, message.c_str());
        return;
      }
    }
    if (duckdb_list_vector_reserve(output, total + strings.size()) != DuckDBSuccess ||
        duckdb_list_vector_set_size(output, total + strings.size()) != DuckDBSuccess) {
      duckdb_scalar_function_set_error(info, "otlp_value_strings: cannot grow the list");
      return;
    }
    duckdb_vector child = duckdb_list_vector_get_child(output);
    for (size_t k = 0; k < strings.size(); ++k) {
      duckdb_vector_assign_string_element_len(child, total + k, strings[k].data(),
                                              strings[k].size());
    }
    entries[row] = duckdb_list_entry{total, strings.size()};
    total += strings.size();
  }
}

// otlp_value_path_equals(type UTINYINT, bytes BLOB, path VARCHAR, value
// VARCHAR) -> BOOLEAN: whether the value at `path` inside a stored array or
// kvlist value (type 5 or 6) equals `value`, typed as attribute filters
// compare (otlp::AnyValuePathEquals; the path syntax of
// otlp/any_value_path.h). False for other types and for NULL inputs. A bad
// path, or a value that does not decode, is an error of the statement.
// Stateless, like otlp_value_strings; the parsed path and value are reused
// while consecutive rows repeat them (a filter's are constant).
void OtlpValuePathEquals(duckdb_function_info info, duckdb_data_chunk input, duckdb_vector output) {
  const idx_t rows = duckdb_data_chunk_get_size(input);
  duckdb_vector vectors[4];
  for (idx_t i = 0; i < 4; ++i) vectors[i] = duckdb_data_chunk_get_vector(input, i);
  const auto* type_data = static_cast<const uint8_t*>(duckdb_vector_get_data(vectors[0]));
  auto* blob_data = static_cast<duckdb_string_t*>(duckdb_vector_get_data(vectors[1]));
  auto* path_data = static_cast<duckdb_string_t*>(duckdb_vector_get_data(vectors[2]));
  auto* value_data = static_cast<duckdb_string_t*>(duckdb_vector_get_data(vectors[3]));
  auto* out = static_cast<bool*>(duckdb_vector_get_data(output));
  auto text = [](duckdb_string_t* data, idx_t row) {
    return std::string_view(duckdb_string_t_data(&data[row]), duckdb_string_t_length(data[row]));
  };
  std::optional<std::string> path_text, value_text;
  std::vector<std::string> path;
  otlp::ValueMatch match;
  for (idx_t row = 0; row < rows; ++row) {
    out[row] = false;
    bool valid = true;
    for (duckdb_vector v : vectors) {
      valid = valid && duckdb_validity_row_is_valid(duckdb_vector_get_validity(v), row);
    }
    if (!valid || (type_data[row] != 5 && type_data[row] != 6)) continue;
    if (const std::string_view p = text(path_data, row);
        !path_text.has_value() || *path_text != p) {
      absl::StatusOr<std::vector<std::string>> parsed = otlp::ParseValuePath(p);
      if (!parsed.ok()) {
        const std::string message =
            absl::StrCat("otlp_value_path_equals: ", parsed.status().message());
        duckdb_scalar_function_set_error(info, message.c_str());
        return;
      }
      path = *std::move(parsed);
      path_text = std::string(p);
    }
    if (const std::string_view v = text(value_data, row);
        !value_text.has_value() || *value_text != v) {
      match = otlp::ParseValueMatch(v);
      value_text = std::string(v);
    }
    absl::StatusOr<bool> equal = otlp::AnyValuePathEquals(text(blob_data, row), path, match);
    if (!equal.ok()) {
      const std::string message =
          absl::StrCat("otlp_value_path_equals: ", equal.status().message());
      duckdb_scalar_function_set_error(info, message.c_str());
      return;
    }
    out[row] = *equal;
  }
}

absl::Status RegisterValuePathEquals(duckdb_connection connection) {
  duckdb_scalar_function function = duckdb_create_scalar_function();
  duckdb_scalar_function_set_name(function, "otlp_value_path_equals");
  LogicalTypeGuard type_code(duckdb_create_logical_type(DUCKDB_TYPE_UTINYINT));
  LogicalTypeGuard blob(duckdb_create_logical_type(DUCKDB_TYPE_BLOB));
  LogicalTypeGuard varchar(duckdb_create_logical_type(DUCKDB_TYPE_VARCHAR));
  LogicalTypeGuard boolean(duckdb_create_logical_type(DUCKDB_TYPE_BOOLEAN));
  duckdb_scalar_function_add_parameter(function, type_code.get());
  duckdb_scalar_function_add_parameter(function, blob.get());
  duckdb_scalar_function_add_parameter(function, varchar.get());
  duckdb_scalar_function_add_parameter(function, varchar.get());
  duckdb_scalar_function_set_return_type(function, boolean.get());
  duckdb_scalar_function_set_special_handling(function);
  duckdb_scalar_function_set_function(function, OtlpValuePathEquals);
  const duckdb_state state = duckdb_register_scalar_function(connection, function);
  duckdb_destroy_scalar_function(&function);
  if (state != DuckDBSuccess) {
    return absl::InternalError("duckdb: cannot register otlp_value_path_equals");
  }
  return absl::OkStatus();
}

// A flat input vector of a scalar function (DuckDB flattens the inputs of
// functions registered through the C API).
struct InputVector {
  explicit InputVector(duckdb_vector vector)
      : data(duckdb_vector_get_data(vector)), validity(duckdb_vector_get_validity(vector)) {}
  bool Valid(idx_t row) const { return duckdb_validity_row_is_valid(validity, row); }
  template <typename T>
  T At(idx_t row) const {
    return static_cast<const T*>(data)[row];
  }
  std::string_view Text(idx_t row) const {
    auto* strings = static_cast<duckdb_string_t*>(data);
    return std::string_view(duckdb_string_t_data(&strings[row]),
                            duckdb_string_t_length(strings[row]));
  }
  void* data;
  uint64_t* validity;
};

// A flat LIST input vector and its child.
struct ListInput {
  explicit ListInput(duckdb_vector vector)
      : list(vector), child(duckdb_list_vector_get_child(vector)) {}
  bool Valid(idx_t row) const { return list.Valid(row); }
  duckdb_list_entry Entry(idx_t row) const { return list.At<duckdb_list_entry>(row); }
  InputVector list;
  InputVector child;
};

// The value at `row` of six scalar inputs (type, str, int, double, bool,
// bytes), starting at input `first`, or nullopt when the type is NULL.
std::optional<StoredValue> StoredValueAt(const std::vector<InputVector>& in, size_t first,
                                         idx_t row) {
  if (!in[first].Valid(row)) return std::nullopt;
  StoredValue v;
  v.type = in[first].At<uint8_t>(row);
  const size_t column = v.type == 1 ? 1 : v.type == 3 ? 2 : v.type == 4 ? 3 : v.type == 2 ? 4 : 5;
  v.present = v.type == 0 || in[first + column].Valid(row);
  if (!v.present) return v;
  switch (v.type) {
    case 1:
      v.str = in[first + 1].Text(row);
      break;
    case 3:
      v.int_value = in[first + 2].At<int64_t>(row);
      break;
    case 4:
      v.double_value = in[first + 3].At<double>(row);
      break;
    case 2:
      v.bool_value = in[first + 4].At<bool>(row);
      break;
    case 5:
    case 6:
    case 7:
      v.bytes = in[first + 5].Text(row);
      break;
    default:
      break;
  }
  return v;
}

// otlp_value_json / otlp_value_text(type UTINYINT, str VARCHAR, int BIGINT,
// double DOUBLE, bool BOOLEAN, bytes BLOB): one stored value (an attribute
// at a position of its lists, or a log body) as JSON, or as text (a string
// as it is, NULL for an empty value); NULL when the type is NULL.
// value_json.h has the encoding.
template <bool kText>
void OtlpValue(duckdb_function_info info, duckdb_data_chunk input, duckdb_vector output) {
  const idx_t rows = duckdb_data_chunk_get_size(input);
  std::vector<InputVector> in;
  for (idx_t c = 0; c < 6; ++c) in.emplace_back(duckdb_data_chunk_get_vector(input, c));
  duckdb_vector_ensure_validity_writable(output);
  uint64_t* output_validity = duckdb_vector_get_validity(output);
  ValueJsonWriter writer;
  std::string text;
  for (idx_t row = 0; row < rows; ++row) {
    std::optional<StoredValue> value = StoredValueAt(in, 0, row);
    // An empty value has no text (docs/sql.md: attr() and body_text).
    if (!value.has_value() || (kText && value->type == 0)) {
      duckdb_validity_set_row_invalid(output_validity, row);
      continue;
    }
    text.clear();
    absl::Status s = kText ? writer.AppendText(*value, &text) : writer.AppendValue(*value, &text);
    if (!s.ok()) {
      const std::string message =
          absl::StrCat(kText ? "otlp_value_text: " : "otlp_value_json: ", s.message());
      duckdb_scalar_function_set_error(info, message.c_str());
      return;
    }
    duckdb_vector_assign_string_element_len(output, row, text.data(), text.size());
  }
}

// otlp_value_text_contains(type, str, int, double, bool, bytes, needle
// VARCHAR): contains(coalesce(otlp_value_text(...), ''), needle), answered
// by ValueJsonWriter::TextContains without writing the text of arrays and
// kvlists (docs/sql.md); NULL when the needle is.
void OtlpValueTextContains(duckdb_function_info info, duckdb_data_chunk input,
                           duckdb_vector output) {
  const idx_t rows = duckdb_data_chunk_get_size(input);
  std::vector<InputVector> in;
  for (idx_t c = 0; c < 7; ++c) in.emplace_back(duckdb_data_chunk_get_vector(input, c));
  duckdb_vector_ensure_validity_writable(output);
  uint64_t* output_validity = duckdb_vector_get_validity(output);
  auto* out = static_cast<bool*>(duckdb_vector_get_data(output));
  ValueJsonWriter writer;
  for (idx_t row = 0; row < rows; ++row) {
    if (!in[6].Valid(row)) {
      duckdb_validity_set_row_invalid(output_validity, row);
      continue;
    }
    const std::string_view needle = in[6].Text(row);
    const std::optional<StoredValue> value = StoredValueAt(in, 0, row);
    if (!value.has_value()) {
      out[row] = needle.empty();
      continue;
    }
    absl::StatusOr<bool> contains = writer.TextContains(*value, needle);
    if (!contains.ok()) {
      const std::string message =
          absl::StrCat("otlp_value_text_contains: ", contains.status().message());
      duckdb_scalar_function_set_error(info, message.c_str());
      return;
    }
    out[row] = *contains;
  }
}

// Appends, as one JSON object, the attributes at positions [first, first +
// count) of a row's attribute family: `family` points at its seven list
// inputs (keys, types, str, int, double, bool, bytes; docs/format/
// attributes.md). A value list that is NULL is NULL at every position.
absl::Status AppendFamilyObject(const ListInput* family, idx_t row, idx_t first, idx_t count,
                                ValueJsonWriter* writer, std::string* text) {
  // Element i of list `list`, if it is there and not NULL.
  auto element = [&](size_t list, idx_t i, InputVector* out_child, idx_t* out_index) {
    const ListInput& l = family[list];
    if (!l.Valid(row)) return false;
    const duckdb_list_entry e = l.Entry(row);
    if (i >= e.length || !l.child.Valid(e.offset + i)) return false;
    *out_child = l.child;
    *out_index = e.offset + i;
    return true;
  };
  text->push_back('{');
  for (idx_t i = first; i < first + count; ++i) {
    InputVector key = family[0].child;
    idx_t key_index = 0;
    InputVector child = family[1].child;
    idx_t index = 0;
    if (!element(0, i, &key, &key_index) || !element(1, i, &child, &index)) {
      return absl::InvalidArgumentError("an attribute's key or type is missing");
    }
    StoredValue v;
    v.type = child.At<uint8_t>(index);
    const size_t list = v.type == 1 ? 2 : v.type == 3 ? 3 : v.type == 4 ? 4 : v.type == 2 ? 5 : 6;
    v.present = v.type == 0 || element(list, i, &child, &index);
    if (v.present) {
      switch (v.type) {
        case 1:
          v.str = child.Text(index);
          break;
        case 3:
          v.int_value = child.At<int64_t>(index);
          break;
        case 4:
          v.double_value = child.At<double>(index);
          break;
        case 2:
          v.bool_value = child.At<bool>(index);
          break;
        case 5:
        case 6:
        case 7:
          v.bytes = child.Text(index);
          break;
        default:
          break;
      }
    }
    if (i != first) text->push_back(',');
    ValueJsonWriter::AppendKey(key.Text(key_index), text);
    if (absl::Status s = writer->AppendValue(v, text); !s.ok()) return s;
  }
  text->push_back('}');
  return absl::OkStatus();
}

// otlp_attributes_json(keys VARCHAR[], types UTINYINT[], str VARCHAR[],
// int BIGINT[], double DOUBLE[], bool BOOLEAN[], bytes BLOB[]): an
// attribute family's set (docs/format/attributes.md) as one JSON object,
// keys in stored order; NULL when the keys list is NULL.
void OtlpAttributesJson(duckdb_function_info info, duckdb_data_chunk input, duckdb_vector output) {
  const idx_t rows = duckdb_data_chunk_get_size(input);
  std::vector<ListInput> lists;
  for (idx_t c = 0; c < 7; ++c) lists.emplace_back(duckdb_data_chunk_get_vector(input, c));
  duckdb_vector_ensure_validity_writable(output);
  uint64_t* output_validity = duckdb_vector_get_validity(output);
  ValueJsonWriter writer;
  std::string text;
  for (idx_t row = 0; row < rows; ++row) {
    if (!lists[0].Valid(row) || !lists[1].Valid(row)) {
      duckdb_validity_set_row_invalid(output_validity, row);
      continue;
    }
    text.clear();
    absl::Status s =
        AppendFamilyObject(lists.data(), row, 0, lists[0].Entry(row).length, &writer, &text);
    if (!s.ok()) {
      const std::string message = absl::StrCat("otlp_attributes_json: ", s.message());
      duckdb_scalar_function_set_error(info, message.c_str());
      return;
    }
    duckdb_vector_assign_string_element_len(output, row, text.data(), text.size());
  }
}

// A field of the elements (events, links, exemplars) otlp_elements_json
// writes, and the list inputs it takes: one, or for kNumber three (the
// value type, the double list and the int list of an exemplar's value).
enum class ElementField { kU64, kU32, kText, kHex, kNumber };
struct ElementSpec {
  const char* function;
  std::vector<std::pair<const char*, ElementField>> fields;
};

// The repeated elements of a span or data point (events, links,
// exemplars: one list per field, one entry per element) as a JSON array
// of objects, each with its fields and, from the per-element counts and
// the flat attribute family that follow the fields (docs/format/
// attributes.md, "Sets that belong to repeated elements"), its
// "attributes". NULL when the first field's list is NULL. The function's
// ElementSpec is its extra info.
void OtlpElementsJson(duckdb_function_info info, duckdb_data_chunk input, duckdb_vector output) {
  const auto* spec = static_cast<const ElementSpec*>(duckdb_scalar_function_get_extra_info(info));
  const idx_t rows = duckdb_data_chunk_get_size(input);
  std::vector<ListInput> lists;
  const idx_t columns = duckdb_data_chunk_get_column_count(input);
  for (idx_t c = 0; c < columns; ++c) lists.emplace_back(duckdb_data_chunk_get_vector(input, c));
  size_t counts = 0;
  for (const auto& field : spec->fields) counts += field.second == ElementField::kNumber ? 3 : 1;
  STRATA_CHECK(columns == counts + 8, "an elements function takes its fields, counts, a family");
  duckdb_vector_ensure_validity_writable(output);
  uint64_t* output_validity = duckdb_vector_get_validity(output);
  ValueJsonWriter writer;
  std::string text;
  // Element e of list `list` of this row, if present and not NULL.
  auto element = [&](size_t list, idx_t row, idx_t e, idx_t* index) {
    const ListInput& l = lists[list];
    if (!l.Valid(row)) return false;
    const duckdb_list_entry entry = l.Entry(row);
    if (e >= entry.length || !l.child.Valid(entry.offset + e)) return false;
    *index = entry.offset + e;
    return true;
  };
  for (idx_t row = 0; row < rows; ++row) {
    if (!lists[0].Valid(row)) {
      duckdb_validity_set_row_invalid(output_validity, row);
      continue;
    }
    const idx_t elements = lists[0].Entry(row).length;
    text.assign("[");
    idx_t first_attribute = 0;
    for (idx_t e = 0; e < elements; ++e) {
      text.append(e == 0 ? "{" : ",{");
      size_t list = 0;
      idx_t index = 0;
      for (const auto& [name, kind] : spec->fields) {
        if (list != 0) text.push_back(',');
        ValueJsonWriter::AppendKey(name, &text);
        otlp::JsonWriter json(&text);
        const bool present = element(list, row, e, &index);
        if (!present && kind != ElementField::kNumber) {
          text.append("null");
        } else if (kind == ElementField::kU64) {
          json.Uint(lists[list].child.At<uint64_t>(index));
        } else if (kind == ElementField::kU32) {
          json.Uint(lists[list].child.At<uint32_t>(index));
        } else if (kind == ElementField::kText) {
          json.String(lists[list].child.Text(index));
        } else if (kind == ElementField::kHex) {
          const std::string_view id = lists[list].child.Text(index);
          json.HexString(reinterpret_cast<const uint8_t*>(id.data()), id.size());
        } else {
          const uint8_t type = present ? lists[list].child.At<uint8_t>(index) : 0;
          idx_t value = 0;
          if (type == 1 && element(list + 1, row, e, &value)) {
            json.Double(lists[list + 1].child.At<double>(value));
          } else if (type == 2 && element(list + 2, row, e, &value)) {
            json.Int(lists[list + 2].child.At<int64_t>(value));
          } else {
            text.append("null");
          }
        }
        list += kind == ElementField::kNumber ? 3 : 1;
      }
      idx_t count_index = 0;
      const idx_t count =
          element(counts, row, e, &count_index) ? lists[counts].child.At<uint32_t>(count_index) : 0;
      text.append(",\"attributes\":");
      absl::Status s =
          AppendFamilyObject(&lists[counts + 1], row, first_attribute, count, &writer, &text);
      if (!s.ok()) {
        const std::string message = absl::StrCat(spec->function, ": ", s.message());
        duckdb_scalar_function_set_error(info, message.c_str());
        return;
      }
      first_attribute += count;
      text.push_back('}');
    }
    text.push_back(']');
    duckdb_vector_assign_string_element_len(output, row, text.data(), text.size());
  }
}

// The elements functions the views use (friendly_views.cc).
const std::vector<ElementSpec>& ElementSpecs() {
  static const std::vector<ElementSpec> specs = {
      {"otlp_events_json",
       {{"time_unix_nano", ElementField::kU64},
        {"name", ElementField::kText},
        {"dropped_attributes_count", ElementField::kU32}}},
      {"otlp_links_json",
       {{"trace_id", ElementField::kHex},
        {"span_id", ElementField::kHex},
        {"trace_state", ElementField::kText},
        {"flags", ElementField::kU32},
        {"dropped_attributes_count", ElementField::kU32}}},
      {"otlp_exemplars_json",
       {{"time_unix_nano", ElementField::kU64},
        {"value", ElementField::kNumber},
        {"trace_id", ElementField::kHex},
        {"span_id", ElementField::kHex}}},
  };
  return specs;
}

// Registers one scalar function; NULL inputs reach it (it answers them).
absl::Status RegisterFunction(duckdb_connection connection, const char* name,
                              const std::vector<duckdb_logical_type>& parameters,
                              duckdb_logical_type result, duckdb_scalar_function_t body,
                              const void* extra_info = nullptr) {
  duckdb_scalar_function function = duckdb_create_scalar_function();
  duckdb_scalar_function_set_name(function, name);
  if (extra_info != nullptr) {
    // Static data: nothing to destroy.
    duckdb_scalar_function_set_extra_info(function, const_cast<void*>(extra_info), nullptr);
  }
  for (duckdb_logical_type parameter : parameters) {
    duckdb_scalar_function_add_parameter(function, parameter);
  }
  duckdb_scalar_function_set_return_type(function, result);
  duckdb_scalar_function_set_special_handling(function);
  duckdb_scalar_function_set_function(function, body);
  const duckdb_state state = duckdb_register_scalar_function(connection, function);
  duckdb_destroy_scalar_function(&function);
  if (state != DuckDBSuccess) {
    return absl::InternalError(fmt::format("duckdb: cannot register {}", name));
  }
  return absl::OkStatus();
}

// Registers strata's scalar functions on `connection`; they are then
// visible to every connection of its database.
absl::Status RegisterFunctions(duckdb_connection connection) {
  LogicalTypeGuard type_code(duckdb_create_logical_type(DUCKDB_TYPE_UTINYINT));
  LogicalTypeGuard blob(duckdb_create_logical_type(DUCKDB_TYPE_BLOB));
  LogicalTypeGuard varchar(duckdb_create_logical_type(DUCKDB_TYPE_VARCHAR));
  LogicalTypeGuard bigint(duckdb_create_logical_type(DUCKDB_TYPE_BIGINT));
  LogicalTypeGuard dbl(duckdb_create_logical_type(DUCKDB_TYPE_DOUBLE));
  LogicalTypeGuard boolean(duckdb_create_logical_type(DUCKDB_TYPE_BOOLEAN));
  LogicalTypeGuard json(duckdb_create_logical_type(DUCKDB_TYPE_VARCHAR));
  duckdb_logical_type_set_alias(json.get(), "JSON");
  LogicalTypeGuard list(duckdb_create_list_type(varchar.get()));
  if (absl::Status s =
          RegisterFunction(connection, "otlp_value_strings", {type_code.get(), blob.get()},
                           list.get(), OtlpValueStrings);
      !s.ok()) {
    return s;
  }
  const std::vector<duckdb_logical_type> value = {type_code.get(), varchar.get(), bigint.get(),
                                                  dbl.get(),       boolean.get(), blob.get()};
  if (absl::Status s =
          RegisterFunction(connection, "otlp_value_json", value, json.get(), OtlpValue<false>);
      !s.ok()) {
    return s;
  }
  if (absl::Status s =
          RegisterFunction(connection, "otlp_value_text", value, varchar.get(), OtlpValue<true>);
      !s.ok()) {
    return s;
  }
  std::vector<duckdb_logical_type> value_and_needle = value;
  value_and_needle.push_back(varchar.get());
  if (absl::Status s = RegisterFunction(connection, "otlp_value_text_contains", value_and_needle,
                                        boolean.get(), OtlpValueTextContains);
      !s.ok()) {
    return s;
  }
  std::deque<LogicalTypeGuard> lists;
  std::vector<duckdb_logical_type> family;
  for (duckdb_logical_type element : value) {
    lists.emplace_back(duckdb_create_list_type(element));
  }
  // keys, then the six lists in the value order above
  LogicalTypeGuard keys(duckdb_create_list_type(varchar.get()));
  family.push_back(keys.get());
  for (const LogicalTypeGuard& l : lists) family.push_back(l.get());
  if (absl::Status s = RegisterFunction(connection, "otlp_attributes_json", family, json.get(),
                                        OtlpAttributesJson);
      !s.ok()) {
    return s;
  }
  // The elements functions: their field lists, the counts, a family.
  std::deque<LogicalTypeGuard> types;
  auto list_of = [&](duckdb_type element) {
    LogicalTypeGuard& scalar = types.emplace_back(duckdb_create_logical_type(element));
    return types.emplace_back(duckdb_create_list_type(scalar.get())).get();
  };
  for (const ElementSpec& spec : ElementSpecs()) {
    std::vector<duckdb_logical_type> parameters;
    for (const auto& [name, kind] : spec.fields) {
      switch (kind) {
        case ElementField::kU64:
          parameters.push_back(list_of(DUCKDB_TYPE_UBIGINT));
          break;
        case ElementField::kU32:
          parameters.push_back(list_of(DUCKDB_TYPE_UINTEGER));
          break;
        case ElementField::kText:
          parameters.push_back(list_of(DUCKDB_TYPE_VARCHAR));
          break;
        case ElementField::kHex:
          parameters.push_back(list_of(DUCKDB_TYPE_BLOB));
          break;
        case ElementField::kNumber:
          parameters.push_back(list_of(DUCKDB_TYPE_UTINYINT));
          parameters.push_back(list_of(DUCKDB_TYPE_DOUBLE));
          parameters.push_back(list_of(DUCKDB_TYPE_BIGINT));
          break;
      }
    }
    parameters.push_back(list_of(DUCKDB_TYPE_UINTEGER));
    parameters.insert(parameters.end(), family.begin(), family.end());
    if (absl::Status s = RegisterFunction(connection, spec.function, parameters, json.get(),
                                          OtlpElementsJson, &spec);
        !s.ok()) {
      return s;
    }
  }
  return absl::OkStatus();
}

// Names of the types that have no parameters.
constexpr std::pair<duckdb_type, const char*> kSimpleTypeNames[] = {
    {DUCKDB_TYPE_BOOLEAN, "BOOLEAN"},
    {DUCKDB_TYPE_TINYINT, "TINYINT"},
    {DUCKDB_TYPE_SMALLINT, "SMALLINT"},
    {DUCKDB_TYPE_INTEGER, "INTEGER"},
    {DUCKDB_TYPE_BIGINT, "BIGINT"},
    {DUCKDB_TYPE_UTINYINT, "UTINYINT"},
    {DUCKDB_TYPE_USMALLINT, "USMALLINT"},
    {DUCKDB_TYPE_UINTEGER, "UINTEGER"},
    {DUCKDB_TYPE_UBIGINT, "UBIGINT"},
    {DUCKDB_TYPE_HUGEINT, "HUGEINT"},
    {DUCKDB_TYPE_UHUGEINT, "UHUGEINT"},
    {DUCKDB_TYPE_FLOAT, "FLOAT"},
    {DUCKDB_TYPE_DOUBLE, "DOUBLE"},
    {DUCKDB_TYPE_DATE, "DATE"},
    {DUCKDB_TYPE_TIME, "TIME"},
    {DUCKDB_TYPE_TIME_NS, "TIME_NS"},
    {DUCKDB_TYPE_TIME_TZ, "TIME WITH TIME ZONE"},
    {DUCKDB_TYPE_TIMESTAMP, "TIMESTAMP"},
    {DUCKDB_TYPE_TIMESTAMP_S, "TIMESTAMP_S"},
    {DUCKDB_TYPE_TIMESTAMP_MS, "TIMESTAMP_MS"},
    {DUCKDB_TYPE_TIMESTAMP_NS, "TIMESTAMP_NS"},
    {DUCKDB_TYPE_TIMESTAMP_TZ, "TIMESTAMP WITH TIME ZONE"},
    {DUCKDB_TYPE_INTERVAL, "INTERVAL"},
    {DUCKDB_TYPE_VARCHAR, "VARCHAR"},
    {DUCKDB_TYPE_BLOB, "BLOB"},
    {DUCKDB_TYPE_UUID, "UUID"},
    {DUCKDB_TYPE_BIT, "BIT"},
    {DUCKDB_TYPE_BIGNUM, "BIGNUM"},
    {DUCKDB_TYPE_ENUM, "ENUM"},
    {DUCKDB_TYPE_UNION, "UNION"},
    {DUCKDB_TYPE_SQLNULL, "\"NULL\""},
};

// DuckDB's name of `type`, as typeof() prints it.
std::string TypeName(duckdb_logical_type type) {
  const duckdb_type id = duckdb_get_type_id(type);
  for (const auto& [simple, name] : kSimpleTypeNames) {
    if (simple == id) return name;
  }
  switch (id) {
    case DUCKDB_TYPE_DECIMAL:
      return fmt::format("DECIMAL({},{})", duckdb_decimal_width(type), duckdb_decimal_scale(type));
    case DUCKDB_TYPE_LIST: {
      LogicalTypeGuard child(duckdb_list_type_child_type(type));
      return TypeName(child.get()) + "[]";
    }
    case DUCKDB_TYPE_ARRAY: {
      LogicalTypeGuard child(duckdb_array_type_child_type(type));
      return fmt::format("{}[{}]", TypeName(child.get()), duckdb_array_type_array_size(type));
    }
    case DUCKDB_TYPE_MAP: {
      LogicalTypeGuard key(duckdb_map_type_key_type(type));
      LogicalTypeGuard value(duckdb_map_type_value_type(type));
      return fmt::format("MAP({}, {})", TypeName(key.get()), TypeName(value.get()));
    }
    case DUCKDB_TYPE_STRUCT: {
      std::string out = "STRUCT(";
      const idx_t children = duckdb_struct_type_child_count(type);
      for (idx_t i = 0; i < children; ++i) {
        LogicalTypeGuard child(duckdb_struct_type_child_type(type, i));
        out +=
            fmt::format("{}{} {}", i == 0 ? "" : ", ",
                        TakeString(duckdb_struct_type_child_name(type, i)), TypeName(child.get()));
      }
      return out + ")";
    }
    default:
      return "UNKNOWN";
  }
}

bool IsSpace(char c) { return std::isspace(static_cast<unsigned char>(c)) != 0; }

// Lowercase hex of `bytes`.
std::string Hex(const void* data, idx_t size) {
  static constexpr char kDigits[] = "0123456789abcdef";
  const auto* bytes = static_cast<const unsigned char*>(data);
  std::string out(size * 2, '0');
  for (idx_t i = 0; i < size; ++i) {
    out[2 * i] = kDigits[bytes[i] >> 4];
    out[2 * i + 1] = kDigits[bytes[i] & 0xF];
  }
  return out;
}

// Counts the rows an answer keeps against its caps: at most `max_rows`
// rows, and values summing to at most `max_bytes` (0: no byte cap).
class AnswerBudget {
 public:
  AnswerBudget(size_t max_rows, size_t max_bytes) : max_rows_(max_rows), max_bytes_(max_bytes) {}

  // True when one more row of `row_bytes` fits (and counts it); otherwise
  // marks `out` truncated by the cap it would pass.
  bool Admit(size_t row_bytes, QueryResult* out) {
    if (rows_ >= max_rows_) {
      out->truncated = true;
      out->truncated_by = QueryResult::TruncatedBy::kRows;
      return false;
    }
    if (max_bytes_ > 0 && row_bytes > max_bytes_ - bytes_) {
      out->truncated = true;
      out->truncated_by = QueryResult::TruncatedBy::kBytes;
      return false;
    }
    ++rows_;
    bytes_ += row_bytes;
    return true;
  }

 private:
  const size_t max_rows_;
  const size_t max_bytes_;
  size_t rows_ = 0;
  size_t bytes_ = 0;
};

// The bytes a row's values count against the byte cap (a NULL as "null").
size_t RowBytes(const std::vector<std::optional<std::string>>& row) {
  size_t bytes = 0;
  for (const auto& value : row) bytes += value.has_value() ? value->size() : 4;
  return bytes;
}

// The rows of a materialized `result` that fit `max_rows` and `max_bytes`.
QueryResult CollectRows(duckdb_result* result, size_t max_rows, size_t max_bytes) {
  QueryResult out;
  const idx_t columns = duckdb_column_count(result);
  const idx_t rows = duckdb_row_count(result);
  std::vector<bool> blob(columns);
  for (idx_t c = 0; c < columns; ++c) {
    out.columns.emplace_back(duckdb_column_name(result, c));
    LogicalTypeGuard type(duckdb_column_logical_type(result, c));
    out.types.push_back(TypeName(type.get()));
    blob[c] = duckdb_column_type(result, c) == DUCKDB_TYPE_BLOB;
  }
  AnswerBudget budget(max_rows, max_bytes);
  for (idx_t r = 0; r < rows; ++r) {
    std::vector<std::optional<std::string>> row;
    row.reserve(columns);
    for (idx_t c = 0; c < columns; ++c) {
      if (duckdb_value_is_null(result, c, r)) {
        row.emplace_back(std::nullopt);
      } else if (blob[c]) {
        duckdb_blob value = duckdb_value_blob(result, c, r);
        row.emplace_back(Hex(value.data, value.size));
        duckdb_free(value.data);
      } else {
        row.emplace_back(TakeString(duckdb_value_varchar(result, c, r)));
      }
    }
    if (!budget.Admit(RowBytes(row), &out)) break;
    out.rows.push_back(std::move(row));
  }
  return out;
}

// Owns a duckdb_data_chunk.
class ChunkGuard {
 public:
  explicit ChunkGuard(duckdb_data_chunk chunk) : chunk_(chunk) {}
  ~ChunkGuard() {
    if (chunk_ != nullptr) duckdb_destroy_data_chunk(&chunk_);
  }
  ChunkGuard(const ChunkGuard&) = delete;
  ChunkGuard& operator=(const ChunkGuard&) = delete;
  duckdb_data_chunk get() const { return chunk_; }

 private:
  duckdb_data_chunk chunk_;
};

// Appends the rows of `chunk`, whose columns are all VARCHAR, to `out`
// while `budget` admits them. False once a cap is reached.
bool AppendChunk(duckdb_data_chunk chunk, AnswerBudget* budget, QueryResult* out) {
  const idx_t columns = duckdb_data_chunk_get_column_count(chunk);
  std::vector<duckdb_string_t*> data(columns);
  std::vector<uint64_t*> validity(columns);
  for (idx_t c = 0; c < columns; ++c) {
    duckdb_vector vector = duckdb_data_chunk_get_vector(chunk, c);
    data[c] = static_cast<duckdb_string_t*>(duckdb_vector_get_data(vector));
    validity[c] = duckdb_vector_get_validity(vector);
  }
  const idx_t rows = duckdb_data_chunk_get_size(chunk);
  for (idx_t r = 0; r < rows; ++r) {
    size_t row_bytes = 0;
    for (idx_t c = 0; c < columns; ++c) {
      row_bytes +=
          duckdb_validity_row_is_valid(validity[c], r) ? duckdb_string_t_length(data[c][r]) : 4;
    }
    if (!budget->Admit(row_bytes, out)) return false;
    auto& row = out->rows.emplace_back();
    row.reserve(columns);
    for (idx_t c = 0; c < columns; ++c) {
      if (duckdb_validity_row_is_valid(validity[c], r)) {
        row.emplace_back(
            std::string(duckdb_string_t_data(&data[c][r]), duckdb_string_t_length(data[c][r])));
      } else {
        row.emplace_back(std::nullopt);
      }
    }
  }
  return true;
}

// The payload that marks DuckDB's out-of-memory (IsQueryOutOfMemory).
constexpr char kOutOfMemoryPayload[] = "type.strata.dev/query.out_of_memory";

// DuckDB's out-of-memory `message` as ResourceExhausted, marked. DuckDB's
// own advice after its first paragraph (SET threads, SET memory_limit, ...)
// names settings that are locked here, so it gives way to how to narrow
// the query.
absl::Status OutOfMemoryStatus(std::string_view message) {
  std::string_view first = message.substr(0, message.find("\n\n"));
  while (!first.empty() && IsSpace(first.back())) first.remove_suffix(1);
  absl::Status status = absl::ResourceExhaustedError(fmt::format(
      "duckdb: {}; the query needs more memory than the query memory limit allows, and running "
      "it again will not help: narrow it (select fewer columns, a narrower time range, add a "
      "LIMIT, or aggregate first with GROUP BY)",
      first));
  status.SetPayload(kOutOfMemoryPayload, absl::Cord("1"));
  return status;
}

// DuckDB's error, as a Status of the code query_pool.h promises.
absl::Status ErrorStatus(duckdb_error_type type, std::string_view message) {
  if (type == DUCKDB_ERROR_INTERRUPT) {
    return absl::CancelledError(fmt::format("duckdb: {}", message));
  }
  // Errors from preparing carry no type, only DuckDB's text, which starts
  // with the error's kind.
  if (type == DUCKDB_ERROR_OUT_OF_MEMORY || message.starts_with("Out of Memory Error")) {
    return OutOfMemoryStatus(message);
  }
  if (message.starts_with("INTERRUPT Error")) {
    return absl::CancelledError(fmt::format("duckdb: {}", message));
  }
  return absl::InvalidArgumentError(fmt::format("duckdb: {}", message));
}

// Owns a duckdb_prepared_statement.
class PreparedGuard {
 public:
  PreparedGuard() = default;
  ~PreparedGuard() { duckdb_destroy_prepare(&prepared_); }
  PreparedGuard(const PreparedGuard&) = delete;
  PreparedGuard& operator=(const PreparedGuard&) = delete;
  duckdb_prepared_statement* out() { return &prepared_; }
  duckdb_prepared_statement get() const { return prepared_; }
  std::string error() const {
    const char* error = duckdb_prepare_error(prepared_);
    return error != nullptr ? error : "cannot prepare the statement";
  }

 private:
  duckdb_prepared_statement prepared_ = nullptr;
};

// Owns duckdb_extracted_statements.
class ExtractedGuard {
 public:
  ExtractedGuard() = default;
  ~ExtractedGuard() { duckdb_destroy_extracted(&extracted_); }
  ExtractedGuard(const ExtractedGuard&) = delete;
  ExtractedGuard& operator=(const ExtractedGuard&) = delete;
  duckdb_extracted_statements* out() { return &extracted_; }
  duckdb_extracted_statements get() const { return extracted_; }

 private:
  duckdb_extracted_statements extracted_ = nullptr;
};

absl::Status BindParams(duckdb_prepared_statement prepared, std::span<const QueryParam> params) {
  const idx_t expected = duckdb_nparams(prepared);
  if (expected != params.size()) {
    return absl::InvalidArgumentError(fmt::format(
        "duckdb: the statement has {} parameters, {} were given", expected, params.size()));
  }
  for (size_t i = 0; i < params.size(); ++i) {
    const idx_t index = i + 1;
    duckdb_state state = DuckDBError;
    if (const auto* text = std::get_if<std::string>(&params[i])) {
      state = duckdb_bind_varchar_length(prepared, index, text->data(), text->size());
    } else if (const auto* i64 = std::get_if<int64_t>(&params[i])) {
      state = duckdb_bind_int64(prepared, index, *i64);
    } else if (const auto* u64 = std::get_if<uint64_t>(&params[i])) {
      state = duckdb_bind_uint64(prepared, index, *u64);
    } else if (const auto* d = std::get_if<double>(&params[i])) {
      state = duckdb_bind_double(prepared, index, *d);
    } else if (const auto* b = std::get_if<bool>(&params[i])) {
      state = duckdb_bind_boolean(prepared, index, *b);
    } else if (const auto* blob = std::get_if<Blob>(&params[i])) {
      state = duckdb_bind_blob(prepared, index, blob->bytes.data(), blob->bytes.size());
    }
    if (state != DuckDBSuccess) {
      return absl::InvalidArgumentError(fmt::format("duckdb: cannot bind parameter ${}", index));
    }
  }
  return absl::OkStatus();
}

// If `sql` starts with keyword `word` (case-insensitive) followed by white
// space, the rest after that space; else nullopt.
std::optional<std::string_view> AfterKeyword(std::string_view sql, std::string_view word) {
  size_t i = 0;
  while (i < sql.size() && IsSpace(sql[i])) ++i;
  if (sql.size() - i <= word.size()) return std::nullopt;
  for (size_t k = 0; k < word.size(); ++k) {
    if (std::tolower(static_cast<unsigned char>(sql[i + k])) != word[k]) return std::nullopt;
  }
  if (!IsSpace(sql[i + word.size()])) return std::nullopt;
  return sql.substr(i + word.size());
}

absl::Status ResultError(duckdb_result* result) {
  const char* error = duckdb_result_error(result);
  return ErrorStatus(duckdb_result_error_type(result), error != nullptr ? error : "query failed");
}

// True when `text` holds only white space, comments and semicolons.
bool OnlyCommentsAndSemicolons(std::string_view text) {
  size_t i = 0;
  while (i < text.size()) {
    if (IsSpace(text[i]) || text[i] == ';') {
      ++i;
    } else if (text.substr(i).starts_with("--")) {
      const size_t line_end = text.find('\n', i);
      if (line_end == std::string_view::npos) return true;
      i = line_end + 1;
    } else if (text.substr(i).starts_with("/*")) {
      const size_t end = text.find("*/", i + 2);
      if (end == std::string_view::npos) return false;
      i = end + 2;
    } else {
      return false;
    }
  }
  return true;
}

// `sql` without its terminating semicolon and what follows it: cut at the
// first ';' after which only comments, white space and semicolons remain.
// (A ';' inside a string literal can fool this; the caller then tries the
// text unchanged.)
std::string_view WithoutTerminator(std::string_view sql) {
  size_t cut = std::string_view::npos;
  for (size_t at = sql.rfind(';'); at != std::string_view::npos;
       at = at == 0 ? std::string_view::npos : sql.rfind(';', at - 1)) {
    if (OnlyCommentsAndSemicolons(sql.substr(at + 1))) cut = at;
  }
  return cut == std::string_view::npos ? sql : sql.substr(0, cut);
}

// "SELECT * FROM (<statement>) LIMIT <max_rows + 1>"; the line break before
// ')' ends a trailing line comment.
std::string LimitedSelect(std::string_view statement, size_t max_rows) {
  const uint64_t limit = max_rows < (uint64_t{1} << 62) ? max_rows + 1 : max_rows;
  return fmt::format("SELECT * FROM (\n{}\n) LIMIT {}", statement, limit);
}

constexpr char kNotReadOnly[] =
    "query: only a SELECT (or EXPLAIN of a SELECT) is allowed; this statement is not read-only";

// OK when `prepared` (the one statement of `sql`) only reads: a SELECT,
// or an EXPLAIN [ANALYZE] of one. `depth` bounds the recursion.
absl::Status CheckReadOnly(duckdb_connection connection, std::string_view sql,
                           duckdb_prepared_statement prepared, int depth) {
  const duckdb_statement_type type = duckdb_prepared_statement_type(prepared);
  if (type == DUCKDB_STATEMENT_TYPE_SELECT) return absl::OkStatus();
  if (type != DUCKDB_STATEMENT_TYPE_EXPLAIN) {
    return absl::InvalidArgumentError(kNotReadOnly);
  }
  // EXPLAIN ANALYZE runs the statement it explains, so that must be a
  // SELECT as well. Anything but "EXPLAIN [ANALYZE] <statement>" (leading
  // comments, options) is refused rather than parsed.
  std::optional<std::string_view> inner = AfterKeyword(sql, "explain");
  if (inner.has_value()) {
    std::optional<std::string_view> analyzed = AfterKeyword(*inner, "analyze");
    if (!analyzed.has_value()) analyzed = AfterKeyword(*inner, "analyse");
    if (analyzed.has_value()) inner = analyzed;
  }
  if (!inner.has_value() || depth > 0) {
    return absl::InvalidArgumentError("query: only EXPLAIN [ANALYZE] <SELECT> is allowed");
  }
  const std::string text(*inner);
  ExtractedGuard extracted;
  if (duckdb_extract_statements(connection, text.c_str(), extracted.out()) != 1) {
    return absl::InvalidArgumentError("query: only EXPLAIN [ANALYZE] <SELECT> is allowed");
  }
  PreparedGuard inner_prepared;
  if (duckdb_prepare_extracted_statement(connection, extracted.get(), 0, inner_prepared.out()) !=
      DuckDBSuccess) {
    return ErrorStatus(DUCKDB_ERROR_INVALID, inner_prepared.error());
  }
  return CheckReadOnly(connection, text, inner_prepared.get(), depth + 1);
}

// What DuckDB's parser alone makes of some SQL text.
struct ParsedText {
  // Every statement is a SELECT (json_serialize_sql serialized them all).
  bool all_select = false;
  // The text does not parse (DuckDB's message in `error`).
  bool syntax_error = false;
  std::string error;
  int64_t statements = 0;
};

// Parses `sql` (up to its first NUL, as duckdb_extract_statements reads
// it) with json_serialize_sql, which runs DuckDB's parser and nothing
// after it: no binding, no planning, no pragma expansion, so no statement
// can act. It serializes SELECT statements and refuses every other kind.
absl::StatusOr<ParsedText> ParseOnly(duckdb_connection connection, const char* sql) {
  static constexpr char kClassify[] =
      "SELECT j->>'error', j->>'error_type', j->>'error_message', "
      "json_array_length(j->'statements') FROM (SELECT json_serialize_sql($1::VARCHAR) AS j)";
  PreparedGuard prepared;
  if (duckdb_prepare(connection, kClassify, prepared.out()) != DuckDBSuccess) {
    return ErrorStatus(DUCKDB_ERROR_INVALID, prepared.error());
  }
  if (duckdb_bind_varchar(prepared.get(), 1, sql) != DuckDBSuccess) {
    return absl::InvalidArgumentError("query: the SQL is not valid UTF-8 text");
  }
  ResultGuard result;
  if (duckdb_execute_prepared(prepared.get(), result.get()) != DuckDBSuccess) {
    return ResultError(result.get());
  }
  if (duckdb_row_count(result.get()) != 1) {
    return absl::InternalError("query: json_serialize_sql gave no answer");
  }
  ParsedText parsed;
  const bool error = TakeString(duckdb_value_varchar(result.get(), 0, 0)) != "false";
  parsed.all_select = !error;
  parsed.syntax_error = error && TakeString(duckdb_value_varchar(result.get(), 1, 0)) == "parser";
  parsed.error = TakeString(duckdb_value_varchar(result.get(), 2, 0));
  parsed.statements = duckdb_value_int64(result.get(), 3, 0);
  return parsed;
}

// OK when DuckDB's parser finds exactly one SELECT in `sql`, or EXPLAIN
// [ANALYZE] followed by exactly one SELECT. Runs before anything of `sql`
// is bound. `depth` bounds the recursion.
absl::Status CheckOneReadByParser(duckdb_connection connection, const std::string& sql, int depth) {
  absl::StatusOr<ParsedText> parsed = ParseOnly(connection, sql.c_str());
  if (!parsed.ok()) return parsed.status();
  if (parsed->all_select) {
    if (parsed->statements == 1) return absl::OkStatus();
    return absl::InvalidArgumentError(fmt::format(
        "query: exactly one statement is allowed, the SQL holds {}", parsed->statements));
  }
  if (parsed->syntax_error) {
    return absl::InvalidArgumentError(fmt::format("duckdb: Parser Error: {}", parsed->error));
  }
  // EXPLAIN is not a SELECT to the parser; what it explains must be.
  // Anything but "EXPLAIN [ANALYZE] <statement>" (leading comments,
  // options) is refused rather than parsed.
  std::optional<std::string_view> inner = AfterKeyword(sql, "explain");
  if (inner.has_value()) {
    std::optional<std::string_view> analyzed = AfterKeyword(*inner, "analyze");
    if (!analyzed.has_value()) analyzed = AfterKeyword(*inner, "analyse");
    if (analyzed.has_value()) inner = analyzed;
  }
  if (!inner.has_value() || depth > 0) return absl::InvalidArgumentError(kNotReadOnly);
  return CheckOneReadByParser(connection, std::string(*inner), depth + 1);
}

// The calls of strata's SQL helpers (sql_helpers.h) that DuckDB's parser
// finds in `sql`, one SELECT; offsets are relative to `sql`. Only the
// parser runs (json_serialize_sql), as in ParseOnly.
absl::StatusOr<std::vector<HelperCall>> FindHelperCalls(duckdb_connection connection,
                                                        const std::string& sql) {
  std::string names;
  for (const std::string& name : HelperNames()) {
    names += (names.empty() ? "" : ", ") + SqlLiteral(name);
  }
  const std::string find = fmt::format(
      "SELECT lower(f->>'function_name'), coalesce((f->>'schema'), ''), "
      "TRY_CAST((f->>'query_location') AS UBIGINT), "
      "coalesce(json_array_length((f->'children')), 0), "
      "((f->'children'->0->>'class') = 'CONSTANT' AND "
      "(f->'children'->0->'value'->'type'->>'id') = 'VARCHAR' AND "
      "NOT coalesce(TRY_CAST((f->'children'->0->'value'->>'is_null') AS BOOLEAN), true)), "
      "TRY_CAST((f->'children'->0->>'query_location') AS UBIGINT), "
      "(f->'children'->0->'value'->>'value') "
      "FROM (SELECT value AS f FROM json_tree(json_serialize_sql($1::VARCHAR)) "
      "WHERE type = 'OBJECT') WHERE (f->>'class') = 'FUNCTION' AND "
      "lower(f->>'function_name') IN ({})",
      names);
  PreparedGuard prepared;
  if (duckdb_prepare(connection, find.c_str(), prepared.out()) != DuckDBSuccess) {
    return ErrorStatus(DUCKDB_ERROR_INVALID, prepared.error());
  }
  if (duckdb_bind_varchar(prepared.get(), 1, sql.c_str()) != DuckDBSuccess) {
    return absl::InvalidArgumentError("query: the SQL is not valid UTF-8 text");
  }
  ResultGuard result;
  if (duckdb_execute_prepared(prepared.get(), result.get()) != DuckDBSuccess) {
    return ResultError(result.get());
  }
  std::vector<HelperCall> calls;
  const idx_t rows = duckdb_row_count(result.get());
  for (idx_t r = 0; r < rows; ++r) {
    HelperCall call;
    call.name = TakeString(duckdb_value_varchar(result.get(), 0, r));
    call.qualifier = TakeString(duckdb_value_varchar(result.get(), 1, r));
    if (duckdb_value_is_null(result.get(), 2, r)) {
      return absl::InternalError("query: the parser gave a helper call no location");
    }
    call.location = duckdb_value_uint64(result.get(), 2, r);
    call.argument_count = duckdb_value_uint64(result.get(), 3, r);
    call.key_is_string_literal = !duckdb_value_is_null(result.get(), 4, r) &&
                                 duckdb_value_boolean(result.get(), 4, r) &&
                                 !duckdb_value_is_null(result.get(), 5, r);
    if (call.key_is_string_literal) {
      call.key_location = duckdb_value_uint64(result.get(), 5, r);
      call.key = TakeString(duckdb_value_varchar(result.get(), 6, r));
    }
    if (call.location > sql.size() || call.key_location > sql.size()) {
      return absl::InternalError("query: the parser placed a helper call outside the text");
    }
    calls.push_back(std::move(call));
  }
  return calls;
}

// `sql` (read-only SQL that passed CheckOneReadByParser) with strata's
// helper calls expanded (sql_helpers.h); EXPLAIN [ANALYZE] expands the
// statement it explains.
absl::StatusOr<std::string> ExpandHelpers(duckdb_connection connection, const std::string& sql) {
  // No helper's name can occur without "attr" in the text.
  std::string lower(sql);
  for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (lower.find("attr") == std::string::npos) return sql;
  std::optional<std::string_view> inner = AfterKeyword(sql, "explain");
  if (inner.has_value()) {
    std::optional<std::string_view> analyzed = AfterKeyword(*inner, "analyze");
    if (!analyzed.has_value()) analyzed = AfterKeyword(*inner, "analyse");
    if (analyzed.has_value()) inner = analyzed;
    const size_t offset = static_cast<size_t>(inner->data() - sql.data());
    absl::StatusOr<std::string> expanded = ExpandHelpers(connection, std::string(*inner));
    if (!expanded.ok()) return expanded.status();
    return sql.substr(0, offset) + *expanded;
  }
  absl::StatusOr<std::vector<HelperCall>> calls = FindHelperCalls(connection, sql);
  if (!calls.ok()) return calls.status();
  if (calls->empty()) return sql;
  return ExpandHelperCalls(sql, *std::move(calls));
}

// Owns a duckdb_pending_result.
class PendingGuard {
 public:
  PendingGuard() = default;
  ~PendingGuard() { duckdb_destroy_pending(&pending_); }
  PendingGuard(const PendingGuard&) = delete;
  PendingGuard& operator=(const PendingGuard&) = delete;
  duckdb_pending_result* out() { return &pending_; }
  duckdb_pending_result get() const { return pending_; }
  std::string error() const {
    const char* error = duckdb_pending_error(pending_);
    return error != nullptr ? error : "cannot start the statement";
  }

 private:
  duckdb_pending_result pending_ = nullptr;
};

// The wrapping SELECT of a lone SELECT `statement` whose prepared form is
// `prepared`: every column as text (DuckDB's VARCHAR cast, a BLOB as
// lowercase hex), at most max_rows + 1 rows and, with a byte cap, only the
// rows before the one that crosses `max_bytes` and that one (so the caller
// sees that the cap was reached). nullopt when a column's type is not known
// before binding (it depends on a parameter).
//
// The byte cap is a running sum (a streaming window) and a filter inside
// DuckDB: its streaming result buffer counts a chunk's fixed-size part but
// not its strings, so without the filter DuckDB runs ahead and buffers the
// whole result (1 GB of wide rows) before the first chunk is fetched.
std::optional<std::string> TextSelect(duckdb_prepared_statement prepared,
                                      std::string_view statement, size_t max_rows,
                                      size_t max_bytes) {
  const idx_t columns = duckdb_prepared_statement_column_count(prepared);
  std::string as_text, names, values, row_bytes;
  for (idx_t c = 0; c < columns; ++c) {
    const duckdb_type type = duckdb_prepared_statement_column_type(prepared, c);
    if (type == DUCKDB_TYPE_INVALID || type == DUCKDB_TYPE_ANY) return std::nullopt;
    const std::string_view comma = c == 0 ? "" : ", ";
    as_text += type == DUCKDB_TYPE_BLOB ? fmt::format("{}lower(hex(c{})) AS v{}", comma, c, c)
                                        : fmt::format("{}CAST(c{} AS VARCHAR) AS v{}", comma, c, c);
    names += fmt::format("{}c{}", comma, c);
    values += fmt::format("{}v{}", comma, c);
    row_bytes += fmt::format("{}coalesce(strlen(v{}), 4)", c == 0 ? "" : " + ", c);
  }
  const uint64_t limit = max_rows < (uint64_t{1} << 62) ? max_rows + 1 : max_rows;
  // The line break before ')' ends a trailing line comment. The inner
  // LIMIT lets DuckDB keep only the top rows of an ORDER BY (a top-N)
  // instead of sorting everything.
  std::string text =
      fmt::format("SELECT {} FROM (SELECT * FROM (\n{}\n) LIMIT {}) AS strata_rows({})", as_text,
                  statement, limit, names);
  if (max_bytes > 0) {
    text = fmt::format(
        "SELECT {0} FROM (SELECT {0}, strata_row, sum(strata_row) OVER (ROWS BETWEEN UNBOUNDED "
        "PRECEDING AND CURRENT ROW) AS strata_bytes FROM (SELECT {0}, {1} AS strata_row FROM "
        "({2}))) WHERE strata_bytes - strata_row <= {3}",
        values, row_bytes, text, max_bytes);
  }
  return fmt::format("{} LIMIT {}", text, limit);
}

// The names and DuckDB types of the columns of `prepared`.
void DescribeColumns(duckdb_prepared_statement prepared, QueryResult* out) {
  const idx_t columns = duckdb_prepared_statement_column_count(prepared);
  for (idx_t c = 0; c < columns; ++c) {
    const char* name = duckdb_prepared_statement_column_name(prepared, c);
    out->columns.push_back(TakeString(const_cast<char*>(name)));
    LogicalTypeGuard type(duckdb_prepared_statement_column_logical_type(prepared, c));
    out->types.push_back(TypeName(type.get()));
  }
}

// Runs `run` (every column VARCHAR) and fetches its rows chunk by chunk
// into an answer described by `prepared`, stopping at either cap;
// destroying the result then stops the query.
absl::StatusOr<QueryResult> StreamRows(duckdb_prepared_statement prepared,
                                       duckdb_prepared_statement run, size_t max_rows,
                                       size_t max_bytes) {
  PendingGuard pending;
  if (duckdb_pending_prepared_streaming(run, pending.out()) != DuckDBSuccess) {
    return ErrorStatus(DUCKDB_ERROR_INVALID, pending.error());
  }
  ResultGuard result;
  if (duckdb_execute_pending(pending.get(), result.get()) != DuckDBSuccess) {
    return ResultError(result.get());
  }
  QueryResult out;
  DescribeColumns(prepared, &out);
  AnswerBudget budget(max_rows, max_bytes);
  for (;;) {
    ChunkGuard chunk(duckdb_fetch_chunk(*result.get()));
    if (chunk.get() == nullptr) break;
    if (!AppendChunk(chunk.get(), &budget, &out)) return out;
  }
  if (duckdb_result_error(result.get()) != nullptr) return ResultError(result.get());
  return out;
}

}  // namespace

QueryDatabase::QueryDatabase(std::unique_ptr<Handle> handle) : handle_(std::move(handle)) {}
QueryDatabase::~QueryDatabase() = default;

absl::StatusOr<std::unique_ptr<QueryDatabase>> QueryDatabase::Open(
    const QueryDatabaseOptions& options) {
  if (options.memory_limit_bytes == 0 || options.temp_directory.empty()) {
    return absl::InvalidArgumentError("duckdb: a memory limit and a temp directory are needed");
  }
  ConfigGuard config;
  if (absl::Status s = config.Create(); !s.ok()) return s;
  // Settings DuckDB takes at open; the rest need SQL (allowed_directories
  // must be set before external access is turned off, and TimeZone belongs
  // to the ICU extension, loaded during open).
  const std::pair<const char*, std::string> settings[] = {
      {"memory_limit",
       fmt::format("{}KiB", std::max<uint64_t>(1, options.memory_limit_bytes / 1024))},
      {"temp_directory", options.temp_directory},
      {"autoinstall_known_extensions", "false"},
      {"autoload_known_extensions", "false"},
  };
  for (const auto& [name, value] : settings) {
    if (absl::Status s = config.Set(name, value); !s.ok()) return absl::InternalError(s.message());
  }
  if (options.threads > 0) {
    if (absl::Status s = config.Set("threads", std::to_string(options.threads)); !s.ok()) {
      return absl::InternalError(s.message());
    }
  }
  auto handle = std::make_unique<Handle>();
  char* error = nullptr;
  if (duckdb_open_ext(nullptr, &handle->database, config.get(), &error) != DuckDBSuccess) {
    std::string message = TakeString(error);
    return absl::InternalError(fmt::format("duckdb: cannot open database: {}", message));
  }
  QueryConnection::Handle setup;
  if (duckdb_connect(handle->database, &setup.connection) != DuckDBSuccess) {
    return absl::InternalError("duckdb: cannot connect");
  }
  if (absl::Status s = RegisterFunctions(setup.connection); !s.ok()) return s;
  if (absl::Status s = RegisterValuePathEquals(setup.connection); !s.ok()) return s;
  std::string allowed;
  for (const std::string& dir : options.allowed_directories) {
    allowed += (allowed.empty() ? "" : ", ") + SqlLiteral(dir);
  }
  const std::string statements[] = {
      "SET GLOBAL TimeZone = 'UTC'",
      fmt::format("SET GLOBAL allowed_directories = [{}]", allowed),
      "SET GLOBAL enable_external_access = false",
      "SET GLOBAL lock_configuration = true",
  };
  for (const std::string& sql : statements) {
    if (absl::Status s = RunSetup(setup.connection, sql); !s.ok()) return s;
  }
  return std::unique_ptr<QueryDatabase>(new QueryDatabase(std::move(handle)));
}

absl::StatusOr<std::unique_ptr<QueryConnection>> QueryDatabase::Connect() {
  auto handle = std::make_unique<QueryConnection::Handle>();
  if (duckdb_connect(handle_->database, &handle->connection) != DuckDBSuccess) {
    return absl::InternalError("duckdb: cannot connect");
  }
  return std::unique_ptr<QueryConnection>(new QueryConnection(std::move(handle)));
}

QueryConnection::QueryConnection(std::unique_ptr<Handle> handle) : handle_(std::move(handle)) {}
QueryConnection::~QueryConnection() = default;

void QueryConnection::Interrupt() { duckdb_interrupt(handle_->connection); }

bool IsQueryOutOfMemory(const absl::Status& status) {
  return status.code() == absl::StatusCode::kResourceExhausted &&
         status.GetPayload(kOutOfMemoryPayload).has_value();
}

namespace {

// Runs the last statement of `sql`, prepared as `prepared`. A lone SELECT
// (`lone_select`) runs as "SELECT * FROM (<sql>) LIMIT max_rows + 1"; the
// result is materialized.
absl::StatusOr<QueryResult> RunMaterialized(duckdb_connection connection,
                                            duckdb_prepared_statement prepared,
                                            std::string_view sql, bool lone_select,
                                            std::span<const QueryParam> params, size_t max_rows,
                                            size_t max_bytes, bool read_only) {
  PreparedGuard limited;
  duckdb_prepared_statement run = prepared;
  if (lone_select) {
    bool wrapped =
        duckdb_prepare(connection, LimitedSelect(WithoutTerminator(sql), max_rows).c_str(),
                       limited.out()) == DuckDBSuccess;
    if (!wrapped) {
      duckdb_destroy_prepare(limited.out());
      wrapped = duckdb_prepare(connection, LimitedSelect(sql, max_rows).c_str(), limited.out()) ==
                DuckDBSuccess;
    }
    if (wrapped) {
      run = limited.get();
    } else if (read_only) {
      absl::Status failed = ErrorStatus(DUCKDB_ERROR_INVALID, limited.error());
      if (failed.code() != absl::StatusCode::kInvalidArgument) return failed;  // interrupted, OOM
      return absl::InvalidArgumentError(
          fmt::format("query: cannot cap the rows of this SELECT: {}", limited.error()));
    }
  }
  if (absl::Status s = BindParams(run, params); !s.ok()) return s;
  ResultGuard result;
  if (duckdb_execute_prepared(run, result.get()) != DuckDBSuccess) {
    return ResultError(result.get());
  }
  QueryResult out = CollectRows(result.get(), max_rows, max_bytes);
  // The wrapping subquery renames duplicate columns ("a", "a_1"); report
  // the statement's own names when DuckDB knows them.
  if (run != prepared && duckdb_prepared_statement_column_count(prepared) == out.columns.size()) {
    for (size_t c = 0; c < out.columns.size(); ++c) {
      const char* name = duckdb_prepared_statement_column_name(prepared, c);
      if (name != nullptr) out.columns[c] = TakeString(const_cast<char*>(name));
    }
  }
  return out;
}

// Runs the lone SELECT `sql`, prepared as `prepared`, wrapped by
// TextSelect and streamed. Falls back to RunMaterialized when it cannot be
// wrapped so.
absl::StatusOr<QueryResult> RunStreamed(duckdb_connection connection,
                                        duckdb_prepared_statement prepared, std::string_view sql,
                                        std::span<const QueryParam> params, size_t max_rows,
                                        size_t max_bytes, bool read_only) {
  std::optional<std::string> text =
      TextSelect(prepared, WithoutTerminator(sql), max_rows, max_bytes);
  PreparedGuard wrapped;
  bool ok =
      text.has_value() && duckdb_prepare(connection, text->c_str(), wrapped.out()) == DuckDBSuccess;
  if (text.has_value() && !ok) {
    duckdb_destroy_prepare(wrapped.out());
    text = TextSelect(prepared, sql, max_rows, max_bytes);
    ok = duckdb_prepare(connection, text->c_str(), wrapped.out()) == DuckDBSuccess;
  }
  if (!ok) {
    return RunMaterialized(connection, prepared, sql, /*lone_select=*/true, params, max_rows,
                           max_bytes, read_only);
  }
  if (absl::Status s = BindParams(wrapped.get(), params); !s.ok()) return s;
  return StreamRows(prepared, wrapped.get(), max_rows, max_bytes);
}

}  // namespace

absl::StatusOr<QueryResult> QueryConnection::Run(std::string_view sql,
                                                 std::span<const QueryParam> params,
                                                 size_t max_rows, size_t max_bytes,
                                                 bool read_only) {
  std::string text(sql);
  duckdb_connection connection = handle_->connection;
  // Before anything is extracted (which expands PRAGMA import_database
  // by reading files) or bound (which EXPORT DATABASE acts on).
  if (read_only) {
    if (absl::Status s = CheckOneReadByParser(connection, text, 0); !s.ok()) return s;
    absl::StatusOr<std::string> expanded = ExpandHelpers(connection, text);
    if (!expanded.ok()) return expanded.status();
    text = *std::move(expanded);
    sql = text;
  }
  ExtractedGuard extracted;
  const idx_t count = duckdb_extract_statements(connection, text.c_str(), extracted.out());
  if (count == 0) {
    const char* error = duckdb_extract_statements_error(extracted.get());
    return absl::InvalidArgumentError(
        fmt::format("duckdb: {}", error != nullptr ? error : "no statement"));
  }
  if (read_only && count != 1) {
    return absl::InvalidArgumentError(
        fmt::format("query: exactly one statement is allowed, the SQL holds {}", count));
  }
  for (idx_t i = 0; i + 1 < count; ++i) {
    PreparedGuard prepared;
    if (duckdb_prepare_extracted_statement(connection, extracted.get(), i, prepared.out()) !=
        DuckDBSuccess) {
      return ErrorStatus(DUCKDB_ERROR_INVALID, prepared.error());
    }
    ResultGuard result;
    if (duckdb_execute_prepared(prepared.get(), result.get()) != DuckDBSuccess) {
      return ResultError(result.get());
    }
  }
  PreparedGuard prepared;
  if (duckdb_prepare_extracted_statement(connection, extracted.get(), count - 1, prepared.out()) !=
      DuckDBSuccess) {
    return ErrorStatus(DUCKDB_ERROR_INVALID, prepared.error());
  }
  // The parser's verdict, checked again on the statement DuckDB prepared.
  if (read_only) {
    if (absl::Status s = CheckReadOnly(connection, sql, prepared.get(), 0); !s.ok()) return s;
  }
  // DuckDB materializes a whole result, outside its memory_limit, so a
  // lone SELECT is capped and streamed.
  if (count == 1 &&
      duckdb_prepared_statement_type(prepared.get()) == DUCKDB_STATEMENT_TYPE_SELECT) {
    return RunStreamed(connection, prepared.get(), sql, params, max_rows, max_bytes, read_only);
  }
  return RunMaterialized(connection, prepared.get(), sql, /*lone_select=*/false, params, max_rows,
                         max_bytes, read_only);
}

absl::StatusOr<TypedResult> QueryConnection::RunTyped(std::string_view sql,
                                                      std::span<const QueryParam> params,
                                                      size_t max_rows, size_t max_bytes) {
  duckdb_connection connection = handle_->connection;
  PreparedGuard prepared;
  const std::string text = LimitedSelect(WithoutTerminator(sql), max_rows);
  if (duckdb_prepare(connection, text.c_str(), prepared.out()) != DuckDBSuccess) {
    return ErrorStatus(DUCKDB_ERROR_INVALID, prepared.error());
  }
  if (absl::Status s = BindParams(prepared.get(), params); !s.ok()) return s;
  PendingGuard pending;
  if (duckdb_pending_prepared_streaming(prepared.get(), pending.out()) != DuckDBSuccess) {
    return ErrorStatus(DUCKDB_ERROR_INVALID, pending.error());
  }
  ResultGuard result;
  if (duckdb_execute_pending(pending.get(), result.get()) != DuckDBSuccess) {
    return ResultError(result.get());
  }
  absl::StatusOr<TypedResult> out = internal::TypedColumnsOf(result.get());
  if (!out.ok()) return out.status();
  size_t bytes = 0;
  for (;;) {
    ChunkGuard chunk(duckdb_fetch_chunk(*result.get()));
    if (chunk.get() == nullptr) break;
    if (!internal::AppendTypedChunk(chunk.get(), max_rows, max_bytes, &bytes, &*out)) return out;
  }
  if (duckdb_result_error(result.get()) != nullptr) return ResultError(result.get());
  return out;
}

}  // namespace strata::query
