// DecodeTracesProto: ExportTraceServiceRequest wire bytes → TraceBatch.
// Field numbers follow opentelemetry-proto v1.x (trace.proto), including
// Span.flags (16) and Span.Link.flags (6).

#include "otlp/decode.h"
#include "otlp/proto_decode_common.h"

namespace strata::otlp {
namespace {

using internal::IdLength;
using proto::DecodeContext;
using proto::GetAttribute;
using proto::GetDouble;
using proto::GetFixed32;
using proto::GetFixed64;
using proto::GetIdAnyLength;
using proto::GetString;
using proto::GetVarint;
using proto::RangeFrom;
using proto::SkipOrReject;

constexpr std::string_view kSpanFields[] = {"",
                                            "trace_id",
                                            "span_id",
                                            "trace_state",
                                            "parent_span_id",
                                            "name",
                                            "kind",
                                            "start_time_unix_nano",
                                            "end_time_unix_nano",
                                            "attributes",
                                            "dropped_attributes_count",
                                            "events",
                                            "dropped_events_count",
                                            "links",
                                            "dropped_links_count",
                                            "status",
                                            "flags"};
constexpr std::string_view kEventFields[] = {"", "time_unix_nano", "name", "attributes",
                                             "dropped_attributes_count"};
constexpr std::string_view kLinkFields[] = {"",           "trace_id",   "span_id",
                                            "trace_state", "attributes", "dropped_attributes_count",
                                            "flags"};
// Field 1 is reserved (the deprecated code), so it is skipped as unknown.
constexpr std::string_view kStatusFields[] = {"", "", "message", "code"};

[[nodiscard]] bool DecodeEvent(DecodeContext& ctx, std::string_view payload, TraceBatch* b) {
  const size_t attributes_begin = b->event_attributes.size();
  EventRow row;
  WireReader r(payload);
  while (!r.done()) {
    uint32_t tag;
    if (!r.ReadTag(&tag)) return ctx.FailWire(r);
    switch (tag) {
      case Tag(1, WireType::kFixed64):
        if (!GetFixed64(ctx, r, "time_unix_nano", &row.time_unix_nano)) return false;
        break;
      case Tag(2, WireType::kLen):
        if (!GetString(ctx, r, "name", &row.name)) return false;
        break;
      case Tag(3, WireType::kLen):
        if (!GetAttribute(ctx, r, "attributes", b, &b->event_attributes, attributes_begin)) {
          return false;
        }
        break;
      case Tag(4, WireType::kVarint): {
        uint64_t v;
        if (!GetVarint(ctx, r, "dropped_attributes_count", &v)) return false;
        row.dropped_attributes_count = VarintToUint32(v);
        break;
      }
      default:
        if (!SkipOrReject(ctx, r, tag, kEventFields)) return false;
    }
  }
  row.attributes = RangeFrom(attributes_begin, b->event_attributes.size());
  b->events.Append(row);
  return true;
}

// Appends the link even when its ids are invalid: the span it belongs to is
// then rejected as a whole (row_checks.h), which removes the link again.
[[nodiscard]] bool DecodeLink(DecodeContext& ctx, std::string_view payload, TraceBatch* b,
                              uint32_t link_index, internal::LinkProblem* problem) {
  const size_t attributes_begin = b->link_attributes.size();
  LinkRow row;
  IdLength trace_id;
  IdLength span_id;
  WireReader r(payload);
  while (!r.done()) {
    uint32_t tag;
    if (!r.ReadTag(&tag)) return ctx.FailWire(r);
    switch (tag) {
      case Tag(1, WireType::kLen):
        if (!GetIdAnyLength(ctx, r, "trace_id", &row.trace_id, &trace_id)) return false;
        break;
      case Tag(2, WireType::kLen):
        if (!GetIdAnyLength(ctx, r, "span_id", &row.span_id, &span_id)) return false;
        break;
      case Tag(3, WireType::kLen):
        if (!GetString(ctx, r, "trace_state", &row.trace_state)) return false;
        break;
      case Tag(4, WireType::kLen):
        if (!GetAttribute(ctx, r, "attributes", b, &b->link_attributes, attributes_begin)) {
          return false;
        }
        break;
      case Tag(5, WireType::kVarint): {
        uint64_t v;
        if (!GetVarint(ctx, r, "dropped_attributes_count", &v)) return false;
        row.dropped_attributes_count = VarintToUint32(v);
        break;
      }
      case Tag(6, WireType::kFixed32):
        if (!GetFixed32(ctx, r, "flags", &row.flags)) return false;
        break;
      default:
        if (!SkipOrReject(ctx, r, tag, kLinkFields)) return false;
    }
  }
  internal::CheckLinkIds(link_index, trace_id, span_id, problem);
  row.attributes = RangeFrom(attributes_begin, b->link_attributes.size());
  b->links.Append(row);
  return true;
}

[[nodiscard]] bool DecodeStatus(DecodeContext& ctx, std::string_view payload,
                                std::string_view* message, int32_t* code) {
  WireReader r(payload);
  while (!r.done()) {
    uint32_t tag;
    if (!r.ReadTag(&tag)) return ctx.FailWire(r);
    switch (tag) {
      case Tag(2, WireType::kLen):
        if (!GetString(ctx, r, "message", message)) return false;
        break;
      case Tag(3, WireType::kVarint): {
        uint64_t v;
        if (!GetVarint(ctx, r, "code", &v)) return false;
        *code = VarintToInt32(v);
        break;
      }
      default:
        if (!SkipOrReject(ctx, r, tag, kStatusFields)) return false;
    }
  }
  return true;
}

// A span while its fields are decoded: the row, and what decides whether it
// is kept (row_checks.h).
struct PendingSpan {
  SpanRow row;
  IdLength trace_id;
  IdLength span_id;
  IdLength parent_span_id;
  internal::LinkProblem link_problem;
  bool seen_status = false;
};

// The length-delimited fields of a span that have child rows or a message.
[[nodiscard]] bool DecodeSpanChild(DecodeContext& ctx, WireReader& r, uint32_t tag, TraceBatch* b,
                                   size_t events_begin, size_t links_begin, PendingSpan* span) {
  std::string_view sub;
  if (tag == Tag(11, WireType::kLen)) {
    const size_t index = b->events.size() - events_begin;
    if (!r.ReadLen(&sub)) return ctx.FailWire(r, "events", index);
    return DecodeEvent(ctx, sub, b) || ctx.In("events", index);
  }
  if (tag == Tag(13, WireType::kLen)) {
    const size_t index = b->links.size() - links_begin;
    if (!r.ReadLen(&sub)) return ctx.FailWire(r, "links", index);
    return DecodeLink(ctx, sub, b, static_cast<uint32_t>(index), &span->link_problem) ||
           ctx.In("links", index);
  }
  if (!r.ReadLen(&sub)) return ctx.FailWire(r, "status");
  if (span->seen_status) return ctx.Fail(r.field_start(), "status", proto::kDuplicateMessage);
  span->seen_status = true;
  return DecodeStatus(ctx, sub, &span->row.status_message, &span->row.status_code) ||
         ctx.In("status");
}

[[nodiscard]] bool DecodeSpan(DecodeContext& ctx, std::string_view payload, TraceBatch* b,
                              uint32_t scope) {
  const internal::SpanMark mark = internal::MarkSpan(*b);
  const size_t attributes_begin = mark.span_attributes;
  const size_t events_begin = mark.events;
  const size_t links_begin = mark.links;
  PendingSpan span;
  SpanRow& row = span.row;
  row.scope = scope;
  uint64_t v;
  WireReader r(payload);
  while (!r.done()) {
    uint32_t tag;
    if (!r.ReadTag(&tag)) return ctx.FailWire(r);
    switch (tag) {
      case Tag(1, WireType::kLen):
        if (!GetIdAnyLength(ctx, r, "trace_id", &row.trace_id, &span.trace_id)) return false;
        break;
      case Tag(2, WireType::kLen):
        if (!GetIdAnyLength(ctx, r, "span_id", &row.span_id, &span.span_id)) return false;
        break;
      case Tag(3, WireType::kLen):
        if (!GetString(ctx, r, "trace_state", &row.trace_state)) return false;
        break;
      case Tag(4, WireType::kLen):
        if (!GetIdAnyLength(ctx, r, "parent_span_id", &row.parent_span_id, &span.parent_span_id)) {
          return false;
        }
        break;
      case Tag(5, WireType::kLen):
        if (!GetString(ctx, r, "name", &row.name)) return false;
        break;
      case Tag(6, WireType::kVarint):
        if (!GetVarint(ctx, r, "kind", &v)) return false;
        row.kind = VarintToInt32(v);
        break;
      case Tag(7, WireType::kFixed64):
        if (!GetFixed64(ctx, r, "start_time_unix_nano", &row.start_time_unix_nano)) {
          return false;
        }
        break;
      case Tag(8, WireType::kFixed64):
        if (!GetFixed64(ctx, r, "end_time_unix_nano", &row.end_time_unix_nano)) return false;
        break;
      case Tag(9, WireType::kLen):
        if (!GetAttribute(ctx, r, "attributes", b, &b->span_attributes, attributes_begin)) {
          return false;
        }
        break;
      case Tag(10, WireType::kVarint):
      case Tag(12, WireType::kVarint):
      case Tag(14, WireType::kVarint): {
        if (!GetVarint(ctx, r, kSpanFields[tag >> 3], &v)) return false;
        uint32_t& count = tag == Tag(10, WireType::kVarint)   ? row.dropped_attributes_count
                          : tag == Tag(12, WireType::kVarint) ? row.dropped_events_count
                                                              : row.dropped_links_count;
        count = VarintToUint32(v);
        break;
      }
      case Tag(11, WireType::kLen):
      case Tag(13, WireType::kLen):
      case Tag(15, WireType::kLen):
        if (!DecodeSpanChild(ctx, r, tag, b, events_begin, links_begin, &span)) return false;
        break;
      case Tag(16, WireType::kFixed32):
        if (!GetFixed32(ctx, r, "flags", &row.flags)) return false;
        break;
      default:
        if (!SkipOrReject(ctx, r, tag, kSpanFields)) return false;
    }
  }
  if (!internal::AcceptSpan(b, mark, row, span.trace_id, span.span_id, span.parent_span_id,
                            span.link_problem)) {
    return true;
  }
  row.has_parent_span_id = span.parent_span_id.bytes == 8 ? 1 : 0;
  row.attributes = RangeFrom(attributes_begin, b->span_attributes.size());
  row.events = RangeFrom(events_begin, b->events.size());
  row.links = RangeFrom(links_begin, b->links.size());
  b->spans.Append(row);
  return true;
}

// Reserves column capacity from the request size so that typical requests
// fill the columns without regrowing them. The divisors are about the encoded
// size of a realistic row (a span with a few attributes is hundreds of bytes;
// an attribute rarely under 24), so the reservation stays proportional to
// the input and a wrong guess costs only a regrowth.
void ReserveForInput(TraceBatch* b, size_t input_bytes) {
  SpanColumns& s = b->spans;
  proto::ReserveMore(input_bytes / 256, s.scope, s.trace_id, s.span_id, s.trace_state,
                     s.parent_span_id, s.has_parent_span_id, s.flags, s.name, s.kind,
                     s.start_time_unix_nano, s.end_time_unix_nano, s.attributes,
                     s.dropped_attributes_count, s.events, s.dropped_events_count, s.links,
                     s.dropped_links_count, s.status_message, s.status_code);
  proto::ReserveMore(input_bytes / 32, &b->span_attributes);
}

}  // namespace

absl::Status DecodeTracesProto(std::string_view bytes, TraceBatch* batch,
                               const DecodeLimits& limits) {
  static constexpr proto::SignalNames kNames = {"ExportTraceServiceRequest", "resource_spans",
                                                "scope_spans", "spans"};
  ReserveForInput(batch, bytes.size());
  auto decode_span = [batch](DecodeContext& ctx, std::string_view payload, uint32_t scope) {
    return DecodeSpan(ctx, payload, batch, scope);
  };
  return proto::DecodeRequest(bytes, batch, limits, kNames, decode_span);
}

}  // namespace strata::otlp
