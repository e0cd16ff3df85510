// otlp/any_value_path.h and AppendAnyValueStrings on untrusted input: the
// path text of REST body.<path>= and of the SQL function
// otlp_value_path_equals, and stored AnyValue bytes. The first byte says
// how long the path is; the rest is the AnyValue. Checks: a parsed path has
// 1..kMaxValuePathSegments non-empty segments; AppendAnyValueStrings (which
// reads the wire directly) lists exactly the strings of the value the
// decoder builds, whenever the decoder accepts the bytes.

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

#include "otlp/any_value_codec.h"
#include "otlp/any_value_path.h"
#include "otlp/batch.h"

namespace {

using namespace strata::otlp;

void Collect(const BatchBase& batch, const ValueColumns& values, size_t row,
             std::vector<std::string_view>* out) {
  const ValueType type = values.type[row];
  const Range children = values.children_at(row);
  if (type == ValueType::kString) {
    out->push_back(values.str[row]);
  } else if (type == ValueType::kArray) {
    for (uint32_t c = children.begin; c < children.end(); ++c) {
      Collect(batch, batch.nested_values, c, out);
    }
  } else if (type == ValueType::kKvList) {
    for (uint32_t c = children.begin; c < children.end(); ++c) {
      Collect(batch, batch.nested_attributes.value, c, out);
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const size_t path_size = std::min<size_t>(data[0], size - 1);
  const std::string_view path(reinterpret_cast<const char*>(data + 1), path_size);
  const std::string_view bytes(reinterpret_cast<const char*>(data + 1 + path_size),
                               size - 1 - path_size);

  BatchBase batch;
  ValueRow top;
  if (DecodeAnyValueProto(bytes, &batch, &top).ok()) {
    ValueColumns values;
    values.Append(top);
    std::vector<std::string_view> expected, found;
    Collect(batch, values, 0, &expected);
    if (!AppendAnyValueStrings(bytes, &found).ok() || found != expected) __builtin_trap();
  }

  auto segments = ParseValuePath(path);
  if (!segments.ok()) return 0;
  if (segments->empty() || segments->size() > kMaxValuePathSegments) __builtin_trap();
  for (const auto& segment : *segments) {
    if (segment.empty()) __builtin_trap();
  }
  (void)AnyValuePathEquals(bytes, *segments, ParseValueMatch(path));
  return 0;
}
