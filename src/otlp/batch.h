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
// Rows: every table that is filled a whole row at a time has a plain row
// struct next to it, XRow for XColumns, with one member per column under the
// column's name. XColumns::Append(row) pushes it onto every column and
// returns its index, so code that builds rows (the decoders, the storage
// reader, tests) cannot forget a column or put them out of step. Append is
// forced inline: it runs once per decoded row, and the decoders' throughput
// depends on it costing no call.
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
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/base/attributes.h"
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

// One AnyValue: one row of ValueColumns.
struct ValueRow {
  ValueType type = ValueType::kEmpty;
  std::string_view str;
  uint64_t bits = 0;
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
  ABSL_ATTRIBUTE_ALWAYS_INLINE void Append(const ValueRow& row) {
    Append(row.type, row.str, row.bits);
  }
  // Resize adds rows that Set fills later, in any order: for children whose
  // count is known before they are decoded.
  void Resize(size_t n) {
    type.resize(n);
    str.resize(n);
    bits.resize(n);
  }
  void Set(size_t i, const ValueRow& row) {
    type[i] = row.type;
    str[i] = row.str;
    bits[i] = row.bits;
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

// The index of the row an Append just pushed, which it returns.
template <typename Column>
uint32_t LastRow(const Column& column) {
  return static_cast<uint32_t>(column.size() - 1);
}

// Shrinks every column to its first `n` rows: a decoder that rejects a row
// after appending it (and its children) takes them back this way.
template <typename... Columns>
void TruncateColumns(size_t n, Columns&... columns) {
  (columns.resize(n), ...);
}

// Makes room in every column for `n` rows.
template <typename... Columns>
void ReserveColumns(size_t n, Columns&... columns) {
  (columns.reserve(n), ...);
}

struct AttributeRow {
  std::string_view key;
  ValueRow value;
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
  ABSL_ATTRIBUTE_ALWAYS_INLINE void Append(const AttributeRow& row) {
    key.push_back(row.key);
    value.Append(row.value);
  }
  void Resize(size_t n) {
    key.resize(n);
    value.Resize(n);
  }
  void Set(size_t i, const AttributeRow& row) {
    key[i] = row.key;
    value.Set(i, row.value);
  }
};

struct EntityRefRow {
  std::string_view schema_url;
  std::string_view type;
  Range id_keys;
  Range description_keys;
};

// Resource.entity_refs (OTLP 1.6+, development status).
struct EntityRefColumns {
  std::vector<std::string_view> schema_url;
  std::vector<std::string_view> type;
  std::vector<Range> id_keys;           // into Batch::entity_keys
  std::vector<Range> description_keys;  // into Batch::entity_keys

  size_t size() const { return type.size(); }
  ABSL_ATTRIBUTE_ALWAYS_INLINE uint32_t Append(const EntityRefRow& row) {
    schema_url.push_back(row.schema_url);
    type.push_back(row.type);
    id_keys.push_back(row.id_keys);
    description_keys.push_back(row.description_keys);
    return LastRow(type);
  }
};

struct ResourceRow {
  Range attributes;
  uint32_t dropped_attributes_count = 0;
  Range entity_refs;
  std::string_view schema_url;
};

// One row per Resource{Spans,Logs,Metrics}.
struct ResourceColumns {
  std::vector<Range> attributes;  // into Batch::resource_attributes
  std::vector<uint32_t> dropped_attributes_count;
  std::vector<Range> entity_refs;            // into Batch::entity_refs
  std::vector<std::string_view> schema_url;  // Resource{Spans,Logs,Metrics}.schema_url

  size_t size() const { return attributes.size(); }
  ABSL_ATTRIBUTE_ALWAYS_INLINE uint32_t Append(const ResourceRow& row) {
    attributes.push_back(row.attributes);
    dropped_attributes_count.push_back(row.dropped_attributes_count);
    entity_refs.push_back(row.entity_refs);
    schema_url.push_back(row.schema_url);
    return LastRow(attributes);
  }
};

struct ScopeRow {
  uint32_t resource = 0;
  std::string_view name;
  std::string_view version;
  Range attributes;
  uint32_t dropped_attributes_count = 0;
  std::string_view schema_url;
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
  ABSL_ATTRIBUTE_ALWAYS_INLINE uint32_t Append(const ScopeRow& row) {
    resource.push_back(row.resource);
    name.push_back(row.name);
    version.push_back(row.version);
    attributes.push_back(row.attributes);
    dropped_attributes_count.push_back(row.dropped_attributes_count);
    schema_url.push_back(row.schema_url);
    return LastRow(name);
  }
};

// Why a decoder left a well-formed but semantically invalid row out of a
// batch (docs/otlp.md, "Rejected rows", lists the rules). The numbers name
// the reasons in RowRejections::by_reason and are not stored anywhere.
enum class RowRejectReason : uint8_t {
  kTraceId = 0,           // span trace_id missing, not 16 bytes, or all zero
  kSpanId = 1,            // span span_id missing, not 8 bytes, or all zero
  kParentSpanId = 2,      // span parent_span_id neither empty nor 8 bytes
  kLinkId = 3,            // a link's trace_id or span_id missing or of the wrong length
  kHistogramBuckets = 4,  // bucket_counts neither empty nor explicit_bounds + 1 long
  kLokiStreamLabels = 5,  // a Loki push stream's label set unreadable or over the label limit
  kLokiEntry = 6,         // a Loki push entry over the line or metadata limit, or a bad time
};
inline constexpr size_t kRowRejectReasonCount = 7;

// The rows the decoders rejected while decoding into a batch. `rows` counts
// spans, log records or data points, as OTLP's partial_success does;
// by_reason counts the same rows per reason.
struct RowRejections {
  uint64_t rows = 0;
  std::array<uint64_t, kRowRejectReasonCount> by_reason{};
  // The first rejection's reason, in words, with the row it was about.
  std::string first_message;

  bool empty() const { return rows == 0; }
  // Records `count` rejected rows. `describe` builds the message and runs
  // only for the first rejection.
  template <typename Describe>
  void Add(RowRejectReason reason, uint64_t count, Describe&& describe) {
    if (empty()) first_message = describe();
    rows += count;
    by_reason[static_cast<size_t>(reason)] += count;
  }
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

  // Rows the decoders left out (see RowRejections); not rows of the batch.
  RowRejections rejected;

  Arena arena;
  // Buffers that views may point into, kept alive with the batch.
  std::vector<std::shared_ptr<const std::string>> retained;

  void Retain(std::shared_ptr<const std::string> buffer) { retained.push_back(std::move(buffer)); }

  // Heap bytes the shared tables hold (column capacities, the arena's
  // blocks, retained buffers in full even if another owner shares them).
  // Costs O(columns), not O(rows). The signal batches' RetainedBytes() add
  // their own tables and the batch object; batch_memory.cc.
  size_t RetainedBytes() const;

  BatchBase() = default;
  BatchBase(BatchBase&&) noexcept = default;
  BatchBase& operator=(BatchBase&&) noexcept = default;
  BatchBase(const BatchBase&) = delete;
  BatchBase& operator=(const BatchBase&) = delete;
};

// ---------------------------------------------------------------- traces

struct SpanRow {
  uint32_t scope = 0;
  TraceId trace_id{};
  SpanId span_id{};
  std::string_view trace_state;
  SpanId parent_span_id{};
  uint8_t has_parent_span_id = 0;
  uint32_t flags = 0;
  std::string_view name;
  int32_t kind = 0;
  uint64_t start_time_unix_nano = 0;
  uint64_t end_time_unix_nano = 0;
  Range attributes;
  uint32_t dropped_attributes_count = 0;
  Range events;
  uint32_t dropped_events_count = 0;
  Range links;
  uint32_t dropped_links_count = 0;
  std::string_view status_message;
  int32_t status_code = 0;
};

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
  void Reserve(size_t n) {
    ReserveColumns(n, scope, trace_id, span_id, trace_state, parent_span_id, has_parent_span_id,
                   flags, name, kind, start_time_unix_nano, end_time_unix_nano, attributes,
                   dropped_attributes_count, events, dropped_events_count, links,
                   dropped_links_count, status_message, status_code);
  }
  ABSL_ATTRIBUTE_ALWAYS_INLINE uint32_t Append(const SpanRow& row) {
    scope.push_back(row.scope);
    trace_id.push_back(row.trace_id);
    span_id.push_back(row.span_id);
    trace_state.push_back(row.trace_state);
    parent_span_id.push_back(row.parent_span_id);
    has_parent_span_id.push_back(row.has_parent_span_id);
    flags.push_back(row.flags);
    name.push_back(row.name);
    kind.push_back(row.kind);
    start_time_unix_nano.push_back(row.start_time_unix_nano);
    end_time_unix_nano.push_back(row.end_time_unix_nano);
    attributes.push_back(row.attributes);
    dropped_attributes_count.push_back(row.dropped_attributes_count);
    events.push_back(row.events);
    dropped_events_count.push_back(row.dropped_events_count);
    links.push_back(row.links);
    dropped_links_count.push_back(row.dropped_links_count);
    status_message.push_back(row.status_message);
    status_code.push_back(row.status_code);
    return LastRow(name);
  }
};

struct EventRow {
  uint64_t time_unix_nano = 0;
  std::string_view name;
  Range attributes;
  uint32_t dropped_attributes_count = 0;
};

struct EventColumns {
  std::vector<uint64_t> time_unix_nano;
  std::vector<std::string_view> name;
  std::vector<Range> attributes;  // into TraceBatch::event_attributes
  std::vector<uint32_t> dropped_attributes_count;

  size_t size() const { return name.size(); }
  ABSL_ATTRIBUTE_ALWAYS_INLINE uint32_t Append(const EventRow& row) {
    time_unix_nano.push_back(row.time_unix_nano);
    name.push_back(row.name);
    attributes.push_back(row.attributes);
    dropped_attributes_count.push_back(row.dropped_attributes_count);
    return LastRow(name);
  }
  void Truncate(size_t n) {
    TruncateColumns(n, time_unix_nano, name, attributes, dropped_attributes_count);
  }
};

struct LinkRow {
  TraceId trace_id{};
  SpanId span_id{};
  std::string_view trace_state;
  Range attributes;
  uint32_t dropped_attributes_count = 0;
  uint32_t flags = 0;
};

struct LinkColumns {
  std::vector<TraceId> trace_id;
  std::vector<SpanId> span_id;
  std::vector<std::string_view> trace_state;
  std::vector<Range> attributes;  // into TraceBatch::link_attributes
  std::vector<uint32_t> dropped_attributes_count;
  std::vector<uint32_t> flags;

  size_t size() const { return trace_id.size(); }
  ABSL_ATTRIBUTE_ALWAYS_INLINE uint32_t Append(const LinkRow& row) {
    trace_id.push_back(row.trace_id);
    span_id.push_back(row.span_id);
    trace_state.push_back(row.trace_state);
    attributes.push_back(row.attributes);
    dropped_attributes_count.push_back(row.dropped_attributes_count);
    flags.push_back(row.flags);
    return LastRow(trace_id);
  }
  void Truncate(size_t n) {
    TruncateColumns(n, trace_id, span_id, trace_state, attributes, dropped_attributes_count, flags);
  }
};

struct TraceBatch : BatchBase {
  SpanColumns spans;
  AttributeColumns span_attributes;
  EventColumns events;
  AttributeColumns event_attributes;
  LinkColumns links;
  AttributeColumns link_attributes;

  // The heap bytes this batch holds, the batch object included (see
  // BatchBase::RetainedBytes()).
  size_t RetainedBytes() const;
};

// ------------------------------------------------------------------ logs

struct LogRecordRow {
  uint32_t scope = 0;
  uint64_t time_unix_nano = 0;
  uint64_t observed_time_unix_nano = 0;
  int32_t severity_number = 0;
  std::string_view severity_text;
  ValueRow body;
  Range attributes;
  uint32_t dropped_attributes_count = 0;
  uint32_t flags = 0;
  TraceId trace_id{};
  uint8_t has_trace_id = 0;
  SpanId span_id{};
  uint8_t has_span_id = 0;
  std::string_view event_name;
};

struct LogRecordColumns {
  std::vector<uint32_t> scope;  // row in Batch::scopes
  std::vector<uint64_t> time_unix_nano;
  std::vector<uint64_t> observed_time_unix_nano;
  std::vector<int32_t> severity_number;  // SeverityNumber value as sent
  std::vector<std::string_view> severity_text;
  ValueColumns body;              // one row per log record; kEmpty when absent
  std::vector<Range> attributes;  // into LogBatch::log_attributes
  std::vector<uint32_t> dropped_attributes_count;
  std::vector<uint32_t> flags;
  std::vector<TraceId> trace_id;  // all zero when absent (or cleared, see ClearedIds)
  std::vector<uint8_t> has_trace_id;
  std::vector<SpanId> span_id;  // all zero when absent (or cleared, see ClearedIds)
  std::vector<uint8_t> has_span_id;
  std::vector<std::string_view> event_name;

  size_t size() const { return time_unix_nano.size(); }
  ABSL_ATTRIBUTE_ALWAYS_INLINE uint32_t Append(const LogRecordRow& row) {
    scope.push_back(row.scope);
    time_unix_nano.push_back(row.time_unix_nano);
    observed_time_unix_nano.push_back(row.observed_time_unix_nano);
    severity_number.push_back(row.severity_number);
    severity_text.push_back(row.severity_text);
    body.Append(row.body);
    attributes.push_back(row.attributes);
    dropped_attributes_count.push_back(row.dropped_attributes_count);
    flags.push_back(row.flags);
    trace_id.push_back(row.trace_id);
    has_trace_id.push_back(row.has_trace_id);
    span_id.push_back(row.span_id);
    has_span_id.push_back(row.has_span_id);
    event_name.push_back(row.event_name);
    return LastRow(time_unix_nano);
  }
};

// Invalid log record ids the decoders stored as absent, keeping their
// records (logs.proto: an invalid id means "not associated with a trace";
// docs/otlp.md, "Cleared log record ids"): present but of the wrong length,
// all zero, or in JSON not hex. Counted per field; an empty id is absent,
// not cleared.
struct ClearedIds {
  uint64_t trace_id = 0;
  uint64_t span_id = 0;

  bool empty() const { return trace_id == 0 && span_id == 0; }
};

struct LogBatch : BatchBase {
  LogRecordColumns logs;
  AttributeColumns log_attributes;
  // Not rows of the batch: what the decoders cleared while decoding into it.
  ClearedIds cleared_ids;

  // The heap bytes this batch holds, the batch object included (see
  // BatchBase::RetainedBytes()).
  size_t RetainedBytes() const;
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

struct MetricRow {
  uint32_t scope = 0;
  std::string_view name;
  std::string_view description;
  std::string_view unit;
  Range metadata;
  MetricType type = MetricType::kUnset;
  int32_t aggregation_temporality = 0;
  uint8_t is_monotonic = 0;
  Range points;
};

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
  ABSL_ATTRIBUTE_ALWAYS_INLINE uint32_t Append(const MetricRow& row) {
    scope.push_back(row.scope);
    name.push_back(row.name);
    description.push_back(row.description);
    unit.push_back(row.unit);
    metadata.push_back(row.metadata);
    type.push_back(row.type);
    aggregation_temporality.push_back(row.aggregation_temporality);
    is_monotonic.push_back(row.is_monotonic);
    points.push_back(row.points);
    return LastRow(name);
  }
};

// The fields of PointColumnsBase, which every point row type extends.
struct PointRowBase {
  uint32_t metric = 0;
  Range attributes;
  uint64_t start_time_unix_nano = 0;
  uint64_t time_unix_nano = 0;
  uint32_t flags = 0;
  Range exemplars;
};

// Fields every data point type has.
struct PointColumnsBase {
  std::vector<uint32_t> metric;   // row in MetricBatch::metrics
  std::vector<Range> attributes;  // into MetricBatch::point_attributes
  std::vector<uint64_t> start_time_unix_nano;
  std::vector<uint64_t> time_unix_nano;
  std::vector<uint32_t> flags;
  std::vector<Range> exemplars;  // into MetricBatch::exemplars

  size_t size() const { return metric.size(); }

 protected:
  void TruncateBase(size_t n) {
    TruncateColumns(n, metric, attributes, start_time_unix_nano, time_unix_nano, flags, exemplars);
  }
  // The first half of a point type's Append.
  ABSL_ATTRIBUTE_ALWAYS_INLINE void AppendBase(const PointRowBase& row) {
    metric.push_back(row.metric);
    attributes.push_back(row.attributes);
    start_time_unix_nano.push_back(row.start_time_unix_nano);
    time_unix_nano.push_back(row.time_unix_nano);
    flags.push_back(row.flags);
    exemplars.push_back(row.exemplars);
  }
};

struct NumberPointRow : PointRowBase {
  NumberType value_type = NumberType::kNone;
  uint64_t value_bits = 0;
};

struct NumberPointColumns : PointColumnsBase {
  std::vector<NumberType> value_type;
  std::vector<uint64_t> value_bits;  // double bits or int64, per value_type

  double double_at(size_t i) const { return std::bit_cast<double>(value_bits[i]); }
  int64_t int_at(size_t i) const { return static_cast<int64_t>(value_bits[i]); }
  ABSL_ATTRIBUTE_ALWAYS_INLINE uint32_t Append(const NumberPointRow& row) {
    AppendBase(row);
    value_type.push_back(row.value_type);
    value_bits.push_back(row.value_bits);
    return LastRow(metric);
  }
};

// Presence bits of optional fields.
enum OptionalField : uint8_t { kHasSum = 1, kHasMin = 2, kHasMax = 4 };

struct HistogramStatsRow : PointRowBase {
  uint64_t count = 0;
  double sum = 0;
  double min = 0;
  double max = 0;
  uint8_t present = 0;
};

// count, sum, min and max, which both histogram point types have.
struct HistogramStatsColumns : PointColumnsBase {
  std::vector<uint64_t> count;
  std::vector<double> sum;
  std::vector<double> min;
  std::vector<double> max;
  std::vector<uint8_t> present;  // OptionalField bits

 protected:
  ABSL_ATTRIBUTE_ALWAYS_INLINE void AppendStats(const HistogramStatsRow& row) {
    AppendBase(row);
    count.push_back(row.count);
    sum.push_back(row.sum);
    min.push_back(row.min);
    max.push_back(row.max);
    present.push_back(row.present);
  }
  void TruncateStats(size_t n) {
    TruncateBase(n);
    TruncateColumns(n, count, sum, min, max, present);
  }
};

struct HistogramPointRow : HistogramStatsRow {
  Range bucket_counts;
  Range explicit_bounds;
};

struct HistogramPointColumns : HistogramStatsColumns {
  std::vector<Range> bucket_counts;    // into MetricBatch::bucket_counts
  std::vector<Range> explicit_bounds;  // into MetricBatch::explicit_bounds

  ABSL_ATTRIBUTE_ALWAYS_INLINE uint32_t Append(const HistogramPointRow& row) {
    AppendStats(row);
    bucket_counts.push_back(row.bucket_counts);
    explicit_bounds.push_back(row.explicit_bounds);
    return LastRow(metric);
  }
  void Truncate(size_t n) {
    TruncateStats(n);
    TruncateColumns(n, bucket_counts, explicit_bounds);
  }
};

struct ExponentialPointRow : HistogramStatsRow {
  int32_t scale = 0;
  uint64_t zero_count = 0;
  double zero_threshold = 0;
  int32_t positive_offset = 0;
  Range positive_bucket_counts;
  int32_t negative_offset = 0;
  Range negative_bucket_counts;
};

struct ExponentialPointColumns : HistogramStatsColumns {
  std::vector<int32_t> scale;
  std::vector<uint64_t> zero_count;
  std::vector<double> zero_threshold;
  std::vector<int32_t> positive_offset;
  std::vector<Range> positive_bucket_counts;  // into MetricBatch::bucket_counts
  std::vector<int32_t> negative_offset;
  std::vector<Range> negative_bucket_counts;  // into MetricBatch::bucket_counts

  ABSL_ATTRIBUTE_ALWAYS_INLINE uint32_t Append(const ExponentialPointRow& row) {
    AppendStats(row);
    scale.push_back(row.scale);
    zero_count.push_back(row.zero_count);
    zero_threshold.push_back(row.zero_threshold);
    positive_offset.push_back(row.positive_offset);
    positive_bucket_counts.push_back(row.positive_bucket_counts);
    negative_offset.push_back(row.negative_offset);
    negative_bucket_counts.push_back(row.negative_bucket_counts);
    return LastRow(metric);
  }
};

struct SummaryPointRow : PointRowBase {
  uint64_t count = 0;
  double sum = 0;
  Range quantiles;
};

struct SummaryPointColumns : PointColumnsBase {
  std::vector<uint64_t> count;
  std::vector<double> sum;
  std::vector<Range> quantiles;  // into MetricBatch::quantiles

  ABSL_ATTRIBUTE_ALWAYS_INLINE uint32_t Append(const SummaryPointRow& row) {
    AppendBase(row);
    count.push_back(row.count);
    sum.push_back(row.sum);
    quantiles.push_back(row.quantiles);
    return LastRow(metric);
  }
};

struct QuantileRow {
  double quantile = 0;
  double value = 0;
};

struct QuantileColumns {
  std::vector<double> quantile;
  std::vector<double> value;

  size_t size() const { return quantile.size(); }
  ABSL_ATTRIBUTE_ALWAYS_INLINE uint32_t Append(const QuantileRow& row) {
    quantile.push_back(row.quantile);
    value.push_back(row.value);
    return LastRow(quantile);
  }
  void Truncate(size_t n) { TruncateColumns(n, quantile, value); }
};

struct ExemplarRow {
  Range filtered_attributes;
  uint64_t time_unix_nano = 0;
  NumberType value_type = NumberType::kNone;
  uint64_t value_bits = 0;
  TraceId trace_id{};
  uint8_t has_trace_id = 0;
  SpanId span_id{};
  uint8_t has_span_id = 0;
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
  ABSL_ATTRIBUTE_ALWAYS_INLINE uint32_t Append(const ExemplarRow& row) {
    filtered_attributes.push_back(row.filtered_attributes);
    time_unix_nano.push_back(row.time_unix_nano);
    value_type.push_back(row.value_type);
    value_bits.push_back(row.value_bits);
    trace_id.push_back(row.trace_id);
    has_trace_id.push_back(row.has_trace_id);
    span_id.push_back(row.span_id);
    has_span_id.push_back(row.has_span_id);
    return LastRow(time_unix_nano);
  }
  void Truncate(size_t n) {
    TruncateColumns(n, filtered_attributes, time_unix_nano, value_type, value_bits, trace_id,
                    has_trace_id, span_id, has_span_id);
  }
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

  // The heap bytes this batch holds, the batch object included (see
  // BatchBase::RetainedBytes()).
  size_t RetainedBytes() const;

  // The table that holds the data points of a metric of `type` (gauges
  // and sums share number_points); null for kUnset.
  const PointColumnsBase* points_of(MetricType type) const {
    switch (type) {
      case MetricType::kGauge:
      case MetricType::kSum:
        return &number_points;
      case MetricType::kHistogram:
        return &histogram_points;
      case MetricType::kExponentialHistogram:
        return &exponential_points;
      case MetricType::kSummary:
        return &summary_points;
      case MetricType::kUnset:
        break;
    }
    return nullptr;
  }

  // Data points of every type.
  size_t point_count() const {
    return number_points.size() + histogram_points.size() + exponential_points.size() +
           summary_points.size();
  }
};

}  // namespace strata::otlp
