#pragma once

// The catalog: which batches are live, as an immutable, reference-counted
// Snapshot that is swapped atomically (docs/architecture.md, "Concurrency: snapshots,
// not gates").
//
// A query Pin()s the current Snapshot and keeps it for its whole life; the
// batches it names stay on disk until it lets go. Publish() builds the next
// Snapshot from the current one plus added minus removed batches and swaps
// it in. Publishers never wait for readers and readers never wait for
// publishers: the only lock readers take guards one shared_ptr copy.
//
// Retiring. A batch removed by Publish() is "retired": once the last
// reference to it is gone (every Snapshot naming it, and any LiveBatch
// pointer a reader copied out of one), the catalog's RetireCallback runs
// with it, so its directory can be deleted (commit.md, "Deleting a batch").
// The callback runs on the thread that drops the last reference, which may
// be a query thread: it must be quick and must not block (hand the batch to
// the maintenance thread). It never runs for a batch that was not removed,
// and never twice.
//
// Replacing. Replace() publishes a Snapshot in which a live batch is named
// by a new record of the same id (eviction of its local data files marks
// it so). The old LiveBatch is not retired: once the last reference to it
// is gone, the catalog's ReplaceCallback runs with it, so the files only
// it names can be deleted then, as for a retired batch. The old LiveBatch
// keeps its successor alive, so a successor removed later is retired only
// after every reader of the old one let go.
//
// A record of an id outlives its removal while a reader holds it, and an
// id removed may be published again (a batch put back from a shared
// catalog), so one batch directory may be named by several records at
// once. HoldsRecordOf() tells whether any record of an id is alive: a
// directory is deleted only when none is.
//
// Invariants:
//   1. A Snapshot never changes after it is published; its batches are
//      sorted by id, ids are unique.
//   2. Snapshot sequence numbers increase by one with every Publish().
//   3. A retired batch is never named by a Snapshot published after its
//      removal, and the RetireCallback runs for it exactly once, only after
//      no Snapshot or pointer names it any more.
//   4. The ReplaceCallback runs exactly once for each replaced LiveBatch,
//      only after no Snapshot or pointer names it, and before the
//      RetireCallback of any later record of its id.
//   5. A retired record is counted by HoldsRecordOf() from before the
//      Snapshot that removes it is published until just before its
//      RetireCallback runs.
//
// Thread-safety: Catalog is safe for concurrent use; Snapshot and LiveBatch
// are immutable and may be shared freely. Errors: Publish() returns
// AlreadyExists for an added id that is live, NotFound for a removed id that
// is not, InvalidArgument for an id added or removed twice in one call; a
// refused Publish() changes nothing. Replace() returns NotFound for an id
// that is not live and InvalidArgument for a record whose day or directory
// differs from the live one's.

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "common/mutex.h"
#include "storage/format/batch_id.h"
#include "storage/format/batch_meta.h"

namespace strata::storage {

// What a caller hands to Publish() for a new live batch.
struct BatchRecord {
  BatchId id;
  std::string day;  // "YYYY-MM-DD", the name of its day directory
  // The batch directory: <data dir>/telemetry/days/<day>/<id>.batch, with
  // the data directory as the storage engine was opened with it.
  std::string dir;
  BatchMeta meta;
  // Opaque per-batch state owned with the batch (the in-memory trace
  // filter); may be null. Callers static_pointer_cast it back.
  std::shared_ptr<const void> attachment;
};

// A live (or retired, still referenced) batch. Immutable.
class LiveBatch {
 public:
  explicit LiveBatch(BatchRecord record) : record_(std::move(record)) {}
  LiveBatch(const LiveBatch&) = delete;
  LiveBatch& operator=(const LiveBatch&) = delete;

  const BatchId& id() const { return record_.id; }
  const std::string& day() const { return record_.day; }
  const std::string& dir() const { return record_.dir; }
  const BatchMeta& meta() const { return record_.meta; }
  const std::shared_ptr<const void>& attachment() const { return record_.attachment; }

 private:
  friend class Catalog;

  const BatchRecord record_;
  // Set once by the Publish() that removes the batch, before that Publish()
  // lets go of the Snapshot naming it; read by the last owner's deleter.
  // Atomic because the two may be different threads with no lock between.
  mutable std::atomic<bool> retired_{false};
  // Set once by the Replace() that replaces the batch, before the swap;
  // the last owner's deleter reads (and releases) it. The shared_ptr
  // count's release and acquire on the last decrement order the two, as
  // for retired_.
  mutable std::shared_ptr<const LiveBatch> successor_;
};

class Snapshot {
 public:
  Snapshot(uint64_t sequence, std::vector<std::shared_ptr<const LiveBatch>> batches)
      : sequence_(sequence), batches_(std::move(batches)) {}
  Snapshot(const Snapshot&) = delete;
  Snapshot& operator=(const Snapshot&) = delete;

  // 0 for the first Snapshot, then one more per Publish().
  uint64_t sequence() const { return sequence_; }
  // Sorted by id.
  const std::vector<std::shared_ptr<const LiveBatch>>& batches() const { return batches_; }
  size_t size() const { return batches_.size(); }
  // The batch with `id`, or null.
  const LiveBatch* Find(const BatchId& id) const;

 private:
  const uint64_t sequence_;
  const std::vector<std::shared_ptr<const LiveBatch>> batches_;
};

class Catalog {
 public:
  using RetireCallback = std::function<void(const LiveBatch&)>;
  // Runs as the RetireCallback does (any thread, quick, non-blocking).
  using ReplaceCallback = std::function<void(const LiveBatch&)>;

  // The first Snapshot (sequence 0) holds `initial` (in any order). Fails
  // like Publish() for repeated ids. Either callback may be empty.
  [[nodiscard]] static absl::StatusOr<std::unique_ptr<Catalog>> Create(
      std::vector<BatchRecord> initial, RetireCallback on_retire,
      ReplaceCallback on_replace = nullptr);
  Catalog(const Catalog&) = delete;
  Catalog& operator=(const Catalog&) = delete;

  // The current Snapshot. Never null.
  std::shared_ptr<const Snapshot> Pin() const ABSL_LOCKS_EXCLUDED(current_mu_);

  // Publishes a Snapshot with `add` and without the ids in `remove`, and
  // returns it. The removed batches are retired.
  [[nodiscard]] absl::StatusOr<std::shared_ptr<const Snapshot>> Publish(
      std::vector<BatchRecord> add, const std::vector<BatchId>& remove)
      ABSL_LOCKS_EXCLUDED(publish_mu_, current_mu_);

  // Publishes a Snapshot in which the live batch `record.id` is `record`
  // (same day and directory) and returns it. The old record is replaced,
  // not retired.
  [[nodiscard]] absl::StatusOr<std::shared_ptr<const Snapshot>> Replace(BatchRecord record)
      ABSL_LOCKS_EXCLUDED(publish_mu_, current_mu_);

  // Whether some record of `id` is alive: the current Snapshot names the
  // id, or a retired record of it is still referenced (its RetireCallback
  // has not run). Stays true while a publisher may be adding or removing
  // the id; the caller keeps the id from being published meanwhile if it
  // acts on false (Maintenance deletes the batch's directory then).
  bool HoldsRecordOf(const BatchId& id) const ABSL_LOCKS_EXCLUDED(current_mu_);

 private:
  // Shared with every LiveBatch's deleter, so a batch outliving the catalog
  // still reaches the callback.
  struct RetireState {
    RetireCallback callback;
    ReplaceCallback on_replace;
    // Retired records still referenced, by id (invariant 5).
    mutable Mutex mu;
    std::map<BatchId, int> retired_alive ABSL_GUARDED_BY(mu);
  };

  Catalog(std::shared_ptr<RetireState> retire, std::shared_ptr<const Snapshot> first);

  std::shared_ptr<const LiveBatch> MakeLiveBatch(BatchRecord record) const;
  // The Snapshot numbered `sequence`: `current` with `add` and without
  // `remove`, or why not.
  absl::StatusOr<std::shared_ptr<const Snapshot>> BuildNext(
      const Snapshot& current, uint64_t sequence, std::vector<BatchRecord> add,
      const std::vector<BatchId>& remove) const;

  // Constant after construction.
  const std::shared_ptr<RetireState> retire_;

  // Serialises publishers; held while the next Snapshot is built.
  Mutex publish_mu_ ABSL_ACQUIRED_BEFORE(current_mu_);
  // Guards only the pointer swap and copy.
  mutable Mutex current_mu_;
  std::shared_ptr<const Snapshot> current_ ABSL_GUARDED_BY(current_mu_);
};

}  // namespace strata::storage
