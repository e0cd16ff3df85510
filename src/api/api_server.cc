#include "api/api_server.h"

#include <utility>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "api/api_respond.h"
#include "api/attribute_discovery.h"
#include "api/gzip_answer.h"
#include "api/json_output.h"
#include "api/log_filter.h"
#include "api/log_volume.h"
#include "api/search.h"
#include "api/service_health_json.h"
#include "api/service_params.h"
#include "api/span_text_search.h"
#include "api/trace_columns.h"
#include "api/trace_path.h"
#include "api/trace_span.h"
#include "common/status_macros.h"
#include "fmt/format.h"
#include "otlp/encode.h"
#include "otlp/json_writer.h"
#include "storage/format/layout.h"
#include "storage/storage.h"
#include "storage/trace_lookup.h"

namespace strata::api {
namespace {

constexpr std::string_view kTracesPrefix = "/api/v1/traces/";
constexpr std::string_view kServicesPrefix = "/api/v1/services/";
constexpr std::string_view kOperationsSuffix = "/operations";
constexpr std::string_view kEndpointsSuffix = "/endpoints";

constexpr Limit kSqlLimit{1000, 10000};

server::HttpResponse JsonResponse(std::string body) { return JsonAnswer(200, std::move(body)); }

// Takes an optional string parameter into `out`.
absl::Status TakeString(QueryParams& params, std::string_view name,
                        std::optional<std::string>* out) {
  absl::StatusOr<std::optional<std::string>> value = params.Take(name);
  if (!value.ok()) return value.status();
  *out = *std::move(value);
  return absl::OkStatus();
}

}  // namespace

int HttpStatusForApi(const absl::Status& status) {
  if (query::IsQueryOutOfMemory(status)) return 422;
  switch (status.code()) {
    case absl::StatusCode::kOk:
      return 200;
    case absl::StatusCode::kInvalidArgument:
    case absl::StatusCode::kOutOfRange:
    case absl::StatusCode::kFailedPrecondition:
      return 400;
    case absl::StatusCode::kUnauthenticated:
      return 401;
    case absl::StatusCode::kPermissionDenied:
      return 403;
    case absl::StatusCode::kNotFound:
      return 404;
    case absl::StatusCode::kAlreadyExists:
    case absl::StatusCode::kAborted:
      return 409;
    case absl::StatusCode::kResourceExhausted:
      return 429;
    case absl::StatusCode::kUnavailable:
      return 503;
    case absl::StatusCode::kDeadlineExceeded:
      return 504;
    default:
      return 500;
  }
}

server::HttpResponse ApiErrorResponse(const absl::Status& status) {
  server::HttpResponse response;
  response.status = HttpStatusForApi(status);
  response.content_type = std::string(kJsonContentType);
  response.body = ErrorJson(std::string(status.message()));
  if (response.status == 429 || response.status == 503) {
    const std::optional<absl::Duration> wait = control::RetryAfterOf(status);
    response.headers.emplace_back(
        "Retry-After", wait.has_value() ? std::to_string(absl::ToInt64Seconds(*wait)) : "1");
  }
  if (response.status == 401) {
    response.headers.emplace_back("WWW-Authenticate", "Bearer realm=\"strata\"");
  }
  return response;
}

std::function<absl::StatusOr<control::TokenScope>(std::string_view)> AcceptOnlyToken(
    std::string token, control::TokenScope scope) {
  return [token = std::move(token),
          scope](std::string_view presented) -> absl::StatusOr<control::TokenScope> {
    if (presented == token) return scope;
    return absl::UnauthenticatedError("unknown or revoked token");
  };
}

Api::Api(ApiOptions options)
    : options_(std::move(options)),
      tail_(std::make_unique<LogTail>(options_.log_tail, options_.pool, options_.data_dir,
                                      CallOptions{options_.query_deadline})),
      mcp_streams_(std::make_unique<McpStreams>(
          options_.mcp_streams, [this](std::string_view session, bool streaming) {
            return mcp_sessions_->Live(session, options_.now(), streaming);
          })) {
  const int threads = std::max(1, options_.worker_threads);
  workers_.reserve(static_cast<size_t>(threads));
  for (int i = 0; i < threads; ++i) workers_.emplace_back([this] { WorkerLoop(); });
  if (!options_.data_dir.empty()) {
    // The resolved state survives restarts (docs/format/service-map-state.md).
    const storage::DataDirPaths paths(options_.data_dir);
    ServiceMapOptions map_options;
    map_options.state_path = paths.ServiceMapState();
    map_options.state_temp_path = paths.ServiceMapStateTemp();
    service_map_ = std::make_unique<ServiceMap>(std::move(map_options));
  }
  service_map_->Start(options_.storage, options_.fs);
  RollupPreloadOptions preload = options_.rollup_preload;
  if (!preload.now) preload.now = options_.now;
  rollup_preload_ = std::make_unique<RollupPreload>(std::move(preload), options_.storage,
                                                    options_.fs, rollups_.get());
}

Api::~Api() {
  tail_->Stop();
  mcp_streams_->Stop();
  std::deque<Job> left;
  {
    MutexLock lock(&mu_);
    stopping_ = true;
    left.swap(queue_);
    work_cv_.SignalAll();
  }
  for (Job& job : left) {
    job.responder.Respond(ApiErrorResponse(absl::UnavailableError("the API is shutting down")));
  }
  for (std::thread& worker : workers_) worker.join();
}

void Api::AddRoutes(server::HttpRouter* router) {
  auto route = [this](Endpoint endpoint) {
    return [this, endpoint](server::HttpRequest request, server::HttpResponder responder) {
      Dispatch(Job{
          .endpoint = endpoint, .request = std::move(request), .responder = std::move(responder)});
    };
  };
  auto account = [this](AccountEndpoint endpoint) {
    return [this, endpoint](server::HttpRequest request, server::HttpResponder responder) {
      Dispatch(Job{.account_endpoint = endpoint,
                   .request = std::move(request),
                   .responder = std::move(responder)});
    };
  };
  router->AddPrefix("GET", kTracesPrefix, route(&Api::GetTrace));
  router->Add("GET", "/api/v1/traces", route(&Api::SearchTracesEndpoint));
  router->Add("GET", "/api/v1/logs", route(&Api::SearchLogsEndpoint));
  router->Add("GET", "/api/v1/logs/volume", route(&Api::LogVolumeEndpoint));
  router->Add("GET", "/api/v1/attributes", route(&Api::AttributesEndpoint));
  router->Add("GET", "/api/v1/logs/tail",
              [this](server::HttpRequest request, server::HttpResponder responder) {
                TailLogs(std::move(request), std::move(responder));
              });
  router->Add("GET", "/api/v1/metrics/names", route(&Api::MetricNamesEndpoint));
  router->Add("GET", "/api/v1/metrics/query", route(&Api::MetricQueryEndpoint));
  router->Add("GET", "/api/v1/services", route(&Api::ServicesEndpoint));
  router->AddPrefix("GET", kServicesPrefix, route(&Api::ServiceDetailEndpoint));
  router->Add("GET", "/api/v1/red", route(&Api::RedEndpoint));
  router->Add("GET", "/api/v1/service-map", route(&Api::ServiceMapEndpoint));
  router->Add("POST", "/api/v1/sql", route(&Api::SqlEndpoint));
  // Jaeger's query API (docs/api.md, "Jaeger").
  router->Add("GET", "/jaeger/api/services", route(&Api::JaegerServicesEndpoint));
  router->AddPrefix("GET", "/jaeger/api/services/", route(&Api::JaegerOperationsEndpoint));
  router->Add("GET", "/jaeger/api/operations", route(&Api::JaegerOperationsEndpoint));
  router->Add("GET", "/jaeger/api/traces", route(&Api::JaegerSearchEndpoint));
  router->AddPrefix("GET", "/jaeger/api/traces/", route(&Api::JaegerTraceEndpoint));
  router->Add("GET", "/jaeger/api/dependencies", route(&Api::JaegerDependenciesEndpoint));
  router->Add("GET", "/jaeger/api/v3/services", route(&Api::JaegerV3ServicesEndpoint));
  router->Add("GET", "/jaeger/api/v3/operations", route(&Api::JaegerV3OperationsEndpoint));
  router->Add("GET", "/jaeger/api/v3/traces", route(&Api::JaegerV3SearchEndpoint));
  router->AddPrefix("GET", "/jaeger/api/v3/traces/", route(&Api::JaegerV3TraceEndpoint));
  AddTempoRoutes(router, route);
  AddPrometheusRoutes(router, route);
  AddLokiRoutes(router, route);
  for (std::string_view method : {"POST", "DELETE"}) {
    router->Add(method, "/mcp", account(&Api::McpEndpoint));
  }
  router->Add("GET", "/mcp", [this](server::HttpRequest request, server::HttpResponder responder) {
    McpStreamEndpoint(std::move(request), std::move(responder));
  });
  router->Add("GET", "/.well-known/oauth-protected-resource",
              account(&Api::OAuthResourceMetadataEndpoint));
  router->Add("GET", "/.well-known/oauth-protected-resource/mcp",
              account(&Api::OAuthResourceMetadataEndpoint));
  router->Add("GET", "/.well-known/oauth-authorization-server",
              account(&Api::OAuthServerMetadataEndpoint));
  router->Add("POST", "/oauth/register", account(&Api::OAuthRegisterEndpoint));
  router->Add("GET", "/oauth/authorize", account(&Api::OAuthAuthorizePageEndpoint));
  router->Add("POST", "/oauth/authorize", account(&Api::OAuthApproveEndpoint));
  router->Add("POST", "/oauth/token", account(&Api::OAuthTokenEndpoint));

  router->Add("GET", "/api/v1/auth/setup", account(&Api::SetupStatusEndpoint));
  router->Add("POST", "/api/v1/auth/setup", account(&Api::SetupEndpoint));
  router->Add("POST", "/api/v1/auth/login", account(&Api::LoginEndpoint));
  router->Add("POST", "/api/v1/auth/password", account(&Api::PasswordEndpoint));
  router->Add("POST", "/api/v1/auth/logout", account(&Api::LogoutEndpoint));
  router->Add("GET", "/api/v1/auth/me", account(&Api::MeEndpoint));
  router->Add("POST", "/api/v1/auth/me/password", account(&Api::ChangePasswordEndpoint));
  router->Add("GET", "/api/v1/auth/me/oauth-grants", account(&Api::ListOAuthGrantsEndpoint));
  router->AddPrefix("DELETE", "/api/v1/auth/me/oauth-grants/",
                    account(&Api::RevokeOAuthGrantEndpoint));
  router->Add("GET", "/api/v1/users", account(&Api::ListUsersEndpoint));
  router->Add("POST", "/api/v1/users", account(&Api::CreateUserEndpoint));
  for (std::string_view method : {"PATCH", "DELETE", "POST"}) {
    router->AddPrefix(method, "/api/v1/users/", account(&Api::UserEndpoint));
  }
  router->Add("GET", "/api/v1/tokens", account(&Api::ListTokensEndpoint));
  router->Add("POST", "/api/v1/tokens", account(&Api::CreateTokenEndpoint));
  router->AddPrefix("DELETE", "/api/v1/tokens/", account(&Api::RevokeTokenEndpoint));
  router->Add("GET", "/api/v1/audit", account(&Api::AuditEndpoint));
  router->Add("GET", "/api/v1/saved-queries", account(&Api::ListSavedQueriesEndpoint));
  router->Add("POST", "/api/v1/saved-queries", account(&Api::CreateSavedQueryEndpoint));
  for (std::string_view method : {"GET", "PATCH", "DELETE"}) {
    router->AddPrefix(method, "/api/v1/saved-queries/", account(&Api::SavedQueryEndpoint));
  }
}

control::RequestOrigin Api::OriginOf(const server::HttpRequest& request) const {
  constexpr size_t kMaxUserAgent = 256;
  return control::RequestOrigin{
      .address = View(request).address,
      .user_agent = std::string(request.Header("User-Agent").substr(0, kMaxUserAgent))};
}

absl::StatusOr<Caller> Api::ResolveCaller(const server::HttpRequest& request) {
  Caller caller;
  if (const std::string token = PresentedToken(request); !token.empty()) {
    if (token.starts_with(control::kOAuthAccessPrefix)) {
      // OAuth access tokens are for the MCP server alone, and only for the
      // resource they were issued for (this server's /mcp URL).
      if (request.path() != "/mcp" || options_.oauth == nullptr) {
        return absl::UnauthenticatedError("an OAuth access token is accepted only at /mcp");
      }
      STRATA_ASSIGN_OR_RETURN(const std::optional<control::OAuthAccess> access,
                              options_.oauth->ResolveAccess(token, McpResourceUrl(request),
                                                            absl::FromUnixNanos(options_.now())));
      if (!access.has_value()) {
        return absl::UnauthenticatedError(
            "the access token is unknown, expired, revoked or for another resource");
      }
      caller.kind = Caller::Kind::kToken;
      caller.scope = control::TokenScope::kRead;
      caller.oauth_grant = access->grant_id;
      return caller;
    }
    if (!options_.authenticate) return absl::UnauthenticatedError("no token is accepted");
    absl::StatusOr<control::TokenScope> scope = options_.authenticate(token);
    if (!scope.ok()) return scope.status();
    caller.kind = Caller::Kind::kToken;
    caller.scope = *scope;
    return caller;
  }
  const std::string_view cookie = SessionCookie(request, View(request).secure);
  if (cookie.empty() || options_.accounts == nullptr) return caller;
  STRATA_ASSIGN_OR_RETURN(std::optional<control::SessionUser> session,
                          options_.accounts->ResolveSession(cookie));
  if (!session.has_value()) {
    return absl::UnauthenticatedError("the session has expired or was ended; sign in again");
  }
  caller.kind = Caller::Kind::kSession;
  caller.session = *std::move(session);
  return caller;
}

absl::StatusOr<Caller> Api::Admit(const server::HttpRequest& request) {
  const std::optional<Access> access = AccessFor(request.method, request.path());
  const bool presented =
      !PresentedToken(request).empty() || !SessionCookie(request, View(request).secure).empty();
  auto deny = [&](const std::string& actor, const absl::Status& status) {
    if (options_.accounts != nullptr && presented) {
      options_.accounts->Audit(
          actor, "access.denied", fmt::format("{} {}", request.method, request.path()),
          control::AuditOutcome::kDenied, OriginOf(request), std::string(status.message()));
    }
    return status;
  };
  if (!access.has_value()) {
    return deny("anonymous", absl::PermissionDeniedError("this route has no access rule"));
  }
  absl::StatusOr<Caller> caller = ResolveCaller(request);
  if (!caller.ok()) {
    if (*access == Access::kPublic) return Caller{};
    if (absl::IsUnauthenticated(caller.status())) return deny("anonymous", caller.status());
    return caller.status();
  }
  if (*access == Access::kPublic) {
    // The sign-in endpoints set the cookie: the browser rules apply. OAuth
    // clients' endpoints neither read nor set it: no browser rules.
    if (ChangesState(request.method) && !IsOAuthClientEndpoint(request.path())) {
      STRATA_RETURN_IF_ERROR(
          CheckBrowserRequest(request, View(request).secure, View(request).host));
    }
    return caller;
  }
  if (absl::Status allowed = CheckAccess(*access, *caller); !allowed.ok()) {
    return deny(caller->Actor(), allowed);
  }
  if (caller->kind == Caller::Kind::kSession) {
    if (absl::Status browser =
            CheckBrowserRequest(request, View(request).secure, View(request).host);
        !browser.ok()) {
      return deny(caller->Actor(), browser);
    }
  }
  return caller;
}

void Api::TailLogs(server::HttpRequest request, server::HttpResponder responder) {
  if (const absl::StatusOr<Caller> caller = Admit(request); !caller.ok()) {
    responder.Respond(ApiErrorResponse(caller.status()));
    return;
  }
  tail_->Start(options_.storage ? options_.storage() : nullptr, request, std::move(responder));
}

server::HttpResponse Api::RefusalOf(const server::HttpRequest& request,
                                    const absl::Status& status) const {
  server::HttpResponse refused = ApiErrorResponse(status);
  if (refused.status == 401 && request.path() == "/mcp" && options_.oauth != nullptr) {
    // RFC 9728: where an MCP client finds how to get a token.
    for (auto& [name, value] : refused.headers) {
      if (name != "WWW-Authenticate") continue;
      value = fmt::format(
          R"(Bearer resource_metadata="{}/.well-known/oauth-protected-resource/mcp", )"
          R"(scope="read"{})",
          BaseUrl(request), PresentedToken(request).empty() ? "" : R"(, error="invalid_token")");
    }
  }
  return refused;
}

void Api::Dispatch(Job job) {
  if (!Enqueue(job)) {
    job.responder.Respond(
        ApiErrorResponse(absl::UnavailableError("too many API requests in progress; retry later")));
  }
}

bool Api::Enqueue(Job& job) {
  MutexLock lock(&mu_);
  if (stopping_ || queue_.size() >= options_.queue_capacity) return false;
  queue_.push_back(std::move(job));
  work_cv_.Signal();
  return true;
}

void Api::WorkerLoop() {
  for (;;) {
    std::optional<Job> job;
    {
      MutexLock lock(&mu_);
      while (!stopping_ && queue_.empty()) work_cv_.Wait(&mu_);
      if (stopping_) return;
      job.emplace(std::move(queue_.front()));
      queue_.pop_front();
    }
    job->responder.Respond(Run(*job));
  }
}

server::HttpResponse Api::Run(const Job& job) {
  const absl::StatusOr<Caller> caller = Admit(job.request);
  if (!caller.ok()) return RefusalOf(job.request, caller.status());
  if (job.account_endpoint != nullptr) return (this->*job.account_endpoint)(job.request, *caller);
  const Endpoint endpoint = job.endpoint;
  const server::HttpRequest& request = job.request;
  storage::Storage* storage = options_.storage ? options_.storage() : nullptr;
  if (storage == nullptr || options_.pool == nullptr) {
    return ApiErrorResponse(absl::UnavailableError("recovering"));
  }
  // Pinned until the answer is built: nothing the query reads is deleted.
  const std::shared_ptr<const storage::Snapshot> snapshot = storage->Pin();
  return (this->*endpoint)(request, *snapshot);
}

query::ViewFiles Api::FilesOf(const storage::Snapshot& snapshot) const {
  return ViewFilesFor(snapshot, options_.data_dir);
}

query::ViewFiles Api::SpanFilesOf(const storage::Snapshot& snapshot,
                                  const TimeWindow& window) const {
  // Windows are validated non-negative with start < end (params.h).
  return ViewFilesFor(snapshot, options_.data_dir,
                      query::EventWindow{static_cast<uint64_t>(std::max<int64_t>(0, window.start)),
                                         static_cast<uint64_t>(std::max<int64_t>(0, window.end))});
}

server::HttpResponse Api::GetTrace(const server::HttpRequest& request,
                                   const storage::Snapshot& snapshot) {
  API_ASSIGN_OR_RESPOND(QueryParams params, QueryParams::Parse(request.query()));
  API_ASSIGN_OR_RESPOND(const TracePath path,
                        ParseTracePath(request.path().substr(kTracesPrefix.size())));
  if (path.span_search) return SearchSpansOfTrace(path, params, snapshot);
  TraceForm form = TraceForm::kOtlp;
  if (!path.span_id.has_value()) {
    std::optional<std::string> text;
    API_RETURN_IF_ERROR(TakeString(params, "format", &text));
    if (text.has_value()) {
      API_ASSIGN_OR_RESPOND(form, ParseTraceForm("format", *text));
    }
  }
  API_RETURN_IF_ERROR(params.Finish());
  if (options_.fs == nullptr) return ApiErrorResponse(absl::UnavailableError("recovering"));
  API_ASSIGN_OR_RESPOND(
      std::optional<otlp::TraceBatch> batch,
      storage::LookupTrace(*options_.fs, options_.data_dir, snapshot, path.trace_id, nullptr,
                           form == TraceForm::kColumns && !path.span_id.has_value()
                               ? storage::TraceLookupDetail::kSkeleton
                               : storage::TraceLookupDetail::kFull));
  if (!batch.has_value()) {
    return ApiErrorResponse(
        absl::NotFoundError(absl::StrCat("trace ", TraceIdHex(path.trace_id), " not found")));
  }
  server::HttpResponse response;
  if (path.span_id.has_value()) {
    std::optional<otlp::TraceBatch> span = SelectSpan(*std::move(batch), *path.span_id);
    if (!span.has_value()) {
      return ApiErrorResponse(absl::NotFoundError(absl::StrCat(
          "span ", SpanIdHex(*path.span_id), " not found in trace ", TraceIdHex(path.trace_id))));
    }
    response = JsonResponse(otlp::EncodeTracesJson(*span));
  } else if (form == TraceForm::kColumns) {
    response = JsonResponse(TraceColumnsJson(*batch));
  } else {
    response = JsonResponse(otlp::EncodeTracesJson(*batch));
  }
  GzipIfAccepted(request, &response);
  return response;
}

server::HttpResponse Api::SearchSpansOfTrace(const TracePath& path, QueryParams& params,
                                             const storage::Snapshot& snapshot) {
  std::optional<std::string> text;
  API_RETURN_IF_ERROR(TakeString(params, "q", &text));
  API_RETURN_IF_ERROR(params.Finish());
  if (!text.has_value() || text->empty()) {
    return ApiErrorResponse(absl::InvalidArgumentError("q: the text to find is required"));
  }
  if (text->size() > kSpanTextMaxBytes) {
    return ApiErrorResponse(
        absl::InvalidArgumentError(absl::StrCat("q: longer than ", kSpanTextMaxBytes, " bytes")));
  }
  if (options_.fs == nullptr) return ApiErrorResponse(absl::UnavailableError("recovering"));
  API_ASSIGN_OR_RESPOND(
      std::optional<otlp::TraceBatch> batch,
      storage::LookupTrace(*options_.fs, options_.data_dir, snapshot, path.trace_id, nullptr,
                           storage::TraceLookupDetail::kFull));
  if (!batch.has_value()) {
    return ApiErrorResponse(
        absl::NotFoundError(absl::StrCat("trace ", TraceIdHex(path.trace_id), " not found")));
  }
  std::string json;
  otlp::JsonWriter writer(&json);
  writer.BeginObject();
  writer.Key("trace_id");
  writer.String(TraceIdHex(path.trace_id));
  writer.Key("q");
  writer.String(*text);
  writer.Key("span_ids");
  writer.BeginArray();
  // Each id once: a span stored twice (a retried export) is one match.
  absl::flat_hash_set<std::string> seen;
  for (const size_t span : SpansHoldingText(*batch, *text)) {
    std::string id = SpanIdHex(batch->spans.span_id[span]);
    if (seen.insert(id).second) writer.String(id);
  }
  writer.EndArray();
  writer.EndObject();
  return JsonResponse(std::move(json));
}

server::HttpResponse Api::SearchTracesEndpoint(const server::HttpRequest& request,
                                               const storage::Snapshot& snapshot) {
  API_ASSIGN_OR_RESPOND(QueryParams params, QueryParams::Parse(request.query()));
  TraceSearch search;
  API_ASSIGN_OR_RESPOND(TimeWindow window, TakeWindow(params, options_.now));
  search.start = window.start;
  search.end = window.end;
  API_RETURN_IF_ERROR(TakeString(params, "service", &search.service));
  API_RETURN_IF_ERROR(TakeString(params, "operation", &search.operation));
  std::optional<std::string> text;
  API_RETURN_IF_ERROR(TakeString(params, "min_duration", &text));
  if (text.has_value()) {
    API_ASSIGN_OR_RESPOND(search.min_duration, ParseDuration("min_duration", *text));
  }
  API_RETURN_IF_ERROR(TakeString(params, "max_duration", &text));
  if (text.has_value()) {
    API_ASSIGN_OR_RESPOND(search.max_duration, ParseDuration("max_duration", *text));
  }
  API_RETURN_IF_ERROR(TakeString(params, "status", &text));
  if (text.has_value()) {
    API_ASSIGN_OR_RESPOND(search.status, ParseStatus("status", *text));
  }
  API_ASSIGN_OR_RESPOND(search.attributes, params.TakeAttributes());
  API_ASSIGN_OR_RESPOND(search.limit, TakeLimit(params, Limit{kTraceLimitDefault, kTraceLimitMax}));
  API_RETURN_IF_ERROR(params.Finish());
  if (search.min_duration.has_value() && search.max_duration.has_value() &&
      *search.min_duration > *search.max_duration) {
    return ApiErrorResponse(absl::InvalidArgumentError("min_duration: above max_duration"));
  }
  API_ASSIGN_OR_RESPOND(std::vector<TraceSummary> traces,
                        SearchTraces(*options_.pool, snapshot, options_.data_dir, search,
                                     CallOptions{options_.query_deadline}));
  return JsonResponse(TracesJson(traces));
}

server::HttpResponse Api::SearchLogsEndpoint(const server::HttpRequest& request,
                                             const storage::Snapshot& snapshot) {
  API_ASSIGN_OR_RESPOND(QueryParams params, QueryParams::Parse(request.query()));
  LogSearch search;
  API_RETURN_IF_ERROR(TakeLogFilters(params, options_.now, &search));
  std::optional<std::string> text;
  API_RETURN_IF_ERROR(TakeString(params, "cursor", &text));
  if (text.has_value()) search.cursor = *text;
  API_ASSIGN_OR_RESPOND(search.limit, TakeLimit(params, Limit{kLogLimitDefault, kLogLimitMax}));
  API_RETURN_IF_ERROR(params.Finish());
  API_ASSIGN_OR_RESPOND(
      LogPage page, SearchLogs(*options_.pool, *options_.fs, snapshot, options_.data_dir, search,
                               CallOptions{options_.query_deadline}));
  return JsonResponse(LogsJson(page));
}

server::HttpResponse Api::LogVolumeEndpoint(const server::HttpRequest& request,
                                            const storage::Snapshot& snapshot) {
  API_ASSIGN_OR_RESPOND(QueryParams params, QueryParams::Parse(request.query()));
  LogVolumeQuery q;
  API_RETURN_IF_ERROR(TakeLogFilters(params, options_.now, &q.search));
  std::optional<std::string> text;
  API_RETURN_IF_ERROR(TakeString(params, "step", &text));
  if (text.has_value()) {
    API_ASSIGN_OR_RESPOND(q.step, ParseDuration("step", *text));
    if (q.step <= 0) return ApiErrorResponse(absl::InvalidArgumentError("step: must be positive"));
  } else {
    q.step = DefaultStep(q.search.start, q.search.end);
  }
  API_RETURN_IF_ERROR(params.Finish());
  API_ASSIGN_OR_RESPOND(LogVolume volume, QueryLogVolume(*options_.pool, FilesOf(snapshot), q,
                                                         CallOptions{options_.query_deadline}));
  return JsonResponse(LogVolumeJson(q, volume));
}

server::HttpResponse Api::AttributesEndpoint(const server::HttpRequest& request,
                                             const storage::Snapshot& snapshot) {
  API_ASSIGN_OR_RESPOND(QueryParams params, QueryParams::Parse(request.query()));
  AttributeDiscoveryQuery q;
  std::optional<std::string> text;
  API_RETURN_IF_ERROR(TakeString(params, "signal", &text));
  if (!text.has_value()) return ApiErrorResponse(absl::InvalidArgumentError("signal: required"));
  API_ASSIGN_OR_RESPOND(q.signal, ParseSignal("signal", *text));
  API_ASSIGN_OR_RESPOND(TimeWindow window, TakeWindow(params, options_.now));
  q.start = window.start;
  q.end = window.end;
  API_RETURN_IF_ERROR(TakeString(params, "service", &q.service));
  API_RETURN_IF_ERROR(TakeString(params, "key", &q.key));
  API_ASSIGN_OR_RESPOND(q.limit,
                        TakeLimit(params, Limit{kDiscoveryKeysDefault, kDiscoveryKeysMax}));
  API_RETURN_IF_ERROR(TakeString(params, "values", &text));
  if (text.has_value()) {
    API_ASSIGN_OR_RESPOND(q.values, ParseInteger("values", *text, 0, kDiscoveryValuesMax));
  }
  API_RETURN_IF_ERROR(params.Finish());
  API_ASSIGN_OR_RESPOND(AttributeDiscovery discovery,
                        DiscoverAttributes(*options_.pool, snapshot, options_.data_dir, q,
                                           CallOptions{options_.query_deadline}));
  return JsonResponse(AttributeDiscoveryJson(q, discovery));
}

server::HttpResponse Api::MetricNamesEndpoint(const server::HttpRequest& request,
                                              const storage::Snapshot& snapshot) {
  API_ASSIGN_OR_RESPOND(QueryParams params, QueryParams::Parse(request.query()));
  API_ASSIGN_OR_RESPOND(TimeWindow window, TakeWindow(params, options_.now));
  API_ASSIGN_OR_RESPOND(int64_t limit,
                        TakeLimit(params, Limit{kMetricNamesLimitDefault, kMetricNamesLimitMax}));
  API_RETURN_IF_ERROR(params.Finish());
  API_ASSIGN_OR_RESPOND(std::vector<MetricName> names,
                        MetricNames(*options_.pool, FilesOf(snapshot), window.start, window.end,
                                    limit, CallOptions{options_.query_deadline}));
  return JsonResponse(MetricNamesJson(names));
}

server::HttpResponse Api::MetricQueryEndpoint(const server::HttpRequest& request,
                                              const storage::Snapshot& snapshot) {
  API_ASSIGN_OR_RESPOND(QueryParams params, QueryParams::Parse(request.query()));
  MetricQuery q;
  std::optional<std::string> text;
  API_RETURN_IF_ERROR(TakeString(params, "name", &text));
  if (!text.has_value() || text->empty()) {
    return ApiErrorResponse(absl::InvalidArgumentError("name: required"));
  }
  q.name = *text;
  API_ASSIGN_OR_RESPOND(TimeWindow window, TakeWindow(params, options_.now));
  q.start = window.start;
  q.end = window.end;
  API_RETURN_IF_ERROR(TakeString(params, "step", &text));
  if (text.has_value()) {
    API_ASSIGN_OR_RESPOND(q.step, ParseDuration("step", *text));
    if (q.step <= 0) return ApiErrorResponse(absl::InvalidArgumentError("step: must be positive"));
  } else {
    q.step = DefaultStep(q.start, q.end);
  }
  std::string aggregation = "sum";
  API_RETURN_IF_ERROR(TakeString(params, "agg", &text));
  if (text.has_value()) aggregation = *text;
  API_ASSIGN_OR_RESPOND(q.aggregation, ParseAggregation("agg", aggregation));
  API_ASSIGN_OR_RESPOND(q.attributes, params.TakeAttributes());
  API_RETURN_IF_ERROR(params.Finish());
  API_ASSIGN_OR_RESPOND(
      std::vector<MetricSeries> series,
      QueryMetric(*options_.pool, FilesOf(snapshot), q, CallOptions{options_.query_deadline}));
  return JsonResponse(MetricSeriesJson(q, aggregation, series));
}

server::HttpResponse Api::ServicesEndpoint(const server::HttpRequest& request,
                                           const storage::Snapshot& snapshot) {
  API_ASSIGN_OR_RESPOND(QueryParams params, QueryParams::Parse(request.query()));
  API_ASSIGN_OR_RESPOND(TimeWindow window, TakeWindow(params, options_.now));
  API_ASSIGN_OR_RESPOND(int64_t limit,
                        TakeLimit(params, Limit{kServiceLimitDefault, kServiceLimitMax}));
  API_ASSIGN_OR_RESPOND(HealthThresholds thresholds, TakeHealthThresholds(params));
  API_RETURN_IF_ERROR(params.Finish());
  const MinuteWindow minutes = MinutesOf(window.start, window.end);
  API_ASSIGN_OR_RESPOND(RollupSet rows, rollups_->ForWindow(*options_.fs, snapshot, minutes));
  std::vector<ServiceRed> services = ServicesRed(rows, minutes);
  if (services.size() > static_cast<size_t>(limit)) services.resize(limit);
  return JsonResponse(ServicesJson(services, minutes, thresholds));
}

server::HttpResponse Api::ServiceDetailEndpoint(const server::HttpRequest& request,
                                                const storage::Snapshot& snapshot) {
  std::string_view rest = request.path().substr(kServicesPrefix.size());
  const bool operations = rest.ends_with(kOperationsSuffix);
  const std::string_view suffix = operations ? kOperationsSuffix : kEndpointsSuffix;
  if (rest.size() <= suffix.size() || !rest.ends_with(suffix)) {
    return ApiErrorResponse(absl::NotFoundError(
        absl::StrCat("no such endpoint: ", std::string(request.path()),
                     " (expected /api/v1/services/{service}/operations or /endpoints)")));
  }
  rest.remove_suffix(suffix.size());
  if (rest.find('/') != std::string_view::npos) {
    return ApiErrorResponse(
        absl::NotFoundError(absl::StrCat("no such endpoint: ", std::string(request.path()),
                                         " (a '/' in a service name is written %2F)")));
  }
  ServiceSelector service;
  API_ASSIGN_OR_RESPOND(service.name, PercentDecode(rest));
  API_ASSIGN_OR_RESPOND(QueryParams params, QueryParams::Parse(request.query()));
  API_ASSIGN_OR_RESPOND(TimeWindow window, TakeWindow(params, options_.now));
  API_ASSIGN_OR_RESPOND(int64_t limit,
                        TakeLimit(params, Limit{kServiceLimitDefault, kServiceLimitMax}));
  API_RETURN_IF_ERROR(TakeString(params, "namespace", &service.ns));
  API_RETURN_IF_ERROR(params.Finish());
  const MinuteWindow minutes = MinutesOf(window.start, window.end);
  API_ASSIGN_OR_RESPOND(RollupSet rows, rollups_->ForWindow(*options_.fs, snapshot, minutes));
  if (operations) {
    std::vector<OperationRed> found = OperationsRed(rows, minutes, service);
    if (found.size() > static_cast<size_t>(limit)) found.resize(limit);
    return JsonResponse(OperationsJson(service, found, minutes));
  }
  std::vector<EndpointRed> found = EndpointsRed(rows, minutes, service);
  if (found.size() > static_cast<size_t>(limit)) found.resize(limit);
  return JsonResponse(EndpointsJson(service, found, minutes));
}

server::HttpResponse Api::RedEndpoint(const server::HttpRequest& request,
                                      const storage::Snapshot& snapshot) {
  API_ASSIGN_OR_RESPOND(QueryParams params, QueryParams::Parse(request.query()));
  API_ASSIGN_OR_RESPOND(TimeWindow window, TakeWindow(params, options_.now));
  API_ASSIGN_OR_RESPOND(RedSelector selector, TakeRedSelector(params));
  const MinuteWindow minutes = MinutesOf(window.start, window.end);
  API_ASSIGN_OR_RESPOND(uint64_t step, TakeRedStep(params, minutes));
  API_RETURN_IF_ERROR(params.Finish());
  API_ASSIGN_OR_RESPOND(RollupSet rows, rollups_->ForWindow(*options_.fs, snapshot, minutes));
  return JsonResponse(
      RedSeriesJson(RedSeries(rows, minutes, step, selector), minutes, step, selector.kinds));
}

server::HttpResponse Api::ServiceMapEndpoint(const server::HttpRequest& request,
                                             const storage::Snapshot& snapshot) {
  API_ASSIGN_OR_RESPOND(QueryParams params, QueryParams::Parse(request.query()));
  API_ASSIGN_OR_RESPOND(TimeWindow window, TakeWindow(params, options_.now));
  API_ASSIGN_OR_RESPOND(int64_t limit,
                        TakeLimit(params, Limit{kServiceLimitDefault, kServiceLimitMax}));
  API_RETURN_IF_ERROR(params.Finish());
  const MinuteWindow minutes = MinutesOf(window.start, window.end);
  API_ASSIGN_OR_RESPOND(RollupSet rows, rollups_->ForWindow(*options_.fs, snapshot, minutes));
  const ServiceMapAnswer map =
      service_map_->Answer(*options_.fs, snapshot, minutes, rows, static_cast<size_t>(limit));
  return JsonResponse(ServiceMapJson(map, minutes, service_map_->options().resolver));
}

server::HttpResponse Api::SqlEndpoint(const server::HttpRequest& request,
                                      const storage::Snapshot& snapshot) {
  API_ASSIGN_OR_RESPOND(QueryParams params, QueryParams::Parse(request.query()));
  API_ASSIGN_OR_RESPOND(int64_t limit, TakeLimit(params, kSqlLimit));
  API_RETURN_IF_ERROR(params.Finish());
  const std::string body = request.body != nullptr ? *request.body : std::string();
  std::string content_type = absl::AsciiStrToLower(std::string(request.Header("Content-Type")));
  content_type = content_type.substr(0, content_type.find(';'));
  while (!content_type.empty() && content_type.back() == ' ') content_type.pop_back();
  std::string sql;
  if (content_type == "application/json") {
    API_ASSIGN_OR_RESPOND(sql, ParseSqlJson(body));
  } else {
    sql = body;
  }
  if (absl::StripAsciiWhitespace(sql).empty()) {
    return ApiErrorResponse(absl::InvalidArgumentError("body: no SQL"));
  }
  query::QueryOptions query_options;
  query_options.deadline = options_.query_deadline;
  query_options.max_rows = static_cast<size_t>(limit);
  query_options.max_bytes = static_cast<size_t>(options_.sql_max_answer_bytes);
  query_options.user_sql = true;
  API_ASSIGN_OR_RESPOND(query::QueryResult result,
                        options_.pool->Run(FilesOf(snapshot), sql, query_options));
  std::string reason;
  if (result.truncated && result.truncated_by == query::QueryResult::TruncatedBy::kBytes) {
    reason = absl::StrCat("the answer's values reached the server's cap of ",
                          options_.sql_max_answer_bytes,
                          " bytes (--sql-max-answer-bytes): select fewer or narrower columns, or "
                          "fewer rows");
  } else if (result.truncated) {
    reason = absl::StrCat("the query has more than limit=", limit, " rows");
  }
  return JsonResponse(SqlResultJson(result, reason));
}

}  // namespace strata::api
