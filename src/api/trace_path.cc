#include "api/trace_path.h"

#include "absl/strings/str_cat.h"
#include "api/params.h"

namespace strata::api {
namespace {

constexpr std::string_view kSpansSegment = "spans";

int HexDigit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

absl::Status UnknownPath(std::string_view rest) {
  return absl::NotFoundError(absl::StrCat(
      "no such endpoint: /api/v1/traces/", QuoteForError(rest),
      " (expected /api/v1/traces/{trace_id} or /api/v1/traces/{trace_id}/spans/{span_id})"));
}

// A path segment percent-decoded ('+' stays '+': it is a space only in a
// query string; no id holds either).
absl::StatusOr<std::string> DecodeSegment(std::string_view name, std::string_view segment) {
  std::string out;
  out.reserve(segment.size());
  for (size_t i = 0; i < segment.size(); ++i) {
    if (segment[i] != '%') {
      out.push_back(segment[i]);
      continue;
    }
    const int hi = i + 2 < segment.size() ? HexDigit(segment[i + 1]) : -1;
    const int lo = i + 2 < segment.size() ? HexDigit(segment[i + 2]) : -1;
    if (hi < 0 || lo < 0) {
      return absl::InvalidArgumentError(
          absl::StrCat(std::string(name), ": bad percent escape in ", QuoteForError(segment)));
    }
    out.push_back(static_cast<char>(hi * 16 + lo));
    i += 2;
  }
  return out;
}

}  // namespace

absl::StatusOr<otlp::SpanId> ParseSpanId(std::string_view name, std::string_view value) {
  otlp::SpanId id{};
  const auto bad = [&] {
    return absl::InvalidArgumentError(
        absl::StrCat(std::string(name), ": not 16 hex digits: ", QuoteForError(value)));
  };
  if (value.size() != 2 * id.size()) return bad();
  bool all_zero = true;
  for (size_t i = 0; i < id.size(); ++i) {
    const int hi = HexDigit(value[2 * i]);
    const int lo = HexDigit(value[2 * i + 1]);
    if (hi < 0 || lo < 0) return bad();
    id[i] = static_cast<uint8_t>(hi * 16 + lo);
    if (id[i] != 0) all_zero = false;
  }
  if (all_zero) {
    return absl::InvalidArgumentError(
        absl::StrCat(std::string(name), ": the all-zero span id is invalid"));
  }
  return id;
}

std::string SpanIdHex(const otlp::SpanId& id) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string out;
  out.reserve(2 * id.size());
  for (uint8_t b : id) {
    out.push_back(kDigits[b >> 4]);
    out.push_back(kDigits[b & 0xf]);
  }
  return out;
}

absl::StatusOr<TraceForm> ParseTraceForm(std::string_view name, std::string_view value) {
  if (value == "otlp") return TraceForm::kOtlp;
  if (value == "columns") return TraceForm::kColumns;
  return absl::InvalidArgumentError(
      absl::StrCat(std::string(name), ": not otlp or columns: ", QuoteForError(value)));
}

absl::StatusOr<TracePath> ParseTracePath(std::string_view rest) {
  // At most three segments: {trace_id}, "spans", {span_id}.
  std::string_view segments[3];
  size_t count = 0;
  std::string_view left = rest;
  for (;;) {
    if (count == 3) return UnknownPath(rest);
    const size_t slash = left.find('/');
    segments[count++] = left.substr(0, slash);
    if (slash == std::string_view::npos) break;
    left.remove_prefix(slash + 1);
  }
  if (count > 1 && segments[1] != kSpansSegment) return UnknownPath(rest);
  TracePath path;
  absl::StatusOr<std::string> trace_text = DecodeSegment("trace_id", segments[0]);
  if (!trace_text.ok()) return trace_text.status();
  absl::StatusOr<otlp::TraceId> trace_id = ParseTraceId("trace_id", *trace_text);
  if (!trace_id.ok()) return trace_id.status();
  path.trace_id = *trace_id;
  path.span_search = count == 2;
  if (count == 3) {
    absl::StatusOr<std::string> span_text = DecodeSegment("span_id", segments[2]);
    if (!span_text.ok()) return span_text.status();
    absl::StatusOr<otlp::SpanId> span_id = ParseSpanId("span_id", *span_text);
    if (!span_id.ok()) return span_id.status();
    path.span_id = *span_id;
  }
  return path;
}

}  // namespace strata::api
