// Eviction against crashes and the readers that read evicted batches back:
// a crash after each sync of an eviction pass (marker written, files
// removed) leaves a data directory boot accepts (meta-json.md rule 11),
// whose batches read back the same rows and rollups through the read cache
// as before eviction, and that a later start finishes evicting; `strata
// rollups rebuild` judges evicted batches through the store, refuses to
// rewrite one, and without a store names what to give it.

#include <chrono>
#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "io/fault_injection_file_system.h"
#include "io/posix_file_system.h"
#include "objectstore/local_batch_store.h"
#include "rollups/rollup_rows.h"
#include "storage/check/batch_contents.h"
#include "storage/commit/data_dir.h"
#include "storage/format/evicted_marker.h"
#include "storage/format/layout.h"
#include "storage/offload/data_file_resolver.h"
#include "storage/offload/evictor.h"
#include "storage/offload/read_cache.h"
#include "storage/offload/uploader.h"
#include "storage/rollups_rebuild.h"
#include "storage/storage.h"
#include "storage/table/rollups_table.h"
#include "storage/testing/commit_testing.h"
#include "workload/traffic_generator.h"

namespace strata::storage {
namespace {

using ::testing::HasSubstr;

constexpr int kBatches = 4;

// Request k: spans, log records and metric points, the same every call.
WriteRequest EvictionTraffic(int k) {
  workload::TrafficGenerator generator(workload::TrafficOptions{
      .seed = static_cast<uint64_t>(k) + 70,
      .start_time_unix_nano = 1'750'000'000'000'000'000ULL + k * 90'000'000'000ULL});
  WriteRequest request;
  request.traces = generator.Traces(300);
  request.logs = generator.Logs(200);
  request.metrics = generator.Metrics(100);
  request.rows =
      request.traces->spans.size() + request.logs->logs.size() + request.metrics->point_count();
  request.bytes = request.rows * 200;
  return request;
}

UploaderOptions FastUploads() {
  UploaderOptions options;
  options.retry_initial = std::chrono::milliseconds(1);
  options.retry_max = std::chrono::milliseconds(20);
  options.poll_interval = std::chrono::milliseconds(20);
  return options;
}

// What readers get from one batch, read where its files are.
struct BatchAnswer {
  uint64_t spans = 0;
  rollups::RollupRows computed;  // from spans, logs and metrics
  rollups::RollupRows stored;    // rollups.parquet, or computed for format 1
  bool operator==(const BatchAnswer&) const = default;
};

class EvictionCrashTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto local = objectstore::LocalBatchStore::Open(posix_, tmp_.path() + "/store");
    ASSERT_TRUE(local.ok()) << local.status();
    store_ = *std::move(local);
  }
  void TearDown() override { InstallDataFileResolver(nullptr); }

  // Opens the data directory on `fs` with the store; evicted batches read
  // back through the cache, and with `evict_after` more are evicted.
  std::unique_ptr<Storage> Open(
      FileSystem& fs, std::chrono::microseconds evict_after = std::chrono::microseconds{0},
      bool with_store = true) {
    StorageOptions options;
    options.start_maintenance = false;
    options.writer.max_requests_per_batch = 1;
    if (with_store) {
      options.object_store = store_.get();
      options.upload = FastUploads();
      options.read_evicted = true;
      options.evict_after = evict_after;
      options.evict_poll_interval = std::chrono::hours(1);
    }
    absl::StatusOr<std::unique_ptr<Storage>> storage = Storage::Open(fs, data_, std::move(options));
    EXPECT_TRUE(storage.ok()) << storage.status();
    return storage.ok() ? *std::move(storage) : nullptr;
  }

  // kBatches uploaded batches, the first without rollups.parquet (format
  // 1: its rollups are computed from its tables).
  void WriteUploadedBatches() {
    for (int k = 0; k < kBatches; ++k) {
      StorageOptions options;
      options.start_maintenance = false;
      options.writer.max_requests_per_batch = 1;
      options.write_rollups = k > 0;
      options.object_store = store_.get();
      options.upload = FastUploads();
      absl::StatusOr<std::unique_ptr<Storage>> storage = Storage::Open(posix_, data_, options);
      ASSERT_TRUE(storage.ok()) << storage.status();
      ASSERT_TRUE((*storage)->Write(EvictionTraffic(k)).ok());
      for (const auto& batch : (*storage)->Pin()->batches()) {
        ASSERT_TRUE(
            (*storage)->uploader()->WaitUploaded(batch->id(), std::chrono::seconds(20)).ok());
      }
    }
  }

  // Every live batch's answer, read through the installed resolver.
  std::map<std::string, BatchAnswer> Answers(Storage& storage) {
    std::map<std::string, BatchAnswer> out;
    FileSystem& fs = storage.data_dir().fs();
    for (const auto& batch : storage.Pin()->batches()) {
      const DataFileOpener files = DataFilesOf(fs, *batch);
      BatchAnswer answer;
      absl::Status spans = ForEachSpansChunk(
          files, batch->meta(), [&](const otlp::TraceBatch& b) { answer.spans += b.spans.size(); });
      EXPECT_TRUE(spans.ok()) << batch->dir() << ": " << spans;
      absl::StatusOr<rollups::RollupRows> computed = ComputeBatchRollups(files, batch->meta());
      EXPECT_TRUE(computed.ok()) << batch->dir() << ": " << computed.status();
      absl::StatusOr<rollups::RollupRows> stored = ReadBatchRollups(files, batch->meta());
      EXPECT_TRUE(stored.ok()) << batch->dir() << ": " << stored.status();
      if (computed.ok()) answer.computed = *std::move(computed);
      if (stored.ok()) answer.stored = *std::move(stored);
      out[batch->meta().id] = std::move(answer);
    }
    return out;
  }

  // Batches with the marker, and Parquet files left in them.
  std::pair<int, int> MarkedAndLeftovers(Storage& storage) {
    FileSystem& fs = storage.data_dir().fs();
    int marked = 0, leftovers = 0;
    for (const auto& batch : storage.Pin()->batches()) {
      absl::StatusOr<bool> has = HasEvictedMarker(fs, batch->dir());
      EXPECT_TRUE(has.ok()) << has.status();
      if (!has.ok() || !*has) continue;
      ++marked;
      absl::StatusOr<std::vector<std::string>> names = fs.ListDir(batch->dir());
      EXPECT_TRUE(names.ok());
      if (!names.ok()) continue;
      for (const std::string& name : *names) leftovers += IsEvictableFile(name) ? 1 : 0;
    }
    return {marked, leftovers};
  }

  // One eviction pass over every batch on `fs`, which reaches its crash
  // point after `syncs` syncs. The evictor's thread makes the pass at
  // start; RunOnce() waits for it and removes what it left pending.
  // Returns whether the crash point was reached.
  bool EvictWithCrashAfter(FaultInjectionFileSystem& fs, uint64_t syncs) {
    DataDirOptions dir_options;
    dir_options.validate_batch = [](FileSystem& fs, const std::string& batch_dir,
                                    const BatchMeta& meta) {
      return CheckBatchContents(fs, batch_dir, meta);
    };
    absl::StatusOr<std::unique_ptr<DataDir>> dir = OpenDataDir(fs, data_, dir_options);
    EXPECT_TRUE(dir.ok()) << dir.status();
    if (!dir.ok()) return false;
    absl::StatusOr<std::unique_ptr<Uploader>> uploader =
        Uploader::Start(fs, (*dir)->catalog(), *store_, FastUploads());
    EXPECT_TRUE(uploader.ok()) << uploader.status();
    if (!uploader.ok()) return false;
    for (const auto& batch : (*dir)->catalog().Pin()->batches()) {
      EXPECT_TRUE((*uploader)->WaitUploaded(batch->id(), std::chrono::seconds(20)).ok())
          << batch->dir();
    }
    // Its thread pins no snapshot from now on, so a replaced record is
    // released as soon as the pass lets go of it.
    (*uploader)->Stop();
    absl::StatusOr<std::unique_ptr<ReadCache>> cache =
        ReadCache::Open(fs, (*dir)->paths().QueryCache(), *store_, ReadCacheOptions{});
    EXPECT_TRUE(cache.ok()) << cache.status();
    if (!cache.ok()) return false;
    DataFileResolver resolver(*std::move(cache), *store_);
    fs.CrashAfterSyncs(syncs);
    std::unique_ptr<Evictor> evictor =
        Evictor::Start(fs, (*dir)->catalog(), **uploader, resolver,
                       EvictorOptions{.evict_after = std::chrono::microseconds(1),
                                      .poll_interval = std::chrono::hours(1)});
    evictor->RunOnce();
    const bool crashed = fs.crash_point_reached();
    if (!crashed) {
      EXPECT_EQ(evictor->Stats().batches_evicted, static_cast<uint64_t>(kBatches));
      EXPECT_EQ(evictor->Stats().failures, 0u);
    }
    // The process dies: nothing more reaches the disk.
    evictor.reset();
    (*uploader).reset();
    (*dir).reset();
    return crashed;
  }

  PosixFileSystem posix_;
  testing::ScopedTempDir tmp_{"eviction-crash"};
  const std::string data_ = tmp_.path() + "/data";
  std::unique_ptr<objectstore::LocalBatchStore> store_;
};

TEST_F(EvictionCrashTest, ACrashAfterEachSyncOfEvictionBootsAndReadsTheSameAnswers) {
  WriteUploadedBatches();
  std::map<std::string, BatchAnswer> before;
  {
    std::unique_ptr<Storage> storage = Open(posix_);
    ASSERT_NE(storage, nullptr);
    before = Answers(*storage);
  }
  ASSERT_EQ(before.size(), static_cast<size_t>(kBatches));
  const std::string pristine = tmp_.path() + "/pristine";
  std::filesystem::copy(data_, pristine, std::filesystem::copy_options::recursive);

  uint64_t syncs = 0;
  for (;; ++syncs) {
    SCOPED_TRACE("crash after sync " + std::to_string(syncs));
    ASSERT_LT(syncs, 100u) << "the eviction pass never ends";
    std::filesystem::remove_all(data_);
    std::filesystem::copy(pristine, data_, std::filesystem::copy_options::recursive);
    FaultInjectionFileSystem fs(&posix_, syncs);
    const bool crashed = EvictWithCrashAfter(fs, syncs);
    ASSERT_TRUE(fs.SimulateCrash().ok());
    {
      // Boot accepts whatever the crash left (no marker and whole files;
      // a marker and whole, partial or missing Parquet files), and every
      // batch reads back as before: local ones from their files, marked
      // ones from the store.
      std::unique_ptr<Storage> storage = Open(fs);
      ASSERT_NE(storage, nullptr) << "boot refused the state the crash left";
      EXPECT_EQ(Answers(*storage), before);
      const auto [marked, leftovers] = MarkedAndLeftovers(*storage);
      if (!crashed) {
        EXPECT_EQ(marked, kBatches);
        EXPECT_EQ(leftovers, 0);
      }
    }
    {
      // A server with eviction finishes the job: leftovers of marked
      // batches go at start, and the answers stay.
      std::unique_ptr<Storage> storage = Open(fs, std::chrono::hours(24 * 36500));
      ASSERT_NE(storage, nullptr);
      EXPECT_EQ(MarkedAndLeftovers(*storage).second, 0);
      EXPECT_EQ(Answers(*storage), before);
    }
    if (!crashed) break;
  }
  // Each batch's eviction syncs its marker file, the marker's directory
  // entry and the directory after the removals.
  EXPECT_GE(syncs, static_cast<uint64_t>(3 * kBatches));
}

TEST_F(EvictionCrashTest, RollupsRebuildJudgesEvictedBatchesThroughTheStoreAndRewritesNone) {
  WriteUploadedBatches();
  RollupsRebuildOptions check;
  check.check_only = true;
  std::vector<std::string> verdicts_before;
  check.on_batch = [&](const std::string&, const BatchId& id, RollupsVerdict verdict,
                       const std::optional<BatchId>&) {
    verdicts_before.push_back(id.ToString() + " " + RollupsVerdictName(verdict));
  };
  {
    std::unique_ptr<Storage> storage = Open(posix_);
    ASSERT_NE(storage, nullptr);
    absl::StatusOr<RollupsRebuildReport> report = RebuildRollups(*storage, check);
    ASSERT_TRUE(report.ok()) << report.status();
    EXPECT_EQ(report->missing, 1u);  // the format 1 batch
    EXPECT_EQ(report->equal, static_cast<size_t>(kBatches - 1));
  }
  {
    FaultInjectionFileSystem fs(&posix_, 1);
    ASSERT_FALSE(EvictWithCrashAfter(fs, 1'000'000));
  }
  std::vector<std::string> verdicts_after;
  check.on_batch = [&](const std::string&, const BatchId& id, RollupsVerdict verdict,
                       const std::optional<BatchId>&) {
    verdicts_after.push_back(id.ToString() + " " + RollupsVerdictName(verdict));
  };
  {
    std::unique_ptr<Storage> storage = Open(posix_);
    ASSERT_NE(storage, nullptr);
    ASSERT_EQ(MarkedAndLeftovers(*storage), std::make_pair(kBatches, 0));
    absl::StatusOr<RollupsRebuildReport> report = RebuildRollups(*storage, check);
    ASSERT_TRUE(report.ok()) << report.status();
    EXPECT_EQ(verdicts_after, verdicts_before);
    // Rewriting the format 1 batch would need its files: refused, named.
    absl::StatusOr<RollupsRebuildReport> rewrite = RebuildRollups(*storage, {});
    ASSERT_FALSE(rewrite.ok());
    EXPECT_TRUE(absl::IsFailedPrecondition(rewrite.status())) << rewrite.status();
    EXPECT_THAT(std::string(rewrite.status().message()),
                HasSubstr("does not rewrite an evicted batch"));
    EXPECT_EQ(storage->Pin()->size(), static_cast<size_t>(kBatches));
  }
  // Without the store, an evicted batch cannot be read: the message says
  // what to give.
  std::unique_ptr<Storage> storage = Open(posix_, std::chrono::microseconds{0}, false);
  ASSERT_NE(storage, nullptr);
  absl::StatusOr<RollupsRebuildReport> report = RebuildRollups(*storage, check);
  ASSERT_FALSE(report.ok());
  EXPECT_TRUE(absl::IsFailedPrecondition(report.status())) << report.status();
  EXPECT_THAT(std::string(report.status().message()), HasSubstr("--object-store"));
}

}  // namespace
}  // namespace strata::storage
