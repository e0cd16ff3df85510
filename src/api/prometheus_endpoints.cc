// The Prometheus HTTP API under /prometheus (docs/prometheus.md): Grafana's
// Prometheus data source pointed at http://<host>:7520/prometheus. Answers
// in Prometheus's envelope ({"status": "success", "data": ...} or
// {"status": "error", "errorType": ..., "error": ...}); GET and
// form-encoded POST alike; unknown parameters ignored, as Prometheus
// ignores them.

#include <algorithm>
#include <map>
#include <set>

#include "absl/strings/str_cat.h"
#include "api/api_respond.h"
#include "api/api_server.h"
#include "api/gzip_answer.h"
#include "api/prometheus_params.h"
#include "api/prometheus_query.h"
#include "api/prometheus_series.h"
#include "api/prometheus_trace_metrics.h"
#include "common/status_macros.h"
#include "compat/promql/ast.h"
#include "compat/promql/parser.h"
#include "compat/promql/result_json.h"
#include "otlp/json_writer.h"

namespace strata::api {
namespace {

namespace promql = compat::promql;

constexpr std::string_view kLabelValuesPrefix = "/prometheus/api/v1/label/";
// Series a metadata call (/series, /labels, /label/x/values) may list.
constexpr int64_t kMaxListedSeries = 100'000;

// Prometheus's error answer: its errorType and HTTP status for the status.
server::HttpResponse PromError(const absl::Status& status) {
  int http = 500;
  std::string_view type = "internal";
  switch (status.code()) {
    case absl::StatusCode::kInvalidArgument:
      http = 400;
      type = "bad_data";
      break;
    case absl::StatusCode::kResourceExhausted:
    case absl::StatusCode::kFailedPrecondition:
      http = 422;
      type = "execution";
      break;
    case absl::StatusCode::kDeadlineExceeded:
      http = 503;
      type = "timeout";
      break;
    case absl::StatusCode::kCancelled:
      http = 503;
      type = "canceled";
      break;
    case absl::StatusCode::kUnavailable:
      http = 503;
      type = "unavailable";
      break;
    case absl::StatusCode::kNotFound:
      http = 404;
      type = "not_found";
      break;
    default:
      break;
  }
  std::string body;
  otlp::JsonWriter json(&body);
  json.BeginObject();
  json.Key("status");
  json.String("error");
  json.Key("errorType");
  json.String(type);
  json.Key("error");
  json.String(std::string(status.message()));
  json.EndObject();
  return JsonAnswer(http, std::move(body));
}

// {"status":"success","data":<data>}.
server::HttpResponse PromSuccess(const server::HttpRequest& request, std::string_view data) {
  server::HttpResponse response =
      JsonAnswer(200, absl::StrCat("{\"status\":\"success\",\"data\":", std::string(data), "}"));
  GzipIfAccepted(request, &response);
  return response;
}

#define PROM_ASSIGN_OR_RESPOND(lhs, expr) \
  PROM_ASSIGN_IMPL(API_CONCAT(prom_or_, __LINE__), lhs, expr)
#define PROM_ASSIGN_IMPL(tmp, lhs, expr)         \
  auto tmp = (expr);                             \
  if (!tmp.ok()) return PromError(tmp.status()); \
  lhs = std::move(tmp).value()

// `start` and `end` of the metadata calls: all of time by default, as
// Prometheus; in milliseconds.
absl::StatusOr<std::pair<int64_t, int64_t>> PromWindow(QueryParams& params, int64_t now_ms) {
  int64_t start = 0, end = now_ms;
  STRATA_ASSIGN_OR_RETURN(std::optional<std::string> start_text, params.Take("start"));
  STRATA_ASSIGN_OR_RETURN(std::optional<std::string> end_text, params.Take("end"));
  if (start_text.has_value() && !start_text->empty()) {
    STRATA_ASSIGN_OR_RETURN(start, ParsePromTime("start", *start_text));
  }
  if (end_text.has_value() && !end_text->empty()) {
    STRATA_ASSIGN_OR_RETURN(end, ParsePromTime("end", *end_text));
  }
  if (end < start) return absl::InvalidArgumentError("end timestamp must not be before start time");
  return std::pair{start, end};
}

// The matchers of each `match[]` selector; {__name__=~".+"} when there is
// none and `required` is false.
absl::StatusOr<std::vector<std::vector<promql::LabelMatcher>>> TakeMatchers(QueryParams& params,
                                                                            bool required) {
  std::vector<std::vector<promql::LabelMatcher>> out;
  for (const std::string& text : params.TakeAll("match[]")) {
    STRATA_ASSIGN_OR_RETURN(std::unique_ptr<promql::Expr> expr, promql::ParsePromQL(text));
    if (expr->kind != promql::Expr::Kind::kVectorSelector) {
      return absl::InvalidArgumentError(
          absl::StrCat("match[]: not a series selector: \"", text, "\""));
    }
    out.push_back(expr->matchers);
  }
  if (out.empty()) {
    if (required) return absl::InvalidArgumentError("no match[] parameter provided");
    out.push_back({{promql::MatchType::kRegexMatch, "__name__", ".+"}});
  }
  return out;
}

// The label sets of every match[] selector, without repeats, sorted.
absl::StatusOr<std::vector<promql::Labels>> MatchedLabelSets(
    PromSeriesSources& source, const std::vector<std::vector<promql::LabelMatcher>>& selectors,
    int64_t start, int64_t end) {
  auto by_text = [](const promql::Labels& a, const promql::Labels& b) {
    return std::lexicographical_compare(
        a.begin(), a.end(), b.begin(), b.end(), [](const promql::Label& x, const promql::Label& y) {
          return std::tie(x.name, x.value) < std::tie(y.name, y.value);
        });
  };
  std::set<promql::Labels, decltype(by_text)> all(by_text);
  for (const auto& matchers : selectors) {
    STRATA_ASSIGN_OR_RETURN(std::vector<promql::Labels> sets,
                            source.SelectLabels(matchers, start, end, kMaxListedSeries));
    for (auto& labels : sets) all.insert(std::move(labels));
    if (static_cast<int64_t>(all.size()) > kMaxListedSeries) {
      return absl::ResourceExhaustedError(
          absl::StrCat("more than ", kMaxListedSeries, " series match; narrow match[]"));
    }
  }
  return std::vector<promql::Labels>(all.begin(), all.end());
}

// The label sets /series, /labels and /label/{name}/values answer from:
// the request's match[] (required for /series), start and end.
absl::StatusOr<std::vector<promql::Labels>> RequestedLabelSets(
    const server::HttpRequest& request, query::QueryPool& pool, const query::ViewFiles& files,
    const CallOptions& call, internal::PointCache* cache, TraceMetricsSource& traces,
    int64_t now_ms, bool match_required) {
  STRATA_ASSIGN_OR_RETURN(QueryParams params, PromParams(request));
  STRATA_ASSIGN_OR_RETURN(const auto window, PromWindow(params, now_ms));
  STRATA_ASSIGN_OR_RETURN(const auto selectors, TakeMatchers(params, match_required));
  MetricsSeriesSource metrics(pool, files, call, cache);
  PromSeriesSources source(metrics, traces);
  return MatchedLabelSets(source, selectors, window.first, window.second);
}

std::string StringArrayJson(const std::set<std::string>& strings) {
  std::string data;
  otlp::JsonWriter json(&data);
  json.BeginArray();
  for (const std::string& one : strings) json.String(one);
  json.EndArray();
  return data;
}

void WriteLabels(otlp::JsonWriter& json, const promql::Labels& labels) {
  json.BeginObject();
  for (const auto& label : labels) {
    json.Key(label.name);
    json.String(label.value);
  }
  json.EndObject();
}

}  // namespace

server::HttpResponse Api::PromQueryEndpoint(const server::HttpRequest& request,
                                            const storage::Snapshot& snapshot) {
  PROM_ASSIGN_OR_RESPOND(QueryParams params, PromParams(request));
  PROM_ASSIGN_OR_RESPOND(const PromQuery query,
                         TakeInstantQuery(params, options_.now() / 1'000'000));
  return RunPromQuery(request, snapshot, query);
}

server::HttpResponse Api::PromQueryRangeEndpoint(const server::HttpRequest& request,
                                                 const storage::Snapshot& snapshot) {
  PROM_ASSIGN_OR_RESPOND(QueryParams params, PromParams(request));
  PROM_ASSIGN_OR_RESPOND(const PromQuery query, TakeRangeQuery(params));
  return RunPromQuery(request, snapshot, query);
}

server::HttpResponse Api::RunPromQuery(const server::HttpRequest& request,
                                       const storage::Snapshot& snapshot, const PromQuery& query) {
  int64_t deadline_ms = options_.query_deadline.count();
  if (query.timeout_ms > 0 && (deadline_ms <= 0 || query.timeout_ms < deadline_ms)) {
    deadline_ms = query.timeout_ms;
  }
  const query::ViewFiles files = FilesOf(snapshot);
  const CallOptions call{std::chrono::milliseconds(deadline_ms)};
  MetricsSeriesSource metrics(*options_.pool, files, call, point_cache_.get());
  TraceMetricsSource traces(*rollups_, *service_map_, *options_.fs, snapshot);
  PromSeriesSources source(metrics, traces);
  PROM_ASSIGN_OR_RESPOND(const promql::QueryResult result,
                         EvaluatePromQuery(query, source, deadline_ms));
  return PromSuccess(request, promql::ResultDataJson(result));
}

server::HttpResponse Api::PromBuildInfoEndpoint(const server::HttpRequest& request,
                                                const storage::Snapshot&) {
  // No `features` member: Grafana then takes strata for Prometheus (with
  // one, for Mimir). The version is the Prometheus whose semantics the
  // engine follows.
  return PromSuccess(request,
                     absl::StrCat("{\"version\":\"2.42.0\",\"revision\":\"strata-", STRATA_VERSION,
                                  "\",\"branch\":\"\",\"buildUser\":\"\",\"buildDate\":\"\","
                                  "\"goVersion\":\"\"}"));
}

server::HttpResponse Api::PromRulesEndpoint(const server::HttpRequest& request,
                                            const storage::Snapshot&) {
  return PromSuccess(request, "{\"groups\":[]}");
}

server::HttpResponse Api::PromAlertsEndpoint(const server::HttpRequest& request,
                                             const storage::Snapshot&) {
  return PromSuccess(request, "{\"alerts\":[]}");
}

server::HttpResponse Api::PromFormatQueryEndpoint(const server::HttpRequest& request,
                                                  const storage::Snapshot&) {
  PROM_ASSIGN_OR_RESPOND(QueryParams params, PromParams(request));
  PROM_ASSIGN_OR_RESPOND(std::optional<std::string> query, params.Take("query"));
  PROM_ASSIGN_OR_RESPOND(std::unique_ptr<promql::Expr> expr,
                         promql::ParsePromQL(query.value_or("")));
  std::string data;
  otlp::JsonWriter json(&data);
  json.String(promql::ExprToString(*expr));
  return PromSuccess(request, data);
}

server::HttpResponse Api::PromLabelsEndpoint(const server::HttpRequest& request,
                                             const storage::Snapshot& snapshot) {
  TraceMetricsSource traces(*rollups_, *service_map_, *options_.fs, snapshot);
  PROM_ASSIGN_OR_RESPOND(
      const std::vector<promql::Labels> sets,
      RequestedLabelSets(request, *options_.pool, FilesOf(snapshot),
                         CallOptions{options_.query_deadline}, point_cache_.get(), traces,
                         options_.now() / 1'000'000, false));
  std::set<std::string> names;
  for (const auto& labels : sets) {
    for (const auto& label : labels) names.insert(label.name);
  }
  return PromSuccess(request, StringArrayJson(names));
}

server::HttpResponse Api::PromLabelValuesEndpoint(const server::HttpRequest& request,
                                                  const storage::Snapshot& snapshot) {
  const std::string_view rest = request.path().substr(kLabelValuesPrefix.size());
  if (!rest.ends_with("/values")) {
    return PromError(absl::NotFoundError("unknown endpoint"));
  }
  PROM_ASSIGN_OR_RESPOND(
      std::string name,
      PercentDecode(rest.substr(0, rest.size() - std::string_view("/values").size())));
  if (!promql::IsValidLabelName(name)) {
    return PromError(
        absl::InvalidArgumentError(absl::StrCat("invalid label name: \"", name, "\"")));
  }
  TraceMetricsSource traces(*rollups_, *service_map_, *options_.fs, snapshot);
  PROM_ASSIGN_OR_RESPOND(
      const std::vector<promql::Labels> sets,
      RequestedLabelSets(request, *options_.pool, FilesOf(snapshot),
                         CallOptions{options_.query_deadline}, point_cache_.get(), traces,
                         options_.now() / 1'000'000, false));
  std::set<std::string> values;
  for (const auto& labels : sets) {
    for (const auto& label : labels) {
      if (label.name == name) values.insert(label.value);
    }
  }
  return PromSuccess(request, StringArrayJson(values));
}

server::HttpResponse Api::PromSeriesEndpoint(const server::HttpRequest& request,
                                             const storage::Snapshot& snapshot) {
  TraceMetricsSource traces(*rollups_, *service_map_, *options_.fs, snapshot);
  PROM_ASSIGN_OR_RESPOND(
      const std::vector<promql::Labels> sets,
      RequestedLabelSets(request, *options_.pool, FilesOf(snapshot),
                         CallOptions{options_.query_deadline}, point_cache_.get(), traces,
                         options_.now() / 1'000'000, true));
  std::string data;
  otlp::JsonWriter json(&data);
  json.BeginArray();
  for (const auto& labels : sets) WriteLabels(json, labels);
  json.EndArray();
  return PromSuccess(request, data);
}

server::HttpResponse Api::PromMetadataEndpoint(const server::HttpRequest& request,
                                               const storage::Snapshot& snapshot) {
  PROM_ASSIGN_OR_RESPOND(QueryParams params, PromParams(request));
  PROM_ASSIGN_OR_RESPOND(std::optional<std::string> metric, params.Take("metric"));
  PROM_ASSIGN_OR_RESPOND(std::optional<std::string> limit_text, params.Take("limit"));
  int64_t limit = -1;
  if (limit_text.has_value() && !limit_text->empty()) {
    PROM_ASSIGN_OR_RESPOND(limit, ParseInteger("limit", *limit_text, INT64_MIN, INT64_MAX));
  }
  const query::ViewFiles files = FilesOf(snapshot);
  const CallOptions call{options_.query_deadline};
  MetricsSeriesSource metrics(*options_.pool, files, call, point_cache_.get());
  TraceMetricsSource traces(*rollups_, *service_map_, *options_.fs, snapshot);
  PromSeriesSources source(metrics, traces);
  PROM_ASSIGN_OR_RESPOND(std::vector<PromMetadata> all,
                         source.Metadata(0, options_.now() / 1'000'000));
  std::string data;
  otlp::JsonWriter json(&data);
  json.BeginObject();
  int64_t written = 0;
  for (const PromMetadata& one : all) {
    if (metric.has_value() && !metric->empty() && one.name != *metric) continue;
    if (limit >= 0 && written >= limit) break;
    ++written;
    json.Key(one.name);
    json.BeginArray();
    json.BeginObject();
    json.Key("type");
    json.String(one.type);
    json.Key("help");
    json.String(one.help);
    json.Key("unit");
    json.String(one.unit);
    json.EndObject();
    json.EndArray();
  }
  json.EndObject();
  return PromSuccess(request, data);
}

server::HttpResponse Api::PromExemplarsEndpoint(const server::HttpRequest& request,
                                                const storage::Snapshot& snapshot) {
  PROM_ASSIGN_OR_RESPOND(QueryParams params, PromParams(request));
  PROM_ASSIGN_OR_RESPOND(std::optional<std::string> query, params.Take("query"));
  PROM_ASSIGN_OR_RESPOND(auto window, PromWindow(params, options_.now() / 1'000'000));
  PROM_ASSIGN_OR_RESPOND(std::unique_ptr<promql::Expr> expr,
                         promql::ParsePromQL(query.value_or("")));
  const query::ViewFiles files = FilesOf(snapshot);
  const CallOptions call{options_.query_deadline};
  MetricsSeriesSource source(*options_.pool, files, call, point_cache_.get());
  std::string data;
  otlp::JsonWriter json(&data);
  json.BeginArray();
  // Every selector of the query, each series once.
  std::set<std::string> seen;
  for (const promql::Expr* selector : SelectorsOf(*expr)) {
    PROM_ASSIGN_OR_RESPOND(
        std::vector<PromExemplars> found,
        source.Exemplars(selector->matchers, window.first, window.second, kMaxListedSeries));
    for (const PromExemplars& one : found) {
      std::string key;
      for (const auto& label : one.series)
        absl::StrAppend(&key, label.name, "\x1f", label.value, "\x1e");
      if (!seen.insert(key).second) continue;
      json.BeginObject();
      json.Key("seriesLabels");
      WriteLabels(json, one.series);
      json.Key("exemplars");
      json.BeginArray();
      for (const MetricExemplar& exemplar : one.exemplars) {
        json.BeginObject();
        json.Key("labels");
        json.BeginObject();
        if (!exemplar.trace_id.empty()) {
          json.Key("trace_id");
          json.String(exemplar.trace_id);
        }
        if (!exemplar.span_id.empty()) {
          json.Key("span_id");
          json.String(exemplar.span_id);
        }
        json.EndObject();
        json.Key("value");
        json.String(promql::FormatFloat(exemplar.value.value_or(0)));
        json.Key("timestamp");
        json.Double(static_cast<double>(exemplar.time / 1'000'000) / 1000);
        json.EndObject();
      }
      json.EndArray();
      json.EndObject();
    }
  }
  json.EndArray();
  return PromSuccess(request, data);
}

void Api::AddPrometheusRoutes(server::HttpRouter* router,
                              const std::function<server::HttpHandler(Endpoint)>& route) {
  for (const char* method : {"GET", "POST"}) {
    router->Add(method, "/prometheus/api/v1/query", route(&Api::PromQueryEndpoint));
    router->Add(method, "/prometheus/api/v1/query_range", route(&Api::PromQueryRangeEndpoint));
    router->Add(method, "/prometheus/api/v1/query_exemplars", route(&Api::PromExemplarsEndpoint));
    router->Add(method, "/prometheus/api/v1/labels", route(&Api::PromLabelsEndpoint));
    router->Add(method, "/prometheus/api/v1/series", route(&Api::PromSeriesEndpoint));
    router->Add(method, "/prometheus/api/v1/format_query", route(&Api::PromFormatQueryEndpoint));
  }
  router->AddPrefix("GET", kLabelValuesPrefix, route(&Api::PromLabelValuesEndpoint));
  router->Add("GET", "/prometheus/api/v1/metadata", route(&Api::PromMetadataEndpoint));
  router->Add("GET", "/prometheus/api/v1/status/buildinfo", route(&Api::PromBuildInfoEndpoint));
  router->Add("GET", "/prometheus/api/v1/rules", route(&Api::PromRulesEndpoint));
  router->Add("GET", "/prometheus/api/v1/alerts", route(&Api::PromAlertsEndpoint));
}

}  // namespace strata::api
