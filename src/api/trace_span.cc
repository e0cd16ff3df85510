#include "api/trace_span.h"

#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"

namespace strata::api {
namespace {

using otlp::AttributeColumns;
using otlp::Range;
using otlp::ValueColumns;
using otlp::ValueRow;
using otlp::ValueType;

// Copies rows of one batch's tables into another's. Strings are not copied:
// they stay views into the source's arena and retained buffers, which the
// caller moves into the destination.
class RowCopier {
 public:
  RowCopier(const otlp::TraceBatch& from, otlp::TraceBatch* to) : from_(from), to_(to) {}

  // Appends rows `rows` of `src` (a table of `from_`) to `dst` (the same
  // table of `to_`), nested values included; returns where they went.
  Range CopyAttributes(const AttributeColumns& src, Range rows, AttributeColumns* dst) {
    const Range out{static_cast<uint32_t>(dst->size()), rows.count};
    for (uint32_t i = rows.begin; i < rows.end(); ++i) {
      // Children go to the nested tables, never to `dst`.
      const ValueRow value = CopyValue(src.value, i);
      dst->Append({src.key[i], value});
    }
    return out;
  }

  uint32_t CopyResource(uint32_t row) {
    auto [it, inserted] = resources_.try_emplace(row, static_cast<uint32_t>(to_->resources.size()));
    if (!inserted) return it->second;
    const otlp::ResourceColumns& r = from_.resources;
    otlp::ResourceRow out;
    out.attributes =
        CopyAttributes(from_.resource_attributes, r.attributes[row], &to_->resource_attributes);
    out.dropped_attributes_count = r.dropped_attributes_count[row];
    out.entity_refs = CopyEntityRefs(r.entity_refs[row]);
    out.schema_url = r.schema_url[row];
    to_->resources.Append(out);
    return it->second;
  }

  uint32_t CopyScope(uint32_t row) {
    if (auto it = scopes_.find(row); it != scopes_.end()) return it->second;
    const otlp::ScopeColumns& s = from_.scopes;
    otlp::ScopeRow out;
    out.resource = CopyResource(s.resource[row]);
    out.name = s.name[row];
    out.version = s.version[row];
    out.attributes =
        CopyAttributes(from_.scope_attributes, s.attributes[row], &to_->scope_attributes);
    out.dropped_attributes_count = s.dropped_attributes_count[row];
    out.schema_url = s.schema_url[row];
    const uint32_t index = to_->scopes.Append(out);
    scopes_.emplace(row, index);
    return index;
  }

  void CopySpan(size_t i) {
    const otlp::SpanColumns& s = from_.spans;
    otlp::SpanRow out;
    out.scope = CopyScope(s.scope[i]);
    out.trace_id = s.trace_id[i];
    out.span_id = s.span_id[i];
    out.trace_state = s.trace_state[i];
    out.parent_span_id = s.parent_span_id[i];
    out.has_parent_span_id = s.has_parent_span_id[i];
    out.flags = s.flags[i];
    out.name = s.name[i];
    out.kind = s.kind[i];
    out.start_time_unix_nano = s.start_time_unix_nano[i];
    out.end_time_unix_nano = s.end_time_unix_nano[i];
    out.attributes = CopyAttributes(from_.span_attributes, s.attributes[i], &to_->span_attributes);
    out.dropped_attributes_count = s.dropped_attributes_count[i];
    out.events = CopyEvents(s.events[i]);
    out.dropped_events_count = s.dropped_events_count[i];
    out.links = CopyLinks(s.links[i]);
    out.dropped_links_count = s.dropped_links_count[i];
    out.status_message = s.status_message[i];
    out.status_code = s.status_code[i];
    to_->spans.Append(out);
  }

 private:
  // values[row] for the destination: scalars as they are, arrays and
  // kvlists with their children copied (recursively) into the destination's
  // nested tables.
  ValueRow CopyValue(const ValueColumns& values, size_t row) {
    ValueRow out{values.type[row], values.str[row], values.bits[row]};
    if (out.type == ValueType::kArray) {
      const Range children = values.children_at(row);
      const Range copied{static_cast<uint32_t>(to_->nested_values.size()), children.count};
      to_->nested_values.Resize(copied.begin + children.count);
      for (uint32_t c = 0; c < children.count; ++c) {
        const ValueRow child = CopyValue(from_.nested_values, children.begin + c);
        to_->nested_values.Set(copied.begin + c, child);
      }
      out.bits = ValueColumns::Pack(copied);
    } else if (out.type == ValueType::kKvList) {
      const Range children = values.children_at(row);
      const Range copied{static_cast<uint32_t>(to_->nested_attributes.size()), children.count};
      to_->nested_attributes.Resize(copied.begin + children.count);
      for (uint32_t c = 0; c < children.count; ++c) {
        const ValueRow child = CopyValue(from_.nested_attributes.value, children.begin + c);
        to_->nested_attributes.Set(copied.begin + c,
                                   {from_.nested_attributes.key[children.begin + c], child});
      }
      out.bits = ValueColumns::Pack(copied);
    }
    return out;
  }

  Range CopyEntityRefs(Range rows) {
    const Range out{static_cast<uint32_t>(to_->entity_refs.size()), rows.count};
    const otlp::EntityRefColumns& e = from_.entity_refs;
    for (uint32_t i = rows.begin; i < rows.end(); ++i) {
      to_->entity_refs.Append(
          {e.schema_url[i], e.type[i], CopyKeys(e.id_keys[i]), CopyKeys(e.description_keys[i])});
    }
    return out;
  }

  Range CopyKeys(Range rows) {
    const Range out{static_cast<uint32_t>(to_->entity_keys.size()), rows.count};
    for (uint32_t i = rows.begin; i < rows.end(); ++i) {
      to_->entity_keys.push_back(from_.entity_keys[i]);
    }
    return out;
  }

  Range CopyEvents(Range rows) {
    const Range out{static_cast<uint32_t>(to_->events.size()), rows.count};
    const otlp::EventColumns& e = from_.events;
    // Each event's attributes are appended before the next event row, which
    // keeps both tables' ranges contiguous.
    for (uint32_t i = rows.begin; i < rows.end(); ++i) {
      otlp::EventRow event;
      event.time_unix_nano = e.time_unix_nano[i];
      event.name = e.name[i];
      event.attributes =
          CopyAttributes(from_.event_attributes, e.attributes[i], &to_->event_attributes);
      event.dropped_attributes_count = e.dropped_attributes_count[i];
      to_->events.Append(event);
    }
    return out;
  }

  Range CopyLinks(Range rows) {
    const Range out{static_cast<uint32_t>(to_->links.size()), rows.count};
    const otlp::LinkColumns& l = from_.links;
    for (uint32_t i = rows.begin; i < rows.end(); ++i) {
      otlp::LinkRow link;
      link.trace_id = l.trace_id[i];
      link.span_id = l.span_id[i];
      link.trace_state = l.trace_state[i];
      link.attributes =
          CopyAttributes(from_.link_attributes, l.attributes[i], &to_->link_attributes);
      link.dropped_attributes_count = l.dropped_attributes_count[i];
      link.flags = l.flags[i];
      to_->links.Append(link);
    }
    return out;
  }

  const otlp::TraceBatch& from_;
  otlp::TraceBatch* to_;
  // Source row -> destination row.
  absl::flat_hash_map<uint32_t, uint32_t> resources_;
  absl::flat_hash_map<uint32_t, uint32_t> scopes_;
};

}  // namespace

std::optional<otlp::TraceBatch> SelectSpan(otlp::TraceBatch trace, const otlp::SpanId& span_id) {
  otlp::TraceBatch out;
  RowCopier copier(trace, &out);
  for (size_t i = 0; i < trace.spans.size(); ++i) {
    if (trace.spans.span_id[i] == span_id) copier.CopySpan(i);
  }
  if (out.spans.size() == 0) return std::nullopt;
  out.arena = std::move(trace.arena);
  out.retained = std::move(trace.retained);
  return out;
}

}  // namespace strata::api
