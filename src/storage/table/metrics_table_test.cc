// metrics.parquet (docs/format/metrics-parquet.md): hand-built batches with
// every metric type and corner case, written, read back through strata's
// reader and compared (through strata's OTLP encoder, which covers every
// field) with the inputs; the same bytes read through DuckDB and compared
// column by column with strata's reader; and files that break the format
// (wrong schema, wrong metadata, corrupt bytes, rule violations) read as
// DataLoss.

#include "storage/table/metrics_table.h"

#include <bit>
#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "fmt/format.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "otlp/decode.h"
#include "otlp/encode.h"
#include "otlp/encoder_test_batches.h"
#include "parquet/file_reader.h"
#include "storage/testing/table_testing.h"

namespace strata::storage {
namespace {

using otlp::MetricBatch;
using otlp::MetricType;
using otlp::NumberType;
using otlp::Range;
using otlp::encoder_testing::AddStringAttribute;
using otlp::encoder_testing::EmptyRange;
using otlp::encoder_testing::MakeMetricBatch;
using otlp::encoder_testing::MakeSpanId;
using otlp::encoder_testing::MakeTraceId;
using otlp::encoder_testing::NewMetric;
using otlp::encoder_testing::NewPoint;
using otlp::encoder_testing::RowsSince;
using parquet::ColumnVector;
using ::testing::HasSubstr;

constexpr char kBatchId[] = "20250614093015123456000";
constexpr char kFile[] = "metrics.parquet";

// A quiet NaN with a payload, a negative signalling-style NaN and -0.0.
const uint64_t kNanPayload = 0x7ff800000000beefULL;
const uint64_t kNegativeNan = 0xfff0000000000001ULL;
const uint64_t kNegativeZero = 0x8000000000000000ULL;

double Bits(uint64_t bits) { return std::bit_cast<double>(bits); }

// A point of metric `metric` whose exemplars are the rows added since
// `exemplars_begin` and attributes are empty.
template <typename Row>
Row PointOf(const MetricBatch& b, uint32_t metric, uint64_t time, size_t exemplars_begin) {
  return NewPoint<Row>(metric, EmptyRange(b.point_attributes.size()), time - 10, time, 0,
                       RowsSince(exemplars_begin, b.exemplars.size()));
}

// The corner cases MakeMetricBatch() lacks. One resource (service.name
// "naïve-svc", deployment.environment the int 7: a promotion miss) with
// scope 0 "库" and an empty scope 1; metrics, not in name order:
//   0 sum "z.count" (not monotonic, delta): points NaN with payload,
//     -0.0, and no value at all
//   1 histogram "a.latency": a point with no sum/min/max and no buckets,
//     and one with all three (sum a negative NaN) and three exemplars
//     carrying 2, 0 and 1 attributes, the last without ids
//   2 exponential histogram "é": positive and negative buckets, zero
//     threshold 0.25, extreme offsets and counts
//   3 gauge "a.latency" (a duplicate name): int64 min and max values
//   4 summary "m": no quantiles, NaN sum
//   5 histogram "b": no points
MetricBatch MakeCornerCaseBatch() {
  MetricBatch b;
  const size_t resource_attributes = b.resource_attributes.size();
  AddStringAttribute(&b.resource_attributes, "service.name", "naïve-svc");
  b.resource_attributes.Append({"deployment.environment", {otlp::ValueType::kInt, {}, 7}});
  b.resources.Append({.attributes = RowsSince(resource_attributes, b.resource_attributes.size())});
  b.scopes.Append({.resource = 0, .name = "库", .version = "v∞"});
  b.scopes.Append({.resource = 0, .name = "empty-scope"});

  // 0: sum.
  const uint64_t values[] = {kNanPayload, kNegativeZero, 0};
  const NumberType types[] = {NumberType::kDouble, NumberType::kDouble, NumberType::kNone};
  for (int i = 0; i < 3; ++i) {
    auto p = PointOf<otlp::NumberPointRow>(b, 0, 1000 + i, b.exemplars.size());
    p.value_type = types[i];
    p.value_bits = values[i];
    b.number_points.Append(p);
  }
  otlp::MetricRow sum = NewMetric(b, 0, "z.count", MetricType::kSum, Range{0, 3});
  sum.aggregation_temporality = 1;
  sum.description = "ünïcödé ✓";
  b.metrics.Append(sum);

  // 1: histogram.
  b.histogram_points.Append(PointOf<otlp::HistogramPointRow>(b, 1, 5000, b.exemplars.size()));
  b.histogram_points.bucket_counts.back() = EmptyRange(b.bucket_counts.size());
  b.histogram_points.explicit_bounds.back() = EmptyRange(b.explicit_bounds.size());
  const size_t exemplars = b.exemplars.size();
  const otlp::TraceId trace = MakeTraceId(0x40);
  const otlp::SpanId span = MakeSpanId(0x50);
  const size_t ex0 = b.exemplar_attributes.size();
  AddStringAttribute(&b.exemplar_attributes, "user", "ü");
  b.exemplar_attributes.Append({"nan", {otlp::ValueType::kDouble, {}, kNanPayload}});
  b.exemplars.Append({.filtered_attributes = RowsSince(ex0, b.exemplar_attributes.size()),
                      .time_unix_nano = 7,
                      .value_type = NumberType::kDouble,
                      .value_bits = kNegativeNan,
                      .trace_id = trace,
                      .has_trace_id = 1,
                      .span_id = span,
                      .has_span_id = 1});
  b.exemplars.Append({.filtered_attributes = EmptyRange(b.exemplar_attributes.size()),
                      .time_unix_nano = 8,
                      .value_type = NumberType::kInt,
                      .value_bits = static_cast<uint64_t>(std::numeric_limits<int64_t>::min()),
                      .span_id = span,
                      .has_span_id = 1});
  const Range ex2 = AddStringAttribute(&b.exemplar_attributes, "k", "");
  b.exemplars.Append({.filtered_attributes = ex2, .time_unix_nano = 9});
  auto h = PointOf<otlp::HistogramPointRow>(b, 1, 5001, exemplars);
  h.count = std::numeric_limits<uint64_t>::max();
  h.sum = Bits(kNegativeNan);
  h.min = -std::numeric_limits<double>::infinity();
  h.max = Bits(kNegativeZero);
  h.present = otlp::kHasSum | otlp::kHasMin | otlp::kHasMax;
  h.bucket_counts = otlp::encoder_testing::AppendU64(&b.bucket_counts, {0, 5, 0});
  const size_t bounds = b.explicit_bounds.size();
  b.explicit_bounds.insert(b.explicit_bounds.end(), {-1.5, Bits(kNanPayload)});
  h.explicit_bounds = RowsSince(bounds, b.explicit_bounds.size());
  b.histogram_points.Append(h);
  otlp::MetricRow histogram = NewMetric(b, 0, "a.latency", MetricType::kHistogram, Range{0, 2});
  histogram.aggregation_temporality = 2;
  histogram.unit = "ms";
  b.metrics.Append(histogram);

  // 2: exponential histogram.
  auto x = PointOf<otlp::ExponentialPointRow>(b, 2, 7000, b.exemplars.size());
  x.count = 12;
  x.sum = 3.5;
  x.present = otlp::kHasSum;
  x.scale = std::numeric_limits<int32_t>::min();
  x.zero_count = 2;
  x.zero_threshold = 0.25;
  x.positive_offset = std::numeric_limits<int32_t>::max();
  x.positive_bucket_counts = otlp::encoder_testing::AppendU64(&b.bucket_counts, {1, 2, 3});
  x.negative_offset = -7;
  x.negative_bucket_counts =
      otlp::encoder_testing::AppendU64(&b.bucket_counts, {4, std::numeric_limits<uint64_t>::max()});
  b.exponential_points.Append(x);
  otlp::MetricRow exponential =
      NewMetric(b, 0, "é", MetricType::kExponentialHistogram, Range{0, 1});
  exponential.aggregation_temporality = 1;
  b.metrics.Append(exponential);

  // 3: gauge with the same name as metric 1.
  for (int64_t v : {std::numeric_limits<int64_t>::min(), std::numeric_limits<int64_t>::max()}) {
    auto p = PointOf<otlp::NumberPointRow>(b, 3, 9000, b.exemplars.size());
    p.value_type = NumberType::kInt;
    p.value_bits = static_cast<uint64_t>(v);
    p.flags = 1;
    b.number_points.Append(p);
  }
  b.metrics.Append(NewMetric(b, 0, "a.latency", MetricType::kGauge, Range{3, 2}));

  // 4: summary without quantiles.
  auto q = PointOf<otlp::SummaryPointRow>(b, 4, 11000, b.exemplars.size());
  q.count = 0;
  q.sum = Bits(kNanPayload);
  q.quantiles = EmptyRange(b.quantiles.size());
  b.summary_points.Append(q);
  b.metrics.Append(NewMetric(b, 0, "m", MetricType::kSummary, Range{0, 1}));

  // 5: a histogram without points.
  b.metrics.Append(
      NewMetric(b, 0, "b", MetricType::kHistogram, EmptyRange(b.histogram_points.size())));
  return b;
}

// EncodeMetricsProto of the batches concatenated: each input's request
// bytes one after another (a request is one repeated field, so this is the
// encoding of the request holding all their resources in order).
std::string EncodeAll(const std::vector<const MetricBatch*>& inputs) {
  std::string out;
  for (const MetricBatch* b : inputs) out += otlp::EncodeMetricsProto(*b);
  return out;
}

absl::StatusOr<MetricsTable> Write(const std::vector<const MetricBatch*>& inputs) {
  return WriteMetricsTable(inputs, kBatchId);
}

absl::StatusOr<MetricBatch> ReadBack(const std::string& file) {
  parquet::StringSource source(file);
  return ReadMetricsTable(&source, kBatchId, kFile);
}

// What the format page says the writer reports, derived independently from
// the inputs.
SignalMeta ExpectedMeta(const std::vector<const MetricBatch*>& inputs) {
  SignalMeta meta;
  for (const MetricBatch* b : inputs) {
    std::vector<bool> scope_used(b->scopes.size()), resource_used(b->resources.size());
    for (size_t m = 0; m < b->metrics.size(); ++m) {
      scope_used[b->metrics.scope[m]] = true;
      meta.file_rows += std::max<uint32_t>(1, b->metrics.points[m].count);
    }
    for (size_t s = 0; s < b->scopes.size(); ++s) {
      resource_used[b->scopes.resource[s]] = true;
      if (!scope_used[s]) ++meta.file_rows;
    }
    for (bool used : resource_used) meta.file_rows += used ? 0 : 1;
    const otlp::PointColumnsBase* tables[] = {&b->number_points, &b->histogram_points,
                                              &b->exponential_points, &b->summary_points};
    for (const otlp::PointColumnsBase* t : tables) {
      for (uint64_t time : t->time_unix_nano) {
        ++meta.rows;
        if (!meta.event_time) meta.event_time = NanosRange{time, time};
        meta.event_time->min = std::min(meta.event_time->min, time);
        meta.event_time->max = std::max(meta.event_time->max, time);
      }
    }
  }
  if (meta.file_rows > 0 && !meta.event_time) meta.event_time = NanosRange{};
  return meta;
}

// Writes, reads back, and expects the read batch to encode exactly as the
// inputs do, and the meta.json member to match ExpectedMeta (misses aside).
MetricsTable ExpectRoundTrip(const std::vector<const MetricBatch*>& inputs) {
  absl::StatusOr<MetricsTable> written = Write(inputs);
  EXPECT_TRUE(written.ok()) << written.status();
  if (!written.ok()) return {};
  SignalMeta expected = ExpectedMeta(inputs);
  expected.promotion_misses = written->meta.promotion_misses;
  EXPECT_EQ(written->meta, expected);
  absl::StatusOr<MetricBatch> read = ReadBack(written->file);
  EXPECT_TRUE(read.ok()) << read.status();
  if (!read.ok()) return *std::move(written);
  EXPECT_TRUE(otlp::ValidateBatch(*read).ok());
  EXPECT_EQ(otlp::EncodeMetricsProto(*read), EncodeAll(inputs));
  parquet::StringSource source(written->file);
  EXPECT_TRUE(CheckMetricsTableFooter(&source, kBatchId, written->meta.file_rows, kFile).ok());
  return *std::move(written);
}

// Every column of a file, read by strata's Parquet reader.
std::vector<ColumnVector> ReadColumns(const std::string& file) {
  parquet::StringSource source(file);
  absl::StatusOr<std::unique_ptr<parquet::FileReader>> reader = parquet::FileReader::Open(&source);
  EXPECT_TRUE(reader.ok()) << reader.status();
  if (!reader.ok()) return {};
  std::vector<int> all((*reader)->columns().size());
  for (size_t i = 0; i < all.size(); ++i) all[i] = static_cast<int>(i);
  absl::StatusOr<std::vector<ColumnVector>> columns =
      (*reader)->Read(all, 0, (*reader)->num_rows());
  EXPECT_TRUE(columns.ok()) << columns.status();
  return columns.ok() ? *std::move(columns) : std::vector<ColumnVector>{};
}

int Col(std::string_view name) {
  const std::vector<parquet::ColumnSpec>& columns = MetricsTableColumns();
  for (size_t i = 0; i < columns.size(); ++i) {
    if (columns[i].name == name) return static_cast<int>(i);
  }
  ADD_FAILURE() << "no column " << name;
  return 0;
}

TEST(MetricsTableTest, EveryFieldOfTheSharedTestBatchRoundTrips) {
  for (bool newer_fields : {false, true}) {
    SCOPED_TRACE(newer_fields);
    const MetricBatch batch = MakeMetricBatch(newer_fields);
    ExpectRoundTrip({&batch});
  }
}

TEST(MetricsTableTest, CornerCasesRoundTripBitForBit) {
  const MetricBatch batch = MakeCornerCaseBatch();
  ASSERT_TRUE(otlp::ValidateBatch(batch).ok());
  const MetricsTable written = ExpectRoundTrip({&batch});
  EXPECT_EQ(written.meta.promotion_misses,
            (std::map<std::string, uint64_t>{{"deployment.environment", 9}}));
  absl::StatusOr<MetricBatch> read = ReadBack(written.file);
  ASSERT_TRUE(read.ok()) << read.status();
  // The encoder comparison covers values; these name the bits directly.
  ASSERT_EQ(read->number_points.size(), 5u);
  EXPECT_EQ(read->number_points.value_bits[0], kNanPayload);
  EXPECT_EQ(read->number_points.value_bits[1], kNegativeZero);
  EXPECT_EQ(read->number_points.value_type[2], NumberType::kNone);
  ASSERT_EQ(read->histogram_points.size(), 2u);
  EXPECT_EQ(read->histogram_points.present[0], 0);
  EXPECT_EQ(read->histogram_points.present[1], otlp::kHasSum | otlp::kHasMin | otlp::kHasMax);
  EXPECT_EQ(std::bit_cast<uint64_t>(read->histogram_points.sum[1]), kNegativeNan);
  EXPECT_EQ(std::bit_cast<uint64_t>(read->explicit_bounds.back()), kNanPayload);
  ASSERT_EQ(read->exemplars.size(), 3u);
  EXPECT_EQ(read->exemplars.value_bits[0], kNegativeNan);
  EXPECT_EQ(read->exemplars.has_trace_id[1], 0);
  EXPECT_EQ(read->exemplars.has_span_id[1], 1);
  EXPECT_EQ(read->exemplars.has_trace_id[2] + read->exemplars.has_span_id[2], 0);
  EXPECT_EQ(read->exemplars.filtered_attributes[0].count, 2u);
  EXPECT_EQ(read->exemplars.filtered_attributes[1].count, 0u);
  EXPECT_EQ(read->exemplars.filtered_attributes[2].count, 1u);
  EXPECT_EQ(std::bit_cast<uint64_t>(read->summary_points.sum[0]), kNanPayload);
  EXPECT_EQ(read->metrics.name[2], "é");
  EXPECT_EQ(read->scopes.name[0], "库");
}

TEST(MetricsTableTest, SeveralInputsGoToOneFileSortedByName) {
  const MetricBatch a = MakeMetricBatch(true);
  const MetricBatch b = MakeCornerCaseBatch();
  const MetricBatch c = MakeMetricBatch(false);
  const MetricsTable written = ExpectRoundTrip({&a, &b, &c});
  const std::vector<ColumnVector> columns = ReadColumns(written.file);
  ASSERT_EQ(columns.size(), MetricsTableColumns().size());
  const ColumnVector& kind = columns[Col("row_kind")];
  const ColumnVector& name = columns[Col("metric_name")];
  const ColumnVector& index = columns[Col("metric_index")];
  const ColumnVector& resource = columns[Col("resource_index")];
  // Placeholders of empty resources and scopes first, then names in
  // bytewise order, each metric's rows together with its renumbered index.
  size_t row = 0;
  while (row < kind.size() && kind.int32s[row] >= 2) ++row;
  EXPECT_EQ(row, 5u);  // a and c: an empty resource and an empty scope each; b: an empty scope
  std::string_view previous;
  uint32_t previous_index = 0;
  std::vector<std::string> names;
  for (; row < kind.size(); ++row) {
    ASSERT_LE(kind.int32s[row], 1) << row;
    ASSERT_FALSE(name.is_null(row));
    const auto m = static_cast<uint32_t>(index.int32s[row]);
    EXPECT_LE(previous, name.bytes_at(row)) << row;
    // A stable sort: metrics of one name stay in batch order.
    if (previous == name.bytes_at(row)) EXPECT_LE(previous_index, m) << row;
    previous = name.bytes_at(row);
    previous_index = m;
    const auto r = static_cast<uint32_t>(resource.int32s[row]);
    // Metric numbers 0-6 are a's (resources 0-2), 7-12 b's (resource 3),
    // 13-19 c's (resources 4-6).
    EXPECT_EQ(m < 7 ? 0 : m < 13 ? 1 : 2, r < 3 ? 0 : r < 4 ? 1 : 2) << row;
    if (names.empty() || names.back() != name.bytes_at(row)) {
      names.emplace_back(name.bytes_at(row));
    }
  }
  EXPECT_EQ(names, (std::vector<std::string>{"a.latency", "b", "e", "empty", "g", "h", "m", "q",
                                             "s", "u", "z.count", "é"}));
}

TEST(MetricsTableTest, DuckDbReadsTheSameValuesAsStrata) {
  const MetricBatch a = MakeMetricBatch(true);
  const MetricBatch b = MakeCornerCaseBatch();
  absl::StatusOr<MetricsTable> written = Write({&a, &b});
  ASSERT_TRUE(written.ok()) << written.status();
  std::unique_ptr<query::DuckDbEngine> db = table_testing::OpenDuckDb();
  ASSERT_NE(db, nullptr);
  EXPECT_EQ(table_testing::ExpectDuckDbMatchesStrata(*db, written->file, "metrics"),
            static_cast<int64_t>(written->meta.file_rows));
  // A query as the format page suggests: exemplar attributes by key.
  parquet::parquet_testing::TempFile file(written->file);
  query::QueryResult result = parquet::parquet_testing::MustQuery(
      *db, fmt::format("SELECT metric_name, list_sum(exemplar_attr_count), "
                       "exemplar_attr_str[list_position(exemplar_attr_keys, 'user')] "
                       "FROM '{}' WHERE list_contains(exemplar_attr_keys, 'user')",
                       file.path()));
  ASSERT_EQ(result.rows.size(), 1u);
  EXPECT_EQ(result.rows[0][0], "a.latency");
  EXPECT_EQ(result.rows[0][1], "3");
  EXPECT_EQ(result.rows[0][2], "ü");
}

TEST(MetricsTableTest, NoRowsMeansNoFile) {
  const MetricBatch empty;
  absl::StatusOr<MetricsTable> written = Write({&empty});
  ASSERT_TRUE(written.ok()) << written.status();
  EXPECT_TRUE(written->file.empty());
  EXPECT_EQ(written->meta, SignalMeta{});
  written = Write({});
  ASSERT_TRUE(written.ok()) << written.status();
  EXPECT_TRUE(written->file.empty());
}

TEST(MetricsTableTest, PlaceholdersAloneHaveAZeroEventTime) {
  MetricBatch b;
  b.resources.Append({});
  b.resources.Append({.schema_url = "r"});
  b.scopes.Append({.resource = 1, .name = "s"});
  const MetricsTable written = ExpectRoundTrip({&b});
  EXPECT_EQ(written.meta.rows, 0u);
  EXPECT_EQ(written.meta.file_rows, 2u);
  EXPECT_EQ(written.meta.event_time, NanosRange{});
}

TEST(MetricsTableTest, WriterRefusesWhatTheFileCannotHold) {
  struct Case {
    const char* what;
    std::function<void(MetricBatch&)> change;
    absl::StatusCode code;
  };
  const Case cases[] = {
      {"temporality on a gauge", [](MetricBatch& b) { b.metrics.aggregation_temporality[0] = 1; },
       absl::StatusCode::kInvalidArgument},
      {"monotonic on a histogram", [](MetricBatch& b) { b.metrics.is_monotonic[3] = 1; },
       absl::StatusCode::kInvalidArgument},
      {"a point no metric owns", [](MetricBatch& b) { b.metrics.points[1].count = 0; },
       absl::StatusCode::kInvalidArgument},
      {"bits without a value type",
       [](MetricBatch& b) {
         b.number_points.value_type[0] = NumberType::kNone;
         b.number_points.value_bits[0] = 1;
       },
       absl::StatusCode::kInvalidArgument},
      {"min hidden behind a clear bit", [](MetricBatch& b) { b.histogram_points.min[0] = 1.0; },
       absl::StatusCode::kInvalidArgument},
      {"an unknown present bit", [](MetricBatch& b) { b.histogram_points.present[0] |= 8; },
       absl::StatusCode::kInvalidArgument},
      {"an absent span id that is not zero", [](MetricBatch& b) { b.exemplars.span_id[1][0] = 1; },
       absl::StatusCode::kInvalidArgument},
      {"a broken batch", [](MetricBatch& b) { b.metrics.scope[0] = 99; },
       absl::StatusCode::kInternal},
  };
  for (const Case& c : cases) {
    MetricBatch b = MakeMetricBatch(true);
    c.change(b);
    absl::StatusOr<MetricsTable> written = Write({&b});
    EXPECT_EQ(written.status().code(), c.code) << c.what << ": " << written.status();
  }
}

TEST(MetricsTableTest, FooterCheckNamesWhatIsWrong) {
  const MetricBatch batch = MakeMetricBatch(true);
  absl::StatusOr<MetricsTable> written = Write({&batch});
  ASSERT_TRUE(written.ok());
  parquet::StringSource source(written->file);
  EXPECT_TRUE(CheckMetricsTableFooter(&source, kBatchId, written->meta.file_rows, kFile).ok());
  absl::Status s = CheckMetricsTableFooter(&source, kBatchId, written->meta.file_rows + 1, kFile);
  EXPECT_TRUE(absl::IsDataLoss(s)) << s;
  EXPECT_THAT(std::string(s.message()), HasSubstr("file_rows"));
  s = CheckMetricsTableFooter(&source, "20250614093015123456001", written->meta.file_rows, kFile);
  EXPECT_TRUE(absl::IsDataLoss(s)) << s;
  EXPECT_THAT(std::string(s.message()), HasSubstr("strata.batch_id"));

  // The right columns under another schema name, and a file missing a column.
  std::vector<ColumnVector> columns = ReadColumns(written->file);
  absl::StatusOr<std::string> renamed =
      WriteTableFile(MetricsTableColumns(), columns, MakeWriterOptions({}, "spans", kBatchId, {}));
  ASSERT_TRUE(renamed.ok());
  parquet::StringSource renamed_source(*renamed);
  s = CheckMetricsTableFooter(&renamed_source, kBatchId, written->meta.file_rows, kFile);
  EXPECT_TRUE(absl::IsDataLoss(s)) << s;
  EXPECT_THAT(std::string(s.message()), HasSubstr("strata.schema"));
  std::vector<parquet::ColumnSpec> fewer = MetricsTableColumns();
  fewer.pop_back();
  columns.pop_back();
  absl::StatusOr<std::string> narrow =
      WriteTableFile(fewer, columns, MakeWriterOptions({}, kMetricsSchema, kBatchId, {}));
  ASSERT_TRUE(narrow.ok());
  for (const std::string* file : {&*renamed, &*narrow}) {
    absl::StatusOr<MetricBatch> read = ReadBack(*file);
    EXPECT_TRUE(absl::IsDataLoss(read.status())) << read.status();
    EXPECT_THAT(std::string(read.status().message()), HasSubstr(kFile));
  }
}

// Sets element or row `i` of an optional column to null.
void SetNull(ColumnVector& c, size_t i) {
  if (c.validity.empty()) c.validity.assign(c.element_count(), 1);
  c.validity[i] = 0;
}

TEST(MetricsTableTest, RuleViolationsAreDataLoss) {
  const MetricBatch a = MakeMetricBatch(true);
  const MetricBatch b = MakeCornerCaseBatch();
  absl::StatusOr<MetricsTable> written = Write({&a, &b});
  ASSERT_TRUE(written.ok());
  const std::vector<ColumnVector> columns = ReadColumns(written->file);
  // The first data row of each point type, found by metric_type.
  auto first_row_of = [&](MetricType type) {
    const ColumnVector& kinds = columns[Col("row_kind")];
    const ColumnVector& types = columns[Col("metric_type")];
    for (size_t r = 0; r < kinds.size(); ++r) {
      if (kinds.int32s[r] == 0 && types.int32s[r] == static_cast<int32_t>(type)) return r;
    }
    ADD_FAILURE() << "no row of type " << static_cast<int>(type);
    return size_t{0};
  };
  const size_t gauge = first_row_of(MetricType::kGauge);
  const size_t histogram = first_row_of(MetricType::kHistogram);
  const size_t summary = first_row_of(MetricType::kSummary);
  const size_t last = columns[0].size() - 1;
  struct Case {
    const char* what;  // expected in the message
    std::function<void(std::vector<ColumnVector>&)> change;
  };
  const Case cases[] = {
      {"row kind 9", [](auto& c) { c[Col("row_kind")].int32s[0] = 9; }},
      {"unknown type 42", [&](auto& c) { c[Col("metric_type")].int32s[gauge] = 42; }},
      {"do not match the value type",
       [&](auto& c) {
         ColumnVector& v = c[Col("value_type")];
         v.int32s[gauge] = v.int32s[gauge] == 1 ? 2 : 1;
       }},
      {"'count' row", [&](auto& c) { SetNull(c[Col("count")], histogram); }},
      {"'start_time_unix_nano' row 0",
       [](auto& c) {
         ColumnVector& v = c[Col("start_time_unix_nano")];
         v.validity.assign(v.int64s.size(), 1);
       }},
      {"length differs from summary_quantile",
       [&](auto& c) { c[Col("summary_value")].lists[summary].count += 1; }},
      {"not dense", [&](auto& c) { c[Col("metric_index")].int32s[last] = 15; }},
      {"not sorted", [&](auto& c) { table_testing::SetBytes(c[Col("metric_name")], last, "0"); }},
      {"counts sum",
       [&](auto& c) {
         ColumnVector& counts = c[Col("exemplar_attr_count")];
         for (size_t r = 0; r < counts.size(); ++r) {
           if (counts.lists[r].count > 0) {
             counts.int32s[counts.lists[r].begin] += 1;
             return;
           }
         }
       }},
      {"value type 5",
       [&](auto& c) {
         ColumnVector& types = c[Col("exemplar_value_type")];
         types.int32s[0] = 5;
       }},
      {"'scope_index' row 0: must be null exactly on kind-3 rows",
       [](auto& c) { c[Col("row_kind")].int32s[0] = 1; }},
  };
  for (const Case& c : cases) {
    const std::string corrupt = table_testing::RewriteColumns(written->file, c.change);
    ASSERT_FALSE(corrupt.empty()) << c.what;
    absl::StatusOr<MetricBatch> read = ReadBack(corrupt);
    EXPECT_TRUE(absl::IsDataLoss(read.status())) << c.what << ": " << read.status();
    EXPECT_THAT(std::string(read.status().message()), HasSubstr(c.what));
  }
}

TEST(MetricsTableTest, CorruptBytesNeverCrashAndAreDataLoss) {
  const MetricBatch a = MakeMetricBatch(true);
  const MetricBatch b = MakeCornerCaseBatch();
  absl::StatusOr<MetricsTable> written = Write({&a, &b});
  ASSERT_TRUE(written.ok());
  const std::string& good = written->file;
  for (size_t length : {size_t{0}, size_t{4}, size_t{12}, good.size() / 2, good.size() - 1}) {
    absl::StatusOr<MetricBatch> read = ReadBack(good.substr(0, length));
    EXPECT_TRUE(absl::IsDataLoss(read.status())) << length << ": " << read.status();
  }
  // Flipped bytes: either the damage hits a value no rule constrains (the
  // file's checksum in meta.json catches that) or it is DataLoss.
  std::mt19937_64 rng(7);
  int data_loss = 0;
  for (int trial = 0; trial < 400; ++trial) {
    std::string bad = good;
    const size_t at = rng() % bad.size();
    bad[at] = static_cast<char>(bad[at] ^ (1 + rng() % 255));
    absl::StatusOr<MetricBatch> read = ReadBack(bad);
    if (read.ok()) continue;
    EXPECT_TRUE(absl::IsDataLoss(read.status())) << at << ": " << read.status();
    ++data_loss;
  }
  EXPECT_GT(data_loss, 0);
}

}  // namespace
}  // namespace strata::storage
