#include "compat/promql/engine.h"

#include <bit>
#include <cmath>

#include "compat/promql/memory_source.h"
#include "compat/promql/parser.h"
#include "compat/promql/result_json.h"
#include "gtest/gtest.h"

namespace strata::compat::promql {
namespace {

// Counts Select calls, so tests can see that a range query selects once.
class CountingSource : public InMemorySeriesSource {
 public:
  absl::StatusOr<std::vector<Series>> Select(absl::Span<const LabelMatcher> matchers,
                                             int64_t min_ms, int64_t max_ms,
                                             const SelectLimits& limits) override {
    ++selects;
    limits_seen.push_back(limits);
    return InMemorySeriesSource::Select(matchers, min_ms, max_ms, limits);
  }
  int selects = 0;
  std::vector<SelectLimits> limits_seen;
};

class PromQLEngineTest : public ::testing::Test {
 protected:
  void SetUp() override {
    // Two counters sampled every 15 s for an hour: 1 and 2 per second.
    for (int job = 1; job <= 2; ++job) {
      std::vector<Sample> samples;
      for (int i = 0; i <= 240; ++i) samples.push_back(Sample{i * 15000LL, i * 15.0 * job});
      source_.Add({{"__name__", "requests_total"}, {"job", std::to_string(job)}}, samples);
    }
  }

  absl::StatusOr<QueryResult> Instant(const std::string& q, int64_t t,
                                      const EngineOptions& o = {}) {
    auto e = ParsePromQL(q);
    EXPECT_TRUE(e.ok()) << e.status();
    return EvaluateInstant(source_, **e, t, o);
  }
  absl::StatusOr<QueryResult> Range(const std::string& q, int64_t start, int64_t end, int64_t step,
                                    const EngineOptions& o = {}) {
    auto e = ParsePromQL(q);
    EXPECT_TRUE(e.ok()) << e.status();
    return EvaluateRange(source_, **e, start, end, step, o);
  }

  CountingSource source_;
};

TEST_F(PromQLEngineTest, RangeQueryOfRateSelectsOnceAndStepsInMemory) {
  auto r = Range("sum by (job) (rate(requests_total[5m]))", 600000, 3600000, 60000);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(source_.selects, 1);
  ASSERT_EQ(r->type, ValueType::kMatrix);
  ASSERT_EQ(r->matrix.size(), 2u);
  EXPECT_EQ(r->matrix[0].labels, (Labels{{"job", "1"}}));
  EXPECT_EQ(r->matrix[0].points.size(), 51u);
  for (const Point& p : r->matrix[1].points) EXPECT_NEAR(p.v, 2.0, 1e-9);
}

TEST_F(PromQLEngineTest, InstantResultsInEveryType) {
  auto scalar = Instant("1 + 1", 1000);
  ASSERT_TRUE(scalar.ok());
  EXPECT_EQ(ResultDataJson(*scalar), R"({"resultType":"scalar","result":[1,"2"]})");
  auto text = Instant("\"x\"", 1000);
  ASSERT_TRUE(text.ok());
  EXPECT_EQ(text->type, ValueType::kString);
  auto matrix = Instant("requests_total{job=\"1\"}[1m]", 60000);
  ASSERT_TRUE(matrix.ok());
  ASSERT_EQ(matrix->matrix.size(), 1u);
  EXPECT_EQ(matrix->matrix[0].points.size(), 5u);  // 0, 15, 30, 45, 60 s: both ends included
  auto vector = Instant("requests_total", 30000);
  ASSERT_TRUE(vector.ok());
  EXPECT_EQ(vector->vector.size(), 2u);
}

TEST_F(PromQLEngineTest, StalenessMarkerEndsTheSeriesBeforeTheLookback) {
  source_.Add({{"__name__", "gauge"}}, {{0, 1}, {10000, std::bit_cast<double>(kStaleNaNBits)}});
  auto before = Instant("gauge", 5000);
  auto after = Instant("gauge", 20000);
  ASSERT_TRUE(before.ok() && after.ok());
  EXPECT_EQ(before->vector.size(), 1u);
  EXPECT_TRUE(after->vector.empty());
  source_.Add({{"__name__", "lone"}}, {{0, 7}});
  EXPECT_EQ(Instant("lone", 300000)->vector.size(), 1u);  // the lookback is 5 minutes
  EXPECT_TRUE(Instant("lone", 300001)->vector.empty());
}

TEST_F(PromQLEngineTest, BudgetsEndTheQueryWithResourceExhausted) {
  EngineOptions series_budget;
  series_budget.max_series = 1;
  auto r = Instant("requests_total", 60000, series_budget);
  EXPECT_TRUE(absl::IsResourceExhausted(r.status())) << r.status();
  EngineOptions point_budget;
  point_budget.max_points = 1000;
  r = Range("rate(requests_total[1h])", 0, 3600000, 1000, point_budget);
  EXPECT_TRUE(absl::IsResourceExhausted(r.status())) << r.status();
  EXPECT_NE(r.status().message().find("too many samples"), std::string::npos) << r.status();
  EngineOptions steps;
  r = Range("requests_total", 0, 3600000, 100, steps);
  EXPECT_TRUE(absl::IsInvalidArgument(r.status())) << r.status();
}

TEST_F(PromQLEngineTest, SourcesAreGivenTheRemainingBudget) {
  EngineOptions o;
  o.max_series = 10;
  o.max_points = 100000;
  auto r = Instant("requests_total{job=\"1\"} + on(job) requests_total{job=\"1\"}", 60000, o);
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_EQ(source_.limits_seen.size(), 2u);
  EXPECT_EQ(source_.limits_seen[0].max_series, 10);
  EXPECT_EQ(source_.limits_seen[0].max_samples, 100000);
  // The first selector took one series and the samples of its lookback.
  EXPECT_EQ(source_.limits_seen[1].max_series, 9);
  EXPECT_LT(source_.limits_seen[1].max_samples, 100000);
}

TEST_F(PromQLEngineTest, DeadlineEndsTheQuery) {
  EngineOptions o;
  o.deadline = absl::Now() - absl::Seconds(1);
  auto r = Range("sum(rate(requests_total[5m]))", 0, 3600000, 1000, o);
  EXPECT_TRUE(absl::IsDeadlineExceeded(r.status())) << r.status();
  EngineOptions cancelled;
  cancelled.cancelled = [] { return true; };
  r = Range("sum(rate(requests_total[5m]))", 0, 3600000, 1000, cancelled);
  EXPECT_TRUE(absl::IsCancelled(r.status())) << r.status();
}

TEST_F(PromQLEngineTest, ExecutionErrorsAsPrometheusReportsThem) {
  auto r = Instant("requests_total + on() requests_total", 60000);
  EXPECT_TRUE(absl::IsFailedPrecondition(r.status())) << r.status();
  EXPECT_NE(r.status().message().find("many-to-many matching not allowed"), std::string::npos);
  r = Instant("label_replace(requests_total, \"job\", \"x\", \"job\", \".*\")", 60000);
  EXPECT_TRUE(absl::IsFailedPrecondition(r.status())) << r.status();
  EXPECT_NE(r.status().message().find("same labelset"), std::string::npos);
  r = Range("requests_total[5m]", 0, 60000, 1000);
  EXPECT_TRUE(absl::IsInvalidArgument(r.status())) << r.status();
  r = Range("requests_total", 0, 60000, 0);
  EXPECT_TRUE(absl::IsInvalidArgument(r.status())) << r.status();
}

TEST_F(PromQLEngineTest, AtModifierAndOffsetPinTheTime) {
  auto r = Range("requests_total{job=\"1\"} @ 60", 0, 600000, 60000);
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_EQ(r->matrix.size(), 1u);
  for (const Point& p : r->matrix[0].points) EXPECT_EQ(p.v, 60);
  auto end = Range("requests_total{job=\"1\"} @ end()", 0, 600000, 60000);
  ASSERT_TRUE(end.ok());
  EXPECT_EQ(end->matrix[0].points.front().v, 600);
  auto offset = Instant("requests_total{job=\"1\"} offset 1m", 120000);
  ASSERT_TRUE(offset.ok());
  EXPECT_EQ(offset->vector[0].v, 60);
  auto negative = Instant("requests_total{job=\"1\"} offset -1m", 120000);
  EXPECT_EQ(negative->vector[0].v, 180);
}

TEST_F(PromQLEngineTest, ExpressionsAsDeepAsTheParserAllowsEvaluate) {
  std::string chain = "requests_total";
  for (int i = 0; i < 450; ++i) chain += " + requests_total";
  auto r = Instant(chain, 60000);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->vector.size(), 2u);
  std::string nested = "requests_total";
  for (int i = 0; i < 240; ++i) nested = "abs(" + nested + ")";
  r = Range(nested, 0, 600000, 60000);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->matrix.size(), 2u);
}

}  // namespace
}  // namespace strata::compat::promql
