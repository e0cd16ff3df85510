#pragma once

// logs.parquet (docs/format/logs-parquet.md): the writer that turns the
// LogBatches of one group commit into one Parquet file, the reader that
// turns a whole file back into one LogBatch, and the footer check boot runs
// without reading pages.
//
// WriteLogsTable renumbers resources and scopes consecutively across its
// inputs, writes placeholder rows for resources and scopes without records
// first, then every record in input order (no sort, so the round trip is
// exact), and derives the promoted columns and the meta.json `logs` member.
//
// Errors: as spans_table.h: Internal for an input batch that breaks
// batch.h's invariants, DataLoss naming the file and the check for bad
// bytes, the source's error when reading fails.
//
// Thread-safety: reentrant; batches are only read.

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "otlp/batch.h"
#include "parquet/column_vector.h"
#include "parquet/file_reader.h"
#include "storage/batch_meta.h"
#include "storage/table_common.h"

namespace strata::storage {

// strata.schema of logs.parquet.
inline constexpr char kLogsSchema[] = "logs";

// Column positions in logs.parquet (the order of logs-parquet.md).
enum LogsColumn : int {
  kLogsRowKind = 0,
  kLogsResourceScope = 1,  // kResourceScopeColumns columns
  kLogsTime = kLogsResourceScope + kResourceScopeColumns,
  kLogsObservedTime,
  kLogsSeverityNumber,
  kLogsSeverityText,
  kLogsBodyType,
  kLogsBodyStr,
  kLogsBodyInt,
  kLogsBodyDouble,
  kLogsBodyBool,
  kLogsBodyBytes,
  kLogsAttributes,  // family
  kLogsDroppedAttributes = kLogsAttributes + kAttributeFamilyColumns,
  kLogsFlags,
  kLogsTraceId,
  kLogsSpanId,
  kLogsEventName,
  kLogsPromoted,  // kResourcePromotedColumns, then exception_type, exception_message
  kLogsColumnCount = kLogsPromoted + kResourcePromotedColumns + 2,
};

// The schema of logs.parquet, in file order.
const std::vector<parquet::ColumnSpec>& LogsTableColumns();

// A written logs.parquet.
struct LogsTable {
  std::string file;  // the Parquet file's bytes; empty when file_rows is 0
  SignalMeta meta;   // meta.json `signals.logs`
  // Row of the first record (the number of placeholder rows).
  uint32_t first_record_row = 0;
};

[[nodiscard]] absl::StatusOr<LogsTable> WriteLogsTable(
    std::span<const otlp::LogBatch* const> batches, std::string_view batch_id,
    const TableOptions& options = {});

// Reads a whole logs.parquet back into one batch (views point into buffers
// the batch retains). `file_name` names the file in errors.
[[nodiscard]] absl::StatusOr<otlp::LogBatch> ReadLogsTable(parquet::RandomAccessSource* source,
                                                           std::string_view batch_id,
                                                           std::string_view file_name);

// Boot's check: footer, schema, key-value metadata, num_rows == file_rows.
[[nodiscard]] absl::Status CheckLogsTableFooter(parquet::RandomAccessSource* source,
                                                std::string_view batch_id, uint64_t file_rows,
                                                std::string_view file_name);

}  // namespace strata::storage
