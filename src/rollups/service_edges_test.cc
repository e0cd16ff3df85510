// The edge resolver: the same edges whatever order and grouping the spans
// arrive in, each span counted once, virtual edges taken back when a child
// in another service arrives, and nothing resolved past the late window.
// (api_test.cc compares the answers with a DuckDB self-join.)

#include "rollups/service_edges.h"

#include <algorithm>
#include <random>

#include "gtest/gtest.h"
#include "rollups/duration_histogram.h"
#include "workload/traffic_generator.h"

namespace strata::rollups {
namespace {

constexpr uint64_t kMinute = 60'000'000'000;

// Edges by node description, so resolvers with different node ids compare.
using Described = std::map<std::tuple<std::string, std::string, int>,
                           std::tuple<int64_t, int64_t, int64_t, std::map<uint32_t, int64_t>>>;

std::string Describe(const Node& node) {
  return std::to_string(static_cast<int>(node.type)) + "|" + node.ns + "|" + node.name;
}

Described DescribeEdges(const EdgeResolver& resolver) {
  Described out;
  for (const auto& [key, m] : resolver.Edges(0, UINT64_MAX)) {
    std::map<uint32_t, int64_t> buckets(m.buckets.begin(), m.buckets.end());
    out[{Describe(resolver.nodes().at(key.source)), Describe(resolver.nodes().at(key.target)),
         static_cast<int>(key.type)}] = {m.calls, m.errors, static_cast<int64_t>(m.duration_sum),
                                         buckets};
  }
  return out;
}

// `spans` with only the rows `rows` (links kept valid).
EdgeSpans Subset(const EdgeSpans& spans, const std::vector<uint32_t>& rows);

// The spans of generated multi-service traffic (HTTP and RPC calls between
// services, database calls, messages consumed as children or through
// links), as one list; every third PRODUCER span is left out, so some
// consumers have no producer and come from their destination's node.
EdgeSpans Traffic(NodeTable* nodes, int spans) {
  workload::TrafficOptions options;
  options.seed = 5;
  options.start_time_unix_nano = 1'796'000'000'000'000'000;
  options.messaging_percent = 40;
  workload::TrafficGenerator generator(options);
  EdgeSpans all;
  for (int i = 0; i < 4; ++i) AppendEdgeSpans(*generator.Traces(spans / 4), nodes, &all);
  std::vector<uint32_t> kept;
  int producers = 0;
  for (uint32_t i = 0; i < all.spans.size(); ++i) {
    if (all.spans[i].kind == 4 && producers++ % 3 == 0) continue;
    kept.push_back(i);
  }
  return Subset(all, kept);
}

// `spans` with only the rows `rows` (links kept valid).
EdgeSpans Subset(const EdgeSpans& spans, const std::vector<uint32_t>& rows) {
  EdgeSpans out;
  for (uint32_t r : rows) {
    EdgeSpan s = spans.spans[r];
    const auto begin = static_cast<uint32_t>(out.links.size());
    out.links.insert(out.links.end(), spans.links.begin() + s.links_begin,
                     spans.links.begin() + s.links_end);
    s.links_begin = begin;
    s.links_end = static_cast<uint32_t>(out.links.size());
    out.spans.push_back(s);
  }
  return out;
}

TEST(ServiceEdgesTest, AnyOrderAndGroupingGivesTheEdgesOfOneBatch) {
  EdgeResolver whole;
  const EdgeSpans spans = Traffic(&whole.nodes(), 20'000);
  whole.Add(spans, 1);
  const Described want = DescribeEdges(whole);
  // The traffic has calls between services, to the database, messages
  // from producers to consumers and from the destination to consumers.
  int services = 0, databases = 0, messages = 0, from_destination = 0;
  const std::string destination = Describe({NodeType::kMessaging, "", "kafka orders"});
  for (const auto& [key, measures] : want) {
    services += std::get<2>(key) == static_cast<int>(EdgeType::kCall);
    databases += std::get<2>(key) == static_cast<int>(EdgeType::kDatabase);
    messages += std::get<2>(key) == static_cast<int>(EdgeType::kMessaging);
    from_destination += std::get<0>(key) == destination;
  }
  EXPECT_GT(services, 3);
  EXPECT_GT(databases, 0);
  EXPECT_GT(messages, from_destination);
  EXPECT_GT(from_destination, 0);

  for (uint32_t seed : {1u, 2u, 3u}) {
    // Shuffled into 37 parts, fed one part at a time: parents after their
    // children, clients before their servers, and the other way round.
    std::vector<uint32_t> order(spans.spans.size());
    for (uint32_t i = 0; i < order.size(); ++i) order[i] = i;
    std::mt19937 rng(seed);
    std::shuffle(order.begin(), order.end(), rng);
    EdgeResolver split;
    NodeTable& nodes = split.nodes();
    for (uint32_t i = 0; i < whole.nodes().size(); ++i) {
      const Node& n = whole.nodes().at(i);
      nodes.Intern(n.type, n.ns, n.name);  // the same ids
    }
    const size_t parts = 37;
    for (size_t p = 0; p < parts; ++p) {
      const size_t begin = order.size() * p / parts, end = order.size() * (p + 1) / parts;
      split.Add(Subset(spans, {order.begin() + begin, order.begin() + end}), 1 + p);
    }
    EXPECT_EQ(DescribeEdges(split), want) << "seed " << seed;
    // Spans seen again (a retried export, a compaction's output) count once.
    split.Add(spans, 100);
    EXPECT_EQ(DescribeEdges(split), want) << "seed " << seed;
  }
}

EdgeSpan Span(uint64_t span, uint64_t parent, uint32_t service, uint8_t kind,
              uint32_t peer = kNoNode) {
  EdgeSpan s;
  s.key = {7, 7, span};
  s.parent_span = parent;
  s.minute = 3 * kMinute;
  s.duration = 1000;
  s.service = service;
  s.kind = kind;
  s.peer = peer;
  return s;
}

TEST(ServiceEdgesTest, AVirtualEdgeIsTakenBackWhenTheCalleeArrives) {
  EdgeResolver resolver;
  const uint32_t a = resolver.nodes().Intern(NodeType::kService, "", "a");
  const uint32_t b = resolver.nodes().Intern(NodeType::kService, "", "b");
  const uint32_t peer = resolver.nodes().Intern(NodeType::kPeer, "", "b");
  resolver.Add({{Span(1, 0, a, 2), Span(2, 1, a, 3, peer)}, {}}, 1);
  auto edges = resolver.Edges(0, UINT64_MAX);
  ASSERT_EQ(edges.size(), 1u);
  EXPECT_EQ(edges.begin()->first, (EdgeKey{a, peer, EdgeType::kCall}));
  // The server span of b arrives: the call went to b, not to a virtual b.
  resolver.Add({{Span(3, 2, b, 2)}, {}}, 2);
  edges = resolver.Edges(0, UINT64_MAX);
  ASSERT_EQ(edges.size(), 1u);
  EXPECT_EQ(edges.begin()->first, (EdgeKey{a, b, EdgeType::kCall}));
  EXPECT_EQ(edges.begin()->second.calls, 1);
  EXPECT_EQ(edges.begin()->second.Quantile(500), BucketValue(DurationBucket(1000)));
  // Outside the window's minutes: nothing.
  EXPECT_TRUE(resolver.Edges(4 * kMinute, 5 * kMinute).empty());
}

TEST(ServiceEdgesTest, ConsumersLinkedToProducersAreMessagingEdges) {
  EdgeResolver resolver;
  const uint32_t p = resolver.nodes().Intern(NodeType::kService, "", "producer");
  const uint32_t c = resolver.nodes().Intern(NodeType::kService, "", "consumer");
  EdgeSpans consumer{{Span(20, 0, c, 5)}, {{7, 7, 10}}};
  consumer.spans[0].links_end = 1;
  resolver.Add(consumer, 1);  // before its producer
  resolver.Add({{Span(10, 0, p, 4)}, {}}, 2);
  const auto edges = resolver.Edges(0, UINT64_MAX);
  ASSERT_EQ(edges.size(), 1u);
  EXPECT_EQ(edges.begin()->first, (EdgeKey{p, c, EdgeType::kMessaging}));
}

TEST(ServiceEdgesTest, ConsumersComeFromTheirDestinationUntilTheirProducerArrives) {
  EdgeResolver resolver;
  const uint32_t p = resolver.nodes().Intern(NodeType::kService, "", "producer");
  const uint32_t c = resolver.nodes().Intern(NodeType::kService, "", "consumer");
  const uint32_t queue = resolver.nodes().Intern(NodeType::kMessaging, "", "kafka orders");
  // Two consumers before any producer: one a child of span 10, one linked
  // to span 11; a third whose parent is in its own service.
  EdgeSpans consumers{
      {Span(20, 10, c, 5, queue), Span(21, 0, c, 5, queue), Span(22, 12, c, 5, queue)},
      {{7, 7, 11}}};
  consumers.spans[1].links_begin = 0;
  consumers.spans[1].links_end = 1;
  resolver.Add(consumers, 1);
  auto edges = resolver.Edges(0, UINT64_MAX);
  ASSERT_EQ(edges.size(), 1u);
  EXPECT_EQ(edges.begin()->first, (EdgeKey{queue, c, EdgeType::kMessaging}));
  EXPECT_EQ(edges.begin()->second.calls, 3);
  // The producers arrive: two consumers move to the producer's edge; the
  // one whose parent is in its own service stays on the destination's.
  resolver.Add({{Span(10, 0, p, 4), Span(11, 0, p, 4), Span(12, 0, c, 1)}, {}}, 2);
  edges = resolver.Edges(0, UINT64_MAX);
  ASSERT_EQ(edges.size(), 2u);
  EXPECT_EQ(edges.at(EdgeKey{p, c, EdgeType::kMessaging}).calls, 2);
  EXPECT_EQ(edges.at(EdgeKey{queue, c, EdgeType::kMessaging}).calls, 1);
  // A consumer arriving after its producer never counts on the
  // destination's edge.
  resolver.Add({{Span(23, 10, c, 5, queue)}, {}}, 3);
  edges = resolver.Edges(0, UINT64_MAX);
  EXPECT_EQ(edges.at(EdgeKey{p, c, EdgeType::kMessaging}).calls, 3);
  EXPECT_EQ(edges.at(EdgeKey{queue, c, EdgeType::kMessaging}).calls, 1);
}

TEST(ServiceEdgesTest, ParentsPastTheLateWindowAreNotResolved) {
  EdgeResolver resolver({.late_window_nanos = 100, .max_indexed_spans = 1000});
  const uint32_t a = resolver.nodes().Intern(NodeType::kService, "", "a");
  const uint32_t b = resolver.nodes().Intern(NodeType::kService, "", "b");
  resolver.Add({{Span(2, 1, b, 2)}, {}}, 1000);  // the child, waiting
  resolver.Add({{Span(9, 0, a, 2)}, {}}, 1050);  // within the window
  resolver.Add({{Span(8, 0, a, 2)}, {}}, 2000);  // the window moves on
  EXPECT_EQ(resolver.oldest_age(), 2000u);
  resolver.Add({{Span(1, 0, a, 2)}, {}}, 2001);  // the parent, too late
  EXPECT_TRUE(resolver.Edges(0, UINT64_MAX).empty());
  // Within the window it resolves.
  resolver.Add({{Span(4, 3, b, 2)}, {}}, 2002);
  resolver.Add({{Span(3, 0, a, 2)}, {}}, 2003);
  EXPECT_EQ(resolver.Edges(0, UINT64_MAX).size(), 1u);
}

TEST(ServiceEdgesTest, TheSpanBudgetDropsTheOldestFirst) {
  EdgeResolver resolver({.late_window_nanos = 1'000'000, .max_indexed_spans = 8});
  const uint32_t a = resolver.nodes().Intern(NodeType::kService, "", "a");
  for (uint64_t i = 1; i <= 20; ++i) resolver.Add({{Span(100 + i, 0, a, 1)}, {}}, i);
  EXPECT_LE(resolver.indexed_spans(), 9u);
  EXPECT_GT(resolver.oldest_age(), 10u);
}

TEST(ServiceEdgesTest, TheNodeTableIsBounded) {
  NodeTable nodes;
  for (size_t i = 0; i < kMaxNodes; ++i) {
    ASSERT_EQ(nodes.Intern(NodeType::kPeer, "", std::to_string(i)), i);
  }
  EXPECT_FALSE(nodes.full());
  EXPECT_EQ(nodes.Intern(NodeType::kPeer, "", "one more"), kNoNode);
  EXPECT_TRUE(nodes.full());
  EXPECT_EQ(nodes.Intern(NodeType::kPeer, "", "7"), 7u);  // known nodes still resolve
}

}  // namespace
}  // namespace strata::rollups
