// Interim logs and metrics merges: whole tables read and written again, so
// memory grows with the inputs. Replaced by the streaming merges of
// table_merge.h (in progress on the same issue).
#include "common/status_macros.h"
#include "storage/file_source.h"
#include "storage/logs_table.h"
#include "storage/metrics_table.h"
#include "storage/table_merge.h"
namespace strata::storage {
absl::StatusOr<SignalMeta> MergeLogsTables(FileSystem& fs, std::span<const MergeInput> inputs,
                                           std::string_view id, const MergeOptions& o,
                                           parquet::ByteSink* out) {
  std::vector<otlp::LogBatch> batches;
  for (const MergeInput& in : inputs) {
    STRATA_ASSIGN_OR_RETURN(auto src, OpenFileSource(fs, in.path));
    STRATA_ASSIGN_OR_RETURN(otlp::LogBatch b, ReadLogsTable(src.get(), in.batch_id, in.path));
    batches.push_back(std::move(b));
  }
  std::vector<const otlp::LogBatch*> p;
  for (auto& b : batches) p.push_back(&b);
  STRATA_ASSIGN_OR_RETURN(LogsTable t, WriteLogsTable(p, id, o.tables));
  STRATA_RETURN_IF_ERROR(out->Append(t.file));
  return t.meta;
}
absl::StatusOr<SignalMeta> MergeMetricsTables(FileSystem& fs, std::span<const MergeInput> inputs,
                                              std::string_view id, const MergeOptions& o,
                                              parquet::ByteSink* out) {
  std::vector<otlp::MetricBatch> batches;
  for (const MergeInput& in : inputs) {
    STRATA_ASSIGN_OR_RETURN(auto src, OpenFileSource(fs, in.path));
    STRATA_ASSIGN_OR_RETURN(otlp::MetricBatch b, ReadMetricsTable(src.get(), in.batch_id, in.path));
    batches.push_back(std::move(b));
  }
  std::vector<const otlp::MetricBatch*> p;
  for (auto& b : batches) p.push_back(&b);
  STRATA_ASSIGN_OR_RETURN(MetricsTable t, WriteMetricsTable(p, id, o.tables));
  STRATA_RETURN_IF_ERROR(out->Append(t.file));
  return t.meta;
}
}  // namespace strata::storage
