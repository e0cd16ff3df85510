// DecodeLogsProto: ExportLogsServiceRequest wire bytes → LogBatch.
// Field numbers follow opentelemetry-proto v1.x (logs.proto), including
// LogRecord.event_name (12).

#include "otlp/decode.h"
#include "otlp/proto_decode_common.h"
#include "otlp/row_checks.h"

namespace strata::otlp {
namespace {

using proto::DecodeContext;
using proto::GetAttribute;
using proto::GetFixed32;
using proto::GetFixed64;
using proto::GetIdAnyLength;
using proto::GetString;
using proto::GetVarint;
using proto::RangeFrom;
using proto::SkipOrReject;

// Field 4 is reserved.
constexpr std::string_view kLogRecordFields[] = {"",
                                                 "time_unix_nano",
                                                 "severity_number",
                                                 "severity_text",
                                                 "",
                                                 "body",
                                                 "attributes",
                                                 "dropped_attributes_count",
                                                 "flags",
                                                 "trace_id",
                                                 "span_id",
                                                 "observed_time_unix_nano",
                                                 "event_name"};

[[nodiscard]] bool DecodeBody(DecodeContext& ctx, WireReader& r, LogBatch* b, bool* seen_body,
                              ValueRow* body) {
  std::string_view sub;
  if (!r.ReadLen(&sub)) return ctx.FailWire(r, "body");
  if (*seen_body) return ctx.Fail(r.field_start(), "body", proto::kDuplicateMessage);
  *seen_body = true;
  return proto::DecodeAnyValue(ctx, sub, 1, b, body) || ctx.In("body");
}

[[nodiscard]] bool DecodeLogRecord(DecodeContext& ctx, std::string_view payload, LogBatch* b,
                                   uint32_t scope) {
  const size_t attributes_begin = b->log_attributes.size();
  LogRecordRow row;
  row.scope = scope;
  bool seen_body = false;
  internal::IdLength trace_id;
  internal::IdLength span_id;
  uint64_t v;
  WireReader r(payload);
  while (!r.done()) {
    uint32_t tag;
    if (!r.ReadTag(&tag)) return ctx.FailWire(r);
    switch (tag) {
      case Tag(1, WireType::kFixed64):
        if (!GetFixed64(ctx, r, "time_unix_nano", &row.time_unix_nano)) return false;
        break;
      case Tag(2, WireType::kVarint):
        if (!GetVarint(ctx, r, "severity_number", &v)) return false;
        row.severity_number = VarintToInt32(v);
        break;
      case Tag(3, WireType::kLen):
        if (!GetString(ctx, r, "severity_text", &row.severity_text)) return false;
        break;
      case Tag(5, WireType::kLen):
        if (!DecodeBody(ctx, r, b, &seen_body, &row.body)) return false;
        break;
      case Tag(6, WireType::kLen):
        if (!GetAttribute(ctx, r, "attributes", b, &b->log_attributes, attributes_begin)) {
          return false;
        }
        break;
      case Tag(7, WireType::kVarint):
        if (!GetVarint(ctx, r, "dropped_attributes_count", &v)) return false;
        row.dropped_attributes_count = VarintToUint32(v);
        break;
      case Tag(8, WireType::kFixed32):
        if (!GetFixed32(ctx, r, "flags", &row.flags)) return false;
        break;
      case Tag(9, WireType::kLen):
        if (!GetIdAnyLength(ctx, r, "trace_id", &row.trace_id, &trace_id)) return false;
        break;
      case Tag(10, WireType::kLen):
        if (!GetIdAnyLength(ctx, r, "span_id", &row.span_id, &span_id)) return false;
        break;
      case Tag(11, WireType::kFixed64):
        if (!GetFixed64(ctx, r, "observed_time_unix_nano", &row.observed_time_unix_nano)) {
          return false;
        }
        break;
      case Tag(12, WireType::kLen):
        if (!GetString(ctx, r, "event_name", &row.event_name)) return false;
        break;
      default:
        if (!SkipOrReject(ctx, r, tag, kLogRecordFields)) return false;
    }
  }
  row.attributes = RangeFrom(attributes_begin, b->log_attributes.size());
  internal::CheckLogIds(b, trace_id, span_id, &row);
  b->logs.Append(row);
  return true;
}

// Reserves column capacity from the request size (see proto_decode_traces.cc).
void ReserveForInput(LogBatch* b, size_t input_bytes) {
  LogRecordColumns& l = b->logs;
  proto::ReserveMore(input_bytes / 256, l.scope, l.time_unix_nano, l.observed_time_unix_nano,
                     l.severity_number, l.severity_text, l.body.type, l.body.str, l.body.bits,
                     l.attributes, l.dropped_attributes_count, l.flags, l.trace_id,
                     l.has_trace_id, l.span_id, l.has_span_id, l.event_name);
  proto::ReserveMore(input_bytes / 32, &b->log_attributes);
}

}  // namespace

absl::Status DecodeLogsProto(std::string_view bytes, LogBatch* batch, const DecodeLimits& limits) {
  static constexpr proto::SignalNames kNames = {"ExportLogsServiceRequest", "resource_logs",
                                                "scope_logs", "log_records"};
  ReserveForInput(batch, bytes.size());
  auto decode_log = [batch](DecodeContext& ctx, std::string_view payload, uint32_t scope) {
    return DecodeLogRecord(ctx, payload, batch, scope);
  };
  return proto::DecodeRequest(bytes, batch, limits, kNames, decode_log);
}

}  // namespace strata::otlp
