// EncodeTracesJson: TraceBatch -> ExportTraceServiceRequest in OTLP/JSON.

#include <string>

#include "otlp/encode.h"
#include "otlp/json_encode_common.h"

namespace strata::otlp {
namespace {

class TraceJsonEncoder : public internal::JsonEncoderBase {
 public:
  TraceJsonEncoder(const TraceBatch& batch, std::string* out)
      : JsonEncoderBase(batch, out), traces_(batch) {}

  void Encode() {
    WriteRequest({"resourceSpans", "scopeSpans", "spans"}, traces_.spans.scope,
                 [this](uint32_t row) { WriteSpan(row); });
  }

 private:
  void WriteSpan(size_t i);
  void WriteEvent(size_t i);
  void WriteLink(size_t i);

  const TraceBatch& traces_;
};

// Trace and span ids are always written (as in the protobuf encoder).
void TraceJsonEncoder::WriteSpan(size_t i) {
  const SpanColumns& s = traces_.spans;
  w_.BeginObject();
  IdField("traceId", s.trace_id[i]);
  IdField("spanId", s.span_id[i]);
  StringField("traceState", s.trace_state[i]);
  if (s.has_parent_span_id[i]) IdField("parentSpanId", s.parent_span_id[i]);
  StringField("name", s.name[i]);
  Int32Field("kind", s.kind[i]);
  Uint64Field("startTimeUnixNano", s.start_time_unix_nano[i]);
  Uint64Field("endTimeUnixNano", s.end_time_unix_nano[i]);
  WriteKeyValues("attributes", traces_.span_attributes, s.attributes[i]);
  Uint32Field("droppedAttributesCount", s.dropped_attributes_count[i]);
  if (s.events[i].count != 0) {
    w_.Key("events");
    w_.BeginArray();
    for (uint32_t e = s.events[i].begin; e < s.events[i].end(); ++e) WriteEvent(e);
    w_.EndArray();
  }
  Uint32Field("droppedEventsCount", s.dropped_events_count[i]);
  if (s.links[i].count != 0) {
    w_.Key("links");
    w_.BeginArray();
    for (uint32_t l = s.links[i].begin; l < s.links[i].end(); ++l) WriteLink(l);
    w_.EndArray();
  }
  Uint32Field("droppedLinksCount", s.dropped_links_count[i]);
  if (!s.status_message[i].empty() || s.status_code[i] != 0) {
    w_.Key("status");
    w_.BeginObject();
    StringField("message", s.status_message[i]);
    Int32Field("code", s.status_code[i]);
    w_.EndObject();
  }
  Uint32Field("flags", s.flags[i]);
  w_.EndObject();
}

void TraceJsonEncoder::WriteEvent(size_t i) {
  const EventColumns& e = traces_.events;
  w_.BeginObject();
  Uint64Field("timeUnixNano", e.time_unix_nano[i]);
  StringField("name", e.name[i]);
  WriteKeyValues("attributes", traces_.event_attributes, e.attributes[i]);
  Uint32Field("droppedAttributesCount", e.dropped_attributes_count[i]);
  w_.EndObject();
}

void TraceJsonEncoder::WriteLink(size_t i) {
  const LinkColumns& l = traces_.links;
  w_.BeginObject();
  IdField("traceId", l.trace_id[i]);
  IdField("spanId", l.span_id[i]);
  StringField("traceState", l.trace_state[i]);
  WriteKeyValues("attributes", traces_.link_attributes, l.attributes[i]);
  Uint32Field("droppedAttributesCount", l.dropped_attributes_count[i]);
  Uint32Field("flags", l.flags[i]);
  w_.EndObject();
}

}  // namespace

std::string EncodeTracesJson(const TraceBatch& batch) {
  std::string out;
  out.reserve(2 * internal::EstimateProtoBytes(batch));
  TraceJsonEncoder(batch, &out).Encode();
  return out;
}

}  // namespace strata::otlp
