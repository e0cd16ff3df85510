#pragma once

// The path of a trace-by-id request after "/api/v1/traces/" (docs/api.md):
//
//   {trace_id}                      the trace
//   {trace_id}/spans                the ids of its spans that hold a text
//   {trace_id}/spans/{span_id}      one span of it
//
// Each segment is percent-decoded on its own; ids are hex in either case.
// A path of any other shape is NotFound (an unknown endpoint); a segment in
// an id's place that is not a valid id is InvalidArgument naming it
// ("trace_id: ...", "span_id: ...").
//
// Thread-safety: reentrant.

#include <optional>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "otlp/batch.h"

namespace strata::api {

struct TracePath {
  otlp::TraceId trace_id{};
  std::optional<otlp::SpanId> span_id;
  bool span_search = false;  // {trace_id}/spans
};

// The forms of a whole trace (the `format` parameter): OTLP/JSON, or the
// compact columns (trace_columns.h).
enum class TraceForm { kOtlp, kColumns };

// "otlp" or "columns"; InvalidArgument naming `name` otherwise.
[[nodiscard]] absl::StatusOr<TraceForm> ParseTraceForm(std::string_view name,
                                                       std::string_view value);

// `rest`: what follows "/api/v1/traces/" (no query string).
[[nodiscard]] absl::StatusOr<TracePath> ParseTracePath(std::string_view rest);

// 16 hex digits (either case), not all zero.
[[nodiscard]] absl::StatusOr<otlp::SpanId> ParseSpanId(std::string_view name,
                                                       std::string_view value);
std::string SpanIdHex(const otlp::SpanId& id);

}  // namespace strata::api
