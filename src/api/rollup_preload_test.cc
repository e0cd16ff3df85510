// The start-up read of the rollups (rollup_preload.h): after a server
// starts and the preload is done, the first services answer reads no
// rollups file; a request that needs a batch being read waits for that
// read instead of reading the file again; the horizon counts back from the
// server's clock, so a batch from a client whose clock runs ahead does not
// hide the batches of the last days.

#include "api/rollup_preload.h"

#include <atomic>
#include <chrono>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "api/api_test_server.h"
#include "api/service_health.h"
#include "common/mutex.h"
#include "fmt/format.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "io/forwarding_file_system.h"
#include "io/posix_file_system.h"
#include "server/http_testing.h"
#include "storage/storage.h"
#include "storage/testing/commit_testing.h"
#include "workload/traffic_generator.h"

namespace strata::api {
namespace {

constexpr char kToken[] = "preload-token";
constexpr int kBatches = 4;
// Ingest and event times of the batches: 2026-11-20 10:00 UTC on.
constexpr int64_t kStartMicros = int64_t{1'795'168'800} * 1'000'000;
constexpr uint64_t kStartNanos = static_cast<uint64_t>(kStartMicros) * 1'000;
constexpr uint64_t kHourNanos = uint64_t{3'600} * 1'000'000'000;
constexpr uint64_t kDayNanos = 24 * kHourNanos;
// The server's clock in these tests: an hour after the batches' start.
constexpr int64_t kNowNanos = static_cast<int64_t>(kStartNanos + kHourNanos);

bool IsRollupsFile(const std::string& path) { return path.ends_with("/rollups.parquet"); }

// Counts the openings of rollups.parquet files; when `hold_first` is set,
// the first such opening waits until Release() (bounded by a minute).
class RollupsReadCounter final : public ForwardingFileSystem {
 public:
  explicit RollupsReadCounter(FileSystem& base, bool hold_first = false)
      : ForwardingFileSystem(base), held_(!hold_first) {}

  absl::StatusOr<std::unique_ptr<RandomAccessFile>> NewRandomAccessFile(
      const std::string& path) override {
    if (IsRollupsFile(path)) Count(path);
    return base().NewRandomAccessFile(path);
  }
  absl::StatusOr<std::string> ReadFile(const std::string& path) override {
    if (IsRollupsFile(path)) Count(path);
    return base().ReadFile(path);
  }

  int opened() const {
    MutexLock lock(&mu_);
    return opened_;
  }
  // The rollups files opened, in order.
  std::vector<std::string> paths() const {
    MutexLock lock(&mu_);
    return paths_;
  }
  // Waits (at most a minute) until `n` openings have begun.
  bool WaitForOpened(int n) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::minutes(1);
    MutexLock lock(&mu_);
    while (opened_ < n && cv_.WaitUntil(&mu_, deadline)) {
    }
    return opened_ >= n;
  }
  void Release() {
    MutexLock lock(&mu_);
    released_ = true;
    cv_.SignalAll();
  }

 private:
  void Count(const std::string& path) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::minutes(1);
    MutexLock lock(&mu_);
    ++opened_;
    paths_.push_back(path);
    cv_.SignalAll();
    if (held_) return;
    held_ = true;
    while (!released_ && cv_.WaitUntil(&mu_, deadline)) {
    }
  }

  mutable Mutex mu_;
  CondVar cv_;
  int opened_ ABSL_GUARDED_BY(mu_) = 0;
  std::vector<std::string> paths_ ABSL_GUARDED_BY(mu_);
  bool held_ ABSL_GUARDED_BY(mu_);
  bool released_ ABSL_GUARDED_BY(mu_) = false;
};

// A data directory of kBatches batches (spans, logs and metrics of several
// services), each with its rollups.parquet.
class RollupPreloadTest : public ::testing::Test {
 protected:
  void SetUp() override {
    data_dir_ = tmp_.path() + "/data";
    auto now = std::make_shared<std::atomic<int64_t>>(kStartMicros);
    storage::StorageOptions options;
    options.clock = [now] { return now->fetch_add(1'000); };
    options.writer.max_requests_per_batch = 1;
    options.maintenance.compaction = false;
    auto opened = storage::Storage::Open(fs_, data_dir_, options);
    ASSERT_TRUE(opened.ok()) << opened.status();
    storage_ = *std::move(opened);
    workload::TrafficOptions traffic;
    traffic.seed = 7;
    traffic.start_time_unix_nano = kStartNanos;
    traffic.trace_spacing_nanos = 1'000'000'000;
    workload::TrafficGenerator generator(traffic);
    for (int i = 0; i < kBatches; ++i) ASSERT_NO_FATAL_FAILURE(WriteBatch(generator));
    ASSERT_EQ(storage_->Pin()->size(), static_cast<size_t>(kBatches));
  }

  // Writes one batch of the traffic's next events (a few minutes of them).
  void WriteBatch(workload::TrafficGenerator& generator) {
    storage::WriteRequest request;
    request.traces = generator.Traces(200);
    request.logs = generator.Logs(50);
    request.metrics = generator.Metrics(50);
    request.rows = 300;
    request.bytes = 1 << 20;
    ASSERT_TRUE(storage_->Write(std::move(request)).ok());
  }

  // Writes one batch whose events start at `start_nanos`; returns its id.
  std::string WriteBatchAt(uint64_t start_nanos) {
    workload::TrafficOptions traffic;
    traffic.seed = 11;
    traffic.start_time_unix_nano = start_nanos;
    traffic.trace_spacing_nanos = 1'000'000'000;
    workload::TrafficGenerator generator(traffic);
    const size_t before = storage_->Pin()->size();
    WriteBatch(generator);
    const std::shared_ptr<const storage::Snapshot> snapshot = storage_->Pin();
    EXPECT_EQ(snapshot->size(), before + 1);
    for (const auto& batch : snapshot->batches()) {
      if (batch->meta().spans.event_time.has_value() &&
          batch->meta().spans.event_time->min >= start_nanos &&
          batch->meta().spans.event_time->min < start_nanos + kHourNanos) {
        return batch->meta().id;
      }
    }
    ADD_FAILURE() << "no batch with events at " << start_nanos;
    return "";
  }

  // The Api over storage_ reading through `fs`, its clock at kNowNanos,
  // with `preload` (its clock left to the Api's).
  test_support::LoopbackApi StartApi(FileSystem* fs, RollupPreloadOptions preload = {}) {
    test_support::LoopbackApi api;
    api.pool = test_support::OpenTestPool(data_dir_, 2, 2);
    if (api.pool == nullptr) return api;
    ApiOptions options;
    storage::Storage* storage = storage_.get();
    options.storage = [storage] { return storage; };
    options.pool = api.pool.get();
    options.fs = fs;
    options.data_dir = data_dir_;
    options.authenticate = AcceptOnlyToken(kToken);
    options.now = [] { return kNowNanos; };
    options.rollup_preload = std::move(preload);
    api.api = std::make_unique<Api>(std::move(options));
    auto started = test_support::ServeOnLoopback(*api.api);
    EXPECT_TRUE(started.ok()) << started.status();
    if (started.ok()) api.http_server = *std::move(started);
    return api;
  }

  // GET /api/v1/services over the batches' two hours.
  static server::testing::HttpAnswer GetServices(const test_support::LoopbackApi& api) {
    return server::testing::Fetch(
        "GET",
        fmt::format("http://127.0.0.1:{}/api/v1/services?start={}&end={}", api.http_server->port(),
                    kStartNanos, kStartNanos + 2 * kHourNanos),
        {std::string("Authorization: Bearer ") + kToken});
  }

  PosixFileSystem fs_;
  storage::testing::ScopedTempDir tmp_{"rollup-preload"};
  std::string data_dir_;
  std::unique_ptr<storage::Storage> storage_;
};

TEST_F(RollupPreloadTest, FirstServicesAnswerAfterThePreloadReadsNoRollupsFile) {
  RollupsReadCounter counter(fs_);
  test_support::LoopbackApi api = StartApi(&counter);
  ASSERT_NE(api.http_server, nullptr);
  ASSERT_TRUE(api.api->TEST_WaitForRollupPreload(std::chrono::minutes(1)));
  const RollupPreloadStats stats = api.api->RollupPreloadStatistics();
  EXPECT_EQ(stats.batches_read, static_cast<size_t>(kBatches));
  EXPECT_EQ(stats.unreadable, 0u);
  const int opened_before = counter.opened();
  EXPECT_EQ(opened_before, kBatches);

  const server::testing::HttpAnswer answer = GetServices(api);
  ASSERT_EQ(answer.status, 200) << answer.body;
  EXPECT_THAT(answer.body, ::testing::HasSubstr(R"("name":"frontend")"));
  EXPECT_EQ(counter.opened(), opened_before) << "the first answer read rollups files";
}

TEST_F(RollupPreloadTest, WithoutThePreloadTheFirstServicesAnswerReadsEveryBatch) {
  RollupsReadCounter counter(fs_);
  RollupPreloadOptions off;
  off.horizon = std::chrono::nanoseconds(0);
  test_support::LoopbackApi api = StartApi(&counter, off);
  ASSERT_NE(api.http_server, nullptr);
  ASSERT_TRUE(api.api->TEST_WaitForRollupPreload(std::chrono::minutes(1)));
  EXPECT_EQ(api.api->RollupPreloadStatistics().batches_read, 0u);

  const server::testing::HttpAnswer answer = GetServices(api);
  ASSERT_EQ(answer.status, 200) << answer.body;
  EXPECT_THAT(answer.body, ::testing::HasSubstr(R"("name":"frontend")"));
  EXPECT_EQ(counter.opened(), kBatches);
}

// A client whose clock runs two days ahead wrote the newest batch. The
// horizon counts back from the server's clock, not from that batch's
// events: the batches of the last hours are read at start (the future one
// first, as the newest), so is one of six days ago (the UI's widest
// window is the last 7 days); one of ten days ago is left to the first
// answer that asks for it.
TEST_F(RollupPreloadTest, HorizonCountsBackFromTheClockNotFromTheNewestEvent) {
  const std::string future = WriteBatchAt(kStartNanos + 2 * kDayNanos);
  const std::string six_days = WriteBatchAt(kStartNanos - 6 * kDayNanos);
  const uint64_t ten_days_ago = kStartNanos - 10 * kDayNanos;
  const std::string ten_days = WriteBatchAt(ten_days_ago);
  ASSERT_FALSE(future.empty());
  ASSERT_FALSE(six_days.empty());
  ASSERT_FALSE(ten_days.empty());
  RollupsReadCounter counter(fs_);
  test_support::LoopbackApi api = StartApi(&counter);
  ASSERT_NE(api.http_server, nullptr);
  ASSERT_TRUE(api.api->TEST_WaitForRollupPreload(std::chrono::minutes(1)));
  const RollupPreloadStats stats = api.api->RollupPreloadStatistics();
  EXPECT_EQ(stats.batches_read, static_cast<size_t>(kBatches + 2))
      << "the recent batches, the future one and the one of six days ago";
  EXPECT_EQ(stats.unreadable, 0u);
  const std::vector<std::string> paths = counter.paths();
  ASSERT_EQ(paths.size(), static_cast<size_t>(kBatches + 2));
  EXPECT_THAT(paths.front(), ::testing::HasSubstr(future)) << "newest first";
  EXPECT_THAT(paths.back(), ::testing::HasSubstr(six_days));
  for (const std::string& path : paths)
    EXPECT_THAT(path, ::testing::Not(::testing::HasSubstr(ten_days)));

  // The batch of ten days ago is read by the first answer over its window.
  const server::testing::HttpAnswer answer = server::testing::Fetch(
      "GET",
      fmt::format("http://127.0.0.1:{}/api/v1/services?start={}&end={}", api.http_server->port(),
                  ten_days_ago, ten_days_ago + kHourNanos),
      {std::string("Authorization: Bearer ") + kToken});
  ASSERT_EQ(answer.status, 200) << answer.body;
  EXPECT_THAT(answer.body, ::testing::HasSubstr(R"("name":"frontend")"));
  ASSERT_EQ(counter.opened(), kBatches + 3);
  EXPECT_THAT(counter.paths().back(), ::testing::HasSubstr(ten_days));
}

// The preload holds its first batch's file open while a request asks for
// every batch: the request reads the others and waits for that one, so
// each file is opened once.
TEST_F(RollupPreloadTest, RequestWaitsForTheBatchThePreloadIsReading) {
  RollupsReadCounter counter(fs_, /*hold_first=*/true);
  RollupCache cache;
  const std::shared_ptr<const storage::Snapshot> snapshot = storage_->Pin();
  size_t preloaded = 0;
  std::thread preload([&] {
    preloaded = cache.Preload(
        counter, *snapshot, kStartNanos - kDayNanos, [] { return false; }, nullptr);
  });
  ASSERT_TRUE(counter.WaitForOpened(1));
  absl::StatusOr<std::vector<RollupCache::Rows>> rows;
  std::thread request([&] {
    rows =
        cache.ForWindow(counter, *snapshot, MinutesOf(kStartNanos, kStartNanos + 2 * kHourNanos));
  });
  // The request has begun reading every batch the preload is not reading.
  EXPECT_TRUE(counter.WaitForOpened(kBatches));
  counter.Release();
  request.join();
  preload.join();
  ASSERT_TRUE(rows.ok()) << rows.status();
  EXPECT_EQ(rows->size(), static_cast<size_t>(kBatches));
  EXPECT_EQ(counter.opened(), kBatches);
  EXPECT_EQ(cache.reads(), static_cast<uint64_t>(kBatches));
  EXPECT_EQ(cache.batches(), static_cast<size_t>(kBatches));
  // The preload read its first batch; the request had claimed the rest.
  EXPECT_EQ(preloaded, 1u);
}

}  // namespace
}  // namespace strata::api
