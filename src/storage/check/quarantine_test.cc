// `strata quarantine`'s work (storage/quarantine.h) on data directories of
// real batches: what it refuses (a healthy batch, one named by a
// compaction marker, a directory another process holds), that boot names
// it when it refuses a corrupt batch and succeeds once the batch is moved,
// and a crash at every sync leaving the batch whole in exactly one place.

#include "storage/check/quarantine.h"

#include <memory>
#include <string>
#include <vector>

#include "fmt/format.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "io/fault_injection_file_system.h"
#include "io/posix_file_system.h"
#include "query/parquet_file_check.h"
#include "storage/commit/data_dir.h"
#include "storage/storage.h"
#include "storage/testing/commit_testing.h"
#include "storage/testing/verify_fixture.h"
#include "storage/testing/verify_testing.h"

namespace strata::storage {
namespace {

using ::testing::HasSubstr;
using testing::ScopedTempDir;
using verify_testing::BatchIdOfDir;
using verify_testing::DayOfDir;

class QuarantineTest : public verify_testing::TrafficBatchesTest {
 protected:
  QuarantineTest() : TrafficBatchesTest("quarantine", 200) {}

  void SetUp() override {
    TrafficBatchesTest::SetUp();
    if (HasFatalFailure()) return;
    options_.deep = true;
    options_.parquet_check = query::DuckDbParquetFileCheck(engine_.get());
  }

  BatchId IdOf(const std::string& dir) { return *BatchId::Parse(BatchIdOfDir(dir)); }
  std::string QuarantinedDir(const std::string& dir) {
    return fmt::format("{}/{}/{}.batch", DataDirPaths(data_).Quarantine(), DayOfDir(dir),
                       BatchIdOfDir(dir));
  }
  bool Exists(const std::string& path) { return posix_.Exists(path).value_or(false); }

  // Changes one byte of `dir`'s spans.parquet (meta.json left as it was):
  // corruption boot itself refuses.
  void ChangeByte(const std::string& dir) {
    const std::string path = dir + "/spans.parquet";
    absl::StatusOr<std::string> bytes = posix_.ReadFile(path);
    ASSERT_TRUE(bytes.ok()) << bytes.status();
    (*bytes)[bytes->size() / 3] ^= 0x10;
    ASSERT_TRUE(WriteFile(posix_, path, *bytes).ok());
  }

  absl::StatusOr<std::unique_ptr<Storage>> Boot() { return Storage::Open(posix_, data_); }

  std::vector<std::string> FilesOf(const std::string& dir) {
    absl::StatusOr<std::vector<std::string>> names = posix_.ListDir(dir);
    return names.ok() ? *names : std::vector<std::string>{};
  }

  // Copies the tree at `from` to `to` (which must not exist).
  void CopyTree(const std::string& from, const std::string& to) {
    ASSERT_TRUE(posix_.CreateDir(to).ok()) << to;
    for (const std::string& name : FilesOf(from)) {
      const std::string source = from + "/" + name, target = to + "/" + name;
      if (posix_.IsDirectory(source).value_or(false)) {
        CopyTree(source, target);
      } else {
        absl::StatusOr<std::string> bytes = posix_.ReadFile(source);
        ASSERT_TRUE(bytes.ok()) << bytes.status();
        ASSERT_TRUE(WriteFile(posix_, target, *bytes).ok()) << target;
      }
    }
  }

  VerifyOptions options_;
};

TEST_F(QuarantineTest, RefusesAHealthyBatch) {
  absl::StatusOr<QuarantinedBatch> moved = QuarantineBatch(posix_, data_, IdOf(dirs_[0]), options_);
  EXPECT_TRUE(absl::IsFailedPrecondition(moved.status())) << moved.status();
  EXPECT_THAT(std::string(moved.status().message()), HasSubstr("passed every check"));
  EXPECT_TRUE(Exists(dirs_[0]));
  EXPECT_FALSE(Exists(QuarantinedDir(dirs_[0])));
}

TEST_F(QuarantineTest, BootNamesTheCommandThenStartsOnceTheBatchIsMoved) {
  ChangeByte(dirs_[1]);
  absl::StatusOr<std::unique_ptr<Storage>> refused = Boot();
  ASSERT_EQ(refused.status().code(), absl::StatusCode::kDataLoss) << refused.status();
  const std::string message(refused.status().message());
  EXPECT_THAT(message, HasSubstr("`strata verify"));
  EXPECT_THAT(message, HasSubstr(fmt::format("`strata quarantine {}`", BatchIdOfDir(dirs_[1]))));
  EXPECT_THAT(message, HasSubstr("see docs/operations.md#corrupt-batch"));

  absl::StatusOr<QuarantinedBatch> moved = QuarantineBatch(posix_, data_, IdOf(dirs_[1]), options_);
  ASSERT_TRUE(moved.ok()) << moved.status();
  EXPECT_EQ(moved->from, dirs_[1]);
  EXPECT_EQ(moved->to, QuarantinedDir(dirs_[1]));
  EXPECT_EQ(moved->verdict.status, BatchStatus::kCorrupt);
  EXPECT_EQ(moved->verdict.check, "files");
  EXPECT_EQ(moved->verdict.file, "spans.parquet");
  EXPECT_FALSE(Exists(dirs_[1]));
  EXPECT_TRUE(Exists(QuarantinedDir(dirs_[1]) + "/spans.parquet"));

  absl::StatusOr<std::unique_ptr<Storage>> booted = Boot();
  ASSERT_TRUE(booted.ok()) << booted.status();
  std::vector<std::string> served;
  for (const auto& batch : (*booted)->Pin()->batches()) served.push_back(batch->dir());
  EXPECT_EQ(served, (std::vector<std::string>{dirs_[0], dirs_[2]}));
}

// Corruption only decoding finds: boot serves the batch, verify proves it
// corrupt, so quarantine moves it.
TEST_F(QuarantineTest, MovesABatchOnlyDeepVerifyProvesCorrupt) {
  const std::string path = dirs_[2] + "/spans.parquet";
  absl::StatusOr<std::string> bytes = posix_.ReadFile(path);
  ASSERT_TRUE(bytes.ok());
  absl::StatusOr<uint64_t> at = verify_testing::PageBodyOffset(*bytes, "span_id");
  ASSERT_TRUE(at.ok()) << at.status();
  (*bytes)[*at] ^= 0x5a;
  ASSERT_TRUE(verify_testing::RewriteBatchFile(posix_, dirs_[2], "spans.parquet", *bytes).ok());
  ASSERT_TRUE(Boot().ok());

  absl::StatusOr<QuarantinedBatch> moved = QuarantineBatch(posix_, data_, IdOf(dirs_[2]), options_);
  ASSERT_TRUE(moved.ok()) << moved.status();
  EXPECT_EQ(moved->verdict.check, "decode");
  EXPECT_TRUE(Exists(moved->to));
}

TEST_F(QuarantineTest, RefusesWhileAnotherProcessHoldsTheLock) {
  ChangeByte(dirs_[1]);
  absl::StatusOr<std::unique_ptr<FileLock>> held = LockDataDir(posix_, DataDirPaths(data_));
  ASSERT_TRUE(held.ok()) << held.status();
  absl::StatusOr<QuarantinedBatch> moved = QuarantineBatch(posix_, data_, IdOf(dirs_[1]), options_);
  EXPECT_TRUE(absl::IsFailedPrecondition(moved.status())) << moved.status();
  EXPECT_THAT(std::string(moved.status().message()), HasSubstr("#data-directory-in-use"));
  EXPECT_TRUE(Exists(dirs_[1]));
  held->reset();
  EXPECT_TRUE(QuarantineBatch(posix_, data_, IdOf(dirs_[1]), options_).ok());
}

TEST_F(QuarantineTest, RefusesABatchNamedByACompactionMarker) {
  ChangeByte(dirs_[1]);
  ChangeByte(dirs_[2]);
  const DataDirPaths paths(data_);
  // A compaction (not yet published) of dirs_[0] and dirs_[1].
  constexpr char kOutput[] = "20991231235959999999100";
  const std::string marker =
      fmt::format(R"({{"format":1,"day":"{}","output":"{}","inputs":["{}","{}"]}})",
                  DayOfDir(dirs_[0]), kOutput, BatchIdOfDir(dirs_[0]), BatchIdOfDir(dirs_[1]));
  ASSERT_TRUE(WriteFile(posix_, paths.CompactionMarker(), marker).ok());
  absl::StatusOr<QuarantinedBatch> input = QuarantineBatch(posix_, data_, IdOf(dirs_[1]), options_);
  EXPECT_TRUE(absl::IsFailedPrecondition(input.status())) << input.status();
  EXPECT_THAT(std::string(input.status().message()), HasSubstr("is an input of the compaction"));
  EXPECT_TRUE(Exists(dirs_[1]));
  // dirs_[2] is not named: it moves.
  EXPECT_TRUE(QuarantineBatch(posix_, data_, IdOf(dirs_[2]), options_).ok());

  // The same compaction after publishing its (corrupt) output: dirs_[1]
  // stands in for it under the output's name.
  const BatchId output_id = *BatchId::Parse(kOutput);
  const std::string as_output =
      fmt::format(R"({{"format":1,"day":"{}","output":"{}","inputs":["{}"]}})", DayOfDir(dirs_[0]),
                  kOutput, BatchIdOfDir(dirs_[0]));
  ASSERT_TRUE(WriteFile(posix_, paths.CompactionMarker(), as_output).ok());
  const std::string output_dir = paths.Batch(DayOfDir(dirs_[0]), output_id);
  ASSERT_TRUE(posix_.RenameFile(dirs_[1], output_dir).ok());
  absl::StatusOr<QuarantinedBatch> output = QuarantineBatch(posix_, data_, output_id, options_);
  EXPECT_TRUE(absl::IsFailedPrecondition(output.status())) << output.status();
  EXPECT_THAT(std::string(output.status().message()), HasSubstr("is the output of the compaction"));
  EXPECT_THAT(std::string(output.status().message()), HasSubstr("#unresolved-compaction-marker"));

  ASSERT_TRUE(WriteFile(posix_, paths.CompactionMarker(), "not json").ok());
  absl::StatusOr<QuarantinedBatch> unreadable = QuarantineBatch(posix_, data_, output_id, options_);
  EXPECT_TRUE(absl::IsFailedPrecondition(unreadable.status())) << unreadable.status();
  EXPECT_THAT(std::string(unreadable.status().message()), HasSubstr("cannot be read"));
  EXPECT_TRUE(Exists(output_dir));
}

TEST_F(QuarantineTest, UnknownAndAlreadyQuarantinedIdsAreNotFound) {
  absl::StatusOr<QuarantinedBatch> unknown =
      QuarantineBatch(posix_, data_, *BatchId::Make(12345, 0), options_);
  EXPECT_TRUE(absl::IsNotFound(unknown.status())) << unknown.status();
  ChangeByte(dirs_[0]);
  ASSERT_TRUE(QuarantineBatch(posix_, data_, IdOf(dirs_[0]), options_).ok());
  absl::StatusOr<QuarantinedBatch> again = QuarantineBatch(posix_, data_, IdOf(dirs_[0]), options_);
  EXPECT_TRUE(absl::IsNotFound(again.status())) << again.status();
  EXPECT_THAT(std::string(again.status().message()), HasSubstr("already quarantined"));
}

TEST_F(QuarantineTest, RefusesADirectoryWithoutFormatWithoutWritingIntoIt) {
  const std::string plain = temp_.path() + "/plain";
  ASSERT_TRUE(posix_.CreateDir(plain).ok());
  absl::StatusOr<QuarantinedBatch> moved = QuarantineBatch(posix_, plain, IdOf(dirs_[0]), options_);
  EXPECT_TRUE(absl::IsFailedPrecondition(moved.status())) << moved.status();
  EXPECT_FALSE(Exists(plain + "/LOCK"));
}

// A crash after each sync in turn: the batch is whole in exactly one of
// days/ and quarantine/, in quarantine/ whenever the command returned OK,
// and boot either starts (moved) or refuses it again (not moved), after
// which the command, run again, finishes the job.
TEST_F(QuarantineTest, CrashAtEverySyncLeavesTheBatchInExactlyOnePlace) {
  ChangeByte(dirs_[1]);
  const std::string source = temp_.path() + "/source";
  ASSERT_TRUE(posix_.RenameFile(data_, source).ok());
  const std::string relative = dirs_[1].substr(data_.size());
  const std::vector<std::string> expected_files = FilesOf(source + relative);
  ASSERT_FALSE(expected_files.empty());

  // The syncs of a run without a crash.
  CopyTree(source, data_);
  uint64_t total_syncs = 0;
  {
    FaultInjectionFileSystem counting(&posix_, /*seed=*/1);
    ASSERT_TRUE(QuarantineBatch(counting, data_, IdOf(dirs_[1]), options_).ok());
    total_syncs = counting.sync_count();
  }
  ASSERT_GE(total_syncs, 2u);  // the quarantine day's entry, the rename

  for (uint64_t syncs = 0; syncs <= total_syncs; ++syncs) {
    SCOPED_TRACE(fmt::format("crash after {} of {} syncs", syncs, total_syncs));
    ASSERT_TRUE(posix_.RemoveAll(data_).ok());
    CopyTree(source, data_);
    FaultInjectionFileSystem faulty(&posix_, /*seed=*/syncs);
    faulty.CrashAfterSyncs(syncs);
    absl::StatusOr<QuarantinedBatch> moved =
        QuarantineBatch(faulty, data_, IdOf(dirs_[1]), options_);
    EXPECT_EQ(moved.ok(), syncs == total_syncs) << moved.status();
    ASSERT_TRUE(faulty.SimulateCrash().ok());

    const bool in_days = Exists(dirs_[1]);
    const bool in_quarantine = Exists(QuarantinedDir(dirs_[1]));
    ASSERT_NE(in_days, in_quarantine);
    EXPECT_EQ(FilesOf(in_days ? dirs_[1] : QuarantinedDir(dirs_[1])), expected_files);
    if (moved.ok()) EXPECT_TRUE(in_quarantine);
    if (in_days) {
      EXPECT_EQ(Boot().status().code(), absl::StatusCode::kDataLoss);
      ASSERT_TRUE(QuarantineBatch(posix_, data_, IdOf(dirs_[1]), options_).ok());
    }
    EXPECT_TRUE(Boot().ok());
  }
}

}  // namespace
}  // namespace strata::storage
