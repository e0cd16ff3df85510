// MergeMetricsTables (table_merge.h): randomized metrics.parquet inputs
// written by WriteMetricsTable (ingest batches: sorted by name only) and by
// earlier merges (name, then time), some holding only placeholder rows,
// merged with tiny chunks and fan-in and with the defaults. Each output is
// checked against its inputs: DuckDB sees the same multiset of rows on
// every column; strata's reader reads back exactly the inputs' batches
// concatenated with each metric's points sorted stably by time; the order
// rule and its footer declaration; the meta.json member; the placeholders;
// bounded rows held. Corrupt inputs fail with DataLoss naming the file and
// leave no footer in the sink.

#include <cstdint>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "otlp/decode.h"
#include "otlp/encode.h"
#include "otlp/encoder_test_batches.h"
#include "parquet/file_writer.h"
#include "storage/maintenance/table_merge.h"
#include "storage/table/metrics_table.h"
#include "storage/testing/merge_testing.h"
#include "storage/testing/table_testing.h"

namespace strata::storage {
namespace {

using merge_testing::Inputs;
using merge_testing::kOutputBatchId;
using merge_testing::MergeDir;
using merge_testing::Small;
using merge_testing::Tiny;
using otlp::MetricBatch;
using otlp::MetricType;
using otlp::NumberType;
using otlp::Range;
using otlp::encoder_testing::AddStringAttribute;
using otlp::encoder_testing::EmptyRange;
using otlp::encoder_testing::RowsSince;

constexpr uint64_t kBaseTime = 1'750'000'000'000'000'000ULL;

// Random metric batches: resources (some without scopes), scopes (some
// without metrics), metrics of every type with names that repeat across
// metrics and inputs, points whose times collide often, metrics without
// points, exemplars, and resources that miss promotion.
class MetricGenerator {
 public:
  explicit MetricGenerator(uint64_t seed) : rng_(seed) {}

  MetricBatch Batch(int metrics) {
    MetricBatch b;
    const int resources = 1 + static_cast<int>(U(3));
    for (int r = 0; r < resources; ++r) {
      const size_t begin = b.resource_attributes.size();
      if (U(5) == 0) {
        b.resource_attributes.Append({"service.name", {otlp::ValueType::kInt, {}, 3}});
      } else {
        AddStringAttribute(&b.resource_attributes, "service.name", Pick({"api", "db", "web"}));
      }
      b.resources.Append({.attributes = RowsSince(begin, b.resource_attributes.size()),
                          .schema_url = U(2) == 0 ? "" : "https://schema/1"});
      const int scopes = static_cast<int>(U(3));
      for (int s = 0; s < scopes; ++s) {
        b.scopes.Append({.resource = static_cast<uint32_t>(r),
                         .name = Pick({"otel", "app", ""}),
                         .version = U(2) == 0 ? "" : "1.0"});
      }
    }
    const auto scopes = static_cast<uint32_t>(b.scopes.size());
    const uint32_t used = scopes == 0 ? 0 : 1 + static_cast<uint32_t>(U(scopes));
    for (int i = 0; i < metrics && used > 0; ++i) AddMetric(&b, static_cast<uint32_t>(U(used)));
    EXPECT_TRUE(otlp::ValidateBatch(b).ok()) << otlp::ValidateBatch(b);
    return b;
  }

 private:
  uint64_t U(uint64_t n) { return rng_() % n; }
  const char* Pick(std::initializer_list<const char*> values) {
    return values.begin()[U(values.size())];
  }
  double RandomDouble() {
    return U(8) == 0 ? std::bit_cast<double>(0x7ff800000000beefULL)
                     : static_cast<double>(U(1000)) / 8;
  }

  Range PointAttributes(MetricBatch* b) {
    const size_t begin = b->point_attributes.size();
    const int n = static_cast<int>(U(3));
    for (int i = 0; i < n; ++i) {
      if (U(3) == 0) {
        b->point_attributes.Append({Pick({"code", "path"}), {otlp::ValueType::kInt, {}, U(5)}});
      } else {
        AddStringAttribute(&b->point_attributes, Pick({"code", "path", "host"}),
                           Pick({"a", "b", "/x"}));
      }
    }
    return RowsSince(begin, b->point_attributes.size());
  }

  Range Exemplars(MetricBatch* b) {
    const size_t begin = b->exemplars.size();
    const int n = U(3) == 0 ? static_cast<int>(1 + U(2)) : 0;
    for (int i = 0; i < n; ++i) {
      const size_t attributes = b->exemplar_attributes.size();
      if (U(2) == 0) AddStringAttribute(&b->exemplar_attributes, "user", Pick({"u1", "u2"}));
      const otlp::TraceId trace = otlp::encoder_testing::MakeTraceId(static_cast<uint8_t>(U(200)));
      const otlp::SpanId span = otlp::encoder_testing::MakeSpanId(static_cast<uint8_t>(U(200)));
      const NumberType type = static_cast<NumberType>(U(3));
      const uint64_t bits = type == NumberType::kNone     ? 0
                            : type == NumberType::kDouble ? std::bit_cast<uint64_t>(RandomDouble())
                                                          : U(100);
      otlp::encoder_testing::AddExemplar(b, RowsSince(attributes, b->exemplar_attributes.size()),
                                         kBaseTime + U(16), type, bits,
                                         U(2) == 0 ? &trace : nullptr, U(2) == 0 ? &span : nullptr);
    }
    return RowsSince(begin, b->exemplars.size());
  }

  template <typename Row>
  Row Point(MetricBatch* b, uint32_t metric) {
    const Range attributes = PointAttributes(b);
    const Range exemplars = Exemplars(b);
    const uint64_t time = kBaseTime + U(16) * 1000;
    return otlp::encoder_testing::NewPoint<Row>(metric, attributes, time - U(2000), time,
                                                static_cast<uint32_t>(U(2)), exemplars);
  }

  otlp::HistogramStatsRow Stats(otlp::HistogramStatsRow row) {
    row.count = U(100);
    row.present = static_cast<uint8_t>(U(8));
    if (row.present & otlp::kHasSum) row.sum = RandomDouble();
    if (row.present & otlp::kHasMin) row.min = -RandomDouble();
    if (row.present & otlp::kHasMax) row.max = RandomDouble();
    return row;
  }

  std::vector<uint64_t> Counts() {
    std::vector<uint64_t> counts(U(4));
    for (uint64_t& c : counts) c = U(10);
    return counts;
  }

  Range AppendCounts(MetricBatch* b) {
    const size_t begin = b->bucket_counts.size();
    for (uint64_t c : Counts()) b->bucket_counts.push_back(c);
    return RowsSince(begin, b->bucket_counts.size());
  }

  void AddMetric(MetricBatch* b, uint32_t scope) {
    const auto metric = static_cast<uint32_t>(b->metrics.size());
    const MetricType types[] = {MetricType::kGauge,     MetricType::kSum,
                                MetricType::kHistogram, MetricType::kExponentialHistogram,
                                MetricType::kSummary,   MetricType::kUnset};
    const MetricType type = types[U(20) == 0 ? 5 : U(5)];
    const uint32_t count = type == MetricType::kUnset || U(6) == 0 ? 0 : 1 + U(4);
    const otlp::PointColumnsBase* table = b->points_of(type);
    const Range points{table == nullptr ? 0 : static_cast<uint32_t>(table->size()), count};
    for (uint32_t p = 0; p < count; ++p) {
      switch (type) {
        case MetricType::kGauge:
        case MetricType::kSum: {
          auto row = Point<otlp::NumberPointRow>(b, metric);
          row.value_type = static_cast<NumberType>(U(3));
          row.value_bits = row.value_type == NumberType::kNone ? 0
                           : row.value_type == NumberType::kDouble
                               ? std::bit_cast<uint64_t>(RandomDouble())
                               : rng_();
          b->number_points.Append(row);
          break;
        }
        case MetricType::kHistogram: {
          otlp::HistogramPointRow row;
          static_cast<otlp::HistogramStatsRow&>(row) =
              Stats(Point<otlp::HistogramStatsRow>(b, metric));
          row.bucket_counts = AppendCounts(b);
          const size_t bounds = b->explicit_bounds.size();
          for (uint64_t i = 0; i < U(3); ++i) b->explicit_bounds.push_back(RandomDouble());
          row.explicit_bounds = RowsSince(bounds, b->explicit_bounds.size());
          b->histogram_points.Append(row);
          break;
        }
        case MetricType::kExponentialHistogram: {
          otlp::ExponentialPointRow row;
          static_cast<otlp::HistogramStatsRow&>(row) =
              Stats(Point<otlp::HistogramStatsRow>(b, metric));
          row.scale = static_cast<int32_t>(U(10)) - 5;
          row.zero_count = U(4);
          row.zero_threshold = RandomDouble();
          row.positive_offset = static_cast<int32_t>(U(10));
          row.positive_bucket_counts = AppendCounts(b);
          row.negative_offset = -static_cast<int32_t>(U(10));
          row.negative_bucket_counts = AppendCounts(b);
          b->exponential_points.Append(row);
          break;
        }
        case MetricType::kSummary: {
          auto row = Point<otlp::SummaryPointRow>(b, metric);
          row.count = U(50);
          row.sum = RandomDouble();
          const size_t quantiles = b->quantiles.size();
          for (uint64_t i = 0; i < U(3); ++i) b->quantiles.Append({0.5, RandomDouble()});
          row.quantiles = RowsSince(quantiles, b->quantiles.size());
          b->summary_points.Append(row);
          break;
        }
        case MetricType::kUnset:
          break;
      }
    }
    otlp::MetricRow m = otlp::encoder_testing::NewMetric(
        *b, scope, Pick({"cpu", "mem", "req.latency", "q", "\xc3\xa9"}), type,
        table == nullptr ? Range{0, 0} : points);
    if (type == MetricType::kSum || type == MetricType::kHistogram ||
        type == MetricType::kExponentialHistogram) {
      m.aggregation_temporality = static_cast<int32_t>(1 + U(2));
    }
    if (type == MetricType::kSum) m.is_monotonic = static_cast<uint8_t>(U(2));
    m.description = U(2) == 0 ? "" : "a metric";
    m.unit = Pick({"", "ms", "By"});
    if (U(4) == 0) m.metadata = AddStringAttribute(&b->metadata_attributes, "origin", "sdk");
    b->metrics.Append(m);
  }

  std::mt19937_64 rng_;
};

MetricBatch ReadBack(const std::string& bytes, const std::string& batch_id) {
  parquet::StringSource source(bytes);
  absl::StatusOr<MetricBatch> batch = ReadMetricsTable(&source, batch_id, "metrics.parquet");
  EXPECT_TRUE(batch.ok()) << batch.status();
  return batch.ok() ? *std::move(batch) : MetricBatch();
}

void AddIngestInput(MergeDir& dir, MetricGenerator& gen, Inputs* inputs, int batches, int metrics) {
  std::vector<MetricBatch> owned;
  for (int k = 0; k < batches; ++k) owned.push_back(gen.Batch(metrics));
  std::vector<const MetricBatch*> pointers;
  for (const MetricBatch& b : owned) pointers.push_back(&b);
  absl::StatusOr<MetricsTable> table = WriteMetricsTable(pointers, inputs->NextBatchId());
  ASSERT_TRUE(table.ok()) << table.status();
  ASSERT_FALSE(table->file.empty());
  inputs->Add(dir, "metrics", table->file, table->meta);
}

absl::StatusOr<SignalMeta> Merge(MergeDir& dir, const Inputs& inputs, const MergeOptions& options,
                                 std::string_view output_id, std::string* out) {
  return merge_testing::RunMerge(MergeMetricsTables, dir, inputs, options, output_id, out);
}

void AddMergedInput(MergeDir& dir, MetricGenerator& gen, Inputs* inputs,
                    const MergeOptions& options) {
  Inputs parts;
  AddIngestInput(dir, gen, &parts, 2, 8);
  AddIngestInput(dir, gen, &parts, 1, 10);
  std::string bytes;
  absl::StatusOr<SignalMeta> meta = Merge(dir, parts, options, inputs->NextBatchId(), &bytes);
  ASSERT_TRUE(meta.ok()) << meta.status();
  inputs->Add(dir, "metrics", bytes, *meta);
}

void ExpectValidMerge(const Inputs& inputs, const std::string& output, const SignalMeta& meta) {
  // (d) The meta.json member.
  EXPECT_EQ(meta, merge_testing::CombinedMeta(inputs.metas));
  parquet::StringSource source(output);
  EXPECT_TRUE(CheckMetricsTableFooter(&source, kOutputBatchId, meta.file_rows, "out").ok());

  // (b) strata's reader: the inputs concatenated, each metric's points
  // stably by time.
  std::vector<MetricBatch> read;
  for (size_t k = 0; k < inputs.files.size(); ++k) {
    read.push_back(ReadBack(inputs.bytes[k], inputs.files[k].batch_id));
  }
  std::vector<const MetricBatch*> pointers;
  for (const MetricBatch& b : read) pointers.push_back(&b);
  absl::StatusOr<MetricsTable> concatenated = WriteMetricsTable(pointers, kOutputBatchId);
  ASSERT_TRUE(concatenated.ok()) << concatenated.status();
  MetricBatch expected = ReadBack(concatenated->file, kOutputBatchId);
  merge_testing::SortPointsByTime(&expected);
  const MetricBatch merged = ReadBack(output, kOutputBatchId);
  EXPECT_EQ(merged.metrics.size(), expected.metrics.size());
  EXPECT_EQ(merged.resources.size(), expected.resources.size());
  EXPECT_TRUE(otlp::EncodeMetricsProto(merged) == otlp::EncodeMetricsProto(expected))
      << "the merged batch differs from the sorted inputs";

  // (c) and (e): placeholders first and all kept, then (name, kind-1 rows
  // first, time); the footer declares it.
  absl::StatusOr<std::unique_ptr<parquet::FileReader>> reader = parquet::FileReader::Open(&source);
  ASSERT_TRUE(reader.ok()) << reader.status();
  EXPECT_EQ(MetricsTableRowOrder((*reader)->metadata()), MetricsRowOrder::kNameTime);
  const int columns[] = {kMetricsRowKind, kMetricsName, kMetricsTime};
  absl::StatusOr<std::vector<parquet::ColumnVector>> c =
      (*reader)->Read(columns, 0, (*reader)->num_rows());
  ASSERT_TRUE(c.ok()) << c.status();
  uint64_t placeholders = 0, points = 0;
  std::string previous_name;
  MetricsOrderKey previous;
  bool seen_metric = false;
  for (size_t r = 0; r < (*c)[0].size(); ++r) {
    const int32_t kind = (*c)[0].int32s[r];
    if (kind >= kMetricsEmptyScopeRow) {
      EXPECT_FALSE(seen_metric) << "placeholder at row " << r;
      ++placeholders;
      continue;
    }
    const MetricsOrderKey key{
        (*c)[1].bytes_at(r), kind == kMetricsDataPointRow,
        kind == kMetricsDataPointRow ? static_cast<uint64_t>((*c)[2].int64s[r]) : 0};
    if (seen_metric) EXPECT_FALSE(key < previous) << "row " << r;
    previous = key;
    seen_metric = true;
    points += key.point ? 1 : 0;
  }
  EXPECT_EQ(points, meta.rows);
  uint64_t input_placeholders = 0;
  for (const MetricBatch& b : read) {
    std::vector<bool> scope_used(b.scopes.size()), resource_used(b.resources.size());
    for (uint32_t s : b.metrics.scope) scope_used[s] = true;
    for (size_t s = 0; s < b.scopes.size(); ++s) {
      resource_used[b.scopes.resource[s]] = true;
      input_placeholders += scope_used[s] ? 0 : 1;
    }
    for (bool used : resource_used) input_placeholders += used ? 0 : 1;
  }
  EXPECT_EQ(placeholders, input_placeholders);

  // (a) DuckDB: the same rows on every column, indexes shifted per input.
  std::unique_ptr<query::DuckDbEngine> db = table_testing::OpenDuckDb();
  ASSERT_NE(db, nullptr);
  parquet::parquet_testing::TempFile file(output);
  merge_testing::ExpectSameRowsAsInputs(*db, inputs.files, file.path(), MetricsTableColumns(),
                                        {"resource_index", "scope_index", "metric_index"});
  EXPECT_EQ(table_testing::ExpectDuckDbMatchesStrata(*db, output, "merged metrics"),
            static_cast<int64_t>(meta.file_rows));
}

TEST(MetricsMergeTest, RandomInputsMergeByNameThenTime) {
  for (uint64_t seed = 1; seed <= 2; ++seed) {
    for (const MergeOptions& options : {Tiny(), Small(), MergeOptions()}) {
      SCOPED_TRACE(
          fmt::format("seed {} chunk_rows {} fan_in {}", seed, options.chunk_rows, options.fan_in));
      MergeDir dir("metrics_merge");
      MetricGenerator gen(seed);
      Inputs inputs;
      AddIngestInput(dir, gen, &inputs, 3, 10);
      AddMergedInput(dir, gen, &inputs, options);
      AddIngestInput(dir, gen, &inputs, 1, 0);  // placeholders only
      AddIngestInput(dir, gen, &inputs, 2, 12);
      AddMergedInput(dir, gen, &inputs, options);
      std::string output;
      MergeStats stats;
      MergeOptions with_stats = options;
      with_stats.stats = &stats;
      absl::StatusOr<SignalMeta> meta = Merge(dir, inputs, with_stats, kOutputBatchId, &output);
      ASSERT_TRUE(meta.ok()) << meta.status();
      ExpectValidMerge(inputs, output, *meta);
      EXPECT_LE(stats.rows_held_peak, (options.fan_in + 2) * options.chunk_rows);
      if (options.chunk_rows == 3) {
        EXPECT_GT(stats.runs_written, 10u);
        EXPECT_GT(stats.merge_passes, 0u);
      }
    }
  }
}

TEST(MetricsMergeTest, SortedInputsNeedNoRuns) {
  MergeDir dir("metrics_merge_sorted");
  MetricGenerator gen(11);
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
  ExpectValidMerge(inputs, output, *meta);
}

TEST(MetricsMergeTest, RowsHeldStayBoundedAsInputsGrow) {
  for (int scale : {1, 10}) {
    MergeDir dir("metrics_merge_bounded");
    MetricGenerator gen(21);
    Inputs inputs;
    for (int k = 0; k < 4; ++k) AddIngestInput(dir, gen, &inputs, 2, 30 * scale);
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
    merge_testing::PrintRowsHeld("metrics", *meta, options, stats);
  }
}

// Rewrites a metrics file's columns keeping its key-value metadata and
// declaring `order` in its sorting columns, as MetricsTableWriter does.
std::string RewriteSorted(const std::string& bytes, MetricsRowOrder order,
                          const std::function<void(std::vector<parquet::ColumnVector>&)>& mutate) {
  std::vector<parquet::SortingColumn> sorting = {{kMetricsName, false, true}};
  if (order == MetricsRowOrder::kNameTime) sorting.push_back({kMetricsTime, false, true});
  return table_testing::RewriteColumns(bytes, mutate, sorting);
}

class MetricsMergeCorruptionTest : public merge_testing::MergeCorruptionTest {
 protected:
  MetricsMergeCorruptionTest() : MergeCorruptionTest(MergeMetricsTables, "metrics_merge_corrupt") {}

  void SetUp() override {
    MetricGenerator gen(31);
    AddIngestInput(dir_, gen, &inputs_, 2, 12);
    AddMergedInput(dir_, gen, &inputs_, Small());
    AddIngestInput(dir_, gen, &inputs_, 1, 15);
  }
};

TEST_F(MetricsMergeCorruptionTest, TruncatedOrMislabelledInputs) {
  const std::string& file = inputs_.bytes[2];
  ExpectDataLoss(2, file.substr(0, file.size() / 2), "");
  inputs_.files[1].file_rows -= 1;
  ExpectDataLoss(1, inputs_.bytes[1], "differs from file_rows");
  inputs_.files[1].file_rows += 1;
}

TEST_F(MetricsMergeCorruptionTest, BrokenRowsDeepInAFile) {
  using C = std::vector<parquet::ColumnVector>;
  // The last row of input 0 (an ingest file with data points): read after
  // the output has its placeholders and several runs.
  ASSERT_GT(inputs_.metas[0].rows, 0u);
  const size_t last = inputs_.metas[0].file_rows - 1;
  ExpectDataLoss(0,
                 RewriteSorted(inputs_.bytes[0], MetricsRowOrder::kName,
                               [&](C& c) { c[kMetricsRowKind].int32s[last] = 7; }),
                 fmt::format("'row_kind' row {}", last));
  ExpectDataLoss(0,
                 RewriteSorted(inputs_.bytes[0], MetricsRowOrder::kName,
                               [&](C& c) { c[kMetricsType].int32s[last] = 42; }),
                 "unknown type 42");
  // A placeholder after the data rows.
  ExpectDataLoss(
      0,
      RewriteSorted(inputs_.bytes[0], MetricsRowOrder::kName,
                    [&](C& c) { c[kMetricsRowKind].int32s[last] = kMetricsEmptyScopeRow; }),
      "placeholder row after");
}

TEST_F(MetricsMergeCorruptionTest, ASortedInputOutOfOrder) {
  using C = std::vector<parquet::ColumnVector>;
  // Input 1 declares (name, time) order; give its last data point the
  // smallest time there is.
  const std::string bad = RewriteSorted(inputs_.bytes[1], MetricsRowOrder::kNameTime, [&](C& c) {
    for (size_t r = c[kMetricsRowKind].size(); r-- > 0;) {
      if (c[kMetricsRowKind].int32s[r] == kMetricsDataPointRow) {
        c[kMetricsTime].int64s[r] = 1;
        return;
      }
    }
  });
  ExpectDataLoss(1, bad, "not sorted by time_unix_nano");
  ExpectDataLoss(1, bad, "not sorted", MergeOptions());
  // Metric names out of order in an ingest file.
  const std::string names = RewriteSorted(inputs_.bytes[0], MetricsRowOrder::kName, [&](C& c) {
    table_testing::SetBytes(c[kMetricsName], c[kMetricsName].size() - 1, "0");
  });
  ExpectDataLoss(0, names, "");
}

TEST(MetricsMergeTest, ContractBreaksAreInternal) {
  MergeDir dir("metrics_merge_contract");
  std::string output;
  parquet::StringSink sink(&output);
  MergeOptions options;
  options.fan_in = 1;
  MetricGenerator gen(3);
  Inputs inputs;
  AddIngestInput(dir, gen, &inputs, 1, 4);
  absl::StatusOr<SignalMeta> meta =
      MergeMetricsTables(dir.fs(), inputs.files, kOutputBatchId, options, &sink);
  EXPECT_TRUE(absl::IsInternal(meta.status())) << meta.status();
}

}  // namespace
}  // namespace strata::storage
