#include "compat/promql/result_json.h"

#include <charconv>
#include <cmath>
#include <cstdio>

#include "absl/strings/str_cat.h"

namespace strata::compat::promql {

std::string FormatFloat(double v) {
  if (std::isnan(v)) return "NaN";
  if (std::isinf(v)) return v > 0 ? "+Inf" : "-Inf";
  if (v == 0) return std::signbit(v) ? "-0" : "0";
  // Shortest round-trip digits in fixed notation, as Go's 'f' with -1.
  char buffer[400];
  const std::to_chars_result r =
      std::to_chars(buffer, buffer + sizeof(buffer), v, std::chars_format::fixed);
  return std::string(buffer, r.ptr);
}

std::string FormatTimestamp(int64_t t_ms) {
  std::string out;
  uint64_t t = static_cast<uint64_t>(t_ms);
  if (t_ms < 0) {
    out.push_back('-');
    t = 0 - t;
  }
  absl::StrAppend(&out, t / 1000);
  const uint64_t fraction = t % 1000;
  if (fraction != 0) {
    char digits[8];
    std::snprintf(digits, sizeof(digits), ".%03u", static_cast<unsigned>(fraction));
    out += digits;
  }
  return out;
}

void AppendJsonString(absl::string_view s, std::string* out) {
  static const char kHex[] = "0123456789abcdef";
  out->push_back('"');
  for (size_t i = 0; i < s.size(); ++i) {
    const auto c = static_cast<unsigned char>(s[i]);
    switch (c) {
      case '"':
        *out += "\\\"";
        continue;
      case '\\':
        *out += "\\\\";
        continue;
      case '\n':
        *out += "\\n";
        continue;
      case '\r':
        *out += "\\r";
        continue;
      case '\t':
        *out += "\\t";
        continue;
      default:
        break;
    }
    if (c < 0x20 || c == '<' || c == '>' || c == '&') {
      *out += "\\u00";
      out->push_back(kHex[c >> 4]);
      out->push_back(kHex[c & 0xF]);
      continue;
    }
    // U+2028 and U+2029 (E2 80 A8/A9) are escaped as Go does.
    if (c == 0xE2 && i + 2 < s.size() && static_cast<unsigned char>(s[i + 1]) == 0x80 &&
        (static_cast<unsigned char>(s[i + 2]) == 0xA8 ||
         static_cast<unsigned char>(s[i + 2]) == 0xA9)) {
      *out += static_cast<unsigned char>(s[i + 2]) == 0xA8 ? "\\u2028" : "\\u2029";
      i += 2;
      continue;
    }
    out->push_back(static_cast<char>(c));
  }
  out->push_back('"');
}

namespace {

void AppendLabels(const Labels& labels, std::string* out) {
  out->push_back('{');
  bool first = true;
  for (const Label& l : labels) {
    if (!first) out->push_back(',');
    first = false;
    AppendJsonString(l.name, out);
    out->push_back(':');
    AppendJsonString(l.value, out);
  }
  out->push_back('}');
}

void AppendPoint(int64_t t_ms, const std::string& value, std::string* out) {
  out->push_back('[');
  *out += FormatTimestamp(t_ms);
  out->push_back(',');
  AppendJsonString(value, out);
  out->push_back(']');
}

}  // namespace

std::string ResultDataJson(const QueryResult& result) {
  std::string out = "{\"resultType\":";
  AppendJsonString(ValueTypeName(result.type), &out);
  out += ",\"result\":";
  switch (result.type) {
    case ValueType::kScalar:
      AppendPoint(result.t_ms, FormatFloat(result.scalar), &out);
      break;
    case ValueType::kString:
      AppendPoint(result.t_ms, result.text, &out);
      break;
    case ValueType::kVector: {
      out.push_back('[');
      bool first = true;
      for (const VectorElement& e : result.vector) {
        if (!first) out.push_back(',');
        first = false;
        out += "{\"metric\":";
        AppendLabels(e.labels, &out);
        out += ",\"value\":";
        AppendPoint(e.t_ms, FormatFloat(e.v), &out);
        out.push_back('}');
      }
      out.push_back(']');
      break;
    }
    case ValueType::kMatrix: {
      out.push_back('[');
      bool first = true;
      for (const MatrixSeries& s : result.matrix) {
        if (!first) out.push_back(',');
        first = false;
        out += "{\"metric\":";
        AppendLabels(s.labels, &out);
        out += ",\"values\":[";
        for (size_t i = 0; i < s.points.size(); ++i) {
          if (i > 0) out.push_back(',');
          AppendPoint(s.points[i].t_ms, FormatFloat(s.points[i].v), &out);
        }
        out += "]}";
      }
      out.push_back(']');
      break;
    }
    case ValueType::kNone:
      out += "null";
      break;
  }
  out.push_back('}');
  return out;
}

}  // namespace strata::compat::promql
