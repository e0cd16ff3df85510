#pragma once

// RollupPreload reads the live batches' rollups into a RollupCache
// (service_health.h) on its own thread when the server starts, so that the
// first services, RED or service-map answer finds them in memory instead of
// reading every batch's rollups.parquet itself (docs/api.md, "Services and
// RED"). The thread runs at a raised nice value, so ingest and queries get
// the CPU first; a request that needs a batch the thread has not reached
// reads it itself, and one that needs the batch being read waits for that
// read (RollupCache::ForWindow): no file is read twice.
//
// It reads each batch once, newest first, over the batches with an event
// within `horizon` before now (the server's clock, not the newest event:
// a client whose clock runs ahead does not make it skip the recent
// batches; batches with events after now count as recent and come first),
// then ends; older batches are read by the first answer that needs them,
// as before. Owner: the Api; the thread is started in the constructor and
// joined in the destructor. Thread-safety: safe for concurrent use.
// Errors: a batch whose rollups cannot be read is counted and left to the
// first answer that needs it (which reports it).

#include <chrono>
#include <cstdint>
#include <functional>
#include <thread>

#include "absl/base/thread_annotations.h"
#include "api/params.h"
#include "api/service_health.h"
#include "common/mutex.h"
#include "io/file_system.h"
#include "storage/storage.h"

namespace strata::api {

struct RollupPreloadOptions {
  // Batches with an event this long before now, or later, are read; 0
  // turns the preload off (the thread ends at once). The default, 7 days,
  // is the widest preset window of the web UI's time picker ("Last 7d",
  // ui/src/components/time_picker.tsx), which the services page asks for
  // as a window ending now.
  std::chrono::nanoseconds horizon = std::chrono::hours(7 * 24);
  // The thread's nice value (Linux: per thread); 0 leaves it unchanged.
  int nice = 10;
  // How often to look again while storage is still recovering.
  std::chrono::milliseconds poll{100};
  // The clock the horizon counts back from (Unix nanoseconds); empty: the
  // Api's (ApiOptions::now), else the system's.
  NowFunction now;
};

struct RollupPreloadStats {
  bool done = false;
  size_t batches_read = 0;
  size_t unreadable = 0;
  double seconds = 0;
};

class RollupPreload {
 public:
  // `storage` returns null while the server recovers; `cache` and `fs`
  // must outlive this object. Starts the thread (unless `fs` is null or
  // `storage` empty, when it is done at once).
  RollupPreload(RollupPreloadOptions options, std::function<storage::Storage*()> storage,
                FileSystem* fs, RollupCache* cache);
  // Stops the thread between batches and joins it.
  ~RollupPreload();
  RollupPreload(const RollupPreload&) = delete;
  RollupPreload& operator=(const RollupPreload&) = delete;

  RollupPreloadStats Stats() const ABSL_LOCKS_EXCLUDED(mu_);
  // Waits until the preload is done or `timeout` passes; returns done.
  bool WaitUntilDone(std::chrono::nanoseconds timeout) ABSL_LOCKS_EXCLUDED(mu_);

 private:
  void Run(std::function<storage::Storage*()> storage, FileSystem* fs, RollupCache* cache)
      ABSL_LOCKS_EXCLUDED(mu_);
  bool Stopping() const ABSL_LOCKS_EXCLUDED(mu_);

  // Constant after construction.
  const RollupPreloadOptions options_;

  mutable Mutex mu_;
  // Signalled when stopping_ is set and when the preload is done.
  CondVar cv_;
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  RollupPreloadStats stats_ ABSL_GUARDED_BY(mu_);
  std::thread thread_;
};

}  // namespace strata::api
