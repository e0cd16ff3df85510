// The parts of http_adapter.h that need no Boost: requests and responses,
// the router, the health routes, the OTLP/HTTP handler, and process limits.

#include <sys/resource.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "absl/status/status.h"
#include "fmt/format.h"
#include "server/gzip.h"
#include "server/http_adapter.h"
#include "server/ingest.h"
#include "server/ingest_metrics.h"
#include "server/ingest_service.h"
#include "server/loki_push_http.h"
#include "server/otlp_http_codec.h"

namespace strata::server {

using Clock = std::chrono::steady_clock;

// ---------------------------------------------------------------------------
// HttpRequest, HttpResponse

std::string_view HttpRequest::path() const {
  std::string_view t = target;
  return t.substr(0, t.find('?'));
}

std::string_view HttpRequest::query() const {
  std::string_view t = target;
  const size_t q = t.find('?');
  return q == std::string_view::npos ? std::string_view() : t.substr(q + 1);
}

std::string_view HttpRequest::Header(std::string_view name) const {
  for (const auto& [key, value] : headers) {
    if (AsciiEqualsIgnoreCase(key, name)) return value;
  }
  return {};
}

HttpResponse HttpResponse::Text(int status, std::string body) {
  HttpResponse response;
  response.status = status;
  response.body = std::move(body);
  return response;
}

// ---------------------------------------------------------------------------
// HttpRouter

void HttpRouter::Add(std::string_view method, std::string_view path, HttpHandler handler) {
  routes_.push_back(Route{std::string(method), std::string(path), false, std::move(handler)});
}

void HttpRouter::AddPrefix(std::string_view method, std::string_view prefix, HttpHandler handler) {
  routes_.push_back(Route{std::string(method), std::string(prefix), true, std::move(handler)});
}

void HttpRouter::Mount(std::string_view prefix, HttpHandler handler) {
  routes_.push_back(Route{std::string(), std::string(prefix), true, std::move(handler)});
}

std::vector<HttpRouter::RouteInfo> HttpRouter::Routes() const {
  std::vector<RouteInfo> out;
  out.reserve(routes_.size());
  for (const Route& route : routes_)
    out.push_back(RouteInfo{route.method, route.path, route.prefix});
  return out;
}

void HttpRouter::Handle(HttpRequest request, HttpResponder responder) const {
  const std::string_view path = request.path();
  // The best match for the path: an exact route, else the longest prefix.
  auto matches = [&](const Route& route) {
    return route.prefix ? path.substr(0, route.path.size()) == route.path : path == route.path;
  };
  auto better = [](const Route* current, const Route& candidate) {
    if (current == nullptr) return true;
    if (current->prefix != candidate.prefix) return !candidate.prefix;
    return candidate.path.size() > current->path.size();
  };
  const Route* best_path = nullptr;
  for (const Route& route : routes_) {
    if (matches(route) && better(best_path, route)) best_path = &route;
  }
  if (best_path == nullptr) {
    responder.Respond(HttpResponse::Text(404, fmt::format("no such resource: {}\n", path)));
    return;
  }
  std::string allow;
  for (const Route& route : routes_) {
    if (route.prefix != best_path->prefix || route.path != best_path->path) continue;
    if (route.method.empty() || route.method == request.method) {
      route.handler(std::move(request), std::move(responder));
      return;
    }
    if (!allow.empty()) allow += ", ";
    allow += route.method;
  }
  HttpResponse response = HttpResponse::Text(
      405,
      fmt::format("method {} is not allowed on {}; allowed: {}\n", request.method, path, allow));
  response.headers.emplace_back("Allow", allow);
  responder.Respond(std::move(response));
}

HttpHandler HttpRouter::ToHandler() && {
  auto router = std::make_shared<const HttpRouter>(std::move(*this));
  return [router](HttpRequest request, HttpResponder responder) {
    router->Handle(std::move(request), std::move(responder));
  };
}

// ---------------------------------------------------------------------------
// Health routes

void AddHealthRoutes(HttpRouter* router, HealthChecks checks) {
  router->Add("GET", "/healthz", [](HttpRequest, HttpResponder responder) {
    responder.Respond(HttpResponse::Text(200, "ok\n"));
  });
  router->Add("GET", "/readyz", [ready = checks.ready](HttpRequest, HttpResponder responder) {
    const absl::Status status = ready ? ready() : absl::OkStatus();
    if (status.ok()) {
      responder.Respond(HttpResponse::Text(200, "ready\n"));
    } else {
      responder.Respond(
          HttpResponse::Text(503, fmt::format("not ready: {}\n", std::string(status.message()))));
    }
  });
  router->Add("GET", "/metrics",
              [metrics = checks.metrics_text](HttpRequest, HttpResponder responder) {
                HttpResponse response;
                response.content_type = "text/plain; version=0.0.4; charset=utf-8";
                if (metrics) response.body = metrics();
                responder.Respond(std::move(response));
              });
}

// ---------------------------------------------------------------------------
// OTLP/HTTP server

namespace {

// The answer for a refused export: HttpStatusFor's status, the Status body in
// the request's encoding (plain text when the encoding is unknown), and the
// headers the status calls for.
HttpResponse ErrorResponse(const absl::Status& status, std::optional<Encoding> encoding,
                           std::chrono::seconds retry_after) {
  HttpResponse response;
  response.status = HttpStatusFor(status.code());
  if (encoding.has_value()) {
    response.content_type = std::string(ContentTypeFor(*encoding));
    response.body = EncodeStatusBody(*encoding, status);
  } else {
    response.body = std::string(status.message()) + "\n";
  }
  if (response.status == 429 || response.status == 503) {
    response.headers.emplace_back("Retry-After",
                                  std::to_string(std::max<int64_t>(1, retry_after.count())));
  }
  if (response.status == 401) response.headers.emplace_back("WWW-Authenticate", "Bearer");
  return response;
}

class OtlpHttpHandler {
 public:
  OtlpHttpHandler(IngestService& ingest, uint64_t max_decompressed_body_bytes)
      : ingest_(ingest), max_decompressed_body_bytes_(max_decompressed_body_bytes) {}

  void operator()(HttpRequest request, HttpResponder responder) const;

 private:
  IngestService& ingest_;
  const uint64_t max_decompressed_body_bytes_;
};

void OtlpHttpHandler::operator()(HttpRequest request, HttpResponder responder) const {
  if (request.path() == kLokiPushPath) {
    HandleLokiPush(ingest_, max_decompressed_body_bytes_, std::move(request), std::move(responder));
    return;
  }
  const std::optional<Signal> signal = SignalForHttpPath(request.path());
  if (!signal.has_value()) {
    responder.Respond(HttpResponse::Text(
        404, fmt::format("no such resource: {}; OTLP/HTTP is served at POST /v1/traces, "
                         "/v1/logs and /v1/metrics\n",
                         request.path())));
    return;
  }
  IngestMetrics& metrics = ingest_.metrics();
  const Clock::time_point arrival = request.arrival;
  auto answer = [&](HttpResponse response) {
    metrics.ObserveExportLatency(Transport::kHttp, Clock::now() - arrival);
    responder.Respond(std::move(response));
  };
  auto refuse = [&](RejectReason reason, const absl::Status& status,
                    std::optional<Encoding> encoding) {
    metrics.CountRejected(*signal, Transport::kHttp, reason);
    answer(ErrorResponse(status, encoding, std::chrono::seconds(0)));
  };
  if (request.method != "POST") {
    HttpResponse response = HttpResponse::Text(
        405, fmt::format("method {} is not allowed on {}; OTLP/HTTP exports are POSTed\n",
                         request.method, request.path()));
    response.headers.emplace_back("Allow", "POST");
    metrics.CountRejected(*signal, Transport::kHttp, RejectReason::kInvalidArgument);
    answer(std::move(response));
    return;
  }
  const std::optional<Encoding> encoding = EncodingForContentType(request.Header("Content-Type"));
  if (!encoding.has_value()) {
    refuse(RejectReason::kUnsupportedMediaType,
           absl::FailedPreconditionError(fmt::format(
               "unsupported Content-Type \"{}\": OTLP/HTTP takes application/x-protobuf or "
               "application/json",
               request.Header("Content-Type"))),
           std::nullopt);
    return;
  }
  // Authorize() counts its own refusals. It comes before decompression so
  // an unauthenticated client cannot make the server inflate anything.
  if (absl::Status auth =
          ingest_.Authorize(request.Header("Authorization"), *signal, Transport::kHttp);
      !auth.ok()) {
    answer(ErrorResponse(auth, encoding, std::chrono::seconds(0)));
    return;
  }
  const uint64_t wire_bytes = request.body->size();
  std::shared_ptr<const std::string> body = request.body;
  const std::string_view content_encoding = TrimHttpWhitespace(request.Header("Content-Encoding"));
  if (AsciiEqualsIgnoreCase(content_encoding, "gzip") ||
      AsciiEqualsIgnoreCase(content_encoding, "x-gzip")) {
    absl::StatusOr<std::string> inflated =
        GunzipLimited(*request.body, max_decompressed_body_bytes_);
    if (!inflated.ok()) {
      refuse(inflated.status().code() == absl::StatusCode::kOutOfRange
                 ? RejectReason::kBodyTooLarge
                 : RejectReason::kInvalidArgument,
             inflated.status(), encoding);
      return;
    }
    body = std::make_shared<const std::string>(std::move(*inflated));
  } else if (!content_encoding.empty() && !AsciiEqualsIgnoreCase(content_encoding, "identity")) {
    refuse(RejectReason::kUnsupportedMediaType,
           absl::FailedPreconditionError(
               fmt::format("unsupported Content-Encoding \"{}\": strata takes gzip or identity",
                           content_encoding)),
           encoding);
    return;
  } else if (body->size() > max_decompressed_body_bytes_) {
    refuse(RejectReason::kBodyTooLarge,
           absl::OutOfRangeError(fmt::format("request body of {} bytes is over the limit of {}",
                                             body->size(), max_decompressed_body_bytes_)),
           encoding);
    return;
  }
  request.body.reset();
  ingest_.Export(*signal, *encoding, Transport::kHttp, std::move(body), wire_bytes,
                 [&metrics, responder = std::move(responder), signal = *signal,
                  encoding = *encoding, arrival](ExportOutcome outcome) mutable {
                   HttpResponse response;
                   if (outcome.status.ok()) {
                     response.content_type = std::string(ContentTypeFor(encoding));
                     response.body = IngestService::EncodeResponse(signal, encoding, outcome);
                   } else {
                     response = ErrorResponse(outcome.status, encoding, outcome.retry_after);
                   }
                   metrics.ObserveExportLatency(Transport::kHttp, Clock::now() - arrival);
                   responder.Respond(std::move(response));
                 });
}

}  // namespace

HttpHandler NewOtlpHttpHandler(IngestService& ingest, uint64_t max_decompressed_body_bytes) {
  auto handler = std::make_shared<const OtlpHttpHandler>(ingest, max_decompressed_body_bytes);
  return [handler](HttpRequest request, HttpResponder responder) {
    (*handler)(std::move(request), std::move(responder));
  };
}

absl::StatusOr<std::unique_ptr<HttpServer>> StartOtlpHttpServer(OtlpHttpOptions options,
                                                                IngestService& ingest) {
  IngestMetrics& metrics = ingest.metrics();
  options.http.on_connections = [&metrics,
                                 chained = std::move(options.http.on_connections)](int64_t delta) {
    metrics.AddConnections(Transport::kHttp, delta);
    if (chained) chained(delta);
  };
  options.http.on_refused = [&metrics, chained = std::move(options.http.on_refused)](
                                std::string_view target, int status) {
    if (std::optional<Signal> signal = SignalForHttpPath(target.substr(0, target.find('?')))) {
      RejectReason reason = RejectReason::kInvalidArgument;
      if (status == 413) reason = RejectReason::kBodyTooLarge;
      if (status == 429) reason = RejectReason::kOverBudget;
      if (status == 408 || status == 504) reason = RejectReason::kDeadlineExceeded;
      if (status == 503) reason = RejectReason::kUnavailable;
      metrics.CountRejected(*signal, Transport::kHttp, reason);
    }
    if (chained) chained(target, status);
  };
  return HttpServer::Start(std::move(options.http),
                           NewOtlpHttpHandler(ingest, options.max_decompressed_body_bytes));
}

// ---------------------------------------------------------------------------
// Process limits

absl::StatusOr<uint64_t> RaiseOpenFileLimit(uint64_t wanted) {
  rlimit limit{};
  if (getrlimit(RLIMIT_NOFILE, &limit) != 0) {
    return absl::InternalError(fmt::format("getrlimit(RLIMIT_NOFILE): {}", std::strerror(errno)));
  }
  if (limit.rlim_cur != RLIM_INFINITY && limit.rlim_cur < wanted) {
    rlim_t target = static_cast<rlim_t>(wanted);
    if (limit.rlim_max != RLIM_INFINITY) target = std::min(target, limit.rlim_max);
    if (target > limit.rlim_cur) {
      limit.rlim_cur = target;
      if (setrlimit(RLIMIT_NOFILE, &limit) != 0) {
        return absl::InternalError(
            fmt::format("setrlimit(RLIMIT_NOFILE, {}): {}", target, std::strerror(errno)));
      }
    }
  }
  return static_cast<uint64_t>(limit.rlim_cur);
}

}  // namespace strata::server
