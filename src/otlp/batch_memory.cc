// RetainedBytes(): the heap footprint of a batch, which the ingest path
// charges against the writer's in-flight byte budget.
//
// Every column is a std::vector, so a table's footprint is the sum of its
// vectors' capacities; strings are views whose bytes live in the arena or in
// a retained buffer, both counted once per batch. The static_asserts pin
// each table's member count: a column added to batch.h without being added
// here fails the build instead of going uncounted.

#include <string>
#include <vector>

#include "otlp/batch.h"

namespace strata::otlp {
namespace {

constexpr size_t kVectorSize = sizeof(std::vector<char>);

template <typename... T>
size_t VectorBytes(const std::vector<T>&... columns) {
  return (size_t{0} + ... + (columns.capacity() * sizeof(T)));
}

size_t Bytes(const ValueColumns& c) {
  static_assert(sizeof(ValueColumns) == 3 * kVectorSize);
  return VectorBytes(c.type, c.str, c.bits);
}

size_t Bytes(const AttributeColumns& c) {
  static_assert(sizeof(AttributeColumns) == 4 * kVectorSize);
  return VectorBytes(c.key) + Bytes(c.value);
}

size_t Bytes(const EntityRefColumns& c) {
  static_assert(sizeof(EntityRefColumns) == 4 * kVectorSize);
  return VectorBytes(c.schema_url, c.type, c.id_keys, c.description_keys);
}

size_t Bytes(const ResourceColumns& c) {
  static_assert(sizeof(ResourceColumns) == 4 * kVectorSize);
  return VectorBytes(c.attributes, c.dropped_attributes_count, c.entity_refs, c.schema_url);
}

size_t Bytes(const ScopeColumns& c) {
  static_assert(sizeof(ScopeColumns) == 6 * kVectorSize);
  return VectorBytes(c.resource, c.name, c.version, c.attributes, c.dropped_attributes_count,
                     c.schema_url);
}

size_t Bytes(const SpanColumns& c) {
  static_assert(sizeof(SpanColumns) == 19 * kVectorSize);
  return VectorBytes(c.scope, c.trace_id, c.span_id, c.trace_state, c.parent_span_id,
                     c.has_parent_span_id, c.flags, c.name, c.kind, c.start_time_unix_nano,
                     c.end_time_unix_nano, c.attributes, c.dropped_attributes_count, c.events,
                     c.dropped_events_count, c.links, c.dropped_links_count, c.status_message,
                     c.status_code);
}

size_t Bytes(const EventColumns& c) {
  static_assert(sizeof(EventColumns) == 4 * kVectorSize);
  return VectorBytes(c.time_unix_nano, c.name, c.attributes, c.dropped_attributes_count);
}

size_t Bytes(const LinkColumns& c) {
  static_assert(sizeof(LinkColumns) == 6 * kVectorSize);
  return VectorBytes(c.trace_id, c.span_id, c.trace_state, c.attributes, c.dropped_attributes_count,
                     c.flags);
}

size_t Bytes(const LogRecordColumns& c) {
  static_assert(sizeof(LogRecordColumns) == 16 * kVectorSize);
  return VectorBytes(c.scope, c.time_unix_nano, c.observed_time_unix_nano, c.severity_number,
                     c.severity_text, c.attributes, c.dropped_attributes_count, c.flags, c.trace_id,
                     c.has_trace_id, c.span_id, c.has_span_id, c.event_name) +
         Bytes(c.body);
}

size_t Bytes(const MetricColumns& c) {
  static_assert(sizeof(MetricColumns) == 9 * kVectorSize);
  return VectorBytes(c.scope, c.name, c.description, c.unit, c.metadata, c.type,
                     c.aggregation_temporality, c.is_monotonic, c.points);
}

size_t Bytes(const PointColumnsBase& c) {
  static_assert(sizeof(PointColumnsBase) == 6 * kVectorSize);
  return VectorBytes(c.metric, c.attributes, c.start_time_unix_nano, c.time_unix_nano, c.flags,
                     c.exemplars);
}

size_t Bytes(const NumberPointColumns& c) {
  static_assert(sizeof(NumberPointColumns) == sizeof(PointColumnsBase) + 2 * kVectorSize);
  return Bytes(static_cast<const PointColumnsBase&>(c)) + VectorBytes(c.value_type, c.value_bits);
}

size_t Bytes(const HistogramStatsColumns& c) {
  static_assert(sizeof(HistogramStatsColumns) == sizeof(PointColumnsBase) + 5 * kVectorSize);
  return Bytes(static_cast<const PointColumnsBase&>(c)) +
         VectorBytes(c.count, c.sum, c.min, c.max, c.present);
}

size_t Bytes(const HistogramPointColumns& c) {
  static_assert(sizeof(HistogramPointColumns) == sizeof(HistogramStatsColumns) + 2 * kVectorSize);
  return Bytes(static_cast<const HistogramStatsColumns&>(c)) +
         VectorBytes(c.bucket_counts, c.explicit_bounds);
}

size_t Bytes(const ExponentialPointColumns& c) {
  static_assert(sizeof(ExponentialPointColumns) == sizeof(HistogramStatsColumns) + 7 * kVectorSize);
  return Bytes(static_cast<const HistogramStatsColumns&>(c)) +
         VectorBytes(c.scale, c.zero_count, c.zero_threshold, c.positive_offset,
                     c.positive_bucket_counts, c.negative_offset, c.negative_bucket_counts);
}

size_t Bytes(const SummaryPointColumns& c) {
  static_assert(sizeof(SummaryPointColumns) == sizeof(PointColumnsBase) + 3 * kVectorSize);
  return Bytes(static_cast<const PointColumnsBase&>(c)) + VectorBytes(c.count, c.sum, c.quantiles);
}

size_t Bytes(const QuantileColumns& c) {
  static_assert(sizeof(QuantileColumns) == 2 * kVectorSize);
  return VectorBytes(c.quantile, c.value);
}

size_t Bytes(const ExemplarColumns& c) {
  static_assert(sizeof(ExemplarColumns) == 8 * kVectorSize);
  return VectorBytes(c.filtered_attributes, c.time_unix_nano, c.value_type, c.value_bits,
                     c.trace_id, c.has_trace_id, c.span_id, c.has_span_id);
}

// A string's heap bytes; none while it fits in the object itself.
size_t StringBytes(const std::string& s) {
  return s.capacity() > std::string().capacity() ? s.capacity() + 1 : 0;
}

}  // namespace

size_t BatchBase::RetainedBytes() const {
  static_assert(sizeof(BatchBase) == sizeof(ResourceColumns) + 3 * sizeof(AttributeColumns) +
                                         sizeof(EntityRefColumns) + kVectorSize +
                                         sizeof(ScopeColumns) + sizeof(ValueColumns) +
                                         sizeof(RowRejections) + sizeof(Arena) + kVectorSize);
  size_t bytes = Bytes(resources) + Bytes(resource_attributes) + Bytes(entity_refs) +
                 VectorBytes(entity_keys) + Bytes(scopes) + Bytes(scope_attributes) +
                 Bytes(nested_values) + Bytes(nested_attributes) +
                 StringBytes(rejected.first_message) + arena.bytes_reserved() +
                 VectorBytes(retained);
  for (const std::shared_ptr<const std::string>& buffer : retained) {
    if (buffer != nullptr) bytes += sizeof(std::string) + StringBytes(*buffer);
  }
  return bytes;
}

size_t TraceBatch::RetainedBytes() const {
  static_assert(sizeof(TraceBatch) == sizeof(BatchBase) + sizeof(SpanColumns) +
                                          3 * sizeof(AttributeColumns) + sizeof(EventColumns) +
                                          sizeof(LinkColumns));
  return sizeof(TraceBatch) + BatchBase::RetainedBytes() + Bytes(spans) + Bytes(span_attributes) +
         Bytes(events) + Bytes(event_attributes) + Bytes(links) + Bytes(link_attributes);
}

size_t LogBatch::RetainedBytes() const {
  static_assert(sizeof(LogBatch) == sizeof(BatchBase) + sizeof(LogRecordColumns) +
                                        sizeof(AttributeColumns) + sizeof(ClearedIds));
  return sizeof(LogBatch) + BatchBase::RetainedBytes() + Bytes(logs) + Bytes(log_attributes);
}

size_t MetricBatch::RetainedBytes() const {
  static_assert(sizeof(MetricBatch) ==
                sizeof(BatchBase) + sizeof(MetricColumns) + 3 * sizeof(AttributeColumns) +
                    sizeof(NumberPointColumns) + sizeof(HistogramPointColumns) +
                    sizeof(ExponentialPointColumns) + sizeof(SummaryPointColumns) +
                    2 * kVectorSize + sizeof(QuantileColumns) + sizeof(ExemplarColumns));
  return sizeof(MetricBatch) + BatchBase::RetainedBytes() + Bytes(metrics) +
         Bytes(metadata_attributes) + Bytes(number_points) + Bytes(histogram_points) +
         Bytes(exponential_points) + Bytes(summary_points) + Bytes(point_attributes) +
         VectorBytes(bucket_counts, explicit_bounds) + Bytes(quantiles) + Bytes(exemplars) +
         Bytes(exemplar_attributes);
}

}  // namespace strata::otlp
