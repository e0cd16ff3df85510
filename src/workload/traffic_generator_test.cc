#include "workload/traffic_generator.h"

#include <map>
#include <set>

#include "gtest/gtest.h"
#include "otlp/decode.h"
#include "otlp/encode.h"

namespace strata::workload {
namespace {

TEST(TrafficGeneratorTest, TraceBatchesAreValidAndHoldWholeTraces) {
  TrafficGenerator generator(TrafficOptions{.seed = 7});
  auto batch = generator.Traces(1000);
  ASSERT_TRUE(otlp::ValidateBatch(*batch).ok()) << otlp::ValidateBatch(*batch);
  EXPECT_GE(batch->spans.size(), 1000u);
  EXPECT_LT(batch->spans.size(), 1000u + 16);
  EXPECT_EQ(generator.spans_generated(), batch->spans.size());

  // Every trace has exactly one root, and every parent is a span of the
  // same trace whose interval contains the child's start.
  std::map<otlp::TraceId, int> roots;
  std::map<std::pair<otlp::TraceId, otlp::SpanId>, size_t> by_id;
  for (size_t i = 0; i < batch->spans.size(); ++i) {
    by_id[{batch->spans.trace_id[i], batch->spans.span_id[i]}] = i;
    roots[batch->spans.trace_id[i]] += batch->spans.has_parent_span_id[i] ? 0 : 1;
  }
  EXPECT_EQ(by_id.size(), batch->spans.size()) << "span ids repeat";
  for (const auto& [trace, count] : roots) EXPECT_EQ(count, 1);
  std::set<std::string_view> services;
  size_t errors = 0;
  for (size_t i = 0; i < batch->spans.size(); ++i) {
    EXPECT_LE(batch->spans.start_time_unix_nano[i], batch->spans.end_time_unix_nano[i]);
    errors += batch->spans.status_code[i] == 2;
    const otlp::Range attrs = batch->resources.attributes[batch->scopes.resource[batch->spans.scope[i]]];
    services.insert(batch->resource_attributes.value.str[attrs.begin]);
    if (!batch->spans.has_parent_span_id[i]) continue;
    auto parent = by_id.find({batch->spans.trace_id[i], batch->spans.parent_span_id[i]});
    ASSERT_NE(parent, by_id.end()) << "span " << i << " has a dangling parent";
    EXPECT_LE(batch->spans.start_time_unix_nano[parent->second],
              batch->spans.start_time_unix_nano[i]);
  }
  EXPECT_EQ(services.size(), 5u);
  EXPECT_GT(errors, 0u);
  EXPECT_LT(errors, batch->spans.size() / 5);
}

TEST(TrafficGeneratorTest, SameSeedSameBytes) {
  TrafficGenerator a(TrafficOptions{.seed = 3});
  TrafficGenerator b(TrafficOptions{.seed = 3});
  TrafficGenerator c(TrafficOptions{.seed = 4});
  const std::string wire_a = otlp::EncodeTracesProto(*a.Traces(200));
  const std::string wire_b = otlp::EncodeTracesProto(*b.Traces(200));
  const std::string wire_c = otlp::EncodeTracesProto(*c.Traces(200));
  EXPECT_EQ(wire_a, wire_b);
  EXPECT_NE(wire_a, wire_c);
}

TEST(TrafficGeneratorTest, LogsCarryIdsOfGeneratedSpans) {
  TrafficGenerator generator(TrafficOptions{.seed = 11});
  auto traces = generator.Traces(500);
  std::set<std::pair<otlp::TraceId, otlp::SpanId>> spans;
  for (size_t i = 0; i < traces->spans.size(); ++i) {
    spans.insert({traces->spans.trace_id[i], traces->spans.span_id[i]});
  }
  auto logs = generator.Logs(400);
  ASSERT_TRUE(otlp::ValidateBatch(*logs).ok()) << otlp::ValidateBatch(*logs);
  ASSERT_EQ(logs->logs.size(), 400u);
  size_t correlated = 0;
  for (size_t i = 0; i < logs->logs.size(); ++i) {
    if (!logs->logs.has_trace_id[i]) continue;
    ++correlated;
    EXPECT_TRUE(spans.count({logs->logs.trace_id[i], logs->logs.span_id[i]}));
  }
  EXPECT_GT(correlated, 200u);
  EXPECT_LT(correlated, 400u);
}

TEST(TrafficGeneratorTest, MetricsCoverEveryTypeAndSurviveTheProtobufRoundTrip) {
  TrafficGenerator generator(TrafficOptions{.seed = 5});
  auto metrics = generator.Metrics(300);
  ASSERT_TRUE(otlp::ValidateBatch(*metrics).ok()) << otlp::ValidateBatch(*metrics);
  EXPECT_GE(metrics->point_count(), 300u);
  std::set<otlp::MetricType> types(metrics->metrics.type.begin(), metrics->metrics.type.end());
  EXPECT_EQ(types.size(), 5u);
  EXPECT_GT(metrics->exemplars.size(), 0u);
  // What the generator builds, strata's encoder writes and decoder reads back.
  const std::string wire = otlp::EncodeMetricsProto(*metrics);
  otlp::MetricBatch decoded;
  ASSERT_TRUE(otlp::DecodeMetricsProto(wire, &decoded).ok());
  EXPECT_EQ(otlp::EncodeMetricsProto(decoded), wire);
}

}  // namespace
}  // namespace strata::workload
