// EncodeTracesProto: TraceBatch -> ExportTraceServiceRequest wire bytes.

#include <string>

#include "otlp/encode.h"
#include "otlp/proto_encode_common.h"

namespace strata::otlp {
namespace {

class TraceProtoEncoder : public internal::ProtoEncoderBase {
 public:
  TraceProtoEncoder(const TraceBatch& batch, std::string* out)
      : ProtoEncoderBase(batch, out), traces_(batch) {}

  void Encode() {
    WriteResourceTree(traces_.spans.scope, [this](uint32_t row) { WriteSpan(row); });
  }

 private:
  void WriteSpan(size_t i);
  void WriteEvent(size_t i);
  void WriteLink(size_t i);

  const TraceBatch& traces_;
};

// Trace and span ids are always written: the batch keeps no presence for
// them, and every span and link has them.
void TraceProtoEncoder::WriteSpan(size_t i) {
  const SpanColumns& s = traces_.spans;
  ProtoWriter::Mark span = w_.Open(2);  // ScopeSpans.spans
  w_.IdAlways(1, s.trace_id[i]);
  w_.IdAlways(2, s.span_id[i]);
  w_.String(3, s.trace_state[i]);
  if (s.has_parent_span_id[i]) {
    w_.IdAlways(4, s.parent_span_id[i]);
  }
  w_.String(5, s.name[i]);
  w_.Int32(6, s.kind[i]);
  w_.Fixed64(7, s.start_time_unix_nano[i]);
  w_.Fixed64(8, s.end_time_unix_nano[i]);
  WriteKeyValues(9, traces_.span_attributes, s.attributes[i]);
  w_.UInt32(10, s.dropped_attributes_count[i]);
  for (uint32_t e = s.events[i].begin; e < s.events[i].end(); ++e) WriteEvent(e);
  w_.UInt32(12, s.dropped_events_count[i]);
  for (uint32_t l = s.links[i].begin; l < s.links[i].end(); ++l) WriteLink(l);
  w_.UInt32(14, s.dropped_links_count[i]);
  if (!s.status_message[i].empty() || s.status_code[i] != 0) {
    ProtoWriter::Mark status = w_.Open(15);
    w_.String(2, s.status_message[i]);
    w_.Int32(3, s.status_code[i]);
    w_.Close(status);
  }
  w_.Fixed32(16, s.flags[i]);
  w_.Close(span);
}

void TraceProtoEncoder::WriteEvent(size_t i) {
  const EventColumns& e = traces_.events;
  ProtoWriter::Mark event = w_.Open(11);  // Span.events
  w_.Fixed64(1, e.time_unix_nano[i]);
  w_.String(2, e.name[i]);
  WriteKeyValues(3, traces_.event_attributes, e.attributes[i]);
  w_.UInt32(4, e.dropped_attributes_count[i]);
  w_.Close(event);
}

void TraceProtoEncoder::WriteLink(size_t i) {
  const LinkColumns& l = traces_.links;
  ProtoWriter::Mark link = w_.Open(13);  // Span.links
  w_.IdAlways(1, l.trace_id[i]);
  w_.IdAlways(2, l.span_id[i]);
  w_.String(3, l.trace_state[i]);
  WriteKeyValues(4, traces_.link_attributes, l.attributes[i]);
  w_.UInt32(5, l.dropped_attributes_count[i]);
  w_.Fixed32(6, l.flags[i]);
  w_.Close(link);
}

}  // namespace

std::string EncodeTracesProto(const TraceBatch& batch) {
  std::string out;
  out.reserve(internal::EstimateProtoBytes(batch));
  TraceProtoEncoder(batch, &out).Encode();
  return out;
}

}  // namespace strata::otlp
