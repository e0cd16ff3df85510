#pragma once

// Evictor: removes the local Parquet files of uploaded batches older than
// --evict-after (docs/operations.md, "Evicting local copies"), so the disk
// holds recent data and the object store the rest.
//
// One thread looks at the catalog every `poll_interval`. A live batch is
// evicted when the uploader saw it uploaded and its id's stamp is older
// than `evict_after`:
//   1. the EVICTED marker is written durably (format/evicted_marker.h);
//   2. the resolver counts the batch evicted (readers asking from now on
//      get the cached copy);
//   3. Catalog::Replace names the batch by a new record of the same id, so
//      readers that pinned the old record keep it;
//   4. once no reader holds the old record, its Parquet files are removed
//      and the directory synced.
// Compaction leaves evicted batches alone (their inputs would need the
// store), and retention deletes their directories as any other (the
// uploader deletes their objects). At start, batches boot found marked are
// counted evicted and any Parquet file a crash left in them is removed.
//
// Invariants:
//   1. The marker is durable before the first file of its batch is removed.
//   2. A file is removed only once no LiveBatch record that a reader may
//      have resolved to a local path is alive.
//
// Thread-safety: public methods are safe for concurrent use. Errors:
// counted and reported through on_error, retried at the next poll.

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "common/mutex.h"
#include "io/file_system.h"
#include "storage/commit/catalog.h"
#include "storage/offload/data_file_resolver.h"
#include "storage/offload/uploader.h"

namespace strata::storage {

struct EvictorOptions {
  std::chrono::microseconds evict_after{std::chrono::hours(1)};
  std::chrono::milliseconds poll_interval{1000};
  MicrosClock clock = SystemClockMicros;
  std::function<void(const absl::Status&)> on_error;
};

struct EvictionStats {
  uint64_t batches_evicted = 0;  // whose Parquet files this process removed
  uint64_t bytes_evicted = 0;
  uint64_t batches_marked = 0;  // live batches counted evicted now (boot's included)
  uint64_t failures = 0;
};

class Evictor {
 public:
  // Adopts the batches boot found marked and starts the thread. Every
  // reference must outlive the Evictor.
  static std::unique_ptr<Evictor> Start(FileSystem& fs, Catalog& catalog, const Uploader& uploader,
                                        DataFileResolver& resolver, EvictorOptions options);
  ~Evictor();
  Evictor(const Evictor&) = delete;
  Evictor& operator=(const Evictor&) = delete;

  EvictionStats Stats() const ABSL_LOCKS_EXCLUDED(mu_);
  // One pass now (tests); the thread runs them too.
  void RunOnce() ABSL_LOCKS_EXCLUDED(mu_);
  void Stop() ABSL_LOCKS_EXCLUDED(mu_);

 private:
  // A replaced record whose files go once nobody holds it.
  struct Pending {
    std::weak_ptr<const LiveBatch> old;
    std::string dir;
  };

  Evictor(FileSystem& fs, Catalog& catalog, const Uploader& uploader, DataFileResolver& resolver,
          EvictorOptions options)
      : fs_(fs), catalog_(catalog), uploader_(uploader), resolver_(resolver), options_(options) {}
  void Adopt();
  void Run() ABSL_LOCKS_EXCLUDED(mu_);
  absl::Status Evict(const LiveBatch& batch) ABSL_LOCKS_EXCLUDED(mu_);
  void Failed(const absl::Status& status) ABSL_LOCKS_EXCLUDED(mu_);

  FileSystem& fs_;
  Catalog& catalog_;
  const Uploader& uploader_;
  DataFileResolver& resolver_;
  const EvictorOptions options_;

  // Serialises passes (the thread's and RunOnce()'s).
  Mutex pass_mu_ ABSL_ACQUIRED_BEFORE(mu_);
  std::vector<Pending> pending_ ABSL_GUARDED_BY(pass_mu_);

  mutable Mutex mu_;
  CondVar wake_cv_;
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  EvictionStats stats_ ABSL_GUARDED_BY(mu_);
  std::thread thread_;
};

}  // namespace strata::storage
