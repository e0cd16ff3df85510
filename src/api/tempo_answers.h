#pragma once

// The Tempo API's answers and parameters (GET /tempo/api/..., docs/tempo.md),
// apart from the HTTP plumbing in tempo_endpoints.cc, so tests and fuzzing
// reach them directly.
//
// Thread-safety: reentrant. Errors: InvalidArgument naming the parameter.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "api/traceql_search.h"
#include "otlp/batch.h"

namespace strata::api {

// A trace id as Tempo clients send it: 1 to 32 hex digits (leading zeros
// may be trimmed; they are padded back).
[[nodiscard]] absl::StatusOr<otlp::TraceId> ParseTempoTraceId(std::string_view text);

// Tempo's `start` / `end`: unix seconds.
[[nodiscard]] absl::StatusOr<int64_t> ParseUnixSeconds(std::string_view name,
                                                       std::string_view value);

// Tempo's `tags` (logfmt: `key=value key2="quoted value"`) as a TraceQL
// filter: each tag a condition on the span's or its resource's attribute,
// matching the string, or the number or boolean it spells.
[[nodiscard]] absl::StatusOr<std::string> TagsToTraceQL(std::string_view tags);

// The search answer in Tempo's schema (SearchResponse as JSON).
std::string TempoSearchJson(const std::vector<TraceQLTrace>& traces);

// A trace in Tempo's protobuf: with `wrapped`, a TraceByIDResponse (v2),
// else a Trace (v1); `otlp_request` is the trace as an OTLP
// ExportTraceServiceRequest, whose field 1 (the resource spans) is the
// Trace's field 1.
std::string TempoTraceProto(std::string_view otlp_request, bool wrapped);

// A trace in Tempo's JSON: {"trace":{"resourceSpans":[...]}} (v2) or
// {"batches":[...]} (v1), from the trace's OTLP/JSON.
std::string TempoTraceJson(std::string_view otlp_json, bool v2);

}  // namespace strata::api
