#pragma once

// Compaction's merges: the tables of several batches of one day become the
// tables of one output batch, streamed to a sink with bounded memory
// (docs/format/compaction.md, "Merging").
//
//   MergeSpansTables    spans by (trace id, start time): a k-way merge in
//                       trace-id ranges cut from the inputs' spans.tidx, so
//                       no trace is split; also builds the output's
//                       spans.tidx.
//   MergeLogsTables     log records by time.
//   MergeMetricsTables  data points by metric name, then time.
//
// Every input row reaches the output exactly once; placeholder rows
// (resources and scopes that carried nothing) are kept. Inputs are read
// through strata's reader, so a corrupt input fails the merge with its
// DataLoss (naming the file) and nothing is published.
//
// Memory: what a merge holds at once is bounded by MergeOptions (chunk
// sizes and the Parquet writer's row group), not by the size of the inputs
// (compaction.md, "Memory budget"). Logs and metrics: at most
// (fan_in + 2) * chunk_rows decoded rows (MergeStats::rows_held_peak), plus
// the raw columns of the one chunk being decoded and the output writer's
// open row group (below row_group_bytes_limit); inputs not already in merge
// order (ingest batches) go through an external merge sort whose runs live
// in scratch_dir (external_merge.h, which has the measured bytes).
//
// Thread-safety: reentrant. Errors: DataLoss for a bad input, the
// FileSystem's and the sink's errors unchanged, Internal for inputs that
// break the contract below (a bug in the caller).

#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "io/file_system.h"
#include "parquet/column_writer.h"
#include "storage/format/batch_meta.h"
#include "storage/table/table_file.h"

namespace strata::storage {

// One input table: a file of a live batch (or a test's file).
struct MergeInput {
  std::string path;      // e.g. <batch dir>/logs.parquet
  std::string batch_id;  // the id its footer carries
  uint64_t file_rows = 0;
  // Spans only: the batch's spans.tidx (empty when the batch has only
  // placeholder rows and so no index).
  std::string tidx_path;
};

// What a merge did, for tests and benchmarks (MergeOptions::stats).
struct MergeStats {
  // Sorted runs written to scratch_dir (inputs not already in merge order,
  // and intermediate merges of runs).
  uint64_t runs_written = 0;
  // Intermediate merge passes (more sources than fan_in); 0 when inputs
  // and runs were merged straight into the output.
  uint64_t merge_passes = 0;
  // The most decoded rows held at once: chunks read, a run being sorted,
  // and rows buffered in a table writer (logs and metrics merges).
  uint64_t rows_held_peak = 0;
};

struct MergeOptions {
  TableOptions tables;
  // Rows the merge reads from one input at a time, and about the rows it
  // hands the writer at a time.
  uint64_t chunk_rows = 16384;
  // An empty directory the merge may use for temporary files (sorted runs);
  // the caller removes it afterwards. It lies under telemetry/staging/, so
  // boot removes whatever a crash leaves there.
  std::string scratch_dir;
  // Logs and metrics: sources (sorted inputs and runs) one merge pass reads
  // at once; with more, runs are merged into longer runs first. An input
  // not in merge order is sorted in runs of fan_in * chunk_rows rows.
  uint32_t fan_in = 16;
  // Row groups of the output and of runs are cut at min(this,
  // tables.row_group_bytes) buffered bytes (the writer's share of the
  // memory budget).
  size_t row_group_bytes_limit = 32 << 20;
  // When set, receives what the merge did.
  MergeStats* stats = nullptr;
  // Called between pieces of work; a non-OK status (shutdown) stops the
  // merge with that status. Empty: never stops.
  std::function<absl::Status()> check_stop;
};

struct MergedSpans {
  SignalMeta meta;
  // spans.tidx of the output; empty when it has no span rows.
  std::string trace_index;
  // Trace-id ranges merged, and the most span rows one of them held (the
  // working set: at most about chunk_rows plus, per input, its longest
  // trace).
  uint64_t rounds = 0;
  uint64_t max_round_rows = 0;
};

// Inputs are non-empty and each has file_rows > 0. The output's footer
// names `output_batch_id`. The returned meta is what meta.json's signal
// member says about the written file.
[[nodiscard]] absl::StatusOr<MergedSpans> MergeSpansTables(FileSystem& fs,
                                                           std::span<const MergeInput> inputs,
                                                           std::string_view output_batch_id,
                                                           const MergeOptions& options,
                                                           parquet::ByteSink* out);
[[nodiscard]] absl::StatusOr<SignalMeta> MergeLogsTables(FileSystem& fs,
                                                         std::span<const MergeInput> inputs,
                                                         std::string_view output_batch_id,
                                                         const MergeOptions& options,
                                                         parquet::ByteSink* out);
[[nodiscard]] absl::StatusOr<SignalMeta> MergeMetricsTables(FileSystem& fs,
                                                            std::span<const MergeInput> inputs,
                                                            std::string_view output_batch_id,
                                                            const MergeOptions& options,
                                                            parquet::ByteSink* out);

}  // namespace strata::storage
