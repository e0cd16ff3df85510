// DecodeLogsJson: ExportLogsServiceRequest in OTLP/JSON into a LogBatch.
// The shared machinery is in json_decode_common.h; this file knows
// LogRecord.

#include <string_view>

#include "otlp/decode.h"
#include "otlp/json_decode_common.h"

namespace strata::otlp {
namespace {

using json_internal::FieldTable;
using json_internal::JsonReader;
using json_internal::PathFrame;
namespace od = json_internal::od;

const json_internal::SignalTables& LogTables() {
  static const FieldTable* const root = new FieldTable({{0, "resourceLogs", "resource_logs"}});
  static const FieldTable* const resource_logs = new FieldTable({
      {0, "resource", "resource"},
      {1, "scopeLogs", "scope_logs"},
      {2, "schemaUrl", "schema_url"},
  });
  static const FieldTable* const scope_logs = new FieldTable({
      {0, "scope", "scope"},
      {1, "logRecords", "log_records"},
      {2, "schemaUrl", "schema_url"},
  });
  static const json_internal::SignalTables tables{root, resource_logs, scope_logs};
  return tables;
}

enum LogField {
  kTime,
  kObservedTime,
  kSeverityNumber,
  kSeverityText,
  kBody,
  kAttributes,
  kDroppedAttributes,
  kFlags,
  kTraceId,
  kSpanId,
  kEventName,
};

const FieldTable& LogFields() {
  static const FieldTable* const table = new FieldTable({
      {kTime, "timeUnixNano", "time_unix_nano"},
      {kObservedTime, "observedTimeUnixNano", "observed_time_unix_nano"},
      {kSeverityNumber, "severityNumber", "severity_number"},
      {kSeverityText, "severityText", "severity_text"},
      {kBody, "body", "body"},
      {kAttributes, "attributes", "attributes"},
      {kDroppedAttributes, "droppedAttributesCount", "dropped_attributes_count"},
      {kFlags, "flags", "flags"},
      {kTraceId, "traceId", "trace_id"},
      {kSpanId, "spanId", "span_id"},
      {kEventName, "eventName", "event_name"},
  });
  return *table;
}

// SeverityNumber value names, indexed by value (0..24).
constexpr std::string_view kSeverityNames[] = {
    "SEVERITY_NUMBER_UNSPECIFIED", "SEVERITY_NUMBER_TRACE",  "SEVERITY_NUMBER_TRACE2",
    "SEVERITY_NUMBER_TRACE3",      "SEVERITY_NUMBER_TRACE4", "SEVERITY_NUMBER_DEBUG",
    "SEVERITY_NUMBER_DEBUG2",      "SEVERITY_NUMBER_DEBUG3", "SEVERITY_NUMBER_DEBUG4",
    "SEVERITY_NUMBER_INFO",        "SEVERITY_NUMBER_INFO2",  "SEVERITY_NUMBER_INFO3",
    "SEVERITY_NUMBER_INFO4",       "SEVERITY_NUMBER_WARN",   "SEVERITY_NUMBER_WARN2",
    "SEVERITY_NUMBER_WARN3",       "SEVERITY_NUMBER_WARN4",  "SEVERITY_NUMBER_ERROR",
    "SEVERITY_NUMBER_ERROR2",      "SEVERITY_NUMBER_ERROR3", "SEVERITY_NUMBER_ERROR4",
    "SEVERITY_NUMBER_FATAL",       "SEVERITY_NUMBER_FATAL2", "SEVERITY_NUMBER_FATAL3",
    "SEVERITY_NUMBER_FATAL4",
};

class LogDecoder {
 public:
  LogDecoder(JsonReader* reader, LogBatch* batch) : r_(*reader), b_(*batch) {}

  absl::Status Root(od::value& v, const PathFrame& f) {
    return r_.DecodeSignal(
        v, f, LogTables(),
        [&](od::value& e, const PathFrame& ef, uint32_t scope) { return LogRecord(e, ef, scope); });
  }

 private:
  absl::Status LogRecord(od::value& v, const PathFrame& f, uint32_t scope);
  // Ids are read into `ids` for CheckLogIds; the rest into `row`.
  struct Ids {
    internal::IdLength trace_id;
    internal::IdLength span_id;
  };
  absl::Status LogField(int id, od::value& v, const PathFrame& f, LogRecordRow* row, Ids* ids);

  JsonReader& r_;
  LogBatch& b_;
};

absl::Status LogDecoder::LogRecord(od::value& v, const PathFrame& f, uint32_t scope) {
  LogRecordRow row;
  row.scope = scope;
  row.attributes = JsonReader::EmptyRangeAtEnd(b_.log_attributes);
  Ids ids;
  absl::Status s = r_.ForEachField(
      v, f, LogFields(),
      [&](int id, od::value& fv, const PathFrame& ff) { return LogField(id, fv, ff, &row, &ids); });
  if (!s.ok()) return s;
  internal::CheckLogIds(&b_, ids.trace_id, ids.span_id, &row);
  b_.logs.Append(row);
  return absl::OkStatus();
}

absl::Status LogDecoder::LogField(int id, od::value& v, const PathFrame& f, LogRecordRow* row,
                                  Ids* ids) {
  switch (id) {
    case kTime:
      return r_.Uint64(v, f, &row->time_unix_nano);
    case kObservedTime:
      return r_.Uint64(v, f, &row->observed_time_unix_nano);
    case kSeverityNumber:
      return r_.Enum(v, f, kSeverityNames, &row->severity_number);
    case kSeverityText:
      return r_.String(v, f, &row->severity_text);
    case kBody:
      return r_.AnyValue(v, f, 0, &row->body);
    case kAttributes:
      return r_.Attributes(v, f, &b_.log_attributes, &row->attributes);
    case kDroppedAttributes:
      return r_.Uint32(v, f, &row->dropped_attributes_count);
    case kFlags:
      return r_.Uint32(v, f, &row->flags);
    case kTraceId:
      return r_.HexIdOrInvalid(v, f, row->trace_id, &ids->trace_id);
    case kSpanId:
      return r_.HexIdOrInvalid(v, f, row->span_id, &ids->span_id);
    case kEventName:
      return r_.String(v, f, &row->event_name);
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status DecodeLogsJson(std::string_view json, LogBatch* batch, const DecodeLimits& limits) {
  return json_internal::DecodeDocument(
      json, limits, batch,
      [](JsonReader& reader, od::value& root, const PathFrame& frame, LogBatch* target) {
        return LogDecoder(&reader, target).Root(root, frame);
      });
}

}  // namespace strata::otlp
