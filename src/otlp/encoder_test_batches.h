#pragma once

// Test-only: hand-built batches shared by encoder_test.cc and
// encoder_roundtrip_test.cc. Together they cover every field of every
// signal, including the fields newer than the 0.38 protos (when asked for),
// all five metric types, exemplars, every AnyValue kind with nested arrays
// and kvlists, empty resources and scopes, and rows not grouped by parent.
// String views point at string literals, so the batches own no bytes.

#include <bit>
#include <cstdint>
#include <initializer_list>
#include <string>
#include <string_view>
#include <vector>

#include "otlp/batch.h"

namespace strata::otlp::encoder_testing {

inline constexpr uint64_t kStart = 1700000000123456789;  // above 2^53: must survive as a string
inline constexpr uint64_t kEnd = 1700000000987654321;

inline TraceId MakeTraceId(uint8_t seed) {
  TraceId id;
  for (size_t i = 0; i < id.size(); ++i) id[i] = static_cast<uint8_t>(seed + i);
  return id;
}

inline SpanId MakeSpanId(uint8_t seed) {
  SpanId id;
  for (size_t i = 0; i < id.size(); ++i) id[i] = static_cast<uint8_t>(seed + i);
  return id;
}

inline std::string IdBytes(const auto& id) { return std::string(id.begin(), id.end()); }

// Appends a key to `table`; the caller appends the value to the result.
inline ValueColumns& AddKey(AttributeColumns* table, std::string_view key) {
  table->key.push_back(key);
  return table->value;
}

inline Range RowsSince(size_t begin, size_t end) {
  return Range{static_cast<uint32_t>(begin), static_cast<uint32_t>(end - begin)};
}

inline Range AddStringAttribute(AttributeColumns* table, std::string_view key,
                                std::string_view value) {
  size_t begin = table->size();
  AddKey(table, key).AppendString(value);
  return RowsSince(begin, table->size());
}

// Appends one attribute of every AnyValue kind, including default values of
// every scalar kind and nested arrays and kvlists:
//   str="hello" empty_str="" true=true false=false int=-42 zero_int=0
//   double=3.25 zero_double=0.0 bytes=00 01 ff empty=<kEmpty>
//   array=["a", 7, [true], <kEmpty>] kvlist={inner: 1.5, deep: {x: "y"}}
//   empty_array=[] empty_kvlist={}
inline constexpr int kEveryValueKindCount = 14;

inline Range AddEveryValueKind(BatchBase* b, AttributeColumns* table) {
  // Children first, so every Range is known when its parent row is added.
  ValueColumns& nested = b->nested_values;
  size_t inner = nested.size();
  nested.AppendBool(true);
  size_t elements = nested.size();
  nested.AppendString("a");
  nested.AppendInt(7);
  nested.AppendArray(RowsSince(inner, inner + 1));
  nested.AppendEmpty();
  Range array = RowsSince(elements, nested.size());
  size_t deep = b->nested_attributes.size();
  AddKey(&b->nested_attributes, "x").AppendString("y");
  size_t entries = b->nested_attributes.size();
  AddKey(&b->nested_attributes, "inner").AppendDouble(1.5);
  AddKey(&b->nested_attributes, "deep").AppendKvList(RowsSince(deep, deep + 1));
  Range kvlist = RowsSince(entries, b->nested_attributes.size());

  size_t begin = table->size();
  AddKey(table, "str").AppendString("hello");
  AddKey(table, "empty_str").AppendString("");
  AddKey(table, "true").AppendBool(true);
  AddKey(table, "false").AppendBool(false);
  AddKey(table, "int").AppendInt(-42);
  AddKey(table, "zero_int").AppendInt(0);
  AddKey(table, "double").AppendDouble(3.25);
  AddKey(table, "zero_double").AppendDouble(0.0);
  AddKey(table, "bytes").AppendBytes(std::string_view("\x00\x01\xff", 3));
  AddKey(table, "empty").AppendEmpty();
  AddKey(table, "array").AppendArray(array);
  AddKey(table, "kvlist").AppendKvList(kvlist);
  AddKey(table, "empty_array").AppendArray(Range{static_cast<uint32_t>(nested.size()), 0});
  AddKey(table, "empty_kvlist")
      .AppendKvList(Range{static_cast<uint32_t>(b->nested_attributes.size()), 0});
  return RowsSince(begin, table->size());
}

inline void AddResource(BatchBase* b, Range attributes, uint32_t dropped, Range entity_refs,
                        std::string_view schema_url) {
  b->resources.attributes.push_back(attributes);
  b->resources.dropped_attributes_count.push_back(dropped);
  b->resources.entity_refs.push_back(entity_refs);
  b->resources.schema_url.push_back(schema_url);
}

inline void AddEmptyResource(BatchBase* b) { AddResource(b, {}, 0, {}, ""); }

inline void AddScope(BatchBase* b, uint32_t resource, std::string_view name,
                     std::string_view version, Range attributes, uint32_t dropped,
                     std::string_view schema_url) {
  b->scopes.resource.push_back(resource);
  b->scopes.name.push_back(name);
  b->scopes.version.push_back(version);
  b->scopes.attributes.push_back(attributes);
  b->scopes.dropped_attributes_count.push_back(dropped);
  b->scopes.schema_url.push_back(schema_url);
}

inline void AddEmptyScope(BatchBase* b, uint32_t resource) {
  AddScope(b, resource, "", "", {}, 0, "");
}

// One entity ref: type "service", id_keys [service.name, service.namespace],
// description_keys [service.version].
inline Range AddEntityRef(BatchBase* b) {
  size_t keys = b->entity_keys.size();
  b->entity_keys.insert(b->entity_keys.end(),
                        {"service.name", "service.namespace", "service.version"});
  EntityRefColumns& e = b->entity_refs;
  size_t row = e.size();
  e.schema_url.push_back("https://opentelemetry.io/schemas/1.26.0");
  e.type.push_back("service");
  e.id_keys.push_back(RowsSince(keys, keys + 2));
  e.description_keys.push_back(RowsSince(keys + 2, keys + 3));
  return RowsSince(row, row + 1);
}

// Resources and scopes shared by every signal's test batch. With newer
// fields, it uses scope attributes and entity refs, which 0.38 lacks.
//   resource 0: service.name=checkout, dropped 1, schema "res-schema"
//               [+ one entity ref]
//   resource 1: empty, no scopes
//   resource 2: host=a, one scope without items
//   scope 0: resource 2, name "idle", no items
//   scope 1: resource 0, "lib-a" "1.0", schema "scope-schema"
//            [+ attribute scope.attr="x", dropped 2]
//   scope 2: resource 0, empty
// The rows are deliberately not grouped by parent.
inline void AddResourcesAndScopes(BatchBase* b, bool newer_fields) {
  Range refs = newer_fields ? AddEntityRef(b) : Range{};
  AddResource(b, AddStringAttribute(&b->resource_attributes, "service.name", "checkout"), 1, refs,
              "res-schema");
  AddEmptyResource(b);
  AddResource(b, AddStringAttribute(&b->resource_attributes, "host", "a"), 0, {}, "");
  AddScope(b, 2, "idle", "", {}, 0, "");
  Range scope_attributes =
      newer_fields ? AddStringAttribute(&b->scope_attributes, "scope.attr", "x") : Range{};
  AddScope(b, 0, "lib-a", "1.0", scope_attributes, newer_fields ? 2 : 0, "scope-schema");
  AddEmptyScope(b, 0);
}

inline void AddSpan(TraceBatch* b, uint32_t scope, uint8_t seed, std::string_view name) {
  SpanColumns& s = b->spans;
  s.scope.push_back(scope);
  s.trace_id.push_back(MakeTraceId(seed));
  s.span_id.push_back(MakeSpanId(seed));
  s.trace_state.push_back("");
  s.parent_span_id.push_back(SpanId{});
  s.has_parent_span_id.push_back(0);
  s.flags.push_back(0);
  s.name.push_back(name);
  s.kind.push_back(0);
  s.start_time_unix_nano.push_back(0);
  s.end_time_unix_nano.push_back(0);
  s.attributes.push_back(Range{static_cast<uint32_t>(b->span_attributes.size()), 0});
  s.dropped_attributes_count.push_back(0);
  s.events.push_back(Range{static_cast<uint32_t>(b->events.size()), 0});
  s.dropped_events_count.push_back(0);
  s.links.push_back(Range{static_cast<uint32_t>(b->links.size()), 0});
  s.dropped_links_count.push_back(0);
  s.status_message.push_back("");
  s.status_code.push_back(0);
}

inline void AddEvent(TraceBatch* b, uint64_t time, std::string_view name, Range attributes,
                     uint32_t dropped) {
  b->events.time_unix_nano.push_back(time);
  b->events.name.push_back(name);
  b->events.attributes.push_back(attributes);
  b->events.dropped_attributes_count.push_back(dropped);
}

// Spans, in row order (scope column 1, 2, 1: not grouped):
//   span 0 "GET /cart" (scope 1): every field set; attributes of every kind;
//          two events, one link [+ span flags 0x301, link flags 0x101]
//   span 1 "minimal" (scope 2): ids only
//   span 2 "odd" (scope 1): kind -1, status with a message only
inline TraceBatch MakeTraceBatch(bool newer_fields) {
  TraceBatch b;
  AddResourcesAndScopes(&b, newer_fields);
  AddSpan(&b, 1, 0x10, "GET /cart");
  SpanColumns& s = b.spans;
  s.trace_state[0] = "vendor=1";
  s.parent_span_id[0] = MakeSpanId(0x70);
  s.has_parent_span_id[0] = 1;
  s.flags[0] = newer_fields ? 0x301 : 0;
  s.kind[0] = 2;
  s.start_time_unix_nano[0] = kStart;
  s.end_time_unix_nano[0] = kEnd;
  s.attributes[0] = AddEveryValueKind(&b, &b.span_attributes);
  s.dropped_attributes_count[0] = 3;
  AddEvent(&b, kStart + 1, "retry", AddStringAttribute(&b.event_attributes, "attempt", "2"), 6);
  AddEvent(&b, 0, "", Range{static_cast<uint32_t>(b.event_attributes.size()), 0}, 0);
  s.events[0] = Range{0, 2};
  s.dropped_events_count[0] = 4;
  b.links.trace_id.push_back(MakeTraceId(0x50));
  b.links.span_id.push_back(MakeSpanId(0x60));
  b.links.trace_state.push_back("link=state");
  b.links.attributes.push_back(AddStringAttribute(&b.link_attributes, "link.kind", "follows"));
  b.links.dropped_attributes_count.push_back(7);
  b.links.flags.push_back(newer_fields ? 0x101 : 0);
  s.links[0] = Range{0, 1};
  s.dropped_links_count[0] = 5;
  s.status_message[0] = "boom";
  s.status_code[0] = 2;

  AddSpan(&b, 2, 0x20, "minimal");
  AddSpan(&b, 1, 0x30, "odd");
  b.spans.kind[2] = -1;
  b.spans.status_message[2] = "only message";
  return b;
}

// Log records, in row order (scope column 2, 1, 1, 1):
//   log 0 (scope 2): body "plain"
//   log 1 (scope 1): every field set; body kvlist; attributes of every kind;
//         trace and span ids [+ event_name "user.login"]
//   log 2 (scope 1): kEmpty body, no ids, only observed time
//   log 3 (scope 1): bytes body, span id without trace id
inline LogBatch MakeLogBatch(bool newer_fields) {
  LogBatch b;
  AddResourcesAndScopes(&b, newer_fields);
  LogRecordColumns& l = b.logs;
  auto add = [&](uint32_t scope) {
    l.scope.push_back(scope);
    l.time_unix_nano.push_back(0);
    l.observed_time_unix_nano.push_back(0);
    l.severity_number.push_back(0);
    l.severity_text.push_back("");
    l.attributes.push_back(Range{static_cast<uint32_t>(b.log_attributes.size()), 0});
    l.dropped_attributes_count.push_back(0);
    l.flags.push_back(0);
    l.trace_id.push_back(TraceId{});
    l.has_trace_id.push_back(0);
    l.span_id.push_back(SpanId{});
    l.has_span_id.push_back(0);
    l.event_name.push_back("");
  };
  add(2);
  l.body.AppendString("plain");
  add(1);
  size_t entry = b.nested_attributes.size();
  AddKey(&b.nested_attributes, "user").AppendString("ada");
  l.body.AppendKvList(RowsSince(entry, entry + 1));
  l.time_unix_nano[1] = kStart;
  l.observed_time_unix_nano[1] = kEnd;
  l.severity_number[1] = 17;
  l.severity_text[1] = "ERROR";
  l.attributes[1] = AddEveryValueKind(&b, &b.log_attributes);
  l.dropped_attributes_count[1] = 2;
  l.flags[1] = 1;
  l.trace_id[1] = MakeTraceId(0xa0);
  l.has_trace_id[1] = 1;
  l.span_id[1] = MakeSpanId(0xb0);
  l.has_span_id[1] = 1;
  l.event_name[1] = newer_fields ? "user.login" : "";
  add(1);
  l.body.AppendEmpty();
  l.observed_time_unix_nano[2] = 5;
  add(1);
  l.body.AppendBytes("\x7f\x80");
  l.span_id[3] = MakeSpanId(0xc0);
  l.has_span_id[3] = 1;
  return b;
}

inline void AddMetric(MetricBatch* b, uint32_t scope, std::string_view name, MetricType type,
                      Range points) {
  MetricColumns& m = b->metrics;
  m.scope.push_back(scope);
  m.name.push_back(name);
  m.description.push_back("");
  m.unit.push_back("");
  m.metadata.push_back(Range{static_cast<uint32_t>(b->metadata_attributes.size()), 0});
  m.type.push_back(type);
  m.aggregation_temporality.push_back(0);
  m.is_monotonic.push_back(0);
  m.points.push_back(points);
}

inline void AddPointBase(PointColumnsBase* p, uint32_t metric, Range attributes, uint64_t start,
                         uint64_t time, uint32_t flags, Range exemplars) {
  p->metric.push_back(metric);
  p->attributes.push_back(attributes);
  p->start_time_unix_nano.push_back(start);
  p->time_unix_nano.push_back(time);
  p->flags.push_back(flags);
  p->exemplars.push_back(exemplars);
}

inline void AddExemplar(MetricBatch* b, Range attributes, uint64_t time, NumberType type,
                        uint64_t bits, const TraceId* trace_id, const SpanId* span_id) {
  ExemplarColumns& e = b->exemplars;
  e.filtered_attributes.push_back(attributes);
  e.time_unix_nano.push_back(time);
  e.value_type.push_back(type);
  e.value_bits.push_back(bits);
  e.trace_id.push_back(trace_id ? *trace_id : TraceId{});
  e.has_trace_id.push_back(trace_id ? 1 : 0);
  e.span_id.push_back(span_id ? *span_id : SpanId{});
  e.has_span_id.push_back(span_id ? 1 : 0);
}

inline Range EmptyRange(size_t at) { return Range{static_cast<uint32_t>(at), 0}; }

inline Range AppendU64(std::vector<uint64_t>* column, std::initializer_list<uint64_t> values) {
  size_t begin = column->size();
  column->insert(column->end(), values);
  return RowsSince(begin, column->size());
}

// Metrics 3 to 6 of MakeMetricBatch().
inline void AddHistogramMetrics(MetricBatch* batch, bool newer_fields, const TraceId& trace) {
  MetricBatch& b = *batch;
  HistogramPointColumns& h = b.histogram_points;
  AddExemplar(&b, EmptyRange(b.exemplar_attributes.size()), 3, NumberType::kInt, 9, &trace,
              nullptr);
  AddPointBase(&h, 3, EmptyRange(b.point_attributes.size()), kStart, kEnd, 0, Range{2, 1});
  h.count.push_back(10);
  h.sum.push_back(0.0);
  h.min.push_back(0.0);
  h.max.push_back(9.5);
  h.present.push_back(kHasSum | kHasMax);
  h.bucket_counts.push_back(AppendU64(&b.bucket_counts, {1, 2, 7}));
  h.explicit_bounds.push_back(Range{0, 2});
  b.explicit_bounds = {0.5, 1.0};
  AddMetric(&b, 1, "h", MetricType::kHistogram, Range{0, 1});
  b.metrics.aggregation_temporality[3] = 1;

  ExponentialPointColumns& x = b.exponential_points;
  AddPointBase(&x, 4, EmptyRange(b.point_attributes.size()), kStart, kEnd, 0, EmptyRange(3));
  x.count.push_back(5);
  x.sum.push_back(0.0);
  x.min.push_back(-1.5);
  x.max.push_back(0.0);
  x.present.push_back(kHasMin);
  x.scale.push_back(-3);
  x.zero_count.push_back(1);
  x.zero_threshold.push_back(newer_fields ? 1e-9 : 0.0);
  x.positive_offset.push_back(-2);
  x.positive_bucket_counts.push_back(AppendU64(&b.bucket_counts, {1, 2}));
  x.negative_offset.push_back(0);
  x.negative_bucket_counts.push_back(EmptyRange(b.bucket_counts.size()));
  AddMetric(&b, 1, "e", MetricType::kExponentialHistogram, Range{0, 1});
  b.metrics.aggregation_temporality[4] = 2;

  SummaryPointColumns& q = b.summary_points;
  AddPointBase(&q, 5, EmptyRange(b.point_attributes.size()), 0, kEnd, 0, EmptyRange(3));
  q.count.push_back(3);
  q.sum.push_back(6.5);
  q.quantiles.push_back(Range{0, 3});
  b.quantiles.quantile = {0.0, 0.5, 1.0};
  b.quantiles.value = {1.0, 2.0, 3.0};
  AddMetric(&b, 1, "q", MetricType::kSummary, Range{0, 1});

  AddMetric(&b, 1, "empty", MetricType::kGauge, Range{3, 0});
}

// Metrics, in row order (scope column 1, 1, 2, 1, 1, 1, 1):
//   0 gauge "g": unit "ms", description "d"; points: as_double 0.0 with
//     attributes of every kind and exemplars (double with ids, int without),
//     as_int 0 with flags 1 [+ metadata m=v]
//   1 sum "s": monotonic, cumulative; one point as_int -5
//   2 unset "u" (scope 2): no data
//   3 histogram "h": delta; count 10, sum 0.0 present, max 9.5, no min,
//     buckets 1 2 7, bounds 0.5 1.0, one exemplar (int 9, trace id only)
//   4 exponential "e": cumulative; count 5, scale -3, zero count 1,
//     positive offset -2 counts 1 2, no negative, min -1.5
//     [+ zero_threshold 1e-9]
//   5 summary "q": count 3, sum 6.5, quantiles (0, 1) (0.5, 2) (1, 3)
//   6 gauge "empty": no points
inline MetricBatch MakeMetricBatch(bool newer_fields) {
  MetricBatch b;
  AddResourcesAndScopes(&b, newer_fields);
  TraceId trace = MakeTraceId(0xd0);
  SpanId span = MakeSpanId(0xe0);
  NumberPointColumns& n = b.number_points;

  AddExemplar(&b, AddStringAttribute(&b.exemplar_attributes, "ex", "1"), kStart,
              NumberType::kDouble, std::bit_cast<uint64_t>(2.5), &trace, &span);
  AddExemplar(&b, EmptyRange(b.exemplar_attributes.size()), 0, NumberType::kInt,
              static_cast<uint64_t>(int64_t{-3}), nullptr, nullptr);
  AddPointBase(&n, 0, AddEveryValueKind(&b, &b.point_attributes), kStart, kEnd, 0, Range{0, 2});
  n.value_type.push_back(NumberType::kDouble);
  n.value_bits.push_back(std::bit_cast<uint64_t>(0.0));
  AddPointBase(&n, 0, EmptyRange(b.point_attributes.size()), 0, kEnd, 1, EmptyRange(2));
  n.value_type.push_back(NumberType::kInt);
  n.value_bits.push_back(0);
  AddMetric(&b, 1, "g", MetricType::kGauge, Range{0, 2});
  b.metrics.unit[0] = "ms";
  b.metrics.description[0] = "d";
  if (newer_fields) b.metrics.metadata[0] = AddStringAttribute(&b.metadata_attributes, "m", "v");

  AddPointBase(&n, 1, EmptyRange(b.point_attributes.size()), 1, 2, 0, EmptyRange(2));
  n.value_type.push_back(NumberType::kInt);
  n.value_bits.push_back(static_cast<uint64_t>(int64_t{-5}));
  AddMetric(&b, 1, "s", MetricType::kSum, Range{2, 1});
  b.metrics.aggregation_temporality[1] = 2;
  b.metrics.is_monotonic[1] = 1;

  AddMetric(&b, 2, "u", MetricType::kUnset, Range{});
  AddHistogramMetrics(&b, newer_fields, trace);
  return b;
}

}  // namespace strata::otlp::encoder_testing
