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

// A span while its fields are decoded: the row, appended once all are read
// if its ids are valid, and what decides that (row_checks.h).
struct PendingSpan {
  SpanRow row;
  internal::IdLength trace_id;
  internal::IdLength span_id;
  internal::IdLength parent_span_id;
  internal::LinkProblem link_problem;
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
  absl::Status SpanField(int id, od::value& v, const PathFrame& f, PendingSpan* span);
  absl::Status Event(od::value& v, const PathFrame& f);
  absl::Status Link(od::value& v, const PathFrame& f, uint32_t link_index,
                    internal::LinkProblem* problem);
  absl::Status SpanStatus(od::value& v, const PathFrame& f, SpanRow* row);

  JsonReader& r_;
  TraceBatch& b_;
};

absl::Status TraceDecoder::Span(od::value& v, const PathFrame& f, uint32_t scope) {
  const internal::SpanMark mark = internal::MarkSpan(b_);
  PendingSpan span;
  span.row.scope = scope;
  span.row.attributes = JsonReader::EmptyRangeAtEnd(b_.span_attributes);
  span.row.events = JsonReader::EmptyRangeAtEnd(b_.events);
  span.row.links = JsonReader::EmptyRangeAtEnd(b_.links);
  absl::Status s = r_.ForEachField(
      v, f, SpanFields(),
      [&](int id, od::value& fv, const PathFrame& ff) { return SpanField(id, fv, ff, &span); });
  if (!s.ok()) return s;
  if (!internal::AcceptSpan(&b_, mark, span.row, span.trace_id, span.span_id, span.parent_span_id,
                            span.link_problem)) {
    return absl::OkStatus();
  }
  span.row.has_parent_span_id = span.parent_span_id.bytes == 8 ? 1 : 0;
  b_.spans.Append(span.row);
  return absl::OkStatus();
}

absl::Status TraceDecoder::SpanField(int id, od::value& v, const PathFrame& f, PendingSpan* span) {
  SpanRow* row = &span->row;
  switch (id) {
    case kTraceId:
      return r_.HexIdAnyLength(v, f, row->trace_id, &span->trace_id);
    case kSpanId:
      return r_.HexIdAnyLength(v, f, row->span_id, &span->span_id);
    case kTraceState:
      return r_.String(v, f, &row->trace_state);
    case kParentSpanId:
      return r_.HexIdAnyLength(v, f, row->parent_span_id, &span->parent_span_id);
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
      absl::Status s = r_.ForEachElement(v, f, [&](od::value& e, const PathFrame& ef) {
        return Link(e, ef, static_cast<uint32_t>(b_.links.size() - begin), &span->link_problem);
      });
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
  EventRow row;
  row.attributes = JsonReader::EmptyRangeAtEnd(b_.event_attributes);
  absl::Status s =
      r_.ForEachField(v, f, EventFields(), [&](int id, od::value& fv, const PathFrame& ff) {
        switch (id) {
          case kEventTime:
            return r_.Uint64(fv, ff, &row.time_unix_nano);
          case kEventName:
            return r_.String(fv, ff, &row.name);
          case kEventAttributes:
            return r_.Attributes(fv, ff, &b_.event_attributes, &row.attributes);
          case kEventDropped:
            return r_.Uint32(fv, ff, &row.dropped_attributes_count);
        }
        return absl::OkStatus();
      });
  if (!s.ok()) return s;
  b_.events.Append(row);
  return absl::OkStatus();
}

// Appends the link even when its ids are invalid: the span it belongs to is
// then rejected as a whole (row_checks.h), which removes the link again.
absl::Status TraceDecoder::Link(od::value& v, const PathFrame& f, uint32_t link_index,
                                internal::LinkProblem* problem) {
  LinkRow row;
  row.attributes = JsonReader::EmptyRangeAtEnd(b_.link_attributes);
  internal::IdLength trace_id, span_id;
  absl::Status s =
      r_.ForEachField(v, f, LinkFields(), [&](int id, od::value& fv, const PathFrame& ff) {
        switch (id) {
          case kLinkTraceId:
            return r_.HexIdAnyLength(fv, ff, row.trace_id, &trace_id);
          case kLinkSpanId:
            return r_.HexIdAnyLength(fv, ff, row.span_id, &span_id);
          case kLinkTraceState:
            return r_.String(fv, ff, &row.trace_state);
          case kLinkAttributes:
            return r_.Attributes(fv, ff, &b_.link_attributes, &row.attributes);
          case kLinkDropped:
            return r_.Uint32(fv, ff, &row.dropped_attributes_count);
          case kLinkFlags:
            return r_.Uint32(fv, ff, &row.flags);
        }
        return absl::OkStatus();
      });
  if (!s.ok()) return s;
  internal::CheckLinkIds(link_index, trace_id, span_id, problem);
  b_.links.Append(row);
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
