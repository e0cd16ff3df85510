// rollups.parquet against its page (docs/format/rollups-parquet.md): the
// rows BuildRollups makes from generated multi-service traffic and from a
// batch of edge cases are compared with DuckDB's own aggregation of the
// spans.parquet, logs.parquet and metrics.parquet written from the same
// batches (counts, errors, sums, extremes exactly; quantiles in the bucket
// of DuckDB's quantile_disc); merging per-batch rollups equals rolling up
// all rows at once; the file round-trips and DuckDB reads it; a damaged
// file is refused.

#include "storage/table/rollups_table.h"

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "fmt/format.h"
#include "gtest/gtest.h"
#include "parquet/testing/parquet_testing.h"
#include "storage/table/logs_table.h"
#include "storage/table/metrics_table.h"
#include "storage/table/spans_table.h"
#include "storage/testing/table_test_batches.h"
#include "storage/testing/table_testing.h"
#include "workload/traffic_generator.h"

namespace strata::storage {
namespace {

using parquet::parquet_testing::MustQuery;
using parquet::parquet_testing::TempFile;
using rollups::RollupKind;
using rollups::RollupRow;
using rollups::RollupRows;
using table_testing::BatchBuilder;

constexpr char kBatchId[] = "20250614093015123456000";
constexpr uint64_t kMinute = rollups::kMinuteNanos;

// Spans chosen for the rules: HTTP with the old and new keys, url.template,
// http.target with a query string, a first occurrence of the wrong type,
// RPC with one key, messaging, no endpoint, negative and zero durations,
// errors, a service namespace, a resource without service.name, two
// minutes, an unknown span kind.
std::unique_ptr<otlp::TraceBatch> EdgeCaseSpans(uint64_t base) {
  auto batch = std::make_unique<otlp::TraceBatch>();
  BatchBuilder b(batch.get());
  using A = otlp::AttributeRow;
  const uint32_t shop = b.Resource({{b.S("service.namespace"), BatchBuilder::Str(b.S("shop"))},
                                    {b.S("service.name"), BatchBuilder::Str(b.S("cart"))}},
                                   "", 0, 0);
  const uint32_t nameless = b.Resource({{b.S("service.name"), BatchBuilder::Int(7)}}, "", 0, 0);
  const uint32_t plain =
      b.Resource({{b.S("service.name"), BatchBuilder::Str(b.S("cart"))}}, "", 0, 0);
  const uint32_t scopes[] = {b.Scope(shop, "s", "", {}, 0, ""),
                             b.Scope(nameless, "s", "", {}, 0, ""),
                             b.Scope(plain, "s", "", {}, 0, "")};
  struct Span {
    int scope;
    const char* name;
    int32_t kind;
    uint64_t start;
    int64_t duration;
    int32_t status;
    std::vector<A> attributes;
  };
  auto str = [&](const char* k, const char* v) { return A{b.S(k), BatchBuilder::Str(b.S(v))}; };
  auto num = [&](const char* k, int64_t v) { return A{b.S(k), BatchBuilder::Int(v)}; };
  const std::vector<Span> spans = {
      {0,
       "GET /a",
       2,
       base + 1,
       1000,
       0,
       {str("http.request.method", "GET"), str("http.route", "/a")}},
      {0, "GET /a", 2, base + 2, 3000, 2, {str("http.method", "GET"), str("http.route", "/a")}},
      {0, "tmpl", 2, base + 3, 90, 0, {str("http.method", "PUT"), str("url.template", "/t/{id}")}},
      {0,
       "target",
       3,
       base + 4,
       5'000'000,
       2,
       {str("http.request.method", "POST"), str("http.target", "/q/1?secret=2")}},
      {0,
       "target",
       3,
       base + 5,
       7'000'000,
       0,
       {num("http.request.method", 5), str("http.method", "POST"), str("http.target", "/q/1")}},
      {0, "bare-method", 2, base + 6, 0, 0, {str("http.request.method", "DELETE")}},
      {0, "rpc", 2, base + 7, -50, 0, {str("rpc.method", "Get")}},
      {0,
       "rpc",
       2,
       base + kMinute,
       123'456'789,
       2,
       {str("rpc.service", "Cart"), str("rpc.method", "Get")}},
      {1,
       "produce",
       4,
       base + kMinute + 1,
       40'000,
       0,
       {str("messaging.system", "kafka"), str("messaging.destination.name", "orders")}},
      {1,
       "produce",
       4,
       base + kMinute + 2,
       41'000,
       0,
       {str("messaging.system", "kafka"), str("messaging.destination.template", "o-{n}")}},
      {1, "internal", 1, base + kMinute + 3, 1, 0, {num("http.route", 1), str("x", "y")}},
      {2, "weird kind", 9, base + 2 * kMinute - 1, 1LL << 40, 1, {}},
      {2,
       "GET /a",
       2,
       base + 8,
       2000,
       0,
       {str("http.request.method", "GET"), str("http.route", "/a")}},
  };
  for (size_t i = 0; i < spans.size(); ++i) {
    const Span& s = spans[i];
    otlp::SpanRow row;
    row.scope = scopes[s.scope];
    row.trace_id = table_testing::MakeTraceId(1, i + 1);
    row.span_id = table_testing::MakeSpanId(i + 1);
    row.name = b.S(s.name);
    row.kind = s.kind;
    row.start_time_unix_nano = s.start;
    row.end_time_unix_nano = s.start + static_cast<uint64_t>(s.duration);
    row.status_code = s.status;
    row.attributes = BatchBuilder::Attributes(&batch->span_attributes, s.attributes);
    batch->spans.Append(row);
  }
  return batch;
}

struct Traffic {
  std::vector<std::unique_ptr<otlp::TraceBatch>> traces;
  std::vector<std::unique_ptr<otlp::LogBatch>> logs;
  std::vector<std::unique_ptr<otlp::MetricBatch>> metrics;

  std::vector<const otlp::TraceBatch*> trace_ptrs() const {
    std::vector<const otlp::TraceBatch*> out;
    for (const auto& b : traces) out.push_back(b.get());
    return out;
  }
  std::vector<const otlp::LogBatch*> log_ptrs() const {
    std::vector<const otlp::LogBatch*> out;
    for (const auto& b : logs) out.push_back(b.get());
    return out;
  }
  std::vector<const otlp::MetricBatch*> metric_ptrs() const {
    std::vector<const otlp::MetricBatch*> out;
    for (const auto& b : metrics) out.push_back(b.get());
    return out;
  }
};

// Generated traffic over several minutes and the edge cases.
Traffic MakeTraffic() {
  workload::TrafficOptions options;
  options.seed = 7;
  // 40 s before a whole minute, so the traffic crosses minutes.
  options.start_time_unix_nano = 1'750'000'020'000'000'000ULL;
  workload::TrafficGenerator generator(options);
  Traffic t;
  for (int i = 0; i < 3; ++i) {
    t.traces.push_back(generator.Traces(4000));
    t.logs.push_back(generator.Logs(3000));
    t.metrics.push_back(generator.Metrics(1500));
  }
  t.traces.push_back(EdgeCaseSpans(1'750'000'000'000'000'000ULL - 5 * kMinute));
  return t;
}

// The rows of one kind, keyed as DuckDB's answer is, with the measures as
// DuckDB prints them.
using Table = std::map<std::vector<std::string>, std::vector<std::string>>;

std::string Opt(const std::optional<std::string>& v) { return v.value_or("NULL"); }

Table FromDuckDb(const query::QueryResult& r, size_t key_columns) {
  Table out;
  for (const auto& row : r.rows) {
    std::vector<std::string> key, measures;
    for (size_t i = 0; i < row.size(); ++i)
      (i < key_columns ? key : measures).push_back(Opt(row[i]));
    out[key] = measures;
  }
  return out;
}

// "<count> <errors> <sum> <min> <max> <bucket of p50> <p95> <p99>" for a
// span row, the bucket of each quantile being what the histogram promises
// to match.
std::vector<std::string> SpanMeasures(const rollups::RollupMeasures& m) {
  std::vector<std::string> out = {std::to_string(m.count), std::to_string(m.errors),
                                  std::to_string(m.duration_sum), std::to_string(m.duration_min),
                                  std::to_string(m.duration_max)};
  for (int q : {500, 950, 990}) {
    out.push_back(std::to_string(rollups::DurationBucket(*m.histogram.Quantile(q))));
  }
  return out;
}

// The same measures from DuckDB over the spans table, with the rules of
// "Endpoints" written in SQL over the attribute lists. Quantiles are
// bucketed in C++ (DuckDB returns the exact duration).
constexpr char kSpansSql[] = R"sql(
WITH a AS (
  SELECT *,
    (start_time_unix_nano - start_time_unix_nano % 60000000000) AS minute,
    coalesce(CASE WHEN resource_attr_types[list_position(resource_attr_keys, 'service.namespace')] = 1
      THEN resource_attr_str[list_position(resource_attr_keys, 'service.namespace')] END, '') AS ns,
    coalesce(service_name, '') AS svc
  FROM read_parquet('{0}') WHERE row_kind = 0),
s AS (
  SELECT *, {1} AS http_req_method, {2} AS http_old_method, {3} AS route, {4} AS tmpl,
    {5} AS target, {6} AS rpc_s, {7} AS rpc_m, {8} AS msg_sys, {9} AS msg_dest, {10} AS msg_tmpl
  FROM a),
e AS (
  SELECT *, CASE
      WHEN coalesce(http_req_method, http_old_method) IS NOT NULL THEN 1
      WHEN rpc_s IS NOT NULL OR rpc_m IS NOT NULL THEN 2
      WHEN msg_sys IS NOT NULL THEN 3 END AS etype
  FROM s)
)sql";

std::string FirstStringSql(const char* key) {
  return fmt::format(
      "CASE WHEN attr_types[list_position(attr_keys, '{0}')] = 1 "
      "THEN attr_str[list_position(attr_keys, '{0}')] END",
      key);
}

std::string SpansCte(const std::string& file) {
  return fmt::format(
      kSpansSql, file, FirstStringSql("http.request.method"), FirstStringSql("http.method"),
      FirstStringSql("http.route"), FirstStringSql("url.template"), FirstStringSql("http.target"),
      FirstStringSql("rpc.service"), FirstStringSql("rpc.method"),
      FirstStringSql("messaging.system"), FirstStringSql("messaging.destination.name"),
      FirstStringSql("messaging.destination.template"));
}

constexpr char kMeasuresSql[] =
    "count(*), count(*) FILTER (WHERE status_code = 2), sum(duration_nano), min(duration_nano), "
    "max(duration_nano), quantile_disc(duration_nano, 0.5), quantile_disc(duration_nano, 0.95), "
    "quantile_disc(duration_nano, 0.99)";

// DuckDB's exact quantiles (the last three measures) as their buckets.
void BucketQuantiles(Table* table) {
  for (auto& [key, measures] : *table) {
    for (size_t i = measures.size() - 3; i < measures.size(); ++i) {
      measures[i] = std::to_string(rollups::DurationBucket(std::stoll(measures[i])));
    }
  }
}

class RollupsTableTest : public ::testing::Test {
 protected:
  void SetUp() override {
    traffic_ = MakeTraffic();
    db_ = table_testing::OpenDuckDb();
    ASSERT_NE(db_, nullptr);
    absl::StatusOr<SpansTable> spans = WriteSpansTable(traffic_.trace_ptrs(), kBatchId);
    ASSERT_TRUE(spans.ok()) << spans.status();
    absl::StatusOr<LogsTable> logs = WriteLogsTable(traffic_.log_ptrs(), kBatchId);
    ASSERT_TRUE(logs.ok()) << logs.status();
    absl::StatusOr<MetricsTable> metrics = WriteMetricsTable(traffic_.metric_ptrs(), kBatchId);
    ASSERT_TRUE(metrics.ok()) << metrics.status();
    spans_file_ = std::make_unique<TempFile>(spans->file);
    logs_file_ = std::make_unique<TempFile>(logs->file);
    metrics_file_ = std::make_unique<TempFile>(metrics->file);
    rows_ =
        rollups::BuildRollups(traffic_.trace_ptrs(), traffic_.log_ptrs(), traffic_.metric_ptrs());
  }

  // The rows of `kind` as a Table keyed by the kind's key columns.
  Table Rows(RollupKind kind) const {
    Table out;
    for (const RollupRow& row : rows_) {
      if (row.key.kind != kind) continue;
      const rollups::RollupKey& k = row.key;
      std::vector<std::string> key = {std::to_string(k.minute), k.service_namespace,
                                      k.service_name};
      std::vector<std::string> measures = {std::to_string(row.measures.count)};
      switch (kind) {
        case RollupKind::kOperation:
          key.insert(key.end(), {k.span_name, std::to_string(k.span_kind)});
          measures = SpanMeasures(row.measures);
          break;
        case RollupKind::kEndpoint:
          key.insert(key.end(), {std::to_string(k.span_kind),
                                 std::to_string(static_cast<int>(k.endpoint_type)), k.endpoint_a,
                                 k.endpoint_b});
          measures = SpanMeasures(row.measures);
          break;
        case RollupKind::kLogSeverity:
          key.push_back(std::to_string(k.severity_class));
          break;
        case RollupKind::kMetricPoints:
          break;
      }
      EXPECT_EQ(out.count(key), 0u) << "a key twice: " << fmt::format("{}", fmt::join(key, "|"));
      out[key] = measures;
    }
    return out;
  }

  Traffic traffic_;
  std::unique_ptr<query::DuckDbEngine> db_;
  std::unique_ptr<TempFile> spans_file_, logs_file_, metrics_file_;
  RollupRows rows_;
};

TEST_F(RollupsTableTest, OperationRowsEqualDuckDbOverTheSpans) {
  Table want = FromDuckDb(
      MustQuery(*db_, SpansCte(spans_file_->path()) +
                          fmt::format("SELECT minute, ns, svc, name, kind, {} FROM e GROUP BY ALL",
                                      kMeasuresSql)),
      5);
  BucketQuantiles(&want);
  const Table got = Rows(RollupKind::kOperation);
  ASSERT_GT(want.size(), 50u);
  EXPECT_EQ(got, want);
}

TEST_F(RollupsTableTest, EndpointRowsEqualDuckDbOverTheSpans) {
  Table want =
      FromDuckDb(MustQuery(*db_, SpansCte(spans_file_->path()) + fmt::format(R"sql(
SELECT minute, ns, svc, kind, etype,
  CASE etype WHEN 1 THEN coalesce(http_req_method, http_old_method)
             WHEN 2 THEN coalesce(rpc_s, '') ELSE msg_sys END,
  CASE etype WHEN 1 THEN coalesce(route, tmpl, split_part(target, '?', 1), '')
             WHEN 2 THEN coalesce(rpc_m, '') ELSE coalesce(msg_dest, msg_tmpl, '') END,
  {} FROM e WHERE etype IS NOT NULL GROUP BY ALL)sql",
                                                                             kMeasuresSql)),
                 7);
  BucketQuantiles(&want);
  const Table got = Rows(RollupKind::kEndpoint);
  ASSERT_GT(want.size(), 20u);
  EXPECT_EQ(got, want);
  // The edge cases landed where the rules put them.
  const std::string minute =
      std::to_string(rollups::MinuteOf(1'750'000'000'000'000'000ULL - 5 * kMinute));
  EXPECT_EQ(got.count({minute, "shop", "cart", "3", "1", "POST", "/q/1"}), 1u);
  EXPECT_EQ(got.count({minute, "shop", "cart", "2", "1", "PUT", "/t/{id}"}), 1u);
  EXPECT_EQ(got.count({minute, "shop", "cart", "2", "1", "DELETE", ""}), 1u);
  EXPECT_EQ(got.count({minute, "shop", "cart", "2", "2", "", "Get"}), 1u);
}

TEST_F(RollupsTableTest, LogAndMetricRowsEqualDuckDb) {
  const Table logs = FromDuckDb(MustQuery(*db_, fmt::format(R"sql(
WITH l AS (
  SELECT CASE WHEN time_unix_nano <> 0 THEN time_unix_nano ELSE observed_time_unix_nano END AS t,
    coalesce(CASE WHEN resource_attr_types[list_position(resource_attr_keys, 'service.namespace')] = 1
      THEN resource_attr_str[list_position(resource_attr_keys, 'service.namespace')] END, '') AS ns,
    coalesce(service_name, '') AS svc,
    CASE WHEN severity_number BETWEEN 1 AND 24 THEN 1 + (severity_number - 1) // 4 ELSE 0 END AS sev
  FROM read_parquet('{}') WHERE row_kind = 0)
SELECT t - t % 60000000000, ns, svc, sev, count(*) FROM l GROUP BY ALL)sql",
                                                            logs_file_->path())),
                                4);
  ASSERT_GT(logs.size(), 10u);
  EXPECT_EQ(Rows(RollupKind::kLogSeverity), logs);
  const Table metrics = FromDuckDb(MustQuery(*db_, fmt::format(R"sql(
SELECT time_unix_nano - time_unix_nano % 60000000000,
  coalesce(CASE WHEN resource_attr_types[list_position(resource_attr_keys, 'service.namespace')] = 1
    THEN resource_attr_str[list_position(resource_attr_keys, 'service.namespace')] END, ''),
  coalesce(service_name, ''), count(*)
FROM read_parquet('{}') WHERE row_kind = 0 GROUP BY ALL)sql",
                                                               metrics_file_->path())),
                                   3);
  ASSERT_GT(metrics.size(), 2u);
  EXPECT_EQ(Rows(RollupKind::kMetricPoints), metrics);
}

TEST_F(RollupsTableTest, MergingPerBatchRollupsEqualsRollingUpEverything) {
  std::vector<RollupRows> parts;
  for (const auto& b : traffic_.traces) {
    const otlp::TraceBatch* one = b.get();
    parts.push_back(rollups::BuildRollups({&one, 1}, {}, {}));
  }
  for (const auto& b : traffic_.logs) {
    const otlp::LogBatch* one = b.get();
    parts.push_back(rollups::BuildRollups({}, {&one, 1}, {}));
  }
  for (const auto& b : traffic_.metrics) {
    const otlp::MetricBatch* one = b.get();
    parts.push_back(rollups::BuildRollups({}, {}, {&one, 1}));
  }
  // Merged in two different groupings.
  std::vector<const RollupRows*> all;
  for (const RollupRows& p : parts) all.push_back(&p);
  EXPECT_EQ(rollups::MergeRollups(all), rows_);
  const RollupRows left = rollups::MergeRollups({all.data(), 4});
  const RollupRows right = rollups::MergeRollups({all.data() + 4, all.size() - 4});
  const RollupRows* halves[] = {&right, &left};
  EXPECT_EQ(rollups::MergeRollups(halves), rows_);
}

TEST_F(RollupsTableTest, FileRoundTripsAndDuckDbReadsIt) {
  absl::StatusOr<std::string> bytes = WriteRollupsTable(rows_, kBatchId);
  ASSERT_TRUE(bytes.ok()) << bytes.status();
  // Deterministic: the same rows give the same bytes.
  EXPECT_EQ(*WriteRollupsTable(rows_, kBatchId), *bytes);
  parquet::StringSource source(*bytes);
  absl::StatusOr<RollupRows> back = ReadRollupsTable(&source, kBatchId, "rollups.parquet");
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(*back, rows_);
  EXPECT_TRUE(CheckRollupsTableFooter(&source, kBatchId, "rollups.parquet").ok());
  EXPECT_TRUE(
      absl::IsDataLoss(CheckRollupsTableFooter(&source, "20250614093015123456001", "r.parquet")));

  TempFile file(*bytes);
  int64_t spans = 0;
  for (const RollupRow& row : rows_) {
    if (row.key.kind == RollupKind::kOperation) spans += row.measures.count;
  }
  const query::QueryResult r = MustQuery(
      *db_, fmt::format("SELECT sum(count), sum(list_sum(hist_count)), count(*) FILTER (WHERE "
                        "hist_nonzero IS NULL OR NOT hist_nonzero[1] OR NOT hist_nonzero[-1] OR "
                        "len(list_filter(hist_nonzero, b -> b)) <> len(hist_count)) FROM "
                        "read_parquet('{}') WHERE rollup = 1",
                        file.path()));
  ASSERT_EQ(r.rows.size(), 1u);
  EXPECT_EQ(Opt(r.rows[0][0]), std::to_string(spans));
  EXPECT_EQ(Opt(r.rows[0][1]), std::to_string(spans));
  EXPECT_EQ(Opt(r.rows[0][2]), "0");
  const query::QueryResult total =
      MustQuery(*db_, fmt::format("SELECT count(*) FROM read_parquet('{}') WHERE row_kind = 0",
                                  spans_file_->path()));
  EXPECT_EQ(Opt(total.rows[0][0]), std::to_string(spans));
}

// Endpoint rows equal to an operation row point at it (measures_row) and
// store no measures of their own; a reader gets them back whole.
TEST_F(RollupsTableTest, EndpointRowsPointAtEqualOperationRows) {
  absl::StatusOr<std::string> bytes = WriteRollupsTable(rows_, kBatchId);
  ASSERT_TRUE(bytes.ok()) << bytes.status();
  TempFile file(*bytes);
  // Which endpoint rows have an operation row of the same minute, service
  // and kind with equal measures: exactly those must point, at the first.
  int64_t copies = 0;
  for (size_t i = 0; i < rows_.size(); ++i) {
    if (rows_[i].key.kind != RollupKind::kEndpoint) continue;
    for (size_t j = 0; j < i; ++j) {
      const rollups::RollupKey& a = rows_[j].key;
      if (a.kind == RollupKind::kOperation && a.minute == rows_[i].key.minute &&
          a.service_namespace == rows_[i].key.service_namespace &&
          a.service_name == rows_[i].key.service_name && a.span_kind == rows_[i].key.span_kind &&
          rows_[j].measures == rows_[i].measures) {
        ++copies;
        break;
      }
    }
  }
  ASSERT_GT(copies, 0) << "the generated traffic names server spans after their endpoint";
  const query::QueryResult r = MustQuery(
      *db_,
      fmt::format("SELECT count(*) FILTER (WHERE r.measures_row IS NOT NULL), count(*) FILTER "
                  "(WHERE r.measures_row IS NOT NULL AND (r.hist_count IS NOT NULL OR "
                  "r.errors IS NOT NULL)), count(*) FILTER (WHERE m.rollup <> 1 OR m.count <> "
                  "r.count) FROM read_parquet('{0}', file_row_number = true) r LEFT JOIN "
                  "read_parquet('{0}', file_row_number = true) m ON m.file_row_number = "
                  "r.measures_row",
                  file.path()));
  ASSERT_EQ(r.rows.size(), 1u);
  EXPECT_EQ(Opt(r.rows[0][0]), std::to_string(copies));
  EXPECT_EQ(Opt(r.rows[0][1]), "0");
  EXPECT_EQ(Opt(r.rows[0][2]), "0");
  parquet::StringSource source(*bytes);
  absl::StatusOr<RollupRows> back = ReadRollupsTable(&source, kBatchId, "rollups.parquet");
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(*back, rows_);
}

// Format 2 batches keep their layout (bucket index lists, no
// measures_row): still read, and only as format 2.
TEST_F(RollupsTableTest, Format2LayoutStillReads) {
  absl::StatusOr<std::string> format2 = WriteRollupsTable(rows_, kBatchId, {}, 2);
  ASSERT_TRUE(format2.ok()) << format2.status();
  parquet::StringSource source(*format2);
  absl::StatusOr<RollupRows> back = ReadRollupsTable(&source, kBatchId, "rollups.parquet", 2);
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(*back, rows_);
  EXPECT_TRUE(CheckRollupsTableFooter(&source, kBatchId, "rollups.parquet", 2).ok());
  // Each layout refuses the other's file: the schema differs.
  EXPECT_TRUE(absl::IsDataLoss(CheckRollupsTableFooter(&source, kBatchId, "r.parquet", 3)));
  EXPECT_TRUE(absl::IsDataLoss(ReadRollupsTable(&source, kBatchId, "r.parquet", 3).status()));
  absl::StatusOr<std::string> format3 = WriteRollupsTable(rows_, kBatchId);
  ASSERT_TRUE(format3.ok()) << format3.status();
  parquet::StringSource source3(*format3);
  EXPECT_TRUE(absl::IsDataLoss(ReadRollupsTable(&source3, kBatchId, "r.parquet", 2).status()));
  // The new layout is the smaller one.
  EXPECT_LT(format3->size(), format2->size());
  TempFile file(*format2);
  const query::QueryResult r = MustQuery(
      *db_,
      fmt::format("SELECT sum(len(hist_index)) = sum(len(hist_count)) FROM read_parquet('{}')",
                  file.path()));
  EXPECT_EQ(Opt(r.rows[0][0]), "true");
}

TEST_F(RollupsTableTest, RowsThatBreakTheRulesAreRefused) {
  auto refused = [&](RollupRows rows, const char* what) {
    absl::StatusOr<std::string> bytes = WriteRollupsTable(rows, kBatchId);
    ASSERT_TRUE(bytes.ok()) << what << ": " << bytes.status();
    parquet::StringSource source(*bytes);
    absl::StatusOr<RollupRows> back = ReadRollupsTable(&source, kBatchId, "rollups.parquet");
    EXPECT_TRUE(absl::IsDataLoss(back.status())) << what << ": " << back.status();
  };
  RollupRows rows = rows_;
  rows[0].measures.count += 1;  // the histogram no longer counts every span
  refused(rows, "count");
  rows = rows_;
  rows.back().key.minute += 1;  // still sorted, no longer a whole minute
  refused(rows, "minute");
  rows = rows_;
  rows[0].measures.errors = rows[0].measures.count + 1;
  refused(rows, "errors");
  rows = rows_;
  std::swap(rows[0].measures.duration_min, rows[0].measures.duration_max);
  if (rows[0].measures.duration_min != rows[0].measures.duration_max) refused(rows, "min > max");
  // Unsorted rows are the writer's caller's bug.
  rows = rows_;
  std::swap(rows[0], rows[1]);
  EXPECT_TRUE(absl::IsInternal(WriteRollupsTable(rows, kBatchId).status()));
  EXPECT_TRUE(absl::IsInternal(WriteRollupsTable({}, kBatchId).status()));
}

TEST(RollupRowsTest, SeverityClassesAndMinutes) {
  EXPECT_EQ(rollups::SeverityClass(0), 0);
  EXPECT_EQ(rollups::SeverityClass(25), 0);
  EXPECT_EQ(rollups::SeverityClass(-3), 0);
  EXPECT_EQ(rollups::SeverityClass(1), 1);
  EXPECT_EQ(rollups::SeverityClass(4), 1);
  EXPECT_EQ(rollups::SeverityClass(5), 2);
  EXPECT_EQ(rollups::SeverityClass(9), 3);
  EXPECT_EQ(rollups::SeverityClass(17), 5);
  EXPECT_EQ(rollups::SeverityClass(24), 6);
  EXPECT_EQ(rollups::MinuteOf(kMinute - 1), 0u);
  EXPECT_EQ(rollups::MinuteOf(kMinute), kMinute);
}

TEST(RollupRowsTest, ADurationSumPastInt64SplitsItsKey) {
  auto batch = std::make_unique<otlp::TraceBatch>();
  BatchBuilder b(batch.get());
  const uint32_t resource =
      b.Resource({{b.S("service.name"), BatchBuilder::Str(b.S("big"))}}, "", 0, 0);
  const uint32_t scope = b.Scope(resource, "s", "", {}, 0, "");
  constexpr int64_t kHuge = int64_t{1} << 62;
  const int64_t durations[] = {kHuge, kHuge / 2, kHuge};
  for (int i = 0; i < 3; ++i) {
    otlp::SpanRow row;
    row.scope = scope;
    row.trace_id = table_testing::MakeTraceId(1, 1);
    row.span_id = table_testing::MakeSpanId(i + 1);
    row.name = b.S("long");
    row.start_time_unix_nano = 0;
    row.end_time_unix_nano = static_cast<uint64_t>(durations[i]);
    batch->spans.Append(row);
  }
  const otlp::TraceBatch* one = batch.get();
  const RollupRows rows = rollups::BuildRollups({&one, 1}, {}, {});
  // 1.5 * 2^62 + 2^62 is past int64: the third span starts a second row.
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0].key, rows[1].key);
  EXPECT_EQ(rows[0].measures.count, 2);
  EXPECT_EQ(rows[1].measures.count, 1);
  EXPECT_EQ(rows[0].measures.duration_sum, kHuge + kHuge / 2);
  EXPECT_EQ(rows[1].measures.duration_sum, kHuge);
  // The file keeps both rows, and a merge keeps them apart.
  absl::StatusOr<std::string> bytes = WriteRollupsTable(rows, kBatchId);
  ASSERT_TRUE(bytes.ok()) << bytes.status();
  parquet::StringSource source(*bytes);
  absl::StatusOr<RollupRows> back = ReadRollupsTable(&source, kBatchId, "rollups.parquet");
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(*back, rows);
  const RollupRows* inputs[] = {&rows, &rows};
  const RollupRows merged = rollups::MergeRollups(inputs);
  int64_t count = 0;
  for (const RollupRow& row : merged) count += row.measures.count;
  EXPECT_EQ(count, 6);
  EXPECT_EQ(merged.size(), 4u);  // no two of the four rows add within int64
}

}  // namespace
}  // namespace strata::storage
