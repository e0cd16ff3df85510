#include "workload/traffic_generator.h"

#include <algorithm>
#include <map>
#include <memory>
#include <set>
#include <string_view>
#include <vector>

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
    const otlp::Range attrs =
        batch->resources.attributes[batch->scopes.resource[batch->spans.scope[i]]];
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

// The string attribute `key` of span i, or "" when it has none.
std::string_view SpanString(const otlp::TraceBatch& batch, size_t i, std::string_view key) {
  const otlp::Range attrs = batch.spans.attributes[i];
  for (uint32_t a = attrs.begin; a < attrs.begin + attrs.count; ++a) {
    if (batch.span_attributes.key[a] == key) return batch.span_attributes.value.str[a];
  }
  return "";
}

// Queues and late parents: producers and consumers in different services
// with the messaging attributes, consumers as children or linked, and
// CLIENT spans that come in a later batch, minutes after their children.
TEST(TrafficGeneratorTest, QueuesAndLateParentsWhenAsked) {
  TrafficOptions options{.seed = 9};
  options.messaging_percent = 50;
  options.late_parent_percent = 20;
  options.late_parent_delay_nanos = 120'000'000'000;
  options.trace_spacing_nanos = 2'000'000'000;
  TrafficGenerator generator(options);
  std::vector<std::unique_ptr<otlp::TraceBatch>> batches;
  for (int i = 0; i < 8; ++i) batches.push_back(generator.Traces(300));
  batches.push_back(generator.HeldBackSpans());
  EXPECT_EQ(generator.HeldBackSpans()->spans.size(), 0u);

  struct Where {
    size_t batch, row;
  };
  std::map<std::pair<otlp::TraceId, otlp::SpanId>, Where> by_id;
  uint64_t spans = 0;
  for (size_t b = 0; b < batches.size(); ++b) {
    ASSERT_TRUE(otlp::ValidateBatch(*batches[b]).ok()) << otlp::ValidateBatch(*batches[b]);
    for (size_t i = 0; i < batches[b]->spans.size(); ++i, ++spans) {
      by_id[{batches[b]->spans.trace_id[i], batches[b]->spans.span_id[i]}] = {b, i};
    }
  }
  EXPECT_EQ(generator.spans_generated(), spans);
  EXPECT_EQ(by_id.size(), spans) << "span ids repeat";
  auto service = [&](const Where& w) {
    const otlp::TraceBatch& batch = *batches[w.batch];
    const otlp::Range attrs =
        batch.resources.attributes[batch.scopes.resource[batch.spans.scope[w.row]]];
    return batch.resource_attributes.value.str[attrs.begin];
  };
  int late = 0, late_across_services = 0, child_consumers = 0, linked_consumers = 0;
  for (const auto& [id, where] : by_id) {
    const otlp::TraceBatch& batch = *batches[where.batch];
    const size_t i = where.row;
    if (batch.spans.has_parent_span_id[i]) {
      auto parent = by_id.find({id.first, batch.spans.parent_span_id[i]});
      ASSERT_NE(parent, by_id.end()) << "a parent never came";
      if (parent->second.batch > where.batch) {
        ++late;
        const otlp::TraceBatch& later = *batches[parent->second.batch];
        EXPECT_EQ(later.spans.kind[parent->second.row], 3);  // CLIENT
        late_across_services += service(parent->second) != service(where);
        // A Traces() batch brings it once its traces started at least the
        // delay after it ended (the last batch is HeldBackSpans()).
        if (parent->second.batch + 1 < batches.size()) {
          uint64_t latest = 0;
          for (uint64_t start : later.spans.start_time_unix_nano) latest = std::max(latest, start);
          EXPECT_GE(
              latest + options.trace_spacing_nanos,
              later.spans.end_time_unix_nano[parent->second.row] + options.late_parent_delay_nanos);
        }
      }
    }
    if (batch.spans.kind[i] != 5) continue;  // CONSUMER
    EXPECT_EQ(SpanString(batch, i, "messaging.system"), "kafka");
    EXPECT_EQ(SpanString(batch, i, "messaging.destination.name"), "orders");
    otlp::TraceId producer_trace = id.first;
    otlp::SpanId producer_span = batch.spans.parent_span_id[i];
    if (batch.spans.has_parent_span_id[i]) {
      ++child_consumers;
    } else {
      ++linked_consumers;
      const otlp::Range links = batch.spans.links[i];
      ASSERT_GE(links.count, 1u);  // the producer first, maybe a random link after
      producer_trace = batch.links.trace_id[links.begin];
      producer_span = batch.links.span_id[links.begin];
    }
    auto producer = by_id.find({producer_trace, producer_span});
    ASSERT_NE(producer, by_id.end());
    EXPECT_EQ(batches[producer->second.batch]->spans.kind[producer->second.row], 4);  // PRODUCER
    EXPECT_EQ(SpanString(*batches[producer->second.batch], producer->second.row,
                         "messaging.destination.name"),
              "orders");
    EXPECT_NE(service(producer->second), service(where));
  }
  EXPECT_GT(late, 10);
  EXPECT_GT(late_across_services, 10);
  EXPECT_GT(child_consumers, 10);
  EXPECT_GT(linked_consumers, 10);
  // The traffic spans minutes.
  EXPECT_GT(batches[7]->spans.start_time_unix_nano.back() -
                batches[0]->spans.start_time_unix_nano.front(),
            uint64_t{4} * 60'000'000'000);
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
