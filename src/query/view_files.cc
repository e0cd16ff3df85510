#include "query/view_files.h"

#include <string>
#include <utility>

#include "storage/format/layout.h"
#include "storage/offload/data_file_resolver.h"

namespace strata::query {

namespace {

// True when the signal's rows may meet `window` (always, without one).
bool MeetsWindow(const storage::SignalMeta& signal, const std::optional<EventWindow>& window) {
  if (!window.has_value()) return true;
  if (!signal.event_time.has_value()) return false;
  return signal.event_time->max >= window->start && signal.event_time->min < window->end;
}

// Appends `file` of `batch` to `list`: its local path, or the cached copy
// of an evicted batch's file (held in `files`). A copy that cannot be
// fetched is listed by its local path, which is gone, so the query fails
// naming it instead of answering without the batch's rows.
void Add(const storage::LiveBatch& batch, const char* file, std::vector<std::string>* list,
         ViewFiles* files) {
  absl::StatusOr<storage::ResolvedFile> resolved = storage::ResolveDataFile(batch, file);
  if (!resolved.ok()) {
    list->push_back(batch.dir() + "/" + file);
    return;
  }
  list->push_back(std::move(resolved->path));
  if (resolved->hold != nullptr) files->holds.push_back(std::move(resolved->hold));
}

}  // namespace

ViewFiles ViewFilesOf(const storage::Snapshot& snapshot, std::optional<EventWindow> spans_window,
                      std::optional<EventWindow> logs_window) {
  ViewFiles files;
  files.sequence = snapshot.sequence();
  for (const auto& batch : snapshot.batches()) {
    const storage::BatchMeta& meta = batch->meta();
    if (meta.spans_parquet.has_value() && MeetsWindow(meta.spans, spans_window)) {
      Add(*batch, storage::kSpansFileName, &files.spans, &files);
    }
    // meta.json counts a record whose time_unix_nano is 0 at its observed
    // time, and only a window that starts at 0 holds time 0: such a window
    // lists every logs file.
    if (meta.logs_parquet.has_value() && ((logs_window.has_value() && logs_window->start == 0) ||
                                          MeetsWindow(meta.logs, logs_window))) {
      Add(*batch, storage::kLogsFileName, &files.logs, &files);
    }
    if (meta.metrics_parquet.has_value()) {
      Add(*batch, storage::kMetricsFileName, &files.metrics, &files);
      MetricsFileMeta& metrics = files.metrics_meta.emplace_back();
      metrics.file_rows = meta.metrics.file_rows;
      if (meta.metrics.event_time.has_value()) {
        metrics.event_time =
            std::make_pair(meta.metrics.event_time->min, meta.metrics.event_time->max);
      }
    }
    // The view reads one layout: format 2 files (rollups-parquet.md,
    // "Format 2 layout") stay out of it, as format 1 batches have none.
    if (meta.rollups_parquet.has_value() && meta.format >= storage::kBatchMetaFormat) {
      Add(*batch, storage::kRollupsFileName, &files.rollups, &files);
    }
  }
  return files;
}

}  // namespace strata::query
