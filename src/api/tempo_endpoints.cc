// The Tempo API under /tempo (docs/tempo.md): Grafana's Tempo data source
// pointed at http://<host>:7520/tempo. Answers in Tempo's schemas; unknown
// query parameters are ignored, as Tempo ignores them.

#include <algorithm>
#include <functional>

#include "absl/strings/str_cat.h"
#include "api/api_respond.h"
#include "api/api_server.h"
#include "api/attribute_discovery.h"
#include "api/gzip_answer.h"
#include "api/params.h"
#include "api/tempo_answers.h"
#include "api/traceql_search.h"
#include "common/status_macros.h"
#include "otlp/encode.h"
#include "otlp/json_writer.h"
#include "storage/trace_lookup.h"

namespace strata::api {
namespace {

constexpr std::string_view kTempoTraces = "/tempo/api/traces/";
constexpr std::string_view kTempoTracesV2 = "/tempo/api/v2/traces/";
constexpr std::string_view kTempoTagValues = "/tempo/api/search/tag/";
constexpr std::string_view kTempoTagValuesV2 = "/tempo/api/v2/search/tag/";

// The intrinsics Grafana offers in its TraceQL editor, as Tempo lists them.
constexpr std::string_view kIntrinsics[] = {
    "duration",      "kind",          "name",       "rootName",     "rootServiceName", "status",
    "statusMessage", "traceDuration", "event:name", "link:traceID", "span:id",         "trace:id"};

server::HttpResponse TextAnswer(int status, std::string body) {
  server::HttpResponse response;
  response.status = status;
  response.content_type = "text/plain; charset=utf-8";
  response.body = std::move(body);
  return response;
}

// Tempo's window: `start` and `end` in unix seconds; the last hour by
// default.
absl::StatusOr<TimeWindow> TempoWindow(QueryParams& params, const NowFunction& now) {
  TimeWindow window;
  window.end = now();
  STRATA_ASSIGN_OR_RETURN(std::optional<std::string> end, params.Take("end"));
  if (end.has_value()) {
    STRATA_ASSIGN_OR_RETURN(window.end, ParseUnixSeconds("end", *end));
    // Tempo's end second is inclusive.
    window.end += 1'000'000'000;
  }
  window.start = window.end - 3600LL * 1'000'000'000;
  STRATA_ASSIGN_OR_RETURN(std::optional<std::string> start, params.Take("start"));
  if (start.has_value()) {
    STRATA_ASSIGN_OR_RETURN(window.start, ParseUnixSeconds("start", *start));
  }
  if (window.start >= window.end) return absl::InvalidArgumentError("start: not before end");
  return window;
}

absl::StatusOr<int64_t> TakeBoundedInteger(QueryParams& params, std::string_view name,
                                           int64_t fallback, int64_t max) {
  STRATA_ASSIGN_OR_RETURN(std::optional<std::string> text, params.Take(name));
  if (!text.has_value() || text->empty()) return fallback;
  STRATA_ASSIGN_OR_RETURN(const int64_t value, ParseInteger(name, *text, 0, INT64_MAX));
  // Tempo reads 0 as "the default" and caps large values.
  if (value == 0) return fallback;
  return std::min(value, max);
}

// "span.http.method" -> ("span", "http.method"); ".x" -> ("", "x");
// "service.name" (v1, no scope) -> ("", "service.name").
std::pair<std::string, std::string> SplitTag(std::string_view tag) {
  for (std::string_view scope : {"span.", "resource.", "event.", "link.", "instrumentation."}) {
    if (tag.starts_with(scope)) {
      return {std::string(scope.substr(0, scope.size() - 1)),
              std::string(tag.substr(scope.size()))};
    }
  }
  if (tag.starts_with(".")) return {"", std::string(tag.substr(1))};
  return {"", std::string(tag)};
}

std::string TypeOf(const DiscoveredAttribute& attribute) {
  if (attribute.types.size() != 1) return "string";
  const std::string& type = attribute.types[0];
  if (type == "int") return "int";
  if (type == "double") return "float";
  if (type == "bool") return "bool";
  return "string";
}

}  // namespace

server::HttpResponse Api::TempoEchoEndpoint(const server::HttpRequest&, const storage::Snapshot&) {
  return TextAnswer(200, "echo");
}

server::HttpResponse Api::TempoBuildInfoEndpoint(const server::HttpRequest&,
                                                 const storage::Snapshot&) {
  std::string out;
  otlp::JsonWriter json(&out);
  json.BeginObject();
  json.Key("version");
  json.String(STRATA_VERSION);
  json.Key("revision");
  json.String("");
  json.Key("branch");
  json.String("");
  json.Key("buildUser");
  json.String("");
  json.Key("buildDate");
  json.String("");
  json.Key("goVersion");
  json.String("");
  json.EndObject();
  return JsonAnswer(200, std::move(out));
}

server::HttpResponse Api::TempoSearchEndpoint(const server::HttpRequest& request,
                                              const storage::Snapshot& snapshot) {
  API_ASSIGN_OR_RESPOND(QueryParams params, QueryParams::Parse(request.query()));
  TraceQLSearch search;
  API_ASSIGN_OR_RESPOND(const TimeWindow window, TempoWindow(params, options_.now));
  search.start = window.start;
  search.end = window.end;
  API_ASSIGN_OR_RESPOND(std::optional<std::string> q, params.Take("q"));
  API_ASSIGN_OR_RESPOND(std::optional<std::string> tags, params.Take("tags"));
  if (q.has_value() && !q->empty()) {
    search.query = *q;
  } else if (tags.has_value()) {
    API_ASSIGN_OR_RESPOND(search.query, TagsToTraceQL(*tags));
  }
  for (const auto& [name, target] : {std::pair{"minDuration", &search.min_trace_duration},
                                     std::pair{"maxDuration", &search.max_trace_duration}}) {
    API_ASSIGN_OR_RESPOND(std::optional<std::string> text, params.Take(name));
    if (text.has_value() && !text->empty()) {
      API_ASSIGN_OR_RESPOND(*target, ParseDuration(name, *text));
    }
  }
  API_ASSIGN_OR_RESPOND(search.limit,
                        TakeBoundedInteger(params, "limit", kTraceLimitDefault, kTraceLimitMax));
  API_ASSIGN_OR_RESPOND(search.spans_per_set,
                        TakeBoundedInteger(params, "spss", kSpansPerSetDefault, kSpansPerSetMax));
  API_ASSIGN_OR_RESPOND(std::vector<TraceQLTrace> traces,
                        SearchTraceQL(*options_.pool, snapshot, options_.data_dir, search,
                                      CallOptions{options_.query_deadline}));
  server::HttpResponse response = JsonAnswer(200, TempoSearchJson(traces));
  GzipIfAccepted(request, &response);
  return response;
}

server::HttpResponse Api::TempoTraceEndpoint(const server::HttpRequest& request,
                                             const storage::Snapshot& snapshot) {
  const bool v2 = request.path().starts_with(kTempoTracesV2);
  const std::string_view id_text =
      request.path().substr(v2 ? kTempoTracesV2.size() : kTempoTraces.size());
  API_ASSIGN_OR_RESPOND(const otlp::TraceId id, ParseTempoTraceId(id_text));
  if (options_.fs == nullptr) return ApiErrorResponse(absl::UnavailableError("recovering"));
  // start and end narrow nothing: the trace index finds any trace without
  // them (they are accepted and checked, as Tempo takes them).
  API_ASSIGN_OR_RESPOND(QueryParams params, QueryParams::Parse(request.query()));
  API_RETURN_IF_ERROR(TempoWindow(params, options_.now).status());
  API_ASSIGN_OR_RESPOND(std::optional<otlp::TraceBatch> batch,
                        storage::LookupTrace(*options_.fs, options_.data_dir, snapshot, id, nullptr,
                                             storage::TraceLookupDetail::kFull));
  if (!batch.has_value()) {
    return ApiErrorResponse(
        absl::NotFoundError(absl::StrCat("trace ", TraceIdHex(id), " not found")));
  }
  server::HttpResponse response;
  if (request.Header("Accept").find("application/protobuf") != std::string_view::npos) {
    response.status = 200;
    response.content_type = "application/protobuf";
    response.body = TempoTraceProto(otlp::EncodeTracesProto(*batch), v2);
  } else {
    response = JsonAnswer(200, TempoTraceJson(otlp::EncodeTracesJson(*batch), v2));
  }
  GzipIfAccepted(request, &response);
  return response;
}

server::HttpResponse Api::TempoTagsEndpoint(const server::HttpRequest& request,
                                            const storage::Snapshot& snapshot) {
  const bool v2 = request.path().starts_with("/tempo/api/v2/");
  API_ASSIGN_OR_RESPOND(QueryParams params, QueryParams::Parse(request.query()));
  API_ASSIGN_OR_RESPOND(const TimeWindow window, TempoWindow(params, options_.now));
  API_ASSIGN_OR_RESPOND(std::optional<std::string> scope, params.Take("scope"));
  const std::string wanted = scope.value_or("");
  AttributeDiscoveryQuery q;
  q.signal = Signal::kSpans;
  q.start = window.start;
  q.end = window.end;
  q.limit = kDiscoveryKeysMax;
  q.values = 0;
  API_ASSIGN_OR_RESPOND(const AttributeDiscovery found,
                        DiscoverAttributes(*options_.pool, snapshot, options_.data_dir, q,
                                           CallOptions{options_.query_deadline}));
  std::vector<std::string> span_keys, resource_keys;
  for (const DiscoveredAttribute& attribute : found.attributes) {
    (attribute.family == "resource" ? resource_keys : span_keys).push_back(attribute.key);
  }
  std::sort(span_keys.begin(), span_keys.end());
  std::sort(resource_keys.begin(), resource_keys.end());
  std::string out;
  otlp::JsonWriter json(&out);
  json.BeginObject();
  if (!v2) {
    std::vector<std::string> all = span_keys;
    all.insert(all.end(), resource_keys.begin(), resource_keys.end());
    std::sort(all.begin(), all.end());
    all.erase(std::unique(all.begin(), all.end()), all.end());
    json.Key("tagNames");
    json.BeginArray();
    for (const std::string& key : all) json.String(key);
    json.EndArray();
  } else {
    json.Key("scopes");
    json.BeginArray();
    auto scope_answer = [&](std::string_view name, const auto& tags) {
      if (!wanted.empty() && wanted != "all" && wanted != name) return;
      json.BeginObject();
      json.Key("name");
      json.String(name);
      json.Key("tags");
      json.BeginArray();
      for (const auto& tag : tags) json.String(tag);
      json.EndArray();
      json.EndObject();
    };
    scope_answer("resource", resource_keys);
    scope_answer("span", span_keys);
    scope_answer("intrinsic", kIntrinsics);
    json.EndArray();
  }
  json.EndObject();
  return JsonAnswer(200, std::move(out));
}

server::HttpResponse Api::TempoTagValuesEndpoint(const server::HttpRequest& request,
                                                 const storage::Snapshot& snapshot) {
  const bool v2 = request.path().starts_with(kTempoTagValuesV2);
  std::string_view rest =
      request.path().substr(v2 ? kTempoTagValuesV2.size() : kTempoTagValues.size());
  if (!rest.ends_with("/values")) {
    return ApiErrorResponse(
        absl::NotFoundError(absl::StrCat("no such path: ", std::string(request.path()))));
  }
  rest.remove_suffix(std::string_view("/values").size());
  API_ASSIGN_OR_RESPOND(const std::string tag, PercentDecode(rest));
  if (tag.empty()) return ApiErrorResponse(absl::InvalidArgumentError("tag: empty"));
  API_ASSIGN_OR_RESPOND(QueryParams params, QueryParams::Parse(request.query()));
  API_ASSIGN_OR_RESPOND(const TimeWindow window, TempoWindow(params, options_.now));
  // (type, value) pairs, most frequent first.
  std::vector<std::pair<std::string, std::string>> values;
  if (tag == "status" || tag == "span:status") {
    for (const char* v : {"error", "ok", "unset"}) values.emplace_back("keyword", v);
  } else if (tag == "kind" || tag == "span:kind") {
    for (const char* v : {"server", "client", "producer", "consumer", "internal", "unspecified"}) {
      values.emplace_back("keyword", v);
    }
  } else if (tag == "name" || tag == "span:name" || tag == "rootName" || tag == "rootServiceName" ||
             tag == "trace:rootName" || tag == "trace:rootService") {
    const bool service = tag == "rootServiceName" || tag == "trace:rootService";
    const std::string sql = absl::StrCat(
        "SELECT ", service ? "service_name" : "name",
        " AS v, count(*) AS n FROM spans WHERE start_time_unix_nano >= $1 AND"
        " start_time_unix_nano < $2",
        tag.starts_with("root") || tag.starts_with("trace:") ? " AND parent_span_id IS NULL" : "",
        " AND v IS NOT NULL GROUP BY v ORDER BY n DESC, v LIMIT 1000");
    query::QueryOptions options;
    options.deadline = options_.query_deadline;
    options.max_rows = 1000;
    options.params = {static_cast<uint64_t>(std::max<int64_t>(0, window.start)),
                      static_cast<uint64_t>(std::max<int64_t>(0, window.end))};
    API_ASSIGN_OR_RESPOND(const query::QueryResult result,
                          options_.pool->Run(SpanFilesOf(snapshot, window), sql, options));
    for (const auto& row : result.rows) {
      if (!row.empty() && row[0].has_value()) values.emplace_back("string", *row[0]);
    }
  } else {
    const auto [scope, key] = SplitTag(tag);
    AttributeDiscoveryQuery q;
    q.signal = Signal::kSpans;
    q.start = window.start;
    q.end = window.end;
    q.key = key;
    q.values = kDiscoveryValuesMax;
    API_ASSIGN_OR_RESPOND(const AttributeDiscovery found,
                          DiscoverAttributes(*options_.pool, snapshot, options_.data_dir, q,
                                             CallOptions{options_.query_deadline}));
    for (const DiscoveredAttribute& attribute : found.attributes) {
      if ((scope == "span" && attribute.family != "attribute") ||
          (scope == "resource" && attribute.family != "resource")) {
        continue;
      }
      for (const AttributeValueCount& value : attribute.values) {
        values.emplace_back(TypeOf(attribute), value.value);
      }
    }
  }
  std::string out;
  otlp::JsonWriter json(&out);
  json.BeginObject();
  json.Key("tagValues");
  json.BeginArray();
  for (const auto& [type, value] : values) {
    if (!v2) {
      json.String(value);
      continue;
    }
    json.BeginObject();
    json.Key("type");
    json.String(type);
    json.Key("value");
    json.String(value);
    json.EndObject();
  }
  json.EndArray();
  json.EndObject();
  return JsonAnswer(200, std::move(out));
}

void Api::AddTempoRoutes(server::HttpRouter* router,
                         const std::function<server::HttpHandler(Endpoint)>& route) {
  router->Add("GET", "/tempo/api/echo", route(&Api::TempoEchoEndpoint));
  router->Add("GET", "/tempo/api/status/buildinfo", route(&Api::TempoBuildInfoEndpoint));
  router->Add("GET", "/tempo/api/search", route(&Api::TempoSearchEndpoint));
  router->AddPrefix("GET", kTempoTraces, route(&Api::TempoTraceEndpoint));
  router->AddPrefix("GET", kTempoTracesV2, route(&Api::TempoTraceEndpoint));
  router->Add("GET", "/tempo/api/search/tags", route(&Api::TempoTagsEndpoint));
  router->Add("GET", "/tempo/api/v2/search/tags", route(&Api::TempoTagsEndpoint));
  router->AddPrefix("GET", kTempoTagValues, route(&Api::TempoTagValuesEndpoint));
  router->AddPrefix("GET", kTempoTagValuesV2, route(&Api::TempoTagValuesEndpoint));
}

}  // namespace strata::api
