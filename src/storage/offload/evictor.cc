#include "storage/offload/evictor.h"

#include <utility>

#include "common/status_macros.h"
#include "fmt/format.h"
#include "storage/format/evicted_marker.h"

namespace strata::storage {

std::unique_ptr<Evictor> Evictor::Start(FileSystem& fs, Catalog& catalog, const Uploader& uploader,
                                        DataFileResolver& resolver, EvictorOptions options) {
  std::unique_ptr<Evictor> evictor(
      new Evictor(fs, catalog, uploader, resolver, std::move(options)));
  evictor->Adopt();
  evictor->thread_ = std::thread([e = evictor.get()] { e->Run(); });
  return evictor;
}

Evictor::~Evictor() { Stop(); }

void Evictor::Stop() {
  {
    MutexLock lock(&mu_);
    stopping_ = true;
    wake_cv_.SignalAll();
  }
  if (thread_.joinable()) thread_.join();
}

EvictionStats Evictor::Stats() const {
  MutexLock lock(&mu_);
  return stats_;
}

void Evictor::Failed(const absl::Status& status) {
  {
    MutexLock lock(&mu_);
    ++stats_.failures;
  }
  if (options_.on_error) options_.on_error(status);
}

void Evictor::Adopt() {
  // No reader runs before the server starts, so leftovers go at once.
  const std::shared_ptr<const Snapshot> snapshot = catalog_.Pin();
  uint64_t marked = 0;
  for (const std::shared_ptr<const LiveBatch>& batch : snapshot->batches()) {
    absl::StatusOr<bool> has = HasEvictedMarker(fs_, batch->dir());
    if (!has.ok()) {
      Failed(has.status());
      continue;
    }
    if (!*has) continue;
    resolver_.MarkEvicted(batch->id());
    ++marked;
    if (absl::StatusOr<uint64_t> removed = RemoveEvictedFiles(fs_, batch->dir()); !removed.ok()) {
      Failed(removed.status());
    }
  }
  MutexLock lock(&mu_);
  stats_.batches_marked += marked;
}

absl::Status Evictor::Evict(const LiveBatch& batch) {
  STRATA_RETURN_IF_ERROR(WriteEvictedMarker(fs_, batch.dir(), batch.id().ToString()));
  resolver_.MarkEvicted(batch.id());
  absl::StatusOr<std::shared_ptr<const Snapshot>> replaced =
      catalog_.Replace(BatchRecord{.id = batch.id(),
                                   .day = batch.day(),
                                   .dir = batch.dir(),
                                   .meta = batch.meta(),
                                   .attachment = batch.attachment()});
  // A batch compaction or retention removed meanwhile is deleted whole.
  if (absl::IsNotFound(replaced.status())) return absl::OkStatus();
  STRATA_RETURN_IF_ERROR(replaced.status());
  MutexLock lock(&mu_);
  ++stats_.batches_marked;
  return absl::OkStatus();
}

void Evictor::RunOnce() {
  MutexLock pass(&pass_mu_);
  const int64_t now = options_.clock();
  {
    const std::shared_ptr<const Snapshot> snapshot = catalog_.Pin();
    for (const std::shared_ptr<const LiveBatch>& batch : snapshot->batches()) {
      if (resolver_.IsEvicted(batch->id()) || !uploader_.IsUploaded(batch->id())) continue;
      if (now - batch->id().stamp_micros() < options_.evict_after.count()) continue;
      if (absl::Status evicted = Evict(*batch); !evicted.ok()) {
        Failed(absl::Status(evicted.code(), fmt::format("evict {}: {}", batch->dir(),
                                                        std::string(evicted.message()))));
        continue;
      }
      pending_.push_back(Pending{.old = batch, .dir = batch->dir()});
    }
  }
  // The snapshot above is released: a record only it held is gone now.
  std::vector<Pending> waiting;
  for (Pending& p : pending_) {
    if (!p.old.expired()) {
      waiting.push_back(std::move(p));
      continue;
    }
    absl::StatusOr<uint64_t> removed = RemoveEvictedFiles(fs_, p.dir);
    // A directory retention deleted meanwhile has nothing left to remove.
    if (absl::IsNotFound(removed.status())) continue;
    if (!removed.ok()) {
      Failed(removed.status());
      waiting.push_back(std::move(p));
      continue;
    }
    MutexLock lock(&mu_);
    ++stats_.batches_evicted;
    stats_.bytes_evicted += *removed;
  }
  pending_ = std::move(waiting);
}

void Evictor::Run() {
  for (;;) {
    RunOnce();
    MutexLock lock(&mu_);
    const auto deadline = std::chrono::steady_clock::now() + options_.poll_interval;
    while (!stopping_) {
      if (!wake_cv_.WaitUntil(&mu_, deadline)) break;
    }
    if (stopping_) return;
  }
}

}  // namespace strata::storage
