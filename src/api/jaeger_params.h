#pragma once

// The query parameters of Jaeger's classic API (/jaeger/api/*, docs/api.md
// "Jaeger") and of its v3 API (/jaeger/api/v3/*), in Jaeger's units: times in microseconds
// (`start`, `end`), `endTs` and `lookback` of dependencies in milliseconds, durations in Go's form
// ("1.2ms", "100us", "2s"), `lookback` of a search as "1h" or "2d", and `tags` as a JSON object of
// key -> value.
//
// Unlike /api/v1/*, a parameter given empty counts as absent and unknown
// parameters are ignored, as Jaeger's query service does: Jaeger UI sends
// empty ones (`minDuration=`) and extras.
//
// Every error is InvalidArgument naming the parameter (params.h's form).
//
// Thread-safety: reentrant.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "api/params.h"
#include "api/search.h"
#include "otlp/batch.h"

namespace strata::api {

// Most entries of a `tags` object.
inline constexpr size_t kMaxJaegerTags = 32;

// The default and largest `limit` of a trace search.
inline constexpr Limit kJaegerTraceLimit{20, 1000};

// A search window's length when neither `start` nor `lookback` is given.
inline constexpr int64_t kJaegerDefaultLookbackNanos = 3600 * kNanosPerSecond;

// What a tags object asks for: span attributes or resource attributes
// (`attributes`), and the tags strata writes itself mapped back to the
// columns they come from: `error` (true: status ERROR; false: any other
// status), `otel.status_code` (OK / ERROR / UNSET) and `span.kind`.
struct JaegerTags {
  Attributes attributes;
  std::optional<int32_t> status;
  bool status_negated = false;  // a status other than `status`
  std::optional<int32_t> kind;
};

// `text` as a JSON object whose values are strings, numbers or booleans
// (each matched as its text). InvalidArgument naming `name` for anything
// else, more than kMaxJaegerTags entries, or a bad error / otel.status_code
// / span.kind value.
[[nodiscard]] absl::StatusOr<JaegerTags> ParseJaegerTags(std::string_view name,
                                                         std::string_view text);
// Adds the repeated `tag` parameter's "key:value" pairs (the older form
// Jaeger's API accepts; the value is what follows the first ':') to `out`,
// with the limits and mappings of ParseJaegerTags.
[[nodiscard]] absl::Status AddJaegerTagPairs(std::string_view name,
                                             const std::vector<std::string>& pairs,
                                             JaegerTags* out);

// A decimal integer of microseconds, as unix nanoseconds.
[[nodiscard]] absl::StatusOr<int64_t> ParseJaegerMicros(std::string_view name,
                                                        std::string_view value);

// A search lookback: a duration ("15m", "1h") or whole days ("2d"), in
// nanoseconds; nullopt for "custom" (Jaeger UI's word for start/end).
[[nodiscard]] absl::StatusOr<std::optional<int64_t>> ParseJaegerLookback(std::string_view name,
                                                                         std::string_view value);

// 1 to 32 hex digits (either case), padded on the left with zeros (Jaeger
// prints a trace id whose high half is zero in 16 digits), not all zero.
[[nodiscard]] absl::StatusOr<otlp::TraceId> ParseJaegerTraceId(std::string_view value);

// A search's parameters: service, operation, tags, minDuration,
// maxDuration, start, end, lookback, limit, spanKind (as TraceSearch;
// start and end in microseconds; without start, end minus lookback).
[[nodiscard]] absl::StatusOr<TraceSearch> TakeJaegerTraceSearch(QueryParams& params,
                                                                const NowFunction& now);

// A v3 search's parameters (Jaeger's TraceQueryParameters over HTTP GET):
// query.service_name, query.operation_name, query.attributes (a JSON object
// as `tags` above), query.start_time_min and query.start_time_max (RFC 3339
// or unix nanoseconds; both required), query.duration_min and
// query.duration_max (Go durations), query.search_depth (the limit, as
// kJaegerTraceLimit). query.raw_traces is taken and has no effect (strata
// never adjusts traces).
[[nodiscard]] absl::StatusOr<TraceSearch> TakeJaegerV3Search(QueryParams& params);

// The value of `name` unless it is absent or empty.
[[nodiscard]] absl::StatusOr<std::optional<std::string>> TakeJaegerParam(QueryParams& params,
                                                                         std::string_view name);

}  // namespace strata::api
