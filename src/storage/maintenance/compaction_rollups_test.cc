// Rollups across the life of batches: each commit's rollups.parquet equals
// the rollups of the request's rows; batches written without rollups
// (meta.json format 1, as before them) answer the same rollups computed
// from their tables; a compaction of such batches writes format 3 output
// whose rollups are the inputs' merged; `strata rollups rebuild` rewrites
// the batches whose rollups are missing or wrong and leaves the others,
// and when it cannot (unreadable rollups, a failed write, an earlier
// rewrite still pending) says which batch and changes nothing; verify
// --deep passes throughout.

#include <algorithm>
#include <cerrno>
#include <memory>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "io/fault_injection_file_system.h"
#include "io/posix_file_system.h"
#include "parquet/file_reader.h"
#include "rollups/rollup_rows.h"
#include "storage/check/verify.h"
#include "storage/rollups_rebuild.h"
#include "storage/storage.h"
#include "storage/table/rollups_table.h"
#include "storage/testing/commit_testing.h"
#include "storage/testing/verify_testing.h"
#include "workload/traffic_generator.h"

namespace strata::storage {
namespace {

// Request k's traffic; the same every call.
struct Traffic {
  std::unique_ptr<otlp::TraceBatch> traces;
  std::unique_ptr<otlp::LogBatch> logs;
  std::unique_ptr<otlp::MetricBatch> metrics;
};
Traffic Generate(int k) {
  workload::TrafficGenerator generator(workload::TrafficOptions{
      .seed = static_cast<uint64_t>(k) + 40,
      .start_time_unix_nano = 1'750'000'000'000'000'000ULL + k * 90'000'000'000ULL});
  return {generator.Traces(700), generator.Logs(300), generator.Metrics(200)};
}

rollups::RollupRows RollupsOf(const Traffic& t) {
  const otlp::TraceBatch* traces = t.traces.get();
  const otlp::LogBatch* logs = t.logs.get();
  const otlp::MetricBatch* metrics = t.metrics.get();
  return rollups::BuildRollups({&traces, 1}, {&logs, 1}, {&metrics, 1});
}

absl::Status Write(Storage& storage, int k) {
  Traffic t = Generate(k);
  WriteRequest request;
  request.rows = t.traces->spans.size() + t.logs->logs.size() + t.metrics->point_count();
  request.bytes = request.rows * 200;
  request.traces = std::move(t.traces);
  request.logs = std::move(t.logs);
  request.metrics = std::move(t.metrics);
  return storage.Write(std::move(request));
}

TEST(CompactionRollupsTest, FormatOneBatchesAnswerRollupsAndGainThemWhenCompacted) {
  testing::ScopedTempDir temp("compaction-rollups");
  const std::string data = temp.path() + "/data";
  PosixFileSystem fs;
  std::vector<rollups::RollupRows> expected;
  {
    StorageOptions options;
    options.writer.max_requests_per_batch = 1;
    options.write_rollups = false;
    absl::StatusOr<std::unique_ptr<Storage>> storage = Storage::Open(fs, data, options);
    ASSERT_TRUE(storage.ok()) << storage.status();
    for (int k = 0; k < 3; ++k) {
      ASSERT_TRUE(Write(**storage, k).ok());
      expected.push_back(RollupsOf(Generate(k)));
    }
    const std::shared_ptr<const Snapshot> live = (*storage)->Pin();
    ASSERT_EQ(live->size(), 3u);
    for (size_t i = 0; i < live->size(); ++i) {
      const LiveBatch& batch = *live->batches()[i];
      EXPECT_EQ(batch.meta().format, 1u);
      EXPECT_FALSE(batch.meta().rollups_parquet.has_value());
      // No file: computed from the tables, a range of rows at a time.
      absl::StatusOr<rollups::RollupRows> rows = ReadBatchRollups(fs, batch.dir(), batch.meta());
      ASSERT_TRUE(rows.ok()) << rows.status();
      EXPECT_EQ(*rows, expected[i]) << i;
    }
  }
  // Compacted by a binary that writes rollups: the output is format 3 with
  // the inputs' rollups merged.
  absl::StatusOr<std::unique_ptr<Storage>> storage = Storage::Open(fs, data, {});
  ASSERT_TRUE(storage.ok()) << storage.status();
  absl::StatusOr<BatchMeta> output = verify_testing::CompactEverything(**storage);
  ASSERT_TRUE(output.ok()) << output.status();
  EXPECT_EQ(output->format, kBatchMetaFormat);
  EXPECT_TRUE(output->rollups_parquet.has_value());
  ASSERT_TRUE(Write(**storage, 3).ok());
  const std::shared_ptr<const Snapshot> live = (*storage)->Pin();
  ASSERT_EQ(live->size(), 2u);
  std::vector<const rollups::RollupRows*> inputs;
  for (const rollups::RollupRows& rows : expected) inputs.push_back(&rows);
  const rollups::RollupRows merged = rollups::MergeRollups(inputs);
  const rollups::RollupRows fourth = RollupsOf(Generate(3));
  for (const auto& batch : live->batches()) {
    EXPECT_EQ(batch->meta().format, kBatchMetaFormat);
    absl::StatusOr<rollups::RollupRows> rows = ReadBatchRollups(fs, batch->dir(), batch->meta());
    ASSERT_TRUE(rows.ok()) << rows.status();
    // The compaction output (generation 1) holds the three inputs; the new
    // batch the fourth request.
    EXPECT_EQ(*rows, batch->meta().generation == 1 ? merged : fourth);
  }
  (*storage).reset();
  VerifyOptions deep;
  deep.deep = true;
  absl::StatusOr<VerifyReport> report = VerifyDataDir(fs, data, deep);
  ASSERT_TRUE(report.ok()) << report.status();
  EXPECT_TRUE(report->Healthy());
  EXPECT_EQ(report->Count(BatchStatus::kOk), 2u);
}

TEST(CompactionRollupsTest, RebuildRewritesMissingAndWrongRollupsAndLeavesEqualOnesAlone) {
  testing::ScopedTempDir temp("rollups-rebuild");
  const std::string data = temp.path() + "/data";
  PosixFileSystem fs;
  std::vector<rollups::RollupRows> expected;
  std::vector<std::string> dirs;
  for (bool write_rollups : {false, true}) {
    // Requests 0 and 1 without rollups (format 1), then 2, 3 and 4 with.
    StorageOptions options;
    options.writer.max_requests_per_batch = 1;
    options.write_rollups = write_rollups;
    absl::StatusOr<std::unique_ptr<Storage>> storage = Storage::Open(fs, data, options);
    ASSERT_TRUE(storage.ok()) << storage.status();
    for (int k = write_rollups ? 2 : 0; k < (write_rollups ? 5 : 2); ++k) {
      ASSERT_TRUE(Write(**storage, k).ok());
      expected.push_back(RollupsOf(Generate(k)));
    }
    dirs.clear();
    for (const auto& batch : (*storage)->Pin()->batches()) dirs.push_back(batch->dir());
  }
  ASSERT_EQ(dirs.size(), 5u);
  // Request 3's batch: one more error in a row than its spans have.
  {
    absl::StatusOr<std::string> bytes = fs.ReadFile(dirs[3] + "/rollups.parquet");
    ASSERT_TRUE(bytes.ok());
    parquet::StringSource source(*bytes);
    const std::string id = dirs[3].substr(dirs[3].rfind('/') + 1, 23);
    absl::StatusOr<rollups::RollupRows> rows = ReadRollupsTable(&source, id, "rollups.parquet");
    ASSERT_TRUE(rows.ok()) << rows.status();
    ASSERT_TRUE(rollups::HasDurations(rows->front().key.kind));
    ++rows->front().measures.errors;
    absl::StatusOr<std::string> rewritten = WriteRollupsTable(*rows, id);
    ASSERT_TRUE(rewritten.ok());
    ASSERT_TRUE(verify_testing::RewriteBatchFile(fs, dirs[3], "rollups.parquet", *rewritten).ok());
  }

  absl::StatusOr<std::unique_ptr<Storage>> storage = Storage::Open(fs, data, {});
  ASSERT_TRUE(storage.ok()) << storage.status();
  std::vector<std::string> verdicts;
  RollupsRebuildOptions check{.day = std::nullopt, .check_only = true, .on_batch = nullptr};
  check.on_batch = [&](const std::string&, const BatchId&, RollupsVerdict verdict,
                       const std::optional<BatchId>& rewritten_as) {
    verdicts.push_back(std::string(RollupsVerdictName(verdict)) +
                       (rewritten_as.has_value() ? "+" : ""));
  };
  absl::StatusOr<RollupsRebuildReport> report = RebuildRollups(**storage, check);
  ASSERT_TRUE(report.ok()) << report.status();
  EXPECT_EQ(verdicts,
            (std::vector<std::string>{"missing", "missing", "equal", "differed", "equal"}));
  EXPECT_EQ(report->rewritten, 0u);
  EXPECT_EQ((*storage)->Pin()->size(), 5u);

  verdicts.clear();
  RollupsRebuildOptions rebuild = check;
  rebuild.check_only = false;
  report = RebuildRollups(**storage, rebuild);
  ASSERT_TRUE(report.ok()) << report.status();
  EXPECT_EQ(verdicts,
            (std::vector<std::string>{"missing+", "missing+", "equal", "differed+", "equal"}));
  EXPECT_EQ(report->rewritten, 3u);
  // Every batch now holds the rollups of its own request's rows.
  std::vector<rollups::RollupRows> stored;
  for (const auto& batch : (*storage)->Pin()->batches()) {
    EXPECT_TRUE(batch->meta().rollups_parquet.has_value()) << batch->dir();
    absl::StatusOr<rollups::RollupRows> rows = ReadBatchRollups(fs, batch->dir(), batch->meta());
    ASSERT_TRUE(rows.ok()) << rows.status();
    stored.push_back(*std::move(rows));
  }
  ASSERT_EQ(stored.size(), 5u);
  for (const rollups::RollupRows& want : expected) {
    EXPECT_EQ(std::count(stored.begin(), stored.end(), want), 1);
  }
  verdicts.clear();
  report = RebuildRollups(**storage, check);
  ASSERT_TRUE(report.ok()) << report.status();
  EXPECT_EQ(report->equal, 5u);
  (*storage).reset();
  VerifyOptions deep;
  deep.deep = true;
  absl::StatusOr<VerifyReport> verified = VerifyDataDir(fs, data, deep);
  ASSERT_TRUE(verified.ok()) << verified.status();
  EXPECT_TRUE(verified->Healthy());
  EXPECT_EQ(verified->Count(BatchStatus::kOk), 5u);
}

// Opens `data` on `fs` with one request per batch; rollups written or not.
std::unique_ptr<Storage> OpenOneRequestPerBatch(FileSystem& fs, const std::string& data,
                                                bool write_rollups) {
  StorageOptions options;
  options.writer.max_requests_per_batch = 1;
  options.write_rollups = write_rollups;
  absl::StatusOr<std::unique_ptr<Storage>> storage = Storage::Open(fs, data, options);
  EXPECT_TRUE(storage.ok()) << storage.status();
  return storage.ok() ? *std::move(storage) : nullptr;
}

// The live batches' ids and their files' checksums: what "nothing
// changed" compares.
std::vector<std::string> LiveState(Storage& storage) {
  std::vector<std::string> out;
  for (const auto& batch : storage.Pin()->batches()) {
    out.push_back(SerializeBatchMeta(batch->meta()));
  }
  return out;
}

void ExpectVerified(FileSystem& fs, const std::string& data, size_t ok, size_t all) {
  VerifyOptions deep;
  deep.deep = true;
  absl::StatusOr<VerifyReport> verified = VerifyDataDir(fs, data, deep);
  ASSERT_TRUE(verified.ok()) << verified.status();
  EXPECT_EQ(verified->Count(BatchStatus::kOk), ok);
  EXPECT_EQ(verified->batches.size(), all);
}

TEST(CompactionRollupsTest, RebuildStopsAtUnreadableRollupsNamingTheBatchAndChangesNothing) {
  testing::ScopedTempDir temp("rollups-unreadable");
  const std::string data = temp.path() + "/data";
  PosixFileSystem fs;
  std::vector<std::string> dirs;
  {
    std::unique_ptr<Storage> storage = OpenOneRequestPerBatch(fs, data, true);
    ASSERT_NE(storage, nullptr);
    for (int k = 0; k < 3; ++k) ASSERT_TRUE(Write(*storage, k).ok());
    for (const auto& batch : storage->Pin()->batches()) dirs.push_back(batch->dir());
  }
  ASSERT_EQ(dirs.size(), 3u);
  // The middle batch's rollups: a row counting one span more than its
  // histogram holds. The footer is fine (boot opens the data directory);
  // reading the rows is not.
  const std::string id = dirs[1].substr(dirs[1].rfind('/') + 1, 23);
  absl::StatusOr<rollups::RollupRows> rows =
      ReadBatchRollups(fs, dirs[1], *ParseBatchMeta(*fs.ReadFile(dirs[1] + "/meta.json"), id));
  ASSERT_TRUE(rows.ok()) << rows.status();
  ++rows->front().measures.count;
  absl::StatusOr<std::string> broken = WriteRollupsTable(*rows, id);
  ASSERT_TRUE(broken.ok());
  ASSERT_TRUE(verify_testing::RewriteBatchFile(fs, dirs[1], "rollups.parquet", *broken).ok());

  absl::StatusOr<std::unique_ptr<Storage>> storage = Storage::Open(fs, data, {});
  ASSERT_TRUE(storage.ok()) << storage.status();
  const std::vector<std::string> before = LiveState(**storage);
  for (bool check_only : {true, false}) {
    int looked_at = 0;
    RollupsRebuildOptions options{
        .day = std::nullopt, .check_only = check_only, .on_batch = nullptr};
    options.on_batch = [&](const std::string&, const BatchId&, RollupsVerdict verdict,
                           const std::optional<BatchId>&) {
      EXPECT_EQ(verdict, RollupsVerdict::kEqual);
      ++looked_at;
    };
    absl::StatusOr<RollupsRebuildReport> report = RebuildRollups(**storage, options);
    EXPECT_TRUE(absl::IsDataLoss(report.status())) << report.status();
    EXPECT_THAT(std::string(report.status().message()),
                ::testing::HasSubstr("batch " + dirs[1] + ": reading its rollups"));
    EXPECT_EQ(looked_at, 1) << "the batch before the unreadable one";
    EXPECT_EQ(LiveState(**storage), before);
    absl::StatusOr<std::string> still = fs.ReadFile(dirs[1] + "/rollups.parquet");
    ASSERT_TRUE(still.ok()) << still.status();
    EXPECT_EQ(*still, *broken);
  }
  (*storage).reset();
  // verify --deep finds the same batch, and only it.
  ExpectVerified(fs, data, 2, 3);
}

TEST(CompactionRollupsTest, RebuildThatCannotWriteLeavesEveryBatchAsItWas) {
  testing::ScopedTempDir temp("rollups-enospc");
  const std::string data = temp.path() + "/data";
  PosixFileSystem posix;
  {
    std::unique_ptr<Storage> storage = OpenOneRequestPerBatch(posix, data, false);
    ASSERT_NE(storage, nullptr);
    for (int k = 0; k < 2; ++k) ASSERT_TRUE(Write(*storage, k).ok());
  }
  FaultInjectionFileSystem fs(&posix, 5);
  std::vector<std::string> before;
  {
    absl::StatusOr<std::unique_ptr<Storage>> storage = Storage::Open(fs, data, {});
    ASSERT_TRUE(storage.ok()) << storage.status();
    before = LiveState(**storage);
    ASSERT_EQ(before.size(), 2u);
    // The disk is full from here on: the first rewrite cannot sync its
    // output.
    fs.InjectFaults(IoOperation::kSync, 1, ENOSPC);
    absl::StatusOr<RollupsRebuildReport> report = RebuildRollups(**storage, {});
    EXPECT_TRUE(absl::IsUnavailable(report.status())) << report.status();
    EXPECT_THAT(std::string(report.status().message()), ::testing::HasSubstr(": rewriting it: "));
    EXPECT_EQ(LiveState(**storage), before);
    fs.ClearFaults();
    (*storage)->Shutdown(std::chrono::seconds(5));
  }
  // Reopened: the same two batches, both whole, and a rebuild now works.
  absl::StatusOr<std::unique_ptr<Storage>> storage = Storage::Open(posix, data, {});
  ASSERT_TRUE(storage.ok()) << storage.status();
  EXPECT_EQ(LiveState(**storage), before);
  absl::StatusOr<RollupsRebuildReport> report = RebuildRollups(**storage, {});
  ASSERT_TRUE(report.ok()) << report.status();
  EXPECT_EQ(report->rewritten, 2u);
  (*storage).reset();
  ExpectVerified(posix, data, 2, 2);
}

TEST(CompactionRollupsTest, RebuildIsRefusedWhileAnEarlierRewritesMarkerIsPending) {
  testing::ScopedTempDir temp("rollups-marker");
  const std::string data = temp.path() + "/data";
  PosixFileSystem fs;
  {
    std::unique_ptr<Storage> storage = OpenOneRequestPerBatch(fs, data, false);
    ASSERT_NE(storage, nullptr);
    for (int k = 0; k < 2; ++k) ASSERT_TRUE(Write(*storage, k).ok());
  }
  absl::StatusOr<std::unique_ptr<Storage>> storage = Storage::Open(fs, data, {});
  ASSERT_TRUE(storage.ok()) << storage.status();
  std::vector<std::string> verdicts;
  RollupsRebuildOptions options;
  options.on_batch = [&](const std::string&, const BatchId&, RollupsVerdict verdict,
                         const std::optional<BatchId>& rewritten_as) {
    verdicts.push_back(std::string(RollupsVerdictName(verdict)) +
                       (rewritten_as.has_value() ? "+" : ""));
  };
  {
    // A reader holds the snapshot that names both inputs: the first
    // rewrite's input cannot be deleted, so its marker stays, and the
    // second rewrite must wait for it.
    const std::shared_ptr<const Snapshot> reader = (*storage)->Pin();
    absl::StatusOr<RollupsRebuildReport> report = RebuildRollups(**storage, options);
    EXPECT_TRUE(absl::IsFailedPrecondition(report.status())) << report.status();
    EXPECT_THAT(std::string(report.status().message()),
                ::testing::HasSubstr("a compaction marker is pending"));
    EXPECT_EQ(verdicts, std::vector<std::string>{"missing+"});
    EXPECT_EQ((*storage)->Pin()->size(), 2u);
  }
  // The reader gone, the marker clears and the rest is rebuilt.
  verdicts.clear();
  absl::StatusOr<RollupsRebuildReport> report = RebuildRollups(**storage, options);
  ASSERT_TRUE(report.ok()) << report.status();
  std::sort(verdicts.begin(), verdicts.end());  // in id order, the output's among them
  EXPECT_EQ(verdicts, (std::vector<std::string>{"equal", "missing+"}));
  (*storage).reset();
  ExpectVerified(fs, data, 2, 2);
}

}  // namespace
}  // namespace strata::storage
