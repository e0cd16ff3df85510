#include "api/tempo_answers.h"

#include <charconv>
#include <cmath>

#include "absl/strings/str_cat.h"
#include "api/params.h"
#include "common/status_macros.h"
#include "otlp/json_writer.h"

namespace strata::api {
namespace {

void AppendVarint(uint64_t value, std::string* out) {
  while (value >= 0x80) {
    out->push_back(static_cast<char>((value & 0x7f) | 0x80));
    value >>= 7;
  }
  out->push_back(static_cast<char>(value));
}

// A TraceQL string literal of `text`.
std::string Quoted(std::string_view text) {
  std::string out = "\"";
  for (char c : text) {
    if (c == '"' || c == '\\') out.push_back('\\');
    out.push_back(c);
  }
  out.push_back('"');
  return out;
}

bool IsNumber(std::string_view text) {
  if (text.empty()) return false;
  double value = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size() || !std::isfinite(value)) return false;
  // TraceQL numbers: digits, one optional '.', an optional leading '-'.
  size_t i = text[0] == '-' ? 1 : 0;
  bool digits = false, dot = false;
  for (; i < text.size(); ++i) {
    if (text[i] >= '0' && text[i] <= '9') {
      digits = true;
    } else if (text[i] == '.' && !dot && digits && i + 1 < text.size()) {
      dot = true;
    } else {
      return false;
    }
  }
  return digits;
}

void WriteSpan(const MatchedSpan& span, otlp::JsonWriter& json) {
  json.BeginObject();
  json.Key("spanID");
  json.String(span.span_id);
  json.Key("name");
  json.String(span.name);
  json.Key("startTimeUnixNano");
  json.UintString(static_cast<uint64_t>(span.start));
  json.Key("durationNanos");
  json.UintString(static_cast<uint64_t>(span.duration));
  json.Key("attributes");
  json.BeginArray();
  json.BeginObject();
  json.Key("key");
  json.String("service.name");
  json.Key("value");
  json.BeginObject();
  json.Key("stringValue");
  json.String(span.service);
  json.EndObject();
  json.EndObject();
  for (const auto& [name, value] : span.selected) {
    if (!value.has_value()) continue;
    json.BeginObject();
    json.Key("key");
    json.String(name);
    json.Key("value");
    json.BeginObject();
    json.Key("stringValue");
    json.String(*value);
    json.EndObject();
    json.EndObject();
  }
  json.EndArray();
  json.EndObject();
}

void WriteSpanSet(const TraceQLTrace& trace, otlp::JsonWriter& json) {
  json.BeginObject();
  json.Key("spans");
  json.BeginArray();
  for (const MatchedSpan& span : trace.spans) WriteSpan(span, json);
  json.EndArray();
  json.Key("matched");
  json.Int(trace.matched);
  json.EndObject();
}

}  // namespace

absl::StatusOr<otlp::TraceId> ParseTempoTraceId(std::string_view text) {
  return ParseTrimmedTraceId("trace id", text);
}

absl::StatusOr<int64_t> ParseUnixSeconds(std::string_view name, std::string_view value) {
  STRATA_ASSIGN_OR_RETURN(const int64_t seconds,
                          ParseInteger(name, value, 0, INT64_MAX / 1'000'000'000));
  return seconds * 1'000'000'000;
}

absl::StatusOr<std::string> TagsToTraceQL(std::string_view tags) {
  std::vector<std::string> conditions;
  size_t i = 0;
  auto bad = [&](std::string_view what) {
    return absl::InvalidArgumentError(
        absl::StrCat("tags: ", std::string(what), " at byte ", i + 1, " of ", QuoteForError(tags)));
  };
  while (true) {
    while (i < tags.size() && (tags[i] == ' ' || tags[i] == '\t')) ++i;
    if (i >= tags.size()) break;
    const size_t key_start = i;
    while (i < tags.size() && tags[i] != '=' && tags[i] != ' ' && tags[i] != '"') ++i;
    if (i >= tags.size() || tags[i] != '=' || i == key_start) return bad("expected key=value");
    const std::string_view key = tags.substr(key_start, i - key_start);
    ++i;
    std::string value;
    if (i < tags.size() && tags[i] == '"') {
      ++i;
      bool closed = false;
      while (i < tags.size()) {
        if (tags[i] == '\\' && i + 1 < tags.size()) {
          value.push_back(tags[i + 1]);
          i += 2;
          continue;
        }
        if (tags[i] == '"') {
          closed = true;
          ++i;
          break;
        }
        value.push_back(tags[i++]);
      }
      if (!closed) return bad("a quoted value that does not end");
    } else {
      while (i < tags.size() && tags[i] != ' ' && tags[i] != '\t') value.push_back(tags[i++]);
    }
    const std::string field = absl::StrCat(".", Quoted(key));
    std::string condition = absl::StrCat(field, " = ", Quoted(value));
    if (IsNumber(value)) {
      condition = absl::StrCat("(", condition, " || ", field, " = ", value, ")");
    } else if (value == "true" || value == "false") {
      condition = absl::StrCat("(", condition, " || ", field, " = ", value, ")");
    }
    conditions.push_back(std::move(condition));
    if (conditions.size() > 50) return bad("more than 50 tags");
  }
  if (conditions.empty()) return std::string("{}");
  std::string out = "{ ";
  for (size_t c = 0; c < conditions.size(); ++c) {
    absl::StrAppend(&out, c == 0 ? "" : " && ", conditions[c]);
  }
  absl::StrAppend(&out, " }");
  return out;
}

std::string TempoSearchJson(const std::vector<TraceQLTrace>& traces) {
  std::string out;
  otlp::JsonWriter json(&out);
  json.BeginObject();
  json.Key("traces");
  json.BeginArray();
  for (const TraceQLTrace& trace : traces) {
    const TraceSummary& summary = trace.summary;
    json.BeginObject();
    json.Key("traceID");
    json.String(summary.trace_id);
    json.Key("rootServiceName");
    json.String(summary.root_service.empty() ? "<root span not yet received>"
                                             : summary.root_service);
    json.Key("rootTraceName");
    json.String(summary.root_name);
    json.Key("startTimeUnixNano");
    json.UintString(static_cast<uint64_t>(summary.start));
    const int64_t duration_ms = summary.duration / 1'000'000;
    if (duration_ms > 0) {
      json.Key("durationMs");
      json.Int(duration_ms);
    }
    json.Key("spanSet");
    WriteSpanSet(trace, json);
    json.Key("spanSets");
    json.BeginArray();
    WriteSpanSet(trace, json);
    json.EndArray();
    json.Key("serviceStats");
    json.BeginObject();
    for (const auto& [service, spans] : summary.service_spans) {
      json.Key(service);
      json.BeginObject();
      json.Key("spanCount");
      json.Int(spans);
      json.EndObject();
    }
    json.EndObject();
    json.EndObject();
  }
  json.EndArray();
  json.Key("metrics");
  json.BeginObject();
  json.Key("inspectedTraces");
  json.Int(static_cast<int64_t>(traces.size()));
  json.Key("completedJobs");
  json.Int(1);
  json.Key("totalJobs");
  json.Int(1);
  json.EndObject();
  json.EndObject();
  return out;
}

std::string TempoTraceProto(std::string_view otlp_request, bool wrapped) {
  if (!wrapped) return std::string(otlp_request);
  std::string out;
  out.push_back(static_cast<char>(0x0a));  // field 1 (trace), length-delimited
  AppendVarint(otlp_request.size(), &out);
  out.append(otlp_request);
  return out;
}

std::string TempoTraceJson(std::string_view otlp_json, bool v2) {
  if (v2) return absl::StrCat("{\"trace\":", std::string(otlp_json), "}");
  constexpr std::string_view kPrefix = "{\"resourceSpans\":";
  if (otlp_json.substr(0, kPrefix.size()) == kPrefix) {
    return absl::StrCat("{\"batches\":", std::string(otlp_json.substr(kPrefix.size())));
  }
  return std::string(otlp_json);
}

}  // namespace strata::api
