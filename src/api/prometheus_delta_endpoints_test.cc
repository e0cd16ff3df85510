// Delta sums and histograms through the Prometheus endpoints, with points
// long before the query's window. docs/prometheus.md promises that a delta
// series is the cumulative counter its deltas describe, its total counting
// from its first point ever: so each delta metric is written beside a
// cumulative twin holding the running totals (computed here), and every
// query of the delta metric must answer byte for byte as the same query of
// the twin (with the metric name dropped), with the decoded-file cache on
// and off.

#include <string>
#include <vector>

#include "api/params.h"
#include "api/prometheus_apis_testing.h"
#include "fmt/format.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "io/posix_file_system.h"
#include "otlp/decode.h"
#include "storage/testing/commit_testing.h"

namespace strata::api {
namespace {

using ::testing::HasSubstr;

constexpr char kDeltaToken[] = "prometheus-delta-token";
// One point a minute, written in kDeltaBatches batches (one file each).
constexpr int kDeltaPoints = 24;
constexpr int kDeltaBatches = 4;
constexpr int kDeltaRoutes = 3;
const char* const kDeltaRouteNames[kDeltaRoutes] = {"/a", "/b", "/c"};

// Whether route `r` has point `i`: /c only from point 16 on, so it has no
// total before the windows below.
bool DeltaHasPoint(int r, int i) { return r < 2 || i >= 16; }

// The increment of the counter of route `r` at point `i`.
int64_t DeltaIncrement(int r, int i) { return (i * 7 + r * 3) % 5 + 1; }

// The bucket counts (bounds 0.1 and 1) of the histogram's point `i`; its
// count is their sum and its sum a multiple of 0.25 (exact in a double, so
// that totals do not depend on the order they are added in).
std::vector<int64_t> DeltaBuckets(int i) { return {i % 3, i % 4 + 1, (i * 5) % 3}; }
double DeltaHistogramSum(const std::vector<int64_t>& buckets) {
  return 0.25 * static_cast<double>(buckets[0] + 2 * buckets[1] + 8 * buckets[2]);
}

// Points [6b, 6b + 6) of: the delta counter `jobs.done` by route and its
// cumulative twin `jobs.done.cumulative`; the delta histogram `wait.time`
// and its cumulative twin `wait.time.cumulative`. Point i is at t0 + i min.
std::string DeltaBatchJson(int64_t t0_ns, int b) {
  const int first = b * kDeltaPoints / kDeltaBatches;
  const int last = (b + 1) * kDeltaPoints / kDeltaBatches;
  std::string delta_sums, cumulative_sums, delta_histograms, cumulative_histograms;
  auto append = [](std::string* list, const std::string& point) {
    if (!list->empty()) *list += ",";
    *list += point;
  };
  auto time = [&](int i) { return std::to_string(t0_ns + int64_t{i} * 60 * kNanosPerSecond); };
  for (int r = 0; r < kDeltaRoutes; ++r) {
    int64_t total = 0;
    for (int i = 0; i < last; ++i) {
      if (!DeltaHasPoint(r, i)) continue;
      total += DeltaIncrement(r, i);
      if (i < first) continue;
      const std::string attributes =
          fmt::format(R"([{{"key":"route","value":{{"stringValue":"{}"}}}}])", kDeltaRouteNames[r]);
      append(&delta_sums, fmt::format(R"({{"timeUnixNano":"{}","asInt":"{}","attributes":{}}})",
                                      time(i), DeltaIncrement(r, i), attributes));
      append(&cumulative_sums,
             fmt::format(R"({{"timeUnixNano":"{}","asInt":"{}","attributes":{}}})", time(i), total,
                         attributes));
    }
  }
  std::vector<int64_t> bucket_totals(3, 0);
  double sum_total = 0;
  for (int i = 0; i < last; ++i) {
    const std::vector<int64_t> buckets = DeltaBuckets(i);
    for (size_t k = 0; k < buckets.size(); ++k) bucket_totals[k] += buckets[k];
    sum_total += DeltaHistogramSum(buckets);
    if (i < first) continue;
    auto point = [&](const std::vector<int64_t>& counts, double sum) {
      return fmt::format(
          R"({{"timeUnixNano":"{}","count":"{}","sum":{},"bucketCounts":["{}","{}","{}"],)"
          R"("explicitBounds":[0.1,1]}})",
          time(i), counts[0] + counts[1] + counts[2], sum, counts[0], counts[1], counts[2]);
    };
    append(&delta_histograms, point(buckets, DeltaHistogramSum(buckets)));
    append(&cumulative_histograms, point(bucket_totals, sum_total));
  }
  return fmt::format(
      R"({{"resourceMetrics":[{{"resource":{{"attributes":[)"
      R"({{"key":"service.name","value":{{"stringValue":"billing"}}}},)"
      R"({{"key":"service.instance.id","value":{{"stringValue":"b-1"}}}}]}},)"
      R"("scopeMetrics":[{{"scope":{{"name":"t"}},"metrics":[)"
      R"({{"name":"jobs.done","sum":{{"aggregationTemporality":1,"isMonotonic":true,)"
      R"("dataPoints":[{}]}}}},)"
      R"({{"name":"jobs.done.cumulative","sum":{{"aggregationTemporality":2,"isMonotonic":true,)"
      R"("dataPoints":[{}]}}}},)"
      R"({{"name":"wait.time","unit":"s","histogram":{{"aggregationTemporality":1,)"
      R"("dataPoints":[{}]}}}},)"
      R"({{"name":"wait.time.cumulative","unit":"s","histogram":{{"aggregationTemporality":2,)"
      R"("dataPoints":[{}]}}}})"
      R"(]}}]}}]}})",
      delta_sums, cumulative_sums, delta_histograms, cumulative_histograms);
}

class PrometheusDeltaEndpointsTest : public test_support::CachedAndUncachedApisTest {
 protected:
  void SetUp() override { WriteAndServe(kDeltaBatches, 1800, kDeltaToken, DeltaBatchJson); }

  // As the fixture's Get(), and the answer must be a success.
  std::string Get(const test_support::LoopbackApi& api, const std::string& path,
                  const std::vector<std::string>& params) const {
    const std::string body = CachedAndUncachedApisTest::Get(api, path, params);
    EXPECT_THAT(body, HasSubstr(R"("status":"success")")) << path;
    return body;
  }

  // Asks `query_template` with the delta metric `delta_name` and with its
  // cumulative twin `twin_name` in place of {}, with `params`: the twin of
  // the server without the cache, the delta metric of both servers (the
  // cached one twice: decoding, then from its cache). All answers must be
  // the same.
  void ExpectAsTheTwin(const std::string& path, const std::string& query_template,
                       const std::string& delta_name, const std::string& twin_name,
                       const std::vector<std::string>& params) {
    auto ask = [&](const test_support::LoopbackApi& api, const std::string& name) {
      std::vector<std::string> all = params;
      all.push_back("query=" + fmt::format(fmt::runtime(query_template), name));
      return Get(api, path, all);
    };
    std::string asked = path + " " + query_template;
    for (const std::string& param : params) asked += " " + param;
    const std::string want = ask(uncached_, twin_name);
    EXPECT_EQ(ask(uncached_, delta_name), want) << asked << " (uncached)";
    EXPECT_EQ(ask(cached_, delta_name), want) << asked << " (cached)";
    EXPECT_EQ(ask(cached_, delta_name), want) << asked << " (cached, warm)";
  }
};

// Queries of the counter and of the histogram, {} standing for the metric
// name; binary operators drop the name, so the delta and twin answers can
// be compared whole.
const char* const kDeltaCounterQueries[] = {
    "{}_total + 0",        "increase({}_total[2m])",
    "rate({}_total[3m])",  "sum by (route) (increase({}_total[90s]))",
    "irate({}_total[3m])",
};
const char* const kDeltaHistogramQueries[] = {
    "{}_seconds_bucket + 0",    "{}_seconds_sum + 0",
    "{}_seconds_count + 0",     "increase({}_seconds_count[2m])",
    "rate({}_seconds_sum[3m])", "histogram_quantile(0.5, rate({}_seconds_bucket[3m]))",
};

TEST_F(PrometheusDeltaEndpointsTest, RangeQueriesAfterTheFirstPointsAnswerAsTheCumulativeTwin) {
  // The window starts at minute 14: with ranges of at most 3 minutes and
  // the 5 minute lookback, points 0 to 5 are read only as totals.
  const std::vector<std::string> params = {fmt::format("start={}", t0_s_ + 14 * 60),
                                           fmt::format("end={}", t0_s_ + 23 * 60 + 30), "step=30"};
  for (const char* query : kDeltaCounterQueries) {
    ExpectAsTheTwin("query_range", query, "jobs_done", "jobs_done_cumulative", params);
  }
  for (const char* query : kDeltaHistogramQueries) {
    ExpectAsTheTwin("query_range", query, "wait_time", "wait_time_cumulative", params);
  }
}

TEST_F(PrometheusDeltaEndpointsTest, InstantValuesAreTheTotalSinceTheFirstPoint) {
  // Half a minute after points 3 (all read), 7 and 15 (points up to 2 and
  // 10 before the lookback) and 23 (route /c's first points before it too).
  for (const int minute : {3, 7, 15, 23}) {
    const int64_t at_s = t0_s_ + minute * 60 + 30;
    const std::string time = fmt::format("time={}", at_s);
    // The documented rule itself: a counter's value is the sum of every
    // increment of its series up to then.
    for (const test_support::LoopbackApi* api : {&uncached_, &cached_}) {
      const std::string answer = Get(*api, "query", {"query=jobs_done_total", time});
      for (int r = 0; r < kDeltaRoutes; ++r) {
        int64_t total = 0;
        for (int i = 0; i <= minute; ++i) total += DeltaHasPoint(r, i) ? DeltaIncrement(r, i) : 0;
        if (total == 0) continue;  // /c has no points yet
        EXPECT_THAT(answer, HasSubstr(fmt::format(R"("route":"{}"}},"value":[{},"{}"])",
                                                  kDeltaRouteNames[r], at_s, total)))
            << "minute " << minute << (api == &cached_ ? " (cached)" : " (uncached)");
      }
    }
    if (minute == 3 || minute == 15) continue;  // the twins' answers: two times suffice
    for (const char* query : kDeltaCounterQueries) {
      ExpectAsTheTwin("query", query, "jobs_done", "jobs_done_cumulative", {time});
    }
    for (const char* query : kDeltaHistogramQueries) {
      ExpectAsTheTwin("query", query, "wait_time", "wait_time_cumulative", {time});
    }
  }
}

}  // namespace
}  // namespace strata::api
