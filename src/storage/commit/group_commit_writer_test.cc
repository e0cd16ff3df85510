#include "storage/commit/group_commit_writer.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/status.h"
#include "common/mutex.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace strata::storage {
namespace {

using namespace std::chrono_literals;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using Ids = std::vector<int>;

// Every wait in these tests ends by this deadline, so a bug fails the test
// instead of hanging it. Nothing waits for it to pass when the code works.
constexpr std::chrono::seconds kTestTimeout(30);

std::chrono::steady_clock::time_point TestDeadline() {
  return std::chrono::steady_clock::now() + kTestTimeout;
}

// A request whose identity travels inside its trace batch, so the fake commit
// step can tell which requests a group holds.
WriteRequest MakeRequest(int id, uint64_t rows = 1, uint64_t bytes = 10) {
  WriteRequest request;
  request.traces = std::make_unique<otlp::TraceBatch>();
  request.traces->Retain(std::make_shared<const std::string>(std::to_string(id)));
  request.rows = rows;
  request.bytes = bytes;
  return request;
}

int RequestId(const WriteRequest& request) { return std::stoi(*request.traces->retained.at(0)); }

// Records every answer the writer gives, by request id.
class Answers {
 public:
  GroupCommitWriter::Callback For(int id) {
    return [this, id](absl::Status status) {
      MutexLock lock(&mu_);
      by_id_[id].push_back(std::move(status));
      ++total_;
      cv_.SignalAll();
    };
  }
  // Waits until at least `count` answers arrived; false at the test deadline.
  bool WaitForTotal(size_t count) {
    const auto deadline = TestDeadline();
    MutexLock lock(&mu_);
    while (total_ < count) {
      if (std::chrono::steady_clock::now() >= deadline) return false;
      cv_.WaitUntil(&mu_, deadline);
    }
    return true;
  }
  std::vector<absl::Status> Of(int id) {
    MutexLock lock(&mu_);
    return by_id_[id];
  }
  // The single answer for `id`; a test failure if there is not exactly one.
  absl::Status Single(int id) {
    std::vector<absl::Status> answers = Of(id);
    EXPECT_EQ(answers.size(), 1u) << "request " << id;
    return answers.empty() ? absl::InternalError("no answer") : answers.front();
  }
  size_t total() {
    MutexLock lock(&mu_);
    return total_;
  }

 private:
  Mutex mu_;
  CondVar cv_;
  std::map<int, std::vector<absl::Status>> by_id_ ABSL_GUARDED_BY(mu_);
  size_t total_ ABSL_GUARDED_BY(mu_) = 0;
};

// A commit step the test controls: it records each group, can hold calls at
// their entry until the test lets them through, and decides each call's
// result from the group's ids.
class FakeCommit {
 public:
  using Decide = std::function<absl::Status(const Ids& ids, int call_index)>;

  void SetDecide(Decide decide) {
    MutexLock lock(&mu_);
    decide_ = std::move(decide);
  }
  // From now on, calls wait at entry for a permit.
  void Hold() {
    MutexLock lock(&mu_);
    permits_ = 0;
  }
  void Release(int calls) {
    MutexLock lock(&mu_);
    permits_ += calls;
    cv_.SignalAll();
  }
  void OpenGate() {
    MutexLock lock(&mu_);
    permits_ = -1;
    cv_.SignalAll();
  }

  GroupCommitWriter::CommitFn Fn() {
    return [this](std::span<WriteRequest* const> group) { return Call(group); };
  }

  // Waits until `count` calls have started; false at the test deadline.
  bool WaitForCalls(size_t count) {
    const auto deadline = TestDeadline();
    MutexLock lock(&mu_);
    while (calls_.size() < count) {
      if (std::chrono::steady_clock::now() >= deadline) return false;
      cv_.WaitUntil(&mu_, deadline);
    }
    return true;
  }
  std::vector<Ids> calls() {
    MutexLock lock(&mu_);
    return calls_;
  }
  std::vector<uint64_t> call_rows() {
    MutexLock lock(&mu_);
    return call_rows_;
  }
  // Groups whose call returned OK.
  std::vector<Ids> committed() {
    MutexLock lock(&mu_);
    return committed_;
  }
  int returned() {
    MutexLock lock(&mu_);
    return returned_;
  }
  int max_concurrent() {
    MutexLock lock(&mu_);
    return max_concurrent_;
  }
  // Requests seen in two calls at the same time (must stay empty).
  std::vector<int> overlaps() {
    MutexLock lock(&mu_);
    return overlaps_;
  }

 private:
  absl::Status Call(std::span<WriteRequest* const> group) {
    Ids ids;
    uint64_t rows = 0;
    for (WriteRequest* request : group) {
      ids.push_back(RequestId(*request));
      rows += request->rows;
    }
    Decide decide;
    int call_index = 0;
    {
      MutexLock lock(&mu_);
      call_index = static_cast<int>(calls_.size());
      calls_.push_back(ids);
      call_rows_.push_back(rows);
      for (int id : ids) {
        if (!active_.insert(id).second) overlaps_.push_back(id);
      }
      max_concurrent_ = std::max(max_concurrent_, ++concurrent_);
      cv_.SignalAll();
      const auto deadline = TestDeadline();
      while (permits_ == 0) {
        if (std::chrono::steady_clock::now() >= deadline) {
          ADD_FAILURE() << "commit call " << call_index << " was never released";
          break;
        }
        cv_.WaitUntil(&mu_, deadline);
      }
      if (permits_ > 0) --permits_;
      decide = decide_;
    }
    absl::Status status = decide ? decide(ids, call_index) : absl::OkStatus();
    MutexLock lock(&mu_);
    for (int id : ids) active_.erase(id);
    --concurrent_;
    ++returned_;
    if (status.ok()) committed_.push_back(ids);
    return status;
  }

  Mutex mu_;
  CondVar cv_;
  Decide decide_ ABSL_GUARDED_BY(mu_);
  int permits_ ABSL_GUARDED_BY(mu_) = -1;  // -1: unlimited
  std::vector<Ids> calls_ ABSL_GUARDED_BY(mu_);
  std::vector<uint64_t> call_rows_ ABSL_GUARDED_BY(mu_);
  std::vector<Ids> committed_ ABSL_GUARDED_BY(mu_);
  std::set<int> active_ ABSL_GUARDED_BY(mu_);
  std::vector<int> overlaps_ ABSL_GUARDED_BY(mu_);
  int concurrent_ ABSL_GUARDED_BY(mu_) = 0;
  int max_concurrent_ ABSL_GUARDED_BY(mu_) = 0;
  int returned_ ABSL_GUARDED_BY(mu_) = 0;
};

bool Contains(const Ids& ids, int id) { return std::find(ids.begin(), ids.end(), id) != ids.end(); }

class GroupCommitWriterTest : public ::testing::Test {
 protected:
  // One worker and no admission window unless a test says otherwise, so the
  // groups a test sees follow from what it queued, not from timing.
  GroupCommitWriter::Options BaseOptions() {
    GroupCommitWriter::Options options;
    options.workers = 1;
    options.admission_window = 0ns;
    options.drain_timeout = kTestTimeout;
    options.backoff_sleep = [this](std::chrono::nanoseconds delay) {
      MutexLock lock(&sleeps_mu_);
      sleeps_.push_back(delay);
    };
    return options;
  }
  void Start(GroupCommitWriter::Options options) {
    writer_ = std::make_unique<GroupCommitWriter>(std::move(options), fake_.Fn());
  }
  void Submit(int id, uint64_t rows = 1, uint64_t bytes = 10) {
    writer_->Submit(MakeRequest(id, rows, bytes), answers_.For(id));
  }
  Ids BacklogAfterTwoHeldCommits(uint64_t floor_bytes, uint64_t bytes);
  std::vector<std::chrono::nanoseconds> sleeps() {
    MutexLock lock(&sleeps_mu_);
    return sleeps_;
  }
  void TearDown() override {
    fake_.OpenGate();  // a failed test must not leave the writer blocked
    writer_.reset();
  }

  FakeCommit fake_;
  Answers answers_;
  Mutex sleeps_mu_;
  std::vector<std::chrono::nanoseconds> sleeps_ ABSL_GUARDED_BY(sleeps_mu_);
  std::unique_ptr<GroupCommitWriter> writer_;
};

// ------------------------------------------------------------ grouping

TEST_F(GroupCommitWriterTest, RequestsQueuedDuringACommitShareTheNextCommit) {
  Start(BaseOptions());
  fake_.Hold();
  Submit(0);
  ASSERT_TRUE(fake_.WaitForCalls(1));
  for (int id = 1; id <= 5; ++id) Submit(id);
  EXPECT_EQ(writer_->GetStats().queued_requests, 5u);
  fake_.OpenGate();
  ASSERT_TRUE(answers_.WaitForTotal(6));
  EXPECT_THAT(fake_.calls(), ElementsAre(Ids{0}, Ids{1, 2, 3, 4, 5}));
  for (int id = 0; id <= 5; ++id) EXPECT_TRUE(answers_.Single(id).ok()) << id;
}

TEST_F(GroupCommitWriterTest, WindowGathersConcurrentRequestsAndEndsAtTheRowCap) {
  GroupCommitWriter::Options options = BaseOptions();
  options.admission_window = 1h;  // only the cap can end these groups
  options.max_rows_per_batch = 4;
  Start(options);
  for (int id = 0; id < 8; ++id) Submit(id);
  ASSERT_TRUE(answers_.WaitForTotal(8));
  EXPECT_THAT(fake_.calls(), ElementsAre(Ids{0, 1, 2, 3}, Ids{4, 5, 6, 7}));
}

TEST_F(GroupCommitWriterTest, WindowEndsAtTheByteCapAndTheRequestCap) {
  GroupCommitWriter::Options options = BaseOptions();
  options.admission_window = 1h;
  options.max_bytes_per_batch = 100;
  options.max_requests_per_batch = 3;
  Start(options);
  Submit(0, 1, 60);
  Submit(1, 1, 40);  // 100 bytes: the byte cap
  Submit(2, 1, 1);
  Submit(3, 1, 1);
  Submit(4, 1, 1);  // three requests: the request cap
  ASSERT_TRUE(answers_.WaitForTotal(5));
  EXPECT_THAT(fake_.calls(), ElementsAre(Ids{0, 1}, Ids{2, 3, 4}));
}

TEST_F(GroupCommitWriterTest, BacklogIsCutIntoGroupsWithinTheCapsInOrder) {
  GroupCommitWriter::Options options = BaseOptions();
  options.max_rows_per_batch = 4;
  Start(options);
  fake_.Hold();
  Submit(0);
  ASSERT_TRUE(fake_.WaitForCalls(1));
  for (int id = 1; id <= 10; ++id) Submit(id);
  fake_.OpenGate();
  ASSERT_TRUE(answers_.WaitForTotal(11));
  EXPECT_THAT(fake_.calls(), ElementsAre(Ids{0}, Ids{1, 2, 3, 4}, Ids{5, 6, 7, 8}, Ids{9, 10}));
  for (uint64_t rows : fake_.call_rows()) EXPECT_LE(rows, 4u);
}

TEST_F(GroupCommitWriterTest, OversizedRequestIsCommittedAloneAndWhole) {
  GroupCommitWriter::Options options = BaseOptions();
  options.max_rows_per_batch = 10;
  options.max_bytes_per_batch = 1000;
  Start(options);
  fake_.Hold();
  Submit(0);
  ASSERT_TRUE(fake_.WaitForCalls(1));
  Submit(1);
  Submit(2, /*rows=*/100);  // over the row cap
  Submit(3);
  Submit(4, 1, /*bytes=*/5000);  // over the byte cap
  Submit(5);
  fake_.OpenGate();
  ASSERT_TRUE(answers_.WaitForTotal(6));
  EXPECT_THAT(fake_.calls(), ElementsAre(Ids{0}, Ids{1}, Ids{2}, Ids{3}, Ids{4}, Ids{5}));
  EXPECT_EQ(fake_.call_rows()[2], 100u);  // all of its rows, in one commit
  for (int id = 0; id <= 5; ++id) EXPECT_TRUE(answers_.Single(id).ok()) << id;
}

TEST_F(GroupCommitWriterTest, CommitsRunConcurrentlyOnSeveralWorkers) {
  GroupCommitWriter::Options options = BaseOptions();
  options.workers = 4;
  options.max_requests_per_batch = 1;
  Start(options);
  fake_.Hold();
  for (int id = 0; id < 4; ++id) Submit(id);
  // Four calls in progress at once: no worker waits for another's commit.
  ASSERT_TRUE(fake_.WaitForCalls(4));
  EXPECT_EQ(fake_.max_concurrent(), 4);
  EXPECT_EQ(writer_->GetStats().committing_requests, 4u);
  fake_.OpenGate();
  ASSERT_TRUE(answers_.WaitForTotal(4));
  EXPECT_TRUE(fake_.overlaps().empty());
}

// Two workers, each committing (held) one request of `bytes`, requests
// 2..9 of 10 bytes each queued behind them; then one commit is let through.
// Returns the group the freed worker collects.
Ids GroupCommitWriterTest::BacklogAfterTwoHeldCommits(uint64_t floor_bytes, uint64_t bytes) {
  GroupCommitWriter::Options options = BaseOptions();
  options.workers = 2;
  options.fair_share_floor_bytes = floor_bytes;
  Start(options);
  fake_.Hold();
  Submit(0, 1, bytes);
  EXPECT_TRUE(fake_.WaitForCalls(1));
  Submit(1, 1, bytes);
  EXPECT_TRUE(fake_.WaitForCalls(2));
  for (int id = 2; id <= 9; ++id) Submit(id);
  fake_.Release(1);
  if (!fake_.WaitForCalls(3)) return {};
  return fake_.calls()[2];
}

TEST_F(GroupCommitWriterTest, WithSeveralWorkersAGroupTakesItsFairShareOfTheBacklog) {
  // The floor is one 10-byte request. The first worker free sees 90 bytes
  // admitted (its own request answered): its share is 45, so it takes five
  // of the eight and leaves three queued.
  EXPECT_EQ(BacklogAfterTwoHeldCommits(10, 10), (Ids{2, 3, 4, 5, 6}));
  EXPECT_EQ(writer_->GetStats().queued_requests, 3u);
  fake_.OpenGate();
  ASSERT_TRUE(answers_.WaitForTotal(10));
  for (int id = 0; id <= 9; ++id) EXPECT_TRUE(answers_.Single(id).ok()) << id;
  EXPECT_TRUE(fake_.overlaps().empty());
}

TEST_F(GroupCommitWriterTest, FairShareFloorKeepsASmallBacklogInOneGroup) {
  // 80 bytes queued, under the 1000-byte floor: one group takes them all.
  EXPECT_EQ(BacklogAfterTwoHeldCommits(1000, 1000), (Ids{2, 3, 4, 5, 6, 7, 8, 9}));
  fake_.OpenGate();
  ASSERT_TRUE(answers_.WaitForTotal(10));
}

// ------------------------------------------------------------ budget and acks

TEST_F(GroupCommitWriterTest, OverBudgetIsRefusedAtOnceAndAdmittedAgainAfterRelease) {
  GroupCommitWriter::Options options = BaseOptions();
  options.inflight_bytes_limit = 100;
  Start(options);
  fake_.Hold();
  Submit(0, 1, 60);
  ASSERT_TRUE(fake_.WaitForCalls(1));
  Submit(1, 1, 50);  // 110 > 100: answered inline, while the commit is blocked
  ASSERT_EQ(answers_.Of(1).size(), 1u);
  EXPECT_TRUE(absl::IsResourceExhausted(answers_.Of(1)[0])) << answers_.Of(1)[0];
  EXPECT_THAT(std::string(answers_.Of(1)[0].message()), HasSubstr("retry later"));
  Submit(2, 1, 40);  // exactly 100: admitted
  EXPECT_TRUE(answers_.Of(2).empty());
  GroupCommitWriterStats stats = writer_->GetStats();
  EXPECT_EQ(stats.inflight_bytes, 100u);
  EXPECT_EQ(stats.requests_rejected_over_budget, 1u);

  fake_.OpenGate();
  ASSERT_TRUE(answers_.WaitForTotal(3));
  EXPECT_EQ(writer_->GetStats().inflight_bytes, 0u);  // released before the answer
  Submit(3, 1, 50);
  ASSERT_TRUE(answers_.WaitForTotal(4));
  EXPECT_TRUE(answers_.Single(3).ok());
}

TEST_F(GroupCommitWriterTest, RequestCountBudgetRefusesAtOnce) {
  GroupCommitWriter::Options options = BaseOptions();
  options.inflight_requests_limit = 2;
  Start(options);
  fake_.Hold();
  Submit(0);
  Submit(1);
  Submit(2);
  EXPECT_TRUE(absl::IsResourceExhausted(answers_.Single(2)));
  EXPECT_TRUE(answers_.Of(0).empty());
  fake_.OpenGate();
  ASSERT_TRUE(answers_.WaitForTotal(3));
  EXPECT_TRUE(answers_.Single(0).ok());
  EXPECT_TRUE(answers_.Single(1).ok());
}

TEST_F(GroupCommitWriterTest, RequestLargerThanTheWholeBudgetIsAdmittedOnlyWhenIdle) {
  GroupCommitWriter::Options options = BaseOptions();
  options.inflight_bytes_limit = 100;
  Start(options);
  Submit(0, 1, 500);  // nothing in flight: admitted
  ASSERT_TRUE(answers_.WaitForTotal(1));
  EXPECT_TRUE(answers_.Single(0).ok());
  fake_.Hold();
  Submit(1, 1, 10);
  ASSERT_TRUE(fake_.WaitForCalls(2));
  Submit(2, 1, 500);
  EXPECT_TRUE(absl::IsResourceExhausted(answers_.Single(2)));
}

TEST_F(GroupCommitWriterTest, AcknowledgesOnlyAfterTheCommitReturnedOk) {
  Start(BaseOptions());
  fake_.Hold();
  std::atomic<int> returned_when_acked{-1};
  writer_->Submit(MakeRequest(0), [&](const absl::Status& status) {
    EXPECT_TRUE(status.ok());
    returned_when_acked = fake_.returned();
  });
  ASSERT_TRUE(fake_.WaitForCalls(1));
  EXPECT_EQ(returned_when_acked.load(), -1);  // the commit is blocked: no ack yet
  writer_->Submit(MakeRequest(1), answers_.For(1));
  fake_.OpenGate();
  ASSERT_TRUE(answers_.WaitForTotal(1));  // request 1 commits after request 0
  EXPECT_EQ(returned_when_acked.load(), 1);
}

TEST_F(GroupCommitWriterTest, CommitStepRunsWithoutTheWriterLock) {
  Start(BaseOptions());
  // GetStats() and Submit() take the writer's lock; from inside the commit
  // step they would deadlock if the writer held it across the call.
  fake_.SetDecide([this](const Ids& ids, int call_index) {
    EXPECT_EQ(writer_->GetStats().committing_requests, ids.size());
    if (call_index == 0) writer_->Submit(MakeRequest(1), answers_.For(1));
    return absl::OkStatus();
  });
  Submit(0);
  ASSERT_TRUE(answers_.WaitForTotal(2));
  EXPECT_TRUE(answers_.Single(0).ok());
  EXPECT_TRUE(answers_.Single(1).ok());
}

// ------------------------------------------------------------ failures

TEST_F(GroupCommitWriterTest, TransientFailuresAreRetriedWithBackoffThenSucceed) {
  GroupCommitWriter::Options options = BaseOptions();
  options.max_commit_retries = 3;
  options.initial_backoff = 10ms;
  options.max_backoff = 25ms;
  Start(options);
  fake_.SetDecide([](const Ids&, int call_index) {
    switch (call_index) {
      case 0:
        return absl::UnavailableError("disk busy");
      case 1:
        return absl::DeadlineExceededError("fsync slow");
      case 2:
        return absl::ResourceExhaustedError("ENOSPC");
      default:
        return absl::OkStatus();
    }
  });
  Submit(0);
  ASSERT_TRUE(answers_.WaitForTotal(1));
  EXPECT_TRUE(answers_.Single(0).ok()) << answers_.Single(0);
  EXPECT_THAT(sleeps(), ElementsAre(10ms, 20ms, 25ms));
  const GroupCommitWriterStats stats = writer_->GetStats();
  EXPECT_EQ(stats.commit_calls, 4u);
  EXPECT_EQ(stats.commit_retries, 3u);
  EXPECT_EQ(stats.batches_committed, 1u);
  EXPECT_EQ(stats.requests_ok, 1u);
}

TEST_F(GroupCommitWriterTest, ExhaustedRetriesFailEveryWaiterOfTheGroupWithUnavailable) {
  GroupCommitWriter::Options options = BaseOptions();
  options.max_commit_retries = 2;
  Start(options);
  fake_.SetDecide([](const Ids& ids, int) {
    return Contains(ids, 1) ? absl::UnavailableError("EIO on fsync") : absl::OkStatus();
  });
  fake_.Hold();
  Submit(0);
  ASSERT_TRUE(fake_.WaitForCalls(1));
  Submit(1);
  Submit(2);
  Submit(3);
  fake_.OpenGate();
  ASSERT_TRUE(answers_.WaitForTotal(4));
  EXPECT_TRUE(answers_.Single(0).ok());
  for (int id = 1; id <= 3; ++id) {
    const absl::Status status = answers_.Single(id);
    EXPECT_TRUE(absl::IsUnavailable(status)) << status;
    EXPECT_THAT(std::string(status.message()), HasSubstr("after 3 attempts"));
    EXPECT_THAT(std::string(status.message()), HasSubstr("retry"));
    EXPECT_THAT(std::string(status.message()), HasSubstr("EIO on fsync"));
  }
  // Transient failures are not bisected: the same group, three times.
  EXPECT_THAT(fake_.calls(), ElementsAre(Ids{0}, Ids{1, 2, 3}, Ids{1, 2, 3}, Ids{1, 2, 3}));
  EXPECT_EQ(writer_->GetStats().requests_failed_unavailable, 3u);
}

TEST_F(GroupCommitWriterTest, PoisonRequestFailsAloneAndTheRestCommit) {
  Start(BaseOptions());
  fake_.SetDecide([](const Ids& ids, int) {
    return Contains(ids, 5) ? absl::InvalidArgumentError("span 3: trace id is all zeros")
                            : absl::OkStatus();
  });
  fake_.Hold();
  Submit(0);
  ASSERT_TRUE(fake_.WaitForCalls(1));
  for (int id = 1; id <= 8; ++id) Submit(id);
  fake_.OpenGate();
  ASSERT_TRUE(answers_.WaitForTotal(9));
  const absl::Status poison = answers_.Single(5);
  EXPECT_TRUE(absl::IsInvalidArgument(poison)) << poison;
  EXPECT_THAT(std::string(poison.message()), HasSubstr("trace id is all zeros"));
  std::map<int, int> commits_per_id;
  for (const Ids& group : fake_.committed()) {
    for (int id : group) ++commits_per_id[id];
  }
  for (int id = 0; id <= 8; ++id) {
    if (id == 5) continue;
    EXPECT_TRUE(answers_.Single(id).ok()) << id;
    EXPECT_EQ(commits_per_id[id], 1) << id;
  }
  EXPECT_EQ(commits_per_id.count(5), 0u);
  GroupCommitWriterStats stats = writer_->GetStats();
  EXPECT_EQ(stats.requests_failed_invalid, 1u);
  EXPECT_GT(stats.group_splits, 0u);
  // Bisection: 8 requests with one poison take 1 + 2*3 calls, not 1 + 8.
  EXPECT_EQ(fake_.calls().size(), 1u + 7u);

  Submit(9);  // the writer keeps serving
  ASSERT_TRUE(answers_.WaitForTotal(10));
  EXPECT_TRUE(answers_.Single(9).ok());
}

TEST_F(GroupCommitWriterTest, TwoPoisonRequestsAreBothIsolated) {
  Start(BaseOptions());
  fake_.SetDecide([](const Ids& ids, int) {
    return Contains(ids, 2) || Contains(ids, 7) ? absl::InvalidArgumentError("bad")
                                                : absl::OkStatus();
  });
  fake_.Hold();
  Submit(0);
  ASSERT_TRUE(fake_.WaitForCalls(1));
  for (int id = 1; id <= 9; ++id) Submit(id);
  fake_.OpenGate();
  ASSERT_TRUE(answers_.WaitForTotal(10));
  for (int id = 0; id <= 9; ++id) {
    EXPECT_EQ(answers_.Single(id).ok(), id != 2 && id != 7) << id;
  }
}

TEST_F(GroupCommitWriterTest, PermanentStorageFaultOnOneRequestIsUnavailable) {
  Start(BaseOptions());
  fake_.SetDecide([](const Ids& ids, int) {
    return Contains(ids, 2) ? absl::DataLossError("checksum mismatch writing spans.parquet")
                            : absl::OkStatus();
  });
  fake_.Hold();
  Submit(0);
  ASSERT_TRUE(fake_.WaitForCalls(1));
  for (int id = 1; id <= 3; ++id) Submit(id);
  fake_.OpenGate();
  ASSERT_TRUE(answers_.WaitForTotal(4));
  const absl::Status failed = answers_.Single(2);
  EXPECT_TRUE(absl::IsUnavailable(failed)) << failed;
  EXPECT_THAT(std::string(failed.message()), HasSubstr("checksum mismatch"));
  EXPECT_TRUE(answers_.Single(1).ok());
  EXPECT_TRUE(answers_.Single(3).ok());
  EXPECT_TRUE(sleeps().empty());  // permanent errors are not retried
}

// ------------------------------------------------------------ shutdown

TEST_F(GroupCommitWriterTest, ShutdownCommitsAdmittedWorkWithoutWaitingOutTheWindow) {
  GroupCommitWriter::Options options = BaseOptions();
  options.admission_window = 1h;
  Start(options);
  for (int id = 0; id < 5; ++id) Submit(id);
  writer_->Shutdown(kTestTimeout);
  EXPECT_EQ(answers_.total(), 5u);  // all answered before Shutdown returned
  EXPECT_THAT(fake_.calls(), ElementsAre(Ids{0, 1, 2, 3, 4}));
  for (int id = 0; id < 5; ++id) EXPECT_TRUE(answers_.Single(id).ok()) << id;
}

TEST_F(GroupCommitWriterTest, ShutdownDrainsABacklogBehindABlockedCommit) {
  GroupCommitWriter::Options options = BaseOptions();
  options.max_rows_per_batch = 2;
  Start(options);
  fake_.Hold();
  Submit(0);
  ASSERT_TRUE(fake_.WaitForCalls(1));
  for (int id = 1; id <= 4; ++id) Submit(id);
  std::thread shutdown([this] { writer_->Shutdown(kTestTimeout); });
  fake_.OpenGate();
  shutdown.join();
  EXPECT_THAT(fake_.calls(), ElementsAre(Ids{0}, Ids{1, 2}, Ids{3, 4}));
  for (int id = 0; id <= 4; ++id) EXPECT_TRUE(answers_.Single(id).ok()) << id;
}

TEST_F(GroupCommitWriterTest, ShutdownDeadlineFailsLeftoversPromptlyWithUnavailable) {
  Start(BaseOptions());
  fake_.Hold();
  Submit(0);
  ASSERT_TRUE(fake_.WaitForCalls(1));
  Submit(1);
  Submit(2);
  std::atomic<bool> shutdown_returned{false};
  std::thread shutdown([&] {
    writer_->Shutdown(20ms);
    shutdown_returned = true;
  });
  // Every waiter is answered at the deadline although the commit of request
  // 0 is still blocked.
  EXPECT_TRUE(answers_.WaitForTotal(3));
  EXPECT_FALSE(shutdown_returned.load());  // it joins the blocked worker
  EXPECT_EQ(fake_.returned(), 0);
  EXPECT_THAT(std::string(answers_.Single(0).message()), HasSubstr("may or may not be stored"));
  for (int id : {1, 2}) {
    const absl::Status status = answers_.Single(id);
    EXPECT_TRUE(absl::IsUnavailable(status)) << status;
    EXPECT_THAT(std::string(status.message()), HasSubstr("not stored"));
  }
  EXPECT_TRUE(absl::IsUnavailable(answers_.Single(0)));
  fake_.OpenGate();
  shutdown.join();
  // The late OK of request 0's commit is not a second answer.
  EXPECT_EQ(answers_.Of(0).size(), 1u);
  EXPECT_THAT(fake_.calls(), ElementsAre(Ids{0}));  // leftovers never reached the commit step
  const GroupCommitWriterStats stats = writer_->GetStats();
  EXPECT_EQ(stats.requests_failed_unavailable, 3u);
  EXPECT_EQ(stats.requests_ok, 0u);
  EXPECT_EQ(stats.inflight_bytes, 0u);
  EXPECT_EQ(stats.inflight_requests, 0u);
}

TEST_F(GroupCommitWriterTest, ShutdownDeadlineCutsARetryBackoffShort) {
  GroupCommitWriter::Options options = BaseOptions();
  options.backoff_sleep = nullptr;  // the writer's own, interruptible wait
  options.initial_backoff = 1h;
  options.max_backoff = 1h;
  Start(options);
  fake_.SetDecide([](const Ids&, int) { return absl::UnavailableError("disk gone"); });
  Submit(0);
  ASSERT_TRUE(fake_.WaitForCalls(1));
  writer_->Shutdown(10ms);  // returns, though the backoff asked for an hour
  EXPECT_TRUE(absl::IsUnavailable(answers_.Single(0)));
  EXPECT_EQ(fake_.calls().size(), 1u);
}

TEST_F(GroupCommitWriterTest, SubmitAndWriteAfterShutdownAreRefusedWithUnavailable) {
  Start(BaseOptions());
  writer_->Shutdown(kTestTimeout);
  Submit(0);
  const absl::Status refused = answers_.Single(0);  // answered inline
  EXPECT_TRUE(absl::IsUnavailable(refused)) << refused;
  EXPECT_THAT(std::string(refused.message()), HasSubstr("shutting down"));
  EXPECT_TRUE(absl::IsUnavailable(writer_->Write(MakeRequest(1))));
  EXPECT_EQ(writer_->GetStats().requests_rejected_shutdown, 2u);
  writer_->Shutdown(kTestTimeout);  // a second call returns at once
  EXPECT_TRUE(fake_.calls().empty());
}

TEST_F(GroupCommitWriterTest, DestructorDrainsAdmittedWork) {
  GroupCommitWriter::Options options = BaseOptions();
  options.admission_window = 1h;
  Start(options);
  for (int id = 0; id < 3; ++id) Submit(id);
  writer_.reset();
  EXPECT_EQ(answers_.total(), 3u);
  for (int id = 0; id < 3; ++id) EXPECT_TRUE(answers_.Single(id).ok()) << id;
}

// ------------------------------------------------------------ Write and stats

TEST_F(GroupCommitWriterTest, WriteWaitsForTheCommitAndReturnsItsStatus) {
  Start(BaseOptions());
  fake_.SetDecide([](const Ids& ids, int) {
    return Contains(ids, 1) ? absl::InvalidArgumentError("bad request") : absl::OkStatus();
  });
  fake_.Hold();
  absl::Status written = absl::UnknownError("not returned");
  std::atomic<bool> returned{false};
  std::thread writer_thread([&] {
    written = writer_->Write(MakeRequest(0));
    returned = true;
  });
  EXPECT_TRUE(fake_.WaitForCalls(1));
  EXPECT_FALSE(returned.load());  // its commit is blocked
  fake_.OpenGate();
  writer_thread.join();
  EXPECT_TRUE(written.ok()) << written;
  EXPECT_TRUE(absl::IsInvalidArgument(writer_->Write(MakeRequest(1))));
}

TEST_F(GroupCommitWriterTest, StatsCountOutcomesAndLatency) {
  GroupCommitWriter::Options options = BaseOptions();
  options.inflight_bytes_limit = 100;
  // A fake clock that only moves inside the commit step: 3 ms per call.
  auto clock_ns = std::make_shared<std::atomic<int64_t>>(0);
  options.now = [clock_ns] {
    return std::chrono::steady_clock::time_point(std::chrono::nanoseconds(clock_ns->load()));
  };
  Start(options);
  fake_.SetDecide([clock_ns](const Ids& ids, int) {
    *clock_ns += 3'000'000;
    return Contains(ids, 1) ? absl::InvalidArgumentError("bad") : absl::OkStatus();
  });
  ASSERT_TRUE(writer_->Write(MakeRequest(0)).ok());
  ASSERT_TRUE(absl::IsInvalidArgument(writer_->Write(MakeRequest(1))));
  fake_.Hold();
  Submit(2, 1, 90);
  ASSERT_TRUE(fake_.WaitForCalls(3));
  Submit(3, 1, 90);  // over budget
  GroupCommitWriterStats stats = writer_->GetStats();
  EXPECT_EQ(stats.inflight_bytes, 90u);
  EXPECT_EQ(stats.inflight_requests, 1u);
  EXPECT_EQ(stats.committing_requests, 1u);
  EXPECT_EQ(stats.queued_requests, 0u);
  fake_.OpenGate();
  ASSERT_TRUE(answers_.WaitForTotal(2));
  stats = writer_->GetStats();
  EXPECT_EQ(stats.requests_ok, 2u);
  EXPECT_EQ(stats.requests_failed_invalid, 1u);
  EXPECT_EQ(stats.requests_rejected_over_budget, 1u);
  EXPECT_EQ(stats.commit_calls, 3u);
  EXPECT_EQ(stats.batches_committed, 2u);
  EXPECT_EQ(stats.commit_latency.count, 3u);
  EXPECT_NEAR(stats.commit_latency.sum_seconds, 0.009, 1e-12);
  EXPECT_EQ(stats.commit_latency.bucket_counts[2], 3u);  // (2.5 ms, 5 ms]
  EXPECT_EQ(stats.request_latency.count, 3u);
  EXPECT_EQ(stats.inflight_bytes, 0u);
}

TEST(LatencyHistogramTest, BucketsAreUpperInclusive) {
  LatencyHistogram histogram;
  histogram.Observe(std::chrono::microseconds(1000));  // exactly 1 ms: first bucket
  histogram.Observe(std::chrono::microseconds(1001));
  histogram.Observe(std::chrono::seconds(60));  // past the last bound: +Inf
  EXPECT_EQ(histogram.bucket_counts[0], 1u);
  EXPECT_EQ(histogram.bucket_counts[1], 1u);
  EXPECT_EQ(histogram.bucket_counts.back(), 1u);
  EXPECT_EQ(histogram.count, 3u);
  EXPECT_NEAR(histogram.sum_seconds, 60.002001, 1e-9);
}

// ------------------------------------------------------------ concurrency

// Many submitters against several workers, with transient faults, poison
// requests and a tight budget: every request is answered exactly once, an OK
// answer means exactly one successful commit held it, a failed one means
// none did, and no request is ever in two commit calls at once.
TEST_F(GroupCommitWriterTest, ConcurrentSubmittersAreEachAnsweredExactlyOnce) {
  constexpr int kThreads = 8;
  constexpr int kPerThread = 400;
  constexpr int kTotal = kThreads * kPerThread;
  GroupCommitWriter::Options options = BaseOptions();
  options.workers = 4;
  options.admission_window = 200us;
  options.max_rows_per_batch = 16;
  options.inflight_bytes_limit = 2000;  // 200 requests of 10 bytes: some submitters are refused
  options.max_commit_retries = 1;
  options.backoff_sleep = [](std::chrono::nanoseconds) {};
  Start(options);
  auto is_poison = [](int id) { return id % 97 == 13; };
  fake_.SetDecide([&](const Ids& ids, int call_index) {
    if (std::any_of(ids.begin(), ids.end(), is_poison)) return absl::InvalidArgumentError("poison");
    return call_index % 7 == 3 ? absl::UnavailableError("flaky disk") : absl::OkStatus();
  });
  std::vector<std::thread> submitters;
  submitters.reserve(kThreads);
  for (int t = 0; t < kThreads; ++t) {
    submitters.emplace_back([this, t] {
      for (int i = 0; i < kPerThread; ++i) Submit(t * kPerThread + i);
    });
  }
  for (std::thread& submitter : submitters) submitter.join();
  ASSERT_TRUE(answers_.WaitForTotal(kTotal));
  writer_->Shutdown(kTestTimeout);

  std::map<int, int> commits_per_id;
  for (const Ids& group : fake_.committed()) {
    for (int id : group) ++commits_per_id[id];
  }
  int ok = 0;
  int refused = 0;
  for (int id = 0; id < kTotal; ++id) {
    const std::vector<absl::Status> answers = answers_.Of(id);
    ASSERT_EQ(answers.size(), 1u) << "request " << id;
    const absl::Status& status = answers.front();
    EXPECT_EQ(commits_per_id[id], status.ok() ? 1 : 0) << id << ": " << status;
    if (is_poison(id)) EXPECT_FALSE(status.ok()) << id;
    if (status.ok()) ++ok;
    if (absl::IsResourceExhausted(status)) ++refused;
    EXPECT_TRUE(status.ok() || absl::IsResourceExhausted(status) || absl::IsUnavailable(status) ||
                (absl::IsInvalidArgument(status) && is_poison(id)))
        << id << ": " << status;
  }
  EXPECT_TRUE(fake_.overlaps().empty());
  EXPECT_GT(ok, 0);
  const GroupCommitWriterStats stats = writer_->GetStats();
  EXPECT_EQ(stats.requests_ok, static_cast<uint64_t>(ok));
  EXPECT_EQ(stats.requests_rejected_over_budget, static_cast<uint64_t>(refused));
  EXPECT_EQ(stats.requests_ok + stats.requests_rejected_over_budget +
                stats.requests_rejected_shutdown + stats.requests_failed_unavailable +
                stats.requests_failed_invalid,
            static_cast<uint64_t>(kTotal));
  EXPECT_EQ(stats.inflight_bytes, 0u);
  EXPECT_EQ(stats.inflight_requests, 0u);
  for (uint64_t rows : fake_.call_rows()) EXPECT_LE(rows, 16u);
}

}  // namespace
}  // namespace strata::storage
