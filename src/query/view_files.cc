#include "query/view_files.h"

#include <string>

namespace strata::query {

namespace {

bool MeetsWindow(const storage::SignalMeta& spans, const SpanWindow& window) {
  if (!spans.event_time.has_value()) return false;
  return spans.event_time->max >= window.start && spans.event_time->min < window.end;
}

}  // namespace

ViewFiles ViewFilesOf(const storage::Snapshot& snapshot, std::optional<SpanWindow> spans_window) {
  ViewFiles files;
  files.sequence = snapshot.sequence();
  for (const auto& batch : snapshot.batches()) {
    const storage::BatchMeta& meta = batch->meta();
    if (meta.spans_parquet.has_value() &&
        (!spans_window.has_value() || MeetsWindow(meta.spans, *spans_window))) {
      files.spans.push_back(batch->dir() + "/spans.parquet");
    }
    if (meta.logs_parquet.has_value()) files.logs.push_back(batch->dir() + "/logs.parquet");
    if (meta.metrics_parquet.has_value()) {
      files.metrics.push_back(batch->dir() + "/metrics.parquet");
    }
  }
  return files;
}

}  // namespace strata::query
