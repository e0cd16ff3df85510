// Fuzz target for the trace endpoints' request text (src/api/trace_path.cc,
// accept_encoding.cc): the input is the path after /api/v1/traces/ as a
// client sends it, also read as a `format` value and an Accept-Encoding
// header. Every parser must return a value or an error, never crash; a
// parsed path must print back to ids that parse to the same path.

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "api/accept_encoding.h"
#include "api/params.h"
#include "api/trace_path.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace strata::api;
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  (void)AcceptsGzip(text);
  (void)ParseTraceForm("format", text);
  (void)ParseSpanId("span_id", text);
  absl::StatusOr<TracePath> path = ParseTracePath(text);
  if (!path.ok()) {
    const absl::StatusCode code = path.status().code();
    if (code != absl::StatusCode::kInvalidArgument && code != absl::StatusCode::kNotFound) {
      __builtin_trap();
    }
    return 0;
  }
  std::string printed = TraceIdHex(path->trace_id);
  if (path->span_id.has_value()) printed += "/spans/" + SpanIdHex(*path->span_id);
  absl::StatusOr<TracePath> again = ParseTracePath(printed);
  if (!again.ok() || again->trace_id != path->trace_id || again->span_id != path->span_id) {
    __builtin_trap();
  }
  return 0;
}
