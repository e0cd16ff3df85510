#include "query/view_files.h"

#include <string>

namespace strata::query {

namespace {

// True when the signal's rows may meet `window` (always, without one).
bool MeetsWindow(const storage::SignalMeta& signal, const std::optional<EventWindow>& window) {
  if (!window.has_value()) return true;
  if (!signal.event_time.has_value()) return false;
  return signal.event_time->max >= window->start && signal.event_time->min < window->end;
}

}  // namespace

ViewFiles ViewFilesOf(const storage::Snapshot& snapshot, std::optional<EventWindow> spans_window,
                      std::optional<EventWindow> logs_window) {
  ViewFiles files;
  files.sequence = snapshot.sequence();
  for (const auto& batch : snapshot.batches()) {
    const storage::BatchMeta& meta = batch->meta();
    if (meta.spans_parquet.has_value() && MeetsWindow(meta.spans, spans_window)) {
      files.spans.push_back(batch->dir() + "/spans.parquet");
    }
    // meta.json counts a record whose time_unix_nano is 0 at its observed
    // time, and only a window that starts at 0 holds time 0: such a window
    // lists every logs file.
    if (meta.logs_parquet.has_value() && ((logs_window.has_value() && logs_window->start == 0) ||
                                          MeetsWindow(meta.logs, logs_window))) {
      files.logs.push_back(batch->dir() + "/logs.parquet");
    }
    if (meta.metrics_parquet.has_value()) {
      files.metrics.push_back(batch->dir() + "/metrics.parquet");
    }
    // The view reads one layout: format 2 files (rollups-parquet.md,
    // "Format 2 layout") stay out of it, as format 1 batches have none.
    if (meta.rollups_parquet.has_value() && meta.format >= storage::kBatchMetaFormat) {
      files.rollups.push_back(batch->dir() + "/rollups.parquet");
    }
  }
  return files;
}

}  // namespace strata::query
