#include "cluster/cluster_member.h"

#include <map>
#include <set>
#include <utility>
#include <vector>

#include "absl/time/time.h"
#include "cluster/catalog_checks.h"
#include "common/status_macros.h"
#include "fmt/format.h"
#include "storage/format/batch_id.h"
#include "storage/format/batch_meta.h"

namespace strata::cluster {
namespace {

// The catalog's record of a local batch: its meta.json as strata writes it
// and the size of its data files.
CatalogBatch RecordOfLocal(const storage::LiveBatch& batch) {
  const storage::BatchMeta& meta = batch.meta();
  int64_t bytes = 0;
  for (const std::optional<storage::FileMeta>* file :
       {&meta.spans_parquet, &meta.spans_tidx, &meta.logs_parquet, &meta.metrics_parquet,
        &meta.rollups_parquet}) {
    if (file->has_value()) bytes += static_cast<int64_t>((*file)->bytes);
  }
  return CatalogBatch{.id = batch.id().ToString(),
                      .day = batch.day(),
                      .meta_json = storage::SerializeBatchMeta(meta),
                      .bytes = bytes};
}

}  // namespace

absl::StatusOr<std::unique_ptr<ClusterMember>> ClusterMember::Join(PostgresBatchCatalog& catalog,
                                                                   Local local,
                                                                   ClusterMemberOptions options) {
  STRATA_ASSIGN_OR_RETURN(const int node_number, storage::ParseBatchIdNode(options.node));
  STRATA_RETURN_IF_ERROR(CheckHolder(options.node + "/" + options.instance));
  const absl::Time now = options.clock();
  STRATA_RETURN_IF_ERROR(catalog.ClaimNode(NodeRecord{.node = options.node,
                                                      .instance = options.instance,
                                                      .address = options.address,
                                                      .started_at = now,
                                                      .heartbeat_at = now},
                                           options.lease_time));
  return std::unique_ptr<ClusterMember>(
      new ClusterMember(catalog, std::move(local), std::move(options), node_number));
}

ClusterMember::ClusterMember(PostgresBatchCatalog& catalog, Local local,
                             ClusterMemberOptions options, int node_number)
    : catalog_(catalog),
      local_(std::move(local)),
      options_(std::move(options)),
      node_number_(node_number),
      holder_(options_.node + "/" + options_.instance) {}

ClusterMember::~ClusterMember() { Stop(); }

void ClusterMember::Start() {
  MutexLock lock(&mu_);
  if (thread_.joinable() || stopping_) return;
  // The clock is read here, not when the threads first run (which may be
  // late on a loaded machine).
  const absl::Time started = options_.clock();
  thread_ = std::thread([this, started] { Run(started); });
  heartbeat_thread_ = std::thread([this, started] { Beat(started); });
}

void ClusterMember::Notify() {
  MutexLock lock(&mu_);
  notified_ = true;
  wake_cv_.SignalAll();
}

void ClusterMember::Stop() {
  {
    MutexLock lock(&mu_);
    stopping_ = true;
    wake_cv_.SignalAll();
  }
  if (thread_.joinable()) thread_.join();
  if (heartbeat_thread_.joinable()) heartbeat_thread_.join();
}

absl::Status ClusterMember::Leave() {
  Stop();
  std::map<std::string, DayLease> held;
  {
    MutexLock lock(&mu_);
    held.swap(held_days_);
  }
  for (const auto& [day, lease] : held) (void)catalog_.ReleaseLease(lease);
  return catalog_.ReleaseNode(options_.node, options_.instance);
}

bool ClusterMember::AdmitsForCompaction(const storage::LiveBatch& batch) const {
  const std::string id = batch.id().ToString();
  MutexLock lock(&mu_);
  return listed_.contains(id);
}

bool ClusterMember::ClaimDay(const std::string& day) {
  {
    MutexLock lock(&mu_);
    if (stopping_) return false;
  }
  // Taken, or extended when this node holds it (the same epoch).
  absl::StatusOr<std::optional<DayLease>> lease =
      catalog_.AcquireLease(day, holder_, options_.clock(), options_.lease_time);
  if (!lease.ok()) {
    if (options_.on_error) {
      options_.on_error(absl::Status(
          lease.status().code(), fmt::format("taking the lease of day {} for compaction: {}", day,
                                             std::string(lease.status().message()))));
    }
    return false;
  }
  MutexLock lock(&mu_);
  if (!lease->has_value()) {
    ++stats_.claims_refused;
    return false;
  }
  if (!held_days_.contains(day)) ++stats_.days_claimed;
  held_days_[day] = **lease;
  compacting_day_ = day;
  return true;
}

void ClusterMember::CompactionEnded(const std::string& day, bool published) {
  (void)published;  // the lease stays until Sync() registers or finds no output
  MutexLock lock(&mu_);
  if (compacting_day_ == day) compacting_day_.reset();
}

void ClusterMember::RenewHeldDays() {
  std::map<std::string, DayLease> held;
  {
    MutexLock lock(&mu_);
    held = held_days_;
  }
  for (const auto& [day, lease] : held) {
    absl::StatusOr<DayLease> renewed =
        catalog_.RenewLease(lease, options_.clock(), options_.lease_time);
    MutexLock lock(&mu_);
    auto it = held_days_.find(day);
    if (it == held_days_.end() || it->second.epoch != lease.epoch) continue;
    if (renewed.ok()) {
      it->second = *renewed;
    } else if (absl::IsFailedPrecondition(renewed.status())) {
      held_days_.erase(it);  // lost: its swap would be refused
    }
  }
}

void ClusterMember::ReleaseIdleDays(const std::set<std::string>& pending_days) {
  std::vector<DayLease> idle;
  {
    MutexLock lock(&mu_);
    for (auto it = held_days_.begin(); it != held_days_.end();) {
      if (compacting_day_ == it->first || pending_days.contains(it->first)) {
        ++it;
        continue;
      }
      idle.push_back(it->second);
      it = held_days_.erase(it);
    }
  }
  for (const DayLease& lease : idle) (void)catalog_.ReleaseLease(lease);
}

ClusterMemberStats ClusterMember::Stats() const {
  MutexLock lock(&mu_);
  return stats_;
}

void ClusterMember::Beat(absl::Time started) {
  const absl::Duration heartbeat_every = options_.lease_time / 3;
  absl::Time last_heartbeat = started;
  for (;;) {
    {
      const auto deadline = std::chrono::steady_clock::now() + options_.poll_interval;
      MutexLock lock(&mu_);
      while (!stopping_) {
        if (!wake_cv_.WaitUntil(&mu_, deadline)) break;
      }
      if (stopping_) return;
    }
    const absl::Time now = options_.clock();
    if (now - last_heartbeat < heartbeat_every) continue;
    const absl::Status beat = catalog_.Heartbeat(options_.node, options_.instance, now);
    if (absl::IsFailedPrecondition(beat)) {
      if (options_.on_claim_lost) options_.on_claim_lost(beat);
      // The listing thread ends too: this process no longer owns the id.
      MutexLock lock(&mu_);
      stopping_ = true;
      wake_cv_.SignalAll();
      return;
    }
    if (beat.ok()) {
      last_heartbeat = now;
      RenewHeldDays();
    } else if (options_.on_error) {
      options_.on_error(beat);
    }
  }
}

void ClusterMember::Run(absl::Time started) {
  // The first listing of the store comes one interval after the start.
  absl::Time last_reconcile = started;
  for (;;) {
    {
      const auto deadline = std::chrono::steady_clock::now() + options_.poll_interval;
      MutexLock lock(&mu_);
      while (!stopping_ && !notified_) {
        if (!wake_cv_.WaitUntil(&mu_, deadline)) break;
      }
      notified_ = false;
      if (stopping_) return;
    }
    const absl::Status synced = Sync();
    if (!synced.ok()) {
      {
        MutexLock lock(&mu_);
        ++stats_.failures;
      }
      if (options_.on_error) options_.on_error(synced);
    }
    if (options_.clock() - last_reconcile >= options_.reconcile_interval) {
      last_reconcile = options_.clock();
      const absl::Status reconciled = ReconcileStore();
      if (!reconciled.ok() && options_.on_error) options_.on_error(reconciled);
    }
  }
}

absl::Status ClusterMember::Sync() {
  // Invariant 6: a directory with a restore cut short lacks batches the
  // catalog lists, which must not be taken for replaced here.
  STRATA_ASSIGN_OR_RETURN(const bool restoring, local_.restore_marked());
  if (restoring) {
    return absl::FailedPreconditionError(fmt::format(
        "the data directory holds the restore marker: a restore of node id {}'s batches is not "
        "finished (RestoreOwnBatches)",
        options_.node));
  }
  std::shared_ptr<const storage::Snapshot> snapshot = local_.pin();
  STRATA_ASSIGN_OR_RETURN(const CatalogListing listing, catalog_.List());
  STRATA_ASSIGN_OR_RETURN(const bool followed, FollowOthersCompactions(listing, *snapshot));
  if (followed) snapshot = local_.pin();
  std::set<std::string> live;
  for (const CatalogBatch& batch : listing.batches) live.insert(batch.id);
  // This node's batches in the shared list, by day.
  std::map<std::string, std::set<std::string>> shared;
  for (const CatalogBatch& batch : listing.batches) {
    absl::StatusOr<storage::BatchId> id = storage::BatchId::Parse(batch.id);
    if (id.ok() && id->node() == node_number_) shared[batch.day].insert(batch.id);
  }
  struct DayChange {
    std::vector<CatalogBatch> add;
    std::set<std::string> remove;
    bool waiting_for_upload = false;
  };
  std::map<std::string, DayChange> changes;
  std::map<std::string, std::set<std::string>> local;
  // Inputs of this node's outputs not registered yet (other nodes'
  // included): removed with the outputs' registration, never adopted.
  std::set<std::string> consumed;
  for (const auto& batch : snapshot->batches()) {
    if (batch->id().node() != node_number_) continue;
    const std::string id = batch->id().ToString();
    local[batch->day()].insert(id);
    if (shared[batch->day()].contains(id)) continue;
    DayChange& change = changes[batch->day()];
    for (const std::string& source : batch->meta().sources) {
      consumed.insert(source);
      absl::StatusOr<storage::BatchId> source_id = storage::BatchId::Parse(source);
      if (live.contains(source) && source_id.ok() && snapshot->Find(*source_id) == nullptr) {
        change.remove.insert(source);
      }
    }
    if (local_.uploaded(batch->id())) {
      change.add.push_back(RecordOfLocal(*batch));
    } else {
      change.waiting_for_upload = true;
    }
  }
  for (const auto& [day, ids] : shared) {
    for (const std::string& id : ids) {
      if (!local[day].contains(id)) changes[day].remove.insert(id);
    }
  }
  absl::Status first_error;
  uint64_t waiting = 0;
  for (auto& [day, change] : changes) {
    if (!change.remove.empty() && change.waiting_for_upload) {
      ++waiting;  // the removal waits for the outputs that replace it
      continue;
    }
    if (change.add.empty() && change.remove.empty()) continue;
    absl::StatusOr<bool> done = SyncDay(
        day, change.add, std::vector<std::string>(change.remove.begin(), change.remove.end()));
    if (!done.ok()) {
      if (first_error.ok()) first_error = done.status();
    } else if (!*done) {
      ++waiting;  // another node holds the day's lease
    } else {
      for (const CatalogBatch& batch : change.add) live.insert(batch.id);
      for (const std::string& id : change.remove) live.erase(id);
    }
  }
  {
    MutexLock lock(&mu_);
    stats_.days_waiting = waiting;
    listed_ = live;
  }
  // A day held for compaction stays held while an output of it waits to
  // be registered.
  std::set<std::string> pending_days;
  for (const auto& batch : snapshot->batches()) {
    if (batch->id().node() == node_number_ && !batch->meta().sources.empty() &&
        !live.contains(batch->id().ToString())) {
      pending_days.insert(batch->day());
    }
  }
  ReleaseIdleDays(pending_days);
  bool applied = false;
  if (absl::Status status = SyncOthers(listing, *snapshot, consumed, &applied);
      !status.ok() && first_error.ok()) {
    first_error = status;
  }
  // Invariant 4: every batch this listing lacks is gone from the local
  // catalog (own ones by FollowOthersCompactions, others' just now).
  if (applied && listing.generation > reported_generation_) {
    absl::Status reported =
        catalog_.ReportSynced(options_.node, options_.instance, listing.generation);
    if (reported.ok()) {
      reported_generation_ = listing.generation;
    } else if (first_error.ok()) {
      first_error = reported;
    }
  }
  for (absl::Status status : {ExpireSilentNodesDays(listing), DeleteRemovedObjects()}) {
    if (!status.ok() && first_error.ok()) first_error = status;
  }
  return first_error;
}

std::string ClusterMember::FirstDayKept() const {
  if (options_.keep_days <= 0) return "";
  return absl::FormatTime("%Y-%m-%d", options_.clock() - absl::Hours(24) * options_.keep_days,
                          absl::UTCTimeZone());
}

absl::StatusOr<size_t> ClusterMember::RestoreOwnBatches() {
  absl::StatusOr<bool> marked = local_.restore_marked();
  if (!marked.ok()) {
    return absl::Status(
        marked.status().code(),
        fmt::format("looking for the restore marker: {}", std::string(marked.status().message())));
  }
  // With the marker, a restore was cut short: the batches here are part
  // of the node's, not the node's own whole state.
  const bool resumed = *marked;
  const std::shared_ptr<const storage::Snapshot> snapshot = local_.pin();
  if (!resumed) {
    for (const auto& batch : snapshot->batches()) {
      if (batch->id().node() == node_number_) return 0;
    }
  }
  absl::StatusOr<CatalogListing> listing = catalog_.List();
  if (!listing.ok()) {
    if (!resumed) return listing.status();
    return absl::Status(
        listing.status().code(),
        fmt::format("finishing the restore of node id {}'s batches cut short before (the data "
                    "directory holds the restore marker): the batch catalog: {}; nothing was "
                    "changed",
                    options_.node, std::string(listing.status().message())));
  }
  const std::string first_day = FirstDayKept();
  size_t listed = 0;
  std::vector<const CatalogBatch*> missing;
  for (const CatalogBatch& batch : listing->batches) {
    absl::StatusOr<storage::BatchId> id = storage::BatchId::Parse(batch.id);
    if (!id.ok() || id->node() != node_number_ || batch.day < first_day) continue;
    ++listed;
    if (snapshot->Find(*id) == nullptr) missing.push_back(&batch);
  }
  if (!resumed && missing.empty()) return 0;
  // Durable before the first batch is published: a process killed from
  // here on leaves a directory the next start does not take for whole.
  if (!resumed) {
    if (absl::Status status = local_.set_restore_marked(true); !status.ok()) {
      return absl::Status(status.code(), fmt::format("writing the restore marker: {}",
                                                     std::string(status.message())));
    }
  }
  std::vector<storage::BatchId> restored;
  for (const CatalogBatch* batch : missing) {
    if (options_.TEST_restore_step_delay > absl::ZeroDuration()) {
      absl::SleepFor(options_.TEST_restore_step_delay);
    }
    absl::Status status = local_.restore(batch->meta_json);
    if (!status.ok()) return RestoreFailed(*batch, status, listed, !resumed, restored);
    restored.push_back(*storage::BatchId::Parse(batch->id));
  }
  if (absl::Status status = local_.set_restore_marked(false); !status.ok()) {
    return absl::Status(
        status.code(),
        fmt::format("restored node id {}'s {} batches, but removing the restore marker: {}; the "
                    "next start finishes the restore",
                    options_.node, listed, std::string(status.message())));
  }
  MutexLock lock(&mu_);
  stats_.batches_restored += restored.size();
  return restored.size();
}

absl::Status ClusterMember::RestoreFailed(const CatalogBatch& batch, const absl::Status& status,
                                          size_t listed, bool began,
                                          const std::vector<storage::BatchId>& restored) {
  // A restore finished here is changed no further: the marker stays, and
  // the next start finishes it.
  std::string undone =
      "and the data directory keeps the restore marker, so the next start finishes the restore";
  if (began) {
    undone = "and none is kept here, so the next start restores them all again";
    absl::Status forgotten;
    for (const storage::BatchId& id : restored) {
      forgotten = local_.forget(id);
      if (!forgotten.ok()) {
        undone = fmt::format(
            "but batch {}, restored before, could not be forgotten ({}): the data directory "
            "keeps the restore marker, so the next start finishes the restore",
            id.ToString(), std::string(forgotten.message()));
        break;
      }
    }
    if (forgotten.ok()) {
      if (absl::Status unmarked = local_.set_restore_marked(false); !unmarked.ok()) {
        undone = fmt::format(
            "and none is kept here, but the restore marker could not be removed ({}), so the "
            "next start finishes the restore",
            std::string(unmarked.message()));
      }
    }
  }
  return absl::Status(
      status.code(),
      fmt::format("restoring batch {} (day {}) of node id {} from the object store: {}; the "
                  "batch catalog still lists the node's {} batches {}",
                  batch.id, batch.day, options_.node, std::string(status.message()), listed,
                  undone));
}

absl::Status ClusterMember::ExpireSilentNodesDays(const CatalogListing& listing) {
  const std::string first_day = FirstDayKept();
  if (first_day.empty()) return absl::OkStatus();
  // By day: each batch's id and node.
  std::map<std::string, std::vector<std::pair<std::string, int>>> expired;
  for (const CatalogBatch& batch : listing.batches) {
    if (batch.day >= first_day) continue;
    absl::StatusOr<storage::BatchId> id = storage::BatchId::Parse(batch.id);
    if (!id.ok() || id->node() == node_number_) continue;
    expired[batch.day].emplace_back(batch.id, id->node());
  }
  if (expired.empty()) return absl::OkStatus();
  STRATA_ASSIGN_OR_RETURN(const std::vector<NodeRecord> records, catalog_.Nodes());
  const absl::Time now = options_.clock();
  std::set<int> alive;
  for (const NodeRecord& record : records) {
    absl::StatusOr<int> node = storage::ParseBatchIdNode(record.node);
    if (node.ok() && record.heartbeat_at + options_.lease_time > now) alive.insert(*node);
  }
  absl::Status first_error;
  uint64_t removed = 0;
  for (const auto& [day, batches] : expired) {
    // A live node drops its own expired days (its retention, then Sync).
    std::vector<std::string> ids;
    for (const auto& [id, node] : batches) {
      if (!alive.contains(node)) ids.push_back(id);
    }
    if (ids.empty()) continue;
    {
      // Held for compaction: not given back here.
      MutexLock lock(&mu_);
      if (held_days_.contains(day)) continue;
    }
    absl::StatusOr<std::optional<DayLease>> lease =
        catalog_.AcquireLease(day, holder_, now, options_.lease_time);
    if (!lease.ok() || !lease->has_value()) {
      if (!lease.ok() && first_error.ok()) first_error = lease.status();
      continue;  // another node holds the day: its turn
    }
    absl::Status swapped = catalog_.Swap(**lease, ids, {}, options_.node, now);
    (void)catalog_.ReleaseLease(**lease);
    if (swapped.ok()) {
      removed += ids.size();
    } else if (first_error.ok()) {
      first_error = absl::Status(swapped.code(),
                                 fmt::format("expiring {} batches of day {} of silent nodes: {}",
                                             ids.size(), day, std::string(swapped.message())));
    }
  }
  MutexLock lock(&mu_);
  stats_.batches_expired += removed;
  return first_error;
}

absl::Status ClusterMember::DeleteRemovedObjects() {
  const absl::Time now = options_.clock();
  STRATA_ASSIGN_OR_RETURN(const std::vector<RemovedBatch> removed,
                          catalog_.RemovedBefore(options_.node, now - options_.delete_after,
                                                 now - options_.lease_time, /*limit=*/256));
  // At most about one poll interval here, so the listing stays fresh;
  // the rest waits for the next round.
  const auto stop_at = std::chrono::steady_clock::now() + options_.poll_interval;
  std::vector<std::string> deleted;
  absl::Status first_error;
  for (const RemovedBatch& batch : removed) {
    if (std::chrono::steady_clock::now() >= stop_at || stopping()) break;
    absl::StatusOr<storage::BatchId> id = storage::BatchId::Parse(batch.id);
    if (!id.ok()) continue;
    absl::Status status = local_.delete_objects(*id, batch.day);
    if (status.ok()) {
      deleted.push_back(batch.id);
    } else if (first_error.ok()) {
      first_error = status;
    }
  }
  STRATA_RETURN_IF_ERROR(catalog_.ObjectsDeleted(deleted, options_.clock()));
  MutexLock lock(&mu_);
  stats_.objects_deleted += deleted.size();
  return first_error;
}

absl::StatusOr<bool> ClusterMember::SyncDay(const std::string& day,
                                            const std::vector<CatalogBatch>& add,
                                            const std::vector<std::string>& remove) {
  const absl::Time now = options_.clock();
  if (remove.empty()) {
    uint64_t added = 0;
    for (const CatalogBatch& batch : add) {
      absl::Status status = catalog_.AddBatch(batch, options_.node, now);
      // AlreadyExists: listed since the listing (this node's own earlier
      // round cannot race it; the thread is the only caller in serving).
      if (!status.ok() && !absl::IsAlreadyExists(status)) return status;
      if (status.ok()) ++added;
    }
    MutexLock lock(&mu_);
    stats_.batches_added += added;
    return true;
  }
  // A day held for compaction keeps its lease (renewed with the
  // heartbeat); any other is taken for this swap alone.
  std::optional<DayLease> held;
  {
    MutexLock lock(&mu_);
    auto it = held_days_.find(day);
    if (it != held_days_.end()) held = it->second;
  }
  if (held.has_value()) {
    absl::Status swapped = catalog_.Swap(*held, remove, add, options_.node, now);
    if (absl::IsFailedPrecondition(swapped)) {
      // Lost: the next round takes the day afresh (or finds another
      // node's compaction of it, FollowOthersCompactions).
      MutexLock lock(&mu_);
      auto it = held_days_.find(day);
      if (it != held_days_.end() && it->second.epoch == held->epoch) held_days_.erase(it);
    }
    STRATA_RETURN_IF_ERROR(swapped);
  } else {
    STRATA_ASSIGN_OR_RETURN(const std::optional<DayLease> lease,
                            catalog_.AcquireLease(day, holder_, now, options_.lease_time));
    if (!lease.has_value()) return false;
    absl::Status swapped = catalog_.Swap(*lease, remove, add, options_.node, now);
    (void)catalog_.ReleaseLease(*lease);
    STRATA_RETURN_IF_ERROR(swapped);
  }
  MutexLock lock(&mu_);
  stats_.batches_added += add.size();
  stats_.batches_removed += remove.size();
  ++stats_.swaps;
  return true;
}

}  // namespace strata::cluster
