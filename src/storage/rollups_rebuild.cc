// Rollups recomputed and rewritten (rollups_rebuild.h).

#include "storage/rollups_rebuild.h"

#include <memory>
#include <vector>

#include "common/path.h"
#include "common/status_macros.h"
#include "storage/format/layout.h"
#include "storage/maintenance/maintenance.h"
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
    const BatchMeta& meta = batch->meta();
    RollupsVerdict verdict = RollupsVerdict::kEqual;
    if (meta.spans.rows + meta.logs.rows + meta.metrics.rows == 0) {
      verdict = RollupsVerdict::kEmpty;
    } else if (!meta.rollups_parquet.has_value()) {
      verdict = RollupsVerdict::kMissing;
    } else {
      STRATA_ASSIGN_OR_RETURN(rollups::RollupRows computed,
                              ComputeBatchRollups(fs, batch->dir(), meta));
      STRATA_ASSIGN_OR_RETURN(auto source,
                              OpenFileSource(fs, JoinPath(batch->dir(), kRollupsFileName)));
      STRATA_ASSIGN_OR_RETURN(
          rollups::RollupRows stored,
          ReadRollupsTable(source.get(), meta.id, kRollupsFileName, meta.format));
      if (stored != computed) verdict = RollupsVerdict::kDiffered;
    }
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
    if (rewrite && !options.check_only) {
      STRATA_ASSIGN_OR_RETURN(rewritten_as,
                              storage.maintenance().RewriteWithFreshRollups(std::move(batch)));
      ++report.rewritten;
      // The input is retired: delete it and remove the marker before the
      // next rewrite (one marker at a time). Only that: a compaction run
      // now could merge batches not checked yet.
      for (int i = 0; i < 10 && storage.maintenance().Reclaim(); ++i) {
      }
    }
    if (options.on_batch) options.on_batch(day, id, verdict, rewritten_as);
  }
  return report;
}

}  // namespace strata::storage
