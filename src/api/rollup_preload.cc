// Reading the live batches' rollups at start (rollup_preload.h).

#include "api/rollup_preload.h"

#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <memory>
#include <utility>

#include "spdlog/spdlog.h"

namespace strata::api {

RollupPreload::RollupPreload(RollupPreloadOptions options,
                             std::function<storage::Storage*()> storage, FileSystem* fs,
                             RollupCache* cache)
    : options_(options) {
  if (!storage || fs == nullptr || cache == nullptr || options_.horizon.count() <= 0) {
    MutexLock lock(&mu_);
    stats_.done = true;
    return;
  }
  thread_ =
      std::thread([this, storage = std::move(storage), fs, cache] { Run(storage, fs, cache); });
}

RollupPreload::~RollupPreload() {
  {
    MutexLock lock(&mu_);
    stopping_ = true;
    cv_.SignalAll();
  }
  if (thread_.joinable()) thread_.join();
}

RollupPreloadStats RollupPreload::Stats() const {
  MutexLock lock(&mu_);
  return stats_;
}

bool RollupPreload::WaitUntilDone(std::chrono::nanoseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  MutexLock lock(&mu_);
  while (!stats_.done && cv_.WaitUntil(&mu_, deadline)) {
  }
  return stats_.done;
}

bool RollupPreload::Stopping() const {
  MutexLock lock(&mu_);
  return stopping_;
}

void RollupPreload::Run(std::function<storage::Storage*()> storage, FileSystem* fs,
                        RollupCache* cache) {
  if (options_.nice != 0) {
    // Per-thread on Linux: the nice value of this thread only.
    (void)setpriority(PRIO_PROCESS, static_cast<id_t>(syscall(SYS_gettid)), options_.nice);
  }
  const auto started = std::chrono::steady_clock::now();
  storage::Storage* engine = nullptr;
  for (;;) {
    {
      MutexLock lock(&mu_);
      if (stopping_) break;
    }
    engine = storage();
    if (engine != nullptr) break;
    MutexLock lock(&mu_);
    if (!stopping_) cv_.WaitFor(&mu_, options_.poll);
  }
  size_t read = 0;
  size_t unreadable = 0;
  if (engine != nullptr) {
    // Counted back from the clock, not from the newest event: a batch from
    // a client whose clock runs ahead must not hide the recent ones, and
    // the UI's windows end now.
    const int64_t now = options_.now ? options_.now() : SystemNowUnixNano();
    const int64_t horizon = options_.horizon.count();
    const uint64_t from = now > horizon ? static_cast<uint64_t>(now - horizon) : 0;
    const std::shared_ptr<const storage::Snapshot> snapshot = engine->Pin();
    read = cache->Preload(
        *fs, *snapshot, from, [this] { return Stopping(); }, &unreadable);
  }
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  if (engine != nullptr) {
    spdlog::info("rollups: read {} batches' rollups at start in {:.1f} s ({} unreadable)", read,
                 seconds, unreadable);
  }
  MutexLock lock(&mu_);
  stats_.done = true;
  stats_.batches_read = read;
  stats_.unreadable = unreadable;
  stats_.seconds = seconds;
  cv_.SignalAll();
}

}  // namespace strata::api
