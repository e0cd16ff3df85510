#pragma once

// metrics.parquet (docs/format/metrics-parquet.md): one row per metric data
// point of every type, plus placeholder rows for metrics without points and
// for scopes and resources with nothing under them, grouped by metric name.
//
// WriteMetricsTable turns one or more decoded request batches into the
// bytes of one file and the meta.json entry describing it, through the
// streaming MetricsTableWriter (which compaction's merge, table_merge.h,
// also writes through, ordering rows by name and then time);
// ReadMetricsTable turns a file back into one batch equal to the inputs
// concatenated (resources, scopes and metrics renumbered consecutively, in
// input order); ReadMetricsRows reads a range of rows (the merge reads in
// chunks); CheckMetricsTableFooter is what boot checks without reading
// pages. The writer is metrics_table.cc, the readers
// metrics_table_reader.cc.
//
// The writer validates its inputs (otlp::ValidateBatch and what the file
// cannot hold) before writing, and the reader validates the rebuilt batch
// after reading. It builds each column once, row by row, with capacity
// reserved up front; metric names are sorted through an array of compact
// (input, metric) keys, never by moving batch rows.
//
// Errors: WriteMetricsTable returns Internal for a batch that breaks the
// invariants of otlp/batch.h, InvalidArgument for a batch holding a value
// the file has no place for (the format page lists them; the decoders never
// produce one), and the Parquet writer's errors. The readers return DataLoss
// naming the file and the failed check for any bytes that are not a valid
// metrics.parquet of `batch_id`, and the source's error when a read fails.
// Nothing here crashes on corrupt input.
//
// Thread-safety: the functions are reentrant; the batches passed in are
// only read. A MetricsTableWriter has a single owner.

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

// strata.schema of metrics.parquet.
inline constexpr char kMetricsSchema[] = "metrics";

// Column positions, in file order (metrics-parquet.md "Columns"). A family
// entry names the first of its kAttributeFamilyColumns columns.
enum MetricsColumn : int {
  kMetricsRowKind = 0,
  kMetricsResourceScope = 1,
  kMetricsIndex = kMetricsResourceScope + kResourceScopeColumns,
  kMetricsName,
  kMetricsDescription,
  kMetricsUnit,
  kMetricsMetadata,
  kMetricsType = kMetricsMetadata + kAttributeFamilyColumns,
  kMetricsAggregationTemporality,
  kMetricsIsMonotonic,
  kMetricsStartTime,
  kMetricsTime,
  kMetricsPointFlags,
  kMetricsPointAttributes,
  kMetricsValueType = kMetricsPointAttributes + kAttributeFamilyColumns,
  kMetricsValueDouble,
  kMetricsValueInt,
  kMetricsCount,
  kMetricsSum,
  kMetricsMin,
  kMetricsMax,
  kMetricsBucketCounts,
  kMetricsExplicitBounds,
  kMetricsExpScale,
  kMetricsExpZeroCount,
  kMetricsExpZeroThreshold,
  kMetricsExpPositiveOffset,
  kMetricsExpPositiveBucketCounts,
  kMetricsExpNegativeOffset,
  kMetricsExpNegativeBucketCounts,
  kMetricsSummaryQuantile,
  kMetricsSummaryValue,
  kMetricsExemplarTime,
  kMetricsExemplarValueType,
  kMetricsExemplarValueDouble,
  kMetricsExemplarValueInt,
  kMetricsExemplarTraceId,
  kMetricsExemplarSpanId,
  kMetricsExemplarAttrCount,
  kMetricsExemplarAttributes,
  kMetricsPromoted = kMetricsExemplarAttributes + kAttributeFamilyColumns,
  kMetricsColumnCount = kMetricsPromoted + kResourcePromotedColumns,
};

// row_kind values.
enum MetricsRowKind : int32_t {
  kMetricsDataPointRow = 0,
  kMetricsEmptyMetricRow = 1,    // a metric without data points
  kMetricsEmptyScopeRow = 2,     // a scope without metrics
  kMetricsEmptyResourceRow = 3,  // a resource without scopes
};

// The schema of metrics.parquet, in file order (the format page's
// "Columns").
const std::vector<parquet::ColumnSpec>& MetricsTableColumns();

// How a file orders its metric rows (kinds 0 and 1; placeholders of kinds
// 2 and 3 always come first), as its footer's sorting_columns declare.
enum class MetricsRowOrder {
  // metric_name bytewise, each metric's rows together (ingest);
  // sorting_columns [metric_name].
  kName,
  // metric_name bytewise, then kind-1 rows (no time) before data points,
  // then time_unix_nano, ties in the order appended (compaction);
  // sorting_columns [metric_name, time_unix_nano].
  kNameTime,
};

// The order a footer declares: kNameTime when every row group declares
// sorting_columns [metric_name, time_unix_nano] (ascending, nulls first),
// else kName.
MetricsRowOrder MetricsTableRowOrder(const parquet::FileMetaData& metadata);

// A metric row's place in MetricsRowOrder::kNameTime.
struct MetricsOrderKey {
  std::string_view name;
  bool point = false;  // a data point (kind 0), else a kind-1 row
  uint64_t time = 0;   // time_unix_nano of a data point
  friend bool operator<(const MetricsOrderKey& a, const MetricsOrderKey& b) {
    if (a.name != b.name) return a.name < b.name;
    if (a.point != b.point) return !a.point;
    return a.time < b.time;
  }
};

class MetricsBuilder;

// Streams one metrics.parquet to a sink: rows are appended from registered
// batches, buffered as columns and handed to the Parquet writer on each
// Flush (which cuts row groups at TableOptions::row_group_bytes), so the
// writer holds the rows appended since the last Flush plus one open row
// group, however large the file grows.
//
// Rules, checked (a violation fails the next Flush or Finish with
// Internal, the caller's bug):
//   1. Placeholder rows (kinds 2 and 3) precede every metric row.
//   2. Metric rows are appended in the order `order` names.
//   3. The file holds fewer than 2^32 - 1 rows.
// Rows of one metric may be appended from several batches (with the same
// metric_index); their metric columns must agree, which the caller
// ensures. A registered batch must stay alive, unchanged, while rows
// naming it are appended; the writer copies every value when a row is
// appended and forgets its batches on Flush. The caller validates batches
// (WriteMetricsTable checks its inputs; the readers return validated
// batches). After an error the sink holds an incomplete file (no footer).
class MetricsTableWriter : public TableFileWriter {
 public:
  // What the next rows will hold, for reserving capacity.
  struct Sizes {
    size_t rows = 0;
    size_t point_attributes = 0;
    size_t exemplars = 0;
    size_t exemplar_attributes = 0;
  };

  // Writes the leading magic to `sink`, which must outlive the writer.
  [[nodiscard]] static absl::StatusOr<std::unique_ptr<MetricsTableWriter>> Open(
      std::string_view batch_id, const TableOptions& options, MetricsRowOrder order,
      parquet::ByteSink* sink);
  ~MetricsTableWriter();

  // Registers a batch whose resources, scopes and metrics are numbered
  // consecutively after those of the batches registered before it
  // (WriteMetricsTable's rule). Only before the first Flush.
  uint32_t AddBatch(const otlp::MetricBatch& batch);
  // Registers a batch whose resource row r is file resource index
  // resource_index[r], likewise scopes and metrics (compaction: rows of one
  // file's metrics arrive in several batches).
  uint32_t AddBatch(const otlp::MetricBatch& batch, std::vector<uint32_t> resource_index,
                    std::vector<uint32_t> scope_index, std::vector<uint32_t> metric_index);
  void Reserve(const Sizes& sizes);

  // A placeholder of kind 2 (a scope without metrics: `scope` set) or 3 (a
  // resource without scopes).
  void AppendPlaceholder(uint32_t batch, MetricsRowKind kind, uint32_t resource,
                         std::optional<uint32_t> scope);
  // One row of metric `metric` of registered batch `batch`: data point
  // `point` (a row of the point table of the metric's type), or with
  // nullopt the kind-1 row of a metric without points.
  void AppendMetricRow(uint32_t batch, uint32_t metric, std::optional<uint32_t> point);
  // Every row of a metric: its points in order, or its kind-1 row.
  void AppendMetric(uint32_t batch, uint32_t metric);

  // Rows appended since the last Flush.
  size_t buffered_rows() const;
  uint64_t rows_appended() const { return meta().file_rows + buffered_rows(); }
  uint64_t placeholder_rows() const { return placeholders_; }

  // Hands the buffered rows to the Parquet writer; forgets every batch.
  [[nodiscard]] absl::Status Flush();
  // Flushes and writes the footer. Returns the meta.json `metrics` member
  // of the file. Call once, with at least one row appended.
  [[nodiscard]] absl::StatusOr<SignalMeta> Finish();

 private:
  MetricsTableWriter(MetricsRowOrder order, std::unique_ptr<parquet::FileWriter> writer);

  const MetricsRowOrder order_;
  std::unique_ptr<MetricsBuilder> builder_;
  uint32_t next_metric_base_ = 0;
  uint64_t placeholders_ = 0;
  bool seen_metric_row_ = false;
  std::string last_name_;
  bool last_point_ = false;
  uint64_t last_time_ = 0;
};

// A written metrics.parquet and its meta.json `signals.metrics` member.
struct MetricsTable {
  std::string file;  // the Parquet file's bytes
  // rows (data points), file_rows (all rows), event_time and
  // promotion_misses, as meta-json.md defines them.
  SignalMeta meta;
};

// Writes every input batch (in this order) into one metrics.parquet whose
// footer names `batch_id`. Batches with no resources contribute nothing;
// when there is no row at all the result has file_rows 0 and an empty
// `file` (the file is then absent, meta-json.md).
[[nodiscard]] absl::StatusOr<MetricsTable> WriteMetricsTable(
    std::span<const otlp::MetricBatch* const> batches, std::string_view batch_id,
    const TableOptions& options = {});

// Reads a whole metrics.parquet of `batch_id` back into one batch, checking
// everything the format page's "Validation" lists. Strings in the result
// view buffers the batch retains. `file_name` names the file in errors.
[[nodiscard]] absl::StatusOr<otlp::MetricBatch> ReadMetricsTable(
    parquet::RandomAccessSource* source, std::string_view batch_id, std::string_view file_name);

// Rows [row_begin, row_end) of a metrics.parquet, read back.
struct MetricRows {
  // The resources, scopes and metrics the rows name (each once, in file
  // index order), each metric with the points of the range, in row order.
  otlp::MetricBatch batch;
  // The file's resource_index, scope_index and metric_index of each
  // resource, scope and metric row of `batch`.
  std::vector<uint32_t> resource_index;
  std::vector<uint32_t> scope_index;
  std::vector<uint32_t> metric_index;
  // Every row of the range, in row order.
  struct Row {
    MetricsRowKind kind = kMetricsDataPointRow;
    uint32_t resource = 0;  // rows of `batch`
    uint32_t scope = 0;     // RowOwners::kNoScope on kind 3
    uint32_t metric = 0;    // kinds 0 and 1
    uint32_t point = 0;     // kind 0: the row of the metric's point table
  };
  std::vector<Row> rows;
};

// Reads rows [row_begin, row_end) (file row numbers, a non-empty range
// inside the file) of a metrics.parquet that `reader` holds, opened
// through OpenTable with MetricsTableColumns(): only the pages that cover
// the range. Checks what ReadMetricsTable checks, as far as the range
// shows (the order inside it; a metric's rows agree inside it). Row
// numbers in messages are file rows, except in resource and scope checks,
// where they count from row_begin.
[[nodiscard]] absl::StatusOr<MetricRows> ReadMetricsRows(parquet::FileReader& reader,
                                                         std::string_view file_name,
                                                         uint64_t row_begin, uint64_t row_end);

// Boot's check: the footer parses, the schema and key-value metadata are
// those of a metrics.parquet of `batch_id`, and the row count equals
// meta.json's `file_rows`. Reads only the footer.
[[nodiscard]] absl::Status CheckMetricsTableFooter(parquet::RandomAccessSource* source,
                                                   std::string_view batch_id,
                                                   uint64_t expected_file_rows,
                                                   std::string_view file_name);

// Shared by the writer (metrics_table.cc) and the reader
// (metrics_table_reader.cc); not for other callers.
namespace metrics_internal {

// The per-exemplar parallel lists, all of one length per row.
inline constexpr int kExemplarLists[] = {kMetricsExemplarTime,        kMetricsExemplarValueType,
                                         kMetricsExemplarValueDouble, kMetricsExemplarValueInt,
                                         kMetricsExemplarTraceId,     kMetricsExemplarSpanId,
                                         kMetricsExemplarAttrCount};

const std::string& ColumnName(int column);
// Whether column `c` is one of the three attribute families' columns.
bool IsFamilyColumn(int c);
// One of the six MetricType codes.
bool IsKnownMetricType(int32_t code);
// Sum, histogram and exponential histogram carry aggregation_temporality.
bool HasTemporality(otlp::MetricType type);
// Gauge and sum points live in number_points.
bool IsNumberType(otlp::MetricType type);

}  // namespace metrics_internal

}  // namespace strata::storage
