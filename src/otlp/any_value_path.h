#pragma once

// Paths into one AnyValue: the value a kvlist (or array) body holds at
// `code`, `user.id` or `items.0` (REST `body.<path>=<value>`, docs/api.md;
// the query adapter's DuckDB function otlp_value_path_equals).
//
// Path syntax: segments separated by '.'; inside a segment "\." is a dot
// and "\\" a backslash (so the key "http.status" is written
// "http\.status"). No other backslash escape exists, and no segment is
// empty. At a kvlist a segment selects the first entry with that key (as
// attribute filters take a key's first occurrence); at an array a segment
// of decimal digits without a leading zero ("0", "12") selects that element,
// counting from 0; anything else selects nothing.
//
// Thread-safety: reentrant. Errors: InvalidArgument saying what is wrong
// with a path; DecodeAnyValueProto's for bytes that do not decode.

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "otlp/decode.h"

namespace strata::otlp {

inline constexpr size_t kMaxValuePathSegments = 32;

// The segments of `text`, unescaped. InvalidArgument for an empty path or
// segment, a backslash not followed by '.' or '\', or more than
// kMaxValuePathSegments segments.
[[nodiscard]] absl::StatusOr<std::vector<std::string>> ParseValuePath(std::string_view text);

// A value to compare with, read as attribute filters read one: always as a
// string, and also as an int64, a finite double or a bool when the whole
// text parses as one.
struct ValueMatch {
  std::string text;
  std::optional<int64_t> as_int;
  std::optional<double> as_double;
  std::optional<bool> as_bool;
};
ValueMatch ParseValueMatch(std::string_view text);

// Whether the value at `path` inside one encoded AnyValue message body
// (docs/format/attributes.md) equals `match`: a string equal to
// match.text, an int equal to as_int, a double equal to as_double, a bool
// equal to as_bool. Bytes, empty values, arrays and kvlists never match,
// and neither does a path that leads nowhere.
[[nodiscard]] absl::StatusOr<bool> AnyValuePathEquals(std::string_view bytes,
                                                      const std::vector<std::string>& path,
                                                      const ValueMatch& match,
                                                      const DecodeLimits& limits = {});

}  // namespace strata::otlp
