#pragma once

// The Parquet files a query's views read, taken from a pinned Snapshot:
// for every batch, in id order, the path of each table file it has.
// Nothing else names files for DuckDB, so queries never glob and never see
// a file outside the Snapshot they pinned.
//
// Thread-safety: reentrant. Errors: none.

#include <optional>

#include "query/query_pool.h"
#include "storage/commit/catalog.h"

namespace strata::query {

// Event times a query reads: [start, end) in unix nanoseconds (spans:
// start times; logs: record times).
struct EventWindow {
  uint64_t start = 0;
  uint64_t end = 0;
};

// ViewFiles whose sequence is the Snapshot's. With `spans_window`, a
// batch's spans.parquet is listed only when meta.json's spans event_time
// ([min start, max end]) meets the window, so a query that keeps only spans
// starting in the window opens the few batches that can hold them. With
// `logs_window`, the same for logs.parquet and the logs event_time (min
// and max record time; a window starting at 0 lists every logs file, as
// event_time counts a record without a time at its observed time). DuckDB reads every listed file's
// footer on each query (a few hundred microseconds a file), so leaving out the files a query cannot
// use matters even when their row groups would be skipped.
ViewFiles ViewFilesOf(const storage::Snapshot& snapshot,
                      std::optional<EventWindow> spans_window = std::nullopt,
                      std::optional<EventWindow> logs_window = std::nullopt);

}  // namespace strata::query
