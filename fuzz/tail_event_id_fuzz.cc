// Fuzz target for a live tail's Last-Event-ID (src/api/tail_event_id.cc):
// the input is the header's value as a client sends it. Parsing returns an
// id or InvalidArgument, never crashes, and a parsed id formats to text
// that parses back to the same id.

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "api/tail_event_id.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace strata::api;
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  absl::StatusOr<TailEventId> id = ParseTailEventId(text);
  if (!id.ok()) {
    if (id.status().code() != absl::StatusCode::kInvalidArgument) __builtin_trap();
    return 0;
  }
  absl::StatusOr<TailEventId> again = ParseTailEventId(FormatTailEventId(id->batch, id->row));
  if (!again.ok() || again->batch != id->batch || again->row != id->row) __builtin_trap();
  return 0;
}
