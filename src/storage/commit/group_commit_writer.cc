#include "storage/commit/group_commit_writer.h"

#include <algorithm>
#include <string>
#include <utility>

#include "absl/strings/cord.h"
#include "common/check.h"
#include "fmt/format.h"

namespace strata::storage {

namespace {

// Clamp for "wait forever" timeouts, so deadline arithmetic cannot overflow.
constexpr std::chrono::nanoseconds kLongestTimeout = std::chrono::hours(24 * 365 * 100);

int DefaultWorkerCount() {
  const unsigned cores = std::thread::hardware_concurrency();
  return static_cast<int>(std::clamp(cores, 1u, 4u));
}

constexpr char kCommittedPayload[] = "strata.dev/committed-not-acknowledged";

bool DefaultIsTransient(const absl::Status& status) {
  return absl::IsUnavailable(status) || absl::IsDeadlineExceeded(status) ||
         absl::IsResourceExhausted(status);
}

absl::Status ShutdownRefusal() {
  return absl::UnavailableError(
      "strata is shutting down and accepts no new writes; the request was not stored, retry "
      "against a running server");
}

absl::Status OverBudgetRefusal(uint64_t request_bytes, uint64_t inflight_bytes,
                               uint64_t inflight_requests, uint64_t bytes_limit,
                               uint64_t requests_limit) {
  return absl::ResourceExhaustedError(fmt::format(
      "ingest is over its in-flight budget ({} bytes in {} requests admitted, limits {} bytes "
      "and {} requests; this request is {} bytes); the request was not stored, retry later",
      inflight_bytes, inflight_requests, bytes_limit, requests_limit, request_bytes));
}

}  // namespace

void LatencyHistogram::Observe(std::chrono::nanoseconds latency) {
  const double seconds = std::max(0.0, std::chrono::duration<double>(latency).count());
  size_t bucket = 0;
  while (bucket < kBucketBoundsSeconds.size() && seconds > kBucketBoundsSeconds[bucket]) {
    ++bucket;
  }
  ++bucket_counts[bucket];
  ++count;
  sum_seconds += seconds;
}

// One admitted request. `request`, `bytes`, `rows` and `admitted*` belong to
// whoever holds the Pending (the queue under mu_, then one worker). `done`
// and `answered` are read and written only under mu_, because Shutdown()
// may answer a request while its worker is still committing it.
struct GroupCommitWriter::Pending {
  WriteRequest request;
  // Copies of request.bytes and .rows: the commit step may move out of the
  // request, and the budget must be released by what was charged.
  uint64_t bytes = 0;
  uint64_t rows = 0;
  Callback done;
  bool answered = false;
  Clock::time_point admitted;            // real time, for the admission window
  Clock::time_point admitted_for_stats;  // Options::now, for request latency
};

// How a group's commit, with its retries, ended: OK; Unavailable for the
// client (transient errors outlasted the retries, or the shutdown deadline
// stopped them); or the commit step's own permanent error.
struct GroupCommitWriter::CommitOutcome {
  absl::Status status;
  bool permanent = false;
};

absl::Status CommittedButNotAcknowledged(std::string_view message) {
  absl::Status status = absl::UnavailableError(std::string(message));
  status.SetPayload(kCommittedPayload, absl::Cord("1"));
  return status;
}

bool IsCommittedButNotAcknowledged(const absl::Status& status) {
  return status.GetPayload(kCommittedPayload).has_value();
}

GroupCommitWriter::GroupCommitWriter(Options options, CommitFn commit)
    : options_(std::move(options)), commit_(std::move(commit)) {
  STRATA_CHECK(commit_ != nullptr, "GroupCommitWriter needs a commit step");
  const int worker_count = options_.workers > 0 ? options_.workers : DefaultWorkerCount();
  {
    MutexLock lock(&mu_);
    committing_.resize(static_cast<size_t>(worker_count));
  }
  workers_.reserve(static_cast<size_t>(worker_count));
  for (int i = 0; i < worker_count; ++i) {
    workers_.emplace_back([this, i] { WorkerLoop(i); });
  }
}

GroupCommitWriter::~GroupCommitWriter() { Shutdown(options_.drain_timeout); }

GroupCommitWriter::Clock::time_point GroupCommitWriter::Now() const {
  return options_.now ? options_.now() : Clock::now();
}

bool GroupCommitWriter::IsTransient(const absl::Status& status) const {
  return options_.is_transient ? options_.is_transient(status) : DefaultIsTransient(status);
}

void GroupCommitWriter::Submit(WriteRequest request, Callback done) {
  STRATA_CHECK(done != nullptr, "GroupCommitWriter::Submit needs a callback");
  auto pending = std::make_unique<Pending>();
  pending->bytes = request.bytes;
  pending->rows = request.rows;
  pending->request = std::move(request);
  pending->admitted = Clock::now();
  pending->admitted_for_stats = Now();
  absl::Status refusal;
  {
    MutexLock lock(&mu_);
    const uint64_t inflight = stats_.inflight_bytes;
    const bool over_bytes =
        inflight > 0 && (inflight >= options_.inflight_bytes_limit ||
                         pending->bytes > options_.inflight_bytes_limit - inflight);
    if (stopping_) {
      refusal = ShutdownRefusal();
      ++stats_.requests_rejected_shutdown;
    } else if (over_bytes || stats_.inflight_requests >= options_.inflight_requests_limit) {
      refusal = OverBudgetRefusal(pending->bytes, inflight, stats_.inflight_requests,
                                  options_.inflight_bytes_limit, options_.inflight_requests_limit);
      ++stats_.requests_rejected_over_budget;
    } else {
      stats_.inflight_bytes += pending->bytes;
      ++stats_.inflight_requests;
      pending->done = std::move(done);
      queue_.push_back(std::move(pending));
      if (collector_active_) {
        collector_cv_.Signal();
      } else {
        work_cv_.Signal();
      }
      return;
    }
  }
  pending.reset();  // free the refused rows before answering
  done(std::move(refusal));
}

absl::Status GroupCommitWriter::Write(WriteRequest request) {
  struct Answer {
    Mutex mu;
    CondVar cv;
    bool answered ABSL_GUARDED_BY(mu) = false;
    absl::Status status ABSL_GUARDED_BY(mu);
  };
  // Shared, so the callback may finish touching it after Write() returned.
  auto answer = std::make_shared<Answer>();
  Submit(std::move(request), [answer](absl::Status status) {
    MutexLock lock(&answer->mu);
    answer->status = std::move(status);
    answer->answered = true;
    answer->cv.SignalAll();
  });
  MutexLock lock(&answer->mu);
  // Ended by the writer: every admitted request is answered (class comment).
  while (!answer->answered) answer->cv.Wait(&answer->mu);
  return answer->status;
}

void GroupCommitWriter::WorkerLoop(int worker_index) {
  while (true) {
    std::vector<std::unique_ptr<Pending>> group;
    if (!CollectGroup(worker_index, &group)) return;
    std::vector<Pending*> members;
    members.reserve(group.size());
    for (const auto& pending : group) members.push_back(pending.get());
    CommitAndAnswer(members);
    {
      MutexLock lock(&mu_);
      committing_[static_cast<size_t>(worker_index)].clear();
      if (stopping_) drained_cv_.SignalAll();
    }
  }
}

bool GroupCommitWriter::GroupIsFull(uint64_t rows, uint64_t bytes, size_t requests) const {
  return rows >= options_.max_rows_per_batch || bytes >= options_.max_bytes_per_batch ||
         requests >= options_.max_requests_per_batch;
}

bool GroupCommitWriter::FitsInGroup(const Pending& next, uint64_t rows, uint64_t bytes,
                                    size_t requests) const {
  if (requests == 0) return true;  // a request alone always fits: never split
  return requests < options_.max_requests_per_batch &&
         next.rows <= options_.max_rows_per_batch - std::min(rows, options_.max_rows_per_batch) &&
         next.bytes <= options_.max_bytes_per_batch - std::min(bytes, options_.max_bytes_per_batch);
}

bool GroupCommitWriter::HasFairShare(uint64_t bytes, size_t requests) const {
  const size_t workers = committing_.size();  // one entry per worker
  if (requests == 0 || workers < 2) return false;
  const uint64_t share = stats_.inflight_bytes / workers;
  return bytes >= std::max(share, options_.fair_share_floor_bytes);
}

bool GroupCommitWriter::CollectGroup(int worker_index,
                                     std::vector<std::unique_ptr<Pending>>* group) {
  MutexLock lock(&mu_);
  // One collector at a time, so concurrent requests gather in one group
  // instead of each idle worker starting its own.
  while (true) {
    if (abandoned_ || (stopping_ && queue_.empty())) return false;
    if (!collector_active_ && !queue_.empty()) break;
    work_cv_.Wait(&mu_);  // ended by Submit(), a leaving collector, or Shutdown()
  }
  collector_active_ = true;
  std::vector<Pending*>& registered = committing_[static_cast<size_t>(worker_index)];
  uint64_t rows = 0;
  uint64_t bytes = 0;
  // The window runs from the oldest request's admission: a request that
  // already waited for a free worker is not held back again.
  const Clock::time_point window_end =
      queue_.front()->admitted + std::min(options_.admission_window, kLongestTimeout);
  while (true) {
    while (!queue_.empty() && FitsInGroup(*queue_.front(), rows, bytes, group->size()) &&
           !HasFairShare(bytes, group->size())) {
      rows += queue_.front()->rows;
      bytes += queue_.front()->bytes;
      registered.push_back(queue_.front().get());
      group->push_back(std::move(queue_.front()));
      queue_.pop_front();
    }
    // A queued request that does not fit means the group is as full as it
    // gets; so does a cap, or a shutdown that wants the queue drained.
    if (!queue_.empty() || GroupIsFull(rows, bytes, group->size()) ||
        HasFairShare(bytes, group->size()) || stopping_) {
      break;
    }
    if (Clock::now() >= window_end) break;
    collector_cv_.WaitUntil(&mu_, window_end);
  }
  collector_active_ = false;
  if (stopping_) {
    work_cv_.SignalAll();  // idle workers re-check whether to exit
  } else if (!queue_.empty()) {
    work_cv_.Signal();  // hand the collector role on
  }
  return true;
}

absl::Status GroupCommitWriter::CallCommit(std::span<Pending* const> group) {
  std::vector<WriteRequest*> requests;
  requests.reserve(group.size());
  for (Pending* pending : group) requests.push_back(&pending->request);
  const Clock::time_point start = Now();
  absl::Status status = commit_(std::span<WriteRequest* const>(requests));
  const Clock::duration elapsed = Now() - start;
  MutexLock lock(&mu_);
  ++stats_.commit_calls;
  if (status.ok()) ++stats_.batches_committed;
  stats_.commit_latency.Observe(elapsed);
  return status;
}

bool GroupCommitWriter::Backoff(std::chrono::nanoseconds delay) {
  if (options_.backoff_sleep) {
    options_.backoff_sleep(delay);
    MutexLock lock(&mu_);
    return !abandoned_;
  }
  const Clock::time_point until = Clock::now() + std::min(delay, kLongestTimeout);
  MutexLock lock(&mu_);
  while (!abandoned_) {
    if (Clock::now() >= until) return true;
    backoff_cv_.WaitUntil(&mu_, until);
  }
  return false;
}

GroupCommitWriter::CommitOutcome GroupCommitWriter::CommitWithRetries(
    std::span<Pending* const> group) {
  std::chrono::nanoseconds backoff = options_.initial_backoff;
  int attempts = 0;
  while (true) {
    {
      MutexLock lock(&mu_);
      if (abandoned_) break;
    }
    absl::Status status = CallCommit(group);
    ++attempts;
    if (status.ok()) return {};
    // Stored already: answered as it is, never committed again.
    if (IsCommittedButNotAcknowledged(status)) return {.status = std::move(status)};
    if (!IsTransient(status)) return {.status = std::move(status), .permanent = true};
    if (attempts > options_.max_commit_retries) {
      return {.status = absl::UnavailableError(fmt::format(
                  "storage commit failed after {} attempts; the request was not stored, retry "
                  "later: {}",
                  attempts, status.ToString()))};
    }
    {
      MutexLock lock(&mu_);
      ++stats_.commit_retries;
    }
    if (!Backoff(backoff)) break;
    backoff = backoff > options_.max_backoff / 2 ? options_.max_backoff : backoff * 2;
  }
  return {.status = absl::UnavailableError(
              "strata is shutting down and its drain deadline passed before this request was "
              "committed; the request was not stored, retry against a running server")};
}

void GroupCommitWriter::CommitAndAnswer(std::span<Pending* const> group) {
  CommitOutcome outcome = CommitWithRetries(group);
  if (!outcome.permanent) {  // OK, or Unavailable after retries or at the deadline
    Answer(group, outcome.status);
    return;
  }
  if (group.size() == 1) {
    // A permanent error on one request: the request is poison if the commit
    // step says it is invalid, else a storage fault the client may retry.
    Answer(group, absl::IsInvalidArgument(outcome.status)
                      ? outcome.status
                      : absl::UnavailableError(fmt::format(
                            "storage commit failed; the request was not stored, retry later: {}",
                            outcome.status.ToString())));
    return;
  }
  {
    MutexLock lock(&mu_);
    ++stats_.group_splits;
  }
  // Bisect: halves that commit are acknowledged, a failing half is split
  // again, so a single poison request ends up failing alone. Depth is at
  // most log2(max_requests_per_batch).
  const size_t half = group.size() / 2;
  CommitAndAnswer(group.first(half));
  CommitAndAnswer(group.subspan(half));
}

void GroupCommitWriter::CountOutcome(const absl::Status& status) {
  if (status.ok()) {
    ++stats_.requests_ok;
  } else if (absl::IsInvalidArgument(status)) {
    ++stats_.requests_failed_invalid;
  } else {
    ++stats_.requests_failed_unavailable;
  }
}

void GroupCommitWriter::Answer(std::span<Pending* const> group, const absl::Status& status) {
  // Free the rows before releasing their budget, so the budget bounds memory.
  for (Pending* pending : group) pending->request = WriteRequest{};
  std::vector<Callback> callbacks;
  callbacks.reserve(group.size());
  const Clock::time_point now = Now();
  {
    MutexLock lock(&mu_);
    for (Pending* pending : group) {
      stats_.inflight_bytes -= pending->bytes;
      --stats_.inflight_requests;
      if (pending->answered) continue;  // Shutdown() answered it at its deadline
      pending->answered = true;
      callbacks.push_back(std::move(pending->done));
      CountOutcome(status);
      stats_.request_latency.Observe(now - pending->admitted_for_stats);
    }
  }
  for (Callback& done : callbacks) done(status);
}

void GroupCommitWriter::AbandonLeftovers() {
  std::deque<std::unique_ptr<Pending>> queued;
  std::vector<Callback> never_committed;
  std::vector<Callback> mid_commit;
  const Clock::time_point now = Now();
  {
    MutexLock lock(&mu_);
    abandoned_ = true;
    queued.swap(queue_);
    const absl::Status unavailable = absl::UnavailableError("");
    for (auto& pending : queued) {
      stats_.inflight_bytes -= pending->bytes;
      --stats_.inflight_requests;
      pending->answered = true;
      never_committed.push_back(std::move(pending->done));
      CountOutcome(unavailable);
      stats_.request_latency.Observe(now - pending->admitted_for_stats);
    }
    // Requests a worker holds keep their budget until the worker lets go.
    for (std::vector<Pending*>& held : committing_) {
      for (Pending* pending : held) {
        if (pending->answered) continue;
        pending->answered = true;
        mid_commit.push_back(std::move(pending->done));
        CountOutcome(unavailable);
        stats_.request_latency.Observe(now - pending->admitted_for_stats);
      }
    }
    work_cv_.SignalAll();
    collector_cv_.SignalAll();
    backoff_cv_.SignalAll();
  }
  queued.clear();
  for (Callback& done : never_committed) {
    done(absl::UnavailableError(
        "strata is shutting down and its drain deadline passed before this request was "
        "committed; the request was not stored, retry against a running server"));
  }
  for (Callback& done : mid_commit) {
    done(absl::UnavailableError(
        "strata is shutting down and its drain deadline passed while this request's commit "
        "was running; it may or may not be stored (delivery is at-least-once), retry against "
        "a running server"));
  }
}

void GroupCommitWriter::Shutdown(std::chrono::nanoseconds drain_timeout) {
  for (const std::thread& worker : workers_) {
    STRATA_CHECK(worker.get_id() != std::this_thread::get_id(),
                 "GroupCommitWriter::Shutdown called from a writer thread");
  }
  MutexLock call_lock(&shutdown_mu_);
  if (joined_) return;
  const Clock::time_point deadline =
      Clock::now() + std::clamp(drain_timeout, std::chrono::nanoseconds(0), kLongestTimeout);
  bool drained = false;
  {
    MutexLock lock(&mu_);
    stopping_ = true;
    work_cv_.SignalAll();
    collector_cv_.SignalAll();
    const auto is_drained = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
      if (!queue_.empty() || collector_active_) return false;
      for (const std::vector<Pending*>& held : committing_) {
        if (!held.empty()) return false;
      }
      return true;
    };
    while (!(drained = is_drained()) && Clock::now() < deadline) {
      drained_cv_.WaitUntil(&mu_, deadline);
    }
  }
  if (!drained) AbandonLeftovers();
  for (std::thread& worker : workers_) worker.join();
  joined_ = true;
}

GroupCommitWriterStats GroupCommitWriter::GetStats() const {
  MutexLock lock(&mu_);
  GroupCommitWriterStats stats = stats_;
  stats.queued_requests = queue_.size();
  stats.committing_requests = 0;
  for (const std::vector<Pending*>& held : committing_) stats.committing_requests += held.size();
  return stats;
}

}  // namespace strata::storage
