// MergeSpansTables against a reference: the same input batches written as
// one file by WriteSpansTable. The merged file must hold the same rows in
// the same order on every column but the per-file resource and scope
// numbering (checked through DuckDB), read back through strata's reader,
// carry a spans.tidx that validates and agrees with its rows, and never
// hold more than its working-set bound in one round.

#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "fmt/format.h"
#include "gtest/gtest.h"
#include "io/posix_file_system.h"
#include "parquet/file_writer.h"
#include "parquet/testing/parquet_testing.h"
#include "storage/index/trace_index.h"
#include "storage/maintenance/table_merge.h"
#include "storage/table/file_source.h"
#include "storage/table/spans_table.h"
#include "storage/testing/commit_testing.h"
#include "storage/testing/table_test_batches.h"
#include "workload/traffic_generator.h"

namespace strata::storage {
namespace {

struct Input {
  std::unique_ptr<otlp::TraceBatch> batch;
  std::string id;
};

// Writes `batch` as batch `id` under `dir` (spans.parquet, spans.tidx) and
// returns the MergeInput.
MergeInput WriteInput(FileSystem& fs, const std::string& dir, const otlp::TraceBatch& batch,
                      const std::string& id) {
  const otlp::TraceBatch* inputs[] = {&batch};
  absl::StatusOr<SpansTable> table = WriteSpansTable(inputs, id);
  EXPECT_TRUE(table.ok()) << table.status();
  MergeInput input;
  input.path = fmt::format("{}/{}.spans.parquet", dir, id);
  input.batch_id = id;
  input.file_rows = table->meta.file_rows;
  auto write = [&](const std::string& path, const std::string& bytes) {
    auto file = fs.NewWritableFile(path, WriteMode::kCreateExclusive);
    ASSERT_TRUE(file.ok()) << file.status();
    ASSERT_TRUE((*file)->Append(bytes).ok());
    ASSERT_TRUE((*file)->Close().ok());
  };
  write(input.path, table->file);
  if (table->meta.rows > 0) {
    auto tidx = BuildTraceIndex(table->trace_runs, table->meta.rows, table->first_span_row);
    EXPECT_TRUE(tidx.ok()) << tidx.status();
    input.tidx_path = fmt::format("{}/{}.spans.tidx", dir, id);
    write(input.tidx_path, *tidx);
  }
  return input;
}

// Resources and scopes that carry no spans: placeholder rows.
std::unique_ptr<otlp::TraceBatch> PlaceholdersOnly() {
  auto b = std::make_unique<otlp::TraceBatch>();
  table_testing::BatchBuilder build(b.get());
  const uint32_t r = build.Resource(build.Many(2, "res."), "url", 1, 2);
  build.Scope(r, "lonely-scope", "v", build.Many(1, "sc."), 0, "");
  build.Resource({}, "", 0, 0);
  return b;
}

// Every row of a file in file order, all columns but the numbering.
std::vector<std::vector<std::optional<std::string>>> Dump(query::DuckDbEngine& db,
                                                          const std::string& path) {
  auto result = db.Query(fmt::format(
      "SELECT CAST(COLUMNS(* EXCLUDE (resource_index, scope_index, file_row_number)) AS VARCHAR) "
      "FROM read_parquet('{}', file_row_number = true) ORDER BY file_row_number",
      path));
  EXPECT_TRUE(result.ok()) << result.status();
  return result.ok() ? result->rows : decltype(result->rows){};
}

class SpansMergeTest : public ::testing::TestWithParam<uint64_t> {};

TEST_P(SpansMergeTest, MatchesOneFileOfAllInputs) {
  const uint64_t chunk_rows = GetParam();
  PosixFileSystem fs;
  testing::ScopedTempDir temp("spans_merge");
  std::vector<std::unique_ptr<otlp::TraceBatch>> batches;
  // Seeds 7 and 7 give the same traces twice (traces spread across inputs,
  // ties broken by input order); one input holds only placeholders.
  for (uint32_t seed : {7u, 11u, 7u, 13u}) {
    workload::TrafficGenerator generator({.seed = seed});
    batches.push_back(generator.Traces(seed == 13 ? 900 : 300));
  }
  batches.insert(batches.begin() + 1, PlaceholdersOnly());
  std::vector<MergeInput> inputs;
  std::vector<const otlp::TraceBatch*> all;
  for (size_t i = 0; i < batches.size(); ++i) {
    inputs.push_back(
        WriteInput(fs, temp.path(), *batches[i], fmt::format("2026113010000000000{}000", i)));
    all.push_back(batches[i].get());
  }
  const std::string output_id = "20261130110000000000100";
  absl::StatusOr<SpansTable> reference = WriteSpansTable(all, output_id);
  ASSERT_TRUE(reference.ok()) << reference.status();
  const std::string reference_path = temp.path() + "/reference.parquet";
  {
    auto file = fs.NewWritableFile(reference_path, WriteMode::kCreateExclusive);
    ASSERT_TRUE(file.ok() && (*file)->Append(reference->file).ok() && (*file)->Close().ok());
  }

  std::string merged_bytes;
  parquet::StringSink sink(&merged_bytes);
  MergeOptions options;
  options.chunk_rows = chunk_rows;
  absl::StatusOr<MergedSpans> merged = MergeSpansTables(fs, inputs, output_id, options, &sink);
  ASSERT_TRUE(merged.ok()) << merged.status();
  EXPECT_EQ(merged->meta, reference->meta);
  const std::string merged_path = temp.path() + "/merged.parquet";
  {
    auto file = fs.NewWritableFile(merged_path, WriteMode::kCreateExclusive);
    ASSERT_TRUE(file.ok() && (*file)->Append(merged_bytes).ok() && (*file)->Close().ok());
  }

  // Same rows, same order, every column but the numbering.
  auto db = parquet::parquet_testing::OpenDuckDb();
  ASSERT_NE(db, nullptr);
  const auto want = Dump(*db, reference_path);
  const auto got = Dump(*db, merged_path);
  ASSERT_EQ(got.size(), want.size());
  for (size_t r = 0; r < got.size(); ++r) ASSERT_EQ(got[r], want[r]) << "row " << r;

  // strata's reader accepts it; the index validates and agrees with rows.
  parquet::StringSource source(merged_bytes);
  absl::StatusOr<otlp::TraceBatch> back = ReadSpansTable(&source, output_id, "merged");
  ASSERT_TRUE(back.ok()) << back.status();
  absl::StatusOr<TraceIndex> index = TraceIndex::Open(merged->trace_index);
  ASSERT_TRUE(index.ok()) << index.status();
  ASSERT_TRUE(index->Validate(*merged->meta.traces, merged->meta.rows).ok());
  const uint64_t first = merged->meta.file_rows - merged->meta.rows;
  for (size_t e = 0; e < index->entries().size(); ++e) {
    const TraceLocation at = index->LocationOf(e);
    for (uint64_t row = at.first_row; row < at.end_row; ++row) {
      ASSERT_EQ(back->spans.trace_id[row - first], index->entries()[e].trace_id);
    }
  }

  // The working set: at most chunk_rows plus, per input, the longest trace.
  uint64_t longest = 0;
  for (size_t i = 1; i < reference->trace_runs.size() + 1; ++i) {
    const uint64_t end = i < reference->trace_runs.size() ? reference->trace_runs[i].first_row
                                                          : reference->meta.file_rows;
    longest = std::max<uint64_t>(longest, end - reference->trace_runs[i - 1].first_row);
  }
  if (chunk_rows < merged->meta.rows) EXPECT_GT(merged->rounds, 1u);
  EXPECT_LE(merged->max_round_rows,
            std::max<uint64_t>(chunk_rows, inputs.size()) + inputs.size() * longest);
}

INSTANTIATE_TEST_SUITE_P(ChunkSizes, SpansMergeTest, ::testing::Values(1, 7, 200, 1'000'000));

TEST(SpansMergeErrorsTest, IndexThatDisagreesWithTheRowsIsDataLoss) {
  PosixFileSystem fs;
  testing::ScopedTempDir temp("spans_merge_bad");
  workload::TrafficGenerator a({.seed = 1}), b({.seed = 2});
  auto first = a.Traces(200);
  auto second = b.Traces(200);
  std::vector<MergeInput> inputs = {
      WriteInput(fs, temp.path(), *first, "20261130100000000000000"),
      WriteInput(fs, temp.path(), *second, "20261130100000000001000")};
  // Give the second input the first one's index: rows and ids disagree.
  inputs[1].tidx_path = inputs[0].tidx_path;
  inputs[1].file_rows = inputs[0].file_rows;
  std::string out;
  parquet::StringSink sink(&out);
  absl::StatusOr<MergedSpans> merged =
      MergeSpansTables(fs, inputs, "20261130110000000000100", MergeOptions{}, &sink);
  ASSERT_FALSE(merged.ok());
  EXPECT_EQ(merged.status().code(), absl::StatusCode::kDataLoss) << merged.status();
}

}  // namespace
}  // namespace strata::storage
