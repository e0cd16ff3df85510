#pragma once

// Maintenance: strata's one background thread over a data directory. Each
// step does a bounded amount of work, in this order:
//
//   1. reclamation: delete the batches the catalog retired (no Snapshot
//      names them any more) by the deletion protocol (commit.md);
//   2. once every input of the published compaction is deleted, remove
//      COMPACTION.json;
//   3. remove the directories of dropped days once they are empty;
//   4. retention: drop one day (retention.h) from the live Snapshot;
//   5. compaction: merge one group (compaction.h), unless a marker is
//      still pending. With a CompactionGate (several servers), only
//      batches it admits are planned, and a group is merged only once the
//      gate lets this server claim its day; a day refused is left out of
//      this step's plan (up to four days are tried).
//
// A step that did something is followed at once by the next; otherwise
// the thread sleeps for idle_interval or until a batch is retired. The
// thread runs at a lower CPU priority (nice) so ingest keeps its latency.
//
// Invariants:
//   1. A batch is deleted only after the catalog retired it and no record
//      of its id is alive (Catalog::HoldsRecordOf, under
//      DataDir::batch_dir_mu), so no file disappears under a pinned
//      Snapshot, nor under a record of the id published again (a batch
//      put back from a shared catalog takes over the directory of its
//      retired record); the last of them to be retired deletes it.
//   2. At most one COMPACTION.json exists; it is removed only after all of
//      its inputs are deleted.
//   3. Maintenance takes no lock that ingest takes across I/O; it shares
//      the catalog's publish (an in-memory swap) and the id issuer.
//
// Failures: a failed deletion is retried on the next step; a failed
// compaction is reported (on_error) and its group retried after
// failure_backoff; an Aborted compaction (its undo failed) stops
// compaction until a restart, whose boot resolves the marker.
//
// Thread-safety: RetiredBatches is safe for concurrent use (the catalog
// calls it from any thread). Maintenance's Start/Stop/Stats are safe for
// concurrent use; RunStep is for tests that drive it without the thread.

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "common/mutex.h"
#include "storage/commit/catalog.h"
#include "storage/commit/data_dir.h"
#include "storage/format/batch_id.h"
#include "storage/maintenance/compaction.h"
#include "storage/maintenance/retention.h"

namespace strata::storage {

// The batches the catalog retired and nobody has deleted yet. The
// catalog's RetireCallback is Push (quick, never blocks on I/O).
class RetiredBatches {
 public:
  struct Entry {
    std::string day;
    BatchId id;
  };
  void Push(const LiveBatch& batch) ABSL_LOCKS_EXCLUDED(mu_);
  // Everything pushed so far, oldest first; the queue is left empty.
  std::vector<Entry> Take() ABSL_LOCKS_EXCLUDED(mu_);
  // Waits until something is pushed, Wake() is called, or `timeout`.
  void Wait(std::chrono::nanoseconds timeout) ABSL_LOCKS_EXCLUDED(mu_);
  void Wake() ABSL_LOCKS_EXCLUDED(mu_);

 private:
  Mutex mu_;
  CondVar cv_;
  std::vector<Entry> entries_ ABSL_GUARDED_BY(mu_);
  bool woken_ ABSL_GUARDED_BY(mu_) = false;
};

struct MaintenanceOptions {
  bool compaction = true;
  CompactionPolicy policy;
  RetentionPolicy retention;
  MergeOptions merge;
  // Sleep between steps when there is nothing to do.
  std::chrono::nanoseconds idle_interval = std::chrono::seconds(1);
  // Wait before retrying compaction after a failed one.
  std::chrono::nanoseconds failure_backoff = std::chrono::seconds(60);
  // The thread's nice value (0: unchanged).
  int nice = 10;
  // Run the thread under SCHED_IDLE instead: it gets a CPU only when no
  // normal thread wants it (the nice value is then only its label).
  bool sched_idle = false;
  MicrosClock clock = SystemClockMicros;
  // Builds a compaction output's attachment (its trace filter).
  BatchAttachmentLoader load_attachment;
  // Where compactions read inputs' data files (remote ones from the read
  // cache); empty: the batch directories. Set by the storage engine.
  InputFileResolver input_file;
  // Several servers (compaction.h): the batches compaction may take and
  // the days it may compact now. Null: every batch the policy does not
  // keep out, every day.
  std::shared_ptr<CompactionGate> gate;
  // Told about every failure (for the log); may be empty.
  std::function<void(const absl::Status&)> on_error;
};

struct MaintenanceStats {
  uint64_t steps = 0;
  uint64_t compactions = 0;
  uint64_t compaction_failures = 0;
  uint64_t compacted_input_batches = 0;
  uint64_t compacted_rows = 0;   // rows read by compactions
  uint64_t compacted_bytes = 0;  // input file bytes
  uint64_t merged_spans = 0;
  uint64_t batches_deleted = 0;
  uint64_t deletion_failures = 0;
  uint64_t days_dropped = 0;
  bool compaction_halted = false;
  bool marker_pending = false;
  bool paused = false;  // the thread is waiting in a Pause()
};

class Maintenance {
 public:
  // `dir` and `retired` (the queue the catalog's RetireCallback feeds)
  // must outlive the Maintenance.
  Maintenance(DataDir& dir, std::shared_ptr<RetiredBatches> retired, MaintenanceOptions options);
  // Stop().
  ~Maintenance();
  Maintenance(const Maintenance&) = delete;
  Maintenance& operator=(const Maintenance&) = delete;

  void Start() ABSL_LOCKS_EXCLUDED(mu_);
  // Stops the thread: a running merge is cut short and undone. Idempotent.
  void Stop() ABSL_LOCKS_EXCLUDED(mu_);
  // Pause() holds the thread before its next step, and a running merge at
  // its next round or chunk (its memory and files stay as they are), until
  // Resume(). Stop() ends a pause. For measurements that compare ingest
  // with and without compaction in alternating windows of one load.
  void Pause() ABSL_LOCKS_EXCLUDED(pause_mu_);
  void Resume() ABSL_LOCKS_EXCLUDED(pause_mu_);

  // One step (see the top); true when it did something. Not concurrently
  // with the thread.
  bool RunStep();

  // Rewrites `batch` alone through the compaction protocol with its
  // rollups recomputed from its rows (`strata rollups rebuild`); returns
  // the output's id. The marker is then this Maintenance's: Reclaim()
  // removes it once the input is deleted (the caller lets go of `batch`
  // first). FailedPrecondition while a marker is pending. Not concurrently
  // with the thread.
  [[nodiscard]] absl::StatusOr<BatchId> RewriteWithFreshRollups(
      std::shared_ptr<const LiveBatch> batch);
  // Steps 1-3 alone: deletes retired batches, then a marker whose inputs
  // are all gone; true when it did something. Not concurrently with the
  // thread.
  bool Reclaim();

  MaintenanceStats Stats() const ABSL_LOCKS_EXCLUDED(mu_);
  // As given to the constructor (the storage engine fills in the merge's
  // table options); benchmarks print the merge's memory settings from it.
  const MaintenanceOptions& options() const { return options_; }

 private:
  void Loop();
  void Report(const absl::Status& status);
  // Step 4.
  bool DropExpiredDay(const Snapshot& snapshot);
  // Step 5.
  bool CompactOnce(const Snapshot& snapshot);
  absl::Status CheckStop() const;
  // Returns when not paused or stopping.
  void WaitWhilePaused() const ABSL_LOCKS_EXCLUDED(pause_mu_);

  DataDir& dir_;
  const std::shared_ptr<RetiredBatches> retired_;
  const MaintenanceOptions options_;
  Compactor compactor_;

  // Touched only by the thread running steps.
  std::vector<RetiredBatches::Entry> undeleted_;
  std::optional<CompactionMarker> marker_;
  std::set<BatchId> marker_waiting_;  // inputs of marker_ not yet deleted
  std::set<std::string> dropped_days_;
  std::optional<std::chrono::steady_clock::time_point> compaction_paused_until_;

  std::atomic<bool> stop_{false};
  std::atomic<bool> paused_{false};
  mutable std::atomic<bool> parked_{false};  // waiting in WaitWhilePaused()
  mutable Mutex pause_mu_;
  mutable CondVar pause_cv_;
  mutable Mutex mu_;
  MaintenanceStats stats_ ABSL_GUARDED_BY(mu_);
  std::thread thread_;  // started by Start(), joined by Stop()
};

}  // namespace strata::storage
