// Reading DuckDB data chunks as typed columns (typed_chunk.h).

#include "query/typed_chunk.h"

#include <cmath>
#include <optional>
#include <string>
#include <vector>

#include "fmt/format.h"

namespace strata::query::internal {
namespace {

// Owns a duckdb_logical_type.
class OwnedLogicalType {
 public:
  explicit OwnedLogicalType(duckdb_logical_type type) : type_(type) {}
  ~OwnedLogicalType() { duckdb_destroy_logical_type(&type_); }
  OwnedLogicalType(const OwnedLogicalType&) = delete;
  OwnedLogicalType& operator=(const OwnedLogicalType&) = delete;
  duckdb_logical_type get() const { return type_; }

 private:
  duckdb_logical_type type_;
};

// The kind a column of `type` is held as; nullopt when none covers it.
std::optional<TypedKind> KindOf(duckdb_logical_type type) {
  switch (duckdb_get_type_id(type)) {
    case DUCKDB_TYPE_BOOLEAN:
      return TypedKind::kBool;
    case DUCKDB_TYPE_TINYINT:
    case DUCKDB_TYPE_SMALLINT:
    case DUCKDB_TYPE_INTEGER:
    case DUCKDB_TYPE_BIGINT:
    case DUCKDB_TYPE_UTINYINT:
    case DUCKDB_TYPE_USMALLINT:
    case DUCKDB_TYPE_UINTEGER:
      return TypedKind::kInt64;
    case DUCKDB_TYPE_UBIGINT:
      return TypedKind::kUInt64;
    case DUCKDB_TYPE_FLOAT:
    case DUCKDB_TYPE_DOUBLE:
      return TypedKind::kDouble;
    case DUCKDB_TYPE_VARCHAR:
      return TypedKind::kString;
    case DUCKDB_TYPE_LIST: {
      OwnedLogicalType child(duckdb_list_type_child_type(type));
      switch (duckdb_get_type_id(child.get())) {
        case DUCKDB_TYPE_DOUBLE:
          return TypedKind::kDoubleList;
        case DUCKDB_TYPE_UBIGINT:
          return TypedKind::kUInt64List;
        default:
          return std::nullopt;
      }
    }
    default:
      return std::nullopt;
  }
}

// One column of a chunk, ready to read row by row.
struct ChunkColumn {
  duckdb_type type = DUCKDB_TYPE_INVALID;  // the SQL type (the list's, for lists)
  const void* data = nullptr;
  uint64_t* validity = nullptr;
  // Lists: the child vector's values and validity.
  const void* child_data = nullptr;
  uint64_t* child_validity = nullptr;
};

int64_t IntAt(const ChunkColumn& c, idx_t r) {
  switch (c.type) {
    case DUCKDB_TYPE_BOOLEAN:
      return static_cast<const bool*>(c.data)[r] ? 1 : 0;
    case DUCKDB_TYPE_TINYINT:
      return static_cast<const int8_t*>(c.data)[r];
    case DUCKDB_TYPE_SMALLINT:
      return static_cast<const int16_t*>(c.data)[r];
    case DUCKDB_TYPE_INTEGER:
      return static_cast<const int32_t*>(c.data)[r];
    case DUCKDB_TYPE_UTINYINT:
      return static_cast<const uint8_t*>(c.data)[r];
    case DUCKDB_TYPE_USMALLINT:
      return static_cast<const uint16_t*>(c.data)[r];
    case DUCKDB_TYPE_UINTEGER:
      return static_cast<const uint32_t*>(c.data)[r];
    default:
      return static_cast<const int64_t*>(c.data)[r];
  }
}

double DoubleAt(const ChunkColumn& c, idx_t r) {
  if (c.type == DUCKDB_TYPE_FLOAT) return static_cast<const float*>(c.data)[r];
  return static_cast<const double*>(c.data)[r];
}

// The bytes row `r` of column `c` counts against the byte cap.
size_t ValueBytes(const ChunkColumn& c, TypedKind kind, idx_t r) {
  if (!duckdb_validity_row_is_valid(c.validity, r)) return 8;
  switch (kind) {
    case TypedKind::kString: {
      auto* strings = static_cast<duckdb_string_t*>(const_cast<void*>(c.data));
      return duckdb_string_t_length(strings[r]);
    }
    case TypedKind::kDoubleList:
    case TypedKind::kUInt64List:
      return 8 + 8 * static_cast<const duckdb_list_entry*>(c.data)[r].length;
    default:
      return 8;
  }
}

void AppendTypedValue(const ChunkColumn& c, idx_t r, TypedColumn* out) {
  const bool valid = duckdb_validity_row_is_valid(c.validity, r);
  out->valid.push_back(valid ? 1 : 0);
  switch (out->kind) {
    case TypedKind::kBool:
    case TypedKind::kInt64:
      out->int64s.push_back(valid ? IntAt(c, r) : 0);
      return;
    case TypedKind::kUInt64:
      out->uint64s.push_back(valid ? static_cast<const uint64_t*>(c.data)[r] : 0);
      return;
    case TypedKind::kDouble:
      out->doubles.push_back(valid ? DoubleAt(c, r) : 0.0);
      return;
    case TypedKind::kString: {
      if (!valid) {
        out->strings.emplace_back();
        return;
      }
      auto* strings = static_cast<duckdb_string_t*>(const_cast<void*>(c.data));
      out->strings.emplace_back(duckdb_string_t_data(&strings[r]),
                                duckdb_string_t_length(strings[r]));
      return;
    }
    case TypedKind::kDoubleList:
    case TypedKind::kUInt64List: {
      if (valid) {
        const duckdb_list_entry entry = static_cast<const duckdb_list_entry*>(c.data)[r];
        for (idx_t i = entry.offset; i < entry.offset + entry.length; ++i) {
          const bool element = duckdb_validity_row_is_valid(c.child_validity, i);
          if (out->kind == TypedKind::kDoubleList) {
            out->doubles.push_back(element ? static_cast<const double*>(c.child_data)[i] : NAN);
          } else {
            out->uint64s.push_back(element ? static_cast<const uint64_t*>(c.child_data)[i] : 0);
          }
        }
      }
      out->offsets.push_back(out->kind == TypedKind::kDoubleList ? out->doubles.size()
                                                                 : out->uint64s.size());
      return;
    }
  }
}

}  // namespace

absl::StatusOr<TypedResult> TypedColumnsOf(duckdb_result* result) {
  TypedResult out;
  const idx_t columns = duckdb_column_count(result);
  for (idx_t c = 0; c < columns; ++c) {
    TypedColumn column;
    const char* name = duckdb_column_name(result, c);
    column.name = name != nullptr ? name : "";
    OwnedLogicalType type(duckdb_column_logical_type(result, c));
    const std::optional<TypedKind> kind = KindOf(type.get());
    if (!kind.has_value()) {
      return absl::InvalidArgumentError(
          fmt::format("query: column {} (\"{}\") has a type typed reads do not cover; cast it",
                      c + 1, column.name));
    }
    column.kind = *kind;
    if (column.kind == TypedKind::kDoubleList || column.kind == TypedKind::kUInt64List) {
      column.offsets.push_back(0);
    }
    out.columns.push_back(std::move(column));
  }
  return out;
}

bool AppendTypedChunk(duckdb_data_chunk chunk, size_t max_rows, size_t max_bytes, size_t* bytes,
                      TypedResult* out) {
  const idx_t columns = duckdb_data_chunk_get_column_count(chunk);
  std::vector<ChunkColumn> in(columns);
  for (idx_t c = 0; c < columns; ++c) {
    duckdb_vector vector = duckdb_data_chunk_get_vector(chunk, c);
    OwnedLogicalType type(duckdb_vector_get_column_type(vector));
    in[c].type = duckdb_get_type_id(type.get());
    in[c].data = duckdb_vector_get_data(vector);
    in[c].validity = duckdb_vector_get_validity(vector);
    if (in[c].type == DUCKDB_TYPE_LIST) {
      duckdb_vector child = duckdb_list_vector_get_child(vector);
      in[c].child_data = duckdb_vector_get_data(child);
      in[c].child_validity = duckdb_vector_get_validity(child);
    }
  }
  const idx_t rows = duckdb_data_chunk_get_size(chunk);
  for (idx_t r = 0; r < rows; ++r) {
    size_t row_bytes = 0;
    for (idx_t c = 0; c < columns; ++c) row_bytes += ValueBytes(in[c], out->columns[c].kind, r);
    if (out->rows >= max_rows || (max_bytes > 0 && row_bytes > max_bytes - *bytes)) {
      out->truncated = true;
      return false;
    }
    *bytes += row_bytes;
    ++out->rows;
    for (idx_t c = 0; c < columns; ++c) AppendTypedValue(in[c], r, &out->columns[c]);
  }
  return true;
}

}  // namespace strata::query::internal
