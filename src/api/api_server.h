#pragma once

// Api serves strata's REST API (/api/v1/*, docs/api.md) on the API
// listener's HttpRouter: trace by id, trace and log search, metric names
// and series, services and operations, read-only SQL, and live log tails
// (GET /api/v1/logs/tail: after the token check, log_tail.h's own thread
// serves the stream; it never takes a worker).
//
// Request flow:
//   io thread: route -> bearer token check (Authorization: Bearer <token>;
//     401 with WWW-Authenticate when missing or not live, 403 for a token
//     without read scope) -> hand the request to the Api's worker pool (a
//     few threads, bounded queue; full -> 503 with Retry-After)
//   worker: storage (null while the server recovers -> 503 "recovering")
//     -> Pin() the Snapshot for the whole request -> parse parameters
//     (400 naming the bad one) -> search.h / LookupTrace -> JSON answer.
//
// Errors are JSON {"error": "<message>"} with the status of
// HttpStatusForApi(): 400 bad parameter or SQL, 401, 403, 404, 429 when the
// query pool is saturated, 503 while recovering or when the worker queue is
// full, 504 when a query passes its deadline, 500 otherwise.
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
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "api/log_tail.h"
#include "api/params.h"
#include "api/service_health.h"
#include "api/service_map.h"
#include "common/mutex.h"
#include "io/file_system.h"
#include "query/query_pool.h"
#include "server/http_adapter.h"
#include "storage/commit/catalog.h"

namespace strata::storage {
class Storage;
}

namespace strata::api {

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
  // OK when the bearer token may read; Unauthenticated (-> 401) or
  // PermissionDenied (-> 403) otherwise. Called on io threads: must not
  // block (TokenAuthenticator::Authorize(token, TokenScope::kRead) fits).
  std::function<absl::Status(std::string_view token)> authorize;
  NowFunction now = SystemNowUnixNano;
  // Workers that run requests, and requests that may wait for one.
  int worker_threads = 4;
  size_t queue_capacity = 64;
  // Deadline of each DuckDB query (0: the pool's default).
  std::chrono::milliseconds query_deadline{0};
  // Most bytes of values in one POST /api/v1/sql answer; rows past it are
  // left out and the answer says "truncated" (docs/api.md). Must be > 0.
  uint64_t sql_max_answer_bytes = kDefaultSqlMaxAnswerBytes;
  // GET /api/v1/logs/tail (log_tail.h).
  LogTailOptions log_tail;
};

// The HTTP status for an error status (docs/api.md, "Errors"): 422 for a
// query DuckDB could not fit in its memory limit (query::IsQueryOutOfMemory;
// running it again cannot succeed, so not 429), else by code.
int HttpStatusForApi(const absl::Status& status);

// {"error": "<message>"} with HttpStatusForApi's status, Retry-After on 429
// and 503, WWW-Authenticate on 401.
server::HttpResponse ApiErrorResponse(const absl::Status& status);

class Api {
 public:
  explicit Api(ApiOptions options);
  ~Api();
  Api(const Api&) = delete;
  Api& operator=(const Api&) = delete;

  // Registers every /api/v1/ route on `router`.
  void AddRoutes(server::HttpRouter* router);

  // Ends every live tail stream and refuses new ones (serve calls it when
  // it starts to drain).
  void StopLogTails() { tail_->Stop(); }
  LogTailStats LogTailStatistics() const { return tail_->Stats(); }

 private:
  using Endpoint = server::HttpResponse (Api::*)(const server::HttpRequest&,
                                                 const storage::Snapshot&);
  struct Job {
    Endpoint endpoint;
    server::HttpRequest request;
    server::HttpResponder responder;
  };

  // OK when the request's bearer token may read.
  absl::Status Authorize(const server::HttpRequest& request) const;
  // Checks the token, then starts a live tail (no worker: LogTail's own
  // thread serves it).
  void TailLogs(server::HttpRequest request, server::HttpResponder responder);
  // Checks the token, then queues `endpoint` on the workers.
  void Dispatch(Endpoint endpoint, server::HttpRequest request, server::HttpResponder responder);
  server::HttpResponse Run(Endpoint endpoint, const server::HttpRequest& request);
  // Moves `job` into the queue; false (and `job` untouched) when the queue
  // is full or the Api is stopping.
  bool Enqueue(Job& job) ABSL_LOCKS_EXCLUDED(mu_);
  void WorkerLoop() ABSL_LOCKS_EXCLUDED(mu_);

  // Endpoints; the Snapshot is pinned by the caller.
  server::HttpResponse GetTrace(const server::HttpRequest& request,
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
  // Edges resolved across batches (service_map.h); its thread is started
  // in the constructor and joined before the workers are.
  std::unique_ptr<ServiceMap> service_map_ = std::make_unique<ServiceMap>();
};

}  // namespace strata::api
