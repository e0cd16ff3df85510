// DecodeTracesJson: ExportTraceServiceRequest in OTLP/JSON into a
// TraceBatch. The shared machinery (paths, scalars, AnyValue, resource,
// scope) is in json_decode_common.h; this file knows Span, Span.Event,
// Span.Link and Status.

#include <string_view>

#include "otlp/decode.h"
#include "otlp/json_decode_common.h"

namespace strata::otlp {
namespace {

using json_internal::FieldTable;
using json_internal::JsonReader;
using json_internal::PathFrame;
namespace od = json_internal::od;

const json_internal::SignalTables& TraceTables() {
  static const FieldTable* const root = new FieldTable({{0, "resourceSpans", "resource_spans"}});
  static const FieldTable* const resource_spans = new FieldTable({
      {0, "resource", "resource"},
      {1, "scopeSpans", "scope_spans"},
      {2, "schemaUrl", "schema_url"},
  });
  static const FieldTable* const scope_spans = new FieldTable({
      {0, "scope", "scope"},
      {1, "spans", "spans"},
      {2, "schemaUrl", "schema_url"},
  });
  static const json_internal::SignalTables tables{root, resource_spans, scope_spans};
  return tables;
}

enum SpanField {
  kTraceId,
  kSpanId,
  kTraceState,
  kParentSpanId,
  kFlags,
  kName,
  kKind,
  kStartTime,
  kEndTime,
  kAttributes,
  kDroppedAttributes,
  kEvents,
  kDroppedEvents,
  kLinks,
  kDroppedLinks,
  kStatus,
};

const FieldTable& SpanFields() {
  static const FieldTable* const table = new FieldTable({
      {kTraceId, "traceId", "trace_id"},
      {kSpanId, "spanId", "span_id"},
      {kTraceState, "traceState", "trace_state"},
      {kParentSpanId, "parentSpanId", "parent_span_id"},
      {kFlags, "flags", "flags"},
      {kName, "name", "name"},
      {kKind, "kind", "kind"},
      {kStartTime, "startTimeUnixNano", "start_time_unix_nano"},
      {kEndTime, "endTimeUnixNano", "end_time_unix_nano"},
      {kAttributes, "attributes", "attributes"},
      {kDroppedAttributes, "droppedAttributesCount", "dropped_attributes_count"},
      {kEvents, "events", "events"},
      {kDroppedEvents, "droppedEventsCount", "dropped_events_count"},
      {kLinks, "links", "links"},
      {kDroppedLinks, "droppedLinksCount", "dropped_links_count"},
      {kStatus, "status", "status"},
  });
  return *table;
}

enum EventField { kEventTime, kEventName, kEventAttributes, kEventDropped };

const FieldTable& EventFields() {
  static const FieldTable* const table = new FieldTable({
      {kEventTime, "timeUnixNano", "time_unix_nano"},
      {kEventName, "name", "name"},
      {kEventAttributes, "attributes", "attributes"},
      {kEventDropped, "droppedAttributesCount", "dropped_attributes_count"},
  });
  return *table;
}

enum LinkField {
  kLinkTraceId,
  kLinkSpanId,
  kLinkTraceState,
  kLinkAttributes,
  kLinkDropped,
  kLinkFlags,
};

const FieldTable& LinkFields() {
  static const FieldTable* const table = new FieldTable({
      {kLinkTraceId, "traceId", "trace_id"},
      {kLinkSpanId, "spanId", "span_id"},
      {kLinkTraceState, "traceState", "trace_state"},
      {kLinkAttributes, "attributes", "attributes"},
      {kLinkDropped, "droppedAttributesCount", "dropped_attributes_count"},
      {kLinkFlags, "flags", "flags"},
  });
  return *table;
}

enum StatusField { kStatusMessage, kStatusCode };

const FieldTable& StatusFields() {
  static const FieldTable* const table = new FieldTable({
      {kStatusMessage, "message", "message"},
      {kStatusCode, "code", "code"},
  });
  return *table;
}

constexpr std::string_view kSpanKindNames[] = {
    "SPAN_KIND_UNSPECIFIED", "SPAN_KIND_INTERNAL", "SPAN_KIND_SERVER",
    "SPAN_KIND_CLIENT",      "SPAN_KIND_PRODUCER", "SPAN_KIND_CONSUMER",
};
constexpr std::string_view kStatusCodeNames[] = {
    "STATUS_CODE_UNSET",
    "STATUS_CODE_OK",
    "STATUS_CODE_ERROR",
};

// A span while its fields are decoded; appended once all are read.
struct SpanRow {
  TraceId trace_id{};
  bool has_trace_id = false;
  SpanId span_id{};
  bool has_span_id = false;
  std::string_view trace_state;
  SpanId parent_span_id{};
  bool has_parent_span_id = false;
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

class TraceDecoder {
 public:
  TraceDecoder(JsonReader* reader, TraceBatch* batch) : r_(*reader), b_(*batch) {}

  absl::Status Root(od::value& v, const PathFrame& f) {
    return r_.DecodeSignal(
        v, f, TraceTables(),
        [&](od::value& e, const PathFrame& ef, uint32_t scope) { return Span(e, ef, scope); });
  }

 private:
  absl::Status Span(od::value& v, const PathFrame& f, uint32_t scope);
  absl::Status SpanField(int id, od::value& v, const PathFrame& f, SpanRow* row);
  absl::Status Event(od::value& v, const PathFrame& f);
  absl::Status Link(od::value& v, const PathFrame& f);
  absl::Status SpanStatus(od::value& v, const PathFrame& f, SpanRow* row);
  void AppendSpan(uint32_t scope, const SpanRow& row);

  JsonReader& r_;
  TraceBatch& b_;
};

absl::Status TraceDecoder::Span(od::value& v, const PathFrame& f, uint32_t scope) {
  SpanRow row;
  row.attributes = JsonReader::EmptyRangeAtEnd(b_.span_attributes);
  row.events = JsonReader::EmptyRangeAtEnd(b_.events);
  row.links = JsonReader::EmptyRangeAtEnd(b_.links);
  absl::Status s = r_.ForEachField(
      v, f, SpanFields(),
      [&](int id, od::value& fv, const PathFrame& ff) { return SpanField(id, fv, ff, &row); });
  if (!s.ok()) return s;
  if (!row.has_trace_id) return r_.MissingField(f, "traceId");
  if (!row.has_span_id) return r_.MissingField(f, "spanId");
  AppendSpan(scope, row);
  return absl::OkStatus();
}

absl::Status TraceDecoder::SpanField(int id, od::value& v, const PathFrame& f, SpanRow* row) {
  switch (id) {
    case kTraceId:
      return r_.TraceIdHex(v, f, &row->trace_id, &row->has_trace_id);
    case kSpanId:
      return r_.SpanIdHex(v, f, &row->span_id, &row->has_span_id);
    case kTraceState:
      return r_.String(v, f, &row->trace_state);
    case kParentSpanId:
      return r_.SpanIdHex(v, f, &row->parent_span_id, &row->has_parent_span_id);
    case kFlags:
      return r_.Uint32(v, f, &row->flags);
    case kName:
      return r_.String(v, f, &row->name);
    case kKind:
      return r_.Enum(v, f, kSpanKindNames, &row->kind);
    case kStartTime:
      return r_.Uint64(v, f, &row->start_time_unix_nano);
    case kEndTime:
      return r_.Uint64(v, f, &row->end_time_unix_nano);
    case kAttributes:
      return r_.Attributes(v, f, &b_.span_attributes, &row->attributes);
    case kDroppedAttributes:
      return r_.Uint32(v, f, &row->dropped_attributes_count);
    case kEvents: {
      const size_t begin = b_.events.size();
      absl::Status s =
          r_.ForEachElement(v, f, [&](od::value& e, const PathFrame& ef) { return Event(e, ef); });
      row->events = JsonReader::RangeToEnd(b_.events, begin);
      return s;
    }
    case kDroppedEvents:
      return r_.Uint32(v, f, &row->dropped_events_count);
    case kLinks: {
      const size_t begin = b_.links.size();
      absl::Status s =
          r_.ForEachElement(v, f, [&](od::value& e, const PathFrame& ef) { return Link(e, ef); });
      row->links = JsonReader::RangeToEnd(b_.links, begin);
      return s;
    }
    case kDroppedLinks:
      return r_.Uint32(v, f, &row->dropped_links_count);
    case kStatus:
      return SpanStatus(v, f, row);
  }
  return absl::OkStatus();
}

absl::Status TraceDecoder::Event(od::value& v, const PathFrame& f) {
  uint64_t time_unix_nano = 0;
  std::string_view name;
  Range attributes = JsonReader::EmptyRangeAtEnd(b_.event_attributes);
  uint32_t dropped = 0;
  absl::Status s =
      r_.ForEachField(v, f, EventFields(), [&](int id, od::value& fv, const PathFrame& ff) {
        switch (id) {
          case kEventTime:
            return r_.Uint64(fv, ff, &time_unix_nano);
          case kEventName:
            return r_.String(fv, ff, &name);
          case kEventAttributes:
            return r_.Attributes(fv, ff, &b_.event_attributes, &attributes);
          case kEventDropped:
            return r_.Uint32(fv, ff, &dropped);
        }
        return absl::OkStatus();
      });
  if (!s.ok()) return s;
  b_.events.time_unix_nano.push_back(time_unix_nano);
  b_.events.name.push_back(name);
  b_.events.attributes.push_back(attributes);
  b_.events.dropped_attributes_count.push_back(dropped);
  return absl::OkStatus();
}

absl::Status TraceDecoder::Link(od::value& v, const PathFrame& f) {
  TraceId trace_id{};
  SpanId span_id{};
  bool has_trace_id = false, has_span_id = false;
  std::string_view trace_state;
  Range attributes = JsonReader::EmptyRangeAtEnd(b_.link_attributes);
  uint32_t dropped = 0, flags = 0;
  absl::Status s =
      r_.ForEachField(v, f, LinkFields(), [&](int id, od::value& fv, const PathFrame& ff) {
        switch (id) {
          case kLinkTraceId:
            return r_.TraceIdHex(fv, ff, &trace_id, &has_trace_id);
          case kLinkSpanId:
            return r_.SpanIdHex(fv, ff, &span_id, &has_span_id);
          case kLinkTraceState:
            return r_.String(fv, ff, &trace_state);
          case kLinkAttributes:
            return r_.Attributes(fv, ff, &b_.link_attributes, &attributes);
          case kLinkDropped:
            return r_.Uint32(fv, ff, &dropped);
          case kLinkFlags:
            return r_.Uint32(fv, ff, &flags);
        }
        return absl::OkStatus();
      });
  if (!s.ok()) return s;
  if (!has_trace_id) return r_.MissingField(f, "traceId");
  if (!has_span_id) return r_.MissingField(f, "spanId");
  b_.links.trace_id.push_back(trace_id);
  b_.links.span_id.push_back(span_id);
  b_.links.trace_state.push_back(trace_state);
  b_.links.attributes.push_back(attributes);
  b_.links.dropped_attributes_count.push_back(dropped);
  b_.links.flags.push_back(flags);
  return absl::OkStatus();
}

absl::Status TraceDecoder::SpanStatus(od::value& v, const PathFrame& f, SpanRow* row) {
  return r_.ForEachField(v, f, StatusFields(), [&](int id, od::value& fv, const PathFrame& ff) {
    switch (id) {
      case kStatusMessage:
        return r_.String(fv, ff, &row->status_message);
      case kStatusCode:
        return r_.Enum(fv, ff, kStatusCodeNames, &row->status_code);
    }
    return absl::OkStatus();
  });
}

void TraceDecoder::AppendSpan(uint32_t scope, const SpanRow& row) {
  SpanColumns& spans = b_.spans;
  spans.scope.push_back(scope);
  spans.trace_id.push_back(row.trace_id);
  spans.span_id.push_back(row.span_id);
  spans.trace_state.push_back(row.trace_state);
  spans.parent_span_id.push_back(row.parent_span_id);
  spans.has_parent_span_id.push_back(row.has_parent_span_id ? 1 : 0);
  spans.flags.push_back(row.flags);
  spans.name.push_back(row.name);
  spans.kind.push_back(row.kind);
  spans.start_time_unix_nano.push_back(row.start_time_unix_nano);
  spans.end_time_unix_nano.push_back(row.end_time_unix_nano);
  spans.attributes.push_back(row.attributes);
  spans.dropped_attributes_count.push_back(row.dropped_attributes_count);
  spans.events.push_back(row.events);
  spans.dropped_events_count.push_back(row.dropped_events_count);
  spans.links.push_back(row.links);
  spans.dropped_links_count.push_back(row.dropped_links_count);
  spans.status_message.push_back(row.status_message);
  spans.status_code.push_back(row.status_code);
}

}  // namespace

absl::Status DecodeTracesJson(std::string_view json, TraceBatch* batch,
                              const DecodeLimits& limits) {
  return json_internal::DecodeDocument(
      json, limits, batch,
      [](JsonReader& reader, od::value& root, const PathFrame& frame, TraceBatch* target) {
        return TraceDecoder(&reader, target).Root(root, frame);
      });
}

}  // namespace strata::otlp
