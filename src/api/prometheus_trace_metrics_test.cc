// The span-metrics and service-graph series over traces exported apart:
// PromQL instant queries through PromSeriesSources answer, at every
// minute, the counts DuckDB finds in the spans files started before that
// minute (per operation and status, per `le` by the documented bucket
// rule, per service-map edge by the map's reference query); series go
// stale 15 minutes after their last count; and the names are listed
// beside the metrics tables' by /series-style selects and metadata.

#include "api/prometheus_trace_metrics.h"

#include <map>
#include <set>
#include <string>
#include <vector>

#include "api/api_test_server.h"
#include "api/prometheus_query.h"
#include "api/service_health_json.h"
#include "api/service_map_testing.h"
#include "compat/promql/label_matcher.h"
#include "compat/promql/result_json.h"
#include "fmt/format.h"
#include "gtest/gtest.h"
#include "io/posix_file_system.h"
#include "otlp/decode.h"
#include "query/duckdb_engine.h"
#include "rollups/duration_histogram.h"
#include "storage/storage.h"
#include "storage/testing/commit_testing.h"

namespace strata::api {
namespace {

namespace promql = compat::promql;
namespace smt = service_map_testing;

constexpr int64_t kStart = 1'796'205'600'000'000'000;  // a whole minute
constexpr int64_t kStartMs = kStart / 1'000'000;
constexpr int64_t kMinuteMs = 60'000;

using Counts = std::map<std::string, double>;

class TraceMetricsTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    tmp_ = new storage::testing::ScopedTempDir("trace-metrics");
    data_dir_ = new std::string(tmp_->path() + "/data");
    auto opened = storage::Storage::Open(fs_, *data_dir_);
    ASSERT_TRUE(opened.ok()) << opened.status();
    storage_ = opened->release();
    // 60 traces, one every 7 s: spans over 7 minutes from kStart.
    ASSERT_TRUE(smt::WriteExportedApart(*storage_, smt::Traces(60, kStart), 5).ok());
    auto engine = query::DuckDbEngine::Open({});
    ASSERT_TRUE(engine.ok());
    engine_ = engine->release();
    test_support::CreateTruthViews(*engine_, *data_dir_);
    pool_ = test_support::OpenTestPool(*data_dir_, 1, 1).release();
  }
  static void TearDownTestSuite() {
    delete pool_;
    delete engine_;
    storage_->Shutdown(std::chrono::seconds(5));
    delete storage_;
    delete data_dir_;
    delete tmp_;
  }

  // The instant query `text` at `t_ms`, its series keyed by the values of
  // `labels` joined with '|', zero values left out.
  Counts Instant(const std::string& text, int64_t t_ms, const std::vector<std::string>& labels) {
    std::shared_ptr<const storage::Snapshot> snapshot = storage_->Pin();
    const query::ViewFiles files = FilesFor(*snapshot);
    const CallOptions call{std::chrono::seconds(30)};
    MetricsSeriesSource metrics(*pool_, files, call, nullptr);
    TraceMetricsSource traces(rollups_, map_, fs_, *snapshot);
    PromSeriesSources source(metrics, traces);
    auto result = EvaluatePromQuery({text, t_ms, t_ms, 0, 0}, source, 0);
    EXPECT_TRUE(result.ok()) << result.status();
    Counts out;
    if (!result.ok()) return out;
    for (const auto& element : result->vector) {
      if (element.v == 0) continue;
      std::string key;
      for (const std::string& name : labels) {
        key += (key.empty() ? "" : "|") + promql::LabelValue(element.labels, name);
      }
      EXPECT_FALSE(out.contains(key)) << key;
      out[key] = element.v;
    }
    return out;
  }

  static query::ViewFiles FilesFor(const storage::Snapshot& snapshot) {
    return ViewFilesFor(snapshot, *data_dir_);
  }

  // Rows of `sql` over the truth views.
  static std::vector<std::vector<std::string>> Truth(const std::string& sql) {
    auto rows = engine_->Query(sql);
    EXPECT_TRUE(rows.ok()) << rows.status() << "\n" << sql;
    std::vector<std::vector<std::string>> out;
    if (!rows.ok()) return out;
    for (const auto& row : rows->rows) {
      std::vector<std::string> cells;
      for (const auto& cell : row) cells.push_back(cell.value_or(""));
      out.push_back(std::move(cells));
    }
    return out;
  }

  // Spans started before minute `before_ms`, per operation and status.
  static Counts CallsBefore(int64_t before_ms) {
    Counts out;
    for (const auto& row :
         Truth(fmt::format("SELECT service_name, kind, name, status_code = 2, count(*) FROM spans "
                           "WHERE start_time_unix_nano < {} GROUP BY ALL",
                           before_ms * 1'000'000))) {
      out[fmt::format("{}|{}|{}|{}", row[0], SpanKindName(std::stoi(row[1])), row[2],
                      row[3] == "true" ? "STATUS_CODE_ERROR" : "STATUS_CODE_UNSET")] +=
          std::stod(row[4]);
    }
    return out;
  }

  static inline storage::testing::ScopedTempDir* tmp_ = nullptr;
  static inline std::string* data_dir_ = nullptr;
  static inline PosixFileSystem fs_;
  static inline storage::Storage* storage_ = nullptr;
  static inline query::DuckDbEngine* engine_ = nullptr;
  static inline query::QueryPool* pool_ = nullptr;
  RollupCache rollups_;
  ServiceMap map_;
};

TEST_F(TraceMetricsTest, CallsAtEveryMinuteEqualTheSpansStartedBeforeIt) {
  const std::vector<std::string> labels = {"service", "span_kind", "span_name", "status_code"};
  for (int minute = 1; minute <= 9; ++minute) {
    // Anywhere in the minute: the sample of the minute's start.
    const int64_t t = kStartMs + minute * kMinuteMs + 17'000;
    const Counts want = CallsBefore(kStartMs + minute * kMinuteMs);
    ASSERT_FALSE(want.empty());
    EXPECT_EQ(Instant("traces_spanmetrics_calls_total", t, labels), want) << "minute " << minute;
  }
  // Errors alone, by a matcher on the status.
  Counts errors;
  for (const auto& [key, count] : CallsBefore(kStartMs + 10 * kMinuteMs)) {
    if (key.ends_with("|STATUS_CODE_ERROR")) errors[key] = count;
  }
  ASSERT_FALSE(errors.empty());
  EXPECT_EQ(Instant("traces_spanmetrics_calls_total{status_code=\"STATUS_CODE_ERROR\"}",
                    kStartMs + 10 * kMinuteMs, labels),
            errors);
}

TEST_F(TraceMetricsTest, SeriesGoStaleFifteenMinutesAfterTheirLastCount) {
  // The last spans start in minute 6 (60 traces 7 s apart): samples run
  // to the end of minute 21, and the lookback keeps the last 5 minutes more.
  const Counts all = CallsBefore(kStartMs + 60 * kMinuteMs);
  EXPECT_EQ(Instant("traces_spanmetrics_calls_total", kStartMs + 26 * kMinuteMs,
                    {"service", "span_kind", "span_name", "status_code"}),
            all);
  EXPECT_TRUE(
      Instant("traces_spanmetrics_calls_total", kStartMs + 28 * kMinuteMs, {"service"}).empty());
  EXPECT_TRUE(Instant("traces_spanmetrics_calls_total", kStartMs - kMinuteMs, {"service"}).empty());
}

TEST_F(TraceMetricsTest, LatencyBucketsCountDurationsByTheRollupBucketRule) {
  const int64_t t = kStartMs + 12 * kMinuteMs;
  Counts want;
  Counts want_sum;
  for (const auto& row :
       Truth(fmt::format("SELECT service_name, kind, name, duration_nano FROM spans WHERE "
                         "start_time_unix_nano < {}",
                         (t / kMinuteMs) * kMinuteMs * 1'000'000))) {
    const std::string op = fmt::format("{}|{}|{}", row[0], SpanKindName(std::stoi(row[1])), row[2]);
    const int64_t duration = std::stoll(row[3]);
    const int64_t value = rollups::BucketValue(rollups::DurationBucket(duration));
    for (int i = 0; i < kTraceLatencyBounds; ++i) {
      const double bound = TraceLatencyBoundSeconds(i);
      if (static_cast<double>(value) <= bound * 1e9) {
        want[op + "|" + promql::FormatFloat(bound)] += 1;
      }
    }
    want[op + "|+Inf"] += 1;
    want_sum[op] += static_cast<double>(duration) / 1e9;
  }
  ASSERT_GT(want.size(), want_sum.size());
  EXPECT_EQ(
      Instant("traces_spanmetrics_latency_bucket", t, {"service", "span_kind", "span_name", "le"}),
      want);
  const Counts sums =
      Instant("traces_spanmetrics_latency_sum", t, {"service", "span_kind", "span_name"});
  ASSERT_EQ(sums.size(), want_sum.size());
  for (const auto& [op, seconds] : want_sum) {
    ASSERT_TRUE(sums.contains(op)) << op;
    EXPECT_NEAR(sums.at(op), seconds, seconds * 1e-12) << op;
  }
  // histogram_quantile reads them.
  EXPECT_FALSE(Instant("histogram_quantile(0.99, sum by (le, service) "
                       "(traces_spanmetrics_latency_bucket))",
                       t, {"service"})
                   .empty());
}

TEST_F(TraceMetricsTest, ServiceGraphCountsEqualTheServiceMapReference) {
  const int64_t t = kStartMs + 12 * kMinuteMs;
  const uint64_t end = static_cast<uint64_t>(t / kMinuteMs * kMinuteMs) * 1'000'000;
  Counts calls;
  Counts failed;
  // Edge names: "<type>:<name> -> <type>:<name> <edge type>", services as
  // "service:<namespace>/<name>".
  auto node_name = [](std::string node) {
    node = node.substr(node.find(':') + 1);
    return node.starts_with("/") ? node.substr(1) : node;
  };
  for (const auto& row : Truth(ServiceMapReferenceSql(0, end))) {
    const std::string& name = row[0];
    const size_t arrow = name.find(" -> ");
    const size_t type_at = name.rfind(' ');
    const std::string source = name.substr(0, arrow);
    const std::string target = name.substr(arrow + 4, type_at - arrow - 4);
    const std::string type = name.substr(type_at + 1);
    std::string connection;
    if (type == "database") {
      connection = "database";
    } else if (type == "messaging") {
      connection = "messaging_system";
    } else if (!target.starts_with("service:")) {
      connection = "virtual_node";
    }
    const std::string key =
        fmt::format("{}|{}|{}", node_name(source), node_name(target), connection);
    calls[key] += std::stod(row[1]);
    if (std::stod(row[2]) != 0) failed[key] += std::stod(row[2]);
  }
  ASSERT_GE(calls.size(), 6u);
  ASSERT_FALSE(failed.empty());
  const std::vector<std::string> labels = {"client", "server", "connection_type"};
  EXPECT_EQ(Instant("traces_service_graph_request_total", t, labels), calls);
  EXPECT_EQ(Instant("traces_service_graph_request_failed_total", t, labels), failed);
  EXPECT_EQ(Instant("traces_service_graph_request_server_seconds_count", t, labels), calls);
  EXPECT_EQ(Instant("traces_service_graph_request_server_seconds_bucket{le=\"+Inf\"}", t, labels),
            calls);
}

TEST_F(TraceMetricsTest, NamesAreListedBesideTheMetricsTablesAndSelectedByRegex) {
  std::shared_ptr<const storage::Snapshot> snapshot = storage_->Pin();
  const query::ViewFiles files = FilesFor(*snapshot);
  const CallOptions call{std::chrono::seconds(30)};
  MetricsSeriesSource metrics(*pool_, files, call, nullptr);
  TraceMetricsSource traces(rollups_, map_, fs_, *snapshot);
  PromSeriesSources source(metrics, traces);
  auto sets = source.SelectLabels({{promql::MatchType::kRegexMatch, "__name__", "traces_.+_total"}},
                                  kStartMs, kStartMs + 30 * kMinuteMs, 0);
  ASSERT_TRUE(sets.ok()) << sets.status();
  std::set<std::string> names;
  for (const auto& labels : *sets) names.insert(promql::LabelValue(labels, "__name__"));
  EXPECT_EQ(names, (std::set<std::string>{"traces_service_graph_request_failed_total",
                                          "traces_service_graph_request_total",
                                          "traces_spanmetrics_calls_total"}));
  auto metadata = source.Metadata(kStartMs, kStartMs + 30 * kMinuteMs);
  ASSERT_TRUE(metadata.ok()) << metadata.status();
  std::set<std::string> families;
  for (const auto& one : *metadata) families.insert(one.name + " " + one.type);
  EXPECT_TRUE(families.contains("traces_spanmetrics_latency histogram"));
  EXPECT_TRUE(families.contains("traces_service_graph_request_total counter"));
  // A range query over the window: rate() of the running totals.
  auto rate = EvaluatePromQuery({"sum(rate(traces_spanmetrics_calls_total[5m]))", kStartMs,
                                 kStartMs + 20 * kMinuteMs, kMinuteMs, 0},
                                source, 0);
  ASSERT_TRUE(rate.ok()) << rate.status();
  ASSERT_EQ(rate->matrix.size(), 1u);
  EXPECT_GT(rate->matrix[0].points.size(), 5u);
}

TEST_F(TraceMetricsTest, SelectsPastTheSeriesOrSampleBudgetAreRefused) {
  std::shared_ptr<const storage::Snapshot> snapshot = storage_->Pin();
  TraceMetricsSource traces(rollups_, map_, fs_, *snapshot);
  const std::vector<promql::LabelMatcher> all = {
      {promql::MatchType::kRegexMatch, "__name__", "traces_.+"}};
  const int64_t from = kStartMs, to = kStartMs + 20 * kMinuteMs;
  auto fine = traces.Select(all, from, to, {});
  ASSERT_TRUE(fine.ok()) << fine.status();
  ASSERT_GT(fine->size(), 3u);
  auto series = traces.Select(all, from, to, {.max_series = 3});
  EXPECT_TRUE(absl::IsResourceExhausted(series.status())) << series.status();
  auto samples = traces.Select(all, from, to, {.max_samples = 10});
  EXPECT_TRUE(absl::IsResourceExhausted(samples.status())) << samples.status();
  auto labels = traces.SelectLabels(all, from, to, 3);
  EXPECT_TRUE(absl::IsResourceExhausted(labels.status())) << labels.status();
}

// Label sets as sortable text, one line each.
std::set<std::string> LabelLines(const std::vector<promql::Labels>& sets) {
  std::set<std::string> out;
  for (const auto& labels : sets) {
    std::string line;
    for (const auto& label : labels) line += label.name + "=" + label.value + ",";
    EXPECT_TRUE(out.insert(line).second) << "listed twice: " << line;
  }
  return out;
}

TEST_F(TraceMetricsTest, ListedLabelSetsEqualTheSeriesOfSelect) {
  std::shared_ptr<const storage::Snapshot> snapshot = storage_->Pin();
  TraceMetricsSource traces(rollups_, map_, fs_, *snapshot);
  const std::vector<std::vector<promql::LabelMatcher>> selectors = {
      {{promql::MatchType::kRegexMatch, "__name__", ".+"}},
      {{promql::MatchType::kRegexMatch, "__name__", "traces_.+_total"}},
      {{promql::MatchType::kEqual, "__name__",
        "traces_service_graph_request_server_seconds_bucket"},
       {promql::MatchType::kEqual, "le", "+Inf"}},
      {{promql::MatchType::kRegexMatch, "__name__", ".+"},
       {promql::MatchType::kNotEqual, "status_code", "STATUS_CODE_ERROR"}},
      {{promql::MatchType::kRegexNoMatch, "__name__", "traces_spanmetrics.*"}},
  };
  // All of time (a listing without start), the data's whole span, and one
  // minute or less at every minute around the data: before it, while it
  // counts (spans over minutes 0 to 6), while it is active without counts
  // and after it went stale (15 minutes after minute 6).
  std::vector<std::pair<int64_t, int64_t>> windows = {
      {0, kStartMs + 400 * 24 * 60 * kMinuteMs},
      {kStartMs - 60 * kMinuteMs, kStartMs + 60 * kMinuteMs},
  };
  for (int minute = -3; minute <= 25; ++minute) {
    windows.push_back({kStartMs + minute * kMinuteMs, kStartMs + (minute + 1) * kMinuteMs});
    windows.push_back({kStartMs + minute * kMinuteMs + 1, kStartMs + minute * kMinuteMs + 2});
  }
  int non_empty = 0, empty = 0;
  for (const auto& matchers : selectors) {
    for (const auto& [from, to] : windows) {
      auto series = traces.Select(matchers, from, to, {});
      ASSERT_TRUE(series.ok()) << series.status();
      std::vector<promql::Labels> want;
      for (const auto& one : *series) want.push_back(one.labels);
      auto listed = traces.SelectLabels(matchers, from, to, 0);
      ASSERT_TRUE(listed.ok()) << listed.status();
      EXPECT_EQ(LabelLines(*listed), LabelLines(want))
          << "window [" << from - kStartMs << ", " << to - kStartMs << "] ms from the data, "
          << matchers.size() << " matchers on " << matchers[0].value;
      ++(want.empty() ? empty : non_empty);
    }
  }
  // Both kinds of answer were compared.
  EXPECT_GT(non_empty, 50);
  EXPECT_GT(empty, 20);
}

TEST_F(TraceMetricsTest, ListingsBuildNothingPerMinuteAndReadOnlyTheirMinutes) {
  std::shared_ptr<const storage::Snapshot> snapshot = storage_->Pin();
  const std::vector<promql::LabelMatcher> all = {
      {promql::MatchType::kRegexMatch, "__name__", ".+"}};
  // A listing over all of time builds no running totals.
  TraceMetricsSource traces(rollups_, map_, fs_, *snapshot);
  auto listed = traces.SelectLabels(all, 0, kStartMs + 400 * 24 * 60 * kMinuteMs, 0);
  ASSERT_TRUE(listed.ok()) << listed.status();
  ASSERT_FALSE(listed->empty());
  EXPECT_EQ(traces.work().minute_steps, 0);
  EXPECT_EQ(traces.work().minute_measures, 0);

  // Select steps through the minutes with samples or measures, not through
  // every minute of its window (here two days: 2,880 per base).
  auto series =
      traces.Select(all, kStartMs - 24 * 60 * kMinuteMs, kStartMs + 24 * 60 * kMinuteMs, {});
  ASSERT_TRUE(series.ok()) << series.status();
  std::set<std::string> bases;
  size_t samples = 0;
  for (const auto& one : *series) {
    std::string base;
    for (const auto& label : one.labels) {
      if (label.name != "__name__" && label.name != "le" && label.name != "status_code") {
        base += label.name + "=" + label.value + ",";
      }
    }
    bases.insert(base);
    samples += one.samples.size();
  }
  ASSERT_GT(bases.size(), 5u);
  // Counts in minutes 0 to 7 at most, samples until 15 minutes after the
  // last: some 24 steps per base (a step into the data, 23 with samples, one
  // to leave).
  EXPECT_GT(traces.work().minute_steps, 0);
  EXPECT_LE(traces.work().minute_steps, static_cast<int64_t>(bases.size()) * 40);
  EXPECT_GT(traces.work().minute_measures, 0);
  EXPECT_GT(samples, bases.size() * 15);

  // A listing of minutes long after the data reads no rollups (Select reads
  // every earlier minute's, for its running totals).
  RollupCache fresh;
  TraceMetricsSource later(fresh, map_, fs_, *snapshot);
  auto none = later.SelectLabels(all, kStartMs + 60 * kMinuteMs, kStartMs + 90 * kMinuteMs, 0);
  ASSERT_TRUE(none.ok()) << none.status();
  EXPECT_TRUE(none->empty());
  EXPECT_EQ(fresh.reads(), 0u);
  auto selected = later.Select(all, kStartMs + 60 * kMinuteMs, kStartMs + 90 * kMinuteMs, {});
  ASSERT_TRUE(selected.ok()) << selected.status();
  EXPECT_TRUE(selected->empty());
  EXPECT_GT(fresh.reads(), 0u);
}

// One batch whose minutes are not all in a listing's window: an operation
// counted only at its start is listed only while that count is recent.
TEST(TraceMetricsListingTest, ABatchPartlyInTheWindowListsOnlyItsRecentOperations) {
  storage::testing::ScopedTempDir tmp("trace-metrics-listing");
  PosixFileSystem fs;
  auto opened = storage::Storage::Open(fs, tmp.path() + "/data");
  ASSERT_TRUE(opened.ok()) << opened.status();
  std::unique_ptr<storage::Storage> storage = std::move(*opened);
  // One request, so one batch: "early" at minute 0, "late" at minute 40.
  auto span = [](int id, std::string_view name, int64_t start) {
    return fmt::format(R"({{"traceId":"{:032x}","spanId":"{:016x}","name":"{}","kind":2,)"
                       R"("startTimeUnixNano":"{}","endTimeUnixNano":"{}"}})",
                       id, id, name, start, start + 5 * smt::kMs);
  };
  const std::string json = smt::RequestJson(
      "frontend", {span(1, "early", kStart), span(2, "late", kStart + 40 * kMinuteMs * smt::kMs)});
  auto batch = std::make_unique<otlp::TraceBatch>();
  ASSERT_TRUE(otlp::DecodeTracesJson(json, batch.get()).ok());
  storage::WriteRequest request;
  request.rows = batch->spans.size();
  request.traces = std::move(batch);
  request.bytes = json.size();
  ASSERT_TRUE(storage->Write(std::move(request)).ok());
  std::shared_ptr<const storage::Snapshot> snapshot = storage->Pin();
  ASSERT_EQ(snapshot->size(), 1u);

  RollupCache rollups;
  ServiceMap map;
  TraceMetricsSource traces(rollups, map, fs, *snapshot);
  const std::vector<promql::LabelMatcher> calls = {
      {promql::MatchType::kEqual, "__name__", "traces_spanmetrics_calls_total"}};
  auto names_at = [&](int minute) {
    const int64_t from = kStartMs + minute * kMinuteMs, to = from + kMinuteMs;
    auto series = traces.Select(calls, from, to, {});
    EXPECT_TRUE(series.ok()) << series.status();
    std::vector<promql::Labels> want;
    if (series.ok()) {
      for (const auto& one : *series) want.push_back(one.labels);
    }
    auto listed = traces.SelectLabels(calls, from, to, 0);
    EXPECT_TRUE(listed.ok()) << listed.status();
    std::set<std::string> names;
    if (!listed.ok()) return names;
    EXPECT_EQ(LabelLines(*listed), LabelLines(want)) << "minute " << minute;
    for (const auto& labels : *listed) names.insert(promql::LabelValue(labels, "span_name"));
    return names;
  };
  for (int minute = -2; minute <= 60; ++minute) names_at(minute);
  EXPECT_EQ(names_at(5), std::set<std::string>{"early"});
  EXPECT_EQ(names_at(30), std::set<std::string>{});
  EXPECT_EQ(names_at(45), std::set<std::string>{"late"});
  storage->Shutdown(std::chrono::seconds(5));
}

}  // namespace
}  // namespace strata::api
