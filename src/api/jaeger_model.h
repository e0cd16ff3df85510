#pragma once

// OTLP spans in Jaeger's JSON model (the answers of /jaeger/api/*, the
// classic API Jaeger's query service and Grafana's Jaeger data source
// speak; docs/jaeger.md states the mapping field by field):
//
//   trace     {"traceID", "spans", "processes", "warnings"}
//   span      {"traceID", "spanID", "flags"?, "operationName", "references",
//              "startTime", "duration" (microseconds), "tags", "logs",
//              "processID", "warnings"}
//   reference {"refType": "CHILD_OF" (the parent) | "FOLLOWS_FROM" (a link),
//              "traceID", "spanID"}
//   process   {"serviceName" (resource service.name), "tags" (the rest)}
//   key/value {"key", "type": string|bool|int64|float64|binary, "value"}
//   log       {"timestamp" (microseconds), "fields"} from a span event
//
// Span kind, status, scope and trace state become span tags as Jaeger
// writes them (span.kind, error, otel.status_code, otel.status_description,
// otel.scope.name, otel.scope.version, w3c.tracestate). Ids are lowercase
// hex as Jaeger prints them: a trace id whose first 8 bytes are zero in 16
// digits, else 32; span ids in 16.
//
// Every answer is Jaeger's envelope {"data", "total", "limit", "offset",
// "errors"}.
//
// Thread-safety: reentrant. Errors: none (the batches satisfy batch.h's
// invariants).

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "otlp/batch.h"
#include "otlp/json_writer.h"

namespace strata::api {

// The service name of a resource without a string service.name (as
// Jaeger's OTLP translator names it).
inline constexpr std::string_view kJaegerNoServiceName = "OTLPResourceNoServiceName";

// A trace id as Jaeger prints it (see above).
std::string JaegerTraceIdHex(const otlp::TraceId& id);

// Writes one Jaeger trace object per distinct trace id among `batch`'s
// spans, in the order their first spans appear. Processes are numbered
// p1, p2, ... per trace, one per distinct (service name, tags). Returns the
// number of traces written.
size_t WriteJaegerTraces(const otlp::TraceBatch& batch, otlp::JsonWriter* out);

// {"data":[trace, ...],"total":<traces>,"limit":0,"offset":0,"errors":null}
// over every trace of every batch.
std::string JaegerTracesResponse(std::span<const otlp::TraceBatch> traces);

// {"data":["a","b"],"total":2,...}: service and operation names.
std::string JaegerNamesResponse(const std::vector<std::string>& names);

struct JaegerOperation {
  std::string name;
  std::string span_kind;  // "server", "client", ..., "" when unspecified
};
// {"data":[{"name","spanKind"}],"total":n,...}.
std::string JaegerOperationsResponse(const std::vector<JaegerOperation>& operations);

struct JaegerDependency {
  std::string parent;
  std::string child;
  int64_t call_count = 0;
};
// {"data":[{"parent","child","callCount"}],"total":n,...}.
std::string JaegerDependenciesResponse(const std::vector<JaegerDependency>& dependencies);

// {"data":null,"total":0,"limit":0,"offset":0,"errors":[{"code","msg"}]}.
std::string JaegerErrorResponse(int code, std::string_view message);

// "server", "client", "producer", "consumer", "internal" for OTLP span kinds
// 2, 3, 4, 5, 1; "" for any other. And back: nullopt for a name that is none
// of them (the empty name is kind 0, unspecified).
std::string_view JaegerSpanKindName(int32_t kind);
std::optional<int32_t> JaegerSpanKindOf(std::string_view name);

}  // namespace strata::api
