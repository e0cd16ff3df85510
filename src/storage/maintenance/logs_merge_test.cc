// MergeLogsTables (table_merge.h): randomized logs.parquet inputs written by
// WriteLogsTable (ingest batches, arrival order) and by earlier merges
// (event-time order), some holding only placeholder rows, merged with tiny
// chunks and fan-in (many runs, intermediate passes, chunk boundaries
// everywhere) and with the defaults. Each output is checked against its
// inputs: DuckDB sees the same multiset of rows on every column; strata's
// reader reads back exactly the inputs' batches concatenated with records
// sorted stably by event time; the order rule; the meta.json member; the
// placeholders; bounded rows held. Corrupt inputs fail with DataLoss naming
// the file and leave no footer in the sink.

#include <cstdint>
#include <limits>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "otlp/decode.h"
#include "otlp/encode.h"
#include "parquet/file_writer.h"
#include "storage/maintenance/table_merge.h"
#include "storage/table/logs_table.h"
#include "storage/testing/merge_testing.h"
#include "storage/testing/table_test_batches.h"
#include "storage/testing/table_testing.h"

namespace strata::storage {
namespace {

using merge_testing::InputBatchId;
using merge_testing::Inputs;
using merge_testing::kOutputBatchId;
using merge_testing::MergeDir;
using merge_testing::Small;
using merge_testing::Tiny;
using table_testing::BatchBuilder;
using ::testing::HasSubstr;

constexpr uint64_t kBaseTime = 1'750'000'000'000'000'000ULL;

// Random log batches: a few resources (some without scopes), scopes (some
// without records), records whose event times collide often (ties), fall
// back to the observed time or are 0, with every body type and attributes
// that sometimes miss promotion.
class LogGenerator {
 public:
  explicit LogGenerator(uint64_t seed) : rng_(seed) {}

  otlp::LogBatch Batch(int records) {
    otlp::LogBatch b;
    BatchBuilder build(&b);
    const int resources = 1 + static_cast<int>(U(3));
    for (int r = 0; r < resources; ++r) {
      std::vector<otlp::AttributeRow> attributes;
      if (U(6) == 0) {
        attributes.push_back({build.S("service.name"), BatchBuilder::Int(7)});
      } else {
        attributes.push_back(
            {build.S("service.name"), BatchBuilder::Str(build.S(fmt::format("svc-{}", U(4))))});
      }
      if (U(4) == 0) attributes.push_back({build.S("host"), RandomValue(build)});
      const uint32_t resource = build.Resource(attributes, U(2) == 0 ? "" : "https://schema/1",
                                               static_cast<uint32_t>(U(2)), static_cast<int>(U(3)));
      const int scopes = static_cast<int>(U(3));
      for (int s = 0; s < scopes; ++s) {
        build.Scope(resource, fmt::format("scope-{}", U(3)), U(2) == 0 ? "" : "1.2",
                    U(3) == 0 ? build.Many(2, "sa.") : std::vector<otlp::AttributeRow>{},
                    static_cast<uint32_t>(U(2)), "");
      }
    }
    const auto scopes = static_cast<uint32_t>(b.scopes.size());
    // Scopes at the end may stay without records.
    const uint32_t used = scopes == 0 ? 0 : 1 + static_cast<uint32_t>(U(scopes));
    for (int i = 0; i < records && used > 0; ++i)
      AddRecord(&b, build, static_cast<uint32_t>(U(used)));
    EXPECT_TRUE(otlp::ValidateBatch(b).ok()) << otlp::ValidateBatch(b);
    return b;
  }

 private:
  uint64_t U(uint64_t n) { return rng_() % n; }

  otlp::ValueRow RandomValue(BatchBuilder& build) {
    switch (U(9)) {
      case 0:
        return BatchBuilder::Int(static_cast<int64_t>(rng_()));
      case 1:
        return BatchBuilder::DoubleBits(U(3) == 0 ? 0x7ff8000000000123ULL : rng_());
      case 2:
        return BatchBuilder::Bool(U(2) == 0);
      case 3:
        return BatchBuilder::Bytes(build.S(std::string("\0\xff\x80", 3)));
      case 4:
        return BatchBuilder::Empty();
      case 5:
        return build.Array({BatchBuilder::Str(build.S("x")), BatchBuilder::Int(3)});
      case 6:
        return build.KvList({{build.S("k"), BatchBuilder::Str(build.S("v"))}});
      default:
        return BatchBuilder::Str(build.S(fmt::format("v{}", U(50))));
    }
  }

  void AddRecord(otlp::LogBatch* b, BatchBuilder& build, uint32_t scope) {
    otlp::LogRecordRow row;
    row.scope = scope;
    const uint64_t kind = U(30);
    const uint64_t time = kBaseTime + U(64) * 1000;
    row.time_unix_nano = kind < 4 ? 0 : time;
    row.observed_time_unix_nano = kind == 0 ? 0 : kBaseTime + U(64) * 1000 + U(2);
    row.severity_number = static_cast<int32_t>(U(25));
    row.severity_text = build.S(U(2) == 0 ? "" : "WARN");
    row.body = RandomValue(build);
    std::vector<otlp::AttributeRow> attributes;
    const int n = static_cast<int>(U(4));
    for (int i = 0; i < n; ++i) {
      attributes.push_back({build.S(fmt::format("k{}", U(6))), RandomValue(build)});
    }
    if (U(5) == 0) {
      attributes.push_back({build.S("exception.type"),
                            U(2) == 0 ? BatchBuilder::Str(build.S("E")) : BatchBuilder::Int(1)});
    }
    if (U(7) == 0) {
      attributes.push_back({build.S("exception.message"), BatchBuilder::Bool(true)});
    }
    row.attributes = BatchBuilder::Attributes(&b->log_attributes, attributes);
    row.dropped_attributes_count = static_cast<uint32_t>(U(3));
    row.flags = static_cast<uint32_t>(U(2));
    if (U(3) != 0) {
      row.trace_id = table_testing::MakeTraceId(rng_(), rng_());
      row.has_trace_id = 1;
    }
    if (U(3) == 0) {
      row.span_id = table_testing::MakeSpanId(rng_());
      row.has_span_id = 1;
    }
    row.event_name = build.S(U(4) == 0 ? "click" : "");
    b->logs.Append(row);
  }

  std::mt19937_64 rng_;
};

otlp::LogBatch ReadBack(const std::string& bytes, const std::string& batch_id) {
  parquet::StringSource source(bytes);
  absl::StatusOr<otlp::LogBatch> batch = ReadLogsTable(&source, batch_id, "logs.parquet");
  EXPECT_TRUE(batch.ok()) << batch.status();
  return batch.ok() ? *std::move(batch) : otlp::LogBatch();
}

// An ingest-style input: `batches` random batches written by
// WriteLogsTable for the next input's id.
void AddIngestInput(MergeDir& dir, LogGenerator& gen, Inputs* inputs, int batches, int records) {
  std::vector<otlp::LogBatch> owned;
  for (int k = 0; k < batches; ++k) owned.push_back(gen.Batch(records));
  std::vector<const otlp::LogBatch*> pointers;
  for (const otlp::LogBatch& b : owned) pointers.push_back(&b);
  absl::StatusOr<LogsTable> table = WriteLogsTable(pointers, inputs->NextBatchId());
  ASSERT_TRUE(table.ok()) << table.status();
  ASSERT_FALSE(table->file.empty());
  inputs->Add(dir, "logs", table->file, table->meta);
}

absl::StatusOr<SignalMeta> Merge(MergeDir& dir, const Inputs& inputs, const MergeOptions& options,
                                 std::string_view output_id, std::string* out) {
  return merge_testing::RunMerge(MergeLogsTables, dir, inputs, options, output_id, out);
}

// A compaction-output input: a merge of two fresh ingest inputs, written
// for the next input's id.
void AddMergedInput(MergeDir& dir, LogGenerator& gen, Inputs* inputs, const MergeOptions& options) {
  Inputs parts;
  AddIngestInput(dir, gen, &parts, 2, 25);
  AddIngestInput(dir, gen, &parts, 1, 30);
  std::string bytes;
  absl::StatusOr<SignalMeta> meta = Merge(dir, parts, options, inputs->NextBatchId(), &bytes);
  ASSERT_TRUE(meta.ok()) << meta.status();
  inputs->Add(dir, "logs", bytes, *meta);
}

// Checks (a) to (e) of the file comment for a merge of `inputs`.
void ExpectValidMerge(MergeDir& dir, const Inputs& inputs, const std::string& output,
                      const SignalMeta& meta) {
  // (d) The meta.json member: what the inputs' members add up to, and what
  // the file holds.
  EXPECT_EQ(meta, merge_testing::CombinedMeta(inputs.metas));
  parquet::StringSource source(output);
  EXPECT_TRUE(CheckLogsTableFooter(&source, kOutputBatchId, meta.file_rows, "out").ok());

  // (b) strata's reader: the inputs concatenated, records stably by time.
  std::vector<otlp::LogBatch> read;
  for (size_t k = 0; k < inputs.files.size(); ++k) {
    read.push_back(ReadBack(inputs.bytes[k], inputs.files[k].batch_id));
  }
  std::vector<const otlp::LogBatch*> pointers;
  for (const otlp::LogBatch& b : read) pointers.push_back(&b);
  absl::StatusOr<LogsTable> concatenated = WriteLogsTable(pointers, kOutputBatchId);
  ASSERT_TRUE(concatenated.ok()) << concatenated.status();
  otlp::LogBatch expected = ReadBack(concatenated->file, kOutputBatchId);
  merge_testing::SortByEventTime(&expected);
  const otlp::LogBatch merged = ReadBack(output, kOutputBatchId);
  EXPECT_EQ(merged.logs.size(), meta.rows);
  EXPECT_EQ(merged.resources.size(), expected.resources.size());
  EXPECT_EQ(merged.scopes.size(), expected.scopes.size());
  EXPECT_TRUE(otlp::EncodeLogsProto(merged) == otlp::EncodeLogsProto(expected))
      << "the merged batch differs from the sorted inputs";

  // (c) and (e): placeholders first and all kept, then records by event
  // time; the footer says so.
  absl::StatusOr<std::unique_ptr<parquet::FileReader>> reader = parquet::FileReader::Open(&source);
  ASSERT_TRUE(reader.ok()) << reader.status();
  absl::StatusOr<LogsRowOrder> order = LogsTableRowOrder((*reader)->metadata(), "out");
  ASSERT_TRUE(order.ok());
  EXPECT_EQ(*order, LogsRowOrder::kEventTime);
  const int columns[] = {kLogsRowKind, kLogsTime, kLogsObservedTime};
  absl::StatusOr<std::vector<parquet::ColumnVector>> c =
      (*reader)->Read(columns, 0, (*reader)->num_rows());
  ASSERT_TRUE(c.ok()) << c.status();
  uint64_t placeholders = 0, previous = 0;
  bool seen_record = false;
  for (size_t r = 0; r < (*c)[0].size(); ++r) {
    if ((*c)[0].int32s[r] != 0) {
      EXPECT_FALSE(seen_record) << "placeholder at row " << r;
      ++placeholders;
      continue;
    }
    const uint64_t time = LogEventTime(static_cast<uint64_t>((*c)[1].int64s[r]),
                                       static_cast<uint64_t>((*c)[2].int64s[r]));
    EXPECT_LE(previous, time) << "row " << r;
    previous = time;
    seen_record = true;
  }
  EXPECT_EQ(placeholders, meta.file_rows - meta.rows);

  // (a) DuckDB: the same rows on every column, indexes shifted per input.
  std::unique_ptr<query::DuckDbEngine> db = table_testing::OpenDuckDb();
  ASSERT_NE(db, nullptr);
  parquet::parquet_testing::TempFile file(output);
  merge_testing::ExpectSameRowsAsInputs(*db, inputs.files, file.path(), LogsTableColumns(),
                                        {"resource_index", "scope_index"});
  EXPECT_EQ(table_testing::ExpectDuckDbMatchesStrata(*db, output, "merged logs"),
            static_cast<int64_t>(meta.file_rows));
}

TEST(LogsMergeTest, RandomInputsMergeByEventTime) {
  for (uint64_t seed = 1; seed <= 2; ++seed) {
    for (const MergeOptions& options : {Tiny(), Small(), MergeOptions()}) {
      SCOPED_TRACE(
          fmt::format("seed {} chunk_rows {} fan_in {}", seed, options.chunk_rows, options.fan_in));
      MergeDir dir("logs_merge");
      LogGenerator gen(seed);
      Inputs inputs;
      AddIngestInput(dir, gen, &inputs, 3, 30);
      AddMergedInput(dir, gen, &inputs, options);
      AddIngestInput(dir, gen, &inputs, 1, 0);  // placeholders only
      AddIngestInput(dir, gen, &inputs, 2, 45);
      AddMergedInput(dir, gen, &inputs, options);
      AddIngestInput(dir, gen, &inputs, 1, 1);
      std::string output;
      MergeStats stats;
      MergeOptions with_stats = options;
      with_stats.stats = &stats;
      absl::StatusOr<SignalMeta> meta = Merge(dir, inputs, with_stats, kOutputBatchId, &output);
      ASSERT_TRUE(meta.ok()) << meta.status();
      ExpectValidMerge(dir, inputs, output, *meta);
      EXPECT_LE(stats.rows_held_peak, (options.fan_in + 2) * options.chunk_rows);
      if (options.chunk_rows == 3) {
        EXPECT_GT(stats.runs_written, 10u);
        EXPECT_GT(stats.merge_passes, 0u);
      }
    }
  }
}

TEST(LogsMergeTest, SortedInputsNeedNoRuns) {
  MergeDir dir("logs_merge_sorted");
  LogGenerator gen(11);
  Inputs inputs;
  for (int k = 0; k < 3; ++k) AddMergedInput(dir, gen, &inputs, Small());
  std::string output;
  MergeStats stats;
  MergeOptions options = Small();
  options.fan_in = 4;
  options.stats = &stats;
  absl::StatusOr<SignalMeta> meta = Merge(dir, inputs, options, kOutputBatchId, &output);
  ASSERT_TRUE(meta.ok()) << meta.status();
  EXPECT_EQ(stats.runs_written, 0u);
  EXPECT_EQ(stats.merge_passes, 0u);
  ExpectValidMerge(dir, inputs, output, *meta);
}

TEST(LogsMergeTest, RowsHeldStayBoundedAsInputsGrow) {
  // The same chunk and fan-in over ten times the rows: the most rows held
  // at once stays under (fan_in + 2) * chunk_rows.
  for (int scale : {1, 10}) {
    MergeDir dir("logs_merge_bounded");
    LogGenerator gen(21);
    Inputs inputs;
    for (int k = 0; k < 4; ++k) AddIngestInput(dir, gen, &inputs, 2, 100 * scale);
    MergeStats stats;
    MergeOptions options;
    options.chunk_rows = 64;
    options.fan_in = 4;
    options.stats = &stats;
    std::string output;
    absl::StatusOr<SignalMeta> meta = Merge(dir, inputs, options, kOutputBatchId, &output);
    ASSERT_TRUE(meta.ok()) << meta.status();
    EXPECT_LE(stats.rows_held_peak, (options.fan_in + 2) * options.chunk_rows);
    if (scale == 10) EXPECT_GT(meta->file_rows, 10 * stats.rows_held_peak);
    merge_testing::PrintRowsHeld("logs", *meta, options, stats);
  }
}

// ------------------------------------------------------------ corruption

class LogsMergeCorruptionTest : public merge_testing::MergeCorruptionTest {
 protected:
  LogsMergeCorruptionTest() : MergeCorruptionTest(MergeLogsTables, "logs_merge_corrupt") {}

  void SetUp() override {
    LogGenerator gen(31);
    AddIngestInput(dir_, gen, &inputs_, 2, 40);
    AddMergedInput(dir_, gen, &inputs_, Small());
    AddIngestInput(dir_, gen, &inputs_, 1, 50);
  }
};

TEST_F(LogsMergeCorruptionTest, TruncatedOrMislabelledInputs) {
  const std::string& file = inputs_.bytes[2];
  ExpectDataLoss(2, file.substr(0, file.size() - 100), "");
  inputs_.files[1].file_rows += 1;
  ExpectDataLoss(1, inputs_.bytes[1], "differs from file_rows");
  inputs_.files[1].file_rows -= 1;
  inputs_.files[0].batch_id = InputBatchId(77);
  ExpectDataLoss(0, inputs_.bytes[0], "strata.batch_id");
  inputs_.files[0].batch_id = InputBatchId(0);
}

TEST_F(LogsMergeCorruptionTest, BrokenRowsDeepInAFile) {
  using C = std::vector<parquet::ColumnVector>;
  // The last row: read after the output has its placeholders and runs.
  ASSERT_GT(inputs_.metas[2].rows, 0u);
  const size_t last = inputs_.metas[2].file_rows - 1;
  ExpectDataLoss(2,
                 table_testing::RewriteColumns(inputs_.bytes[2],
                                               [&](C& c) { c[kLogsBodyType].int32s[last] = 9; }),
                 "type code 9");
  ExpectDataLoss(2,
                 table_testing::RewriteColumns(inputs_.bytes[2],
                                               [&](C& c) { c[kLogsRowKind].int32s[last] = 1; }),
                 "placeholder row after");
}

TEST_F(LogsMergeCorruptionTest, ASortedInputOutOfOrder) {
  using C = std::vector<parquet::ColumnVector>;
  // Input 1 declares event_time order (RewriteColumns keeps the key-value
  // entry); swap the times of its first and last records.
  const size_t last = inputs_.metas[1].file_rows - 1;
  const size_t first = last + 1 - inputs_.metas[1].rows;
  const std::string swapped = table_testing::RewriteColumns(inputs_.bytes[1], [&](C& c) {
    for (int k : {kLogsTime, kLogsObservedTime}) {
      std::swap(c[k].int64s[first], c[k].int64s[last]);
    }
  });
  ExpectDataLoss(1, swapped, "order");
  MergeOptions options;  // one chunk per source: the reader's own check
  ExpectDataLoss(1, swapped, "order", options);
}

TEST_F(LogsMergeCorruptionTest, FlippedBytesAreDataLossOrHarmless) {
  std::mt19937_64 rng(5);
  const std::string& good = inputs_.bytes[2];
  int data_loss = 0;
  for (int trial = 0; trial < 40; ++trial) {
    std::string bad = good;
    const size_t at = rng() % bad.size();
    bad[at] = static_cast<char>(bad[at] ^ (1 + rng() % 255));
    ASSERT_TRUE(WriteFile(dir_.fs(), inputs_.files[2].path, bad).ok());
    std::string output;
    absl::StatusOr<SignalMeta> meta = Merge(dir_, inputs_, Small(), kOutputBatchId, &output);
    if (meta.ok()) continue;  // a value no rule constrains (meta.json's checksum catches it)
    EXPECT_TRUE(absl::IsDataLoss(meta.status())) << at << ": " << meta.status();
    EXPECT_THAT(std::string(meta.status().message()), HasSubstr(inputs_.files[2].path));
    EXPECT_FALSE(merge_testing::IsCompleteParquet(output));
    ++data_loss;
  }
  EXPECT_GT(data_loss, 0);
}

TEST(LogsMergeTest, ContractBreaksAreInternal) {
  MergeDir dir("logs_merge_contract");
  std::string output;
  parquet::StringSink sink(&output);
  MergeOptions options;
  absl::StatusOr<SignalMeta> meta = MergeLogsTables(dir.fs(), {}, kOutputBatchId, options, &sink);
  EXPECT_TRUE(absl::IsInternal(meta.status())) << meta.status();
  // An input needing runs without a scratch directory.
  LogGenerator gen(3);
  Inputs inputs;
  AddIngestInput(dir, gen, &inputs, 1, 10);
  meta = MergeLogsTables(dir.fs(), inputs.files, kOutputBatchId, options, &sink);
  EXPECT_TRUE(absl::IsInternal(meta.status())) << meta.status();
}

}  // namespace
}  // namespace strata::storage
