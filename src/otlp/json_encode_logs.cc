// EncodeLogsJson: LogBatch -> ExportLogsServiceRequest in OTLP/JSON.

#include <string>

#include "otlp/encode.h"
#include "otlp/json_encode_common.h"

namespace strata::otlp {
namespace {

class LogJsonEncoder : public internal::JsonEncoderBase {
 public:
  LogJsonEncoder(const LogBatch& batch, std::string* out)
      : JsonEncoderBase(batch, out), logs_(batch) {}

  void Encode() {
    WriteRequest({"resourceLogs", "scopeLogs", "logRecords"}, logs_.logs.scope,
                 [this](uint32_t row) { WriteLogRecord(row); });
  }

 private:
  void WriteLogRecord(size_t i);

  const LogBatch& logs_;
};

// A kEmpty body is omitted, as in the protobuf encoder.
void LogJsonEncoder::WriteLogRecord(size_t i) {
  const LogRecordColumns& l = logs_.logs;
  w_.BeginObject();
  Uint64Field("timeUnixNano", l.time_unix_nano[i]);
  Int32Field("severityNumber", l.severity_number[i]);
  StringField("severityText", l.severity_text[i]);
  if (l.body.type[i] != ValueType::kEmpty) {
    w_.Key("body");
    WriteAnyValue(l.body, i, 0);
  }
  WriteKeyValues("attributes", logs_.log_attributes, l.attributes[i]);
  Uint32Field("droppedAttributesCount", l.dropped_attributes_count[i]);
  Uint32Field("flags", l.flags[i]);
  if (l.has_trace_id[i]) IdField("traceId", l.trace_id[i]);
  if (l.has_span_id[i]) IdField("spanId", l.span_id[i]);
  Uint64Field("observedTimeUnixNano", l.observed_time_unix_nano[i]);
  StringField("eventName", l.event_name[i]);
  w_.EndObject();
}

}  // namespace

std::string EncodeLogsJson(const LogBatch& batch) {
  std::string out;
  out.reserve(2 * internal::EstimateProtoBytes(batch));
  LogJsonEncoder(batch, &out).Encode();
  return out;
}

}  // namespace strata::otlp
