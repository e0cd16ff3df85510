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

// One AnyValue, and one list of attributes, on their own in OTLP/JSON,
// written exactly as the request encoders write them inside a request
// ({"stringValue":"a"}, {"intValue":"3"}, {"kvlistValue":{"values":[...]}},
// {} for an empty value; [{"key":"k","value":{...}}, ...], [] for none).
// Array and kvlist children are read from batch.nested_values and
// batch.nested_attributes. The REST API's log answers use these, so a value
// reads the same there as in GET /api/v1/traces/{id}.
std::string EncodeAnyValueJson(const BatchBase& batch, const ValueColumns& values, size_t row);
std::string EncodeKeyValuesJson(const BatchBase& batch, const AttributeColumns& attributes,
                                Range rows);
// Resource row `row` of `batch` as the OTLP/JSON Resource object a request
// encoder writes under "resource" ({} for an empty one; the REST API's
// compact trace form lists each distinct resource once this way).
std::string EncodeResourceJson(const BatchBase& batch, size_t row);

}  // namespace strata::otlp
