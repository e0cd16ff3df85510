#pragma once

// logs.parquet (docs/format/logs-parquet.md): the streaming writer
// (LogsTableWriter) and WriteLogsTable, which turns the LogBatches of one
// group commit into one file through it; the readers that turn a whole
// file, or a range of its rows (compaction's merge), back into a LogBatch;
// and the footer check boot runs without reading pages. The writer is
// logs_table.cc, the readers logs_table_reader.cc.
//
// WriteLogsTable renumbers resources and scopes consecutively across its
// inputs, writes placeholder rows for resources and scopes without records
// first, then every record in input order (no sort, so the round trip is
// exact), and derives the promoted columns and the meta.json `logs` member.
// Compaction's merge (table_merge.h) writes records ordered by event time
// through the same LogsTableWriter and marks the file so
// (kLogsRowOrderKey).
//
// Errors: as spans_table.h: Internal for an input batch that breaks
// batch.h's invariants (or rows appended against the writer's rules),
// DataLoss naming the file and the check for bad bytes, the source's error
// when reading fails, the sink's when writing fails.
//
// Thread-safety: reentrant; batches are only read. A LogsTableWriter has a
// single owner.

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "otlp/batch.h"
#include "parquet/column_vector.h"
#include "parquet/column_writer.h"
#include "parquet/file_reader.h"
#include "storage/format/batch_meta.h"
#include "storage/table/attribute_family.h"
#include "storage/table/promotion.h"
#include "storage/table/resource_scope_columns.h"
#include "storage/table/table_file.h"

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

// The footer's key-value entry that declares the order of a file's
// records (logs-parquet.md "Row order"). Absent: input order (ingest).
inline constexpr char kLogsRowOrderKey[] = "strata.row_order";
// Its one value: records in non-decreasing LogEventTime, ties in the order
// they were added.
inline constexpr char kLogsRowOrderEventTime[] = "event_time";

enum class LogsRowOrder {
  kInput,      // records as appended (no key-value entry)
  kEventTime,  // kLogsRowOrderKey = kLogsRowOrderEventTime
};

// A record's event time as meta.json defines it for logs: time_unix_nano,
// or observed_time_unix_nano when the former is 0.
inline uint64_t LogEventTime(uint64_t time_unix_nano, uint64_t observed_time_unix_nano) {
  return time_unix_nano != 0 ? time_unix_nano : observed_time_unix_nano;
}

class LogsBuilder;

// Streams one logs.parquet to a sink: rows are appended from registered
// batches, buffered as columns, and handed to the Parquet writer on each
// Flush (which cuts row groups at TableOptions::row_group_bytes), so the
// writer holds the rows appended since the last Flush plus one open row
// group, however large the file grows.
//
// Rules, checked (a violation fails the next Flush or Finish with
// Internal, the caller's bug):
//   1. Every placeholder row precedes every record row.
//   2. With LogsRowOrder::kEventTime, records are appended in
//      non-decreasing LogEventTime.
//   3. The file holds fewer than 2^32 - 1 rows.
// A registered batch must stay alive, unchanged, while rows naming it are
// appended; the writer copies every value when a row is appended and
// forgets its batches on Flush. The caller validates batches
// (otlp::ValidateBatch; the readers below return validated batches).
// After an error the sink holds an incomplete file (no footer).
class LogsTableWriter : public TableFileWriter {
 public:
  // Writes the leading magic to `sink`, which must outlive the writer.
  [[nodiscard]] static absl::StatusOr<std::unique_ptr<LogsTableWriter>> Open(
      std::string_view batch_id, const TableOptions& options, LogsRowOrder order,
      parquet::ByteSink* sink);
  ~LogsTableWriter();

  // Registers a batch whose resources and scopes are numbered consecutively
  // after those of the batches registered before it (WriteLogsTable's
  // rule). Only before the first Flush.
  uint32_t AddBatch(const otlp::LogBatch& batch);
  // Registers a batch whose resource row r is file resource index
  // resource_index[r], likewise scopes (compaction: rows of one file's
  // resources arrive in several batches).
  uint32_t AddBatch(const otlp::LogBatch& batch, std::vector<uint32_t> resource_index,
                    std::vector<uint32_t> scope_index);
  // Capacity for `rows` more rows until the next Flush.
  void Reserve(size_t rows);

  // A placeholder row for resource row `resource` of registered batch
  // `batch` and its scope row `scope`, or for a resource without scopes.
  void AppendPlaceholder(uint32_t batch, uint32_t resource, std::optional<uint32_t> scope);
  // The placeholder rows of a whole registered batch: resources without
  // scopes, then scopes without records. Returns how many.
  size_t AppendPlaceholders(uint32_t batch);
  // A record row: record `record` of registered batch `batch`.
  void AppendRecord(uint32_t batch, uint32_t record);

  // Rows appended since the last Flush.
  size_t buffered_rows() const;
  // Rows appended so far, and the placeholder rows among them.
  uint64_t rows_appended() const { return meta().file_rows + buffered_rows(); }
  uint64_t placeholder_rows() const { return placeholders_; }

  // Hands the buffered rows to the Parquet writer; forgets every batch.
  [[nodiscard]] absl::Status Flush();
  // Flushes and writes the footer. Returns the meta.json `logs` member of
  // the file (rows, file_rows, event_time, promotion_misses). Call once,
  // with at least one row appended.
  [[nodiscard]] absl::StatusOr<SignalMeta> Finish();

 private:
  LogsTableWriter(LogsRowOrder order, std::unique_ptr<parquet::FileWriter> writer);

  const LogsRowOrder order_;
  std::unique_ptr<LogsBuilder> builder_;
  uint64_t placeholders_ = 0;
  bool seen_record_ = false;
  uint64_t last_time_ = 0;
};

// Shared by the writer (logs_table.cc) and the readers
// (logs_table_reader.cc); not for other callers.
namespace logs_internal {
// The body's value columns, from kLogsBodyStr: str, int, double, bool, bytes.
inline constexpr int kBodyValueColumns = 5;
// Which of them (0..4) holds a body of `type`; -1 for kEmpty.
int BodyColumnOf(otlp::ValueType type);
}  // namespace logs_internal

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
// the batch retains). `file_name` names the file in errors. A file that
// declares LogsRowOrder::kEventTime must hold its records in that order.
[[nodiscard]] absl::StatusOr<otlp::LogBatch> ReadLogsTable(parquet::RandomAccessSource* source,
                                                           std::string_view batch_id,
                                                           std::string_view file_name);

// The row order a logs.parquet footer declares; DataLoss for a
// kLogsRowOrderKey value this version does not know.
[[nodiscard]] absl::StatusOr<LogsRowOrder> LogsTableRowOrder(const parquet::FileMetaData& metadata,
                                                             std::string_view file_name);

// Rows [row_begin, row_end) of a logs.parquet, read back.
struct LogRows {
  // The resources and scopes the rows name (each once, in file index
  // order) and one record per record row, in row order.
  otlp::LogBatch batch;
  // The file's resource_index of each resource row of `batch`, and its
  // scope_index of each scope row.
  std::vector<uint32_t> resource_index;
  std::vector<uint32_t> scope_index;
  // The range's placeholder rows, in row order (they precede its records):
  // a resource row of `batch` and its scope row, or RowOwners::kNoScope.
  struct Placeholder {
    uint32_t resource = 0;
    uint32_t scope = 0;
  };
  std::vector<Placeholder> placeholders;
};

// Reads rows [row_begin, row_end) (file row numbers, a non-empty range
// inside the file) of a logs.parquet that `reader` holds, opened through
// OpenTable with LogsTableColumns(): only the pages that cover the range.
// Checks what ReadLogsTable checks, as far as the range shows (the record
// order inside it). Row numbers in messages are file rows, except in
// resource and scope checks, where they count from row_begin.
[[nodiscard]] absl::StatusOr<LogRows> ReadLogsRows(parquet::FileReader& reader,
                                                   std::string_view file_name, uint64_t row_begin,
                                                   uint64_t row_end);

// Reads the file rows `rows` (strictly increasing, each inside the file) of
// a logs.parquet opened as for ReadLogsRows, as if they were one range:
// `placeholders` holds those of them that are placeholders, then
// `batch.logs` one record per record row, in the order of `rows`. Runs of
// rows at most kLogsGatherGapRows apart are read as one range and the
// pages between runs are not read, so a few rows scattered over a large
// file cost the pages that hold them; the resource and scope content
// columns, which repeat on every row, are read at one row per resource and
// scope pair. Checks what ReadLogsRows checks, the
// record order among the chosen rows; row numbers in messages count from
// rows[0] in the chosen rows. InvalidArgument for a `rows` that breaks
// the rule above.
inline constexpr uint64_t kLogsGatherGapRows = 256;
[[nodiscard]] absl::StatusOr<LogRows> ReadLogsRowsAt(parquet::FileReader& reader,
                                                     std::string_view file_name,
                                                     std::span<const uint64_t> rows);

// Boot's check: footer, schema, key-value metadata, num_rows == file_rows.
[[nodiscard]] absl::Status CheckLogsTableFooter(parquet::RandomAccessSource* source,
                                                std::string_view batch_id, uint64_t file_rows,
                                                std::string_view file_name);

}  // namespace strata::storage
