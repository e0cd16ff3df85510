#pragma once

// Per-day leveled compaction (docs/format/compaction.md): which batches to
// merge next (PlanCompaction) and the crash-safe merge and publication of
// one group (Compactor).
//
// Levels. A batch's level is its generation: 0 for ingest, g + 1 for the
// output of a group of generation-g batches. Groups never mix days or
// levels, so an output never spans days and retention can always drop
// whole days.
//
// Publication (commit.md, "Compaction"): the output is streamed into
// staging/<output>/ and sealed (meta.json last, everything fsynced);
// COMPACTION.json is written atomically naming inputs and output; the
// output is renamed into days/<day>/ and the day synced; a Snapshot with
// the output and without the inputs is published. The inputs are then
// retired: they are deleted once no Snapshot names them, and the marker is
// removed after the last one is gone (Maintenance does both). Until then
// no other compaction starts: at most one marker exists.
//
// A failure before the publish undoes what was done (output removed,
// marker removed) and leaves the inputs live; when even the undo fails the
// Compactor reports Aborted and must not run again before a restart, whose
// boot resolves the marker (roll back or forward; nothing is deleted on
// ambiguity).
//
// Thread-safety: PlanCompaction is pure. A Compactor runs one group at a
// time on one thread (the maintenance thread); it never holds a lock
// across I/O and shares only the catalog (Publish) and the id issuer with
// ingest.

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "storage/commit/catalog.h"
#include "storage/commit/data_dir.h"
#include "storage/commit/recovery.h"
#include "storage/maintenance/table_merge.h"
#include "storage/table/file_source.h"

namespace strata::storage {

struct CompactionPolicy {
  // A level of today's day compacts once it holds this many batches, or
  // at least two batches of min_bytes in all. A level of an earlier day
  // (no longer written by ingest) compacts whenever it holds two.
  size_t min_inputs = 8;
  uint64_t min_bytes = uint64_t{256} << 20;
  // Caps of one group, over its inputs: batches, rows (every signal's
  // file rows) and bytes (every file). A batch alone above a cap is never
  // merged further.
  size_t max_inputs = 32;
  uint64_t max_rows = 20'000'000;
  uint64_t max_bytes = uint64_t{1} << 30;
  // Batches never taken as inputs (evicted ones, whose files are in the
  // object store only; offload/evictor.h). Empty: none.
  std::function<bool(const LiveBatch&)> keep_out;
};

// Batches of one day and generation, sorted by id, to merge into one.
struct CompactionGroup {
  std::string day;
  int generation = 0;  // of the inputs; the output's is one more
  std::vector<std::shared_ptr<const LiveBatch>> inputs;
};

// The next group to merge in `snapshot`, or nullopt: days oldest first,
// levels lowest first, within a level the oldest batches that fit the caps.
// `today` ("YYYY-MM-DD") decides which days are still being written.
std::optional<CompactionGroup> PlanCompaction(const Snapshot& snapshot,
                                              const CompactionPolicy& policy,
                                              std::string_view today);

// Rows and bytes of a batch, as the policy counts them.
uint64_t BatchRows(const BatchMeta& meta);
uint64_t BatchBytes(const BatchMeta& meta);

// Where a compaction reads one of an input's data files: a path and a hold
// that keeps the file there while the merge reads it (an evicted or
// adopted batch's file in the read cache; offload/data_file_resolver.h).
struct InputFile {
  std::string path;
  std::shared_ptr<const void> hold;
};
// `file` (a name from layout.h) of `batch`; `remote` is whether the batch's
// data files are elsewhere than its directory. Set by the storage engine,
// which may include the offload layer that this one cannot.
struct InputFileResolver {
  std::function<bool(const LiveBatch& batch)> remote;
  std::function<absl::StatusOr<InputFile>(const LiveBatch& batch, std::string_view file)> resolve;
};

// Several servers sharing one batch catalog (src/cluster/): the catalog
// decides which batches a compaction may take and which server compacts a
// day (one at a time: the holder of the day's lease). Implemented by the
// cluster member; the maintenance thread calls it.
class CompactionGate {
 public:
  virtual ~CompactionGate() = default;
  // Whether `batch` may be an input now (listed in the shared catalog).
  virtual bool Admits(const LiveBatch& batch) = 0;
  // Before a group of `day` is merged: whether this server may compact
  // the day now (it holds or took the day's lease, which it then keeps
  // until the output is registered). False leaves the day for this step.
  virtual bool Claim(const std::string& day) = 0;
  // After a compaction of a claimed day ended, published or not.
  virtual void Ended(const std::string& day, bool published) = 0;
};

struct CompactorOptions {
  MergeOptions merge;
  // Where inputs' data files are read; empty: their directories.
  InputFileResolver input_file;
  // Builds the output's catalog attachment (its trace filter); empty: none.
  BatchAttachmentLoader load_attachment;
  // Called between pieces of output; a non-OK status (shutdown) stops the
  // merge, which is then undone. Empty: never stops.
  std::function<absl::Status()> check_stop;
  // The output's rollups recomputed from the inputs' rows instead of merged
  // from their rollups (`strata rollups rebuild`); a group of one batch is
  // then allowed: it rewrites that batch with rollups made afresh.
  bool recompute_rollups = false;
};

// What a published compaction left to finish: the marker stays until its
// inputs are deleted.
struct CompactionResult {
  CompactionMarker marker;
  BatchMeta output;
  uint64_t input_rows = 0;   // spans, log records and data points read
  uint64_t input_bytes = 0;  // file bytes of the inputs
};

class Compactor {
 public:
  // `dir` must outlive the Compactor.
  Compactor(const DataDir& dir, CompactorOptions options);

  // Merges `group` and publishes the output (see the top of this header).
  // The marker exists on return; the caller removes it with
  // RemoveCompactionMarker once every input is deleted. Errors: the
  // merge's (DataLoss naming a corrupt input), the FileSystem's, the stop
  // hook's; all with the inputs still live and nothing left behind.
  // Aborted when undoing a failure failed too: the marker may remain, and
  // no compaction may run before a restart.
  [[nodiscard]] absl::StatusOr<CompactionResult> Run(const CompactionGroup& group);

 private:
  // Opens `batch`'s data files where they are (a remote batch's through
  // options_.input_file, whose holds go to `holds`).
  DataFileOpener OpenerOf(const LiveBatch& batch,
                          std::vector<std::shared_ptr<const void>>* holds) const;
  // Streams the merged tables into staging/<id>/ and seals it.
  absl::StatusOr<BatchMeta> WriteOutput(const CompactionGroup& group, const BatchId& id);
  // Undoes a compaction that wrote its marker: output out of days/,
  // marker removed, staging emptied. Aborted when that fails.
  absl::Status Undo(const CompactionMarker& marker, const absl::Status& cause);

  const DataDir& dir_;
  const CompactorOptions options_;
};

// Writes telemetry/COMPACTION.json atomically (temp file, fsync, rename,
// fsync telemetry/). AlreadyExists when a marker is present.
[[nodiscard]] absl::Status WriteCompactionMarker(FileSystem& fs, const DataDirPaths& paths,
                                                 const CompactionMarker& marker);
// Removes telemetry/COMPACTION.json and syncs telemetry/.
[[nodiscard]] absl::Status RemoveCompactionMarker(FileSystem& fs, const DataDirPaths& paths);

}  // namespace strata::storage
