#include "otlp/encode_common.h"

#include <string_view>

#include "common/check.h"

namespace strata::otlp::internal {

RowGroups::RowGroups(const std::vector<uint32_t>& parent_of, size_t parent_count)
    : offsets_(parent_count + 1, 0), order_(parent_of.size()) {
  for (uint32_t parent : parent_of) {
    STRATA_CHECK(parent < parent_count, "batch row names a parent row that does not exist");
    ++offsets_[parent + 1];
  }
  for (size_t p = 0; p < parent_count; ++p) offsets_[p + 1] += offsets_[p];
  // Place rows using a moving cursor per parent, then restore the offsets.
  std::vector<uint32_t> cursor(offsets_.begin(), offsets_.end() - 1);
  for (size_t row = 0; row < parent_of.size(); ++row) {
    order_[cursor[parent_of[row]]++] = static_cast<uint32_t>(row);
  }
}

bool IsEmptyResource(const BatchBase& batch, size_t row) {
  const ResourceColumns& r = batch.resources;
  return r.attributes[row].count == 0 && r.dropped_attributes_count[row] == 0 &&
         r.entity_refs[row].count == 0;
}

bool IsEmptyScope(const BatchBase& batch, size_t row) {
  const ScopeColumns& s = batch.scopes;
  return s.name[row].empty() && s.version[row].empty() && s.attributes[row].count == 0 &&
         s.dropped_attributes_count[row] == 0;
}

namespace {

size_t StringBytes(const std::vector<std::string_view>& column) {
  size_t total = 0;
  for (std::string_view s : column) total += s.size();
  return total;
}

// Per-row overheads below are typical tag, length and fixed-width bytes.
size_t ValueBytes(const ValueColumns& values) {
  return StringBytes(values.str) + values.size() * 11;
}

size_t AttributeBytes(const AttributeColumns& attributes) {
  return StringBytes(attributes.key) + ValueBytes(attributes.value) + attributes.size() * 4;
}

size_t BaseBytes(const BatchBase& batch) {
  return 64 + batch.resources.size() * 16 + StringBytes(batch.resources.schema_url) +
         AttributeBytes(batch.resource_attributes) + batch.entity_refs.size() * 8 +
         StringBytes(batch.entity_refs.type) + StringBytes(batch.entity_refs.schema_url) +
         StringBytes(batch.entity_keys) + batch.entity_keys.size() * 2 + batch.scopes.size() * 16 +
         StringBytes(batch.scopes.name) + StringBytes(batch.scopes.version) +
         StringBytes(batch.scopes.schema_url) + AttributeBytes(batch.scope_attributes) +
         ValueBytes(batch.nested_values) + AttributeBytes(batch.nested_attributes);
}

}  // namespace

size_t EstimateProtoBytes(const TraceBatch& batch) {
  const SpanColumns& s = batch.spans;
  return BaseBytes(batch) + s.size() * 80 + StringBytes(s.name) + StringBytes(s.trace_state) +
         StringBytes(s.status_message) + AttributeBytes(batch.span_attributes) +
         batch.events.size() * 16 + StringBytes(batch.events.name) +
         AttributeBytes(batch.event_attributes) + batch.links.size() * 36 +
         StringBytes(batch.links.trace_state) + AttributeBytes(batch.link_attributes);
}

size_t EstimateProtoBytes(const LogBatch& batch) {
  const LogRecordColumns& l = batch.logs;
  return BaseBytes(batch) + l.size() * 64 + StringBytes(l.severity_text) +
         StringBytes(l.event_name) + ValueBytes(l.body) + AttributeBytes(batch.log_attributes);
}

size_t EstimateProtoBytes(const MetricBatch& batch) {
  const MetricColumns& m = batch.metrics;
  return BaseBytes(batch) + m.size() * 16 + StringBytes(m.name) + StringBytes(m.description) +
         StringBytes(m.unit) + AttributeBytes(batch.metadata_attributes) +
         batch.point_count() * 40 + AttributeBytes(batch.point_attributes) +
         batch.bucket_counts.size() * 8 + batch.explicit_bounds.size() * 8 +
         batch.quantiles.size() * 20 + batch.exemplars.size() * 48 +
         AttributeBytes(batch.exemplar_attributes);
}

}  // namespace strata::otlp::internal
