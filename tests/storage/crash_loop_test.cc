// The crash loop (SQLite's crash tests, RocksDB's FaultInjectionTestFS): a
// workload commits synthetic batches, publishes them, and now and then
// deletes one by commit.md's deletion protocol, all through a
// FaultInjectionFileSystem. For each seed the loop crashes after the 1st,
// 2nd, ... Nth sync the workload makes (N measured by a run without a
// crash), drops what was not durable, reopens with OpenDataDir and checks:
//
//   1. boot succeeds;
//   2. every acknowledged batch (Commit returned OK, no deletion started)
//      is served with identical file bytes;
//   3. every served batch is one the workload tried to commit, byte for
//      byte: no partial batch is visible;
//   4. staging/ is empty;
//   5. a new commit works, and its id is greater than every id before.
//
// Variants tear unsynced writes instead of dropping them, crash a second
// time during recovery, and inject EIO/ENOSPC one time in N on top.
// STRATA_CRASH_SEEDS scales the number of seeds; every failure prints the
// seed and crash point, which replay exactly.

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "fmt/format.h"
#include "gtest/gtest.h"
#include "io/fault_injection_file_system.h"
#include "io/posix_file_system.h"
#include "storage/commit/batch_committer.h"
#include "storage/commit/data_dir.h"
#include "storage/testing/commit_testing.h"

namespace strata::storage {
namespace {

using testing::RandomEncodedBatch;
using testing::ScopedTempDir;

// 2025-06-14 09:30:15.123456 UTC.
constexpr int64_t kStartMicros = 1749893415123456;
constexpr int64_t kHalfDayMicros = int64_t{43200} * 1000000;
constexpr int kBatchesPerRun = 6;
constexpr size_t kMaxFileBytes = 3000;

int SeedCount(int default_count) {
  const char* env = std::getenv("STRATA_CRASH_SEEDS");
  if (env == nullptr) return default_count;
  const int count = std::atoi(env);
  return count > 0 ? count : default_count;
}

struct Variant {
  const char* name;
  bool tear_unsynced_writes = false;
  bool crash_during_recovery = false;
  // EIO/ENOSPC one time in N on the write path (0: none).
  uint32_t faults_one_in = 0;
};

// What the workload did, for the checks after the crash.
struct Outcome {
  std::map<std::string, EncodedBatch> attempted;  // every batch handed to Commit()
  std::set<std::string> acknowledged;             // committed and published, no deletion started
  std::string largest_id;
  // Counts, so the tests can show the workload did what they claim.
  int commits_failed = 0;
  int deletions_started = 0;
};

class CrashLoop {
 public:
  CrashLoop(uint64_t seed, Variant variant) : seed_(seed), variant_(variant) {}

  // Syncs the workload makes when nothing crashes.
  uint64_t CountSyncs() {
    Setup();
    if (::testing::Test::HasFatalFailure()) return 0;
    const uint64_t before = fs_->sync_count();
    RunWorkload(std::nullopt);
    return fs_->sync_count() - before;
  }

  // Runs the workload with a crash after `crash_after_syncs` syncs (none
  // if nullopt), crashes, reopens and checks.
  void CrashAndCheck(std::optional<uint64_t> crash_after_syncs) {
    Setup();
    if (::testing::Test::HasFatalFailure()) return;
    RunWorkload(crash_after_syncs);
    absl::Status crashed =
        fs_->SimulateCrash({.tear_unsynced_writes = variant_.tear_unsynced_writes});
    ASSERT_TRUE(crashed.ok()) << crashed;
    fs_->ClearFaults();
    if (variant_.crash_during_recovery) CrashDuringRecovery();
    Check();
  }

  const Outcome& outcome() const { return outcome_; }

 private:
  void Setup() {
    temp_ = std::make_unique<ScopedTempDir>("crash_loop");
    ASSERT_FALSE(temp_->path().empty());
    data_ = temp_->path() + "/data";
    fs_ = std::make_unique<FaultInjectionFileSystem>(&posix_, seed_);
    rng_.seed(seed_);
    *now_ = kStartMicros;
    outcome_ = Outcome{};
  }

  DataDirOptions Options() {
    DataDirOptions options;
    options.clock = [now = now_] { return *now; };
    options.on_retire = [retired = retired_](const LiveBatch& batch) {
      retired->push_back(batch.id());
    };
    return options;
  }

  void RunWorkload(std::optional<uint64_t> crash_after_syncs) {
    absl::StatusOr<std::unique_ptr<DataDir>> dir = OpenDataDir(*fs_, data_, Options());
    ASSERT_TRUE(dir.ok()) << dir.status();
    if (crash_after_syncs.has_value()) fs_->CrashAfterSyncs(*crash_after_syncs);
    if (variant_.faults_one_in != 0) {
      for (IoOperation op :
           {IoOperation::kAppend, IoOperation::kSync, IoOperation::kSyncDir, IoOperation::kRename,
            IoOperation::kCreateDir, IoOperation::kOpenForWrite, IoOperation::kRemove}) {
        fs_->InjectFaults(op, variant_.faults_one_in, rng_() % 2 == 0 ? EIO : ENOSPC);
      }
    }
    for (int i = 0; i < kBatchesPerRun && !fs_->crash_point_reached(); ++i) {
      CommitOne(**dir);
      if (rng_() % 4 == 0) DeleteOne(**dir);
      // Sometimes half a day passes, so commits create day directories.
      *now_ += rng_() % 3 == 0 ? kHalfDayMicros : 1000;
    }
  }

  void CommitOne(DataDir& dir) {
    absl::StatusOr<BatchId> id = dir.issuer().Issue(0);
    ASSERT_TRUE(id.ok()) << id.status();
    EncodedBatch batch = RandomEncodedBatch(*id, rng_, kMaxFileBytes);
    const std::string key = id->ToString();
    outcome_.attempted.insert_or_assign(key, batch);
    outcome_.largest_id = std::max(outcome_.largest_id, key);
    absl::StatusOr<CommittedBatch> committed = dir.committer().Commit(batch);
    if (!committed.ok()) {
      EXPECT_EQ(committed.status().code(), absl::StatusCode::kUnavailable) << committed.status();
      ++outcome_.commits_failed;
      return;
    }
    BatchRecord record{.id = *id,
                       .day = committed->meta.day,
                       .dir = committed->dir,
                       .meta = committed->meta,
                       .attachment = nullptr};
    ASSERT_TRUE(dir.catalog().Publish({record}, {}).ok());
    outcome_.acknowledged.insert(key);
  }

  // Removes a random acknowledged batch from the catalog and deletes it
  // once retired (here at once: nothing else pins it).
  void DeleteOne(DataDir& dir) {
    if (outcome_.acknowledged.empty()) return;
    auto victim = outcome_.acknowledged.begin();
    std::advance(victim, rng_() % outcome_.acknowledged.size());
    const BatchId id = *BatchId::Parse(*victim);
    outcome_.acknowledged.erase(victim);  // from here on it may or may not survive
    ++outcome_.deletions_started;
    ASSERT_TRUE(dir.catalog().Publish({}, {id}).ok());
    ASSERT_EQ(retired_->size(), 1u);
    retired_->clear();
    const std::string day = DayOfNanos(id.stamp_nanos());
    (void)DeleteBatch(*fs_, dir.paths(), day, id);
  }

  // Reopens with a crash after each of the first few syncs of recovery.
  void CrashDuringRecovery() {
    const uint64_t crash_after = 1 + rng_() % 4;
    fs_->CrashAfterSyncs(crash_after);
    {
      absl::StatusOr<std::unique_ptr<DataDir>> dir = OpenDataDir(*fs_, data_, Options());
      // Either boot finished before the crash point or it failed with EIO.
      if (!dir.ok()) EXPECT_EQ(dir.status().code(), absl::StatusCode::kUnavailable) << dir.status();
    }
    absl::Status crashed =
        fs_->SimulateCrash({.tear_unsynced_writes = variant_.tear_unsynced_writes});
    ASSERT_TRUE(crashed.ok()) << crashed;
  }

  void Check() {
    absl::StatusOr<std::unique_ptr<DataDir>> reopened = OpenDataDir(*fs_, data_, Options());
    ASSERT_TRUE(reopened.ok()) << "boot failed: " << reopened.status();
    DataDir& dir = **reopened;
    const std::shared_ptr<const Snapshot> snapshot = dir.catalog().Pin();
    std::set<std::string> served;
    for (const auto& batch : snapshot->batches()) {
      const std::string key = batch->id().ToString();
      served.insert(key);
      auto attempted = outcome_.attempted.find(key);
      ASSERT_NE(attempted, outcome_.attempted.end()) << "served a batch never committed: " << key;
      ExpectFiles(batch->dir(), attempted->second);
    }
    for (const std::string& key : outcome_.acknowledged) {
      EXPECT_EQ(served.count(key), 1u) << "acknowledged batch lost: " << key;
    }
    absl::StatusOr<std::vector<std::string>> staging = posix_.ListDir(dir.paths().Staging());
    ASSERT_TRUE(staging.ok()) << staging.status();
    EXPECT_TRUE(staging->empty()) << "staging holds " << staging->front();

    absl::StatusOr<BatchId> id = dir.issuer().Issue(0);
    ASSERT_TRUE(id.ok()) << id.status();
    EXPECT_GT(id->ToString(), outcome_.largest_id);
    const EncodedBatch batch = RandomEncodedBatch(*id, rng_, kMaxFileBytes);
    absl::StatusOr<CommittedBatch> committed = dir.committer().Commit(batch);
    ASSERT_TRUE(committed.ok()) << "commit after reboot: " << committed.status();
    ExpectFiles(committed->dir, batch);
  }

  // The batch directory holds meta.json and exactly `batch`'s files.
  void ExpectFiles(const std::string& batch_dir, const EncodedBatch& batch) {
    absl::StatusOr<std::vector<std::string>> names = posix_.ListDir(batch_dir);
    ASSERT_TRUE(names.ok()) << names.status();
    EXPECT_EQ(names->size(), batch.files.size() + 1) << batch_dir;
    for (const EncodedFile& file : batch.files) {
      absl::StatusOr<std::string> bytes = posix_.ReadFile(batch_dir + "/" + file.name);
      ASSERT_TRUE(bytes.ok()) << bytes.status();
      EXPECT_TRUE(*bytes == file.bytes) << batch_dir << "/" << file.name << " differs";
    }
  }

  const uint64_t seed_;
  const Variant variant_;
  PosixFileSystem posix_;
  std::unique_ptr<ScopedTempDir> temp_;
  std::string data_;
  std::unique_ptr<FaultInjectionFileSystem> fs_;
  std::mt19937_64 rng_;
  std::shared_ptr<int64_t> now_ = std::make_shared<int64_t>(kStartMicros);
  std::shared_ptr<std::vector<BatchId>> retired_ = std::make_shared<std::vector<BatchId>>();
  Outcome outcome_;
};

// Crashes after every sync of the workload, for `seeds` seeds.
void RunCrashAtEverySync(Variant variant, int seeds) {
  int deletions = 0;
  for (int s = 0; s < seeds; ++s) {
    const uint64_t seed = 1000 + s;
    uint64_t syncs = 0;
    {
      SCOPED_TRACE(fmt::format("variant {} seed {}: counting syncs", variant.name, seed));
      CrashLoop loop(seed, variant);
      syncs = loop.CountSyncs();
      ASSERT_GT(syncs, uint64_t{kBatchesPerRun});
      EXPECT_EQ(loop.outcome().acknowledged.size() + loop.outcome().deletions_started,
                size_t{kBatchesPerRun});
      deletions += loop.outcome().deletions_started;
    }
    for (uint64_t k = 1; k <= syncs + 1; ++k) {
      SCOPED_TRACE(fmt::format("variant {} seed {} crash after sync {} of {}", variant.name, seed,
                               k, syncs));
      CrashLoop loop(seed, variant);
      loop.CrashAndCheck(k <= syncs ? std::optional<uint64_t>(k) : std::nullopt);
      if (::testing::Test::HasFailure()) return;  // the trace names the replay
    }
  }
  EXPECT_GT(deletions, 0) << "the workload never deleted a batch";
}

TEST(CrashLoopTest, CrashAtEverySyncKeepsEveryAcknowledgedBatch) {
  RunCrashAtEverySync({.name = "drop unsynced"}, SeedCount(12));
}

TEST(CrashLoopTest, TornUnsyncedWritesNeverBecomeVisible) {
  RunCrashAtEverySync({.name = "torn writes", .tear_unsynced_writes = true},
                      std::max(1, SeedCount(12) / 2));
}

TEST(CrashLoopTest, SecondCrashDuringRecoveryIsRecoveredToo) {
  RunCrashAtEverySync({.name = "crash during recovery", .crash_during_recovery = true},
                      std::max(1, SeedCount(12) / 2));
}

TEST(CrashLoopTest, InjectedEioAndEnospcThenACrash) {
  // Faults make commits fail (and cleanups, and deletions) at random; a
  // crash at a random point follows. One run per seed.
  const int seeds = SeedCount(12) * 10;
  int failed = 0;
  size_t acknowledged = 0;
  for (int s = 0; s < seeds; ++s) {
    const uint64_t seed = 5000 + s;
    const uint32_t one_in = 6 + static_cast<uint32_t>(seed % 10);
    const Variant variant{.name = "eio/enospc", .faults_one_in = one_in};
    const uint64_t crash_after = 1 + seed * 7 % 60;
    SCOPED_TRACE(fmt::format("variant {} (1 in {}) seed {} crash after sync {}", variant.name,
                             one_in, seed, crash_after));
    CrashLoop loop(seed, variant);
    loop.CrashAndCheck(crash_after);
    if (::testing::Test::HasFailure()) return;
    failed += loop.outcome().commits_failed;
    acknowledged += loop.outcome().acknowledged.size();
  }
  EXPECT_GT(failed, 0) << "no injected fault failed a commit";
  EXPECT_GT(acknowledged, 0u) << "no commit succeeded";
}

}  // namespace
}  // namespace strata::storage
