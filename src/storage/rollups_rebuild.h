#pragma once

// `strata rollups rebuild` (docs/operations.md): every live batch's rollups
// recomputed from its table files and compared with what it holds; a batch
// whose rollups differ, or that has none (meta.json format 1), is
// rewritten with fresh ones through the compaction protocol (a group of
// that one batch: crash-safe, the output one generation up, the input
// retired and deleted). Offline: run on a Storage no server has open.
//
// Thread-safety: call from one thread while nothing else compacts (the
// Storage's maintenance thread not started). Errors: the readers' (a
// batch whose rollups.parquet cannot be read stops the rebuild: `strata
// verify` says what is wrong with it) and the Compactor's, with the code
// they came with and a message naming the batch and the step; also
// FailedPrecondition while a compaction marker of an earlier rewrite is
// still pending (its input pinned by a reader), for an evicted batch
// (format/evicted_marker.h) on a Storage without an object store to read
// it from, and for an evicted batch whose rollups would be rewritten (its
// files are remote; with check_only it is only judged). Batches before the
// failing one stay rebuilt; the failing one is left as it was. An evicted
// batch is read through the Storage's resolver (StorageOptions::
// read_evicted).

#include <functional>
#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "storage/format/batch_id.h"
#include "storage/storage.h"

namespace strata::storage {

enum class RollupsVerdict {
  kEqual,     // the stored rollups are the recomputed ones
  kEmpty,     // no data rows: no rollups to hold
  kMissing,   // format 1: none stored
  kDiffered,  // stored, but not the recomputed ones
};
const char* RollupsVerdictName(RollupsVerdict verdict);

struct RollupsRebuildOptions {
  // Only batches of this day ("YYYY-MM-DD"); nullopt: every day.
  std::optional<std::string> day;
  // Compare only; rewrite nothing.
  bool check_only = false;
  // Called for each batch looked at, in id order.
  std::function<void(const std::string& day, const BatchId& id, RollupsVerdict verdict,
                     const std::optional<BatchId>& rewritten_as)>
      on_batch;
};

struct RollupsRebuildReport {
  size_t batches = 0;
  size_t equal = 0;  // kEqual and kEmpty
  size_t missing = 0;
  size_t differed = 0;
  size_t rewritten = 0;
};

[[nodiscard]] absl::StatusOr<RollupsRebuildReport> RebuildRollups(
    Storage& storage, const RollupsRebuildOptions& options);

}  // namespace strata::storage
