// DecodeLogsProto: ExportLogsServiceRequest wire bytes → LogBatch.
// Field numbers follow opentelemetry-proto v1.x (logs.proto), including
// LogRecord.event_name (12).

#include "otlp/decode.h"
#include "otlp/proto_decode_common.h"

namespace strata::otlp {
namespace {

using proto::DecodeContext;
using proto::GetAttribute;
using proto::GetFixed32;
using proto::GetFixed64;
using proto::GetId;
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

struct LogRow {
  uint64_t time = 0;
  uint64_t observed_time = 0;
  int32_t severity_number = 0;
  std::string_view severity_text;
  proto::Value body;
  bool seen_body = false;
  uint32_t dropped_attributes = 0;
  uint32_t flags = 0;
  TraceId trace_id{};
  uint8_t has_trace_id = 0;
  SpanId span_id{};
  uint8_t has_span_id = 0;
  std::string_view event_name;
};

void AppendLog(LogBatch* b, uint32_t scope, const LogRow& row, size_t attributes_begin) {
  LogRecordColumns& logs = b->logs;
  logs.scope.push_back(scope);
  logs.time_unix_nano.push_back(row.time);
  logs.observed_time_unix_nano.push_back(row.observed_time);
  logs.severity_number.push_back(row.severity_number);
  logs.severity_text.push_back(row.severity_text);
  proto::AppendValue(&logs.body, row.body);
  logs.attributes.push_back(RangeFrom(attributes_begin, b->log_attributes.size()));
  logs.dropped_attributes_count.push_back(row.dropped_attributes);
  logs.flags.push_back(row.flags);
  logs.trace_id.push_back(row.trace_id);
  logs.has_trace_id.push_back(row.has_trace_id);
  logs.span_id.push_back(row.span_id);
  logs.has_span_id.push_back(row.has_span_id);
  logs.event_name.push_back(row.event_name);
}

[[nodiscard]] bool DecodeBody(DecodeContext& ctx, WireReader& r, LogBatch* b, LogRow* row) {
  std::string_view sub;
  if (!r.ReadLen(&sub)) return ctx.FailWire(r, "body");
  if (row->seen_body) return ctx.Fail(r.field_start(), "body", proto::kDuplicateMessage);
  row->seen_body = true;
  return proto::DecodeAnyValue(ctx, sub, 1, b, &row->body) || ctx.In("body");
}

[[nodiscard]] bool DecodeLogRecord(DecodeContext& ctx, std::string_view payload, LogBatch* b,
                                   uint32_t scope) {
  const size_t attributes_begin = b->log_attributes.size();
  LogRow row;
  uint64_t v;
  WireReader r(payload);
  while (!r.done()) {
    uint32_t tag;
    if (!r.ReadTag(&tag)) return ctx.FailWire(r);
    switch (tag) {
      case Tag(1, WireType::kFixed64):
        if (!GetFixed64(ctx, r, "time_unix_nano", &row.time)) return false;
        break;
      case Tag(2, WireType::kVarint):
        if (!GetVarint(ctx, r, "severity_number", &v)) return false;
        row.severity_number = VarintToInt32(v);
        break;
      case Tag(3, WireType::kLen):
        if (!GetString(ctx, r, "severity_text", &row.severity_text)) return false;
        break;
      case Tag(5, WireType::kLen):
        if (!DecodeBody(ctx, r, b, &row)) return false;
        break;
      case Tag(6, WireType::kLen):
        if (!GetAttribute(ctx, r, "attributes", b, &b->log_attributes, attributes_begin)) {
          return false;
        }
        break;
      case Tag(7, WireType::kVarint):
        if (!GetVarint(ctx, r, "dropped_attributes_count", &v)) return false;
        row.dropped_attributes = VarintToUint32(v);
        break;
      case Tag(8, WireType::kFixed32):
        if (!GetFixed32(ctx, r, "flags", &row.flags)) return false;
        break;
      case Tag(9, WireType::kLen):
        if (!GetId(ctx, r, "trace_id", true, &row.trace_id, &row.has_trace_id)) return false;
        break;
      case Tag(10, WireType::kLen):
        if (!GetId(ctx, r, "span_id", true, &row.span_id, &row.has_span_id)) return false;
        break;
      case Tag(11, WireType::kFixed64):
        if (!GetFixed64(ctx, r, "observed_time_unix_nano", &row.observed_time)) return false;
        break;
      case Tag(12, WireType::kLen):
        if (!GetString(ctx, r, "event_name", &row.event_name)) return false;
        break;
      default:
        if (!SkipOrReject(ctx, r, tag, kLogRecordFields)) return false;
    }
  }
  AppendLog(b, scope, row, attributes_begin);
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
