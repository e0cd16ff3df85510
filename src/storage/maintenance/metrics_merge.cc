// MergeMetricsTables (table_merge.h): data points by metric name, then
// time, through the external merge sort of external_merge.h and
// MetricsTableWriter.

#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "storage/maintenance/external_merge.h"
#include "storage/maintenance/table_merge.h"
#include "storage/table/metrics_table.h"

namespace strata::storage {
namespace {

using merge_internal::IndexBase;
using merge_internal::Shifted;

// The table side of the merge (external_merge.h lists what it supplies).
// Merge order: MetricsOrderKey (name, kind-1 rows first, time). A chunk's
// rows are MetricRows::rows: placeholders (kinds 2, 3), then metric rows.
struct MetricsMergeTable {
  using Rows = MetricRows;
  using Writer = MetricsTableWriter;
  using Key = MetricsOrderKey;

  static constexpr const char* kSchema = kMetricsSchema;
  static constexpr int kKindColumn = kMetricsRowKind;
  static constexpr std::array<int, 3> kIndexColumns = {kMetricsResourceScope + kResourceIndexOffset,
                                                       kMetricsResourceScope + kScopeIndexOffset,
                                                       kMetricsIndex};
  static constexpr const char* kOrderColumns = "metric_name, time_unix_nano";

  static const std::vector<parquet::ColumnSpec>& Columns() { return MetricsTableColumns(); }
  static bool IsDataKind(int32_t kind) {
    return kind == kMetricsDataPointRow || kind == kMetricsEmptyMetricRow;
  }

  static bool InMergeOrder(const parquet::FileMetaData& metadata) {
    return MetricsTableRowOrder(metadata) == MetricsRowOrder::kNameTime;
  }

  static absl::StatusOr<Rows> Read(parquet::FileReader& reader, std::string_view file,
                                   uint64_t begin, uint64_t end) {
    return ReadMetricsRows(reader, file, begin, end);
  }

  static size_t DataBegin(const Rows& rows) {
    size_t r = 0;
    while (r < rows.rows.size() && !IsDataKind(rows.rows[r].kind)) ++r;
    return r;
  }
  static size_t RowCount(const Rows& rows) { return rows.rows.size(); }

  static Key KeyOf(const Rows& rows, size_t row) {
    const MetricRows::Row& r = rows.rows[row];
    const otlp::MetricBatch& b = rows.batch;
    Key key{b.metrics.name[r.metric], r.kind == kMetricsDataPointRow, 0};
    if (key.point) key.time = b.points_of(b.metrics.type[r.metric])->time_unix_nano[r.point];
    return key;
  }

  // Every metrics.parquet is sorted by metric_name.
  static std::string InputOrderKey(const Rows& rows, size_t row) {
    return std::string(rows.batch.metrics.name[rows.rows[row].metric]);
  }

  static absl::StatusOr<std::unique_ptr<Writer>> Open(std::string_view batch_id,
                                                      const TableOptions& options,
                                                      parquet::ByteSink* sink) {
    return MetricsTableWriter::Open(batch_id, options, MetricsRowOrder::kNameTime, sink);
  }

  static uint32_t Register(Writer& writer, const Rows& rows, const IndexBase& base) {
    return writer.AddBatch(rows.batch, Shifted(rows.resource_index, base.offsets[0]),
                           Shifted(rows.scope_index, base.offsets[1]),
                           Shifted(rows.metric_index, base.offsets[2]));
  }

  static void AppendPlaceholder(Writer& writer, uint32_t batch, const Rows& rows, size_t row) {
    const MetricRows::Row& r = rows.rows[row];
    writer.AppendPlaceholder(
        batch, r.kind, r.resource,
        r.kind == kMetricsEmptyScopeRow ? std::optional<uint32_t>(r.scope) : std::nullopt);
  }

  static void AppendData(Writer& writer, uint32_t batch, const Rows& rows, size_t row) {
    const MetricRows::Row& r = rows.rows[row];
    writer.AppendMetricRow(
        batch, r.metric,
        r.kind == kMetricsDataPointRow ? std::optional<uint32_t>(r.point) : std::nullopt);
  }
};

}  // namespace

absl::StatusOr<SignalMeta> MergeMetricsTables(FileSystem& fs, std::span<const MergeInput> inputs,
                                              std::string_view output_batch_id,
                                              const MergeOptions& options, parquet::ByteSink* out) {
  merge_internal::ExternalMerge<MetricsMergeTable> merge(fs, output_batch_id, options);
  return merge.Run(inputs, out);
}

}  // namespace strata::storage
