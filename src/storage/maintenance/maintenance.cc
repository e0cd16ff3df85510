#include "storage/maintenance/maintenance.h"

#include <pthread.h>
#include <sched.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <utility>

#include "fmt/format.h"
#include "storage/commit/batch_committer.h"

namespace strata::storage {

// ---- RetiredBatches ----

void RetiredBatches::Push(const LiveBatch& batch) {
  MutexLock lock(&mu_);
  entries_.push_back({batch.day(), batch.id()});
  cv_.SignalAll();
}

std::vector<RetiredBatches::Entry> RetiredBatches::Take() {
  MutexLock lock(&mu_);
  std::vector<Entry> out;
  out.swap(entries_);
  return out;
}

void RetiredBatches::Wait(std::chrono::nanoseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  MutexLock lock(&mu_);
  while (entries_.empty() && !woken_) {
    if (!cv_.WaitUntil(&mu_, deadline)) break;
  }
  woken_ = false;
}

void RetiredBatches::Wake() {
  MutexLock lock(&mu_);
  woken_ = true;
  cv_.SignalAll();
}

// ---- Maintenance ----

Maintenance::Maintenance(DataDir& dir, std::shared_ptr<RetiredBatches> retired,
                         MaintenanceOptions options)
    : dir_(dir),
      retired_(std::move(retired)),
      options_(std::move(options)),
      compactor_(dir, CompactorOptions{.merge = options_.merge,
                                       .input_file = options_.input_file,
                                       .load_attachment = options_.load_attachment,
                                       .check_stop = [this] { return CheckStop(); }}) {}

Maintenance::~Maintenance() { Stop(); }

void Maintenance::Start() {
  MutexLock lock(&mu_);
  if (thread_.joinable() || stop_.load()) return;
  thread_ = std::thread([this] { Loop(); });
}

void Maintenance::Stop() {
  std::thread thread;
  {
    MutexLock lock(&mu_);
    stop_.store(true);
    thread.swap(thread_);
  }
  {
    MutexLock lock(&pause_mu_);
    pause_cv_.SignalAll();
  }
  retired_->Wake();
  if (thread.joinable()) thread.join();
}

void Maintenance::Pause() {
  MutexLock lock(&pause_mu_);
  paused_.store(true);
}

void Maintenance::Resume() {
  MutexLock lock(&pause_mu_);
  paused_.store(false);
  pause_cv_.SignalAll();
}

void Maintenance::WaitWhilePaused() const {
  if (!paused_.load()) return;
  parked_.store(true);
  {
    MutexLock lock(&pause_mu_);
    while (paused_.load() && !stop_.load()) pause_cv_.Wait(&pause_mu_);
  }
  parked_.store(false);
}

absl::Status Maintenance::CheckStop() const {
  WaitWhilePaused();
  if (stop_.load(std::memory_order_relaxed)) {
    return absl::CancelledError("maintenance is stopping");
  }
  return absl::OkStatus();
}

MaintenanceStats Maintenance::Stats() const {
  MutexLock lock(&mu_);
  MaintenanceStats stats = stats_;
  stats.paused = parked_.load();
  return stats;
}

void Maintenance::Report(const absl::Status& status) {
  if (options_.on_error && !absl::IsCancelled(status)) options_.on_error(status);
}

void Maintenance::Loop() {
  if (options_.nice != 0) {
    // Per-thread on Linux: the nice value of this thread only.
    (void)setpriority(PRIO_PROCESS, static_cast<id_t>(syscall(SYS_gettid)), options_.nice);
  }
  if (options_.sched_idle) {
    sched_param param{};
    (void)pthread_setschedparam(pthread_self(), SCHED_IDLE, &param);
  }
  while (!stop_.load()) {
    WaitWhilePaused();
    if (stop_.load()) break;
    if (!RunStep()) retired_->Wait(options_.idle_interval);
  }
}

bool Maintenance::RunStep() {
  {
    MutexLock lock(&mu_);
    ++stats_.steps;
  }
  bool did = Reclaim();
  if (stop_.load()) return did;
  const std::shared_ptr<const Snapshot> snapshot = dir_.catalog().Pin();
  if (DropExpiredDay(*snapshot)) return true;
  if (options_.compaction && CompactOnce(*snapshot)) did = true;
  return did;
}

namespace {

// The rest of a deletion whose rename out of days/ happened: both
// directories synced, then the retired directory removed.
absl::Status FinishDeletion(FileSystem& fs, const DataDirPaths& paths, const std::string& day,
                            const BatchId& id) {
  if (absl::Status synced = fs.SyncDir(paths.Day(day)); !synced.ok()) return synced;
  if (absl::Status synced = fs.SyncDir(paths.Staging()); !synced.ok()) return synced;
  absl::Status removed = fs.RemoveAll(paths.RetiredBatch(id));
  return absl::IsNotFound(removed) ? absl::OkStatus() : removed;
}

}  // namespace

bool Maintenance::Reclaim() {
  FileSystem& fs = dir_.fs();
  const DataDirPaths& paths = dir_.paths();
  std::vector<RetiredBatches::Entry> todo = std::move(undeleted_);
  undeleted_.clear();
  for (RetiredBatches::Entry& e : retired_->Take()) todo.push_back(std::move(e));
  bool did = false;
  uint64_t deleted = 0, failed = 0;
  for (RetiredBatches::Entry& e : todo) {
    absl::Status status;
    {
      MutexLock dir_lock(&dir_.batch_dir_mu());
      if (dir_.catalog().HoldsRecordOf(e.id)) {
        // The id was published again (a batch put back from a shared
        // catalog took its directory over), or another retired record of
        // it is still read: the directory is theirs, and the last of them
        // to be retired deletes it. Live again, it is no compaction's
        // input any more, so a marker stops waiting for it; otherwise the
        // last record's deletion counts.
        if (dir_.catalog().Pin()->Find(e.id) != nullptr) marker_waiting_.erase(e.id);
        did = true;
        continue;
      }
      status = DeleteBatch(fs, paths, e.day, e.id);
      if (!status.ok()) {
        // Already moved out of days/ (by this or an earlier attempt): finish
        // the deletion. It counts only once the move is durable, because a
        // compaction marker may be removed on the strength of it.
        absl::StatusOr<bool> in_days = fs.Exists(paths.Batch(e.day, e.id));
        if (in_days.ok() && !*in_days) {
          status = FinishDeletion(fs, paths, e.day, e.id);
        } else if (in_days.ok()) {
          // An earlier record's deletion of this id left its directory in
          // staging/ (the id was then staged afresh): no record of the id
          // is alive, so that is debris, and it blocks the rename.
          absl::StatusOr<bool> debris = fs.Exists(paths.RetiredBatch(e.id));
          if (debris.ok() && *debris && fs.RemoveAll(paths.RetiredBatch(e.id)).ok()) {
            status = DeleteBatch(fs, paths, e.day, e.id);
          }
        }
      }
    }
    if (!status.ok()) {
      ++failed;
      Report(status);
      undeleted_.push_back(std::move(e));
      continue;
    }
    ++deleted;
    did = true;
    marker_waiting_.erase(e.id);
  }
  if (marker_.has_value() && marker_waiting_.empty()) {
    if (absl::Status removed = RemoveCompactionMarker(fs, paths); removed.ok()) {
      marker_.reset();
      did = true;
    } else {
      Report(removed);
    }
  }
  // Dropped days whose batches are all deleted: remove the directory.
  if (undeleted_.empty()) {
    const std::shared_ptr<const Snapshot> snapshot = dir_.catalog().Pin();
    for (auto it = dropped_days_.begin(); it != dropped_days_.end();) {
      bool live = false;
      for (const auto& batch : snapshot->batches()) live = live || batch->day() == *it;
      absl::StatusOr<std::vector<std::string>> names = fs.ListDir(paths.Day(*it));
      if (live || (names.ok() && !names->empty())) {
        ++it;  // a pinned Snapshot still names some of its batches
        continue;
      }
      dir_.committer().ForgetDay(*it);
      absl::Status removed = names.ok() ? fs.RemoveDir(paths.Day(*it)) : absl::OkStatus();
      if (removed.ok()) removed = fs.SyncDir(paths.Days());
      if (!removed.ok()) Report(removed);
      it = dropped_days_.erase(it);
      did = true;
    }
  }
  MutexLock lock(&mu_);
  stats_.batches_deleted += deleted;
  stats_.deletion_failures += failed;
  stats_.marker_pending = marker_.has_value();
  return did;
}

bool Maintenance::DropExpiredDay(const Snapshot& snapshot) {
  const uint64_t now = static_cast<uint64_t>(options_.clock()) * 1000;
  const std::vector<std::string> days = DaysToDrop(snapshot, options_.retention, now);
  if (days.empty()) return false;
  const std::string& day = days.front();
  std::vector<BatchId> remove;
  for (const auto& batch : snapshot.batches()) {
    if (batch->day() == day) remove.push_back(batch->id());
  }
  absl::StatusOr<std::shared_ptr<const Snapshot>> published = dir_.catalog().Publish({}, remove);
  if (!published.ok()) {
    Report(published.status());
    return false;
  }
  dropped_days_.insert(day);
  MutexLock lock(&mu_);
  ++stats_.days_dropped;
  return true;
}

absl::StatusOr<BatchId> Maintenance::RewriteWithFreshRollups(
    std::shared_ptr<const LiveBatch> batch) {
  if (marker_.has_value()) {
    return absl::FailedPreconditionError("a compaction marker is pending; reclaim first");
  }
  Compactor compactor(dir_, CompactorOptions{.merge = options_.merge,
                                             .input_file = options_.input_file,
                                             .load_attachment = options_.load_attachment,
                                             .check_stop = [this] { return CheckStop(); },
                                             .recompute_rollups = true});
  CompactionGroup group{
      .day = batch->day(), .generation = batch->id().generation(), .inputs = {std::move(batch)}};
  absl::StatusOr<CompactionResult> result = compactor.Run(group);
  group.inputs.clear();  // the input may now be retired
  if (!result.ok()) return result.status();
  marker_ = result->marker;
  marker_waiting_.clear();
  marker_waiting_.insert(result->marker.inputs.begin(), result->marker.inputs.end());
  MutexLock lock(&mu_);
  stats_.marker_pending = true;
  return result->marker.output;
}

bool Maintenance::CompactOnce(const Snapshot& snapshot) {
  {
    MutexLock lock(&mu_);
    if (stats_.compaction_halted) return false;
  }
  if (marker_.has_value()) return false;
  if (compaction_paused_until_.has_value() &&
      std::chrono::steady_clock::now() < *compaction_paused_until_) {
    return false;
  }
  const std::string today = DayOfNanos(static_cast<uint64_t>(options_.clock()) * 1000);
  std::optional<CompactionGroup> group;
  if (options_.gate == nullptr) {
    group = PlanCompaction(snapshot, options_.policy, today);
  } else {
    // Days another server compacts are left out of the plan, up to four.
    std::set<std::string> refused;
    CompactionPolicy policy = options_.policy;
    policy.keep_out = [&](const LiveBatch& batch) {
      return refused.contains(batch.day()) || !options_.gate->Admits(batch) ||
             (options_.policy.keep_out && options_.policy.keep_out(batch));
    };
    for (int attempt = 0; attempt < 4 && !group.has_value(); ++attempt) {
      group = PlanCompaction(snapshot, policy, today);
      if (!group.has_value()) return false;
      if (!options_.gate->Claim(group->day)) {
        refused.insert(group->day);
        group.reset();
      }
    }
  }
  if (!group.has_value()) return false;
  const std::string day = group->day;
  absl::StatusOr<CompactionResult> result = compactor_.Run(*group);
  group.reset();  // the inputs may now be retired
  if (options_.gate != nullptr) options_.gate->Ended(day, result.ok());
  if (!result.ok()) {
    Report(result.status());
    MutexLock lock(&mu_);
    if (!absl::IsCancelled(result.status())) ++stats_.compaction_failures;
    if (absl::IsAborted(result.status())) stats_.compaction_halted = true;
    compaction_paused_until_ = std::chrono::steady_clock::now() + options_.failure_backoff;
    return false;
  }
  compaction_paused_until_.reset();
  marker_ = result->marker;
  marker_waiting_.clear();
  marker_waiting_.insert(result->marker.inputs.begin(), result->marker.inputs.end());
  MutexLock lock(&mu_);
  ++stats_.compactions;
  stats_.compacted_input_batches += result->marker.inputs.size();
  stats_.compacted_rows += result->input_rows;
  stats_.compacted_bytes += result->input_bytes;
  stats_.merged_spans += result->output.spans.rows;
  stats_.marker_pending = true;
  return true;
}

}  // namespace strata::storage
