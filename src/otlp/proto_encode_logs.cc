// EncodeLogsProto: LogBatch -> ExportLogsServiceRequest wire bytes.

#include <string>

#include "otlp/encode.h"
#include "otlp/proto_encode_common.h"

namespace strata::otlp {
namespace {

class LogProtoEncoder : public internal::ProtoEncoderBase {
 public:
  LogProtoEncoder(const LogBatch& batch, std::string* out)
      : ProtoEncoderBase(batch, out), logs_(batch) {}

  void Encode() {
    WriteResourceTree(logs_.logs.scope, [this](uint32_t row) { WriteLogRecord(row); });
  }

 private:
  void WriteLogRecord(size_t i);

  const LogBatch& logs_;
};

// A kEmpty body is omitted: LogRecord.body is a message field whose absence
// the decoders read as kEmpty. Ids are written only when the request had them.
void LogProtoEncoder::WriteLogRecord(size_t i) {
  const LogRecordColumns& l = logs_.logs;
  ProtoWriter::Mark record = w_.Open(2);  // ScopeLogs.log_records
  w_.Fixed64(1, l.time_unix_nano[i]);
  w_.Int32(2, l.severity_number[i]);
  w_.String(3, l.severity_text[i]);
  if (l.body.type[i] != ValueType::kEmpty) WriteAnyValue(5, l.body, i, 0);
  WriteKeyValues(6, logs_.log_attributes, l.attributes[i]);
  w_.UInt32(7, l.dropped_attributes_count[i]);
  w_.Fixed32(8, l.flags[i]);
  if (l.has_trace_id[i]) {
    w_.IdAlways(9, l.trace_id[i]);
  }
  if (l.has_span_id[i]) {
    w_.IdAlways(10, l.span_id[i]);
  }
  w_.Fixed64(11, l.observed_time_unix_nano[i]);
  w_.String(12, l.event_name[i]);
  w_.Close(record);
}

}  // namespace

std::string EncodeLogsProto(const LogBatch& batch) {
  std::string out;
  out.reserve(internal::EstimateProtoBytes(batch));
  LogProtoEncoder(batch, &out).Encode();
  return out;
}

}  // namespace strata::otlp
