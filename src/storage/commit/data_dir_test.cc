// Boot: LOCK, FORMAT, and recovery of telemetry/ (commit.md "Boot"), with
// one test per row of commit.md's crash table built as an explicit state on
// disk, and the refusals (stray entries, corrupt batches, compaction
// markers).

#include "storage/commit/data_dir.h"

#include <algorithm>
#include <cerrno>
#include <filesystem>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "common/path.h"
#include "fmt/format.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "io/fault_injection_file_system.h"
#include "io/posix_file_system.h"
#include "storage/format/evicted_marker.h"
#include "storage/testing/commit_testing.h"

namespace strata::storage {
namespace {

using ::testing::ElementsAre;
using ::testing::EndsWith;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using testing::RandomEncodedBatch;
using testing::ScopedTempDir;
using ::testing::StartsWith;
using ::testing::UnorderedElementsAre;

// 2025-06-14 09:30:15.123456 UTC, and "now": 2025-06-15 12:00:00 UTC.
constexpr int64_t kStampMicros = 1749893415123456;
constexpr int64_t kNowMicros = int64_t{1749988800} * 1000000;
constexpr int64_t kDayMicros = int64_t{86400} * 1000000;

BatchId IdAt(int64_t stamp_micros, int generation = 0) {
  return *BatchId::Make(stamp_micros, generation);
}

class DataDirTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_FALSE(temp_.path().empty());
    data_ = temp_.path() + "/data";
  }

  DataDirOptions Options() {
    DataDirOptions options;
    options.clock = [this] { return now_micros_; };
    return options;
  }

  absl::StatusOr<std::unique_ptr<DataDir>> Open(DataDirOptions options) {
    return OpenDataDir(posix_, data_, std::move(options));
  }
  absl::StatusOr<std::unique_ptr<DataDir>> Open() { return Open(Options()); }

  std::unique_ptr<DataDir> OpenOk() {
    absl::StatusOr<std::unique_ptr<DataDir>> dir = Open();
    EXPECT_TRUE(dir.ok()) << dir.status();
    return dir.ok() ? *std::move(dir) : nullptr;
  }

  // Commits a random batch stamped `stamp_micros` through a fresh open of
  // the directory, closes it again, and returns the batch directory.
  std::string Commit(int64_t stamp_micros) {
    std::unique_ptr<DataDir> dir = OpenOk();
    if (dir == nullptr) return "";
    const EncodedBatch batch = RandomEncodedBatch(IdAt(stamp_micros), rng_);
    absl::StatusOr<CommittedBatch> committed = dir->committer().Commit(batch);
    EXPECT_TRUE(committed.ok()) << committed.status();
    if (!committed.ok()) return "";
    expected_.insert_or_assign(batch.id.ToString(), batch);
    return committed->dir;
  }

  std::vector<std::string> List(const std::string& dir) {
    absl::StatusOr<std::vector<std::string>> names = posix_.ListDir(dir);
    EXPECT_TRUE(names.ok()) << names.status();
    return names.ok() ? *names : std::vector<std::string>{};
  }

  // Ids (as offsets from kStampMicros) in the current snapshot.
  static std::vector<int64_t> Served(const DataDir& dir) {
    std::vector<int64_t> offsets;
    for (const auto& batch : dir.catalog().Pin()->batches()) {
      offsets.push_back(batch->id().stamp_micros() - kStampMicros);
    }
    return offsets;
  }

  // Every served batch holds exactly the bytes committed for it.
  void ExpectServedBytesMatch(const DataDir& dir) {
    for (const auto& batch : dir.catalog().Pin()->batches()) {
      auto it = expected_.find(batch->id().ToString());
      ASSERT_NE(it, expected_.end()) << batch->dir();
      for (const EncodedFile& file : it->second.files) {
        EXPECT_EQ(*posix_.ReadFile(batch->dir() + "/" + file.name), file.bytes) << batch->dir();
      }
    }
  }

  void CopyDir(const std::string& from, const std::string& to) {
    ASSERT_TRUE(posix_.CreateDir(to).ok());
    for (const std::string& name : List(from)) {
      ASSERT_TRUE(WriteFile(posix_, to + "/" + name, *posix_.ReadFile(from + "/" + name)).ok());
    }
  }

  DataDirPaths paths() const { return DataDirPaths(data_); }

  ScopedTempDir temp_{"data_dir"};
  PosixFileSystem posix_;
  std::string data_;
  int64_t now_micros_ = kNowMicros;
  std::mt19937_64 rng_{5};
  std::map<std::string, EncodedBatch> expected_;
};

// ---- LOCK and FORMAT ----

TEST_F(DataDirTest, MissingDirectoryIsInitializedLockedAndEmpty) {
  std::unique_ptr<DataDir> dir = OpenOk();
  ASSERT_NE(dir, nullptr);
  EXPECT_EQ(*posix_.ReadFile(data_ + "/FORMAT"), "{\"format\":1}\n");
  EXPECT_TRUE(*posix_.Exists(data_ + "/LOCK"));
  EXPECT_THAT(Served(*dir), IsEmpty());
  EXPECT_EQ(dir->catalog().Pin()->sequence(), 0u);
  EXPECT_EQ(dir->paths().data_dir(), data_);
}

TEST_F(DataDirTest, SecondOpenIsRefusedWhileTheFirstHoldsTheLock) {
  std::unique_ptr<DataDir> first = OpenOk();
  ASSERT_NE(first, nullptr);
  absl::StatusOr<std::unique_ptr<DataDir>> second = Open();
  ASSERT_FALSE(second.ok());
  EXPECT_EQ(second.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(std::string(second.status().message()), HasSubstr(data_ + " is in use"));
  EXPECT_THAT(std::string(second.status().message()),
              HasSubstr("see docs/operations.md#data-directory-in-use"));
  first.reset();
  EXPECT_TRUE(Open().ok());
}

TEST_F(DataDirTest, ForeignDirectoryIsRefusedWithoutCreatingLock) {
  ASSERT_TRUE(posix_.CreateDir(data_).ok());
  ASSERT_TRUE(WriteFile(posix_, data_ + "/notes.txt", "mine").ok());
  absl::StatusOr<std::unique_ptr<DataDir>> dir = Open();
  ASSERT_FALSE(dir.ok());
  EXPECT_EQ(dir.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(std::string(dir.status().message()), HasSubstr("not a strata data directory"));
  EXPECT_THAT(List(data_), ElementsAre("notes.txt"));

  ASSERT_TRUE(posix_.RemoveAll(data_).ok());
  ASSERT_TRUE(WriteFile(posix_, data_, "a file").ok());
  dir = Open();
  EXPECT_EQ(dir.status().code(), absl::StatusCode::kFailedPrecondition) << dir.status();
  EXPECT_THAT(std::string(dir.status().message()), HasSubstr("not a directory"));
}

TEST_F(DataDirTest, InterruptedInitializationWithALockFileIsCompleted) {
  ASSERT_TRUE(posix_.CreateDirs(data_ + "/telemetry/staging").ok());
  ASSERT_TRUE(WriteFile(posix_, data_ + "/LOCK", "").ok());
  std::unique_ptr<DataDir> dir = OpenOk();
  ASSERT_NE(dir, nullptr);
  EXPECT_EQ(*posix_.ReadFile(data_ + "/FORMAT"), "{\"format\":1}\n");
}

TEST_F(DataDirTest, NewerFormatIsRefusedAfterLocking) {
  ASSERT_TRUE(OpenOk() != nullptr);
  ASSERT_TRUE(WriteFile(posix_, data_ + "/FORMAT", "{\"format\":2}\n").ok());
  absl::StatusOr<std::unique_ptr<DataDir>> dir = Open();
  EXPECT_EQ(dir.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(std::string(dir.status().message()), HasSubstr("newer strata"));
}

// ---- Serving and the issuer ----

TEST_F(DataDirTest, BootServesEveryCommittedBatch) {
  for (int64_t offset : {int64_t{0}, int64_t{1}, int64_t{2}, kDayMicros, kDayMicros + 1}) {
    ASSERT_FALSE(Commit(kStampMicros + offset).empty());
  }
  std::unique_ptr<DataDir> dir = OpenOk();
  ASSERT_NE(dir, nullptr);
  EXPECT_THAT(Served(*dir), ElementsAre(0, 1, 2, kDayMicros, kDayMicros + 1));
  ExpectServedBytesMatch(*dir);
  for (const auto& batch : dir->catalog().Pin()->batches()) {
    EXPECT_EQ(batch->meta().id, batch->id().ToString());
    EXPECT_EQ(batch->day(), batch->id().Day());
    EXPECT_EQ(batch->dir(), paths().Batch(batch->day(), batch->id()));
  }
  EXPECT_THAT(List(paths().Days()), ElementsAre("2025-06-14", "2025-06-15"));
  EXPECT_THAT(dir->recovery().removed_staging, IsEmpty());
}

TEST_F(DataDirTest, IssuerStartsAfterEveryIdInDaysStagingAndQuarantine) {
  now_micros_ = 1000000;  // a clock far behind every id on disk
  for (const char* where : {"days", "staging", "quarantine"}) {
    SCOPED_TRACE(where);
    ScopedTempDir temp("issuer");
    data_ = temp.path() + "/data";
    ASSERT_FALSE(Commit(kStampMicros).empty());
    const BatchId later = IdAt(kStampMicros + 1000);
    if (std::string(where) == "days") {
      ASSERT_FALSE(Commit(later.stamp_micros()).empty());
    } else if (std::string(where) == "staging") {
      ASSERT_TRUE(posix_.CreateDir(paths().StagingBatch(later) + ".retired").ok());
    } else {
      ASSERT_TRUE(
          posix_.CreateDirs(paths().Quarantine() + "/2025-06-14/" + later.ToString() + ".batch")
              .ok());
      ASSERT_TRUE(WriteFile(posix_, paths().Quarantine() + "/junk", "").ok());
    }
    std::unique_ptr<DataDir> dir = OpenOk();
    ASSERT_NE(dir, nullptr);
    absl::StatusOr<BatchId> next = dir->issuer().Issue(0);
    ASSERT_TRUE(next.ok()) << next.status();
    EXPECT_EQ(next->stamp_micros(), later.stamp_micros() + 1);
  }
}

TEST_F(DataDirTest, IssuedIdsCarryTheNodeAndOtherNodesIdsAreRead) {
  ASSERT_FALSE(Commit(kStampMicros).empty());  // node 00
  DataDirOptions options = Options();
  options.node = 36 * 7 + 20;  // "7k"
  {
    absl::StatusOr<std::unique_ptr<DataDir>> dir = Open(std::move(options));
    ASSERT_TRUE(dir.ok()) << dir.status();
    EXPECT_EQ((*dir)->catalog().Pin()->size(), 1u);
    absl::StatusOr<BatchId> next = (*dir)->issuer().Issue(3);
    ASSERT_TRUE(next.ok()) << next.status();
    EXPECT_EQ(next->node(), 36 * 7 + 20);
    EXPECT_TRUE(next->ToString().ends_with("37k")) << next->ToString();
    EXPECT_GT(next->stamp_micros(), kStampMicros);
  }
  for (int bad : {-1, kMaxNode + 1}) {
    DataDirOptions out_of_range = Options();
    out_of_range.node = bad;
    absl::Status status = Open(std::move(out_of_range)).status();
    EXPECT_TRUE(absl::IsInvalidArgument(status)) << status;
  }
}

TEST_F(DataDirTest, ValidatorAndAttachmentLoaderSeeEveryBatch) {
  ASSERT_FALSE(Commit(kStampMicros).empty());
  ASSERT_FALSE(Commit(kStampMicros + 1).empty());
  std::vector<std::string> validated;
  DataDirOptions options = Options();
  options.validate_batch = [&](FileSystem&, const std::string& batch_dir, const BatchMeta& meta) {
    validated.push_back(meta.id);
    EXPECT_EQ(batch_dir, paths().Batch(meta.day, *BatchId::Parse(meta.id)));
    return absl::OkStatus();
  };
  options.load_attachment =
      [](FileSystem&, const std::string&,
         const BatchMeta& meta) -> absl::StatusOr<std::shared_ptr<const void>> {
    return std::make_shared<const std::string>("filter of " + meta.id);
  };
  absl::StatusOr<std::unique_ptr<DataDir>> dir = Open(std::move(options));
  ASSERT_TRUE(dir.ok()) << dir.status();
  EXPECT_THAT(validated,
              ElementsAre(IdAt(kStampMicros).ToString(), IdAt(kStampMicros + 1).ToString()));
  for (const auto& batch : (*dir)->catalog().Pin()->batches()) {
    auto filter = std::static_pointer_cast<const std::string>(batch->attachment());
    ASSERT_NE(filter, nullptr);
    EXPECT_EQ(*filter, "filter of " + batch->meta().id);
  }
}

TEST_F(DataDirTest, RetireHookSeesBatchesRemovedFromTheCatalog) {
  ASSERT_FALSE(Commit(kStampMicros).empty());
  std::vector<std::string> retired;
  DataDirOptions options = Options();
  options.on_retire = [&](const LiveBatch& batch) { retired.push_back(batch.dir()); };
  absl::StatusOr<std::unique_ptr<DataDir>> dir = Open(std::move(options));
  ASSERT_TRUE(dir.ok()) << dir.status();
  const std::string batch_dir = (*dir)->catalog().Pin()->batches().front()->dir();
  ASSERT_TRUE((*dir)->catalog().Publish({}, {IdAt(kStampMicros)}).ok());
  EXPECT_THAT(retired, ElementsAre(batch_dir));
}

// ---- commit.md's crash table, one row at a time ----

TEST_F(DataDirTest, CrashBeforeStep1CompletesLeavesAnEmptyStagingDirThatIsRemoved) {
  ASSERT_TRUE(OpenOk() != nullptr);
  const BatchId id = IdAt(kStampMicros);
  ASSERT_TRUE(posix_.CreateDir(paths().StagingBatch(id)).ok());
  std::unique_ptr<DataDir> dir = OpenOk();
  ASSERT_NE(dir, nullptr);
  EXPECT_THAT(List(paths().Staging()), IsEmpty());
  EXPECT_THAT(dir->recovery().removed_staging, ElementsAre(id.ToString()));
  EXPECT_THAT(Served(*dir), IsEmpty());
}

TEST_F(DataDirTest, CrashDuringSteps2And3LeavesPartialStagingThatIsRemoved) {
  ASSERT_TRUE(OpenOk() != nullptr);
  const std::string staging = paths().StagingBatch(IdAt(kStampMicros));
  ASSERT_TRUE(posix_.CreateDir(staging).ok());
  ASSERT_TRUE(WriteFile(posix_, staging + "/spans.parquet", "PAR1 torn").ok());
  ASSERT_TRUE(WriteFile(posix_, staging + "/spans.tidx", "").ok());  // short: nothing synced
  std::unique_ptr<DataDir> dir = OpenOk();
  ASSERT_NE(dir, nullptr);
  EXPECT_THAT(List(paths().Staging()), IsEmpty());
  EXPECT_THAT(Served(*dir), IsEmpty());
}

TEST_F(DataDirTest, CrashAfterStep4LeavesCompleteStagingThatIsNeverPromoted) {
  const std::string committed = Commit(kStampMicros);
  ASSERT_FALSE(committed.empty());
  // The same bytes, but in staging: the state before the rename.
  ASSERT_TRUE(posix_.RenameFile(committed, paths().StagingBatch(IdAt(kStampMicros))).ok());
  std::unique_ptr<DataDir> dir = OpenOk();
  ASSERT_NE(dir, nullptr);
  EXPECT_THAT(List(paths().Staging()), IsEmpty());
  EXPECT_THAT(Served(*dir), IsEmpty());
}

TEST_F(DataDirTest, CrashDuringStep5LeavesEmptyDaysAndOnlyPastOnesAreRemoved) {
  ASSERT_TRUE(OpenOk() != nullptr);
  for (const char* day : {"2025-06-13", "2025-06-14", "2025-06-15", "2025-06-16"}) {
    ASSERT_TRUE(posix_.CreateDir(paths().Day(day)).ok());
  }
  ASSERT_TRUE(posix_.CreateDir(paths().StagingBatch(IdAt(kStampMicros))).ok());
  std::unique_ptr<DataDir> dir = OpenOk();  // today is 2025-06-15
  ASSERT_NE(dir, nullptr);
  EXPECT_THAT(List(paths().Days()), ElementsAre("2025-06-15", "2025-06-16"));
  EXPECT_THAT(dir->recovery().removed_days, ElementsAre("2025-06-13", "2025-06-14"));
  EXPECT_THAT(List(paths().Staging()), IsEmpty());
  // A commit into a day boot kept needs no new directory.
  absl::StatusOr<BatchId> id = dir->issuer().Issue(0);
  ASSERT_TRUE(id.ok());
  EXPECT_TRUE(dir->committer().Commit(RandomEncodedBatch(*id, rng_)).ok());
}

TEST_F(DataDirTest, CrashAfterStep6WithTheRenameLostRemovesStaging) {
  // Lost rename: the batch is back in staging (the same state as after
  // step 4), or gone entirely.
  const std::string committed = Commit(kStampMicros);
  ASSERT_TRUE(posix_.RenameFile(committed, paths().StagingBatch(IdAt(kStampMicros))).ok());
  ASSERT_TRUE(posix_.RemoveDir(paths().Day("2025-06-14")).ok());
  std::unique_ptr<DataDir> dir = OpenOk();
  ASSERT_NE(dir, nullptr);
  EXPECT_THAT(Served(*dir), IsEmpty());
  EXPECT_THAT(List(paths().Staging()), IsEmpty());
  EXPECT_THAT(List(paths().Days()), IsEmpty());
}

TEST_F(DataDirTest, CrashAfterStep6WithTheRenameSurvivedServesTheBatch) {
  ASSERT_FALSE(Commit(kStampMicros).empty());
  std::unique_ptr<DataDir> dir = OpenOk();
  ASSERT_NE(dir, nullptr);
  EXPECT_THAT(Served(*dir), ElementsAre(0));
  ExpectServedBytesMatch(*dir);
}

TEST_F(DataDirTest, CrashAfterStep7WithAStaleStagingEntryServesTheBatchAndRemovesStaging) {
  const std::string committed = Commit(kStampMicros);
  ASSERT_FALSE(committed.empty());
  CopyDir(committed, paths().StagingBatch(IdAt(kStampMicros)));
  std::unique_ptr<DataDir> dir = OpenOk();
  ASSERT_NE(dir, nullptr);
  EXPECT_THAT(Served(*dir), ElementsAre(0));
  ExpectServedBytesMatch(*dir);
  EXPECT_THAT(List(paths().Staging()), IsEmpty());
}

TEST_F(DataDirTest, CrashDuringADeletionEitherServesTheBatchOrRemovesItFromStaging) {
  const std::string kept = Commit(kStampMicros);
  const std::string moved = Commit(kStampMicros + 1);
  ASSERT_FALSE(kept.empty());
  ASSERT_FALSE(moved.empty());
  // The second deletion's rename survived and its removal got halfway.
  const std::string retired = paths().RetiredBatch(IdAt(kStampMicros + 1));
  ASSERT_TRUE(posix_.RenameFile(moved, retired).ok());
  ASSERT_TRUE(posix_.RemoveFile(retired + "/meta.json").ok());
  std::unique_ptr<DataDir> dir = OpenOk();
  ASSERT_NE(dir, nullptr);
  EXPECT_THAT(Served(*dir), ElementsAre(0));
  ExpectServedBytesMatch(*dir);
  EXPECT_THAT(List(paths().Staging()), IsEmpty());
  EXPECT_THAT(dir->recovery().removed_staging,
              ElementsAre(IdAt(kStampMicros + 1).ToString() + ".retired"));
}

// ---- Stray entries ----

TEST_F(DataDirTest, StrayEntriesAreSetAsideIntoQuarantineAndBootStarts) {
  const std::string committed = Commit(kStampMicros);
  ASSERT_FALSE(committed.empty());
  const std::string id = IdAt(kStampMicros + 1).ToString();
  const std::string day = "days/2025-06-14";
  struct Stray {
    std::string path;  // relative to telemetry/
    bool dir;
  };
  const std::vector<Stray> strays = {
      {"junk", true},  // what EXPORT DATABASE left at telemetry/'s top
      {"notes.txt", false},
      {"days/notes.txt", false},
      {"days/2025-13-01", true},
      {"days/2025-06-16", false},      // a day name, but a file
      {"days/2025-06-11/foo", false},  // the only entry of a past day
      {day + "/foo", false},
      {day + "/" + id, true},  // no .batch
      {day + "/" + id + ".batch", false},
      {day + "/" + id + ".batch.tmp", true},
      {day + "/2025061409301512345600Z.batch", true},
  };
  ASSERT_TRUE(posix_.CreateDir(paths().Day("2025-06-10")).ok());  // empty past day
  ASSERT_TRUE(posix_.CreateDir(paths().Day("2025-06-11")).ok());
  for (const Stray& stray : strays) {
    const std::string path = paths().Telemetry() + "/" + stray.path;
    ASSERT_TRUE((stray.dir ? posix_.CreateDir(path) : WriteFile(posix_, path, stray.path)).ok());
    if (stray.dir) ASSERT_TRUE(WriteFile(posix_, path + "/inside", stray.path).ok());
  }
  std::unique_ptr<DataDir> dir = OpenOk();
  ASSERT_NE(dir, nullptr);
  EXPECT_THAT(Served(*dir), ElementsAre(0));
  ASSERT_EQ(dir->recovery().set_aside.size(), strays.size());
  // One new folder of quarantine/ for this boot: stray-<today>-1.
  const std::string folder = ParentPath(dir->recovery().set_aside.front().to);
  EXPECT_THAT(folder, StartsWith(paths().Quarantine() + "/stray-"));
  EXPECT_THAT(folder, EndsWith("-1"));
  for (const Stray& stray : strays) {
    SCOPED_TRACE(stray.path);
    const std::string from = paths().Telemetry() + "/" + stray.path;
    const std::string to = folder + "/" + stray.path;
    EXPECT_FALSE(*posix_.Exists(from));
    // Moved whole: nothing deleted, nothing changed.
    EXPECT_EQ(*posix_.ReadFile(stray.dir ? to + "/inside" : to), stray.path);
    EXPECT_TRUE(std::any_of(dir->recovery().set_aside.begin(), dir->recovery().set_aside.end(),
                            [&](const SetAsideEntry& e) { return e.from == from && e.to == to; }));
  }
  // The past days left empty are removed as before; the batch is untouched.
  EXPECT_FALSE(*posix_.Exists(paths().Day("2025-06-10")));
  EXPECT_FALSE(*posix_.Exists(paths().Day("2025-06-11")));
  EXPECT_TRUE(*posix_.Exists(committed));
  dir.reset();

  // A later boot uses a folder of its own, and a clean one sets nothing aside.
  ASSERT_TRUE(WriteFile(posix_, paths().Telemetry() + "/junk", "again").ok());
  dir = OpenOk();
  ASSERT_NE(dir, nullptr);
  ASSERT_EQ(dir->recovery().set_aside.size(), 1u);
  EXPECT_EQ(dir->recovery().set_aside[0].to, folder.substr(0, folder.size() - 1) + "2/junk");
  dir.reset();
  dir = OpenOk();
  ASSERT_NE(dir, nullptr);
  EXPECT_THAT(dir->recovery().set_aside, IsEmpty());
  EXPECT_THAT(Served(*dir), ElementsAre(0));
}

// ---- Corrupt batches ----

class CorruptBatchTest : public DataDirTest {
 protected:
  void SetUp() override {
    DataDirTest::SetUp();
    // A batch with every file, so each kind of damage has a target.
    std::unique_ptr<DataDir> dir = OpenOk();
    ASSERT_NE(dir, nullptr);
    EncodedBatch batch = RandomEncodedBatch(IdAt(kStampMicros), rng_);
    while (batch.files.size() != 5) batch = RandomEncodedBatch(IdAt(kStampMicros), rng_);
    absl::StatusOr<CommittedBatch> committed = dir->committer().Commit(batch);
    ASSERT_TRUE(committed.ok()) << committed.status();
    batch_dir_ = committed->dir;
    dir.reset();
    ASSERT_FALSE(Commit(kStampMicros + 1).empty());  // a healthy neighbour
  }

  void ExpectCorrupt(std::string_view check, DataDirOptions options) {
    absl::StatusOr<std::unique_ptr<DataDir>> dir = Open(std::move(options));
    ASSERT_FALSE(dir.ok());
    EXPECT_EQ(dir.status().code(), absl::StatusCode::kDataLoss) << dir.status();
    const std::string message(dir.status().message());
    EXPECT_THAT(message, HasSubstr(fmt::format("batch {} failed validation", batch_dir_)));
    EXPECT_THAT(message, HasSubstr(check));
    EXPECT_THAT(message, HasSubstr("see docs/operations.md#corrupt-batch"));
    EXPECT_TRUE(*posix_.Exists(batch_dir_));  // evidence kept
  }
  void ExpectCorrupt(std::string_view check) { ExpectCorrupt(check, Options()); }

  std::string File(std::string_view name) const { return fmt::format("{}/{}", batch_dir_, name); }

  std::string batch_dir_;
};

TEST_F(CorruptBatchTest, FlippedByteFailsTheChecksum) {
  std::string bytes = *posix_.ReadFile(File("logs.parquet"));
  bytes[bytes.size() / 2] ^= 0x20;
  ASSERT_TRUE(WriteFile(posix_, File("logs.parquet"), bytes).ok());
  ExpectCorrupt("logs.parquet: xxh3-64 is");
}

TEST_F(CorruptBatchTest, TruncatedFileFailsTheSize) {
  std::string bytes = *posix_.ReadFile(File("spans.tidx"));
  bytes.pop_back();
  ASSERT_TRUE(WriteFile(posix_, File("spans.tidx"), bytes).ok());
  ExpectCorrupt(
      fmt::format("spans.tidx is {} bytes, meta.json says {}", bytes.size(), bytes.size() + 1));
}

TEST_F(CorruptBatchTest, ExtraFileIsUndeclared) {
  ASSERT_TRUE(WriteFile(posix_, File("spans.parquet.tmp"), "x").ok());
  ExpectCorrupt("holds \"spans.parquet.tmp\", which files does not name");
}

TEST_F(CorruptBatchTest, MissingFileIsNamed) {
  ASSERT_TRUE(posix_.RemoveFile(File("metrics.parquet")).ok());
  ExpectCorrupt("metrics.parquet is missing");
}

// ---- EVICTED (meta-json.md rule 11) ----

TEST_F(CorruptBatchTest, EvictedBatchWithMissingAndPartialParquetFilesBoots) {
  const std::string id = std::filesystem::path(batch_dir_).stem().string();
  ASSERT_TRUE(WriteEvictedMarker(posix_, batch_dir_, id).ok());
  ASSERT_TRUE(posix_.RemoveFile(File("spans.parquet")).ok());
  ASSERT_TRUE(posix_.RemoveFile(File("metrics.parquet")).ok());
  std::string logs = *posix_.ReadFile(File("logs.parquet"));
  logs.resize(logs.size() / 2);  // a crash in the middle of the removals
  ASSERT_TRUE(WriteFile(posix_, File("logs.parquet"), logs).ok());
  std::unique_ptr<DataDir> dir = OpenOk();
  ASSERT_NE(dir, nullptr);
  EXPECT_EQ(Served(*dir), (std::vector<int64_t>{0, 1}));
}

TEST_F(CorruptBatchTest, WithoutTheMarkerAMissingParquetFileIsStillCorrupt) {
  const std::string id = std::filesystem::path(batch_dir_).stem().string();
  // A crash before the rename leaves only the temporary: the batch must
  // be whole, and boot removes the temporary.
  ASSERT_TRUE(WriteFile(posix_, File("EVICTED.tmp"), id + "\n").ok());
  {
    std::unique_ptr<DataDir> dir = OpenOk();
    ASSERT_NE(dir, nullptr);
  }
  EXPECT_FALSE(*posix_.Exists(File("EVICTED.tmp")));
  ASSERT_TRUE(WriteFile(posix_, File("EVICTED.tmp"), id + "\n").ok());
  ASSERT_TRUE(posix_.RemoveFile(File("spans.parquet")).ok());
  ExpectCorrupt("spans.parquet is missing");
}

TEST_F(CorruptBatchTest, EvictedBatchKeepsItsTraceIndexChecked) {
  const std::string id = std::filesystem::path(batch_dir_).stem().string();
  ASSERT_TRUE(WriteEvictedMarker(posix_, batch_dir_, id).ok());
  ASSERT_TRUE(posix_.RemoveFile(File("spans.parquet")).ok());
  std::string tidx = *posix_.ReadFile(File("spans.tidx"));
  tidx.pop_back();
  ASSERT_TRUE(WriteFile(posix_, File("spans.tidx"), tidx).ok());
  ExpectCorrupt("rule 11 (EVICTED)");
}

TEST_F(CorruptBatchTest, EvictedMarkerNamingAnotherBatchIsCorrupt) {
  ASSERT_TRUE(WriteFile(posix_, File("EVICTED"), "00000000000000000000000\n").ok());
  ExpectCorrupt("does not name this batch");
}

TEST_F(CorruptBatchTest, EvictedBatchWithAnUndeclaredFileIsCorrupt) {
  const std::string id = std::filesystem::path(batch_dir_).stem().string();
  ASSERT_TRUE(WriteEvictedMarker(posix_, batch_dir_, id).ok());
  ASSERT_TRUE(WriteFile(posix_, File("spans.parquet.tmp"), "x").ok());
  ExpectCorrupt("holds \"spans.parquet.tmp\", which files does not name");
}

TEST_F(CorruptBatchTest, MissingMetaJson) {
  ASSERT_TRUE(posix_.RemoveFile(File("meta.json")).ok());
  ExpectCorrupt("meta.json is missing");
}

TEST_F(CorruptBatchTest, UnparsableMetaJson) {
  ASSERT_TRUE(WriteFile(posix_, File("meta.json"), "{\"format\":1,").ok());
  ExpectCorrupt("meta.json rule 1");
}

TEST_F(CorruptBatchTest, BatchUnderAnotherIdsNameFailsTheLocationCheck) {
  const std::string renamed = paths().Batch("2025-06-14", IdAt(kStampMicros + 7));
  ASSERT_TRUE(posix_.RenameFile(batch_dir_, renamed).ok());
  batch_dir_ = renamed;
  ExpectCorrupt("meta.json rule 3");
}

TEST_F(CorruptBatchTest, InjectedValidatorFailureStopsBoot) {
  DataDirOptions options = Options();
  options.validate_batch = [&](FileSystem&, const std::string& dir, const BatchMeta&) {
    return dir == batch_dir_ ? absl::DataLossError("spans.parquet: footer row count 3, meta 4")
                             : absl::OkStatus();
  };
  ExpectCorrupt("spans.parquet: footer row count 3, meta 4", std::move(options));
  options = Options();
  options.load_attachment = [&](FileSystem&, const std::string& dir,
                                const BatchMeta&) -> absl::StatusOr<std::shared_ptr<const void>> {
    if (dir == batch_dir_) return absl::InvalidArgumentError("spans.tidx: bad header");
    return nullptr;
  };
  ExpectCorrupt("spans.tidx: bad header", std::move(options));
}

TEST_F(CorruptBatchTest, ReadErrorsAreNotCalledCorruption) {
  PosixFileSystem posix;
  FaultInjectionFileSystem faulty(&posix, 1);
  // FORMAT and meta.json are read whole (kRead); the checksums open the
  // data files (kOpenForRead), which fail.
  faulty.InjectFaults(IoOperation::kOpenForRead, 1, EIO);
  absl::StatusOr<std::unique_ptr<DataDir>> dir = OpenDataDir(faulty, data_, Options());
  ASSERT_FALSE(dir.ok());
  EXPECT_EQ(dir.status().code(), absl::StatusCode::kUnavailable) << dir.status();
  EXPECT_THAT(std::string(dir.status().message()),
              HasSubstr(fmt::format("data directory {}: validate batch {}", data_, batch_dir_)));
  EXPECT_THAT(std::string(dir.status().message()), HasSubstr("EIO"));
  EXPECT_THAT(std::string(dir.status().message()), ::testing::Not(HasSubstr("corrupt-batch")));
}

// ---- COMPACTION.json ----

class CompactionMarkerTest : public DataDirTest {
 protected:
  void SetUp() override {
    DataDirTest::SetUp();
    for (int i = 0; i < 3; ++i) ASSERT_FALSE(Commit(kStampMicros + i).empty());
    inputs_ = {IdAt(kStampMicros), IdAt(kStampMicros + 1)};
    output_ = IdAt(kNowMicros, /*generation=*/1);
  }

  std::string Marker() const {
    return fmt::format(
        R"({{"format": 1, "day": "2025-06-14", "output": "{}", "inputs": ["{}", "{}"]}})",
        output_.ToString(), inputs_[0].ToString(), inputs_[1].ToString());
  }
  void WriteMarker(std::string_view json) {
    ASSERT_TRUE(WriteFile(posix_, paths().CompactionMarker(), json).ok());
  }
  // Commits the compaction output into days/2025-06-14 with `sources`.
  void CommitOutput(std::vector<std::string> sources) {
    std::unique_ptr<DataDir> dir = OpenOk();
    ASSERT_NE(dir, nullptr);
    EncodedBatch batch = RandomEncodedBatch(output_, rng_);
    batch.sources = std::move(sources);
    batch.ingest_time = NanosRange{inputs_[0].stamp_nanos(), inputs_[1].stamp_nanos()};
    absl::StatusOr<CommittedBatch> committed = dir->committer().Commit(batch);
    ASSERT_TRUE(committed.ok()) << committed.status();
    output_dir_ = committed->dir;
  }
  void ExpectRefused(std::string_view what) {
    absl::StatusOr<std::unique_ptr<DataDir>> dir = Open();
    ASSERT_FALSE(dir.ok());
    EXPECT_EQ(dir.status().code(), absl::StatusCode::kFailedPrecondition) << dir.status();
    EXPECT_THAT(std::string(dir.status().message()), HasSubstr(paths().CompactionMarker()));
    EXPECT_THAT(std::string(dir.status().message()), HasSubstr(what));
    EXPECT_THAT(std::string(dir.status().message()),
                HasSubstr("see docs/operations.md#unresolved-compaction-marker"));
    // Nothing deleted.
    for (const BatchId& input : inputs_) {
      EXPECT_TRUE(*posix_.Exists(paths().Batch("2025-06-14", input)));
    }
  }

  std::vector<BatchId> inputs_;
  BatchId output_ = IdAt(0);
  std::string output_dir_;
};

TEST_F(CompactionMarkerTest, LoneTempMarkerIsRemoved) {
  ASSERT_TRUE(WriteFile(posix_, paths().CompactionMarkerTemp(), "{\"form").ok());
  std::unique_ptr<DataDir> dir = OpenOk();
  ASSERT_NE(dir, nullptr);
  EXPECT_FALSE(*posix_.Exists(paths().CompactionMarkerTemp()));
  EXPECT_THAT(dir->recovery().compaction, HasSubstr("removed COMPACTION.json.tmp"));
  EXPECT_THAT(Served(*dir), ElementsAre(0, 1, 2));
}

TEST_F(CompactionMarkerTest, MarkerWithoutOutputRollsBack) {
  WriteMarker(Marker());
  std::unique_ptr<DataDir> dir = OpenOk();
  ASSERT_NE(dir, nullptr);
  EXPECT_FALSE(*posix_.Exists(paths().CompactionMarker()));
  EXPECT_THAT(dir->recovery().compaction, HasSubstr("rolled back"));
  EXPECT_THAT(Served(*dir), ElementsAre(0, 1, 2));
}

TEST_F(CompactionMarkerTest, MarkerWithValidOutputRollsForward) {
  CommitOutput({inputs_[0].ToString(), inputs_[1].ToString()});
  // One input was deleted before the crash already.
  ASSERT_TRUE(DeleteBatch(posix_, paths(), "2025-06-14", inputs_[1]).ok());
  WriteMarker(Marker());
  std::unique_ptr<DataDir> dir = OpenOk();
  ASSERT_NE(dir, nullptr);
  EXPECT_FALSE(*posix_.Exists(paths().CompactionMarker()));
  EXPECT_THAT(dir->recovery().compaction, HasSubstr("rolled forward"));
  EXPECT_THAT(dir->recovery().compaction, HasSubstr("deleted 1 of 2 inputs"));
  std::vector<std::string> served;
  for (const auto& batch : dir->catalog().Pin()->batches()) served.push_back(batch->dir());
  EXPECT_THAT(served, UnorderedElementsAre(paths().Batch("2025-06-14", IdAt(kStampMicros + 2)),
                                           output_dir_));
  EXPECT_THAT(List(paths().Staging()), IsEmpty());
}

TEST_F(CompactionMarkerTest, MarkerWithInvalidOutputRefusesAndDeletesNothing) {
  CommitOutput({inputs_[0].ToString(), inputs_[1].ToString()});
  ASSERT_TRUE(WriteFile(posix_, output_dir_ + "/meta.json", "{}").ok());
  WriteMarker(Marker());
  ExpectRefused(fmt::format("its output {} is in days/ but invalid", output_dir_));
  EXPECT_TRUE(*posix_.Exists(paths().CompactionMarker()));
}

TEST_F(CompactionMarkerTest, OutputWithOtherSourcesRefuses) {
  CommitOutput({inputs_[0].ToString(), IdAt(kStampMicros + 2).ToString()});
  WriteMarker(Marker());
  ExpectRefused("its inputs differ from the sources");
}

TEST_F(CompactionMarkerTest, UnreadableMarkersRefuse) {
  for (const std::string& json : std::vector<std::string>{
           "",
           "not json",
           "[]",
           R"({"format": 1})",
           fmt::format(R"({{"format": 2, "day": "2025-06-14", "output": "{}", "inputs": ["{}"]}})",
                       output_.ToString(), inputs_[0].ToString()),
           fmt::format(R"({{"format": 1, "day": "2025-06-14", "output": "{}", "inputs": ["X"]}})",
                       output_.ToString()),
           fmt::format(R"({{"format": 1, "day": "2025-06-14", "output": "{}", "inputs": []}})",
                       output_.ToString()),
           fmt::format(R"({{"format": 1, "day": "2025-06-14", "output": "{}", "inputs": ["{}"]}})",
                       inputs_[1].ToString(), inputs_[0].ToString()),  // generation 0 output
           fmt::format(
               R"({{"format": 1, "day": "2025-06-14", "output": "{}", "inputs": ["{}"], "x": 1}})",
               output_.ToString(), inputs_[0].ToString()),
       }) {
    SCOPED_TRACE(json);
    WriteMarker(json);
    ExpectRefused("unreadable");
  }
  ASSERT_TRUE(posix_.RemoveFile(paths().CompactionMarker()).ok());
  ASSERT_TRUE(posix_.CreateDir(paths().CompactionMarker()).ok());
  ExpectRefused("is a directory");
}

TEST_F(CompactionMarkerTest, MarkerBesideATempMarkerRefuses) {
  WriteMarker(Marker());
  ASSERT_TRUE(WriteFile(posix_, paths().CompactionMarkerTemp(), Marker()).ok());
  ExpectRefused("COMPACTION.json.tmp exists beside it");
}

TEST(CompactionMarkerParseTest, ParsesTheDocExample) {
  absl::StatusOr<CompactionMarker> marker = ParseCompactionMarker(
      R"({"format": 1, "day": "2025-06-14", "output": "20250615021500000001100",
          "inputs": ["20250614093015123456000", "20250614093016000001000"]})");
  ASSERT_TRUE(marker.ok()) << marker.status();
  EXPECT_EQ(marker->day, "2025-06-14");
  EXPECT_EQ(marker->output.ToString(), "20250615021500000001100");
  ASSERT_EQ(marker->inputs.size(), 2u);
  EXPECT_EQ(marker->inputs[1].ToString(), "20250614093016000001000");
  EXPECT_FALSE(ParseCompactionMarker(
                   R"({"format": 1, "day": "2025-06-14", "output": "20250615021500000001100",
                       "inputs": ["20250614093015123456000", "20250614093015123456000"]})")
                   .ok());
  EXPECT_FALSE(ParseCompactionMarker(
                   R"({"format": 1, "format": 1, "day": "2025-06-14",
                       "output": "20250615021500000001100", "inputs": ["20250614093015123456000"]})")
                   .ok());
}

}  // namespace
}  // namespace strata::storage
