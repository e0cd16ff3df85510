// Loki's detected_labels and detected_fields endpoints (docs/loki.md), and
// the field detection of loki_detected.h.

#include "api/loki_detected.h"

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "api/api_server.h"
#include "api/gzip_answer.h"
#include "api/loki_http.h"
#include "api/loki_logs.h"
#include "api/loki_query.h"
#include "compat/logql/log_parsers.h"

namespace strata::api {

using compat::logql::Expr;
using compat::logql::LogLine;

namespace {

constexpr int64_t kLineLimitDefault = 1000;
constexpr int64_t kFieldLimitDefault = 1000;
constexpr int64_t kFieldLimitMax = 1000;

}  // namespace

std::string_view LokiFieldDetector::TypeOf(std::string_view value) {
  if (value == "true" || value == "false") return "boolean";
  int64_t integer = 0;
  if (absl::SimpleAtoi(absl::string_view(value.data(), value.size()), &integer)) return "int";
  double number = 0;
  if (absl::SimpleAtod(absl::string_view(value.data(), value.size()), &number)) return "float";
  if (compat::logql::ParseGoDurationSeconds(value).has_value()) return "duration";
  if (compat::logql::ParseHumanBytes(value).has_value()) return "bytes";
  return "string";
}

void LokiFieldDetector::AddField(const std::string& name, const std::string& value,
                                 std::string_view parser) {
  auto it = fields_.find(name);
  if (it == fields_.end()) {
    if (fields_.size() >= field_limit_) return;
    it = fields_.emplace(name, Field{std::string(TypeOf(value)), {}, {}}).first;
  } else if (it->second.type != "string" && it->second.type != TypeOf(value)) {
    it->second.type = "string";
  }
  it->second.values.insert(value);
  if (!parser.empty()) it->second.parsers.emplace(parser);
}

void LokiFieldDetector::Add(const LogLine& line) {
  for (const auto& [name, value] : line.metadata) AddField(name, value, "");
  compat::logql::LabelPairs pairs;
  std::string error;
  const bool json = !line.line.empty() && line.line.front() == '{';
  const bool parsed =
      json ? compat::logql::ParseJsonLabels(line.line, {}, {}, &pairs, &error)
           : compat::logql::ParseLogfmtLabels(line.line, false, false, &pairs, &error);
  if (!parsed) return;
  for (const auto& [name, value] : pairs) {
    // A parsed name that the stream already has is not a new field.
    if (line.stream.count(name) != 0) continue;
    AddField(name, value, json ? "json" : "logfmt");
  }
}

std::string LokiFieldDetector::Json() const {
  std::string out;
  otlp::JsonWriter json(&out);
  json.BeginObject();
  json.Key("fields");
  json.BeginArray();
  for (const auto& [name, field] : fields_) {
    json.BeginObject();
    json.Key("label");
    json.String(name);
    json.Key("type");
    json.String(field.type);
    json.Key("cardinality");
    json.Int(static_cast<int64_t>(field.values.size()));
    json.Key("parsers");
    if (field.parsers.empty()) {
      json.Null();
    } else {
      json.BeginArray();
      for (const std::string& parser : field.parsers) json.String(parser);
      json.EndArray();
    }
    json.EndObject();
  }
  json.EndArray();
  json.Key("limit");
  json.Int(static_cast<int64_t>(field_limit_));
  json.EndObject();
  return out;
}

server::HttpResponse Api::LokiDetectedLabelsEndpoint(const server::HttpRequest& request,
                                                     const storage::Snapshot& snapshot) {
  LOKI_ASSIGN_OR_RESPOND(QueryParams params, QueryParams::Parse(request.query()));
  LOKI_ASSIGN_OR_RESPOND(const LokiWindow window, TakeLokiWindow(params, options_.now()));
  LOKI_ASSIGN_OR_RESPOND(const std::unique_ptr<Expr> selector, TakeLokiSelector(params, "query"));
  std::vector<query::QueryParam> sql_params;
  std::string sql = "SELECT ";
  for (size_t i = 0; i < std::size(kLokiStreamAttributes); ++i) {
    absl::StrAppend(&sql, i == 0 ? "" : ", ", "count(DISTINCT nullif(",
                    LokiStreamLabelSql(kLokiStreamAttributes[i].label), ", ''))");
  }
  absl::StrAppend(&sql, " FROM logs WHERE ", LokiWindowSql(window, &sql_params));
  if (selector != nullptr) {
    absl::StrAppend(&sql, " AND ", LokiMatchersSql(selector->log.matchers, &sql_params));
  }
  std::vector<std::pair<std::string_view, int64_t>> labels;
  const query::ViewFiles files = LokiLogFiles(snapshot, options_.data_dir, window);
  if (!files.logs.empty()) {
    LOKI_ASSIGN_OR_RESPOND(
        const query::QueryResult result,
        options_.pool->Run(
            files, sql,
            internal::Options(CallOptions{options_.query_deadline}, std::move(sql_params), 1)));
    LOKI_RETURN_IF_ERROR(
        internal::CheckShape(result, std::size(kLokiStreamAttributes), "Loki detected labels"));
    for (size_t i = 0; i < std::size(kLokiStreamAttributes) && !result.rows.empty(); ++i) {
      LOKI_ASSIGN_OR_RESPOND(const int64_t cardinality, internal::CellInt(result.rows[0][i]));
      if (cardinality > 0) labels.emplace_back(kLokiStreamAttributes[i].label, cardinality);
    }
  }
  std::sort(labels.begin(), labels.end());
  std::string out;
  otlp::JsonWriter json(&out);
  json.BeginObject();
  json.Key("detectedLabels");
  json.BeginArray();
  for (const auto& [label, cardinality] : labels) {
    json.BeginObject();
    json.Key("label");
    json.String(label);
    json.Key("cardinality");
    json.Int(cardinality);
    json.EndObject();
  }
  json.EndArray();
  json.EndObject();
  return JsonAnswer(200, std::move(out));
}

server::HttpResponse Api::LokiDetectedFieldsEndpoint(const server::HttpRequest& request,
                                                     const storage::Snapshot& snapshot) {
  LOKI_ASSIGN_OR_RESPOND(QueryParams params, QueryParams::Parse(request.query()));
  LOKI_ASSIGN_OR_RESPOND(const LokiWindow window, TakeLokiWindow(params, options_.now()));
  LOKI_ASSIGN_OR_RESPOND(const std::unique_ptr<Expr> expr, TakeLokiQuery(params));
  if (expr->kind != Expr::Kind::kLog) {
    return LokiError(absl::InvalidArgumentError("detected_fields needs a log query"));
  }
  LOKI_ASSIGN_OR_RESPOND(const int64_t line_limit,
                         TakeLokiCount(params, "line_limit", kLineLimitDefault, kLokiLimitMax));
  // `limit` is the older name of field_limit.
  LOKI_ASSIGN_OR_RESPOND(const int64_t limit,
                         TakeLokiCount(params, "limit", kFieldLimitDefault, kFieldLimitMax));
  LOKI_ASSIGN_OR_RESPOND(const int64_t field_limit,
                         TakeLokiCount(params, "field_limit", limit, kFieldLimitMax));
  LokiScan scan;
  scan.matchers = &expr->log.matchers;
  scan.stages = &expr->log.stages;
  scan.start = window.start;
  scan.end = window.end;
  scan.wanted = line_limit;
  LokiFieldDetector detector(static_cast<size_t>(field_limit));
  int64_t lines = 0;
  LokiScanStats stats;
  LOKI_RETURN_IF_ERROR(ScanLoki(
      *options_.pool, snapshot, options_.data_dir, scan, CallOptions{options_.query_deadline},
      [&](LogLine&& line) {
        detector.Add(line);
        return ++lines < line_limit;
      },
      &stats));
  server::HttpResponse response = JsonAnswer(200, detector.Json());
  GzipIfAccepted(request, &response);
  return response;
}

}  // namespace strata::api
