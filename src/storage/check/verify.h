#pragma once

// `strata verify`'s checker: reads a data directory and says, per batch,
// whether it is whole (docs/operations.md, "Verify and quarantine").
//
// Read-only by construction: it takes no LOCK and writes nothing, so it runs
// on a stopped data directory and beside a running server alike. It lists
// days/ as boot does (ListDays, strictly by the grammar) and runs, for each
// batch, the checks boot runs, through the same functions:
//
//   "meta.json"    ReadBatchMeta: parses, is consistent, names its location
//   "files"        CheckBatchFiles: sizes and xxh3-64 of the declared files,
//                  no undeclared file
//   "footer"       CheckBatchFileContents: each Parquet footer (schema,
//                  key-value metadata, row count)
//   "trace index"  CheckBatchFileContents: spans.tidx's own checks and its
//                  counts against meta.json
//
// and with `deep`:
//
//   "decode"       every page of every table through strata's reader
//                  (spans.parquet and logs.parquet in ranges of rows,
//                  deep_checks.h; ReadMetricsTable whole), with the
//                  reader's own validation
//   "rows"         data rows, distinct traces and event-time bounds of the
//                  decoded rows equal meta.json's
//   "sort order"   spans by (trace id bytewise, start time)
//   "index"        spans.tidx agrees with the rows: it covers exactly the
//                  span rows, each entry's range holds only its trace id,
//                  its minimum time equals the rows' and its upper bound
//                  holds them within 1 µs
//   "rollups"      rollups.parquet equals the rollups of the batch's table
//                  rows, computed again a range of rows at a time
//                  (rollups-parquet.md, "The one rule")
//   options.parquet_check (named by it, "duckdb" from the CLI): another
//                  reader of every column of every row of each Parquet file
//                  (DuckDB lives in src/query, which storage must not use)
//
// A batch that disappears while it is checked (a running server compacted
// or retired it: its directory is no longer in days/ when a check fails) is
// "gone", not corrupt. A check that fails on I/O (Unavailable,
// PermissionDenied) leaves the batch "unreadable"; any other failure makes
// it corrupt, as at boot.
//
// Outside the batches it reports what boot would refuse (an unreadable
// compaction marker, a marker beside COMPACTION.json.tmp), the stray entries
// of telemetry/ that boot would set aside (StrayEntry: not corruption), and
// a live COMPACTION.json with what it names.
//
// Thread-safety: stateless; safe to call from any thread. Memory: a deep
// check holds one range of span or log rows (chunk_rows), or one decoded
// metrics table file, at a time.
//
// Errors: VerifyDataDir fails only when the directory cannot be verified at
// all: FailedPrecondition when it is not a format-1 strata data directory
// (CheckExistingDataDir), the FileSystem's errors, in context, when days/
// cannot be listed. Everything about a batch is in its verdict.

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "io/file_system.h"
#include "storage/check/deep_checks.h"
#include "storage/commit/batch_committer.h"
#include "storage/commit/recovery.h"
#include "storage/format/batch_id.h"

namespace strata::storage {

// A further check of one Parquet file for deep verification: `run(path,
// file_rows)` reads every column of every row of the file at `path` and
// fails unless it finds exactly `file_rows` rows (meta.json's). Its
// failures are reported under the check `name`.
struct ParquetFileCheck {
  std::string name;
  std::function<absl::Status(const std::string& path, uint64_t file_rows)> run;
};

enum class BatchStatus {
  kOk,
  kCorrupt,     // a check failed on the bytes
  kGone,        // the batch left days/ while it was checked (a running server)
  kUnreadable,  // a check failed on I/O; nothing is known
};
// "ok", "corrupt", "gone", "unreadable".
const char* BatchStatusName(BatchStatus status);

struct BatchVerdict {
  std::string day;
  BatchId id;
  std::string dir;
  BatchStatus status = BatchStatus::kOk;
  // Unless ok: the check that failed (its name above), the file it failed
  // on ("" for the batch directory as a whole) and the error's message.
  std::string check;
  std::string file;
  std::string message;
};

struct VerifyOptions {
  bool deep = false;
  // Deep only; empty: none.
  std::optional<ParquetFileCheck> parquet_check;
  // Deep only: span and log rows decoded at a time (deep_checks.h).
  uint64_t chunk_rows = kDeepCheckChunkRows;
  // Called with each verdict as soon as it is known (progress output).
  std::function<void(const BatchVerdict&)> on_batch;
};

// Something outside any batch that boot would refuse.
struct VerifyProblem {
  std::string path;
  std::string message;
};

struct VerifyReport {
  std::vector<BatchVerdict> batches;  // in listing order: by day, then id
  std::vector<VerifyProblem> problems;
  // Entries strata never writes; boot sets them aside (recovery.h).
  std::vector<StrayEntry> strays;
  // A live, readable telemetry/COMPACTION.json; and whether
  // COMPACTION.json.tmp exists (a compaction writing its marker, or the
  // leftover of one that a crash cut short, which boot removes).
  std::optional<CompactionMarker> compaction;
  bool compaction_temp = false;

  size_t Count(BatchStatus status) const;
  // No corrupt or unreadable batch and no problem (gone counts as ok;
  // stray entries do not count).
  bool Healthy() const;
};

// Verifies every batch of `data_dir` (see above).
[[nodiscard]] absl::StatusOr<VerifyReport> VerifyDataDir(FileSystem& fs,
                                                         const std::string& data_dir,
                                                         const VerifyOptions& options);

// Verifies one batch, days/<day>/<id>.batch.
BatchVerdict VerifyBatch(FileSystem& fs, const DataDirPaths& paths, const std::string& day,
                         const BatchId& id, const VerifyOptions& options);

}  // namespace strata::storage
