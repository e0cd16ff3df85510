#include "api/json_output.h"

#include <charconv>
#include <cmath>
#include <optional>

#include "absl/strings/str_cat.h"
#include "api/json_body.h"
#include "common/status_macros.h"
#include "otlp/encode.h"
#include "otlp/json_writer.h"

namespace strata::api {
namespace {

// otlp::JsonWriter lacks null and verbatim numbers (DuckDB's rendering of a
// DECIMAL or HUGEINT), so this writer keeps its comma rule and reuses its
// escaping.
class JsonWriter {
 public:
  explicit JsonWriter(std::string* out) : out_(out) {}
  void BeginObject() { Open('{'); }
  void EndObject() { Close('}'); }
  void BeginArray() { Open('['); }
  void EndArray() { Close(']'); }
  void Key(std::string_view name) {
    String(name);
    out_->push_back(':');
    need_comma_ = false;
  }
  void String(std::string_view utf8) {
    Separate();
    out_->push_back('"');
    otlp::JsonWriter::AppendEscaped(utf8, out_);
    out_->push_back('"');
  }
  void Int(int64_t v) {
    Separate();
    absl::StrAppend(out_, v);
  }
  void IntString(int64_t v) {
    Separate();
    absl::StrAppend(out_, "\"", v, "\"");
  }
  void Bool(bool v) {
    Separate();
    out_->append(v ? "true" : "false");
  }
  void Null() {
    Separate();
    out_->append("null");
  }
  // `digits` must be a JSON number.
  void RawNumber(std::string_view digits) {
    Separate();
    out_->append(digits);
  }
  // `json` must be one JSON value (otlp's encoders write them).
  void RawValue(std::string_view json) {
    Separate();
    out_->append(json);
  }
  void Double(double v) {
    if (std::isnan(v)) {
      String("NaN");
    } else if (std::isinf(v)) {
      String(v > 0 ? "Infinity" : "-Infinity");
    } else {
      Separate();
      char buf[40];
      char* end = std::to_chars(buf, buf + sizeof(buf), v).ptr;
      out_->append(buf, end);
    }
  }

 private:
  void Separate() {
    if (need_comma_) out_->push_back(',');
    need_comma_ = true;
  }
  void Open(char c) {
    Separate();
    out_->push_back(c);
    need_comma_ = false;
  }
  void Close(char c) {
    out_->push_back(c);
    need_comma_ = true;
  }
  std::string* out_;
  bool need_comma_ = false;
};

// True when `text` is a JSON number (RFC 8259 grammar).
bool IsJsonNumber(std::string_view text) {
  size_t i = 0;
  auto digit = [&](size_t k) { return k < text.size() && text[k] >= '0' && text[k] <= '9'; };
  if (i < text.size() && text[i] == '-') ++i;
  if (!digit(i)) return false;
  if (text[i] == '0') {
    ++i;
  } else {
    while (digit(i)) ++i;
  }
  if (i < text.size() && text[i] == '.') {
    ++i;
    if (!digit(i)) return false;
    while (digit(i)) ++i;
  }
  if (i < text.size() && (text[i] == 'e' || text[i] == 'E')) {
    ++i;
    if (i < text.size() && (text[i] == '+' || text[i] == '-')) ++i;
    if (!digit(i)) return false;
    while (digit(i)) ++i;
  }
  return i == text.size();
}

void WriteAttributes(JsonWriter& w, const Attributes& attributes) {
  w.BeginArray();
  for (const auto& [key, value] : attributes) {
    w.BeginObject();
    w.Key("key");
    w.String(key);
    w.Key("value");
    w.String(value);
    w.EndObject();
  }
  w.EndArray();
}

bool IsNumericType(std::string_view type) {
  static constexpr std::string_view kTypes[] = {"TINYINT", "SMALLINT", "INTEGER",   "BIGINT",
                                                "HUGEINT", "UTINYINT", "USMALLINT", "UINTEGER",
                                                "UBIGINT", "UHUGEINT", "FLOAT",     "DOUBLE"};
  for (std::string_view t : kTypes) {
    if (type == t) return true;
  }
  return type.substr(0, 7) == "DECIMAL";
}

}  // namespace

std::string ErrorJson(std::string_view message) {
  std::string out;
  JsonWriter w(&out);
  w.BeginObject();
  w.Key("error");
  w.String(message);
  w.EndObject();
  return out;
}

std::string TracesJson(const std::vector<TraceSummary>& traces) {
  std::string out;
  JsonWriter w(&out);
  w.BeginObject();
  w.Key("traces");
  w.BeginArray();
  for (const TraceSummary& t : traces) {
    w.BeginObject();
    w.Key("trace_id");
    w.String(t.trace_id);
    w.Key("root_service");
    w.String(t.root_service);
    w.Key("root_name");
    w.String(t.root_name);
    w.Key("start_time_unix_nano");
    w.IntString(t.start);
    w.Key("duration_nano");
    w.IntString(t.duration);
    w.Key("span_count");
    w.Int(t.span_count);
    w.Key("error_count");
    w.Int(t.error_count);
    w.Key("services");
    w.BeginArray();
    for (const std::string& s : t.services) w.String(s);
    w.EndArray();
    // A list rather than an object keyed by name: JsonWriter's keys are
    // schema names, written unescaped.
    w.Key("service_spans");
    w.BeginArray();
    for (const auto& [service, spans] : t.service_spans) {
      w.BeginObject();
      w.Key("service");
      w.String(service);
      w.Key("spans");
      w.Int(spans);
      w.EndObject();
    }
    w.EndArray();
    w.Key("root_status_code");
    w.Int(t.root_status_code);
    w.EndObject();
  }
  w.EndArray();
  w.EndObject();
  return out;
}

namespace {

// body, attributes, scope_attributes and resource_attributes in the
// OTLP/JSON encoding otlp's request encoders use (encode.h), so a value
// reads the same as in GET /api/v1/traces/{id}.
void WriteLogEntry(JsonWriter& w, const LogValues& values, const LogEntry& e) {
  w.BeginObject();
  w.Key("time_unix_nano");
  w.IntString(e.time);
  w.Key("observed_time_unix_nano");
  w.IntString(e.observed_time);
  w.Key("severity_number");
  w.Int(e.severity_number);
  w.Key("severity_text");
  w.String(e.severity_text);
  w.Key("body");
  w.RawValue(otlp::EncodeAnyValueJson(values, values.bodies, e.body));
  w.Key("service_name");
  w.String(e.service);
  w.Key("trace_id");
  w.String(e.trace_id);
  w.Key("span_id");
  w.String(e.span_id);
  w.Key("attributes");
  w.RawValue(otlp::EncodeKeyValuesJson(values, values.log_attributes, e.attributes));
  w.Key("scope_attributes");
  w.RawValue(otlp::EncodeKeyValuesJson(values, values.scope_attributes, e.scope_attributes));
  w.Key("resource_attributes");
  w.RawValue(otlp::EncodeKeyValuesJson(values, values.resource_attributes, e.resource_attributes));
  w.EndObject();
}

}  // namespace

std::string LogEntryJson(const LogValues& values, const LogEntry& entry) {
  std::string out;
  JsonWriter w(&out);
  WriteLogEntry(w, values, entry);
  return out;
}

std::string LogsJson(const LogPage& page) {
  std::string out;
  JsonWriter w(&out);
  w.BeginObject();
  w.Key("logs");
  w.BeginArray();
  for (const LogEntry& e : page.logs) WriteLogEntry(w, page.values, e);
  w.EndArray();
  w.Key("next_cursor");
  if (page.next_cursor.empty()) {
    w.Null();
  } else {
    w.String(page.next_cursor);
  }
  w.EndObject();
  return out;
}

std::string MetricNamesJson(const std::vector<MetricName>& names) {
  std::string out;
  JsonWriter w(&out);
  w.BeginObject();
  w.Key("metrics");
  w.BeginArray();
  for (const MetricName& n : names) {
    w.BeginObject();
    w.Key("name");
    w.String(n.name);
    w.Key("type");
    w.String(n.type);
    w.Key("unit");
    w.String(n.unit);
    w.Key("points");
    w.Int(n.points);
    w.EndObject();
  }
  w.EndArray();
  w.EndObject();
  return out;
}

std::string MetricSeriesJson(const MetricQuery& q, std::string_view aggregation,
                             const std::vector<MetricSeries>& series) {
  std::string out;
  JsonWriter w(&out);
  w.BeginObject();
  w.Key("name");
  w.String(q.name);
  w.Key("agg");
  w.String(aggregation);
  w.Key("start_time_unix_nano");
  w.IntString(q.start);
  w.Key("end_time_unix_nano");
  w.IntString(q.end);
  w.Key("step_nano");
  w.IntString(q.step);
  w.Key("series");
  w.BeginArray();
  for (const MetricSeries& s : series) {
    w.BeginObject();
    w.Key("labels");
    WriteAttributes(w, s.labels);
    w.Key("points");
    w.BeginArray();
    for (const auto& [time, value] : s.points) {
      w.BeginArray();
      w.IntString(time);
      w.Double(value);
      w.EndArray();
    }
    w.EndArray();
    w.Key("exemplars");
    w.BeginArray();
    for (const MetricExemplar& e : s.exemplars) {
      w.BeginObject();
      w.Key("time_unix_nano");
      w.IntString(e.time);
      w.Key("value");
      if (e.value.has_value()) {
        w.Double(*e.value);
      } else {
        w.Null();
      }
      w.Key("trace_id");
      w.String(e.trace_id);
      w.Key("span_id");
      w.String(e.span_id);
      w.EndObject();
    }
    w.EndArray();
    w.EndObject();
  }
  w.EndArray();
  w.EndObject();
  return out;
}

std::string SqlResultJson(const query::QueryResult& result, std::string_view truncated_reason) {
  std::string out;
  JsonWriter w(&out);
  w.BeginObject();
  w.Key("columns");
  w.BeginArray();
  for (size_t c = 0; c < result.columns.size(); ++c) {
    w.BeginObject();
    w.Key("name");
    w.String(result.columns[c]);
    w.Key("type");
    w.String(c < result.types.size() ? result.types[c] : std::string());
    w.EndObject();
  }
  w.EndArray();
  w.Key("rows");
  w.BeginArray();
  for (const auto& row : result.rows) {
    w.BeginArray();
    for (size_t c = 0; c < row.size(); ++c) {
      const std::string_view type =
          c < result.types.size() ? std::string_view(result.types[c]) : std::string_view();
      const std::optional<std::string>& cell = row[c];
      if (!cell.has_value()) {
        w.Null();
      } else if (type == "BOOLEAN" && (*cell == "true" || *cell == "false")) {
        w.Bool(*cell == "true");
      } else if (IsNumericType(type)) {
        if (*cell == "nan" || *cell == "-nan" || *cell == "NaN") {
          w.String("NaN");
        } else if (*cell == "inf" || *cell == "Infinity") {
          w.String("Infinity");
        } else if (*cell == "-inf" || *cell == "-Infinity") {
          w.String("-Infinity");
        } else if (IsJsonNumber(*cell)) {
          w.RawNumber(*cell);
        } else {
          w.String(*cell);
        }
      } else {
        w.String(*cell);
      }
    }
    w.EndArray();
  }
  w.EndArray();
  w.Key("truncated");
  w.Bool(result.truncated);
  if (result.truncated) {
    w.Key("truncated_reason");
    w.String(truncated_reason);
  }
  w.EndObject();
  return out;
}

absl::StatusOr<std::string> ParseSqlJson(std::string_view body) {
  static constexpr JsonMember kMembers[] = {{.name = "sql", .required = true}};
  STRATA_ASSIGN_OR_RETURN(const JsonBody parsed, JsonBody::Parse(body, kMembers));
  return parsed.StringOr("sql");
}

}  // namespace strata::api
