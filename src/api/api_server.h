#pragma once

// Api serves strata's REST API (/api/v1/*, docs/api.md) on the API
// listener's HttpRouter: trace by id, trace and log search, metric names
// and series, services and operations, read-only SQL, live log tails
// (GET /api/v1/logs/tail: after the token check, log_tail.h's own thread
// serves the stream; it never takes a worker), and Jaeger's query API
// (/jaeger/api/*, jaeger_endpoints.cc).
//
// Request flow:
//   io thread: route -> hand the request to the Api's worker pool (a few
//     threads, bounded queue; full -> 503 with Retry-After)
//   worker: admit (access.h: the caller from a token, sent as a bearer
//     token or as a basic-auth password, or from the session cookie;
//     401 with WWW-Authenticate when there is none or it is not
//     live, 403 when the route's access rule or the browser rules refuse)
//     -> account endpoints answer from the control plane; telemetry
//     endpoints: storage (null while the server recovers -> 503
//     "recovering") -> Pin() the Snapshot for the whole request -> parse
//     parameters (400 naming the bad one) -> search.h / LookupTrace -> JSON.
//
// Errors are JSON {"error": "<message>"} with the status of
// HttpStatusForApi(): 400 bad parameter or SQL, 401, 403, 404, 409 for a
// conflict (a name taken, the last admin), 410 once setup is closed, 429
// when the query pool is saturated or over a sign-in limit, 503 while
// recovering or when the worker queue is full, 504 when a query passes its
// deadline, 500 otherwise.
//
// Thread-safety: safe for concurrent use; handlers may run on any io
// thread. The Api must outlive every router it added routes to (and the
// HttpServer serving them); its destructor answers queued requests 503 and
// joins the workers.

#include <chrono>
#include <cstddef>
#include <deque>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "api/access.h"
#include "api/forwarded.h"
#include "api/log_tail.h"
#include "api/mcp_sessions.h"
#include "api/mcp_streams.h"
#include "api/params.h"
#include "api/rollup_preload.h"
#include "api/prometheus_point_cache.h"
#include "api/service_health.h"
#include "api/service_map.h"
#include "api/trace_path.h"
#include "common/mutex.h"
#include "control/accounts.h"
#include "control/oauth.h"
#include "control/rate_limiter.h"
#include "control/saved_queries.h"
#include "control/token_store.h"
#include "io/file_system.h"
#include "query/query_pool.h"
#include "server/http_adapter.h"
#include "storage/commit/catalog.h"

namespace strata::storage {
class Storage;
}

namespace strata::api {

struct PromQuery;  // prometheus_query.h

// The default of ApiOptions::sql_max_answer_bytes (`strata serve
// --sql-max-answer-bytes`): 64 MiB.
inline constexpr uint64_t kDefaultSqlMaxAnswerBytes = uint64_t{64} << 20;

struct ApiOptions {
  // The running storage engine, or null while the server is still
  // recovering (requests are then answered 503 "recovering").
  std::function<storage::Storage*()> storage;
  // Must outlive the Api.
  query::QueryPool* pool = nullptr;
  FileSystem* fs = nullptr;
  // Absolute path of the data directory.
  std::string data_dir;
  // The scope of a live bearer token; Unauthenticated (-> 401) otherwise.
  // Must not block (TokenAuthenticator::Authenticate fits). Which scope a
  // route needs is access.h's table.
  std::function<absl::StatusOr<control::TokenScope>(std::string_view token)> authenticate;
  // People: sessions, sign-in, users, the audit log. Null: no session
  // cookie is accepted and the account endpoints answer 503.
  control::Accounts* accounts = nullptr;
  // /api/v1/saved-queries. Null: those endpoints answer 503.
  control::SavedQueries* saved_queries = nullptr;
  // /api/v1/tokens. Null: those endpoints answer 503.
  control::TokenStore* tokens = nullptr;
  // OAuth 2.1 for /mcp (oauth_endpoints.cc). Null: its endpoints answer
  // 404 and OAuth access tokens are refused.
  control::OAuth* oauth = nullptr;
  // POST /oauth/register per client address (docs/api.md, "OAuth client
  // registration limits"): over it, 429 with Retry-After.
  control::RateLimits oauth_registrations;
  // Called after a token is created or revoked through the API, so the
  // change holds for the next request rather than after the authenticator's
  // next refresh (serve: TokenAuthenticator::Refresh). May be empty.
  std::function<void()> tokens_changed;
  // The API is served over TLS: the session cookie is
  // __Host-strata_session with Secure, and origins are https.
  bool secure_cookies = false;
  // Reverse proxies whose X-Forwarded-For, -Proto and -Host are believed
  // (forwarded.h; `strata serve --trusted-proxies`).
  std::vector<IpNetwork> trusted_proxies;
  NowFunction now = SystemNowUnixNano;
  // Workers that run requests, and requests that may wait for one.
  int worker_threads = 4;
  size_t queue_capacity = 64;
  // Deadline of each DuckDB query (0: the pool's default).
  std::chrono::milliseconds query_deadline{0};
  // Most bytes of values in one POST /api/v1/sql answer; rows past it are
  // left out and the answer says "truncated" (docs/api.md). Must be > 0.
  uint64_t sql_max_answer_bytes = kDefaultSqlMaxAnswerBytes;
  // Bytes of decoded metrics files the Prometheus API keeps across
  // queries (prometheus_point_cache.h; `strata serve --promql-cache-mb`);
  // 0: none kept, every query reads its points through DuckDB.
  size_t promql_cache_bytes = internal::PointCache::kDefaultMaxBytes;
  // GET /api/v1/logs/tail (log_tail.h).
  LogTailOptions log_tail;
  // GET /mcp: the MCP server's server-initiated streams (mcp_streams.h).
  McpStreamLimits mcp_streams;
  // Most spans of one Jaeger trace search's answer: traces after the one
  // that reaches it are left out (docs/api.md, GET /jaeger/api/traces).
  size_t jaeger_max_search_spans = 200'000;
  // Reading the live batches' rollups in the background at start
  // (rollup_preload.h); a horizon of 0 turns it off.
  RollupPreloadOptions rollup_preload;
};

// The HTTP status for an error status (docs/api.md, "Errors"): 422 for a
// query DuckDB could not fit in its memory limit (query::IsQueryOutOfMemory;
// running it again cannot succeed, so not 429), else by code.
int HttpStatusForApi(const absl::Status& status);

// {"error": "<message>"} with HttpStatusForApi's status, Retry-After on 429
// and 503, WWW-Authenticate on 401.
server::HttpResponse ApiErrorResponse(const absl::Status& status);

// An ApiOptions::authenticate that accepts exactly `token`, with `scope`
// (for tests and benchmarks).
std::function<absl::StatusOr<control::TokenScope>(std::string_view)> AcceptOnlyToken(
    std::string token, control::TokenScope scope = control::TokenScope::kRead);

class Api {
 public:
  explicit Api(ApiOptions options);
  ~Api();
  Api(const Api&) = delete;
  Api& operator=(const Api&) = delete;

  // Registers every /api/v1/ and /jaeger/api/ route on `router`.
  void AddRoutes(server::HttpRouter* router);

  // Ends every live tail stream and refuses new ones (serve calls it when
  // it starts to drain).
  void StopLogTails() { tail_->Stop(); }
  LogTailStats LogTailStatistics() const { return tail_->Stats(); }
  // Ends every open GET /mcp stream and refuses new ones (serve calls it
  // when it starts to drain).
  void StopMcpStreams() { mcp_streams_->Stop(); }
  McpStreamStats McpStreamStatistics() const { return mcp_streams_->Stats(); }
  // The start-up read of the rollups (rollup_preload.h).
  RollupPreloadStats RollupPreloadStatistics() const { return rollup_preload_->Stats(); }
  bool TEST_WaitForRollupPreload(std::chrono::nanoseconds timeout) {
    return rollup_preload_->WaitUntilDone(timeout);
  }

 private:
  // Telemetry endpoints read a pinned Snapshot; account endpoints need
  // the caller instead (and work while storage recovers).
  using Endpoint = server::HttpResponse (Api::*)(const server::HttpRequest&,
                                                 const storage::Snapshot&);
  using AccountEndpoint = server::HttpResponse (Api::*)(const server::HttpRequest&, const Caller&);
  struct Job {
    Endpoint endpoint = nullptr;
    AccountEndpoint account_endpoint = nullptr;
    server::HttpRequest request;
    server::HttpResponder responder;
  };

  // Who sent `request`: a token (bearer, else basic-auth password), else
  // the session cookie, else anonymous. Unauthenticated for a token or
  // session that is not live.
  absl::StatusOr<Caller> ResolveCaller(const server::HttpRequest& request);
  // ResolveCaller(), then the route's access rule (access.h) and the
  // browser rules; denials of callers that presented credentials are
  // audited.
  absl::StatusOr<Caller> Admit(const server::HttpRequest& request);
  // What the client sees, through trusted proxies (forwarded.h).
  RequestView View(const server::HttpRequest& request) const {
    return ViewOf(request, options_.trusted_proxies, options_.secure_cookies);
  }
  // Where the request came from, for the audit log and sign-in limits.
  control::RequestOrigin OriginOf(const server::HttpRequest& request) const;
  // Admits the request, then starts a live tail (no worker: LogTail's own
  // thread serves it).
  void TailLogs(server::HttpRequest request, server::HttpResponder responder);
  // Queues `job` on the workers, which admit it and run it.
  void Dispatch(Job job);
  server::HttpResponse Run(const Job& job);
  // Moves `job` into the queue; false (and `job` untouched) when the queue
  // is full or the Api is stopping.
  bool Enqueue(Job& job) ABSL_LOCKS_EXCLUDED(mu_);
  void WorkerLoop() ABSL_LOCKS_EXCLUDED(mu_);

  // Endpoints; the Snapshot is pinned by the caller.
  server::HttpResponse GetTrace(const server::HttpRequest& request,
                                const storage::Snapshot& snapshot);
  // GET /api/v1/traces/{trace_id}/spans?q=: the ids of the spans that hold
  // a text (span_text_search.h).
  server::HttpResponse SearchSpansOfTrace(const TracePath& path, QueryParams& params,
                                          const storage::Snapshot& snapshot);
  server::HttpResponse SearchTracesEndpoint(const server::HttpRequest& request,
                                            const storage::Snapshot& snapshot);
  server::HttpResponse SearchLogsEndpoint(const server::HttpRequest& request,
                                          const storage::Snapshot& snapshot);
  server::HttpResponse LogVolumeEndpoint(const server::HttpRequest& request,
                                         const storage::Snapshot& snapshot);
  server::HttpResponse AttributesEndpoint(const server::HttpRequest& request,
                                          const storage::Snapshot& snapshot);
  server::HttpResponse MetricNamesEndpoint(const server::HttpRequest& request,
                                           const storage::Snapshot& snapshot);
  server::HttpResponse MetricQueryEndpoint(const server::HttpRequest& request,
                                           const storage::Snapshot& snapshot);
  server::HttpResponse ServicesEndpoint(const server::HttpRequest& request,
                                        const storage::Snapshot& snapshot);
  // /api/v1/services/{service}/operations and /endpoints.
  server::HttpResponse ServiceDetailEndpoint(const server::HttpRequest& request,
                                             const storage::Snapshot& snapshot);
  server::HttpResponse RedEndpoint(const server::HttpRequest& request,
                                   const storage::Snapshot& snapshot);
  server::HttpResponse ServiceMapEndpoint(const server::HttpRequest& request,
                                          const storage::Snapshot& snapshot);
  server::HttpResponse SqlEndpoint(const server::HttpRequest& request,
                                   const storage::Snapshot& snapshot);

  // Jaeger's query API under /jaeger (jaeger_endpoints.cc); errors in
  // Jaeger's envelope.
  server::HttpResponse JaegerServicesEndpoint(const server::HttpRequest& request,
                                              const storage::Snapshot& snapshot);
  // /jaeger/api/services/{service}/operations and /jaeger/api/operations.
  server::HttpResponse JaegerOperationsEndpoint(const server::HttpRequest& request,
                                                const storage::Snapshot& snapshot);
  server::HttpResponse JaegerSearchEndpoint(const server::HttpRequest& request,
                                            const storage::Snapshot& snapshot);
  server::HttpResponse JaegerTraceEndpoint(const server::HttpRequest& request,
                                           const storage::Snapshot& snapshot);
  server::HttpResponse JaegerDependenciesEndpoint(const server::HttpRequest& request,
                                                  const storage::Snapshot& snapshot);
  // Jaeger's v3 API under /jaeger/api/v3 (jaeger_endpoints.cc); errors in
  // its gRPC gateway's form.
  server::HttpResponse JaegerV3ServicesEndpoint(const server::HttpRequest& request,
                                                const storage::Snapshot& snapshot);
  server::HttpResponse JaegerV3OperationsEndpoint(const server::HttpRequest& request,
                                                  const storage::Snapshot& snapshot);
  server::HttpResponse JaegerV3SearchEndpoint(const server::HttpRequest& request,
                                              const storage::Snapshot& snapshot);
  server::HttpResponse JaegerV3TraceEndpoint(const server::HttpRequest& request,
                                             const storage::Snapshot& snapshot);
  // The Tempo API under /tempo (tempo_endpoints.cc, docs/tempo.md).
  void AddTempoRoutes(server::HttpRouter* router,
                      const std::function<server::HttpHandler(Endpoint)>& route);
  // The Prometheus API (prometheus_endpoints.cc, docs/prometheus.md).
  void AddPrometheusRoutes(server::HttpRouter* router,
                           const std::function<server::HttpHandler(Endpoint)>& route);
  server::HttpResponse PromQueryEndpoint(const server::HttpRequest& request,
                                         const storage::Snapshot& snapshot);
  server::HttpResponse PromQueryRangeEndpoint(const server::HttpRequest& request,
                                              const storage::Snapshot& snapshot);
  server::HttpResponse RunPromQuery(const server::HttpRequest& request,
                                    const storage::Snapshot& snapshot, const PromQuery& query);
  server::HttpResponse PromExemplarsEndpoint(const server::HttpRequest& request,
                                             const storage::Snapshot& snapshot);
  server::HttpResponse PromLabelsEndpoint(const server::HttpRequest& request,
                                          const storage::Snapshot& snapshot);
  server::HttpResponse PromLabelValuesEndpoint(const server::HttpRequest& request,
                                               const storage::Snapshot& snapshot);
  server::HttpResponse PromSeriesEndpoint(const server::HttpRequest& request,
                                          const storage::Snapshot& snapshot);
  server::HttpResponse PromMetadataEndpoint(const server::HttpRequest& request,
                                            const storage::Snapshot& snapshot);
  server::HttpResponse PromBuildInfoEndpoint(const server::HttpRequest& request,
                                             const storage::Snapshot& snapshot);
  server::HttpResponse PromRulesEndpoint(const server::HttpRequest& request,
                                         const storage::Snapshot& snapshot);
  server::HttpResponse PromAlertsEndpoint(const server::HttpRequest& request,
                                          const storage::Snapshot& snapshot);
  server::HttpResponse PromFormatQueryEndpoint(const server::HttpRequest& request,
                                               const storage::Snapshot& snapshot);
  server::HttpResponse TempoEchoEndpoint(const server::HttpRequest& request,
                                         const storage::Snapshot& snapshot);
  server::HttpResponse TempoBuildInfoEndpoint(const server::HttpRequest& request,
                                              const storage::Snapshot& snapshot);
  server::HttpResponse TempoSearchEndpoint(const server::HttpRequest& request,
                                           const storage::Snapshot& snapshot);
  // /tempo/api/traces/{id} and /tempo/api/v2/traces/{id}.
  server::HttpResponse TempoTraceEndpoint(const server::HttpRequest& request,
                                          const storage::Snapshot& snapshot);
  // /tempo/api/search/tags and /tempo/api/v2/search/tags.
  server::HttpResponse TempoTagsEndpoint(const server::HttpRequest& request,
                                         const storage::Snapshot& snapshot);
  // /tempo/api/search/tag/{tag}/values and /tempo/api/v2/search/tag/{tag}/values.
  server::HttpResponse TempoTagValuesEndpoint(const server::HttpRequest& request,
                                              const storage::Snapshot& snapshot);

  // DNS rebinding and cross-site WebSockets: an Origin header, when
  // present, must name this server, and a loopback client's a loopback
  // name (mcp_endpoint.cc). PermissionDenied otherwise.
  absl::Status CheckOwnOrigin(const server::HttpRequest& request) const;
  // GET /loki/api/v1/tail (loki_tail.cc): admits, checks the Origin and the
  // query, then upgrades to a WebSocket served by the LogTail's thread.
  void LokiTail(server::HttpRequest request, server::HttpResponder responder);

  // The Loki API under /loki/api/v1 (loki_endpoints.cc, docs/loki.md);
  // errors as Loki writes them (plain text).
  void AddLokiRoutes(server::HttpRouter* router,
                     const std::function<server::HttpHandler(Endpoint)>& route);
  // /loki/api/v1/query_range and /loki/api/v1/query.
  server::HttpResponse LokiQueryEndpoint(const server::HttpRequest& request,
                                         const storage::Snapshot& snapshot);
  // /loki/api/v1/labels and /loki/api/v1/label.
  server::HttpResponse LokiLabelsEndpoint(const server::HttpRequest& request,
                                          const storage::Snapshot& snapshot);
  // /loki/api/v1/label/{name}/values.
  server::HttpResponse LokiLabelValuesEndpoint(const server::HttpRequest& request,
                                               const storage::Snapshot& snapshot);
  server::HttpResponse LokiSeriesEndpoint(const server::HttpRequest& request,
                                          const storage::Snapshot& snapshot);
  server::HttpResponse LokiBuildInfoEndpoint(const server::HttpRequest& request,
                                             const storage::Snapshot& snapshot);
  // /loki/api/v1/index/stats (loki_index.cc).
  server::HttpResponse LokiIndexStatsEndpoint(const server::HttpRequest& request,
                                              const storage::Snapshot& snapshot);
  // /loki/api/v1/index/volume and /index/volume_range (loki_index.cc).
  server::HttpResponse LokiVolumeEndpoint(const server::HttpRequest& request,
                                          const storage::Snapshot& snapshot);
  // /loki/api/v1/detected_labels and /detected_fields (loki_detected.cc).
  server::HttpResponse LokiDetectedLabelsEndpoint(const server::HttpRequest& request,
                                                  const storage::Snapshot& snapshot);
  server::HttpResponse LokiDetectedFieldsEndpoint(const server::HttpRequest& request,
                                                  const storage::Snapshot& snapshot);

  // Accounts (account_endpoints.cc).
  server::HttpResponse SetupStatusEndpoint(const server::HttpRequest& request,
                                           const Caller& caller);
  server::HttpResponse SetupEndpoint(const server::HttpRequest& request, const Caller& caller);
  server::HttpResponse LoginEndpoint(const server::HttpRequest& request, const Caller& caller);
  server::HttpResponse PasswordEndpoint(const server::HttpRequest& request, const Caller& caller);
  server::HttpResponse LogoutEndpoint(const server::HttpRequest& request, const Caller& caller);
  server::HttpResponse MeEndpoint(const server::HttpRequest& request, const Caller& caller);
  server::HttpResponse ChangePasswordEndpoint(const server::HttpRequest& request,
                                              const Caller& caller);
  server::HttpResponse ListUsersEndpoint(const server::HttpRequest& request, const Caller& caller);
  server::HttpResponse CreateUserEndpoint(const server::HttpRequest& request, const Caller& caller);
  // PATCH and DELETE /api/v1/users/{id}, POST /api/v1/users/{id}/password-link.
  server::HttpResponse UserEndpoint(const server::HttpRequest& request, const Caller& caller);
  server::HttpResponse ListTokensEndpoint(const server::HttpRequest& request, const Caller& caller);
  server::HttpResponse CreateTokenEndpoint(const server::HttpRequest& request,
                                           const Caller& caller);
  server::HttpResponse RevokeTokenEndpoint(const server::HttpRequest& request,
                                           const Caller& caller);
  server::HttpResponse AuditEndpoint(const server::HttpRequest& request, const Caller& caller);
  server::HttpResponse ListSavedQueriesEndpoint(const server::HttpRequest& request,
                                                const Caller& caller);
  server::HttpResponse CreateSavedQueryEndpoint(const server::HttpRequest& request,
                                                const Caller& caller);
  // GET, PATCH and DELETE /api/v1/saved-queries/{id}.
  server::HttpResponse SavedQueryEndpoint(const server::HttpRequest& request, const Caller& caller);
  // The signed-in user's OAuth grants (oauth_grant_endpoints.cc): list,
  // and DELETE .../{id} to revoke one.
  server::HttpResponse ListOAuthGrantsEndpoint(const server::HttpRequest& request,
                                               const Caller& caller);
  server::HttpResponse RevokeOAuthGrantEndpoint(const server::HttpRequest& request,
                                                const Caller& caller);
  // POST, GET and DELETE /mcp: the MCP server (mcp_endpoint.cc,
  // docs/mcp.md). Each tool pins its own Snapshot.
  server::HttpResponse McpEndpoint(const server::HttpRequest& request, const Caller& caller);
  // GET /mcp: admits the request (on the io thread, as TailLogs), checks
  // its Origin and session, then opens the session's stream (McpStreams).
  void McpStreamEndpoint(server::HttpRequest request, server::HttpResponder responder);
  // The answer to a request Admit() refused; on /mcp a 401 names the
  // protected-resource metadata (RFC 9728).
  server::HttpResponse RefusalOf(const server::HttpRequest& request,
                                 const absl::Status& status) const;
  // The result JSON of one JSON-RPC request's `method`; a JSON-RPC error
  // (code, message) otherwise.
  struct McpOutcome {
    std::string result;
    int error_code = 0;
    std::string error_message;
  };
  McpOutcome McpRequest(std::string_view method, std::string_view params_json);
  // OAuth 2.1 for /mcp (oauth_endpoints.cc, docs/mcp.md "Authorization").
  server::HttpResponse OAuthResourceMetadataEndpoint(const server::HttpRequest& request,
                                                     const Caller& caller);
  server::HttpResponse OAuthServerMetadataEndpoint(const server::HttpRequest& request,
                                                   const Caller& caller);
  server::HttpResponse OAuthRegisterEndpoint(const server::HttpRequest& request,
                                             const Caller& caller);
  // GET /oauth/authorize: checks the request, sends a visitor to sign in,
  // and shows a signed-in user the consent page.
  server::HttpResponse OAuthAuthorizePageEndpoint(const server::HttpRequest& request,
                                                  const Caller& caller);
  // POST /oauth/authorize: the consent page's answer.
  server::HttpResponse OAuthApproveEndpoint(const server::HttpRequest& request,
                                            const Caller& caller);
  server::HttpResponse OAuthTokenEndpoint(const server::HttpRequest& request, const Caller& caller);
  // The /mcp URL as the client sees it: the resource OAuth access tokens
  // are bound to.
  std::string McpResourceUrl(const server::HttpRequest& request) const;
  // completion/complete: service names for the prompts' `service` argument.
  McpOutcome McpComplete(std::string_view params_json);
  // tools/call: the tool's text, or InvalidArgument/NotFound/... which the
  // caller reports as a tool error (isError) the agent can read.
  absl::StatusOr<std::string> McpCallTool(std::string_view name, QueryParams& args,
                                          const storage::Snapshot& snapshot);
  absl::StatusOr<std::string> McpServicesOverview(QueryParams& args,
                                                  const storage::Snapshot& snapshot);
  absl::StatusOr<std::string> McpGetTrace(QueryParams& args, const storage::Snapshot& snapshot);
  absl::StatusOr<std::string> McpFindTraces(QueryParams& args, const storage::Snapshot& snapshot);
  // find_traces with a `traceql` query: the Tempo search's path.
  absl::StatusOr<std::string> McpFindTracesByTraceQL(const std::string& traceql,
                                                     const TimeWindow& window, QueryParams& args,
                                                     const storage::Snapshot& snapshot);
  absl::StatusOr<std::string> McpSearchLogs(QueryParams& args, const storage::Snapshot& snapshot);
  absl::StatusOr<std::string> McpRunSql(QueryParams& args, const storage::Snapshot& snapshot);
  absl::StatusOr<std::string> McpServiceMap(QueryParams& args, const storage::Snapshot& snapshot);
  absl::StatusOr<std::string> McpServicePerformance(QueryParams& args,
                                                    const storage::Snapshot& snapshot);
  absl::StatusOr<std::string> McpQueryMetrics(QueryParams& args, const storage::Snapshot& snapshot);
  absl::StatusOr<std::string> McpInvestigateError(QueryParams& args,
                                                  const storage::Snapshot& snapshot);

  // A signed-in answer: the user, with the session cookie set.
  server::HttpResponse SignedInResponse(const server::HttpRequest& request, int status,
                                        const control::SignedIn& signed_in) const;
  // "http://<host>" (https when the client uses https): the base of links.
  std::string BaseUrl(const server::HttpRequest& request) const;

  query::ViewFiles FilesOf(const storage::Snapshot& snapshot) const;
  // As FilesOf, with only the spans files whose event times meet `window`
  // (for the calls that keep spans starting in it).
  query::ViewFiles SpanFilesOf(const storage::Snapshot& snapshot, const TimeWindow& window) const;

  // Constant after construction.
  const ApiOptions options_;

  Mutex mu_;
  CondVar work_cv_;
  std::deque<Job> queue_ ABSL_GUARDED_BY(mu_);
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  // Started in the constructor, joined in the destructor.
  std::vector<std::thread> workers_;
  std::unique_ptr<LogTail> tail_;
  // Each live batch's rollups, read once (service_health.h).
  std::unique_ptr<RollupCache> rollups_ = std::make_unique<RollupCache>();
  // Fills rollups_ at start; its thread is started in the constructor and
  // joined when it is destroyed (before rollups_).
  std::unique_ptr<RollupPreload> rollup_preload_;
  // Edges resolved across batches (service_map.h); its thread is started
  // in the constructor and joined before the workers are.
  std::unique_ptr<ServiceMap> service_map_ = std::make_unique<ServiceMap>();
  // The decoded metrics files the Prometheus endpoints read through; null
  // when ApiOptions::promql_cache_bytes is 0.
  std::unique_ptr<internal::PointCache> point_cache_ =
      options_.promql_cache_bytes == 0
          ? nullptr
          : std::make_unique<internal::PointCache>(options_.promql_cache_bytes);
  // The live MCP sessions (/mcp).
  std::unique_ptr<McpSessions> mcp_sessions_ = std::make_unique<McpSessions>();
  // Their server-initiated messages and GET streams; its keepalive thread
  // is started in the constructor and joined in the destructor.
  std::unique_ptr<McpStreams> mcp_streams_;
  // POST /oauth/register per client address.
  control::RateLimiter oauth_register_limiter_{options_.oauth_registrations};
};

}  // namespace strata::api
