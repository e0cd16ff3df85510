// The Loki API under /loki/api/v1 (docs/loki.md): Grafana's Loki data
// source pointed at http://<host>:7520. Answers in Loki's schemas; errors as
// Loki writes them (a plain-text body, 400 for a bad request).

#include <algorithm>
#include <functional>
#include <map>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "api/api_respond.h"
#include "api/api_server.h"
#include "api/gzip_answer.h"
#include "api/loki_http.h"
#include "api/loki_logs.h"
#include "api/loki_query.h"
#include "api/params.h"
#include "common/absl_view.h"
#include "common/status_macros.h"
#include "compat/logql/check.h"
#include "compat/logql/literals.h"
#include "compat/logql/parser.h"
#include "otlp/json_writer.h"

namespace strata::api {
namespace {

using compat::logql::Expr;
using compat::logql::Labels;
using compat::logql::LogLine;

constexpr std::string_view kLokiLabelPrefix = "/loki/api/v1/label/";

}  // namespace

absl::StatusOr<int64_t> ParseLokiTime(std::string_view name, std::string_view value) {
  auto bad = [&] {
    return absl::InvalidArgumentError(
        absl::StrCat("invalid ", Absl(name), " ", QuoteForError(value)));
  };
  if (value.find('.') != std::string_view::npos &&
      value.find_first_not_of("0123456789.+-eE") == std::string_view::npos) {
    double seconds = 0;
    if (!absl::SimpleAtod(Absl(value), &seconds) || !(seconds >= 0) || !(seconds < 9.2e9))
      return bad();
    return static_cast<int64_t>(std::llround(seconds * 1e9));
  }
  int64_t integer = 0;
  if (absl::SimpleAtoi(Absl(value), &integer)) {
    if (integer < 0) return bad();
    if (value.size() <= 10) return integer * kLokiNanos;
    return integer;
  }
  absl::StatusOr<int64_t> time = ParseTime(name, value);
  if (!time.ok()) return bad();
  return *time;
}

absl::StatusOr<int64_t> ParseLokiDuration(std::string_view name, std::string_view value) {
  if (std::optional<int64_t> nanos = compat::logql::ParseLogQLDuration(value)) return *nanos;
  double seconds = 0;
  if (absl::SimpleAtod(Absl(value), &seconds) && seconds >= 0 && seconds < 9.2e9) {
    return static_cast<int64_t>(std::llround(seconds * 1e9));
  }
  return absl::InvalidArgumentError(
      absl::StrCat("invalid ", Absl(name), " ", QuoteForError(value), ": not a duration"));
}

namespace {

absl::StatusOr<int64_t> TakeLokiLimit(QueryParams& params) {
  STRATA_ASSIGN_OR_RETURN(std::optional<std::string> text, params.Take("limit"));
  if (!text.has_value() || text->empty()) return kLokiLimitDefault;
  int64_t limit = 0;
  if (!absl::SimpleAtoi(*text, &limit) || limit < 0) {
    return absl::InvalidArgumentError(absl::StrCat("invalid limit ", QuoteForError(*text)));
  }
  if (limit > kLokiLimitMax) {
    return absl::InvalidArgumentError(
        absl::StrCat("max entries limit per query exceeded, limit > max_entries_limit (", limit,
                     " > ", kLokiLimitMax, ")"));
  }
  return limit == 0 ? kLokiLimitDefault : limit;
}

absl::StatusOr<bool> TakeForward(QueryParams& params) {
  STRATA_ASSIGN_OR_RETURN(std::optional<std::string> text, params.Take("direction"));
  if (!text.has_value() || text->empty()) return false;
  const std::string lower = absl::AsciiStrToLower(*text);
  if (lower == "forward") return true;
  if (lower == "backward") return false;
  return absl::InvalidArgumentError(absl::StrCat("invalid direction ", QuoteForError(*text)));
}

bool Categorized(const server::HttpRequest& request) {
  return absl::AsciiStrToLower(std::string(request.Header("X-Loki-Response-Encoding-Flags")))
             .find("categorize-labels") != std::string::npos;
}

// The streams answer of a log query (WriteLokiStreams), with its stats.
std::string StreamsJson(std::vector<LogLine>& lines, bool categorized,
                        const LokiQueryStats& stats) {
  std::string out;
  otlp::JsonWriter json(&out);
  json.BeginObject();
  json.Key("status");
  json.String("success");
  json.Key("data");
  json.BeginObject();
  json.Key("resultType");
  json.String("streams");
  json.Key("result");
  WriteLokiStreams(lines, categorized, &json);
  WriteLokiStats(stats, &json);
  if (categorized) {
    json.Key("encodingFlags");
    json.BeginArray();
    json.String("categorize-labels");
    json.EndArray();
  }
  json.EndObject();
  json.EndObject();
  return out;
}

}  // namespace

void WriteLokiStreams(const std::vector<LogLine>& lines, bool categorized, otlp::JsonWriter* out) {
  otlp::JsonWriter& json = *out;
  std::map<Labels, std::vector<size_t>> streams;
  std::vector<const Labels*> order;
  std::vector<Labels> merged(lines.size());
  for (size_t i = 0; i < lines.size(); ++i) {
    const LogLine& line = lines[i];
    if (!categorized) {
      merged[i] = line.stream;
      for (const auto& [k, v] : line.metadata) merged[i][k] = v;
      for (const auto& [k, v] : line.parsed) merged[i][k] = v;
    }
    const Labels& key = categorized ? line.stream : merged[i];
    auto [it, inserted] = streams.try_emplace(key);
    if (inserted) order.push_back(&it->first);
    it->second.push_back(i);
  }
  json.BeginArray();
  for (const Labels* key : order) {
    json.BeginObject();
    json.Key("stream");
    WriteLokiLabels(*key, &json);
    json.Key("values");
    json.BeginArray();
    for (size_t i : streams[*key]) {
      const LogLine& line = lines[i];
      json.BeginArray();
      json.String(absl::StrCat(line.time));
      json.String(line.line);
      if (categorized && (!line.metadata.empty() || !line.parsed.empty())) {
        json.BeginObject();
        if (!line.metadata.empty()) {
          json.Key("structuredMetadata");
          WriteLokiLabels(line.metadata, &json);
        }
        if (!line.parsed.empty()) {
          json.Key("parsed");
          WriteLokiLabels(line.parsed, &json);
        }
        json.EndObject();
      }
      json.EndArray();
    }
    json.EndArray();
    json.EndObject();
  }
  json.EndArray();
}

void WriteLokiStats(const LokiQueryStats& stats, otlp::JsonWriter* json) {
  json->Key("stats");
  json->BeginObject();
  json->Key("summary");
  json->BeginObject();
  json->Key("execTime");
  json->Double(stats.seconds);
  json->Key("totalLinesProcessed");
  json->Int(stats.rows_read);
  json->Key("totalEntriesReturned");
  json->Int(stats.entries);
  json->Key("queriesExecuted");
  json->Int(stats.queries);
  json->EndObject();
  json->EndObject();
}

server::HttpResponse Api::LokiQueryEndpoint(const server::HttpRequest& request,
                                            const storage::Snapshot& snapshot) {
  const bool instant = request.path() == "/loki/api/v1/query";
  const std::chrono::steady_clock::time_point began = std::chrono::steady_clock::now();
  LOKI_ASSIGN_OR_RESPOND(QueryParams params, QueryParams::Parse(request.query()));
  LOKI_ASSIGN_OR_RESPOND(std::unique_ptr<Expr> expr, TakeLokiQuery(params));
  LOKI_ASSIGN_OR_RESPOND(const int64_t limit, TakeLokiLimit(params));
  LOKI_ASSIGN_OR_RESPOND(const bool forward, TakeForward(params));
  LokiWindow window;
  int64_t step = 0;
  if (instant) {
    LOKI_ASSIGN_OR_RESPOND(std::optional<std::string> time, params.Take("time"));
    window.end = options_.now();
    if (time.has_value() && !time->empty()) {
      LOKI_ASSIGN_OR_RESPOND(window.end, ParseLokiTime("time", *time));
    }
    window.start = window.end;
  } else {
    LOKI_ASSIGN_OR_RESPOND(window, TakeLokiWindow(params, options_.now()));
    LOKI_ASSIGN_OR_RESPOND(std::optional<std::string> step_text, params.Take("step"));
    if (step_text.has_value() && !step_text->empty()) {
      LOKI_ASSIGN_OR_RESPOND(step, ParseLokiDuration("step", *step_text));
    } else {
      // Loki's default: the window over 250 points, at least a second.
      step = std::max<int64_t>(kLokiNanos,
                               (window.end - window.start) / 250 / kLokiNanos * kLokiNanos);
    }
  }
  const CallOptions call{options_.query_deadline};
  if (expr->kind != Expr::Kind::kLog) {
    LokiMetricQuery q;
    q.expr = expr.get();
    q.start = window.start;
    q.end = window.end;
    q.step = instant ? 0 : step;
    LOKI_ASSIGN_OR_RESPOND(
        std::string answer,
        RunLokiMetricQuery(*options_.pool, snapshot, options_.data_dir, q, call, began));
    server::HttpResponse response = JsonAnswer(200, std::move(answer));
    GzipIfAccepted(request, &response);
    return response;
  }
  if (instant) {
    return LokiError(absl::InvalidArgumentError(
        "log queries are not supported as an instant query type, please change your query to a "
        "range query type"));
  }
  const Expr* log = expr.get();
  LokiScan scan;
  scan.matchers = &log->log.matchers;
  scan.stages = &log->log.stages;
  scan.start = window.start;
  scan.end = window.end;
  scan.forward = forward;
  scan.wanted = limit;
  std::vector<LogLine> lines;
  LokiScanStats scan_stats;
  LOKI_RETURN_IF_ERROR(ScanLoki(
      *options_.pool, snapshot, options_.data_dir, scan, call,
      [&](LogLine&& line) {
        lines.push_back(std::move(line));
        return static_cast<int64_t>(lines.size()) < limit;
      },
      &scan_stats));
  LokiQueryStats stats;
  stats.rows_read = scan_stats.rows_read;
  stats.queries = scan_stats.queries;
  stats.entries = static_cast<int64_t>(lines.size());
  stats.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - began).count();
  server::HttpResponse response = JsonAnswer(200, StreamsJson(lines, Categorized(request), stats));
  GzipIfAccepted(request, &response);
  return response;
}

namespace {

std::string DataArray(const std::vector<std::string>& values) {
  std::string out;
  otlp::JsonWriter json(&out);
  json.BeginObject();
  json.Key("status");
  json.String("success");
  json.Key("data");
  json.BeginArray();
  for (const std::string& value : values) json.String(value);
  json.EndArray();
  json.EndObject();
  return out;
}

}  // namespace

server::HttpResponse Api::LokiLabelsEndpoint(const server::HttpRequest& request,
                                             const storage::Snapshot& snapshot) {
  LOKI_ASSIGN_OR_RESPOND(QueryParams params, QueryParams::Parse(request.query()));
  LOKI_ASSIGN_OR_RESPOND(const LokiWindow window, TakeLokiWindow(params, options_.now()));
  LOKI_ASSIGN_OR_RESPOND(std::unique_ptr<Expr> selector, TakeLokiSelector(params, "query"));
  std::vector<query::QueryParam> sql_params;
  std::string sql = "SELECT count(*)";
  for (const LokiStreamAttribute& a : kLokiStreamAttributes) {
    absl::StrAppend(&sql, ", bool_or(", LokiStreamLabelSql(a.label), " <> '')");
  }
  absl::StrAppend(&sql, " FROM logs WHERE ", LokiWindowSql(window, &sql_params));
  if (selector != nullptr) {
    absl::StrAppend(&sql, " AND ", LokiMatchersSql(selector->log.matchers, &sql_params));
  }
  const query::ViewFiles files = LokiLogFiles(snapshot, options_.data_dir, window);
  std::vector<std::string> names;
  if (!files.logs.empty()) {
    LOKI_ASSIGN_OR_RESPOND(
        const query::QueryResult result,
        options_.pool->Run(
            files, sql,
            internal::Options(CallOptions{options_.query_deadline}, std::move(sql_params), 1)));
    if (!result.rows.empty() && result.rows[0][0].value_or("0") != "0") {
      for (size_t i = 0; i < std::size(kLokiStreamAttributes); ++i) {
        if (result.rows[0][i + 1].value_or("false") == "true") {
          names.emplace_back(kLokiStreamAttributes[i].label);
        }
      }
      if (std::find(names.begin(), names.end(), "service_name") == names.end()) {
        names.emplace_back("service_name");
      }
    }
  }
  std::sort(names.begin(), names.end());
  return JsonAnswer(200, DataArray(names));
}

server::HttpResponse Api::LokiLabelValuesEndpoint(const server::HttpRequest& request,
                                                  const storage::Snapshot& snapshot) {
  std::string_view rest = request.path().substr(kLokiLabelPrefix.size());
  if (!rest.ends_with("/values")) {
    return LokiError(absl::NotFoundError(absl::StrCat("no such path: ", Absl(request.path()))));
  }
  rest.remove_suffix(std::string_view("/values").size());
  LOKI_ASSIGN_OR_RESPOND(const std::string name, PercentDecode(rest));
  LOKI_ASSIGN_OR_RESPOND(QueryParams params, QueryParams::Parse(request.query()));
  LOKI_ASSIGN_OR_RESPOND(const LokiWindow window, TakeLokiWindow(params, options_.now()));
  LOKI_ASSIGN_OR_RESPOND(std::unique_ptr<Expr> selector, TakeLokiSelector(params, "query"));
  std::vector<std::string> values;
  const query::ViewFiles files = LokiLogFiles(snapshot, options_.data_dir, window);
  if (IsLokiStreamLabel(name) && !files.logs.empty()) {
    std::vector<query::QueryParam> sql_params;
    std::string sql = absl::StrCat("SELECT DISTINCT ", LokiStreamLabelSql(name),
                                   " AS v FROM logs WHERE ", LokiWindowSql(window, &sql_params));
    if (selector != nullptr) {
      absl::StrAppend(&sql, " AND ", LokiMatchersSql(selector->log.matchers, &sql_params));
    }
    absl::StrAppend(&sql, " ORDER BY v LIMIT ", kLokiLabelValuesMax + 1);
    LOKI_ASSIGN_OR_RESPOND(
        const query::QueryResult result,
        options_.pool->Run(files, sql,
                           internal::Options(CallOptions{options_.query_deadline},
                                             std::move(sql_params), kLokiLabelValuesMax + 1)));
    for (const auto& row : result.rows) {
      if (row[0].has_value() && !row[0]->empty()) values.push_back(*row[0]);
    }
    if (values.size() > kLokiLabelValuesMax) values.resize(kLokiLabelValuesMax);
  }
  return JsonAnswer(200, DataArray(values));
}

server::HttpResponse Api::LokiSeriesEndpoint(const server::HttpRequest& request,
                                             const storage::Snapshot& snapshot) {
  LOKI_ASSIGN_OR_RESPOND(QueryParams params, QueryParams::Parse(request.query()));
  LOKI_ASSIGN_OR_RESPOND(const LokiWindow window, TakeLokiWindow(params, options_.now()));
  LOKI_ASSIGN_OR_RESPOND(auto matches, params.TakePrefixed("match"));
  if (matches.empty()) {
    return LokiError(absl::InvalidArgumentError("0 matchers given; at least one is needed"));
  }
  std::vector<query::QueryParam> sql_params;
  std::string sql = "SELECT DISTINCT ";
  for (size_t i = 0; i < std::size(kLokiStreamAttributes); ++i) {
    absl::StrAppend(&sql, i == 0 ? "" : ", ", LokiStreamLabelSql(kLokiStreamAttributes[i].label));
  }
  absl::StrAppend(&sql, " FROM logs WHERE ", LokiWindowSql(window, &sql_params), " AND (");
  for (size_t i = 0; i < matches.size(); ++i) {
    if (matches[i].first != "[]" && matches[i].first != "") {
      return LokiError(
          absl::InvalidArgumentError(absl::StrCat("unknown parameter match", matches[i].first)));
    }
    absl::StatusOr<std::unique_ptr<Expr>> expr = compat::logql::ParseLogQL(matches[i].second);
    if (!expr.ok()) {
      return LokiError(
          absl::InvalidArgumentError(absl::StrCat("parse error ", expr.status().message())));
    }
    if ((*expr)->kind != Expr::Kind::kLog || !(*expr)->log.stages.empty()) {
      return LokiError(absl::InvalidArgumentError("match[]: a stream selector is needed"));
    }
    absl::StrAppend(&sql, i == 0 ? "(" : " OR (",
                    LokiMatchersSql((*expr)->log.matchers, &sql_params), ")");
  }
  absl::StrAppend(&sql, ") LIMIT ", kLokiSeriesMax + 1);
  std::vector<Labels> series;
  const query::ViewFiles files = LokiLogFiles(snapshot, options_.data_dir, window);
  if (!files.logs.empty()) {
    LOKI_ASSIGN_OR_RESPOND(
        const query::QueryResult result,
        options_.pool->Run(files, sql,
                           internal::Options(CallOptions{options_.query_deadline},
                                             std::move(sql_params), kLokiSeriesMax + 1)));
    if (result.rows.size() > kLokiSeriesMax) {
      return LokiError(absl::InvalidArgumentError(absl::StrCat(
          "more than ", kLokiSeriesMax, " series match; narrow the selector or the window")));
    }
    for (const auto& row : result.rows) {
      Labels labels;
      for (size_t i = 0; i < std::size(kLokiStreamAttributes); ++i) {
        if (row[i].has_value() && !row[i]->empty()) {
          labels[std::string(kLokiStreamAttributes[i].label)] = *row[i];
        }
      }
      series.push_back(std::move(labels));
    }
  }
  std::sort(series.begin(), series.end());
  std::string out;
  otlp::JsonWriter json(&out);
  json.BeginObject();
  json.Key("status");
  json.String("success");
  json.Key("data");
  json.BeginArray();
  for (const Labels& labels : series) WriteLokiLabels(labels, &json);
  json.EndArray();
  json.EndObject();
  return JsonAnswer(200, std::move(out));
}

server::HttpResponse Api::LokiBuildInfoEndpoint(const server::HttpRequest&,
                                                const storage::Snapshot&) {
  std::string out;
  otlp::JsonWriter json(&out);
  json.BeginObject();
  json.Key("version");
  json.String(kLokiCompatibleVersion);
  json.Key("revision");
  json.String(STRATA_VERSION);
  json.Key("branch");
  json.String("strata");
  json.Key("buildUser");
  json.String("");
  json.Key("buildDate");
  json.String("");
  json.Key("goVersion");
  json.String("");
  json.EndObject();
  return JsonAnswer(200, std::move(out));
}

void Api::AddLokiRoutes(server::HttpRouter* router,
                        const std::function<server::HttpHandler(Endpoint)>& route) {
  router->Add("GET", "/loki/api/v1/query_range", route(&Api::LokiQueryEndpoint));
  router->Add("GET", "/loki/api/v1/query", route(&Api::LokiQueryEndpoint));
  router->Add("GET", "/loki/api/v1/labels", route(&Api::LokiLabelsEndpoint));
  router->Add("GET", "/loki/api/v1/label", route(&Api::LokiLabelsEndpoint));
  router->AddPrefix("GET", kLokiLabelPrefix, route(&Api::LokiLabelValuesEndpoint));
  router->Add("GET", "/loki/api/v1/series", route(&Api::LokiSeriesEndpoint));
  router->Add("GET", "/loki/api/v1/status/buildinfo", route(&Api::LokiBuildInfoEndpoint));
  router->Add("GET", "/loki/api/v1/index/stats", route(&Api::LokiIndexStatsEndpoint));
  router->Add("GET", "/loki/api/v1/index/volume", route(&Api::LokiVolumeEndpoint));
  router->Add("GET", "/loki/api/v1/index/volume_range", route(&Api::LokiVolumeEndpoint));
  router->Add("GET", "/loki/api/v1/detected_labels", route(&Api::LokiDetectedLabelsEndpoint));
  router->Add("GET", "/loki/api/v1/detected_fields", route(&Api::LokiDetectedFieldsEndpoint));
  // No worker: LogTail's own thread serves the WebSocket.
  router->Add("GET", "/loki/api/v1/tail",
              [this](server::HttpRequest request, server::HttpResponder responder) {
                LokiTail(std::move(request), std::move(responder));
              });
}

}  // namespace strata::api
