#pragma once

// GroupCommitWriter: the ingest path's group commit. Concurrent requests are
// admitted against an in-flight byte budget, grouped by a short admission
// window into batches under row, byte and request caps, and handed to an
// injected commit step (CommitFn: encode the tables, write the batch
// directory durably, publish the snapshot). Each request is acknowledged only
// after the commit step returned OK for a group holding it, that is, after
// its rows are durably published (docs/architecture.md, "Durability").
//
// The writer does no I/O itself and holds no lock while the commit step runs
// (docs/architecture.md: no lock is held across I/O on the ingest path). The commit step
// is called from up to `workers` threads at once, so it must be safe for
// concurrent use; each call gets a group no other call shares.
//
// Guarantees:
//  1. Every Submit()ted request's `done` runs exactly once: inline for an
//     immediate refusal, else on a writer thread (or on the thread calling
//     Shutdown(), for requests failed at its deadline).
//  2. OK means the commit step returned OK for a group holding the request.
//  3. A request is never split across groups; one larger than a batch cap is
//     committed alone.
//  4. Groups are formed in admission order (FIFO), and no request is in two
//     commit calls at once.
//  5. Memory is bounded: admitted bytes never exceed `inflight_bytes_limit`,
//     except that a single request larger than the whole budget is admitted
//     when nothing else is in flight (so the bound is max(limit, largest
//     request), and the server's request-size limit bounds the latter).
//
// Errors given to `done` (codes an OTLP exporter understands, docs/architecture.md,
// Contracts: failure):
//  - ResourceExhausted, inline, when the request would exceed the in-flight
//    byte or request budget (HTTP 429 with Retry-After). Never a wait.
//  - Unavailable, inline, after Shutdown() began; on a writer thread when the
//    commit failed with a storage fault (transient after the retries ran out,
//    or permanent), and for requests still unanswered at the shutdown
//    deadline. The message says the request may be retried and why.
//  - InvalidArgument when the commit step rejected this request itself as
//    invalid (a poison request, isolated as described below).
//
// Transient commit errors (by default Unavailable, DeadlineExceeded and
// ResourceExhausted) are retried up to `max_commit_retries` times with
// exponential backoff. A permanent error on a group of several requests is
// taken to mean one of them is poison: the group is bisected and each half
// committed on its own, down to single requests, so only the poison request
// fails and the writer keeps serving.
//
// Thread-safety: safe for concurrent use. `done` callbacks and the commit
// step must not call Shutdown() or Write() (a writer thread would wait on
// itself); they may call Submit() and GetStats().

#include <array>
#include <chrono>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <span>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/functional/any_invocable.h"
#include "absl/status/status.h"
#include "common/mutex.h"
#include "storage/commit/write_request.h"

namespace strata::storage {

// A fixed-bucket latency histogram in Prometheus' shape (cumulative buckets
// are derived by the exporter; counts here are per bucket).
struct LatencyHistogram {
  // Upper bounds in seconds of every bucket but the last, which is +Inf.
  static constexpr std::array<double, 12> kBucketBoundsSeconds = {
      0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 10.0};
  std::array<uint64_t, kBucketBoundsSeconds.size() + 1> bucket_counts{};
  uint64_t count = 0;
  double sum_seconds = 0;

  void Observe(std::chrono::nanoseconds latency);
};

struct GroupCommitWriterStats {
  uint64_t inflight_bytes = 0;       // admitted, not yet released
  uint64_t inflight_requests = 0;    // admitted, not yet answered and released
  uint64_t queued_requests = 0;      // admitted, not yet picked into a group
  uint64_t committing_requests = 0;  // in a group being gathered or committed

  uint64_t commit_calls = 0;       // every call of the commit step
  uint64_t batches_committed = 0;  // calls that returned OK
  uint64_t commit_retries = 0;     // calls repeated after a transient error
  uint64_t group_splits = 0;       // bisections after a permanent error

  // Requests by outcome; every submitted request lands in exactly one.
  uint64_t requests_ok = 0;
  uint64_t requests_rejected_over_budget = 0;  // ResourceExhausted, inline
  uint64_t requests_rejected_shutdown = 0;     // Unavailable, inline
  uint64_t requests_failed_unavailable = 0;    // storage fault or drain deadline
  uint64_t requests_failed_invalid = 0;        // poison: InvalidArgument

  LatencyHistogram commit_latency;   // one observation per commit call
  LatencyHistogram request_latency;  // admission to answer, per request
};

// The error a commit step returns when its batch is durable and published
// but the requests must not be acknowledged yet (offload's
// --ack-after-upload ran out of time): the writer answers the group with
// it as Unavailable and never retries or splits it, since committing the
// rows again would store them twice.
absl::Status CommittedButNotAcknowledged(std::string_view message);
bool IsCommittedButNotAcknowledged(const absl::Status& status);

class GroupCommitWriter {
 public:
  // Commits one group: all its rows are durably published when it returns
  // OK, none of them visible if it fails. Errors classify as transient or
  // permanent (Options::is_transient); InvalidArgument means the input
  // itself is bad. A failed group comes back again (a retry) or in parts
  // (poison isolation), so the step may move rows out of the requests only
  // when it returns OK. Called from several workers at once.
  using CommitFn = std::function<absl::Status(std::span<WriteRequest* const> group)>;
  using Callback = absl::AnyInvocable<void(absl::Status)>;

  struct Options {
    // Commit threads; 0 means min(4, hardware_concurrency), at least 1.
    int workers = 0;
    // How long a group stays open for more requests after its first one was
    // admitted. A group is committed at once when a cap is reached, when the
    // next queued request does not fit, or when shutdown began.
    std::chrono::nanoseconds admission_window = std::chrono::milliseconds(2);
    // Per-group caps. A request that alone exceeds one is its own group.
    uint64_t max_rows_per_batch = 1'000'000;
    uint64_t max_bytes_per_batch = 64ull << 20;
    uint64_t max_requests_per_batch = 4096;
    // With several workers, a group stops taking queued requests once it
    // holds its fair share of the admitted bytes, inflight_bytes / workers,
    // or this floor if larger; the next free worker takes the rest. Without
    // it, clients that resubmit on each acknowledgement fall into cohorts
    // that keep their sizes (one worker committing 200 requests at a time
    // while the other commits 50 again and again), and the small cohort's
    // batches cost more CPU and bytes per row. The floor keeps light load
    // from being cut into tiny groups.
    uint64_t fair_share_floor_bytes = 16ull << 20;
    // Global admission budget over every admitted, unanswered request.
    uint64_t inflight_bytes_limit = 256ull << 20;
    uint64_t inflight_requests_limit = 16384;
    // Retries of a transient commit error: waits initial, 2*initial, ...
    // capped at max, between attempts.
    int max_commit_retries = 3;
    std::chrono::nanoseconds initial_backoff = std::chrono::milliseconds(10);
    std::chrono::nanoseconds max_backoff = std::chrono::seconds(1);
    // Used by the destructor when Shutdown() was not called.
    std::chrono::nanoseconds drain_timeout = std::chrono::seconds(10);

    // The hooks below are called from several writer threads at once.
    //
    // Which commit errors are retried. Null: Unavailable, DeadlineExceeded,
    // ResourceExhausted.
    std::function<bool(const absl::Status&)> is_transient;
    // Waits out one backoff. Null: a wait that the shutdown deadline cuts
    // short. Tests inject one that records the duration and returns.
    std::function<void(std::chrono::nanoseconds)> backoff_sleep;
    // Measures commit and request latency. Null: steady_clock::now.
    std::function<std::chrono::steady_clock::time_point()> now;
  };

  // Starts the workers. `commit` must be non-null.
  GroupCommitWriter(Options options, CommitFn commit);
  // Shutdown(options.drain_timeout) unless Shutdown() already ran.
  ~GroupCommitWriter();

  GroupCommitWriter(const GroupCommitWriter&) = delete;
  GroupCommitWriter& operator=(const GroupCommitWriter&) = delete;

  // Admits `request` or refuses it at once (see Errors above). Never blocks
  // on a commit. `done` (non-null) runs exactly once; it should be quick, as
  // it runs on a writer thread that commits the next group after it.
  void Submit(WriteRequest request, Callback done);

  // Submit() and wait for the answer. The wait ends because every admitted
  // request is answered: after its commit and at most max_commit_retries
  // backoffs, or at the shutdown deadline.
  [[nodiscard]] absl::Status Write(WriteRequest request);

  // Stops admitting (Submit answers Unavailable from now on), commits what was
  // admitted until `drain_timeout` has passed, then answers every request
  // still unanswered with Unavailable, including those whose commit call is
  // still running (its result is then ignored: at-least-once delivery), and
  // joins the workers. Returns when the workers have returned from the
  // commit step. Later calls return at once.
  void Shutdown(std::chrono::nanoseconds drain_timeout);

  [[nodiscard]] GroupCommitWriterStats GetStats() const;

  int worker_count() const { return static_cast<int>(workers_.size()); }

 private:
  struct Pending;
  struct CommitOutcome;
  using Clock = std::chrono::steady_clock;

  void WorkerLoop(int worker_index);
  // Waits to become the collector and gathers the next group into *group.
  // False when the worker should exit.
  bool CollectGroup(int worker_index, std::vector<std::unique_ptr<Pending>>* group);
  bool GroupIsFull(uint64_t rows, uint64_t bytes, size_t requests) const;
  bool FitsInGroup(const Pending& next, uint64_t rows, uint64_t bytes, size_t requests) const;
  // Whether a group of `requests` holding `bytes` has its fair share
  // (Options::fair_share_floor_bytes).
  bool HasFairShare(uint64_t bytes, size_t requests) const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Commits `group`, bisecting on permanent errors, and answers every request.
  void CommitAndAnswer(std::span<Pending* const> group);
  // The commit step with retries of transient errors.
  CommitOutcome CommitWithRetries(std::span<Pending* const> group);
  absl::Status CallCommit(std::span<Pending* const> group);
  // Sleeps before a retry; false if the shutdown deadline passed.
  bool Backoff(std::chrono::nanoseconds delay);
  // Releases the requests' budget and answers those not yet answered.
  void Answer(std::span<Pending* const> group, const absl::Status& status);
  void CountOutcome(const absl::Status& status) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  bool IsTransient(const absl::Status& status) const;
  Clock::time_point Now() const;
  // Answers everything still unanswered with Unavailable (shutdown deadline).
  void AbandonLeftovers();

  // Constant after construction.
  const Options options_;
  const CommitFn commit_;
  std::vector<std::thread> workers_;

  // Serializes Shutdown() calls.
  Mutex shutdown_mu_;
  bool joined_ ABSL_GUARDED_BY(shutdown_mu_) = false;

  mutable Mutex mu_;
  // Idle workers wait here to become the collector.
  CondVar work_cv_;
  // The collector waits here for more requests during its window.
  CondVar collector_cv_;
  // Shutdown() waits here for the queue and the commits to drain.
  CondVar drained_cv_;
  // Default backoff sleeps wait here, so shutdown can cut them short.
  CondVar backoff_cv_;

  std::deque<std::unique_ptr<Pending>> queue_ ABSL_GUARDED_BY(mu_);
  // Per worker: the requests of the group it is committing, so Shutdown()
  // can answer them at its deadline. The Pending objects are owned by the
  // worker and outlive their entry here.
  std::vector<std::vector<Pending*>> committing_ ABSL_GUARDED_BY(mu_);
  bool collector_active_ ABSL_GUARDED_BY(mu_) = false;
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  // Set at the shutdown deadline: stop committing, retrying and splitting.
  bool abandoned_ ABSL_GUARDED_BY(mu_) = false;
  GroupCommitWriterStats stats_ ABSL_GUARDED_BY(mu_);
};

}  // namespace strata::storage
