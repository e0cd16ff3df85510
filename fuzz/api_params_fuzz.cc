// Fuzz target for the REST API's parameter parsing (src/api/params.cc, the
// Prometheus API's times and durations included): the
// input is an HTTP query string as a client sends it. Every parser must
// return a value or InvalidArgument, never crash, a parsed trace id must
// print back to the hex it came from, and a parsed log search cursor must
// print to text that parses back to the same cursor.

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "api/log_cursor.h"
#include "api/params.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace strata::api;
  const std::string_view query(reinterpret_cast<const char*>(data), size);
  absl::StatusOr<QueryParams> params = QueryParams::Parse(query);
  (void)PercentDecode(query);
  (void)ParseTime("start", query);
  (void)ParseDuration("min_duration", query);
  (void)ParseInteger("limit", query, 0, 1000);
  (void)ParseSeverity("severity_min", query);
  (void)ParseStatus("status", query);
  if (absl::StatusOr<int64_t> ms = ParsePromTime("time", query); ms.ok() && *ms < 0) {
    __builtin_trap();
  }
  if (absl::StatusOr<int64_t> ms = ParsePromDuration("step", query); ms.ok() && *ms <= 0) {
    __builtin_trap();
  }
  if (absl::StatusOr<strata::otlp::TraceId> id = ParseTraceId("trace_id", query); id.ok()) {
    std::string lower(query);
    for (char& c : lower) c = static_cast<char>(c >= 'A' && c <= 'Z' ? c + 32 : c);
    if (TraceIdHex(*id) != lower) __builtin_trap();
  }
  if (absl::StatusOr<internal::LogCursor> cursor = internal::DecodeLogCursor(query); cursor.ok()) {
    absl::StatusOr<internal::LogCursor> again =
        internal::DecodeLogCursor(internal::EncodeLogCursor(*cursor));
    if (!again.ok() || again->time != cursor->time || again->key != cursor->key ||
        again->shown != cursor->shown) {
      __builtin_trap();
    }
  }
  if (!params.ok()) return 0;
  (void)params->TakeAttributes();
  (void)TakeLimit(*params, Limit{20, 1000});
  (void)TakeWindow(*params, [] { return int64_t{1'750'000'000'000'000'000}; });
  for (const char* name : {"service", "operation", "q", "cursor", "trace_id"}) {
    (void)params->Take(name);
  }
  (void)params->Finish();
  return 0;
}
