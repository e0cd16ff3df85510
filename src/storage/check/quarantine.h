#pragma once

// `strata quarantine`'s work: sets one corrupt batch aside so boot can
// serve the rest (docs/format/layout.md, "quarantine/"; docs/operations.md,
// "Verify and quarantine"). QuarantineBatch():
//
//   1. checks FORMAT without writing (CheckExistingDataDir), then takes LOCK
//      (LockDataDir), so it refuses while a server owns the directory;
//   2. finds days/<day>/<id>.batch (listing days/ as boot does);
//   3. refuses a batch that telemetry/COMPACTION.json names, as output or
//      input (and any batch while the marker is unreadable): boot resolves
//      a marker before it looks at batches, and moving one of its batches
//      would change what that resolution finds;
//   4. verifies the batch deeply (VerifyBatch with the caller's options)
//      and refuses one that passes: only a batch verify proves corrupt
//      moves;
//   5. moves it: creates quarantine/ and quarantine/<day>/ if missing
//      (syncing their parents), renames days/<day>/<id>.batch to
//      quarantine/<day>/<id>.batch, then syncs quarantine/<day>/ and
//      days/<day>/.
//
// Crash safety: the rename is the only step that changes what boot serves,
// and it is atomic; after a crash the batch is in days/ (boot refuses it
// again and the command can simply be run again) or in quarantine/ (done).
// Nothing is deleted and nothing in the batch is changed.
//
// Thread-safety: stateless. Errors: FailedPrecondition for every refusal
// (not a data directory, in use, named by the marker, healthy), naming the
// reason; NotFound when days/ holds no such batch (saying so when it is
// already in quarantine/); AlreadyExists when quarantine/ already holds the
// id; Unavailable when the batch could not be read to the end (nothing is
// known, nothing moved); the FileSystem's errors, in context, when I/O
// fails.

#include <string>

#include "absl/status/statusor.h"
#include "io/file_system.h"
#include "storage/check/verify.h"
#include "storage/format/batch_id.h"

namespace strata::storage {

struct QuarantinedBatch {
  std::string from;      // days/<day>/<id>.batch
  std::string to;        // quarantine/<day>/<id>.batch
  BatchVerdict verdict;  // what verify found (corrupt)
};

[[nodiscard]] absl::StatusOr<QuarantinedBatch> QuarantineBatch(FileSystem& fs,
                                                               const std::string& data_dir,
                                                               const BatchId& id,
                                                               const VerifyOptions& options);

}  // namespace strata::storage
