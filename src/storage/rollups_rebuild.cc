// Rollups recomputed and rewritten (rollups_rebuild.h).

#include "storage/rollups_rebuild.h"

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "common/path.h"
#include "common/status_macros.h"
#include "fmt/format.h"
#include "storage/format/evicted_marker.h"
#include "storage/format/layout.h"
#include "storage/maintenance/maintenance.h"
#include "storage/offload/data_file_resolver.h"
#include "storage/table/file_source.h"
#include "storage/table/rollups_table.h"

namespace strata::storage {

const char* RollupsVerdictName(RollupsVerdict verdict) {
  switch (verdict) {
    case RollupsVerdict::kEqual:
      return "equal";
    case RollupsVerdict::kEmpty:
      return "empty";
    case RollupsVerdict::kMissing:
      return "missing";
    case RollupsVerdict::kDiffered:
      break;
  }
  return "differed";
}

namespace {

// An error about one batch, naming it (the operator's next step is
// `strata verify` or `strata quarantine` on that batch).
absl::Status InBatch(const absl::Status& status, const LiveBatch& batch, std::string_view step) {
  return absl::Status(status.code(), fmt::format("rollups rebuild: batch {}: {}: {}", batch.dir(),
                                                 step, std::string(status.message())));
}

// Deletes retired batches no reader holds and removes the marker of their
// rewrite (a bounded number of reclamation steps).
void ReclaimRetired(Storage& storage) {
  for (int i = 0; i < 10 && storage.maintenance().Reclaim(); ++i) {
  }
}

// The verdict for one batch's stored rollups against its table files, read
// where they are (an evicted batch's through the read cache).
absl::StatusOr<RollupsVerdict> Judge(FileSystem& fs, const LiveBatch& batch) {
  const BatchMeta& meta = batch.meta();
  if (meta.spans.rows + meta.logs.rows + meta.metrics.rows == 0) return RollupsVerdict::kEmpty;
  if (!meta.rollups_parquet.has_value()) return RollupsVerdict::kMissing;
  const DataFileOpener files = DataFilesOf(fs, batch);
  absl::StatusOr<rollups::RollupRows> computed = ComputeBatchRollups(files, meta);
  if (!computed.ok()) return InBatch(computed.status(), batch, "reading its tables");
  absl::StatusOr<rollups::RollupRows> stored = ReadBatchRollups(files, meta);
  if (!stored.ok()) return InBatch(stored.status(), batch, "reading its rollups");
  return *stored == *computed ? RollupsVerdict::kEqual : RollupsVerdict::kDiffered;
}

}  // namespace

absl::StatusOr<RollupsRebuildReport> RebuildRollups(Storage& storage,
                                                    const RollupsRebuildOptions& options) {
  FileSystem& fs = storage.data_dir().fs();
  RollupsRebuildReport report;
  // Ids first: a batch this rewrites is deleted only once nothing holds
  // it, and the next rewrite waits for that (one marker at a time).
  std::vector<BatchId> ids;
  {
    const std::shared_ptr<const Snapshot> first = storage.Pin();
    for (const std::shared_ptr<const LiveBatch>& batch : first->batches()) {
      if (!options.day.has_value() || batch->day() == *options.day) ids.push_back(batch->id());
    }
  }
  for (const BatchId& id : ids) {
    std::shared_ptr<const LiveBatch> batch;
    {
      const std::shared_ptr<const Snapshot> now = storage.Pin();
      for (const std::shared_ptr<const LiveBatch>& live : now->batches()) {
        if (live->id() == id) batch = live;
      }
    }
    if (batch == nullptr) continue;  // gone meanwhile (retention)
    ++report.batches;
    const std::string day = batch->day();
    // An evicted batch's data files are in the object store only: read
    // through the Storage's resolver, which it has with one.
    STRATA_ASSIGN_OR_RETURN(const bool evicted, HasEvictedMarker(fs, batch->dir()));
    if (evicted && storage.resolver() == nullptr) {
      return InBatch(absl::FailedPreconditionError(
                         "it is evicted (its Parquet files are in the object store only); give "
                         "--object-store and the S3 settings strata serve uses"),
                     *batch, "reading its tables");
    }
    STRATA_ASSIGN_OR_RETURN(const RollupsVerdict verdict, Judge(fs, *batch));
    std::optional<BatchId> rewritten_as;
    switch (verdict) {
      case RollupsVerdict::kEqual:
      case RollupsVerdict::kEmpty:
        ++report.equal;
        break;
      case RollupsVerdict::kMissing:
        ++report.missing;
        break;
      case RollupsVerdict::kDiffered:
        ++report.differed;
        break;
    }
    const bool rewrite =
        verdict == RollupsVerdict::kMissing || verdict == RollupsVerdict::kDiffered;
    if (rewrite && !options.check_only && evicted) {
      // A rewrite writes a new batch from the input's files, and an
      // evicted batch is kept out of compaction (its files are remote).
      return InBatch(absl::FailedPreconditionError(fmt::format(
                         "its rollups are {} but it is evicted, and rollups rebuild does not "
                         "rewrite an evicted batch; service health reads the rollups it holds",
                         RollupsVerdictName(verdict))),
                     *batch, "rewriting it");
    }
    if (rewrite && !options.check_only) {
      // A marker left by an earlier rewrite whose input a reader held
      // (this run's or an earlier one's) clears once the input is free.
      ReclaimRetired(storage);
      absl::StatusOr<BatchId> rewritten = storage.maintenance().RewriteWithFreshRollups(batch);
      if (!rewritten.ok()) return InBatch(rewritten.status(), *batch, "rewriting it");
      batch.reset();  // the input may now be retired
      rewritten_as = *rewritten;
      ++report.rewritten;
      // The input is retired: delete it and remove the marker before the
      // next rewrite (one marker at a time). Only that: a compaction run
      // now could merge batches not checked yet.
      ReclaimRetired(storage);
    }
    if (options.on_batch) options.on_batch(day, id, verdict, rewritten_as);
  }
  return report;
}

}  // namespace strata::storage
