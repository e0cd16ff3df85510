#pragma once

// LogFeed: the batches with log records that the storage engine publishes,
// in publish order, for live tails (GET /api/v1/logs/tail, docs/api.md).
//
// The commit step appends a batch right after the Publish() that makes it
// visible (and so before any request in it is acknowledged), under a lock
// that also covers that Publish(), so the feed's order is the publish
// order. An append is O(1): a reference to the LiveBatch (which keeps the
// batch's files on disk while the feed holds it, even if compaction
// retires the batch) and its row count. Nothing is appended, and the
// commit step takes no lock, unless someone is reading the feed or did so
// within `keep_for`: with no tail the ingest path pays one atomic load.
//
// Each appended batch gets the next sequence number (1, 2, ...; numbers
// are never reused within a process). The feed keeps the newest
// `capacity` batches, and none older than `keep_for` (dropped at the next
// Append() or Prune(); the live tail prunes at least every heartbeat, so
// an idle feed does not hold retired batches' files); readers ask for what
// follows a sequence number and learn when part of it was dropped.
//
// Thread-safety: safe for concurrent use. The listener runs on the
// appending thread, outside the feed's lock; it must be quick and must not
// block (signal a condition variable). Errors: none.

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <optional>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "common/mutex.h"
#include "storage/commit/catalog.h"
#include "storage/format/batch_id.h"

namespace strata::storage {

struct LogFeedOptions {
  // Batches kept for readers that fall behind or resume.
  size_t capacity = 1024;
  // How long a batch is kept, and how long the feed keeps recording after
  // its last subscriber left (so a tail that reconnects can resume).
  std::chrono::nanoseconds keep_for = std::chrono::minutes(5);
};

struct FedLogBatch {
  uint64_t sequence = 0;
  // Keeps the batch's directory (and its logs.parquet) on disk.
  std::shared_ptr<const LiveBatch> batch;
  uint64_t rows = 0;  // log records in logs.parquet
  std::chrono::steady_clock::time_point published;
};

class LogFeed {
 public:
  using Clock = std::chrono::steady_clock;

  explicit LogFeed(LogFeedOptions options = {});
  LogFeed(const LogFeed&) = delete;
  LogFeed& operator=(const LogFeed&) = delete;

  // ---- the commit step ----

  // Whether Append() would keep anything: a subscriber is registered, or
  // the last one left less than keep_for ago.
  bool recording() const;
  // Appends the batch `id` of `snapshot` (just published) with `rows` log
  // records. Ignored when the snapshot does not name it.
  void Append(const Snapshot& snapshot, const BatchId& id, uint64_t rows) ABSL_LOCKS_EXCLUDED(mu_);

  // ---- readers ----

  // A registered reader: recording() is true while one exists. Destroying
  // it unregisters.
  class Subscription {
   public:
    explicit Subscription(LogFeed* feed) : feed_(feed) {}
    ~Subscription();
    Subscription(const Subscription&) = delete;
    Subscription& operator=(const Subscription&) = delete;

   private:
    LogFeed* const feed_;
  };
  std::unique_ptr<Subscription> Subscribe();

  // The sequence number of the newest batch appended (0 before any).
  uint64_t last_sequence() const ABSL_LOCKS_EXCLUDED(mu_);
  // Up to `max` kept batches with sequence numbers above `after`, oldest
  // first. `*first_kept` (when not null) is set to the oldest sequence
  // number still kept (last_sequence() + 1 when none is), so a reader
  // knows which batches after `after` were dropped.
  std::vector<FedLogBatch> After(uint64_t after, size_t max, uint64_t* first_kept = nullptr) const
      ABSL_LOCKS_EXCLUDED(mu_);
  // The sequence number of the kept batch `id`, or nullopt.
  std::optional<uint64_t> SequenceOf(const BatchId& id) const ABSL_LOCKS_EXCLUDED(mu_);
  // Drops the batches older than keep_for.
  void Prune() ABSL_LOCKS_EXCLUDED(mu_);
  // Runs after every Append() that kept a batch; replaces any earlier
  // listener (null removes it).
  void SetListener(std::function<void()> listener) ABSL_LOCKS_EXCLUDED(mu_);

 private:
  void DropExpired(Clock::time_point now) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  // Constant after construction.
  const LogFeedOptions options_;

  // Read on the ingest path without the lock: only whether to record
  // depends on them, and a stale answer at the moment a reader arrives or
  // leaves is harmless (a new reader starts at the newest batch).
  std::atomic<int64_t> subscribers_{0};
  // Clock::time_point of the last unsubscribe, as nanoseconds since the
  // clock's epoch; 0 before any.
  std::atomic<int64_t> last_unsubscribe_ns_{0};

  mutable Mutex mu_;
  std::deque<FedLogBatch> batches_ ABSL_GUARDED_BY(mu_);
  uint64_t last_sequence_ ABSL_GUARDED_BY(mu_) = 0;
  std::shared_ptr<const std::function<void()>> listener_ ABSL_GUARDED_BY(mu_);
};

}  // namespace strata::storage
