#include "query/parquet_file_check.h"

#include <charconv>

#include "fmt/format.h"

namespace strata::query {

absl::Status ReadParquetFileWithDuckDb(DuckDbEngine& engine, const std::string& path,
                                       uint64_t file_rows) {
  absl::StatusOr<QueryResult> result = engine.Query(fmt::format(
      "SELECT count(*), max(hash(COLUMNS(*))) FROM read_parquet({})", SqlLiteral(path)));
  if (absl::IsInternal(result.status())) return result.status();
  if (!result.ok()) {
    return absl::DataLossError(
        fmt::format("{}: DuckDB cannot read it: {}", path, std::string(result.status().message())));
  }
  uint64_t rows = 0;
  std::optional<std::string> count;
  if (result->rows.size() == 1 && !result->rows[0].empty()) count = result->rows[0][0];
  if (!count.has_value() ||
      std::from_chars(count->data(), count->data() + count->size(), rows).ec != std::errc()) {
    return absl::InternalError(fmt::format("{}: DuckDB returned no row count", path));
  }
  if (rows != file_rows) {
    return absl::DataLossError(
        fmt::format("{}: DuckDB reads {} rows, meta.json says {}", path, rows, file_rows));
  }
  return absl::OkStatus();
}

absl::StatusOr<std::unique_ptr<DuckDbEngine>> OpenParquetFileCheckEngine() {
  EngineOptions options;
  options.threads = 1;
  options.memory_limit = "1GB";
  return DuckDbEngine::Open(options);
}

storage::ParquetFileCheck DuckDbParquetFileCheck(DuckDbEngine* engine) {
  return storage::ParquetFileCheck{.name = "duckdb",
                                   .run = [engine](const std::string& path, uint64_t file_rows) {
                                     return ReadParquetFileWithDuckDb(*engine, path, file_rows);
                                   }};
}

}  // namespace strata::query
