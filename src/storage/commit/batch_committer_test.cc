#include "storage/commit/batch_committer.h"

#include <xxhash.h>

#include <cerrno>
#include <map>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "fmt/format.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "io/fault_injection_file_system.h"
#include "io/posix_file_system.h"
#include "storage/format/format_file.h"
#include "storage/testing/commit_testing.h"

namespace strata::storage {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using testing::RandomEncodedBatch;
using testing::ScopedTempDir;
using testing::ScriptedFaultFileSystem;
using testing::ScriptedOp;

// 2025-06-14 09:30:15.123456 UTC.
constexpr int64_t kStampMicros = 1749893415123456;

BatchId IdAt(int64_t stamp_micros, int generation = 0) {
  return *BatchId::Make(stamp_micros, generation);
}

const std::optional<FileMeta>& DeclaredFile(const BatchMeta& meta, std::string_view name) {
  if (name == "spans.parquet") return meta.spans_parquet;
  if (name == "spans.tidx") return meta.spans_tidx;
  if (name == "logs.parquet") return meta.logs_parquet;
  if (name == "rollups.parquet") return meta.rollups_parquet;
  return meta.metrics_parquet;
}

class BatchCommitterTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_FALSE(temp_.path().empty());
    data_ = temp_.path() + "/data";
    ASSERT_TRUE(CheckOrInitializeDataDir(posix_, data_).ok());
  }

  std::vector<std::string> List(const std::string& dir) {
    absl::StatusOr<std::vector<std::string>> names = posix_.ListDir(dir);
    EXPECT_TRUE(names.ok()) << names.status();
    return names.ok() ? *names : std::vector<std::string>{};
  }

  // Checks `committed` as boot would, and that its files hold `batch`'s
  // bytes, hashed independently of the committer.
  void ExpectCommitted(const EncodedBatch& batch, const CommittedBatch& committed) {
    const DataDirPaths paths(data_);
    EXPECT_EQ(committed.dir, paths.Batch(batch.id.Day(), batch.id));
    absl::StatusOr<std::string> json = posix_.ReadFile(committed.dir + "/meta.json");
    ASSERT_TRUE(json.ok()) << json.status();
    absl::StatusOr<BatchMeta> meta = ParseBatchMeta(*json, batch.id.ToString());
    ASSERT_TRUE(meta.ok()) << meta.status();
    EXPECT_EQ(*meta, committed.meta);
    EXPECT_TRUE(CheckBatchMetaLocation(*meta, batch.id.ToString(), batch.id.Day()).ok());
    EXPECT_TRUE(CheckBatchFiles(posix_, committed.dir, *meta).ok())
        << CheckBatchFiles(posix_, committed.dir, *meta);
    EXPECT_EQ(meta->ingest_time, (NanosRange{batch.id.stamp_nanos(), batch.id.stamp_nanos()}));
    EXPECT_EQ(meta->spans, batch.spans);
    EXPECT_EQ(meta->logs, batch.logs);
    EXPECT_EQ(meta->metrics, batch.metrics);
    std::vector<std::string> expected_names = {"meta.json"};
    for (const EncodedFile& file : batch.files) {
      expected_names.push_back(file.name);
      EXPECT_EQ(*posix_.ReadFile(committed.dir + "/" + file.name), file.bytes) << file.name;
      const std::optional<FileMeta>& declared = DeclaredFile(*meta, file.name);
      ASSERT_TRUE(declared.has_value()) << file.name;
      EXPECT_EQ(declared->bytes, file.bytes.size());
      EXPECT_EQ(declared->xxh3_64, XXH3_64bits(file.bytes.data(), file.bytes.size()));
    }
    std::sort(expected_names.begin(), expected_names.end());
    EXPECT_EQ(List(committed.dir), expected_names);
  }

  void ExpectNothingCommitted() {
    const DataDirPaths paths(data_);
    for (const std::string& day : List(paths.Days())) {
      EXPECT_THAT(List(paths.Day(day)), IsEmpty()) << day;
    }
  }

  ScopedTempDir temp_{"committer"};
  PosixFileSystem posix_;
  std::string data_;
  std::mt19937_64 rng_{42};
};

TEST_F(BatchCommitterTest, CommittedBatchValidatesAndStagingIsLeftEmpty) {
  BatchCommitter committer(posix_, data_);
  for (int i = 0; i < 8; ++i) {
    const EncodedBatch batch = RandomEncodedBatch(IdAt(kStampMicros + i), rng_);
    absl::StatusOr<CommittedBatch> committed = committer.Commit(batch);
    ASSERT_TRUE(committed.ok()) << committed.status();
    ExpectCommitted(batch, *committed);
  }
  EXPECT_THAT(List(DataDirPaths(data_).Staging()), IsEmpty());
  EXPECT_THAT(List(DataDirPaths(data_).Days()), ElementsAre("2025-06-14"));
}

TEST_F(BatchCommitterTest, SignalsWithoutRowsHaveNoFiles) {
  EncodedBatch batch{.id = IdAt(kStampMicros), .spans = {}, .logs = {}, .metrics = {}, .files = {}};
  batch.spans.traces = 0;
  batch.logs = SignalMeta{.rows = 2, .file_rows = 3, .event_time = NanosRange{5, 9}};
  batch.files.push_back(EncodedFile{"logs.parquet", "log bytes"});
  batch.files.push_back(EncodedFile{"rollups.parquet", "rollup bytes"});
  BatchCommitter committer(posix_, data_);
  absl::StatusOr<CommittedBatch> committed = committer.Commit(batch);
  ASSERT_TRUE(committed.ok()) << committed.status();
  ExpectCommitted(batch, *committed);
  EXPECT_FALSE(committed->meta.spans_parquet.has_value());
  EXPECT_FALSE(committed->meta.spans_tidx.has_value());
  EXPECT_FALSE(committed->meta.metrics_parquet.has_value());
  EXPECT_THAT(List(committed->dir), ElementsAre("logs.parquet", "meta.json", "rollups.parquet"));
}

TEST_F(BatchCommitterTest, LargeFilesAreHashedAcrossWriteChunks) {
  EncodedBatch batch = RandomEncodedBatch(IdAt(kStampMicros), rng_);
  batch.metrics = testing::RandomSignal(rng_, batch.id.stamp_nanos(), false);
  std::erase_if(batch.files, [](const EncodedFile& f) { return f.name == "metrics.parquet"; });
  batch.files.push_back(EncodedFile{"metrics.parquet", testing::RandomBytes(rng_, 5 << 19)});
  testing::MatchRollupsFile(&batch, rng_);
  BatchCommitter committer(posix_, data_);
  absl::StatusOr<CommittedBatch> committed = committer.Commit(batch);
  ASSERT_TRUE(committed.ok()) << committed.status();
  ExpectCommitted(batch, *committed);
}

TEST_F(BatchCommitterTest, CompactedBatchTakesItsDayFromTheInputs) {
  // Stamped just after midnight, holding rows ingested the day before.
  const BatchId id = IdAt(kStampMicros + int64_t{86400} * 1000000, /*generation=*/1);
  EncodedBatch batch = RandomEncodedBatch(id, rng_);
  batch.sources = {IdAt(kStampMicros).ToString(), IdAt(kStampMicros + 5).ToString()};
  batch.ingest_time =
      NanosRange{IdAt(kStampMicros).stamp_nanos(), IdAt(kStampMicros + 5).stamp_nanos()};
  BatchCommitter committer(posix_, data_);
  absl::StatusOr<CommittedBatch> committed = committer.Commit(batch);
  ASSERT_TRUE(committed.ok()) << committed.status();
  EXPECT_EQ(committed->meta.day, "2025-06-14");
  EXPECT_EQ(committed->meta.generation, 1u);
  EXPECT_EQ(committed->meta.sources, batch.sources);
  EXPECT_EQ(committed->dir, DataDirPaths(data_).Batch("2025-06-14", id));
  EXPECT_TRUE(CheckBatchFiles(posix_, committed->dir, committed->meta).ok());

  batch.ingest_time.reset();
  absl::StatusOr<CommittedBatch> refused = BatchCommitter(posix_, data_).Commit(batch);
  EXPECT_EQ(refused.status().code(), absl::StatusCode::kInternal) << refused.status();
}

TEST_F(BatchCommitterTest, MisbuiltBatchesAreInternalErrorsAndWriteNothing) {
  BatchCommitter committer(posix_, data_);
  std::vector<std::pair<std::string, EncodedBatch>> cases;
  EncodedBatch base{.id = IdAt(kStampMicros), .spans = {}, .logs = {}, .metrics = {}, .files = {}};
  base.spans.traces = 0;
  base.logs = SignalMeta{.rows = 1, .file_rows = 1, .event_time = NanosRange{1, 2}};
  EncodedBatch unknown = base;
  unknown.files = {{"logs.parquet", "x"}, {"notes.txt", "y"}, {"rollups.parquet", "r"}};
  cases.emplace_back("is not a batch file name", unknown);
  EncodedBatch repeated = base;
  repeated.files = {{"logs.parquet", "x"}, {"logs.parquet", "y"}, {"rollups.parquet", "r"}};
  cases.emplace_back("given twice", repeated);
  EncodedBatch missing = base;  // logs has rows but no file
  missing.files = {{"rollups.parquet", "r"}};
  cases.emplace_back("rule 8 (files.logs.parquet)", missing);
  EncodedBatch extra = base;  // metrics has no rows but a file
  extra.files = {{"logs.parquet", "x"}, {"metrics.parquet", "y"}, {"rollups.parquet", "r"}};
  cases.emplace_back("rule 8 (files.metrics.parquet)", extra);
  EncodedBatch no_rollups = base;  // rows but no rollups
  no_rollups.files = {{"logs.parquet", "x"}};
  cases.emplace_back("rule 8 (files.rollups.parquet)", no_rollups);
  for (const auto& [what, batch] : cases) {
    absl::StatusOr<CommittedBatch> committed = committer.Commit(batch);
    ASSERT_FALSE(committed.ok()) << what;
    EXPECT_EQ(committed.status().code(), absl::StatusCode::kInternal) << committed.status();
    EXPECT_THAT(std::string(committed.status().message()), HasSubstr(what));
  }
  EXPECT_THAT(List(DataDirPaths(data_).Staging()), IsEmpty());
  ExpectNothingCommitted();
}

TEST_F(BatchCommitterTest, ExistingStagingDirectoryIsLeftAlone) {
  const BatchId id = IdAt(kStampMicros);
  const std::string staging = DataDirPaths(data_).StagingBatch(id);
  ASSERT_TRUE(posix_.CreateDir(staging).ok());
  ASSERT_TRUE(WriteFile(posix_, staging + "/spans.parquet", "someone else's").ok());
  BatchCommitter committer(posix_, data_);
  absl::StatusOr<CommittedBatch> committed = committer.Commit(RandomEncodedBatch(id, rng_));
  EXPECT_EQ(committed.status().code(), absl::StatusCode::kUnavailable) << committed.status();
  EXPECT_EQ(*posix_.ReadFile(staging + "/spans.parquet"), "someone else's");
  ExpectNothingCommitted();
}

// One case per step of commit.md: the operation and path that fail.
struct StepFault {
  const char* step;
  ScriptedOp op;
  const char* path_suffix;  // relative to the data directory
};

const StepFault kStepFaults[] = {
    {"1 create staging", ScriptedOp::kCreateDir, "telemetry/staging/20250614093015123456000"},
    {"2 open", ScriptedOp::kOpen, "/logs.parquet"},
    {"2 append", ScriptedOp::kAppend, "/logs.parquet"},
    {"2 sync", ScriptedOp::kSync, "/logs.parquet"},
    {"2 close", ScriptedOp::kClose, "/logs.parquet"},
    {"3 append meta.json", ScriptedOp::kAppend, "/meta.json"},
    {"3 sync meta.json", ScriptedOp::kSync, "/meta.json"},
    {"4 sync staging dir", ScriptedOp::kSyncDir, "telemetry/staging/20250614093015123456000"},
    {"5 create day", ScriptedOp::kCreateDir, "telemetry/days/2025-06-14"},
    {"5 sync days", ScriptedOp::kSyncDir, "telemetry/days"},
    {"6 rename", ScriptedOp::kRename, ".batch"},
    {"7 sync day", ScriptedOp::kSyncDir, "telemetry/days/2025-06-14"},
};

TEST_F(BatchCommitterTest, FailureAtEachStepIsUnavailableAndLeavesNothingInDays) {
  for (const int error_number : {EIO, ENOSPC}) {
    for (const StepFault& fault : kStepFaults) {
      for (const int times : {1, -1}) {  // a transient fault, and one that persists
        SCOPED_TRACE(fmt::format("step {}, errno {}, times {}", fault.step, error_number, times));
        ScopedTempDir temp("committer_step");
        const std::string data = temp.path() + "/data";
        ASSERT_TRUE(CheckOrInitializeDataDir(posix_, data).ok());
        ScriptedFaultFileSystem scripted(posix_);
        BatchCommitter committer(scripted, data);
        scripted.FailOn(fault.op, fault.path_suffix, error_number, times);

        EncodedBatch batch = RandomEncodedBatch(IdAt(kStampMicros), rng_);
        batch.logs = testing::RandomSignal(rng_, batch.id.stamp_nanos(), false);
        std::erase_if(batch.files, [](const EncodedFile& f) { return f.name == "logs.parquet"; });
        batch.files.push_back(EncodedFile{"logs.parquet", "log bytes"});
        testing::MatchRollupsFile(&batch, rng_);
        absl::StatusOr<CommittedBatch> committed = committer.Commit(batch);
        ASSERT_FALSE(committed.ok());
        EXPECT_GE(scripted.failures(), 1);
        EXPECT_EQ(committed.status().code(), absl::StatusCode::kUnavailable) << committed.status();
        const std::string message(committed.status().message());
        EXPECT_THAT(message, HasSubstr(batch.id.ToString()));
        EXPECT_THAT(message, HasSubstr(error_number == EIO ? "EIO" : "ENOSPC"));
        EXPECT_EQ(ErrnoOf(committed.status()), error_number);

        const DataDirPaths paths(data);
        for (const std::string& day : List(paths.Days())) {
          EXPECT_THAT(List(paths.Day(day)), IsEmpty()) << day;
        }
        // A transient fault lets the cleanup finish; a persistent one may
        // leave this batch's own directory in staging (boot removes it).
        const std::vector<std::string> staging = List(paths.Staging());
        if (times == 1) {
          EXPECT_THAT(staging, IsEmpty());
        } else {
          for (const std::string& name : staging) EXPECT_THAT(name, HasSubstr(batch.id.ToString()));
        }

        scripted.Clear();
        const EncodedBatch next = RandomEncodedBatch(IdAt(kStampMicros + 1), rng_);
        absl::StatusOr<CommittedBatch> retried = committer.Commit(next);
        ASSERT_TRUE(retried.ok()) << retried.status();
        EXPECT_TRUE(CheckBatchFiles(posix_, retried->dir, retried->meta).ok());
      }
    }
  }
}

TEST_F(BatchCommitterTest, OneInNFaultsNeverLeaveAPartialBatchInDays) {
  PosixFileSystem posix;
  FaultInjectionFileSystem faulty(&posix, 7);
  BatchCommitter committer(faulty, data_);
  for (IoOperation op :
       {IoOperation::kOpenForWrite, IoOperation::kAppend, IoOperation::kSync, IoOperation::kClose,
        IoOperation::kRename, IoOperation::kSyncDir, IoOperation::kCreateDir}) {
    // One in 8: a batch with every file makes six appends and syncs.
    faulty.InjectFaults(op, 8, ENOSPC);
  }
  int ok = 0;
  int failed = 0;
  for (int i = 0; i < 60; ++i) {
    absl::StatusOr<CommittedBatch> committed =
        committer.Commit(RandomEncodedBatch(IdAt(kStampMicros + i), rng_));
    if (committed.ok()) {
      ++ok;
    } else {
      ++failed;
      EXPECT_EQ(committed.status().code(), absl::StatusCode::kUnavailable) << committed.status();
    }
  }
  EXPECT_GT(ok, 0);
  EXPECT_GT(failed, 0);
  // Every directory in days/ is a whole batch: an acknowledged one, or one
  // whose day sync failed and whose rollback could not finish.
  const DataDirPaths paths(data_);
  for (const std::string& day : List(paths.Days())) {
    for (const std::string& name : List(paths.Day(day))) {
      const std::string dir = paths.Day(day) + "/" + name;
      absl::StatusOr<BatchMeta> meta =
          ParseBatchMeta(*posix_.ReadFile(dir + "/meta.json"), name.substr(0, kBatchIdLength));
      ASSERT_TRUE(meta.ok()) << meta.status();
      EXPECT_TRUE(CheckBatchFiles(posix_, dir, *meta).ok()) << dir;
    }
  }
}

TEST_F(BatchCommitterTest, ConcurrentCommitsIntoOneDayAllLand) {
  BatchCommitter committer(posix_, data_);
  BatchIdIssuer issuer([] { return kStampMicros; });
  constexpr int kThreads = 4;
  constexpr int kPerThread = 5;
  std::vector<std::vector<absl::StatusOr<CommittedBatch>>> results(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      std::mt19937_64 rng(t);
      for (int i = 0; i < kPerThread; ++i) {
        absl::StatusOr<BatchId> id = issuer.Issue(0);
        if (!id.ok()) {
          results[t].push_back(id.status());
          continue;
        }
        results[t].push_back(committer.Commit(RandomEncodedBatch(*id, rng)));
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  int committed = 0;
  for (const auto& per_thread : results) {
    for (const absl::StatusOr<CommittedBatch>& result : per_thread) {
      ASSERT_TRUE(result.ok()) << result.status();
      EXPECT_TRUE(CheckBatchFiles(posix_, result->dir, result->meta).ok());
      ++committed;
    }
  }
  EXPECT_EQ(committed, kThreads * kPerThread);
  EXPECT_EQ(List(DataDirPaths(data_).Day("2025-06-14")).size(), size_t{kThreads * kPerThread});
}

TEST_F(BatchCommitterTest, AcknowledgedBatchSurvivesACrashIntoANewDay) {
  PosixFileSystem posix;
  FaultInjectionFileSystem faulty(&posix, 11);
  BatchCommitter committer(faulty, data_);
  const EncodedBatch batch = RandomEncodedBatch(IdAt(kStampMicros), rng_);
  absl::StatusOr<CommittedBatch> committed = committer.Commit(batch);
  ASSERT_TRUE(committed.ok()) << committed.status();
  ASSERT_TRUE(faulty.SimulateCrash().ok());
  ExpectCommitted(batch, *committed);
}

TEST_F(BatchCommitterTest, DeleteBatchRemovesItWholeThroughStaging) {
  BatchCommitter committer(posix_, data_);
  const EncodedBatch batch = RandomEncodedBatch(IdAt(kStampMicros), rng_);
  absl::StatusOr<CommittedBatch> committed = committer.Commit(batch);
  ASSERT_TRUE(committed.ok()) << committed.status();
  const DataDirPaths paths(data_);

  // A failed sync after the rename leaves the batch in staging, not deleted
  // by halves: the retired directory is removed only once the rename is
  // durable.
  ScriptedFaultFileSystem scripted(posix_);
  scripted.FailOn(ScriptedOp::kSyncDir, "telemetry/staging", EIO, 1);
  absl::Status deleted = DeleteBatch(scripted, paths, batch.id.Day(), batch.id);
  EXPECT_EQ(deleted.code(), absl::StatusCode::kUnavailable) << deleted;
  EXPECT_THAT(std::string(deleted.message()), HasSubstr(batch.id.ToString()));
  EXPECT_THAT(List(paths.Day(batch.id.Day())), IsEmpty());
  EXPECT_THAT(List(paths.Staging()), ElementsAre(batch.id.ToString() + ".retired"));
  EXPECT_EQ(List(paths.RetiredBatch(batch.id)).size(), batch.files.size() + 1);
  ASSERT_TRUE(posix_.RemoveAll(paths.RetiredBatch(batch.id)).ok());

  const EncodedBatch second = RandomEncodedBatch(IdAt(kStampMicros + 1), rng_);
  ASSERT_TRUE(committer.Commit(second).ok());
  ASSERT_TRUE(DeleteBatch(posix_, paths, second.id.Day(), second.id).ok());
  EXPECT_THAT(List(paths.Day(second.id.Day())), IsEmpty());
  EXPECT_THAT(List(paths.Staging()), IsEmpty());
  EXPECT_EQ(DeleteBatch(posix_, paths, second.id.Day(), second.id).code(),
            absl::StatusCode::kNotFound);
}

TEST_F(BatchCommitterTest, ForgottenDayIsCreatedAgain) {
  BatchCommitter committer(posix_, data_);
  ASSERT_TRUE(committer.Commit(RandomEncodedBatch(IdAt(kStampMicros), rng_)).ok());
  const DataDirPaths paths(data_);
  ASSERT_TRUE(posix_.RemoveAll(paths.Day("2025-06-14")).ok());
  // Without ForgetDay the rename fails once and the committer notices.
  absl::StatusOr<CommittedBatch> failed =
      committer.Commit(RandomEncodedBatch(IdAt(kStampMicros + 1), rng_));
  EXPECT_EQ(failed.status().code(), absl::StatusCode::kUnavailable);
  ASSERT_TRUE(committer.Commit(RandomEncodedBatch(IdAt(kStampMicros + 2), rng_)).ok());
  ASSERT_TRUE(posix_.RemoveAll(paths.Day("2025-06-14")).ok());
  committer.ForgetDay("2025-06-14");
  EXPECT_TRUE(committer.Commit(RandomEncodedBatch(IdAt(kStampMicros + 3), rng_)).ok());
}

}  // namespace
}  // namespace strata::storage
