#include "io/fault_injection_file_system.h"

#include <cerrno>
#include <random>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "fmt/format.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "io/posix_file_system.h"

namespace strata {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

constexpr uint64_t kSeed = 20240601;

// A fresh, durable directory per test (made through the POSIX file system,
// so the fault model takes it as durable), removed after the test.
class FaultInjectionFileSystemTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    std::random_device random;
    for (int attempt = 0; attempt < 10; ++attempt) {
      root_ = fmt::format("{}strata_fault_{}_{:x}", ::testing::TempDir(), info->name(), random());
      absl::Status created = posix_.CreateDir(root_);
      if (created.ok()) return;
      ASSERT_TRUE(absl::IsAlreadyExists(created)) << created;
    }
    FAIL() << "no unique temp dir";
  }
  void TearDown() override { EXPECT_TRUE(posix_.RemoveAll(root_).ok()); }

  std::string Path(std::string_view name) const { return fmt::format("{}/{}", root_, name); }

  // Writes `content` to `name` through `fs_`, syncing the data if asked.
  void Write(std::string_view name, std::string_view content, bool sync) {
    auto file = fs_.NewWritableFile(Path(name));
    ASSERT_TRUE(file.ok()) << file.status();
    ASSERT_TRUE((*file)->Append(content).ok());
    if (sync) ASSERT_TRUE((*file)->Sync().ok());
    ASSERT_TRUE((*file)->Close().ok());
  }

  bool Exists(std::string_view name) {
    auto exists = posix_.Exists(Path(name));
    EXPECT_TRUE(exists.ok()) << exists.status();
    return exists.ok() && *exists;
  }

  std::string Read(std::string_view name) {
    auto content = posix_.ReadFile(Path(name));
    EXPECT_TRUE(content.ok()) << content.status();
    return content.ok() ? *content : "<unreadable>";
  }

  void Crash(CrashOptions options = {}) {
    absl::Status crashed = fs_.SimulateCrash(options);
    ASSERT_TRUE(crashed.ok()) << crashed;
  }

  PosixFileSystem posix_;
  FaultInjectionFileSystem fs_{&posix_, kSeed};
  std::string root_;
};

TEST_F(FaultInjectionFileSystemTest, UnsyncedDataIsLostByCrash) {
  Write("f", "unsynced", /*sync=*/false);
  ASSERT_TRUE(fs_.SyncDir(root_).ok());
  EXPECT_EQ(Read("f"), "unsynced");
  Crash();
  EXPECT_TRUE(Exists("f"));
  EXPECT_EQ(Read("f"), "");
}

TEST_F(FaultInjectionFileSystemTest, SyncedDataSurvivesCrashButLaterAppendsDoNot) {
  auto file = fs_.NewWritableFile(Path("f"));
  ASSERT_TRUE(file.ok());
  ASSERT_TRUE((*file)->Append("durable").ok());
  ASSERT_TRUE((*file)->Sync().ok());
  ASSERT_TRUE((*file)->Append("+lost").ok());
  ASSERT_TRUE(fs_.SyncDir(root_).ok());
  Crash();
  EXPECT_EQ(Read("f"), "durable");
}

TEST_F(FaultInjectionFileSystemTest, CreatedFileVanishesWhenParentIsNotSynced) {
  Write("f", "synced data", /*sync=*/true);
  Crash();
  EXPECT_FALSE(Exists("f"));
}

TEST_F(FaultInjectionFileSystemTest, CreatedFileSurvivesWhenParentIsSynced) {
  Write("f", "synced data", /*sync=*/true);
  ASSERT_TRUE(fs_.SyncDir(root_).ok());
  Crash();
  EXPECT_EQ(Read("f"), "synced data");
}

TEST_F(FaultInjectionFileSystemTest, SyncingAnotherDirectoryDoesNotMakeAnEntryDurable) {
  ASSERT_TRUE(fs_.CreateDir(Path("other")).ok());
  ASSERT_TRUE(fs_.SyncDir(root_).ok());
  Write("f", "data", /*sync=*/true);
  ASSERT_TRUE(fs_.SyncDir(Path("other")).ok());
  Crash();
  EXPECT_TRUE(Exists("other"));
  EXPECT_FALSE(Exists("f"));
}

TEST_F(FaultInjectionFileSystemTest, CreatedDirectoryVanishesWithItsContents) {
  ASSERT_TRUE(fs_.CreateDirs(Path("a/b")).ok());
  Write("a/b/f", "data", /*sync=*/true);
  // The file's own directory is synced, but "a" itself never reached disk.
  ASSERT_TRUE(fs_.SyncDir(Path("a/b")).ok());
  ASSERT_TRUE(fs_.SyncDir(Path("a")).ok());
  Crash();
  EXPECT_FALSE(Exists("a"));
}

TEST_F(FaultInjectionFileSystemTest, CreateDirsMakesEachLevelPendingInItsParent) {
  ASSERT_TRUE(fs_.CreateDirs(Path("a/b/c")).ok());
  ASSERT_TRUE(fs_.SyncDir(root_).ok());
  ASSERT_TRUE(fs_.SyncDir(Path("a")).ok());
  Crash();
  EXPECT_TRUE(Exists("a/b"));
  EXPECT_FALSE(Exists("a/b/c"));
}

TEST_F(FaultInjectionFileSystemTest, RenameWithoutParentSyncIsRevertedByCrash) {
  Write("tmp", "payload", /*sync=*/true);
  ASSERT_TRUE(fs_.SyncDir(root_).ok());
  ASSERT_TRUE(fs_.RenameFile(Path("tmp"), Path("final")).ok());
  Crash();
  EXPECT_FALSE(Exists("final"));
  EXPECT_EQ(Read("tmp"), "payload");
}

TEST_F(FaultInjectionFileSystemTest, RenameWithParentSyncSurvivesCrash) {
  Write("tmp", "payload", /*sync=*/true);
  ASSERT_TRUE(fs_.SyncDir(root_).ok());
  ASSERT_TRUE(fs_.RenameFile(Path("tmp"), Path("final")).ok());
  ASSERT_TRUE(fs_.SyncDir(root_).ok());
  Crash();
  EXPECT_FALSE(Exists("tmp"));
  EXPECT_EQ(Read("final"), "payload");
}

TEST_F(FaultInjectionFileSystemTest, RenameOverAnExistingFileRestoresItOnCrash) {
  Write("current", "old version", /*sync=*/true);
  Write("next", "new version", /*sync=*/true);
  ASSERT_TRUE(fs_.SyncDir(root_).ok());
  ASSERT_TRUE(fs_.RenameFile(Path("next"), Path("current")).ok());
  EXPECT_EQ(Read("current"), "new version");
  Crash();
  EXPECT_EQ(Read("current"), "old version");
  EXPECT_EQ(Read("next"), "new version");
}

TEST_F(FaultInjectionFileSystemTest, RenamedUnsyncedDataIsLostAtItsNewName) {
  Write("tmp", "never synced", /*sync=*/false);
  ASSERT_TRUE(fs_.SyncDir(root_).ok());
  ASSERT_TRUE(fs_.RenameFile(Path("tmp"), Path("final")).ok());
  ASSERT_TRUE(fs_.SyncDir(root_).ok());
  Crash();
  EXPECT_EQ(Read("final"), "");
}

// The commit protocol from docs/format/commit.md, fully synced, survives a crash; the
// same protocol without the final parent sync leaves the batch in staging.
TEST_F(FaultInjectionFileSystemTest, BatchDirectoryRenameIsDurableOnlyAfterParentSync) {
  ASSERT_TRUE(fs_.CreateDirs(Path("staging")).ok());
  ASSERT_TRUE(fs_.CreateDirs(Path("days/d1")).ok());
  ASSERT_TRUE(fs_.SyncDir(root_).ok());
  ASSERT_TRUE(fs_.SyncDir(Path("days")).ok());
  for (const char* id : {"b1", "b2"}) {
    ASSERT_TRUE(fs_.CreateDir(Path(fmt::format("staging/{}", id))).ok());
    Write(fmt::format("staging/{}/spans", id), fmt::format("spans of {}", id), true);
    ASSERT_TRUE(fs_.SyncDir(Path(fmt::format("staging/{}", id))).ok());
    ASSERT_TRUE(fs_.SyncDir(Path("staging")).ok());
    ASSERT_TRUE(fs_.RenameFile(Path(fmt::format("staging/{}", id)),
                               Path(fmt::format("days/d1/{}.batch", id)))
                    .ok());
  }
  ASSERT_TRUE(fs_.SyncDir(Path("days/d1")).ok());  // publishes b1 and b2
  ASSERT_TRUE(fs_.CreateDir(Path("staging/b3")).ok());
  Write("staging/b3/spans", "spans of b3", true);
  ASSERT_TRUE(fs_.SyncDir(Path("staging/b3")).ok());
  ASSERT_TRUE(fs_.SyncDir(Path("staging")).ok());
  ASSERT_TRUE(fs_.RenameFile(Path("staging/b3"), Path("days/d1/b3.batch")).ok());
  Crash();
  EXPECT_EQ(Read("days/d1/b1.batch/spans"), "spans of b1");
  EXPECT_EQ(Read("days/d1/b2.batch/spans"), "spans of b2");
  EXPECT_FALSE(Exists("days/d1/b3.batch"));
  EXPECT_EQ(Read("staging/b3/spans"), "spans of b3");
  EXPECT_THAT(*posix_.ListDir(Path("staging")), ElementsAre("b3"));
}

TEST_F(FaultInjectionFileSystemTest, RemoveWithoutParentSyncIsUndoneByCrash) {
  Write("f", "keep me", /*sync=*/true);
  ASSERT_TRUE(fs_.SyncDir(root_).ok());
  ASSERT_TRUE(fs_.RemoveFile(Path("f")).ok());
  EXPECT_FALSE(Exists("f"));
  Crash();
  EXPECT_EQ(Read("f"), "keep me");
}

TEST_F(FaultInjectionFileSystemTest, RemoveWithParentSyncSurvivesCrash) {
  Write("f", "gone", /*sync=*/true);
  ASSERT_TRUE(fs_.SyncDir(root_).ok());
  ASSERT_TRUE(fs_.RemoveFile(Path("f")).ok());
  ASSERT_TRUE(fs_.SyncDir(root_).ok());
  Crash();
  EXPECT_FALSE(Exists("f"));
}

TEST_F(FaultInjectionFileSystemTest, RemoveAllWithoutSyncIsUndoneByCrash) {
  // Made before the fault model saw it, so it counts as durable (invariant 3).
  ASSERT_TRUE(posix_.CreateDirs(Path("tree/sub")).ok());
  ASSERT_TRUE(WriteFile(posix_, Path("tree/sub/leaf"), "leaf").ok());
  ASSERT_TRUE(WriteFile(posix_, Path("tree/top"), "top").ok());
  ASSERT_TRUE(fs_.RemoveAll(Path("tree")).ok());
  EXPECT_FALSE(Exists("tree"));
  Crash();
  EXPECT_EQ(Read("tree/sub/leaf"), "leaf");
  EXPECT_EQ(Read("tree/top"), "top");
}

TEST_F(FaultInjectionFileSystemTest, RemovedFileComesBackWithOnlyItsSyncedBytes) {
  auto file = fs_.NewWritableFile(Path("f"));
  ASSERT_TRUE(file.ok());
  ASSERT_TRUE((*file)->Append("synced").ok());
  ASSERT_TRUE((*file)->Sync().ok());
  ASSERT_TRUE((*file)->Append("+unsynced").ok());
  ASSERT_TRUE(fs_.SyncDir(root_).ok());
  ASSERT_TRUE(fs_.RemoveFile(Path("f")).ok());
  Crash();
  EXPECT_EQ(Read("f"), "synced");
}

TEST_F(FaultInjectionFileSystemTest, TruncatingReopenKeepsOldContentUntilSynced) {
  Write("f", "old durable content", /*sync=*/true);
  ASSERT_TRUE(fs_.SyncDir(root_).ok());
  Write("f", "new", /*sync=*/false);
  Crash();
  EXPECT_EQ(Read("f"), "old durable content");

  Write("f", "new", /*sync=*/true);
  Crash();
  EXPECT_EQ(Read("f"), "new");
}

TEST_F(FaultInjectionFileSystemTest, TornWriteKeepsASeededPrefixOfUnsyncedBytes) {
  const std::string synced = "SYNCED";
  std::string unsynced(1000, '\0');
  for (size_t i = 0; i < unsynced.size(); ++i) unsynced[i] = static_cast<char>('a' + i % 26);
  std::set<size_t> kept_sizes;
  for (uint64_t seed = 1; seed <= 20; ++seed) {
    std::string name = fmt::format("f{}", seed);
    std::vector<size_t> sizes;
    for (int replay = 0; replay < 2; ++replay) {
      FaultInjectionFileSystem fs(&posix_, seed);
      auto file = fs.NewWritableFile(Path(name));
      ASSERT_TRUE(file.ok());
      ASSERT_TRUE((*file)->Append(synced).ok());
      ASSERT_TRUE((*file)->Sync().ok());
      ASSERT_TRUE((*file)->Append(unsynced).ok());
      ASSERT_TRUE(fs.SyncDir(root_).ok());
      ASSERT_TRUE(fs.SimulateCrash(CrashOptions{.tear_unsynced_writes = true}).ok());
      std::string content = Read(name);
      ASSERT_GE(content.size(), synced.size());
      EXPECT_EQ(content, (synced + unsynced).substr(0, content.size())) << "seed " << seed;
      sizes.push_back(content.size());
    }
    EXPECT_EQ(sizes[0], sizes[1]) << "seed " << seed << " must tear the same way twice";
    kept_sizes.insert(sizes[0]);
  }
  // Twenty seeds over 1001 possible tears: a real spread, not all-or-nothing.
  EXPECT_GE(kept_sizes.size(), 10u);
  EXPECT_GT(*kept_sizes.rbegin(), synced.size());
}

TEST_F(FaultInjectionFileSystemTest, CrashWithoutTearingDropsAllUnsyncedBytes) {
  Write("f", std::string(5000, 'x'), /*sync=*/false);
  ASSERT_TRUE(fs_.SyncDir(root_).ok());
  Crash(CrashOptions{.tear_unsynced_writes = false});
  EXPECT_EQ(Read("f"), "");
}

// Returns which of `count` appends failed under a 1-in-3 EIO rule.
std::vector<bool> AppendFailurePattern(FileSystem& posix, const std::string& path, uint64_t seed,
                                       int count) {
  FaultInjectionFileSystem fs(&posix, seed);
  fs.InjectFaults(IoOperation::kAppend, 3, EIO);
  auto file = fs.NewWritableFile(path);
  EXPECT_TRUE(file.ok());
  std::vector<bool> failed;
  if (!file.ok()) return failed;
  for (int i = 0; i < count; ++i) failed.push_back(!(*file)->Append("x").ok());
  EXPECT_EQ(fs.injected_fault_count(),
            static_cast<uint64_t>(std::count(failed.begin(), failed.end(), true)));
  return failed;
}

TEST_F(FaultInjectionFileSystemTest, OneInNFaultsAreReproducibleFromTheSeed) {
  std::vector<bool> first = AppendFailurePattern(posix_, Path("a"), 7, 300);
  std::vector<bool> again = AppendFailurePattern(posix_, Path("b"), 7, 300);
  std::vector<bool> other = AppendFailurePattern(posix_, Path("c"), 8, 300);
  EXPECT_EQ(first, again);
  EXPECT_NE(first, other);
  auto failures = std::count(first.begin(), first.end(), true);
  EXPECT_GT(failures, 60);  // about 100 expected
  EXPECT_LT(failures, 140);
}

TEST_F(FaultInjectionFileSystemTest, InjectedFaultChangesNothingOnDisk) {
  auto file = fs_.NewWritableFile(Path("f"));
  ASSERT_TRUE(file.ok());
  ASSERT_TRUE((*file)->Append("before").ok());
  fs_.InjectFaults(IoOperation::kAppend, 1, ENOSPC);
  fs_.InjectFaults(IoOperation::kRename, 1, EIO);
  EXPECT_FALSE((*file)->Append("lost").ok());
  EXPECT_FALSE(fs_.RenameFile(Path("f"), Path("g")).ok());
  EXPECT_EQ(Read("f"), "before");
  EXPECT_FALSE(Exists("g"));
}

TEST_F(FaultInjectionFileSystemTest, InjectedEnospcLooksLikeARealDiskFull) {
  fs_.InjectFaults(IoOperation::kAppend, 1, ENOSPC);
  auto file = fs_.NewWritableFile(Path("f"));
  ASSERT_TRUE(file.ok());
  absl::Status status = (*file)->Append("x");
  EXPECT_EQ(status.code(), absl::StatusCode::kUnavailable);
  EXPECT_EQ(ErrnoOf(status), ENOSPC);
  EXPECT_THAT(std::string(status.message()), HasSubstr(Path("f")));
  EXPECT_THAT(std::string(status.message()), HasSubstr("No space left on device"));

  fs_.ClearFaults();
  EXPECT_TRUE((*file)->Append("x").ok());
  EXPECT_TRUE((*file)->Sync().ok());
}

TEST_F(FaultInjectionFileSystemTest, FaultsAreInjectedOnlyIntoTheChosenOperation) {
  fs_.InjectFaults(IoOperation::kSyncDir, 1, EIO);
  Write("f", "data", /*sync=*/true);
  absl::Status status = fs_.SyncDir(root_);
  EXPECT_EQ(ErrnoOf(status), EIO);
  EXPECT_EQ(status.code(), absl::StatusCode::kUnavailable);
  EXPECT_EQ(fs_.injected_fault_count(), 1u);
  // The failed directory sync made nothing durable.
  Crash();
  EXPECT_FALSE(Exists("f"));
}

TEST_F(FaultInjectionFileSystemTest, DiskGoneFailsEverythingUntilCleared) {
  Write("f", "data", /*sync=*/true);
  fs_.SetDiskGone(true);
  EXPECT_EQ(ErrnoOf(fs_.ReadFile(Path("f")).status()), EIO);
  EXPECT_EQ(ErrnoOf(fs_.NewWritableFile(Path("g")).status()), EIO);
  EXPECT_EQ(ErrnoOf(fs_.SyncDir(root_)), EIO);
  EXPECT_EQ(ErrnoOf(fs_.ListDir(root_).status()), EIO);
  EXPECT_EQ(ErrnoOf(fs_.Exists(Path("f")).status()), EIO);
  EXPECT_EQ(ErrnoOf(fs_.CreateDir(Path("d"))), EIO);
  EXPECT_EQ(ErrnoOf(fs_.RemoveFile(Path("f"))), EIO);
  fs_.ClearFaults();
  EXPECT_TRUE(fs_.ReadFile(Path("f")).ok());
  EXPECT_TRUE(fs_.SyncDir(root_).ok());
}

TEST_F(FaultInjectionFileSystemTest, CrashAfterSyncsStopsEverythingAfterTheNthSync) {
  fs_.CrashAfterSyncs(2);
  auto file = fs_.NewWritableFile(Path("f"));
  ASSERT_TRUE(file.ok());
  ASSERT_TRUE((*file)->Append("one").ok());
  ASSERT_TRUE((*file)->Sync().ok());  // sync 1
  ASSERT_TRUE((*file)->Append("two").ok());
  ASSERT_TRUE(fs_.SyncDir(root_).ok());  // sync 2: the crash point
  EXPECT_TRUE(fs_.crash_point_reached());
  EXPECT_EQ(ErrnoOf((*file)->Sync()), EIO);
  EXPECT_FALSE((*file)->Append("three").ok());
  EXPECT_FALSE(fs_.Exists(Path("f")).ok());
  EXPECT_EQ(fs_.sync_count(), 2u);
  Crash();
  EXPECT_FALSE(fs_.crash_point_reached());
  EXPECT_EQ(Read("f"), "one");
  // Handles from before the crash are dead; the file system itself works.
  EXPECT_EQ((*file)->Append("x").code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_TRUE(fs_.ReadFile(Path("f")).ok());
}

TEST_F(FaultInjectionFileSystemTest, CrashAfterZeroSyncsFailsTheFirstOperation) {
  fs_.CrashAfterSyncs(0);
  EXPECT_TRUE(fs_.crash_point_reached());
  EXPECT_FALSE(fs_.NewWritableFile(Path("f")).ok());
  EXPECT_FALSE(Exists("f"));
}

// A miniature of the storage crash loop: commit batches with the docs/format/commit.md
// protocol, crash at the 1st, 2nd, ... sync, and check that every
// acknowledged batch is complete and nothing partial is published.
TEST_F(FaultInjectionFileSystemTest, CrashAtEverySyncKeepsEveryAcknowledgedBatch) {
  constexpr int kBatches = 3;
  auto commit = [&](int id) -> absl::Status {
    std::string staging = Path(fmt::format("staging/{}", id));
    if (absl::Status s = fs_.CreateDir(staging); !s.ok()) return s;
    for (const char* name : {"spans", "meta"}) {
      auto file = fs_.NewWritableFile(fmt::format("{}/{}", staging, name));
      if (!file.ok()) return file.status();
      if (absl::Status s = (*file)->Append(fmt::format("{} of batch {}", name, id)); !s.ok()) {
        return s;
      }
      if (absl::Status s = (*file)->Sync(); !s.ok()) return s;
      if (absl::Status s = (*file)->Close(); !s.ok()) return s;
    }
    if (absl::Status s = fs_.SyncDir(staging); !s.ok()) return s;
    if (absl::Status s = fs_.RenameFile(staging, Path(fmt::format("days/{}.batch", id))); !s.ok()) {
      return s;
    }
    return fs_.SyncDir(Path("days"));
  };

  bool completed = false;
  for (uint64_t crash_at = 0; !completed; ++crash_at) {
    SCOPED_TRACE(fmt::format("crash at sync {}", crash_at));
    ASSERT_LT(crash_at, 100u) << "the workload never completes";
    ASSERT_TRUE(posix_.RemoveAll(root_).ok());
    ASSERT_TRUE(posix_.CreateDirs(Path("staging")).ok());
    ASSERT_TRUE(posix_.CreateDirs(Path("days")).ok());
    fs_.CrashAfterSyncs(crash_at);
    std::vector<int> acknowledged;
    for (int id = 0; id < kBatches; ++id) {
      if (!commit(id).ok()) break;
      acknowledged.push_back(id);
    }
    completed = !fs_.crash_point_reached() || acknowledged.size() == kBatches;
    Crash(CrashOptions{.tear_unsynced_writes = true});

    auto published = posix_.ListDir(Path("days"));
    ASSERT_TRUE(published.ok());
    for (int id : acknowledged) {
      EXPECT_THAT(*published, testing::Contains(fmt::format("{}.batch", id)));
    }
    for (const std::string& batch : *published) {
      int id = std::stoi(batch);
      for (const char* name : {"spans", "meta"}) {
        EXPECT_EQ(Read(fmt::format("days/{}/{}", batch, name)),
                  fmt::format("{} of batch {}", name, id));
      }
    }
  }
}

TEST_F(FaultInjectionFileSystemTest, HandlesOpenedBeforeACrashFail) {
  Write("r", "read me", /*sync=*/true);
  ASSERT_TRUE(fs_.SyncDir(root_).ok());
  auto writer = fs_.NewWritableFile(Path("w"));
  auto reader = fs_.NewRandomAccessFile(Path("r"));
  ASSERT_TRUE(writer.ok());
  ASSERT_TRUE(reader.ok());
  Crash();
  EXPECT_EQ((*writer)->Append("x").code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ((*writer)->Sync().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ((*reader)->ReadExact(0, 4).status().code(), absl::StatusCode::kFailedPrecondition);
}

TEST_F(FaultInjectionFileSystemTest, PassesThroughErrorsOfTheWrappedFileSystem) {
  EXPECT_TRUE(absl::IsNotFound(fs_.ReadFile(Path("missing")).status()));
  EXPECT_TRUE(absl::IsNotFound(fs_.RenameFile(Path("missing"), Path("x"))));
  EXPECT_TRUE(absl::IsNotFound(fs_.RemoveFile(Path("missing"))));
  EXPECT_TRUE(absl::IsNotFound(fs_.RemoveAll(Path("missing"))));
  EXPECT_TRUE(absl::IsNotFound(fs_.NewWritableFile(Path("no/dir/f")).status()));
  ASSERT_TRUE(fs_.CreateDir(Path("d")).ok());
  EXPECT_TRUE(absl::IsAlreadyExists(fs_.CreateDir(Path("d"))));
  // Failed operations leave nothing for a crash to undo.
  ASSERT_TRUE(fs_.SyncDir(root_).ok());
  Crash();
  EXPECT_THAT(*posix_.ListDir(root_), ElementsAre("d"));
}

// Concurrent writers through one fault-injecting file system (run under the
// tsan preset): everything synced before the last directory sync survives,
// the entries made after it do not.
TEST_F(FaultInjectionFileSystemTest, ConcurrentWritersKeepWhatTheySynced) {
  constexpr int kThreads = 4;
  constexpr int kFiles = 20;
  for (int t = 0; t < kThreads; ++t) {
    ASSERT_TRUE(fs_.CreateDir(Path(fmt::format("t{}", t))).ok());
  }
  ASSERT_TRUE(fs_.SyncDir(root_).ok());
  std::vector<std::thread> threads;
  threads.reserve(kThreads);
  std::vector<int> errors(kThreads, 0);
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      std::string dir = Path(fmt::format("t{}", t));
      for (int i = 0; i <= kFiles; ++i) {
        auto file = fs_.NewWritableFile(fmt::format("{}/f{}", dir, i));
        if (!file.ok() || !(*file)->Append(fmt::format("{}:{}", t, i)).ok() ||
            !(*file)->Sync().ok() || !(*file)->Close().ok()) {
          ++errors[t];
        }
        // The last file (i == kFiles) is created after the last dir sync.
        if (i < kFiles && !fs_.SyncDir(dir).ok()) ++errors[t];
        if (!fs_.ListDir(dir).ok()) ++errors[t];
      }
    });
  }
  for (auto& thread : threads) thread.join();
  EXPECT_THAT(errors, ElementsAre(0, 0, 0, 0));
  EXPECT_EQ(fs_.sync_count(), 1u + kThreads * (kFiles + 1) + kThreads * kFiles);
  Crash();
  for (int t = 0; t < kThreads; ++t) {
    for (int i = 0; i < kFiles; ++i) {
      EXPECT_EQ(Read(fmt::format("t{}/f{}", t, i)), fmt::format("{}:{}", t, i));
    }
    EXPECT_FALSE(Exists(fmt::format("t{}/f{}", t, kFiles)));
  }
}

TEST_F(FaultInjectionFileSystemTest, DurableRemovalOfADirectoryCoversTheRemovalsInside) {
  ASSERT_TRUE(fs_.CreateDir(Path("d")).ok());
  Write("d/f", "data", /*sync=*/true);
  ASSERT_TRUE(fs_.SyncDir(Path("d")).ok());
  ASSERT_TRUE(fs_.SyncDir(root_).ok());
  ASSERT_TRUE(fs_.RemoveAll(Path("d")).ok());  // f's removal is pending in d, d's in root
  ASSERT_TRUE(fs_.SyncDir(root_).ok());
  Crash();
  EXPECT_FALSE(Exists("d"));

  // Without the sync both come back.
  ASSERT_TRUE(fs_.CreateDir(Path("e")).ok());
  Write("e/f", "data", /*sync=*/true);
  ASSERT_TRUE(fs_.SyncDir(Path("e")).ok());
  ASSERT_TRUE(fs_.SyncDir(root_).ok());
  ASSERT_TRUE(fs_.RemoveAll(Path("e")).ok());
  Crash();
  EXPECT_EQ(Read("e/f"), "data");
}

TEST_F(FaultInjectionFileSystemTest, DurableRenameOfADirectoryKeepsItsEntriesPending) {
  ASSERT_TRUE(fs_.CreateDir(Path("a")).ok());
  ASSERT_TRUE(fs_.CreateDir(Path("b")).ok());
  ASSERT_TRUE(fs_.SyncDir(root_).ok());
  ASSERT_TRUE(fs_.CreateDir(Path("a/d")).ok());
  Write("a/d/f", "data", /*sync=*/true);
  ASSERT_TRUE(fs_.RenameFile(Path("a/d"), Path("b/d")).ok());
  ASSERT_TRUE(fs_.SyncDir(Path("b")).ok());  // the rename is durable, d's entries are not
  Crash();
  EXPECT_TRUE(Exists("b/d"));
  EXPECT_FALSE(Exists("a/d"));
  EXPECT_FALSE(Exists("b/d/f"));

  Write("b/d/g", "more", /*sync=*/true);
  ASSERT_TRUE(fs_.SyncDir(Path("b/d")).ok());
  ASSERT_TRUE(fs_.RenameFile(Path("b/d"), Path("a/d")).ok());
  ASSERT_TRUE(fs_.SyncDir(Path("a")).ok());
  Crash();
  EXPECT_EQ(Read("a/d/g"), "more");
}

TEST_F(FaultInjectionFileSystemTest, LockFileExcludesASecondHolderUntilReleased) {
  auto first = fs_.LockFile(Path("LOCK"));
  ASSERT_TRUE(first.ok()) << first.status();
  EXPECT_TRUE(Exists("LOCK"));
  // The model is per instance; the wrapped file system holds no lock.
  auto real = posix_.LockFile(Path("LOCK"));
  EXPECT_TRUE(real.ok()) << real.status();
  real->reset();

  auto second = fs_.LockFile(Path("./LOCK/../LOCK"));
  ASSERT_FALSE(second.ok());
  EXPECT_EQ(second.status().code(), absl::StatusCode::kUnavailable);
  EXPECT_EQ(ErrnoOf(second.status()), EWOULDBLOCK);
  first->reset();
  EXPECT_TRUE(fs_.LockFile(Path("LOCK")).ok());
}

TEST_F(FaultInjectionFileSystemTest, CrashReleasesLocksAndOldHandlesReleaseNothing) {
  ASSERT_TRUE(WriteFile(posix_, Path("LOCK"), "").ok());
  auto before = fs_.LockFile(Path("LOCK"));
  ASSERT_TRUE(before.ok()) << before.status();
  Crash();
  auto after = fs_.LockFile(Path("LOCK"));
  ASSERT_TRUE(after.ok()) << after.status();
  before->reset();  // must not release the lock taken after the crash
  EXPECT_EQ(ErrnoOf(fs_.LockFile(Path("LOCK")).status()), EWOULDBLOCK);
}

TEST_F(FaultInjectionFileSystemTest, CreatedLockFileIsAPendingEntry) {
  {
    auto lock = fs_.LockFile(Path("LOCK"));
    ASSERT_TRUE(lock.ok()) << lock.status();
  }
  Crash();
  EXPECT_FALSE(Exists("LOCK"));
  {
    auto lock = fs_.LockFile(Path("LOCK"));
    ASSERT_TRUE(lock.ok()) << lock.status();
  }
  ASSERT_TRUE(fs_.SyncDir(root_).ok());
  Crash();
  EXPECT_TRUE(Exists("LOCK"));
}

TEST_F(FaultInjectionFileSystemTest, LockFileTakesInjectedFaultsAndRefusesADirectory) {
  fs_.InjectFaults(IoOperation::kLock, 1, EIO);
  auto failed = fs_.LockFile(Path("LOCK"));
  ASSERT_FALSE(failed.ok());
  EXPECT_EQ(ErrnoOf(failed.status()), EIO);
  EXPECT_FALSE(Exists("LOCK"));
  fs_.ClearFaults();
  ASSERT_TRUE(posix_.CreateDir(Path("dir")).ok());
  EXPECT_EQ(ErrnoOf(fs_.LockFile(Path("dir")).status()), EISDIR);
}

TEST(IoOperationTest, EveryOperationHasAName) {
  for (size_t i = 0; i < kIoOperationCount; ++i) {
    EXPECT_NE(IoOperationName(static_cast<IoOperation>(i)), "unknown operation") << i;
  }
}

}  // namespace
}  // namespace strata
