#pragma once

// OTLP encoders: columnar batches back to ExportXServiceRequest bytes, in the
// protobuf wire format or OTLP/JSON. Decoding an encoder's output yields a
// batch equal to the input (the round-trip tests hold them to that).
//
// Protobuf output writes fields in field-number order and omits fields at
// their default value, as libprotobuf does. JSON output follows the OTLP/JSON
// encoding: lowerCamelCase names, hex trace and span ids, 64-bit integers as
// decimal strings, enums as integers, bytes as base64, non-finite doubles as
// "NaN", "Infinity" and "-Infinity".
//
// Thread-safety: reentrant; the batch is only read.

#include <string>

#include "otlp/batch.h"

namespace strata::otlp {

std::string EncodeTracesProto(const TraceBatch& batch);
std::string EncodeLogsProto(const LogBatch& batch);
std::string EncodeMetricsProto(const MetricBatch& batch);

std::string EncodeTracesJson(const TraceBatch& batch);
std::string EncodeLogsJson(const LogBatch& batch);
std::string EncodeMetricsJson(const MetricBatch& batch);

}  // namespace strata::otlp
