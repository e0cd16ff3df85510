#pragma once

// The row-level checks of `strata verify --deep` (verify.h): what a batch's
// decoded rows must agree with (meta.json, the sort order, spans.tidx), and
// the deep checks of spans.parquet (with spans.tidx) and logs.parquet,
// which read each file in ranges of rows so memory does not grow with it.
//
// Spans, one range of `chunk_rows` span rows at a time (SpansRangeReader):
//   * the placeholder rows come first (ReadPlaceholders), then only span
//     rows, each range with the reader's own validation, every column
//     decoded, the promoted ones too ("decode");
//   * the sort order (trace id bytewise, start time) inside each range and
//     across consecutive ranges ("sort order");
//   * resource and scope indexes across ranges: every scope index under one
//     resource index, and both dense over the file ("decode", as the whole
//     file reader reports them);
//   * span rows, distinct trace ids and event-time bounds against meta.json
//     ("rows");
//   * spans.tidx read in windows of entries (TraceFilter::ReadEntries)
//     alongside the rows: it covers exactly the span rows, each entry's
//     rows hold only its trace id, its minimum time is the rows' and its
//     upper bound holds them within 1 µs ("index").
//
// Logs, one range of `chunk_rows` rows at a time (ReadLogsRows): the
// reader's validation inside each range ("decode"); placeholder rows
// before every record, the declared event-time order and the resource and
// scope indexes across ranges ("decode"); record count and event-time
// bounds against meta.json ("rows").
//
// Memory: one range of decoded rows, one window of index entries, and a map
// over the file's scopes.
//
// Thread-safety: reentrant. Errors: a Failure names the check, the file and
// a DataLoss status (or the FileSystem's error for I/O, which verify
// reports as unreadable).

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "io/file_system.h"
#include "storage/format/batch_meta.h"

namespace strata::storage {

// The first failed check of a batch.
struct DeepFailure {
  std::string check;
  std::string file;
  absl::Status status;
};
using DeepOutcome = std::optional<DeepFailure>;

// DataLoss "<file>: <what>".
absl::Status DeepMismatch(std::string_view file, std::string_view what);

// meta.json's event_time for a signal whose decoded rows have `rows` data
// rows with event times in [min, max] (meta-json.md, `event_time`).
absl::Status CheckEventTime(std::string_view file, const SignalMeta& meta, uint64_t rows,
                            uint64_t min, uint64_t max);

// `decoded` rows of `what` against meta.json's `declared`.
absl::Status CheckRowCount(std::string_view file, std::string_view what, uint64_t decoded,
                           uint64_t declared);

inline constexpr uint64_t kDeepCheckChunkRows = 16'384;

// The deep check of `batch_dir`'s spans.parquet (and spans.tidx when
// meta.json lists it), as at the top. nullopt when it passes.
DeepOutcome DeepCheckSpans(FileSystem& fs, const std::string& batch_dir, const BatchMeta& meta,
                           uint64_t chunk_rows = kDeepCheckChunkRows);
// The same for logs.parquet.
DeepOutcome DeepCheckLogs(FileSystem& fs, const std::string& batch_dir, const BatchMeta& meta,
                          uint64_t chunk_rows = kDeepCheckChunkRows);

}  // namespace strata::storage
