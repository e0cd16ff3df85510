#pragma once

// DuckDB's half of `strata verify --deep` (storage/verify.h): reads one
// Parquet file strata wrote through DuckDB's own Parquet reader, decoding
// every column of every row, and compares the row count with the one
// meta.json declares. Two independent readers agreeing on a file is the
// differential check docs/architecture.md asks for ("DuckDB is the oracle").
//
// Every value is decoded because the query hashes each column over all
// rows (SELECT count(*), max(hash(COLUMNS(*)))), which neither statistics
// nor projection pushdown can answer without reading the pages.
//
// Thread-safety: as DuckDbEngine (queries on one engine run one at a
// time). Errors: DataLoss naming the file when DuckDB cannot read it or
// counts other than `file_rows` rows (DuckDB's message included); the
// engine's own errors (Internal) pass through.

#include <cstdint>
#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "query/duckdb_engine.h"
#include "storage/check/verify.h"

namespace strata::query {

[[nodiscard]] absl::Status ReadParquetFileWithDuckDb(DuckDbEngine& engine, const std::string& path,
                                                     uint64_t file_rows);

// An in-memory engine for these reads: one thread and a 1 GiB memory
// limit, so a deep verify beside a running server stays small (the query
// hashes as it streams and needs little memory).
[[nodiscard]] absl::StatusOr<std::unique_ptr<DuckDbEngine>> OpenParquetFileCheckEngine();

// The check for storage::VerifyOptions::parquet_check, named "duckdb";
// `engine` must outlive it.
storage::ParquetFileCheck DuckDbParquetFileCheck(DuckDbEngine* engine);

}  // namespace strata::query
