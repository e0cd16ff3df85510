#include "otlp/any_value_path.h"

#include <charconv>
#include <cmath>

#include "absl/strings/str_cat.h"
#include "otlp/any_value_codec.h"
#include "otlp/batch.h"

namespace strata::otlp {
namespace {

// The array index a segment names, or nullopt.
std::optional<uint32_t> ArrayIndex(std::string_view segment) {
  if (segment.empty() || segment.size() > 9 || (segment.size() > 1 && segment[0] == '0')) {
    return std::nullopt;
  }
  uint32_t index = 0;
  for (char c : segment) {
    if (c < '0' || c > '9') return std::nullopt;
    index = index * 10 + static_cast<uint32_t>(c - '0');
  }
  return index;
}

bool ValueEquals(const ValueColumns& values, size_t row, const ValueMatch& match) {
  switch (values.type[row]) {
    case ValueType::kString:
      return values.str[row] == match.text;
    case ValueType::kInt:
      return match.as_int.has_value() && values.int_at(row) == *match.as_int;
    case ValueType::kDouble:
      return match.as_double.has_value() && values.double_at(row) == *match.as_double;
    case ValueType::kBool:
      return match.as_bool.has_value() && values.bool_at(row) == *match.as_bool;
    case ValueType::kEmpty:
    case ValueType::kArray:
    case ValueType::kKvList:
    case ValueType::kBytes:
      return false;
  }
  return false;
}

}  // namespace

absl::StatusOr<std::vector<std::string>> ParseValuePath(std::string_view text) {
  auto bad = [&](const std::string& why) {
    return absl::InvalidArgumentError(absl::StrCat("path ", why));
  };
  if (text.empty()) return bad("is empty");
  std::vector<std::string> segments(1);
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '\\') {
      if (i + 1 == text.size() || (text[i + 1] != '.' && text[i + 1] != '\\')) {
        return bad("has a backslash not followed by '.' or '\\'");
      }
      segments.back().push_back(text[++i]);
    } else if (c == '.') {
      if (segments.back().empty()) return bad("has an empty segment");
      if (segments.size() == kMaxValuePathSegments) {
        return bad(absl::StrCat("has more than ", kMaxValuePathSegments, " segments"));
      }
      segments.emplace_back();
    } else {
      segments.back().push_back(c);
    }
  }
  if (segments.back().empty()) return bad("has an empty segment");
  return segments;
}

ValueMatch ParseValueMatch(std::string_view text) {
  ValueMatch match;
  match.text = std::string(text);
  const char* end = text.data() + text.size();
  int64_t as_int = 0;
  if (auto [p, ec] = std::from_chars(text.data(), end, as_int);
      !text.empty() && ec == std::errc() && p == end) {
    match.as_int = as_int;
  }
  double as_double = 0;
  if (auto [p, ec] = std::from_chars(text.data(), end, as_double);
      !text.empty() && ec == std::errc() && p == end && std::isfinite(as_double)) {
    match.as_double = as_double;
  }
  if (text == "true" || text == "false") match.as_bool = text == "true";
  return match;
}

absl::StatusOr<bool> AnyValuePathEquals(std::string_view bytes,
                                        const std::vector<std::string>& path,
                                        const ValueMatch& match, const DecodeLimits& limits) {
  BatchBase scratch;
  ValueRow top;
  if (absl::Status s = DecodeAnyValueProto(bytes, &scratch, &top, limits); !s.ok()) return s;
  ValueColumns root;
  root.Append(top);
  const ValueColumns* values = &root;
  size_t row = 0;
  // Each step goes one level down; the decoder bounded the depth.
  for (const std::string& segment : path) {
    const ValueType type = values->type[row];
    const Range children = values->children_at(row);
    if (type == ValueType::kKvList) {
      const AttributeColumns& entries = scratch.nested_attributes;
      std::optional<size_t> found;
      for (uint32_t c = children.begin; c < children.end(); ++c) {
        if (entries.key[c] == segment) {
          found = c;
          break;
        }
      }
      if (!found.has_value()) return false;
      values = &entries.value;
      row = *found;
    } else if (type == ValueType::kArray) {
      const std::optional<uint32_t> index = ArrayIndex(segment);
      if (!index.has_value() || *index >= children.count) return false;
      values = &scratch.nested_values;
      row = children.begin + *index;
    } else {
      return false;
    }
  }
  return ValueEquals(*values, row, match);
}

}  // namespace strata::otlp
