#pragma once

// A query's answer read as typed columns (QueryConnection::RunTyped,
// QueryPool::RunTyped): numbers stay numbers and lists stay lists, where
// QueryResult renders every value as text. For strata's own queries that
// read many rows (the Prometheus API's points), not for user SQL.

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace strata::query {

// How a column is held. The statement's SQL type decides it:
//   BOOLEAN                                     -> kBool (in int64s, 0 or 1)
//   TINYINT, SMALLINT, INTEGER, BIGINT,
//   UTINYINT, USMALLINT, UINTEGER               -> kInt64 (widened)
//   UBIGINT                                     -> kUInt64
//   FLOAT, DOUBLE                               -> kDouble
//   VARCHAR                                     -> kString
//   DOUBLE[]                                    -> kDoubleList
//   UBIGINT[]                                   -> kUInt64List
// Any other type is InvalidArgument: cast it in the SQL.
enum class TypedKind { kBool, kInt64, kUInt64, kDouble, kString, kDoubleList, kUInt64List };

// One column of `rows` values. A NULL value reads valid[r] == 0 and a zero
// (0, 0.0, "" or an empty list) in its slot. A NULL element inside a list
// reads 0 (kUInt64List) or NaN (kDoubleList).
struct TypedColumn {
  std::string name;
  TypedKind kind = TypedKind::kInt64;
  std::vector<uint8_t> valid;        // 1 where the value is not NULL
  std::vector<int64_t> int64s;       // kBool, kInt64
  std::vector<uint64_t> uint64s;     // kUInt64; the elements of kUInt64List
  std::vector<double> doubles;       // kDouble; the elements of kDoubleList
  std::vector<std::string> strings;  // kString
  // Lists: row r's elements are [offsets[r], offsets[r + 1]) of uint64s or
  // doubles; offsets has rows + 1 entries (offsets[0] == 0).
  std::vector<size_t> offsets;

  bool is_valid(size_t r) const { return valid[r] != 0; }
  size_t list_size(size_t r) const { return offsets[r + 1] - offsets[r]; }
  const double* double_list(size_t r) const { return doubles.data() + offsets[r]; }
  const uint64_t* uint64_list(size_t r) const { return uint64s.data() + offsets[r]; }
};

struct TypedResult {
  std::vector<TypedColumn> columns;
  size_t rows = 0;
  // True when the answer stops before the query's last row: the row cap
  // or the byte cap (8 bytes a number or list element, a string's length)
  // would have been passed.
  bool truncated = false;
};

}  // namespace strata::query
