#pragma once

// ClusterMember: one serving node's part in the batch catalog several nodes
// share (postgres_batch_catalog.h, docs/format/postgres-catalog.md).
//
// Join() claims the node id (refused while another process heartbeats for
// it); Start() starts a thread that heartbeats and renews the day leases
// held (its own, so a slow listing never lets them lapse) and one that keeps the catalog's
// view of this node's batches (those whose ids carry its node field) equal
// to the local catalog's, as far as the object store holds them:
//   - a local batch the uploader has put in the store (meta.json last) and
//     the shared catalog does not list is added;
//   - a batch of this node that the shared catalog lists and the local
//     catalog no longer has (local compaction or retention replaced or
//     dropped it) is removed, in one Swap() with the additions of its day,
//     under the day's lease; and only once every local batch of that day is
//     in the store, so a compaction's output goes in with the removal of
//     its inputs (whatever generations lay between) and no listing misses
//     its rows or holds them twice. The inputs of this node's compaction
//     outputs (meta.json's `sources`) that the shared catalog lists are
//     removed in that swap too, other nodes' batches among them.
// One compactor per day: the member is the storage engine's
// CompactionGate (storage/maintenance/compaction.h). Compaction takes only
// batches the shared catalog lists (any node's: others' are read back from
// the store), and merges a day only while this node holds the day's lease,
// which it takes at the first group (ClaimDay) and keeps, renewed with the
// heartbeat, until its outputs of that day are registered; another node's
// compaction of the day waits for it, and a node that dies loses the lease
// after `lease_time`, when another node takes the day over.
// When another node's compaction replaced batches of this node (it held
// the day), this node follows: a batch of its own that the shared catalog
// records as removed is dropped here (its rows are in the other node's
// output), and an output of its own whose inputs another node compacted
// too (a lease lost while compacting) is dropped with its inputs still
// listed put back from the store, in one local Snapshot
// (Local::replace), before the output could ever be registered; the
// other nodes' outputs of those days are adopted, and their inputs dropped,
// in that Snapshot too, so no reader here misses the rows or sees them
// twice.
// It also keeps the local catalog's view of other nodes' batches equal to
// the shared one: a batch another node listed is adopted (as an evicted
// batch, read back from the store), one no longer listed is dropped (a
// day's adoptions and drops in one Snapshot); days
// older than `keep_days` are not adopted (retention drops them here), and
// those of a node that stopped heartbeating are removed from the shared
// catalog by whichever node takes the day's lease first. And
// it deletes the objects of batches it removed once `delete_after` has
// passed, so other servers' queries that still read them finish first.
// It decides from the lists alone, so a restart (or a crash between an
// upload and its registration) needs no state of its own. Every
// `reconcile_interval` it also lists the store (ReconcileStore()): objects
// of a batch of this node that neither the local nor the shared catalog
// lists (uploaded, then replaced locally before its registration; an
// upload cut short whose batch is gone) are deleted once every listing for
// `delete_after` found them so.
//
// Invariants:
//   1. Nothing is added to the shared catalog before its meta.json is in
//      the store.
//   2. A batch of this node leaves the shared catalog only in the same
//      transaction that adds every uploaded local batch of its day.
//   3. Batches of other nodes are never added to the shared catalog by
//      this node, and removed from it only in the swap that registers
//      this node's compaction output holding their rows (invariant 7).
//   4. The objects of a removed batch are deleted only by the node that
//      removed it, only `delete_after` after its removal, and only once
//      every live node (a heartbeat within `lease_time`) has reported a
//      listing at or after the removal applied to its local catalog, so
//      no node still reads the batch (a node reports a listing once every
//      batch it lacks is out of its local catalog; a claim starts at
//      none; a node that died stops counting after `lease_time` and, back,
//      drops the batch at its first Sync() before it answers).
//   5. Objects of a batch no catalog lists are deleted only by the batch's
//      own node, and only after `delete_after` in which no listing of
//      either catalog named it.
//   6. No batch of this node leaves the shared catalog while the data
//      directory holds the restore marker (a restore of the node's batches
//      under way or cut short): Sync() runs only without it.
//   7. Compaction takes only batches the shared catalog listed, of days
//      whose lease this node holds; an output is registered only in a
//      swap fenced by that lease which removes every input, so each row is
//      listed once. An output whose inputs another node removed is never
//      registered.
//   8. A batch of this node is dropped locally because another node
//      removed it only once the shared catalog records its removal, which
//      happens only in the swap that adds the output holding its rows.
//
// Thread-safety: Sync() is for tests and runs on the caller's thread; the
// thread started by Start() calls it too, so tests use Sync() without
// Start(). Errors: Join() returns the catalog's (FailedPrecondition for a
// node id in use); the thread's errors (its first Sync()'s included) are
// reported through on_error and retried at the next poll (a failed delete
// of an orphan's objects at the next listing); a lost node claim calls
// on_claim_lost once and ends the thread.

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/time/time.h"
#include "cluster/postgres_batch_catalog.h"
#include "common/mutex.h"
#include "storage/commit/catalog.h"
#include "storage/format/batch_id.h"

namespace strata::cluster {

struct ClusterMemberOptions {
  std::string node = "00";  // this server's --node-id
  std::string instance;     // random per process: 1 to 64 of [0-9a-z]
  std::string address;      // where its API answers, for other nodes and people
  // A node that stops heartbeating for this long loses its node id and its
  // day leases to others.
  absl::Duration lease_time = absl::Seconds(30);
  // How often the thread compares the lists when nothing changed locally.
  std::chrono::milliseconds poll_interval{1000};
  // How long the objects of a removed batch stay in the store.
  absl::Duration delete_after = absl::Minutes(10);
  // How often the store is listed for objects no catalog names
  // (ReconcileStore()).
  absl::Duration reconcile_interval = absl::Minutes(10);
  // Days of ingest time kept (the server's --retention-days; 0: all):
  // other nodes' batches of older days are not adopted.
  int keep_days = 0;
  std::function<absl::Time()> clock = [] { return absl::Now(); };
  // Test-only: RestoreOwnBatches() waits this long before each batch it
  // restores, so that a test can kill the process in the middle of a
  // restore (`strata serve` reads it from STRATA_TEST_RESTORE_STEP_DELAY_MS).
  absl::Duration TEST_restore_step_delay = absl::ZeroDuration();
  std::function<void(const absl::Status&)> on_error;
  std::function<void(const absl::Status&)> on_claim_lost;
};

struct ClusterMemberStats {
  uint64_t batches_added = 0;
  uint64_t batches_removed = 0;
  uint64_t swaps = 0;
  uint64_t batches_adopted = 0;
  uint64_t batches_dropped = 0;
  uint64_t batches_restored = 0;  // this node's, into an empty directory
  // This node's batches dropped because another node's compaction
  // replaced them, and outputs of its own dropped because another node
  // compacted their inputs too.
  uint64_t batches_replaced_elsewhere = 0;
  uint64_t outputs_discarded = 0;
  // Day leases taken for compaction, and day claims refused (another
  // node holds the day).
  uint64_t days_claimed = 0;
  uint64_t claims_refused = 0;
  uint64_t objects_deleted = 0;  // batches whose objects were deleted
  // Batches of this node in the store that no catalog names: deleted, and
  // waiting out `delete_after` at the last listing.
  uint64_t orphans_deleted = 0;
  uint64_t orphans_waiting = 0;
  // Batches of days past `keep_days` that this node removed from the
  // shared catalog for a node that no longer heartbeats.
  uint64_t batches_expired = 0;
  // Days whose removals wait for uploads, or for another holder's lease.
  uint64_t days_waiting = 0;
  uint64_t failures = 0;
};

class ClusterMember {
 public:
  // What the member does to this node's storage (the storage engine's
  // calls in serving; storage.h).
  struct Local {
    // The local catalog's current Snapshot.
    std::function<std::shared_ptr<const storage::Snapshot>()> pin;
    // Whether this node's batch has its meta.json in the store.
    std::function<bool(const storage::BatchId&)> uploaded;
    // Adopts another node's batch from its meta.json (Storage::AdoptRemoteBatch).
    std::function<absl::Status(const std::string& meta_json)> adopt;
    // Publishes one of this node's batches from its meta.json, read back
    // from the store (Storage::RestoreOwnBatch).
    std::function<absl::Status(const std::string& meta_json)> restore;
    // Undoes `restore` for one of this node's batches
    // (Storage::ForgetRestoredBatch).
    std::function<absl::Status(const storage::BatchId&)> forget;
    // Whether the data directory's restore marker is present: a restore
    // of this node's batches began there and did not finish
    // (Storage::RestoreMarked).
    std::function<absl::StatusOr<bool>()> restore_marked;
    // Writes (true) or removes (false) the restore marker, durably
    // (Storage::SetRestoreMarked).
    std::function<absl::Status(bool)> set_restore_marked;
    // Drops an adopted batch (Storage::DropRemoteBatch).
    std::function<absl::Status(const storage::BatchId&)> drop;
    // Publishes batches from their meta.json in the shared catalog and
    // retires local batches, in one Snapshot
    // (Storage::ReplaceWithStoredBatches).
    std::function<absl::Status(const std::vector<std::string>& stored,
                               const std::vector<storage::BatchId>& drop)>
        replace;
    // Every batch with objects in the store, with its day
    // (storage::ListStoredBatches).
    std::function<absl::StatusOr<std::map<storage::BatchId, std::string>>()> stored_batches;
    // Deletes a removed batch's objects (storage::DeleteBatchObjects).
    std::function<absl::Status(const storage::BatchId&, const std::string& day)> delete_objects;
  };

  // Claims the node id. `catalog` must outlive the member.
  [[nodiscard]] static absl::StatusOr<std::unique_ptr<ClusterMember>> Join(
      PostgresBatchCatalog& catalog, Local local, ClusterMemberOptions options);
  ~ClusterMember();
  ClusterMember(const ClusterMember&) = delete;
  ClusterMember& operator=(const ClusterMember&) = delete;

  // For a node whose data directory was lost or replaced: when the local
  // catalog holds no batch of this node while the shared catalog lists
  // some, restores those (of the days kept) from the store, so that Sync()
  // keeps them instead of removing them as replaced locally. Returns how
  // many were restored; 0 when the local catalog holds any batch of this
  // node (a directory with some of its batches is this node's own, and
  // Sync() follows it). Called once, after Join() and before Start().
  //
  // The restore marker (Local::restore_marked) is written before the first
  // batch is restored and removed after the last, so that a process killed
  // in between leaves a directory that is not taken for the node's own:
  // a call that finds the marker finishes the restore (restores every
  // batch of this node the shared catalog lists, of the days kept, that
  // the local catalog lacks, whatever the directory holds besides), then
  // removes the marker. Sync() refuses to run while the marker is present.
  //
  // When one batch cannot be restored (the store does not answer, or does
  // not hold the batch): in a restore this call began, those it restored
  // are forgotten again and the marker removed, so that the directory
  // still holds none and the next start restores them all; in a restore
  // it finished, nothing is changed and the marker stays (the next start
  // finishes it). The restore's error, naming the batch, then; the
  // listing's error when the shared catalog does not answer. Nothing is
  // removed from the shared catalog either way.
  [[nodiscard]] absl::StatusOr<size_t> RestoreOwnBatches();

  // Starts the thread (heartbeats and Sync() every poll interval).
  void Start() ABSL_LOCKS_EXCLUDED(mu_);
  // A batch was published or uploaded: sync now rather than at the next poll.
  void Notify() ABSL_LOCKS_EXCLUDED(mu_);
  // One comparison of the lists and the changes it calls for.
  // FailedPrecondition while the restore marker is present (a restore cut
  // short: the directory is not the node's whole state).
  [[nodiscard]] absl::Status Sync() ABSL_LOCKS_EXCLUDED(mu_);
  // One listing of the store against both catalogs (the thread calls it
  // every reconcile_interval): deletes the objects of this node's batches
  // that no catalog named at this listing nor at any listing since
  // `delete_after` ago.
  [[nodiscard]] absl::Status ReconcileStore() ABSL_LOCKS_EXCLUDED(reconcile_mu_, mu_);
  // Ends the thread; later calls return at once.
  void Stop() ABSL_LOCKS_EXCLUDED(mu_);
  // A clean stop: Stop(), then gives up the node id's claim so that a
  // restart claims it at once instead of after the lease time.
  [[nodiscard]] absl::Status Leave() ABSL_LOCKS_EXCLUDED(mu_);

  // The storage engine's CompactionGate (compaction.h), through
  // ClusterCompactionGate: whether compaction may take `batch` (the shared
  // catalog listed it at the last Sync()); whether this node may compact
  // `day` now (it holds the day's lease or took it: one compactor per
  // day); and the end of a compaction of a claimed day.
  bool AdmitsForCompaction(const storage::LiveBatch& batch) const ABSL_LOCKS_EXCLUDED(mu_);
  bool ClaimDay(const std::string& day) ABSL_LOCKS_EXCLUDED(mu_);
  void CompactionEnded(const std::string& day, bool published) ABSL_LOCKS_EXCLUDED(mu_);

  ClusterMemberStats Stats() const ABSL_LOCKS_EXCLUDED(mu_);
  const ClusterMemberOptions& options() const { return options_; }

 private:
  ClusterMember(PostgresBatchCatalog& catalog, Local local, ClusterMemberOptions options,
                int node_number);
  // The first day kept ("YYYY-MM-DD"), or "" when every day is.
  std::string FirstDayKept() const;
  // RestoreOwnBatches()'s failure to restore `batch` (`status`): in a
  // restore this call `began`, forgets those `restored` and the marker.
  absl::Status RestoreFailed(const CatalogBatch& batch, const absl::Status& status, size_t listed,
                             bool began, const std::vector<storage::BatchId>& restored);
  // Other nodes' batches of one day that a listing changes here.
  struct OthersChange {
    std::vector<const CatalogBatch*> adopt;  // listed, not here
    std::vector<storage::BatchId> drop;      // here, not listed
  };
  // Those changes by day (pointers into `listing`): days older than
  // `keep_days`, and `consumed` (inputs of this node's outputs not
  // registered yet), are not adopted.
  std::map<std::string, OthersChange> OthersChanges(const CatalogListing& listing,
                                                    const storage::Snapshot& snapshot,
                                                    const std::set<std::string>& consumed) const;
  // Adopts and drops other nodes' batches to match `listing`, a day's
  // adoptions and drops in one Snapshot (each on its own if that fails).
  // `*applied`: every batch of another node that `listing` lacks is out
  // of the local catalog.
  absl::Status SyncOthers(const CatalogListing& listing, const storage::Snapshot& snapshot,
                          const std::set<std::string>& consumed, bool* applied);
  // Drops this node's batches another node's compaction replaced, and
  // outputs of its own whose inputs another node compacted (their inputs
  // still listed put back), with the other nodes' changes of those days
  // (the outputs that hold the rows adopted): one Snapshot; true when it
  // changed anything.
  absl::StatusOr<bool> FollowOthersCompactions(const CatalogListing& listing,
                                               const storage::Snapshot& snapshot);
  // Renews the day leases held for compaction (with the heartbeat).
  void RenewHeldDays() ABSL_LOCKS_EXCLUDED(mu_);
  // Gives back the held day leases with no compaction running and no
  // output of this node waiting to be registered (`pending_days`).
  void ReleaseIdleDays(const std::set<std::string>& pending_days) ABSL_LOCKS_EXCLUDED(mu_);
  // Removes from the shared catalog the batches of days before
  // `keep_days` whose node has not heartbeated for `lease_time` (it would
  // have dropped them itself), one swap per day under the day's lease.
  absl::Status ExpireSilentNodesDays(const CatalogListing& listing);
  // Deletes the objects of batches this node removed `delete_after` ago or
  // more which every live node has synced past (invariant 4), for about
  // one poll interval at most.
  absl::Status DeleteRemovedObjects();
  bool stopping() const ABSL_LOCKS_EXCLUDED(mu_) {
    MutexLock lock(&mu_);
    return stopping_;
  }
  // The listing thread (`started`: the clock when Start() ran, for both
  // threads).
  void Run(absl::Time started) ABSL_LOCKS_EXCLUDED(mu_);
  // The heartbeat thread: the node's heartbeat and the held day leases'
  // renewals, every third of the lease time, whatever a listing costs.
  void Beat(absl::Time started) ABSL_LOCKS_EXCLUDED(mu_);
  // Adds and removes the batches of one day; false when a removal waits
  // for another node's lease of the day.
  absl::StatusOr<bool> SyncDay(const std::string& day, const std::vector<CatalogBatch>& add,
                               const std::vector<std::string>& remove);

  PostgresBatchCatalog& catalog_;
  const Local local_;
  const ClusterMemberOptions options_;
  const int node_number_;
  const std::string holder_;  // "<node>/<instance>"

  mutable Mutex mu_;
  CondVar wake_cv_;
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  bool notified_ ABSL_GUARDED_BY(mu_) = false;
  ClusterMemberStats stats_ ABSL_GUARDED_BY(mu_);
  // The newest listing generation reported applied (ReportSynced); only
  // Sync() uses it, one caller at a time.
  int64_t reported_generation_ = 0;
  // Batch ids the shared catalog listed at the last Sync().
  std::set<std::string> listed_ ABSL_GUARDED_BY(mu_);
  // Day leases held for compaction, and the day being compacted.
  std::map<std::string, DayLease> held_days_ ABSL_GUARDED_BY(mu_);
  std::optional<std::string> compacting_day_ ABSL_GUARDED_BY(mu_);
  // One ReconcileStore() at a time, and what it found: batches of this
  // node in the store and in no catalog, with the first listing that found
  // them so.
  Mutex reconcile_mu_;
  std::map<storage::BatchId, absl::Time> orphans_ ABSL_GUARDED_BY(reconcile_mu_);
  std::thread thread_;
  std::thread heartbeat_thread_;
};

}  // namespace strata::cluster
