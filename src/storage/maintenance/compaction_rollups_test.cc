// Rollups across the life of batches: each commit's rollups.parquet equals
// the rollups of the request's rows; batches written without rollups
// (meta.json format 1, as before them) answer the same rollups computed
// from their tables; a compaction of such batches writes format 2 output
// whose rollups are the inputs' merged; verify --deep passes throughout.

#include <memory>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "io/posix_file_system.h"
#include "rollups/rollup_rows.h"
#include "storage/check/verify.h"
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
  // Compacted by a binary that writes rollups: the output is format 2 with
  // the inputs' rollups merged.
  absl::StatusOr<std::unique_ptr<Storage>> storage = Storage::Open(fs, data, {});
  ASSERT_TRUE(storage.ok()) << storage.status();
  absl::StatusOr<BatchMeta> output = verify_testing::CompactEverything(**storage);
  ASSERT_TRUE(output.ok()) << output.status();
  EXPECT_EQ(output->format, 2u);
  EXPECT_TRUE(output->rollups_parquet.has_value());
  ASSERT_TRUE(Write(**storage, 3).ok());
  const std::shared_ptr<const Snapshot> live = (*storage)->Pin();
  ASSERT_EQ(live->size(), 2u);
  std::vector<const rollups::RollupRows*> inputs;
  for (const rollups::RollupRows& rows : expected) inputs.push_back(&rows);
  const rollups::RollupRows merged = rollups::MergeRollups(inputs);
  const rollups::RollupRows fourth = RollupsOf(Generate(3));
  for (const auto& batch : live->batches()) {
    EXPECT_EQ(batch->meta().format, 2u);
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

}  // namespace
}  // namespace strata::storage
