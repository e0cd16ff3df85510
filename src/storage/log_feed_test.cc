// LogFeed on its own (capacity, keep_for, what readers see) and in the
// storage engine: nothing is appended while nobody reads, every log batch
// published while someone does is appended once, and batches without log
// records never are.

#include "storage/log_feed.h"

#include <set>
#include <thread>

#include "gtest/gtest.h"
#include "io/posix_file_system.h"
#include "otlp/decode.h"
#include "storage/commit/catalog.h"
#include "storage/storage.h"
#include "storage/testing/commit_testing.h"

namespace strata::storage {
namespace {

BatchId IdAt(int64_t micros) { return *BatchId::Make(1'750'000'000'000'000 + micros, 0); }

// A catalog whose Snapshot holds batches 1..n.
std::shared_ptr<const Snapshot> SnapshotOf(int n) {
  std::vector<BatchRecord> records;
  for (int i = 1; i <= n; ++i) {
    records.push_back(BatchRecord{.id = IdAt(i), .day = IdAt(i).Day(), .dir = "d"});
  }
  auto catalog = Catalog::Create(std::move(records), nullptr);
  EXPECT_TRUE(catalog.ok()) << catalog.status();
  return (*catalog)->Pin();
}

std::vector<uint64_t> Sequences(const std::vector<FedLogBatch>& batches) {
  std::vector<uint64_t> out;
  for (const FedLogBatch& b : batches) out.push_back(b.sequence);
  return out;
}

TEST(LogFeedTest, KeepsTheNewestBatchesUpToItsCapacityAndSaysWhatItDropped) {
  LogFeed feed(LogFeedOptions{.capacity = 3, .keep_for = std::chrono::hours(1)});
  EXPECT_FALSE(feed.recording());
  std::unique_ptr<LogFeed::Subscription> reader = feed.Subscribe();
  EXPECT_TRUE(feed.recording());
  const std::shared_ptr<const Snapshot> snapshot = SnapshotOf(5);
  for (int i = 1; i <= 5; ++i) feed.Append(*snapshot, IdAt(i), 10 * i);
  feed.Append(*snapshot, IdAt(99), 1);  // not in the snapshot: ignored
  EXPECT_EQ(feed.last_sequence(), 5u);
  uint64_t first_kept = 0;
  const std::vector<FedLogBatch> all = feed.After(0, 10, &first_kept);
  EXPECT_EQ(first_kept, 3u);
  EXPECT_EQ(Sequences(all), (std::vector<uint64_t>{3, 4, 5}));
  EXPECT_EQ(all[0].batch->id(), IdAt(3));
  EXPECT_EQ(all[0].rows, 30u);
  EXPECT_EQ(Sequences(feed.After(3, 10)), (std::vector<uint64_t>{4, 5}));
  EXPECT_EQ(Sequences(feed.After(3, 1)), (std::vector<uint64_t>{4}));
  EXPECT_TRUE(feed.After(5, 10).empty());
  EXPECT_EQ(feed.SequenceOf(IdAt(4)), 4u);
  EXPECT_EQ(feed.SequenceOf(IdAt(1)), std::nullopt);
}

TEST(LogFeedTest, RecordsOnlyWhileSomeoneReadsOrReadWithinKeepFor) {
  LogFeed brief(LogFeedOptions{.capacity = 8, .keep_for = std::chrono::nanoseconds(0)});
  { std::unique_ptr<LogFeed::Subscription> reader = brief.Subscribe(); }
  EXPECT_FALSE(brief.recording());
  LogFeed lasting(LogFeedOptions{.capacity = 8, .keep_for = std::chrono::hours(1)});
  { std::unique_ptr<LogFeed::Subscription> reader = lasting.Subscribe(); }
  EXPECT_TRUE(lasting.recording());
}

TEST(LogFeedTest, BatchesOlderThanKeepForAreDroppedAndTheirFilesReleased) {
  LogFeed feed(LogFeedOptions{.capacity = 8, .keep_for = std::chrono::hours(1)});
  std::unique_ptr<LogFeed::Subscription> reader = feed.Subscribe();
  const std::shared_ptr<const Snapshot> snapshot = SnapshotOf(3);
  for (int i = 1; i <= 3; ++i) feed.Append(*snapshot, IdAt(i), 1);
  feed.Prune();
  EXPECT_EQ(Sequences(feed.After(0, 10)), (std::vector<uint64_t>{1, 2, 3}));
  // The feed holds references to the batches (their files stay on disk).
  EXPECT_GT(snapshot->batches()[0].use_count(), 1);

  LogFeed brief(LogFeedOptions{.capacity = 8, .keep_for = std::chrono::nanoseconds(0)});
  std::unique_ptr<LogFeed::Subscription> brief_reader = brief.Subscribe();
  for (int i = 1; i <= 3; ++i) brief.Append(*snapshot, IdAt(i), 1);
  brief.Prune();
  uint64_t first_kept = 0;
  EXPECT_TRUE(brief.After(0, 10, &first_kept).empty());
  EXPECT_EQ(first_kept, 4u);
  EXPECT_EQ(brief.last_sequence(), 3u);
}

TEST(LogFeedTest, TheListenerRunsAfterEveryAppend) {
  LogFeed feed;
  std::unique_ptr<LogFeed::Subscription> reader = feed.Subscribe();
  int calls = 0;
  feed.SetListener([&] { ++calls; });
  const std::shared_ptr<const Snapshot> snapshot = SnapshotOf(2);
  feed.Append(*snapshot, IdAt(1), 1);
  feed.Append(*snapshot, IdAt(2), 1);
  EXPECT_EQ(calls, 2);
  feed.SetListener(nullptr);
  feed.Append(*snapshot, IdAt(2), 1);
  EXPECT_EQ(calls, 2);
}

WriteRequest LogsRequest(int records) {
  std::string json = R"({"resourceLogs":[{"scopeLogs":[{"logRecords":[)";
  for (int i = 0; i < records; ++i) {
    json += std::string(i == 0 ? "" : ",") + R"({"timeUnixNano":"1750000000000000000",)" +
            R"("body":{"stringValue":"r)" + std::to_string(i) + R"("}})";
  }
  json += "]}]}]}";
  WriteRequest request;
  request.logs = std::make_unique<otlp::LogBatch>();
  EXPECT_TRUE(otlp::DecodeLogsJson(json, request.logs.get()).ok());
  request.rows = static_cast<uint64_t>(records);
  request.bytes = json.size();
  return request;
}

TEST(LogFeedTest, TheStorageEngineAppendsLogBatchesOnlyWhileSomeoneReads) {
  PosixFileSystem fs;
  testing::ScopedTempDir tmp("log_feed");
  StorageOptions options;
  options.writer.workers = 4;
  auto storage = Storage::Open(fs, tmp.path() + "/data", options);
  ASSERT_TRUE(storage.ok()) << storage.status();
  Storage& engine = **storage;
  ASSERT_TRUE(engine.Write(LogsRequest(3)).ok());
  EXPECT_EQ(engine.log_feed().last_sequence(), 0u) << "nobody reads: nothing appended";

  uint64_t start = 99;
  std::unique_ptr<LogFeed::Subscription> reader = engine.SubscribeLogFeed(&start);
  EXPECT_EQ(start, 0u);
  // Concurrent writers: every log batch published is appended once.
  std::vector<std::thread> writers;
  for (int t = 0; t < 4; ++t) {
    writers.emplace_back([&engine] {
      for (int i = 0; i < 10; ++i) EXPECT_TRUE(engine.Write(LogsRequest(2)).ok());
    });
  }
  for (std::thread& writer : writers) writer.join();
  WriteRequest empty;  // a batch without log records is not appended
  empty.traces = std::make_unique<otlp::TraceBatch>();
  empty.rows = 0;
  empty.bytes = 1;
  ASSERT_TRUE(engine.Write(std::move(empty)).ok());
  const std::vector<FedLogBatch> fed = engine.log_feed().After(0, 1000);
  uint64_t rows = 0;
  std::set<BatchId> ids;
  for (const FedLogBatch& b : fed) {
    rows += b.rows;
    EXPECT_TRUE(ids.insert(b.batch->id()).second);
    EXPECT_NE(engine.Pin()->Find(b.batch->id()), nullptr);
  }
  EXPECT_EQ(rows, 4u * 10 * 2);
  EXPECT_EQ(fed.size(), engine.log_feed().last_sequence());
  engine.Shutdown(std::chrono::seconds(5));
}

}  // namespace
}  // namespace strata::storage
