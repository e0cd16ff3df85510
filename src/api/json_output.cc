#include "api/json_output.h"

#include <charconv>
#include <cmath>

#include "absl/strings/str_cat.h"
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
    w.EndObject();
  }
  w.EndArray();
  w.EndObject();
  return out;
}

std::string LogsJson(const LogPage& page) {
  std::string out;
  JsonWriter w(&out);
  w.BeginObject();
  w.Key("logs");
  w.BeginArray();
  for (const LogEntry& e : page.logs) {
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
    w.String(e.body);
    w.Key("service_name");
    w.String(e.service);
    w.Key("trace_id");
    w.String(e.trace_id);
    w.Key("span_id");
    w.String(e.span_id);
    w.Key("attributes");
    WriteAttributes(w, e.attributes);
    w.EndObject();
  }
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
    w.EndObject();
  }
  w.EndArray();
  w.EndObject();
  return out;
}

std::string ServicesJson(const std::vector<std::string>& services) {
  std::string out;
  JsonWriter w(&out);
  w.BeginObject();
  w.Key("services");
  w.BeginArray();
  for (const std::string& s : services) w.String(s);
  w.EndArray();
  w.EndObject();
  return out;
}

std::string OperationsJson(std::string_view service, const std::vector<Operation>& operations) {
  std::string out;
  JsonWriter w(&out);
  w.BeginObject();
  w.Key("service");
  w.String(service);
  w.Key("operations");
  w.BeginArray();
  for (const Operation& o : operations) {
    w.BeginObject();
    w.Key("name");
    w.String(o.name);
    w.Key("span_count");
    w.Int(o.span_count);
    w.Key("error_count");
    w.Int(o.error_count);
    w.EndObject();
  }
  w.EndArray();
  w.EndObject();
  return out;
}

std::string SqlResultJson(const query::QueryResult& result) {
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
  w.EndObject();
  return out;
}

namespace {

// A minimal reader for one JSON object of string members.
class SqlBodyReader {
 public:
  explicit SqlBodyReader(std::string_view text) : text_(text) {}

  absl::StatusOr<std::string> Read() {
    SkipSpace();
    if (!Consume('{')) return Bad("expected a JSON object");
    std::optional<std::string> sql;
    SkipSpace();
    if (!Consume('}')) {
      for (;;) {
        SkipSpace();
        absl::StatusOr<std::string> key = ReadString();
        if (!key.ok()) return key.status();
        SkipSpace();
        if (!Consume(':')) return Bad("expected ':'");
        SkipSpace();
        if (*key == "sql") {
          if (pos_ >= text_.size() || text_[pos_] != '"') {
            return Bad("member \"sql\" must be a string");
          }
          absl::StatusOr<std::string> value = ReadString();
          if (!value.ok()) return value.status();
          if (sql.has_value()) return Bad("member \"sql\" given twice");
          sql = *std::move(value);
        } else {
          return Bad(absl::StrCat("unknown member \"", *key, "\" (only \"sql\" is read)"));
        }
        SkipSpace();
        if (Consume('}')) break;
        if (!Consume(',')) return Bad("expected ',' or '}'");
      }
    }
    SkipSpace();
    if (pos_ != text_.size()) return Bad("text after the JSON object");
    if (!sql.has_value()) return Bad("missing member \"sql\"");
    return *sql;
  }

 private:
  absl::Status Bad(std::string_view why) const {
    return absl::InvalidArgumentError(
        absl::StrCat("body: ", std::string(why), " (at byte ", pos_, ")"));
  }
  void SkipSpace() {
    while (pos_ < text_.size() && (text_[pos_] == ' ' || text_[pos_] == '\t' ||
                                   text_[pos_] == '\n' || text_[pos_] == '\r')) {
      ++pos_;
    }
  }
  bool Consume(char c) {
    if (pos_ < text_.size() && text_[pos_] == c) {
      ++pos_;
      return true;
    }
    return false;
  }
  static void AppendUtf8(uint32_t cp, std::string* out) {
    if (cp < 0x80) {
      out->push_back(static_cast<char>(cp));
    } else if (cp < 0x800) {
      out->push_back(static_cast<char>(0xC0 | (cp >> 6)));
      out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
    } else if (cp < 0x10000) {
      out->push_back(static_cast<char>(0xE0 | (cp >> 12)));
      out->push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
      out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
    } else {
      out->push_back(static_cast<char>(0xF0 | (cp >> 18)));
      out->push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3F)));
      out->push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
      out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
    }
  }
  bool ReadHex4(uint32_t* out) {
    if (pos_ + 4 > text_.size()) return false;
    uint32_t v = 0;
    for (int i = 0; i < 4; ++i) {
      const char c = text_[pos_++];
      v <<= 4;
      if (c >= '0' && c <= '9') {
        v |= static_cast<uint32_t>(c - '0');
      } else if (c >= 'a' && c <= 'f') {
        v |= static_cast<uint32_t>(c - 'a' + 10);
      } else if (c >= 'A' && c <= 'F') {
        v |= static_cast<uint32_t>(c - 'A' + 10);
      } else {
        return false;
      }
    }
    *out = v;
    return true;
  }
  absl::StatusOr<std::string> ReadString() {
    if (!Consume('"')) return Bad("expected a string");
    std::string out;
    while (pos_ < text_.size()) {
      const char c = text_[pos_++];
      if (c == '"') return out;
      if (static_cast<unsigned char>(c) < 0x20) return Bad("control character in a string");
      if (c != '\\') {
        out.push_back(c);
        continue;
      }
      if (pos_ >= text_.size()) break;
      const char e = text_[pos_++];
      switch (e) {
        case '"':
        case '\\':
        case '/':
          out.push_back(e);
          break;
        case 'b':
          out.push_back('\b');
          break;
        case 'f':
          out.push_back('\f');
          break;
        case 'n':
          out.push_back('\n');
          break;
        case 'r':
          out.push_back('\r');
          break;
        case 't':
          out.push_back('\t');
          break;
        case 'u': {
          uint32_t cp = 0;
          if (!ReadHex4(&cp)) return Bad("bad \\u escape");
          if (cp >= 0xD800 && cp <= 0xDBFF) {
            uint32_t low = 0;
            if (!Consume('\\') || !Consume('u') || !ReadHex4(&low) || low < 0xDC00 ||
                low > 0xDFFF) {
              return Bad("unpaired surrogate");
            }
            cp = 0x10000 + ((cp - 0xD800) << 10) + (low - 0xDC00);
          } else if (cp >= 0xDC00 && cp <= 0xDFFF) {
            return Bad("unpaired surrogate");
          }
          AppendUtf8(cp, &out);
          break;
        }
        default:
          return Bad("bad escape");
      }
    }
    return Bad("unterminated string");
  }

  std::string_view text_;
  size_t pos_ = 0;
};

}  // namespace

absl::StatusOr<std::string> ParseSqlJson(std::string_view body) {
  return SqlBodyReader(body).Read();
}

}  // namespace strata::api
