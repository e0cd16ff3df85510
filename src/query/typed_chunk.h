#pragma once

// Inside the DuckDB adapter only (it includes duckdb.h): DuckDB data chunks
// read into a TypedResult (typed_result.h), for QueryConnection::RunTyped.

#include <duckdb.h>

#include <cstddef>

#include "absl/status/statusor.h"
#include "query/typed_result.h"

namespace strata::query::internal {

// An empty TypedResult with the names and kinds of `result`'s columns;
// InvalidArgument naming the first column whose type TypedKind does not
// cover.
[[nodiscard]] absl::StatusOr<TypedResult> TypedColumnsOf(duckdb_result* result);

// Appends the rows of `chunk` (whose columns match out->columns) to `out`,
// one whole row at a time, while out->rows stays within `max_rows` and
// *bytes (the answer's bytes so far, as TypedResult counts them) within
// `max_bytes` (0: no byte cap). False once a cap stops it; out->truncated
// is then set.
bool AppendTypedChunk(duckdb_data_chunk chunk, size_t max_rows, size_t max_bytes, size_t* bytes,
                      TypedResult* out);

}  // namespace strata::query::internal
