#pragma once

// metrics.parquet (docs/format/metrics-parquet.md): one row per metric data
// point of every type, plus placeholder rows for metrics without points and
// for scopes and resources with nothing under them, grouped by metric name.
//
// WriteMetricsTable turns one or more decoded request batches into the
// bytes of one file and the meta.json entry describing it;
// ReadMetricsTable turns a file back into one batch equal to the inputs
// concatenated (resources, scopes and metrics renumbered consecutively, in
// input order); CheckMetricsTableFooter is what boot checks without reading
// pages. The writer is metrics_table.cc, the reader metrics_table_reader.cc.
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
// only read.

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
