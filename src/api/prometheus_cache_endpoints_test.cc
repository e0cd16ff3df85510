// The Prometheus endpoints with the decoded-file cache (`strata serve
// --promql-cache-mb`, the default bound) and without it (bound 0, every
// point read through DuckDB): the same request gets byte-identical JSON
// from both, cold and warm, over several batches of counters, delta sums,
// gauges, histograms (whose bounds change, one stale with no sum) and
// summaries, for matchers of every kind and several windows.

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
using ::testing::Not;

constexpr char kToken[] = "prometheus-cache-token";
constexpr int kCacheBatches = 4;

// Batch `b`: for services cart and checkout (namespace shop), a counter
// and a delta counter by route, a gauge by queue (q2 only in even batches,
// q1 stale in batch 2), a histogram (a third bound from batch 3 on; in
// batch 1 a stale point of route /gone with neither sum nor buckets) and a
// summary. Times step by 10 s per batch, checkout 1 s after cart. The
// resources change (so does target_info): checkout's host.name alternates
// between h0 and h1, cart has a k8s.pod.name from batch 2 on.
std::string CacheBatchJson(int64_t t0, int b) {
  std::string resources;
  for (const char* service : {"cart", "checkout"}) {
    const bool checkout = std::string_view(service) == "checkout";
    const std::string t =
        std::to_string(t0 + (b * 10 + (checkout ? 1 : 0)) * int64_t{kNanosPerSecond});
    const std::string resource =
        checkout ? fmt::format(R"([{{"key":"service.name","value":{{"stringValue":"checkout"}}}},)"
                               R"({{"key":"service.namespace","value":{{"stringValue":"shop"}}}},)"
                               R"({{"key":"host.name","value":{{"stringValue":"h{}"}}}}])",
                               b % 2)
        : b >= 2 ? R"([{"key":"service.name","value":{"stringValue":"cart"}},)"
                   R"({"key":"k8s.pod.name","value":{"stringValue":"cart-1"}}])"
                 : R"([{"key":"service.name","value":{"stringValue":"cart"}}])";
    auto attr = [](const char* key, const char* value) {
      return fmt::format(R"([{{"key":"{}","value":{{"stringValue":"{}"}}}}])", key, value);
    };
    std::string gauges = fmt::format(
        R"({{"timeUnixNano":"{}",{},"attributes":{}}})", t,
        b == 2 ? R"("flags":1)" : fmt::format(R"("asDouble":{})", 1.5 * b), attr("queue", "q1"));
    if (b % 2 == 0) {
      gauges += fmt::format(R"(,{{"timeUnixNano":"{}","asInt":"{}","attributes":{}}})", t, b + 7,
                            attr("queue", "q2"));
    }
    const std::string bounds = b >= 3 ? "[0.1,0.5,1]" : "[0.1,1]";
    const std::string counts =
        b >= 3 ? fmt::format(R"(["{}","1","1","2"])", b) : fmt::format(R"(["{}","1","2"])", b);
    std::string histograms = fmt::format(
        R"({{"timeUnixNano":"{}","count":"{}","sum":{},"bucketCounts":{},"explicitBounds":{},)"
        R"("attributes":{}}})",
        t, b + 4, b * 0.25, counts, bounds, attr("route", "/a"));
    if (b == 1) {
      histograms += fmt::format(R"(,{{"timeUnixNano":"{}","count":"0","flags":1,"attributes":{}}})",
                                t, attr("route", "/gone"));
    }
    resources += fmt::format(
        R"({}{{"resource":{{"attributes":{}}},"scopeMetrics":[{{"scope":{{"name":"t"}},"metrics":[)"
        R"({{"name":"requests","sum":{{"aggregationTemporality":2,"isMonotonic":true,"dataPoints":[)"
        R"({{"timeUnixNano":"{}","asInt":"{}","attributes":{}}},)"
        R"({{"timeUnixNano":"{}","asInt":"{}","attributes":{}}}]}}}},)"
        R"({{"name":"errors","sum":{{"aggregationTemporality":1,"isMonotonic":true,"dataPoints":[)"
        R"({{"timeUnixNano":"{}","asInt":"{}","attributes":{}}}]}}}},)"
        R"({{"name":"queue.depth","description":"depth {}","gauge":{{"dataPoints":[{}]}}}},)"
        R"({{"name":"latency","unit":"s","histogram":{{"aggregationTemporality":2,)"
        R"("dataPoints":[{}]}}}},)"
        R"({{"name":"rpc.duration","unit":"ms","summary":{{"dataPoints":[{{"timeUnixNano":"{}",)"
        R"("count":"{}","sum":{},"quantileValues":[{{"quantile":0.5,"value":{}}},)"
        R"({{"quantile":0.99,"value":{}}}]}}]}}}})"
        R"(]}}]}})",
        resources.empty() ? "" : ",", resource, t, 10 * b, attr("route", "/a"), t, 3 * b,
        attr("route", "/b"), t, b % 3, attr("route", "/a"), b, gauges, histograms, t, b + 2,
        b * 3.5, b + 0.5, b * 2 + 1.0);
  }
  return fmt::format(R"({{"resourceMetrics":[{}]}})", resources);
}

class PrometheusCacheEndpointsTest : public test_support::CachedAndUncachedApisTest {
 protected:
  void SetUp() override { WriteAndServe(kCacheBatches, 600, kToken, CacheBatchJson); }

  // Asks both servers, the cached one twice (decoding, then from its
  // cache); the uncached answer.
  std::string ExpectSameAnswers(const std::string& path, const std::vector<std::string>& params) {
    const std::string want = Get(uncached_, path, params);
    EXPECT_THAT(want, HasSubstr(R"("status":"success")")) << path;
    std::string asked = path;
    for (const std::string& param : params) asked += " " + param;
    EXPECT_EQ(Get(cached_, path, params), want) << asked;
    EXPECT_EQ(Get(cached_, path, params), want) << asked << " (warm)";
    return want;
  }

  // start= and end= of a window from `from_s` to `to_s` seconds after t0
  // (none for all of time).
  std::vector<std::vector<std::string>> Windows() const {
    auto window = [&](int64_t from_s, int64_t to_s) {
      return std::vector<std::string>{fmt::format("start={}", t0_s_ + from_s),
                                      fmt::format("end={}", t0_s_ + to_s)};
    };
    return {{}, window(-10, 15), window(25, 100)};
  }
};

TEST_F(PrometheusCacheEndpointsTest, SeriesLabelsAndValuesAnswerAsWithoutTheCache) {
  const std::vector<std::string> selectors = {
      R"({__name__=~".+"})",
      R"(requests_total{route!="/a"})",
      R"m({__name__=~"latency_seconds_(bucket|sum)", job="cart"})m",
      R"({__name__!~"requests.*|latency.*|target_info", job=~"shop/.*"})",
      R"(queue_depth{queue="q2"})",
      R"({__name__=~"rpc.*", quantile!="0.5"})",
      R"({__name__=~"errors.*|latency_seconds_sum", route=~"/a|/gone"})",
  };
  // Label names whose values are asked for, one per selector in turn.
  const char* const names[] = {"__name__", "le", "quantile", "route", "job"};
  size_t asked = 0;
  for (const auto& window : Windows()) {
    for (const std::string& selector : selectors) {
      std::vector<std::string> params = window;
      params.push_back("match[]=" + selector);
      ExpectSameAnswers("series", params);
      ExpectSameAnswers("labels", params);
      ExpectSameAnswers(fmt::format("label/{}/values", names[asked++ % std::size(names)]), params);
    }
    ExpectSameAnswers("labels", window);
    ExpectSameAnswers("label/__name__/values", window);
  }
  // The data hold what the selectors ask about: the third bound of batch
  // 3, the summary's quantiles, the stale histogram's series.
  EXPECT_THAT(ExpectSameAnswers("label/le/values", {}), HasSubstr(R"("0.5")"));
  EXPECT_THAT(ExpectSameAnswers("label/le/values", Windows()[1]), Not(HasSubstr(R"("0.5")")));
  EXPECT_THAT(ExpectSameAnswers("label/quantile/values", {}), HasSubstr(R"("0.99")"));
  // target_info's series carry the resources' other attributes.
  EXPECT_THAT(ExpectSameAnswers("label/host_name/values", {}), HasSubstr(R"("h1")"));
  EXPECT_THAT(
      ExpectSameAnswers("series", {"match[]=target_info", "start=" + std::to_string(t0_s_ + 25)}),
      HasSubstr(R"("k8s_pod_name":"cart-1")"));
  const std::string gone = ExpectSameAnswers("series", {R"(match[]={route="/gone"})"});
  EXPECT_THAT(gone, HasSubstr("latency_seconds_count"));
  EXPECT_THAT(gone, Not(HasSubstr("latency_seconds_sum")));  // it has none
}

TEST_F(PrometheusCacheEndpointsTest, QueriesAndMetadataAnswerAsWithoutTheCache) {
  const std::string start = std::to_string(t0_s_ - 10), end = std::to_string(t0_s_ + 60);
  for (const char* query :
       {"requests_total", R"(rate(requests_total{route=~"/a|/b"}[30s]))",
        "increase(errors_total[1m])", "queue_depth",
        R"(histogram_quantile(0.5, sum by (le) (latency_seconds_bucket)))",
        R"(rpc_duration_milliseconds{quantile="0.99"})", "latency_seconds_sum", "target_info",
        R"(count by (job, host_name) (target_info{k8s_pod_name=""}))"}) {
    ExpectSameAnswers("query_range",
                      {std::string("query=") + query, "start=" + start, "end=" + end, "step=5"});
    ExpectSameAnswers("query",
                      {std::string("query=") + query, "time=" + std::to_string(t0_s_ + 35)});
  }
  EXPECT_THAT(ExpectSameAnswers("metadata", {}), HasSubstr("rpc_duration_milliseconds"));
}

}  // namespace
}  // namespace strata::api
