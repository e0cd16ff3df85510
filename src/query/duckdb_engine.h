#pragma once

// DuckDbEngine is strata's adapter to embedded DuckDB: the only code that
// includes duckdb.h. It opens a database (in memory, or a file under the
// data directory), holds one connection and runs SQL text, returning results
// as strings. Later work grows it into the bounded query pool DESIGN.md
// describes (memory limit, spill directory, deadlines, restricted file
// access); the shape of the API stays: SQL in, Status or rows out, no
// exception ever crosses it.
//
// Thread-safety: safe for concurrent use; queries on one engine run one at a
// time (mu_ serializes them).
//
// Errors: Internal when DuckDB cannot open or connect, InvalidArgument for a
// query DuckDB rejects (its message included).

#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "common/mutex.h"
#include "parquet/column_vector.h"

namespace strata::query {

// A query's result, every value rendered as DuckDB's VARCHAR cast; SQL NULL
// is std::nullopt.
struct QueryResult {
  std::vector<std::string> columns;
  std::vector<std::vector<std::optional<std::string>>> rows;
};

struct EngineOptions {
  // Empty opens an in-memory database.
  std::string database_path;
  // DuckDB worker threads; 0 keeps DuckDB's default.
  int threads = 0;
  // DuckDB memory_limit setting, e.g. "1GB"; empty keeps DuckDB's default.
  std::string memory_limit;
};

class DuckDbEngine {
 public:
  [[nodiscard]] static absl::StatusOr<std::unique_ptr<DuckDbEngine>> Open(
      const EngineOptions& options);
  ~DuckDbEngine();

  DuckDbEngine(const DuckDbEngine&) = delete;
  DuckDbEngine& operator=(const DuckDbEngine&) = delete;

  // Runs `sql` (one or more statements; the last one's rows are returned).
  [[nodiscard]] absl::StatusOr<QueryResult> Query(std::string_view sql);

  // Creates table `table` (replacing one of that name) with one column per
  // spec, typed as DuckDB reads that Parquet column (INTEGER(8, unsigned) ->
  // UTINYINT, STRING -> VARCHAR, other byte arrays -> BLOB, LIST -> T[],
  // ...), and appends the rows of `columns` through DuckDB's appender in
  // data chunks. Used to load the same rows into DuckDB that strata writes
  // natively (the writer benchmark's baseline) and by tests. InvalidArgument
  // for a type the mapping does not cover or columns of unequal length.
  [[nodiscard]] absl::Status CreateTableFromColumns(std::string_view table,
                                                    std::span<const parquet::ColumnSpec> specs,
                                                    std::span<const parquet::ColumnVector> columns);

  // The linked library's version, e.g. "v1.4.4".
  static std::string LibraryVersion();

 private:
  struct Handles;
  explicit DuckDbEngine(std::unique_ptr<Handles> handles);

  Mutex mu_;
  std::unique_ptr<Handles> handles_ ABSL_GUARDED_BY(mu_);
};

}  // namespace strata::query
