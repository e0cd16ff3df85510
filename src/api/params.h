#pragma once

// Parsing of REST API query parameters (docs/api.md, "Parameters").
//
// QueryParams splits a query string ("a=1&b=x%20y") into percent-decoded
// names and values and hands them out one name at a time; every name an
// endpoint takes is Take()n, and Finish() then refuses whatever was left,
// so an unknown or misspelt parameter is a 400 rather than silently
// ignored. The Parse* functions turn one value into a typed one.
//
// Every error is InvalidArgument whose message starts with the parameter's
// name and says why, e.g. `start: not RFC 3339 or unix nanoseconds:
// "yesterday"`. Values quoted in messages are cut to 64 bytes.
//
// Thread-safety: QueryParams has a single owner; the functions are
// reentrant.

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "otlp/batch.h"

namespace strata::api {

// Unix nanoseconds, the clock the window defaults come from.
using NowFunction = std::function<int64_t()>;
int64_t SystemNowUnixNano();

inline constexpr int64_t kNanosPerSecond = 1'000'000'000;
inline constexpr int64_t kDefaultWindowNanos = 3600 * kNanosPerSecond;

class QueryParams {
 public:
  // Splits and percent-decodes `query` (the part of the target after '?').
  // '+' decodes to a space. InvalidArgument for a malformed escape or an
  // empty name.
  [[nodiscard]] static absl::StatusOr<QueryParams> Parse(std::string_view query);

  // The value of `name`, or nullopt when absent. InvalidArgument when it is
  // given more than once. Marks it used.
  [[nodiscard]] absl::StatusOr<std::optional<std::string>> Take(std::string_view name);

  // Every value of `name` in order (`match[]` may be given many times);
  // marks them used.
  std::vector<std::string> TakeAll(std::string_view name);

  // Every `attr.<key>=<value>` pair in order (key without the prefix); marks
  // them used. InvalidArgument for an empty key.
  [[nodiscard]] absl::StatusOr<std::vector<std::pair<std::string, std::string>>> TakeAttributes();

  // Every `<prefix><rest>=<value>` pair in order (`rest` without the
  // prefix); marks them used. InvalidArgument for an empty `rest`.
  [[nodiscard]] absl::StatusOr<std::vector<std::pair<std::string, std::string>>> TakePrefixed(
      std::string_view prefix);

  // InvalidArgument naming the first parameter nobody took.
  [[nodiscard]] absl::Status Finish() const;

 private:
  struct Entry {
    std::string name;
    std::string value;
    bool used = false;
  };
  std::vector<Entry> entries_;
};

// Decodes %XX escapes and '+'. InvalidArgument for a bad escape.
[[nodiscard]] absl::StatusOr<std::string> PercentDecode(std::string_view text);
// Appends `text` to `out` with every byte but the unreserved ones (letters,
// digits, '-', '_', '.', '~') as %XX: for a query parameter's name or value.
void PercentEncode(std::string_view text, std::string* out);

// RFC 3339 ("2026-11-30T06:00:00Z", "2026-11-30T07:00:00.250+01:00"; 'T' or
// 't' or ' ', 'Z' or 'z', any number of fraction digits, nanoseconds kept
// and further digits dropped) or an integer of unix nanoseconds. Times
// before 1970 or past 2262 are refused.
[[nodiscard]] absl::StatusOr<int64_t> ParseTime(std::string_view name, std::string_view value);

// "250ms", "1.5s", "2m", "1h", "500us" (or "µs"), "100ns", or a bare integer
// of nanoseconds. Must be >= 0 and fit int64 nanoseconds.
[[nodiscard]] absl::StatusOr<int64_t> ParseDuration(std::string_view name, std::string_view value);

// A Prometheus time: unix seconds with an optional fraction
// ("1700000000", "1700000000.123") or RFC 3339. In milliseconds, as
// Prometheus keeps them (a fraction past the millisecond is rounded off).
[[nodiscard]] absl::StatusOr<int64_t> ParsePromTime(std::string_view name, std::string_view value);

// A Prometheus duration: seconds with an optional fraction ("15", "0.5") or
// units ms s m h d w y in order ("1h30m", "5m"). In milliseconds; positive.
[[nodiscard]] absl::StatusOr<int64_t> ParsePromDuration(std::string_view name,
                                                        std::string_view value);

// A decimal integer in [min, max].
[[nodiscard]] absl::StatusOr<int64_t> ParseInteger(std::string_view name, std::string_view value,
                                                   int64_t min, int64_t max);

// 32 hex digits (either case), not all zero.
[[nodiscard]] absl::StatusOr<otlp::TraceId> ParseTraceId(std::string_view name,
                                                         std::string_view value);
std::string TraceIdHex(const otlp::TraceId& id);
// 1 to 32 hex digits, as Tempo and Jaeger print ids with their leading
// zeros trimmed: padded back, then as ParseTraceId.
[[nodiscard]] absl::StatusOr<otlp::TraceId> ParseTrimmedTraceId(std::string_view name,
                                                                std::string_view value);

// 1..24, or TRACE, DEBUG, INFO, WARN, ERROR, FATAL (any case; the lowest
// number of the range: 1, 5, 9, 13, 17, 21).
[[nodiscard]] absl::StatusOr<int32_t> ParseSeverity(std::string_view name, std::string_view value);

// Span status codes: "unset" 0, "ok" 1, "error" 2.
[[nodiscard]] absl::StatusOr<int32_t> ParseStatus(std::string_view name, std::string_view value);

struct Limit {
  int64_t default_value;
  int64_t max_value;
};
// `limit` from `params` (1..max), or the default.
[[nodiscard]] absl::StatusOr<int64_t> TakeLimit(QueryParams& params, Limit limit);

// A closed-open query window [start, end) in unix nanoseconds.
struct TimeWindow {
  int64_t start = 0;
  int64_t end = 0;
};
// `start` and `end` from `params`. Defaults: end = now, start = end - 1h.
// InvalidArgument when start is not before end.
[[nodiscard]] absl::StatusOr<TimeWindow> TakeWindow(QueryParams& params, const NowFunction& now);

// Quotes `value` for an error message, cut to 64 bytes.
std::string QuoteForError(std::string_view value);

}  // namespace strata::api
