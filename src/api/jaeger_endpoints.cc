// The Jaeger query API on the API port (/jaeger/api/*, docs/api.md
// "Jaeger"): the classic JSON API Grafana's Jaeger data source and Jaeger UI
// call, and the v3 API (/jaeger/api/v3/*, OTLP/JSON traces), answered from the same code paths as
// /api/v1/*: services and operations from the rollups, searches through SearchTraces, traces
// through LookupTrace, dependencies from the service map. jaeger_model.h
// writes the answers; jaeger_params.h reads the parameters.

#include <algorithm>
#include <map>
#include <set>
#include <utility>

#include "absl/strings/str_cat.h"
#include "api/api_respond.h"
#include "api/api_server.h"
#include "api/gzip_answer.h"
#include "api/jaeger_model.h"
#include "api/jaeger_params.h"
#include "api/jaeger_search.h"
#include "api/jaeger_v3_answers.h"
#include "common/status_macros.h"
#include "storage/trace_lookup.h"

namespace strata::api {
namespace {

constexpr std::string_view kJaegerServicesPrefix = "/jaeger/api/services/";
constexpr std::string_view kJaegerTracesPrefix = "/jaeger/api/traces/";
constexpr std::string_view kJaegerV3TracesPrefix = "/jaeger/api/v3/traces/";
constexpr std::string_view kOperationsSuffix = "/operations";

// Services and operations have no window in Jaeger's API: the last week.
constexpr int64_t kJaegerNamesWindowNanos = 7 * 86'400 * kNanosPerSecond;
// Dependencies: Jaeger's default lookback.
constexpr int64_t kJaegerDependenciesLookbackNanos = 86'400 * kNanosPerSecond;
constexpr int64_t kNanosPerMilli = 1'000'000;

// `body`, or the error in Jaeger's envelope with the status (and headers:
// Retry-After) ApiErrorResponse gives it.
server::HttpResponse JaegerAnswer(const server::HttpRequest& request,
                                  absl::StatusOr<std::string> body) {
  if (!body.ok()) {
    server::HttpResponse response = ApiErrorResponse(body.status());
    response.body = JaegerErrorResponse(response.status, std::string(body.status().message()));
    return response;
  }
  server::HttpResponse response = JsonAnswer(200, *std::move(body));
  GzipIfAccepted(request, &response);
  return response;
}

MinuteWindow NamesWindow(const NowFunction& now) {
  const int64_t end = now() + 60 * kNanosPerSecond;
  return MinutesOf(static_cast<uint64_t>(std::max<int64_t>(0, end - kJaegerNamesWindowNanos)),
                   static_cast<uint64_t>(std::max<int64_t>(1, end)));
}

// `body`, or the error in the v3 API's form with ApiErrorResponse's status.
server::HttpResponse JaegerV3Answer(const server::HttpRequest& request,
                                    absl::StatusOr<std::string> body) {
  if (!body.ok()) {
    server::HttpResponse response = ApiErrorResponse(body.status());
    response.body = JaegerV3ErrorResponse(body.status(), response.status);
    return response;
  }
  server::HttpResponse response = JsonAnswer(200, *std::move(body));
  GzipIfAccepted(request, &response);
  return response;
}

// The services with spans in the names window, sorted.
absl::StatusOr<std::vector<std::string>> ServiceNames(RollupCache& rollups, FileSystem& fs,
                                                      const storage::Snapshot& snapshot,
                                                      const NowFunction& now) {
  const MinuteWindow minutes = NamesWindow(now);
  STRATA_ASSIGN_OR_RETURN(RollupSet rows, rollups.ForWindow(fs, snapshot, minutes));
  std::set<std::string> names;
  for (const ServiceRed& service : ServicesRed(rows, minutes)) {
    // Services with spans: log and metric rows name services too.
    if (service.spans.count() > 0) names.insert(service.name);
  }
  return std::vector<std::string>(names.begin(), names.end());
}

// The service's (operation, kind) pairs in the names window, sorted; of
// one kind when `kind` is set.
absl::StatusOr<std::vector<JaegerOperation>> ServiceOperations(RollupCache& rollups, FileSystem& fs,
                                                               const storage::Snapshot& snapshot,
                                                               const NowFunction& now,
                                                               const std::string& service,
                                                               std::optional<int32_t> kind) {
  const MinuteWindow minutes = NamesWindow(now);
  STRATA_ASSIGN_OR_RETURN(RollupSet rows, rollups.ForWindow(fs, snapshot, minutes));
  std::set<std::pair<std::string, std::string>> operations;
  for (const OperationRed& operation :
       OperationsRed(rows, minutes, ServiceSelector{.name = service})) {
    if (kind.has_value() && operation.kind != *kind) continue;
    operations.emplace(operation.name, std::string(JaegerSpanKindName(operation.kind)));
  }
  std::vector<JaegerOperation> out;
  for (const auto& [name, span_kind] : operations) out.push_back({name, span_kind});
  return out;
}

// `text` as a span kind name (`name` for the error).
absl::StatusOr<int32_t> SpanKindParam(std::string_view name, const std::string& text) {
  const std::optional<int32_t> kind = JaegerSpanKindOf(text);
  if (!kind.has_value() || text.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(
        std::string(name),
        ": not server, client, producer, consumer or internal: ", QuoteForError(text)));
  }
  return *kind;
}

// The trace whose id is the last segment of `path` after `prefix`.
absl::StatusOr<otlp::TraceBatch> TraceAt(FileSystem& fs, const std::string& data_dir,
                                         const storage::Snapshot& snapshot, std::string_view path,
                                         std::string_view prefix) {
  const std::string_view rest = path.substr(prefix.size());
  if (rest.find('/') != std::string_view::npos) {
    return absl::NotFoundError(absl::StrCat("no such endpoint: ", std::string(path), " (expected ",
                                            std::string(prefix), "{trace_id})"));
  }
  STRATA_ASSIGN_OR_RETURN(const std::string id_text, PercentDecode(rest));
  STRATA_ASSIGN_OR_RETURN(const otlp::TraceId id, ParseJaegerTraceId(id_text));
  STRATA_ASSIGN_OR_RETURN(std::optional<otlp::TraceBatch> batch,
                          storage::LookupTrace(fs, data_dir, snapshot, id, nullptr));
  if (!batch.has_value()) return absl::NotFoundError("trace not found");
  return *std::move(batch);
}

}  // namespace

server::HttpResponse Api::JaegerServicesEndpoint(const server::HttpRequest& request,
                                                 const storage::Snapshot& snapshot) {
  return JaegerAnswer(request, [&]() -> absl::StatusOr<std::string> {
    STRATA_ASSIGN_OR_RETURN(const std::vector<std::string> names,
                            ServiceNames(*rollups_, *options_.fs, snapshot, options_.now));
    return JaegerNamesResponse(names);
  }());
}

server::HttpResponse Api::JaegerOperationsEndpoint(const server::HttpRequest& request,
                                                   const storage::Snapshot& snapshot) {
  return JaegerAnswer(request, [&]() -> absl::StatusOr<std::string> {
    STRATA_ASSIGN_OR_RETURN(QueryParams params, QueryParams::Parse(request.query()));
    // /jaeger/api/services/{service}/operations: names;
    // /jaeger/api/operations: {name, spanKind}.
    if (request.path().starts_with(kJaegerServicesPrefix)) {
      std::string_view rest = request.path().substr(kJaegerServicesPrefix.size());
      if (rest.size() <= kOperationsSuffix.size() || !rest.ends_with(kOperationsSuffix) ||
          rest.substr(0, rest.size() - kOperationsSuffix.size()).find('/') !=
              std::string_view::npos) {
        return absl::NotFoundError(
            absl::StrCat("no such endpoint: ", std::string(request.path()),
                         " (expected /jaeger/api/services/{service}/operations)"));
      }
      rest.remove_suffix(kOperationsSuffix.size());
      STRATA_ASSIGN_OR_RETURN(const std::string service, PercentDecode(rest));
      STRATA_ASSIGN_OR_RETURN(
          const std::vector<JaegerOperation> operations,
          ServiceOperations(*rollups_, *options_.fs, snapshot, options_.now, service, {}));
      std::set<std::string> names;
      for (const JaegerOperation& operation : operations) names.insert(operation.name);
      return JaegerNamesResponse(std::vector<std::string>(names.begin(), names.end()));
    }
    STRATA_ASSIGN_OR_RETURN(std::optional<std::string> service, TakeJaegerParam(params, "service"));
    if (!service.has_value()) return absl::InvalidArgumentError("service: required");
    STRATA_ASSIGN_OR_RETURN(std::optional<std::string> kind_text,
                            TakeJaegerParam(params, "spanKind"));
    std::optional<int32_t> kind;
    if (kind_text.has_value()) {
      STRATA_ASSIGN_OR_RETURN(kind, SpanKindParam("spanKind", *kind_text));
    }
    STRATA_ASSIGN_OR_RETURN(
        const std::vector<JaegerOperation> operations,
        ServiceOperations(*rollups_, *options_.fs, snapshot, options_.now, *service, kind));
    return JaegerOperationsResponse(operations);
  }());
}

server::HttpResponse Api::JaegerTraceEndpoint(const server::HttpRequest& request,
                                              const storage::Snapshot& snapshot) {
  return JaegerAnswer(request, [&]() -> absl::StatusOr<std::string> {
    if (options_.fs == nullptr) return absl::UnavailableError("recovering");
    STRATA_ASSIGN_OR_RETURN(
        const otlp::TraceBatch trace,
        TraceAt(*options_.fs, options_.data_dir, snapshot, request.path(), kJaegerTracesPrefix));
    return JaegerTracesResponse(std::span<const otlp::TraceBatch>(&trace, 1));
  }());
}

server::HttpResponse Api::JaegerSearchEndpoint(const server::HttpRequest& request,
                                               const storage::Snapshot& snapshot) {
  return JaegerAnswer(request, [&]() -> absl::StatusOr<std::string> {
    STRATA_ASSIGN_OR_RETURN(QueryParams params, QueryParams::Parse(request.query()));
    STRATA_ASSIGN_OR_RETURN(const TraceSearch search, TakeJaegerTraceSearch(params, options_.now));
    if (options_.fs == nullptr) return absl::UnavailableError("recovering");
    STRATA_ASSIGN_OR_RETURN(
        const std::vector<otlp::TraceBatch> traces,
        FindJaegerTraces(*options_.pool, *options_.fs, options_.data_dir, snapshot, search,
                         CallOptions{options_.query_deadline}, options_.jaeger_max_search_spans));
    return JaegerTracesResponse(traces);
  }());
}

server::HttpResponse Api::JaegerDependenciesEndpoint(const server::HttpRequest& request,
                                                     const storage::Snapshot& snapshot) {
  return JaegerAnswer(request, [&]() -> absl::StatusOr<std::string> {
    STRATA_ASSIGN_OR_RETURN(QueryParams params, QueryParams::Parse(request.query()));
    STRATA_ASSIGN_OR_RETURN(std::optional<std::string> end_text, TakeJaegerParam(params, "endTs"));
    STRATA_ASSIGN_OR_RETURN(std::optional<std::string> lookback_text,
                            TakeJaegerParam(params, "lookback"));
    int64_t end = options_.now();
    if (end_text.has_value()) {
      STRATA_ASSIGN_OR_RETURN(const int64_t millis,
                              ParseInteger("endTs", *end_text, 1, INT64_MAX / kNanosPerMilli));
      end = millis * kNanosPerMilli;
    }
    int64_t lookback = kJaegerDependenciesLookbackNanos;
    if (lookback_text.has_value()) {
      STRATA_ASSIGN_OR_RETURN(const int64_t millis, ParseInteger("lookback", *lookback_text, 1,
                                                                 INT64_MAX / kNanosPerMilli));
      lookback = millis * kNanosPerMilli;
    }
    const MinuteWindow minutes = MinutesOf(
        static_cast<uint64_t>(std::max<int64_t>(0, end - lookback)), static_cast<uint64_t>(end));
    STRATA_ASSIGN_OR_RETURN(RollupSet rows, rollups_->ForWindow(*options_.fs, snapshot, minutes));
    const ServiceMapAnswer map = service_map_->Answer(*options_.fs, snapshot, minutes, rows);
    // Calls between two services, summed over the edge types (calls and
    // messages); edges to databases and uninstrumented peers are not
    // Jaeger dependencies.
    std::map<std::pair<std::string, std::string>, int64_t> calls;
    for (const MapEdge& edge : map.edges) {
      const rollups::Node& source = map.nodes[edge.source].node;
      const rollups::Node& target = map.nodes[edge.target].node;
      if (source.type != rollups::NodeType::kService ||
          target.type != rollups::NodeType::kService || edge.measures.calls <= 0) {
        continue;
      }
      calls[{source.name, target.name}] += edge.measures.calls;
    }
    std::vector<JaegerDependency> out;
    for (const auto& [pair, count] : calls) out.push_back({pair.first, pair.second, count});
    return JaegerDependenciesResponse(out);
  }());
}

server::HttpResponse Api::JaegerV3ServicesEndpoint(const server::HttpRequest& request,
                                                   const storage::Snapshot& snapshot) {
  return JaegerV3Answer(request, [&]() -> absl::StatusOr<std::string> {
    STRATA_ASSIGN_OR_RETURN(const std::vector<std::string> names,
                            ServiceNames(*rollups_, *options_.fs, snapshot, options_.now));
    return JaegerV3ServicesResponse(names);
  }());
}

server::HttpResponse Api::JaegerV3OperationsEndpoint(const server::HttpRequest& request,
                                                     const storage::Snapshot& snapshot) {
  return JaegerV3Answer(request, [&]() -> absl::StatusOr<std::string> {
    STRATA_ASSIGN_OR_RETURN(QueryParams params, QueryParams::Parse(request.query()));
    STRATA_ASSIGN_OR_RETURN(std::optional<std::string> service, TakeJaegerParam(params, "service"));
    if (!service.has_value()) return absl::InvalidArgumentError("service: required");
    STRATA_ASSIGN_OR_RETURN(std::optional<std::string> kind_text,
                            TakeJaegerParam(params, "span_kind"));
    std::optional<int32_t> kind;
    if (kind_text.has_value()) {
      STRATA_ASSIGN_OR_RETURN(kind, SpanKindParam("span_kind", *kind_text));
    }
    STRATA_ASSIGN_OR_RETURN(
        const std::vector<JaegerOperation> operations,
        ServiceOperations(*rollups_, *options_.fs, snapshot, options_.now, *service, kind));
    return JaegerV3OperationsResponse(operations);
  }());
}

server::HttpResponse Api::JaegerV3TraceEndpoint(const server::HttpRequest& request,
                                                const storage::Snapshot& snapshot) {
  return JaegerV3Answer(request, [&]() -> absl::StatusOr<std::string> {
    if (options_.fs == nullptr) return absl::UnavailableError("recovering");
    STRATA_ASSIGN_OR_RETURN(
        const otlp::TraceBatch trace,
        TraceAt(*options_.fs, options_.data_dir, snapshot, request.path(), kJaegerV3TracesPrefix));
    return JaegerV3TracesResponse(std::span<const otlp::TraceBatch>(&trace, 1));
  }());
}

server::HttpResponse Api::JaegerV3SearchEndpoint(const server::HttpRequest& request,
                                                 const storage::Snapshot& snapshot) {
  return JaegerV3Answer(request, [&]() -> absl::StatusOr<std::string> {
    STRATA_ASSIGN_OR_RETURN(QueryParams params, QueryParams::Parse(request.query()));
    STRATA_ASSIGN_OR_RETURN(const TraceSearch search, TakeJaegerV3Search(params));
    if (options_.fs == nullptr) return absl::UnavailableError("recovering");
    STRATA_ASSIGN_OR_RETURN(
        const std::vector<otlp::TraceBatch> traces,
        FindJaegerTraces(*options_.pool, *options_.fs, options_.data_dir, snapshot, search,
                         CallOptions{options_.query_deadline}, options_.jaeger_max_search_spans));
    return JaegerV3TracesResponse(traces);
  }());
}

}  // namespace strata::api
