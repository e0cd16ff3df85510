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

inline Range EmptyRange(size_t at) { return Range{static_cast<uint32_t>(at), 0}; }

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

inline void AddEmptyResource(BatchBase* b) { b->resources.Append({}); }

inline void AddEmptyScope(BatchBase* b, uint32_t resource) {
  b->scopes.Append({.resource = resource});
}

// One entity ref: type "service", id_keys [service.name, service.namespace],
// description_keys [service.version].
inline Range AddEntityRef(BatchBase* b) {
  size_t keys = b->entity_keys.size();
  b->entity_keys.insert(b->entity_keys.end(),
                        {"service.name", "service.namespace", "service.version"});
  uint32_t row = b->entity_refs.Append({.schema_url = "https://opentelemetry.io/schemas/1.26.0",
                                        .type = "service",
                                        .id_keys = RowsSince(keys, keys + 2),
                                        .description_keys = RowsSince(keys + 2, keys + 3)});
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
  b->resources.Append(
      {.attributes = AddStringAttribute(&b->resource_attributes, "service.name", "checkout"),
       .dropped_attributes_count = 1,
       .entity_refs = refs,
       .schema_url = "res-schema"});
  AddEmptyResource(b);
  b->resources.Append({.attributes = AddStringAttribute(&b->resource_attributes, "host", "a")});
  b->scopes.Append({.resource = 2, .name = "idle"});
  Range scope_attributes =
      newer_fields ? AddStringAttribute(&b->scope_attributes, "scope.attr", "x") : Range{};
  b->scopes.Append({.resource = 0,
                    .name = "lib-a",
                    .version = "1.0",
                    .attributes = scope_attributes,
                    .dropped_attributes_count = newer_fields ? 2u : 0u,
                    .schema_url = "scope-schema"});
  AddEmptyScope(b, 0);
}

// A span with ids from `seed`, `name` and otherwise default fields; its
// attributes, events and links are empty ranges at the end of their tables.
inline SpanRow NewSpan(const TraceBatch& b, uint32_t scope, uint8_t seed, std::string_view name) {
  return SpanRow{.scope = scope,
                 .trace_id = MakeTraceId(seed),
                 .span_id = MakeSpanId(seed),
                 .name = name,
                 .attributes = EmptyRange(b.span_attributes.size()),
                 .events = EmptyRange(b.events.size()),
                 .links = EmptyRange(b.links.size())};
}

inline void AddSpan(TraceBatch* b, uint32_t scope, uint8_t seed, std::string_view name) {
  b->spans.Append(NewSpan(*b, scope, seed, name));
}

// Spans, in row order (scope column 1, 2, 1: not grouped):
//   span 0 "GET /cart" (scope 1): every field set; attributes of every kind;
//          two events, one link [+ span flags 0x301, link flags 0x101]
//   span 1 "minimal" (scope 2): ids only
//   span 2 "odd" (scope 1): kind -1, status with a message only
inline TraceBatch MakeTraceBatch(bool newer_fields) {
  TraceBatch b;
  AddResourcesAndScopes(&b, newer_fields);
  SpanRow span = NewSpan(b, 1, 0x10, "GET /cart");
  span.trace_state = "vendor=1";
  span.parent_span_id = MakeSpanId(0x70);
  span.has_parent_span_id = 1;
  span.flags = newer_fields ? 0x301 : 0;
  span.kind = 2;
  span.start_time_unix_nano = kStart;
  span.end_time_unix_nano = kEnd;
  span.attributes = AddEveryValueKind(&b, &b.span_attributes);
  span.dropped_attributes_count = 3;
  b.events.Append({.time_unix_nano = kStart + 1,
                   .name = "retry",
                   .attributes = AddStringAttribute(&b.event_attributes, "attempt", "2"),
                   .dropped_attributes_count = 6});
  b.events.Append({.attributes = EmptyRange(b.event_attributes.size())});
  span.events = Range{0, 2};
  span.dropped_events_count = 4;
  b.links.Append({.trace_id = MakeTraceId(0x50),
                  .span_id = MakeSpanId(0x60),
                  .trace_state = "link=state",
                  .attributes = AddStringAttribute(&b.link_attributes, "link.kind", "follows"),
                  .dropped_attributes_count = 7,
                  .flags = newer_fields ? 0x101u : 0u});
  span.links = Range{0, 1};
  span.dropped_links_count = 5;
  span.status_message = "boom";
  span.status_code = 2;
  b.spans.Append(span);

  AddSpan(&b, 2, 0x20, "minimal");
  span = NewSpan(b, 1, 0x30, "odd");
  span.kind = -1;
  span.status_message = "only message";
  b.spans.Append(span);
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
  auto new_log = [&](uint32_t scope, ValueRow body) {
    return LogRecordRow{
        .scope = scope, .body = body, .attributes = EmptyRange(b.log_attributes.size())};
  };
  b.logs.Append(new_log(2, {ValueType::kString, "plain", 0}));
  size_t entry = b.nested_attributes.size();
  AddKey(&b.nested_attributes, "user").AppendString("ada");
  LogRecordRow log =
      new_log(1, {ValueType::kKvList, {}, ValueColumns::Pack(RowsSince(entry, entry + 1))});
  log.time_unix_nano = kStart;
  log.observed_time_unix_nano = kEnd;
  log.severity_number = 17;
  log.severity_text = "ERROR";
  log.attributes = AddEveryValueKind(&b, &b.log_attributes);
  log.dropped_attributes_count = 2;
  log.flags = 1;
  log.trace_id = MakeTraceId(0xa0);
  log.has_trace_id = 1;
  log.span_id = MakeSpanId(0xb0);
  log.has_span_id = 1;
  log.event_name = newer_fields ? "user.login" : "";
  b.logs.Append(log);
  log = new_log(1, {});
  log.observed_time_unix_nano = 5;
  b.logs.Append(log);
  log = new_log(1, {ValueType::kBytes, "\x7f\x80", 0});
  log.span_id = MakeSpanId(0xc0);
  log.has_span_id = 1;
  b.logs.Append(log);
  return b;
}

// A metric without description, unit and metadata (an empty range at the end
// of its table), with default data fields.
inline MetricRow NewMetric(const MetricBatch& b, uint32_t scope, std::string_view name,
                           MetricType type, Range points) {
  return MetricRow{.scope = scope,
                   .name = name,
                   .metadata = EmptyRange(b.metadata_attributes.size()),
                   .type = type,
                   .points = points};
}

inline void AddMetric(MetricBatch* b, uint32_t scope, std::string_view name, MetricType type,
                      Range points) {
  b->metrics.Append(NewMetric(*b, scope, name, type, points));
}

// A data point row of type Row with the fields every point has set.
template <typename Row>
Row NewPoint(uint32_t metric, Range attributes, uint64_t start, uint64_t time, uint32_t flags,
             Range exemplars) {
  Row row;
  static_cast<PointRowBase&>(row) = {metric, attributes, start, time, flags, exemplars};
  return row;
}

inline void AddExemplar(MetricBatch* b, Range attributes, uint64_t time, NumberType type,
                        uint64_t bits, const TraceId* trace_id, const SpanId* span_id) {
  b->exemplars.Append({.filtered_attributes = attributes,
                       .time_unix_nano = time,
                       .value_type = type,
                       .value_bits = bits,
                       .trace_id = trace_id ? *trace_id : TraceId{},
                       .has_trace_id = trace_id != nullptr,
                       .span_id = span_id ? *span_id : SpanId{},
                       .has_span_id = span_id != nullptr});
}

inline Range AppendU64(std::vector<uint64_t>* column, std::initializer_list<uint64_t> values) {
  size_t begin = column->size();
  column->insert(column->end(), values);
  return RowsSince(begin, column->size());
}

// Metrics 3 to 6 of MakeMetricBatch().
inline void AddHistogramMetrics(MetricBatch* batch, bool newer_fields, const TraceId& trace) {
  MetricBatch& b = *batch;
  AddExemplar(&b, EmptyRange(b.exemplar_attributes.size()), 3, NumberType::kInt, 9, &trace,
              nullptr);
  auto h = NewPoint<HistogramPointRow>(3, EmptyRange(b.point_attributes.size()), kStart, kEnd, 0,
                                       Range{2, 1});
  h.count = 10;
  h.max = 9.5;
  h.present = kHasSum | kHasMax;
  h.bucket_counts = AppendU64(&b.bucket_counts, {1, 2, 7});
  h.explicit_bounds = Range{0, 2};
  b.histogram_points.Append(h);
  b.explicit_bounds = {0.5, 1.0};
  MetricRow metric = NewMetric(b, 1, "h", MetricType::kHistogram, Range{0, 1});
  metric.aggregation_temporality = 1;
  b.metrics.Append(metric);

  auto x = NewPoint<ExponentialPointRow>(4, EmptyRange(b.point_attributes.size()), kStart, kEnd, 0,
                                         EmptyRange(3));
  x.count = 5;
  x.min = -1.5;
  x.present = kHasMin;
  x.scale = -3;
  x.zero_count = 1;
  x.zero_threshold = newer_fields ? 1e-9 : 0.0;
  x.positive_offset = -2;
  x.positive_bucket_counts = AppendU64(&b.bucket_counts, {1, 2});
  x.negative_bucket_counts = EmptyRange(b.bucket_counts.size());
  b.exponential_points.Append(x);
  metric = NewMetric(b, 1, "e", MetricType::kExponentialHistogram, Range{0, 1});
  metric.aggregation_temporality = 2;
  b.metrics.Append(metric);

  auto q = NewPoint<SummaryPointRow>(5, EmptyRange(b.point_attributes.size()), 0, kEnd, 0,
                                     EmptyRange(3));
  q.count = 3;
  q.sum = 6.5;
  q.quantiles = Range{0, 3};
  b.summary_points.Append(q);
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
  // A number point with the value oneof set to `type` and `bits`.
  auto add_number = [&](NumberPointRow row, NumberType type, uint64_t bits) {
    row.value_type = type;
    row.value_bits = bits;
    b.number_points.Append(row);
  };

  AddExemplar(&b, AddStringAttribute(&b.exemplar_attributes, "ex", "1"), kStart,
              NumberType::kDouble, std::bit_cast<uint64_t>(2.5), &trace, &span);
  AddExemplar(&b, EmptyRange(b.exemplar_attributes.size()), 0, NumberType::kInt,
              static_cast<uint64_t>(int64_t{-3}), nullptr, nullptr);
  add_number(NewPoint<NumberPointRow>(0, AddEveryValueKind(&b, &b.point_attributes), kStart, kEnd,
                                      0, Range{0, 2}),
             NumberType::kDouble, std::bit_cast<uint64_t>(0.0));
  add_number(
      NewPoint<NumberPointRow>(0, EmptyRange(b.point_attributes.size()), 0, kEnd, 1, EmptyRange(2)),
      NumberType::kInt, 0);
  MetricRow metric = NewMetric(b, 1, "g", MetricType::kGauge, Range{0, 2});
  metric.unit = "ms";
  metric.description = "d";
  if (newer_fields) metric.metadata = AddStringAttribute(&b.metadata_attributes, "m", "v");
  b.metrics.Append(metric);

  add_number(
      NewPoint<NumberPointRow>(1, EmptyRange(b.point_attributes.size()), 1, 2, 0, EmptyRange(2)),
      NumberType::kInt, static_cast<uint64_t>(int64_t{-5}));
  metric = NewMetric(b, 1, "s", MetricType::kSum, Range{2, 1});
  metric.aggregation_temporality = 2;
  metric.is_monotonic = 1;
  b.metrics.Append(metric);

  AddMetric(&b, 2, "u", MetricType::kUnset, Range{});
  AddHistogramMetrics(&b, newer_fields, trace);
  return b;
}

}  // namespace strata::otlp::encoder_testing
