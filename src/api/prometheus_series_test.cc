// OTLP metrics as Prometheus series: the names of the OpenTelemetry
// specification's examples, and MetricsSeriesSource over a data directory
// holding one metric of every kind.

#include "api/prometheus_series.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <map>
#include <tuple>

#include "api/api_test_server.h"
#include "api/params.h"
#include "api/prometheus_names.h"
#include "fmt/format.h"
#include "gtest/gtest.h"
#include "io/posix_file_system.h"
#include "otlp/decode.h"
#include "storage/testing/commit_testing.h"

namespace strata::api {
namespace {

namespace promql = compat::promql;
constexpr int64_t kSecond = 1'000'000'000;

TEST(PromMetricNameTest, FollowsTheSpecification) {
  EXPECT_EQ(PromMetricName("system.filesystem.usage", "By", PromKind::kGauge),
            "system_filesystem_usage_bytes");
  EXPECT_EQ(PromMetricName("system.network.dropped", "{packets}", PromKind::kGauge),
            "system_network_dropped");
  EXPECT_EQ(PromMetricName("system.network.dropped", "packets", PromKind::kGauge),
            "system_network_dropped_packets");
  EXPECT_EQ(PromMetricName("system.memory.utilization", "1", PromKind::kGauge),
            "system_memory_utilization_ratio");
  EXPECT_EQ(PromMetricName("hits", "1", PromKind::kCounter), "hits_total");
  EXPECT_EQ(PromMetricName("http.server.request.duration", "s", PromKind::kHistogram),
            "http_server_request_duration_seconds");
  EXPECT_EQ(PromMetricName("requests.total", "{request}", PromKind::kCounter), "requests_total");
  EXPECT_EQ(PromMetricName("transfer.rate", "By/s", PromKind::kGauge),
            "transfer_rate_bytes_per_second");
  EXPECT_EQ(PromMetricName("(lambda).function.executions(#)", "", PromKind::kGauge),
            "lambda_function_executions");
  EXPECT_EQ(PromMetricName("2xx.responses", "", PromKind::kCounter), "_2xx_responses_total");
  EXPECT_EQ(PromMetricName("duration_seconds", "s", PromKind::kGauge), "duration_seconds");
}

TEST(PromLabelNameTest, FollowsTheSpecification) {
  EXPECT_EQ(PromLabelName("http.response.status_code"), "http_response_status_code");
  EXPECT_EQ(PromLabelName("2xx"), "key_2xx");
  EXPECT_EQ(PromLabelName("_private"), "key_private");
  EXPECT_EQ(PromLabelName("__reserved"), "__reserved");
  EXPECT_TRUE(IsPromLabelName("le"));
  EXPECT_FALSE(IsPromLabelName("1a"));
  EXPECT_FALSE(IsPromLabelName("a.b"));
}

// One resource with a gauge, a cumulative and a delta counter, a cumulative
// and a delta histogram, and a summary; three points each, 10 s apart.
std::string MetricsJson(int64_t t0) {
  auto t = [&](int i) { return std::to_string(t0 + i * 10 * kSecond); };
  auto numbers = [&](const char* field, std::initializer_list<int> values, const char* attrs = "") {
    std::string out;
    int i = 0;
    for (int v : values) {
      out +=
          fmt::format(R"({}{{"timeUnixNano":"{}","{}":{}{}}})", i == 0 ? "" : ",", t(i), field,
                      field[2] == 'D' ? std::to_string(v) : "\"" + std::to_string(v) + "\"", attrs);
      ++i;
    }
    return out;
  };
  auto histogram = [&](int temporality) {
    return fmt::format(
        R"({{"name":"{}","unit":"s","histogram":{{"aggregationTemporality":{},"dataPoints":[)"
        R"({{"timeUnixNano":"{}","count":"6","sum":2.5,"bucketCounts":["1","2","3"],"explicitBounds":[0.1,1]{}}},)"
        R"({{"timeUnixNano":"{}","count":"4","sum":1.5,"bucketCounts":["2","1","1"],"explicitBounds":[0.1,1]}}]}}}})",
        temporality == 2 ? "cumulative.duration" : "delta.duration", temporality, t(0),
        temporality == 2 ? fmt::format(R"(,"exemplars":[{{"timeUnixNano":"{}","asDouble":0.5,)"
                                       R"("traceId":"0102030405060708090a0b0c0d0e0f10",)"
                                       R"("spanId":"1112131415161718"}}])",
                                       t(0))
                         : "",
        t(1));
  };
  return fmt::format(
      R"({{"resourceMetrics":[{{"resource":{{"attributes":[)"
      R"({{"key":"service.name","value":{{"stringValue":"checkout"}}}},)"
      R"({{"key":"service.namespace","value":{{"stringValue":"shop"}}}},)"
      R"({{"key":"service.instance.id","value":{{"stringValue":"i-1"}}}},)"
      R"({{"key":"host.name","value":{{"stringValue":"h1"}}}}]}},)"
      R"("scopeMetrics":[{{"scope":{{"name":"t"}},"metrics":[)"
      R"({{"name":"system.memory.utilization","unit":"1","gauge":{{"dataPoints":[{}]}}}},)"
      R"({{"name":"http.server.requests","unit":"{{request}}","sum":{{"aggregationTemporality":2,"isMonotonic":true,"dataPoints":[{}]}}}},)"
      R"({{"name":"jobs.done","sum":{{"aggregationTemporality":1,"isMonotonic":true,"dataPoints":[{}]}}}},)"
      R"({},{},)"
      R"({{"name":"rpc.latency","unit":"ms","summary":{{"dataPoints":[{{"timeUnixNano":"{}","count":"3","sum":30,)"
      R"("quantileValues":[{{"quantile":0.5,"value":9}},{{"quantile":0.99,"value":20}}]}}]}}}})"
      R"(]}}]}}]}})",
      numbers("asDouble", {1, 2, 3},
              R"(,"attributes":[{"key":"state","value":{"stringValue":"used"}}])"),
      numbers("asInt", {10, 15, 40}), numbers("asInt", {5, 3, 2}), histogram(2), histogram(1),
      t(0));
}

class PrometheusSeriesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    t0_ = (SystemNowUnixNano() / kSecond - 600) * kSecond;
    data_dir_ = tmp_.path() + "/data";
    auto opened = storage::Storage::Open(fs_, data_dir_);
    ASSERT_TRUE(opened.ok()) << opened.status();
    storage_ = *std::move(opened);
    auto metrics = std::make_unique<otlp::MetricBatch>();
    const absl::Status decoded = otlp::DecodeMetricsJson(MetricsJson(t0_), metrics.get());
    ASSERT_TRUE(decoded.ok()) << decoded;
    storage::WriteRequest request;
    request.metrics = std::move(metrics);
    request.rows = 16;
    request.bytes = 4096;
    ASSERT_TRUE(storage_->Write(std::move(request)).ok());
    pool_ = test_support::OpenTestPool(data_dir_, 1, 1);
    ASSERT_NE(pool_, nullptr);
  }
  void TearDown() override {
    pool_.reset();
    if (storage_ != nullptr) storage_->Shutdown(std::chrono::seconds(5));
  }

  // Every selected series as "labels" -> "t:v t:v ...", times in seconds
  // after t0.
  std::map<std::string, std::string> Select(std::vector<promql::LabelMatcher> matchers) {
    const auto snapshot = storage_->Pin();
    const query::ViewFiles files = ViewFilesFor(*snapshot, data_dir_);
    CallOptions call;
    MetricsSeriesSource source(*pool_, files, call, &cache_);
    auto selected = source.Select(matchers, t0_ / 1'000'000 - 1000, t0_ / 1'000'000 + 100'000, {});
    EXPECT_TRUE(selected.ok()) << selected.status();
    std::map<std::string, std::string> out;
    if (!selected.ok()) return out;
    for (const auto& series : *selected) {
      std::string labels, samples;
      for (const auto& label : series.labels) {
        labels += fmt::format("{}{}={}", labels.empty() ? "" : ",", label.name, label.value);
      }
      for (const auto& sample : series.samples) {
        samples += fmt::format("{}{}:{}", samples.empty() ? "" : " ",
                               (sample.t_ms - t0_ / 1'000'000) / 1000, sample.v);
      }
      out[labels] = samples;
    }
    return out;
  }

  PosixFileSystem fs_;
  storage::testing::ScopedTempDir tmp_{"promseries"};
  std::string data_dir_;
  std::unique_ptr<storage::Storage> storage_;
  std::unique_ptr<query::QueryPool> pool_;
  // As the Api keeps them: decoded files read through a cache.
  internal::PointCache cache_{internal::PointCache::kDefaultMaxBytes};
  int64_t t0_ = 0;
};

std::string_view LabelValue(const promql::Labels& labels, std::string_view name) {
  for (const auto& label : labels) {
    if (label.name == name) return label.value;
  }
  return {};
}

promql::LabelMatcher Name(promql::MatchType type, std::string value) {
  return {type, "__name__", std::move(value)};
}

TEST_F(PrometheusSeriesTest, GaugesAndCountersCarryJobInstanceAndAttributes) {
  using enum promql::MatchType;
  auto got = Select({Name(kEqual, "system_memory_utilization_ratio")});
  EXPECT_EQ(got, (std::map<std::string, std::string>{
                     {"__name__=system_memory_utilization_ratio,instance=i-1,job=shop/"
                      "checkout,state=used",
                      "0:1 10:2 20:3"}}));
  got = Select({Name(kEqual, "http_server_requests_total")});
  EXPECT_EQ(got, (std::map<std::string, std::string>{
                     {"__name__=http_server_requests_total,instance=i-1,job=shop/checkout",
                      "0:10 10:15 20:40"}}));
  // Deltas become running totals.
  got = Select({Name(kEqual, "jobs_done_total")});
  EXPECT_EQ(got,
            (std::map<std::string, std::string>{
                {"__name__=jobs_done_total,instance=i-1,job=shop/checkout", "0:5 10:8 20:10"}}));
}

TEST_F(PrometheusSeriesTest, HistogramsAreBucketSumAndCountSeries) {
  using enum promql::MatchType;
  const std::string base = ",instance=i-1,job=shop/checkout";
  auto got = Select({Name(kRegexMatch, "cumulative_duration_seconds_.*")});
  EXPECT_EQ(got,
            (std::map<std::string, std::string>{
                {"__name__=cumulative_duration_seconds_bucket" + base + ",le=+Inf", "0:6 10:4"},
                {"__name__=cumulative_duration_seconds_bucket" + base + ",le=0.1", "0:1 10:2"},
                {"__name__=cumulative_duration_seconds_bucket" + base + ",le=1", "0:3 10:3"},
                {"__name__=cumulative_duration_seconds_count" + base, "0:6 10:4"},
                {"__name__=cumulative_duration_seconds_sum" + base, "0:2.5 10:1.5"}}));
  // A delta histogram's buckets, sum and count accumulate.
  got = Select({Name(kRegexMatch, "delta_duration_seconds_.*"), {kEqual, "le", "1"}});
  EXPECT_EQ(got, (std::map<std::string, std::string>{
                     {"__name__=delta_duration_seconds_bucket" + base + ",le=1", "0:3 10:6"}}));
  got = Select({Name(kEqual, "delta_duration_seconds_sum")});
  EXPECT_EQ(got, (std::map<std::string, std::string>{
                     {"__name__=delta_duration_seconds_sum" + base, "0:2.5 10:4"}}));
}

TEST_F(PrometheusSeriesTest, SummariesAndTargetInfo) {
  using enum promql::MatchType;
  const std::string base = ",instance=i-1,job=shop/checkout";
  auto got = Select({Name(kRegexMatch, "rpc_latency_milliseconds.*")});
  EXPECT_EQ(got, (std::map<std::string, std::string>{
                     {"__name__=rpc_latency_milliseconds" + base + ",quantile=0.5", "0:9"},
                     {"__name__=rpc_latency_milliseconds" + base + ",quantile=0.99", "0:20"},
                     {"__name__=rpc_latency_milliseconds_count" + base, "0:3"},
                     {"__name__=rpc_latency_milliseconds_sum" + base, "0:30"}}));
  got = Select({Name(kEqual, "target_info")});
  EXPECT_EQ(got, (std::map<std::string, std::string>{
                     {"__name__=target_info,host_name=h1" + base, "0:1 10:1 20:1"}}));
}

TEST_F(PrometheusSeriesTest, LabelSetsAloneAreThoseOfTheSeries) {
  using enum promql::MatchType;
  const auto snapshot = storage_->Pin();
  const query::ViewFiles files = ViewFilesFor(*snapshot, data_dir_);
  CallOptions call;
  MetricsSeriesSource source(*pool_, files, call, &cache_);
  for (const std::string regex : {".+", ".*duration.*", "target_info|rpc.*"}) {
    const std::vector<promql::LabelMatcher> matchers = {Name(kRegexMatch, regex)};
    auto series = source.Select(matchers, t0_ / 1'000'000 - 1000, t0_ / 1'000'000 + 100'000, {});
    auto labels =
        source.SelectLabels(matchers, t0_ / 1'000'000 - 1000, t0_ / 1'000'000 + 100'000, 0);
    ASSERT_TRUE(series.ok() && labels.ok());
    std::vector<promql::Labels> expected;
    for (const auto& one : *series) expected.push_back(one.labels);
    auto by_text = [](const promql::Labels& a, const promql::Labels& b) {
      return std::lexicographical_compare(
          a.begin(), a.end(), b.begin(), b.end(), [](const auto& x, const auto& y) {
            return std::tie(x.name, x.value) < std::tie(y.name, y.value);
          });
    };
    std::sort(expected.begin(), expected.end(), by_text);
    std::sort(labels->begin(), labels->end(), by_text);
    EXPECT_EQ(*labels, expected) << regex;
    EXPECT_GT(labels->size(), 3u) << regex;
  }
}

TEST_F(PrometheusSeriesTest, ExemplarsSitOnTheBucketThatHoldsThem) {
  using enum promql::MatchType;
  const auto snapshot = storage_->Pin();
  const query::ViewFiles files = ViewFilesFor(*snapshot, data_dir_);
  CallOptions call;
  MetricsSeriesSource source(*pool_, files, call, &cache_);
  const int64_t t0_ms = t0_ / 1'000'000;
  const std::vector<promql::LabelMatcher> matchers = {Name(kRegexMatch, ".*duration.*")};
  auto got = source.Exemplars(matchers, t0_ms - 1000, t0_ms + 100'000, 0);
  ASSERT_TRUE(got.ok()) << got.status();
  ASSERT_EQ(got->size(), 1u);
  EXPECT_EQ(LabelValue((*got)[0].series, "__name__"), "cumulative_duration_seconds_bucket");
  EXPECT_EQ(LabelValue((*got)[0].series, "le"), "1");
  ASSERT_EQ((*got)[0].exemplars.size(), 1u);
  EXPECT_EQ((*got)[0].exemplars[0].trace_id, "0102030405060708090a0b0c0d0e0f10");
  EXPECT_EQ((*got)[0].exemplars[0].span_id, "1112131415161718");
  EXPECT_EQ((*got)[0].exemplars[0].value, 0.5);
  // Outside the window, or with a matcher the series fails: none.
  got = source.Exemplars(matchers, t0_ms + 1, t0_ms + 100'000, 0);
  ASSERT_TRUE(got.ok());
  EXPECT_TRUE(got->empty());
  const std::vector<promql::LabelMatcher> other_le = {Name(kRegexMatch, ".*duration.*"),
                                                      {kEqual, "le", "0.1"}};
  got = source.Exemplars(other_le, t0_ms - 1000, t0_ms + 100'000, 0);
  ASSERT_TRUE(got.ok());
  EXPECT_TRUE(got->empty());
}

TEST_F(PrometheusSeriesTest, MatchersOnOtherLabelsAndBudgets) {
  using enum promql::MatchType;
  EXPECT_EQ(Select({Name(kRegexMatch, ".*_total"), {kEqual, "job", "nope"}}).size(), 0u);
  EXPECT_EQ(Select({Name(kRegexMatch, ".*_total"), {kRegexMatch, "job", "shop/.*"}}).size(), 2u);
  EXPECT_EQ(Select({Name(kRegexMatch, ".*_total"), {kNotEqual, "state", ""}}).size(), 0u);
  EXPECT_EQ(Select({Name(kRegexMatch, "system.*"), {kRegexNoMatch, "state", "idle|free"}}).size(),
            1u);

  const auto snapshot = storage_->Pin();
  const query::ViewFiles files = ViewFilesFor(*snapshot, data_dir_);
  CallOptions call;
  MetricsSeriesSource source(*pool_, files, call, &cache_);
  const std::vector<promql::LabelMatcher> all = {Name(kRegexMatch, ".+")};
  auto over = source.Select(all, t0_ / 1'000'000 - 1000, t0_ / 1'000'000 + 100'000,
                            {.max_series = 3, .max_samples = 0});
  EXPECT_EQ(over.status().code(), absl::StatusCode::kResourceExhausted) << over.status();
  over = source.Select(all, t0_ / 1'000'000 - 1000, t0_ / 1'000'000 + 100'000,
                       {.max_series = 0, .max_samples = 5});
  EXPECT_EQ(over.status().code(), absl::StatusCode::kResourceExhausted) << over.status();
  const std::vector<promql::LabelMatcher> bad = {Name(kRegexMatch, "(")};
  EXPECT_EQ(source.Select(bad, 0, 1, {}).status().code(), absl::StatusCode::kInvalidArgument);
}

// Several identities in one read (each point must reach its own identity's
// series), twice: the second read finds the identities in the memo.
TEST_F(PrometheusSeriesTest, ManyIdentitiesInOneReadKeepTheirOwnPoints) {
  using enum promql::MatchType;
  const std::string base = ",instance=i-1,job=shop/checkout";
  const std::map<std::string, std::string> want = {
      {"__name__=cumulative_duration_seconds_count" + base, "0:6 10:4"},
      {"__name__=http_server_requests_total" + base, "0:10 10:15 20:40"},
      {"__name__=jobs_done_total" + base, "0:5 10:8 20:10"},
      {"__name__=rpc_latency_milliseconds_count" + base, "0:3"},
      {"__name__=system_memory_utilization_ratio" + base + ",state=used", "0:1 10:2 20:3"}};
  const promql::LabelMatcher names =
      Name(kRegexMatch,
           "cumulative_duration_seconds_count|http_server_requests_total|jobs_done_total|"
           "rpc_latency_milliseconds_count|system_memory_utilization_ratio");
  EXPECT_EQ(Select({names}), want);
  EXPECT_EQ(Select({names}), want);
}

}  // namespace
}  // namespace strata::api
