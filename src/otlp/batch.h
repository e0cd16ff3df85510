#pragma once

// Columnar in-memory batches: what the OTLP decoders produce and the OTLP
// encoders, the storage writer and the API read. One column per OTLP field;
// every table is a struct of equally long vectors ("rows"). Child rows are
// referenced by a Range into another table of the same batch.
//
// Strings and bytes are std::string_view. They point either into the decoded
// request (protobuf decoding keeps them as views) or into the batch's Arena
// (JSON strings with escapes, base64 bytes). The batch therefore must not
// outlive the request buffer unless the buffer is handed to it with
// Retain(); the decoders document which they need.
//
// Invariants (checked by ValidateBatch() in batch_validate.cc):
//  1. Every column of a table has the same length.
//  2. Every Range lies inside the table it refers to.
//  3. Rows that a Range covers belong to exactly one parent row and are
//     contiguous, in the order they appeared in the request.
//  4. The resource and scope indexes of a row name existing rows.
//
// Message presence is not retained where OTLP gives it no meaning: an absent
// Resource, InstrumentationScope, Span.Status or KeyValue.value is the same
// as an empty one. Presence is retained where it carries meaning: optional
// histogram sum/min/max, the NumberDataPoint and Exemplar value oneofs, and
// optional ids (a span's parent, a log's trace and span ids, an exemplar's
// ids).
//
// Thread-safety: single owner; a finished batch may be read concurrently.

#include <array>
#include <bit>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "common/arena.h"

namespace strata::otlp {

using TraceId = std::array<uint8_t, 16>;
using SpanId = std::array<uint8_t, 8>;

// A contiguous run of rows in a child table.
struct Range {
  uint32_t begin = 0;
  uint32_t count = 0;
  uint32_t end() const { return begin + count; }
  bool operator==(const Range&) const = default;
};

// The AnyValue kinds, numbered as in the AnyValue oneof.
enum class ValueType : uint8_t {
  kEmpty = 0,
  kString = 1,
  kBool = 2,
  kInt = 3,
  kDouble = 4,
  kArray = 5,
  kKvList = 6,
  kBytes = 7,
};

// Typed AnyValues, one row each. `str` holds kString and kBytes payloads.
// `bits` holds kBool (0 or 1), kInt (two's complement), kDouble (IEEE-754
// bits) and, for kArray and kKvList, the packed child Range (begin << 32 |
// count) into Batch::nested_values or Batch::nested_attributes.
struct ValueColumns {
  std::vector<ValueType> type;
  std::vector<std::string_view> str;
  std::vector<uint64_t> bits;

  size_t size() const { return type.size(); }
  void Reserve(size_t n) {
    type.reserve(n);
    str.reserve(n);
    bits.reserve(n);
  }
  void Append(ValueType t, std::string_view s, uint64_t b) {
    type.push_back(t);
    str.push_back(s);
    bits.push_back(b);
  }
  void AppendEmpty() { Append(ValueType::kEmpty, {}, 0); }
  void AppendString(std::string_view s) { Append(ValueType::kString, s, 0); }
  void AppendBytes(std::string_view s) { Append(ValueType::kBytes, s, 0); }
  void AppendBool(bool v) { Append(ValueType::kBool, {}, v ? 1 : 0); }
  void AppendInt(int64_t v) { Append(ValueType::kInt, {}, static_cast<uint64_t>(v)); }
  void AppendDouble(double v) { Append(ValueType::kDouble, {}, std::bit_cast<uint64_t>(v)); }
  void AppendArray(Range r) { Append(ValueType::kArray, {}, Pack(r)); }
  void AppendKvList(Range r) { Append(ValueType::kKvList, {}, Pack(r)); }

  bool bool_at(size_t i) const { return bits[i] != 0; }
  int64_t int_at(size_t i) const { return static_cast<int64_t>(bits[i]); }
  double double_at(size_t i) const { return std::bit_cast<double>(bits[i]); }
  Range children_at(size_t i) const {
    return Range{static_cast<uint32_t>(bits[i] >> 32), static_cast<uint32_t>(bits[i])};
  }
  void SetChildren(size_t i, Range r) { bits[i] = Pack(r); }

  static uint64_t Pack(Range r) { return (uint64_t{r.begin} << 32) | r.count; }
};

// Key/value attributes, one row per pair.
struct AttributeColumns {
  std::vector<std::string_view> key;
  ValueColumns value;

  size_t size() const { return key.size(); }
  void Reserve(size_t n) {
    key.reserve(n);
    value.Reserve(n);
  }
};

// Resource.entity_refs (OTLP 1.6+, development status).
struct EntityRefColumns {
  std::vector<std::string_view> schema_url;
  std::vector<std::string_view> type;
  std::vector<Range> id_keys;           // into Batch::entity_keys
  std::vector<Range> description_keys;  // into Batch::entity_keys

  size_t size() const { return type.size(); }
};

// One row per Resource{Spans,Logs,Metrics}.
struct ResourceColumns {
  std::vector<Range> attributes;  // into Batch::resource_attributes
  std::vector<uint32_t> dropped_attributes_count;
  std::vector<Range> entity_refs;         // into Batch::entity_refs
  std::vector<std::string_view> schema_url;  // Resource{Spans,Logs,Metrics}.schema_url

  size_t size() const { return attributes.size(); }
};

// One row per Scope{Spans,Logs,Metrics}.
struct ScopeColumns {
  std::vector<uint32_t> resource;  // row in Batch::resources
  std::vector<std::string_view> name;
  std::vector<std::string_view> version;
  std::vector<Range> attributes;  // into Batch::scope_attributes
  std::vector<uint32_t> dropped_attributes_count;
  std::vector<std::string_view> schema_url;  // Scope{Spans,Logs,Metrics}.schema_url

  size_t size() const { return name.size(); }
};

// What every signal's batch shares: resources, scopes, their attributes,
// nested AnyValue children, and ownership of the bytes views point into.
struct BatchBase {
  ResourceColumns resources;
  AttributeColumns resource_attributes;
  EntityRefColumns entity_refs;
  std::vector<std::string_view> entity_keys;
  ScopeColumns scopes;
  AttributeColumns scope_attributes;

  // Children of kArray values (elements) and kKvList values (entries), from
  // any attribute table of this batch, including these two themselves.
  ValueColumns nested_values;
  AttributeColumns nested_attributes;

  Arena arena;
  // Buffers that views may point into, kept alive with the batch.
  std::vector<std::shared_ptr<const std::string>> retained;

  void Retain(std::shared_ptr<const std::string> buffer) { retained.push_back(std::move(buffer)); }

  BatchBase() = default;
  BatchBase(BatchBase&&) noexcept = default;
  BatchBase& operator=(BatchBase&&) noexcept = default;
  BatchBase(const BatchBase&) = delete;
  BatchBase& operator=(const BatchBase&) = delete;
};

// ---------------------------------------------------------------- traces

struct SpanColumns {
  std::vector<uint32_t> scope;  // row in Batch::scopes
  std::vector<TraceId> trace_id;
  std::vector<SpanId> span_id;
  std::vector<std::string_view> trace_state;
  std::vector<SpanId> parent_span_id;       // all zero when absent
  std::vector<uint8_t> has_parent_span_id;  // 1 when the request carried 8 bytes
  std::vector<uint32_t> flags;
  std::vector<std::string_view> name;
  std::vector<int32_t> kind;  // Span.SpanKind value as sent (may be outside the enum)
  std::vector<uint64_t> start_time_unix_nano;
  std::vector<uint64_t> end_time_unix_nano;
  std::vector<Range> attributes;  // into TraceBatch::span_attributes
  std::vector<uint32_t> dropped_attributes_count;
  std::vector<Range> events;  // into TraceBatch::events
  std::vector<uint32_t> dropped_events_count;
  std::vector<Range> links;  // into TraceBatch::links
  std::vector<uint32_t> dropped_links_count;
  std::vector<std::string_view> status_message;
  std::vector<int32_t> status_code;  // Status.StatusCode value as sent

  size_t size() const { return name.size(); }
};

struct EventColumns {
  std::vector<uint64_t> time_unix_nano;
  std::vector<std::string_view> name;
  std::vector<Range> attributes;  // into TraceBatch::event_attributes
  std::vector<uint32_t> dropped_attributes_count;

  size_t size() const { return name.size(); }
};

struct LinkColumns {
  std::vector<TraceId> trace_id;
  std::vector<SpanId> span_id;
  std::vector<std::string_view> trace_state;
  std::vector<Range> attributes;  // into TraceBatch::link_attributes
  std::vector<uint32_t> dropped_attributes_count;
  std::vector<uint32_t> flags;

  size_t size() const { return trace_id.size(); }
};

struct TraceBatch : BatchBase {
  SpanColumns spans;
  AttributeColumns span_attributes;
  EventColumns events;
  AttributeColumns event_attributes;
  LinkColumns links;
  AttributeColumns link_attributes;
};

// ------------------------------------------------------------------ logs

struct LogRecordColumns {
  std::vector<uint32_t> scope;  // row in Batch::scopes
  std::vector<uint64_t> time_unix_nano;
  std::vector<uint64_t> observed_time_unix_nano;
  std::vector<int32_t> severity_number;  // SeverityNumber value as sent
  std::vector<std::string_view> severity_text;
  ValueColumns body;  // one row per log record; kEmpty when absent
  std::vector<Range> attributes;  // into LogBatch::log_attributes
  std::vector<uint32_t> dropped_attributes_count;
  std::vector<uint32_t> flags;
  std::vector<TraceId> trace_id;  // all zero when absent
  std::vector<uint8_t> has_trace_id;
  std::vector<SpanId> span_id;  // all zero when absent
  std::vector<uint8_t> has_span_id;
  std::vector<std::string_view> event_name;

  size_t size() const { return time_unix_nano.size(); }
};

struct LogBatch : BatchBase {
  LogRecordColumns logs;
  AttributeColumns log_attributes;
};

// --------------------------------------------------------------- metrics

// Which member of the Metric.data oneof is set.
enum class MetricType : uint8_t {
  kUnset = 0,
  kGauge = 5,
  kSum = 7,
  kHistogram = 9,
  kExponentialHistogram = 10,
  kSummary = 11,
};

// Which member of a NumberDataPoint or Exemplar value oneof is set.
enum class NumberType : uint8_t { kNone = 0, kDouble = 1, kInt = 2 };

struct MetricColumns {
  std::vector<uint32_t> scope;  // row in Batch::scopes
  std::vector<std::string_view> name;
  std::vector<std::string_view> description;
  std::vector<std::string_view> unit;
  std::vector<Range> metadata;  // into MetricBatch::metadata_attributes
  std::vector<MetricType> type;
  std::vector<int32_t> aggregation_temporality;  // Sum, Histogram, ExponentialHistogram
  std::vector<uint8_t> is_monotonic;             // Sum
  // Data points, in the table of `type`: number_points for gauge and sum,
  // histogram_points, exponential_points or summary_points.
  std::vector<Range> points;

  size_t size() const { return name.size(); }
};

// Fields every data point type has.
struct PointColumnsBase {
  std::vector<uint32_t> metric;  // row in MetricBatch::metrics
  std::vector<Range> attributes;  // into MetricBatch::point_attributes
  std::vector<uint64_t> start_time_unix_nano;
  std::vector<uint64_t> time_unix_nano;
  std::vector<uint32_t> flags;
  std::vector<Range> exemplars;  // into MetricBatch::exemplars

  size_t size() const { return metric.size(); }
};

struct NumberPointColumns : PointColumnsBase {
  std::vector<NumberType> value_type;
  std::vector<uint64_t> value_bits;  // double bits or int64, per value_type

  double double_at(size_t i) const { return std::bit_cast<double>(value_bits[i]); }
  int64_t int_at(size_t i) const { return static_cast<int64_t>(value_bits[i]); }
};

// Presence bits of optional fields.
enum OptionalField : uint8_t { kHasSum = 1, kHasMin = 2, kHasMax = 4 };

struct HistogramPointColumns : PointColumnsBase {
  std::vector<uint64_t> count;
  std::vector<double> sum;
  std::vector<double> min;
  std::vector<double> max;
  std::vector<uint8_t> present;  // OptionalField bits
  std::vector<Range> bucket_counts;    // into MetricBatch::bucket_counts
  std::vector<Range> explicit_bounds;  // into MetricBatch::explicit_bounds
};

struct ExponentialPointColumns : PointColumnsBase {
  std::vector<uint64_t> count;
  std::vector<double> sum;
  std::vector<double> min;
  std::vector<double> max;
  std::vector<uint8_t> present;  // OptionalField bits
  std::vector<int32_t> scale;
  std::vector<uint64_t> zero_count;
  std::vector<double> zero_threshold;
  std::vector<int32_t> positive_offset;
  std::vector<Range> positive_bucket_counts;  // into MetricBatch::bucket_counts
  std::vector<int32_t> negative_offset;
  std::vector<Range> negative_bucket_counts;  // into MetricBatch::bucket_counts
};

struct SummaryPointColumns : PointColumnsBase {
  std::vector<uint64_t> count;
  std::vector<double> sum;
  std::vector<Range> quantiles;  // into MetricBatch::quantiles
};

struct QuantileColumns {
  std::vector<double> quantile;
  std::vector<double> value;

  size_t size() const { return quantile.size(); }
};

struct ExemplarColumns {
  std::vector<Range> filtered_attributes;  // into MetricBatch::exemplar_attributes
  std::vector<uint64_t> time_unix_nano;
  std::vector<NumberType> value_type;
  std::vector<uint64_t> value_bits;
  std::vector<TraceId> trace_id;  // all zero when absent
  std::vector<uint8_t> has_trace_id;
  std::vector<SpanId> span_id;  // all zero when absent
  std::vector<uint8_t> has_span_id;

  size_t size() const { return time_unix_nano.size(); }
};

struct MetricBatch : BatchBase {
  MetricColumns metrics;
  AttributeColumns metadata_attributes;
  NumberPointColumns number_points;
  HistogramPointColumns histogram_points;
  ExponentialPointColumns exponential_points;
  SummaryPointColumns summary_points;
  AttributeColumns point_attributes;
  std::vector<uint64_t> bucket_counts;
  std::vector<double> explicit_bounds;
  QuantileColumns quantiles;
  ExemplarColumns exemplars;
  AttributeColumns exemplar_attributes;

  // Data points of every type.
  size_t point_count() const {
    return number_points.size() + histogram_points.size() + exponential_points.size() +
           summary_points.size();
  }
};

}  // namespace strata::otlp
