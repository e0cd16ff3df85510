// otlp::ParseValuePath on untrusted text (REST body.<path>=, the SQL
// function otlp_value_path_equals), then AnyValuePathEquals over the rest
// of the input as a stored AnyValue. The first byte says how long the
// path is.

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "otlp/any_value_path.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const size_t path_size = std::min<size_t>(data[0], size - 1);
  const std::string_view path(reinterpret_cast<const char*>(data + 1), path_size);
  const std::string_view bytes(reinterpret_cast<const char*>(data + 1 + path_size),
                               size - 1 - path_size);
  auto segments = strata::otlp::ParseValuePath(path);
  if (!segments.ok()) return 0;
  if (segments->empty() || segments->size() > strata::otlp::kMaxValuePathSegments) __builtin_trap();
  for (const auto& segment : *segments) {
    if (segment.empty()) __builtin_trap();
  }
  (void)strata::otlp::AnyValuePathEquals(bytes, *segments, strata::otlp::ParseValueMatch(path));
  return 0;
}
