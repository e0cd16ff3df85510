#pragma once

// strata's HTTP/1.1 listeners, on Boost.Beast/Asio (http_adapter.cc is the
// only file that includes Boost headers; nothing here exposes a Boost type):
//
//  * HttpServer: an asynchronous server. A few io threads (no thread per
//    connection) serve thousands of keep-alive connections. Every read has
//    a deadline, so a slow or stalled client costs a socket and a little
//    memory, never a thread; headers, bodies and connections are capped.
//    Handlers answer through an HttpResponder, from any thread, at any time
//    before the request's deadline.
//  * HttpRouter: method + path -> handler, for the API listener.
//  * StartOtlpHttpServer: OTLP/HTTP (POST /v1/traces, /v1/logs, /v1/metrics;
//    protobuf or JSON; gzip) in front of an IngestService.
//  * AddHealthRoutes: /healthz, /readyz and /metrics of the API listener.
//
// Either listener may serve HTTPS instead (HttpServerOptions::tls): TLS over
// the same connections, with the same deadlines and limits
// (http_transport.h; the certificate is tls_context.h's and reloads without
// dropping connections).
//
// serve.cc starts both listeners, and on SIGTERM calls StopAccepting() on
// them, then Shutdown(drain deadline) (in-flight requests finish, idle
// keep-alive connections close), before draining storage.
//
// Implementation: http_adapter.cc holds everything that touches Boost (the
// server, responders, and the OTLP/HTTP client the load generator uses,
// NewHttpClient, declared in otlp_client.h); http_routes.cc the router,
// health routes, OTLP/HTTP handler and RaiseOpenFileLimit; and
// otlp_http_codec.{h,cc} the OTLP bytes both ends share.
//
// Thread-safety: HttpServer and HttpRouter (once built) are safe for
// concurrent use; an HttpResponder has a single owner at a time. Errors:
// Start() returns InvalidArgument for a malformed address, FailedPrecondition
// when the address cannot be bound (in use, not local, no permission), naming
// the address and the runbook section.

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace strata::server {

class IngestService;
class TlsServerContext;

struct HttpServerOptions {
  // "host:port", "[v6]:port" or ":port" (all interfaces); port 0 picks a
  // free port (HttpServer::port() tells which).
  std::string address;
  // Threads running the event loop. Handlers run on them, so a handler must
  // not block (IngestService::Export decodes inline, then answers from a
  // storage thread).
  int io_threads = 1;
  // Open connections; one more is answered 503 with Retry-After and closed.
  // Each costs a file descriptor: serve raises RLIMIT_NOFILE to fit.
  int max_connections = 10'000;
  // Request line plus header fields; more is answered 431 and closed.
  uint32_t max_header_bytes = 16 << 10;
  // Request body as it arrives (before any decompression); more is answered
  // 413 and closed. A Content-Length over it is refused before the body is
  // read.
  uint64_t max_body_bytes = 16 << 20;
  // All request bodies being received at once (each counted at its
  // Content-Length, or at max_body_bytes when chunked, from its header until
  // it is handed to the handler). A request that does not fit is answered
  // 429 with Retry-After and closed before its body is read, so memory
  // stays bounded however many clients upload at once. 0: no limit.
  uint64_t max_inflight_body_bytes = 256 << 20;
  // How long a keep-alive connection may wait for the first byte of its
  // next request (and a new connection for its first request).
  std::chrono::milliseconds idle_timeout{60'000};
  // From a request's first byte to the end of its header.
  std::chrono::milliseconds header_timeout{10'000};
  // The longest wait for each read of the body.
  std::chrono::milliseconds read_timeout{10'000};
  // From a request's first byte to its answer being started. A handler that
  // has not answered by then is answered 504 by the server (its late answer
  // is dropped); a client still sending by then is disconnected.
  std::chrono::milliseconds request_timeout{60'000};
  // Writing one response.
  std::chrono::milliseconds write_timeout{10'000};
  // Writing one chunk of a streamed response (HttpResponder::Stream): a
  // client that reads nothing for this long is disconnected. Longer than
  // write_timeout, so that a reader that pauses is told what it missed
  // (by the producer, which sees the stream's queue full) rather than cut
  // off.
  std::chrono::milliseconds stream_write_timeout{60'000};
  // After answering and closing the sending side, how long unread request
  // bytes are drained before the socket closes (so the client sees the
  // answer instead of a reset).
  std::chrono::milliseconds linger_timeout{2'000};
  // The Retry-After of the 503 that Shutdown() sends to requests still
  // being received or handled at the drain deadline.
  std::chrono::seconds shutdown_retry_after{1};
  // HTTPS: every connection begins with a TLS handshake presenting this
  // context's certificate (the one in use when the connection was
  // accepted; TlsServerContext::Reload() changes it for later ones).
  // Null: plain HTTP.
  std::shared_ptr<const TlsServerContext> tls;
  // Observers, called on io threads; must be quick and must not block.
  // Open connections changed by `delta`.
  std::function<void(int64_t delta)> on_connections;
  // The server itself refused a request or gave up on it: 413 body too
  // large, 431 header too large, 400 malformed, 429 over
  // max_inflight_body_bytes, 408 client too slow sending it, 504 handler
  // past the deadline, 503 still unanswered at Shutdown()'s drain deadline.
  // `target` is the request target when its request line was read, else
  // empty.
  std::function<void(std::string_view target, int status)> on_refused;
};

struct HttpRequest {
  std::string method;  // "GET", "POST", ...
  std::string target;  // as sent: path and query
  // Fields in arrival order, names as sent.
  std::vector<std::pair<std::string, std::string>> headers;
  std::shared_ptr<std::string> body;
  // When the request's first byte arrived.
  std::chrono::steady_clock::time_point arrival;
  // The client's IP address as the socket reports it ("" when unknown).
  std::string peer_address;

  // `target` up to '?', and after it ("" when absent).
  std::string_view path() const;
  std::string_view query() const;
  // The first field named `name` (any letter case); "" when absent.
  std::string_view Header(std::string_view name) const;
};

struct HttpResponse {
  int status = 200;
  std::string content_type = "text/plain; charset=utf-8";
  // Further fields (Retry-After, WWW-Authenticate, Allow, ...). The server
  // sets Server, Content-Length and Connection itself.
  std::vector<std::pair<std::string, std::string>> headers;
  std::string body;

  static HttpResponse Text(int status, std::string body);
};

namespace internal {
struct Gate;
struct HttpExchange;
class HttpSession;
}  // namespace internal

struct HttpStreamOptions {
  // The most bytes handed to Write() and not yet written to the socket. A
  // Write() that would pass it is refused (kFull) and nothing is queued,
  // so a client that reads slowly costs at most this much memory (or one
  // write, when a single write is larger and the queue is empty).
  uint64_t max_queued_bytes = 1 << 20;
  // The answer upgrades the connection to a WebSocket (RFC 6455): `head` is
  // WebSocketUpgradeHead()'s 101 (websocket_frame.h), written without a
  // body; each Write() is then one text message, Ping() a ping, End() a
  // close frame (Close() with a code and reason), and the server's drain a
  // close with 1001. The client's frames are read meanwhile: pings are
  // answered, a close is echoed (the stream then closes), data messages are
  // discarded, and a frame longer than max_client_frame_bytes ends the
  // connection with 1009 (a protocol error with 1002).
  bool websocket = false;
  uint64_t max_client_frame_bytes = 4096;
  // Called once when the stream closes (the client went away or closed,
  // the server drained, End()), from whichever thread noticed: so a
  // producer that waits for data can let go of the stream at once. Must be
  // quick and must not call back into the stream.
  std::function<void()> on_closed;
};

// The body of a streamed response (Server-Sent Events and the like), made
// by HttpResponder::Stream(). The head goes out at once with
// Transfer-Encoding: chunked and Connection: close; each Write() becomes
// one chunk, written by the connection's io thread in order; End() sends
// the last chunk and the connection closes. The stream closes by itself
// when the client goes away, a chunk cannot be written within
// stream_write_timeout, or the server drains (HttpServer::Shutdown() ends
// every stream at once: the last chunk is written after what is queued,
// and the connection closes by the drain deadline at the latest).
//
// Thread-safety: Write() and End() from one producer at a time (any
// thread); queued_bytes() and closed() from any thread. Never blocks.
class HttpStream {
 public:
  enum class WriteResult {
    kQueued,  // handed to the connection
    kFull,    // refused: max_queued_bytes would be passed; try again later
    kClosed,  // refused: the stream is closed and never takes bytes again
  };

  // Made by HttpResponder::Stream().
  HttpStream(std::shared_ptr<internal::Gate> gate, std::weak_ptr<internal::HttpSession> session,
             uint64_t max_queued_bytes, bool websocket = false,
             std::function<void()> on_closed = nullptr);
  HttpStream(const HttpStream&) = delete;
  HttpStream& operator=(const HttpStream&) = delete;

  // Queues `bytes` as one chunk (nothing for an empty string).
  WriteResult Write(std::string_view bytes);
  // Ends the body after what is queued; the connection then closes. On a
  // WebSocket: a close frame with 1000.
  void End();
  // WebSocket only: a close frame with `code` and `reason` (cut to 123
  // bytes) after what is queued.
  void Close(uint16_t code, std::string_view reason);
  // WebSocket only: queues a ping (keepalive; the client's pong is read and
  // dropped). kClosed on a plain stream.
  WriteResult Ping();
  bool websocket() const { return websocket_; }

  // Bytes handed to Write() and not yet written to the socket.
  uint64_t queued_bytes() const { return queued_bytes_.load(std::memory_order_acquire); }
  uint64_t max_queued_bytes() const { return max_queued_bytes_; }
  // True once the stream ended or its connection closed.
  bool closed() const { return closed_.load(std::memory_order_acquire); }

 private:
  friend class internal::HttpSession;

  // Io thread: `bytes` of a chunk reached the socket.
  void Written(uint64_t bytes) { queued_bytes_.fetch_sub(bytes, std::memory_order_acq_rel); }
  void MarkClosed() {
    if (!closed_.exchange(true, std::memory_order_acq_rel) && on_closed_) on_closed_();
  }

  // Constant after construction.
  const std::shared_ptr<internal::Gate> gate_;
  const std::weak_ptr<internal::HttpSession> session_;
  const uint64_t max_queued_bytes_;
  const bool websocket_;
  const std::function<void()> on_closed_;
  // Atomics rather than a lock: the producer adds, the connection's strand
  // subtracts, and each side only needs the current sum (the producer is
  // the only one that adds, so its check-then-add cannot overshoot).
  std::atomic<uint64_t> queued_bytes_{0};
  std::atomic<bool> closed_{false};
};

// The one way to answer a request: call Respond() (or Stream()) exactly
// once, from any thread. Move-only. Destroying an unanswered responder answers 500, so a
// handler that loses a request cannot leave its client waiting.
class HttpResponder {
 public:
  explicit HttpResponder(std::shared_ptr<internal::HttpExchange> exchange);
  HttpResponder(HttpResponder&&) noexcept;
  HttpResponder& operator=(HttpResponder&&) noexcept;
  ~HttpResponder();

  // Hands `response` to the connection. False when it can no longer be
  // delivered: already answered, the connection closed, the server stopped.
  // (A response accepted here is still dropped if the request's deadline
  // passes before the io thread gets to it; the server then answered 504.)
  bool Respond(HttpResponse response);

  // Answers with a streamed body instead: `head`'s status, Content-Type
  // and headers go out at once (its body, when not empty, as the first
  // chunk), then whatever the returned stream is given. Null when the
  // answer can no longer be delivered (as Respond() returning false). The
  // stream is closed at once if the request's deadline passed before the
  // io thread got to it.
  std::shared_ptr<HttpStream> Stream(HttpResponse head, HttpStreamOptions options = {});

 private:
  std::shared_ptr<internal::HttpExchange> exchange_;
};

// Called on an io thread for every complete request; must not block.
using HttpHandler = std::function<void(HttpRequest request, HttpResponder responder)>;

// Routes by method and path (the query is ignored). Exact paths win over
// prefixes; the longest prefix wins among prefixes. An unknown path is
// answered 404, a known path with another method 405 with Allow listing
// exactly the methods registered for that path: the routes are the one
// list of what a path accepts.
//
// Thread-safety: Add*() and Mount() while building; Handle() is then safe
// for concurrent use.
class HttpRouter {
 public:
  void Add(std::string_view method, std::string_view path, HttpHandler handler);
  // For route families such as "/api/v1/traces/".
  void AddPrefix(std::string_view method, std::string_view prefix, HttpHandler handler);
  // Every method on the paths under `prefix` goes to `handler`, usually
  // another router's, which answers 404 and 405 (with its own Allow) for
  // what it does not serve. A prefix is either mounted or has AddPrefix()
  // routes, not both.
  void Mount(std::string_view prefix, HttpHandler handler);

  void Handle(HttpRequest request, HttpResponder responder) const;

  // What is registered, in order (for tests that check every route is
  // classified): method ("" for Mount), path or prefix, and whether it is
  // a prefix.
  struct RouteInfo {
    std::string method;
    std::string path;
    bool prefix = false;
  };
  std::vector<RouteInfo> Routes() const;

  // A handler that owns this router (moved in).
  HttpHandler ToHandler() &&;

 private:
  struct Route {
    std::string method;  // empty: every method (Mount)
    std::string path;
    bool prefix;
    HttpHandler handler;
  };
  std::vector<Route> routes_;
};

struct HttpServerStats {
  int64_t open_connections = 0;
  uint64_t connections_accepted = 0;
  // Refused at accept because max_connections were open.
  uint64_t connections_refused = 0;
  // Requests whose header was read.
  uint64_t requests = 0;
  // Connections closed because a deadline passed (idle, header, body, write).
  uint64_t timeouts = 0;
  // Bytes of max_inflight_body_bytes taken now.
  uint64_t body_bytes_reserved = 0;
};

class HttpServer {
 public:
  // Binds, listens and starts the io threads.
  [[nodiscard]] static absl::StatusOr<std::unique_ptr<HttpServer>> Start(HttpServerOptions options,
                                                                         HttpHandler handler);
  // Shutdown(0) unless Shutdown() already ran.
  ~HttpServer();
  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;

  // The bound port (the chosen one when the address said port 0).
  uint16_t port() const;
  // The bound address as "host:port".
  std::string address() const;

  // Closes the listening socket; established connections carry on.
  // Returns once no new connection can be accepted.
  void StopAccepting();
  // StopAccepting(), then: idle keep-alive connections close at once,
  // requests in progress finish (their answers say Connection: close) until
  // `drain_timeout`. Then a request still being received or handled is
  // answered 503 with Retry-After (shutdown_retry_after) and Connection:
  // close, even with its body unread, and its connection closes shortly
  // after (0.3 s at most); every other connection closes at once, and the
  // io threads stop. So Shutdown() returns within drain_timeout plus about
  // 0.3 s while handlers do not block. Handlers that answer later are
  // ignored. Later calls return at once. Must not be called from a handler
  // (an io thread would wait for itself).
  void Shutdown(std::chrono::nanoseconds drain_timeout);

  HttpServerStats GetStats() const;

  class Impl;

 private:
  explicit HttpServer(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

// ---- OTLP/HTTP ----

struct OtlpHttpOptions {
  // http.address has no default here: serve passes --otlp-http-address
  // (0.0.0.0:4318 unless configured). A 503 at shutdown says Retry-After: 5,
  // as the storage's own 503s do (IngestService::Options).
  HttpServerOptions http{.shutdown_retry_after = std::chrono::seconds(5)};
  // The body after gzip decompression; a gzip body that would inflate past
  // it is refused 413 as soon as it does (a gzip bomb never inflates).
  uint64_t max_decompressed_body_bytes = 64 << 20;
};

// The OTLP/HTTP handler: POST /v1/traces, /v1/logs, /v1/metrics with
// Content-Type application/x-protobuf or application/json (parameters
// ignored), Content-Encoding gzip or identity. Answers 200 with the
// Export<Signal>ServiceResponse in the request's encoding; errors with
// HttpStatusFor's status and a google.rpc.Status body (protobuf or
// {"code":..,"message":".."}), Retry-After on 429 and 503, WWW-Authenticate
// on 401. Other paths 404, other methods 405, other media types 415. Counts
// its own refusals, latency, in `ingest.metrics()`. `ingest` must outlive
// the handler.
HttpHandler NewOtlpHttpHandler(IngestService& ingest, uint64_t max_decompressed_body_bytes);

// HttpServer::Start with NewOtlpHttpHandler. Counts open connections
// (strata_http_connections) and the server's own refusals (413, 429 over
// max_inflight_body_bytes, 408/504 deadlines) in ingest.metrics(), so the
// caller must not count connections again in options.http.on_connections
// (which is still called, after the count).
[[nodiscard]] absl::StatusOr<std::unique_ptr<HttpServer>> StartOtlpHttpServer(
    OtlpHttpOptions options, IngestService& ingest);

// ---- API listener ----

struct HealthChecks {
  // OK when the server is ready to take traffic (recovery done, listeners
  // up); otherwise a status whose message says why. Null: always ready.
  std::function<absl::Status()> ready;
  // The Prometheus text exposition for /metrics. Null: an empty page.
  std::function<std::string()> metrics_text;
};

// GET /healthz -> 200 "ok"; GET /readyz -> 200 "ready", or 503 with the
// reason; GET /metrics -> 200 text/plain; version=0.0.4.
void AddHealthRoutes(HttpRouter* router, HealthChecks checks);

// ---- one-shot client ----

// Sends one request to "host:port" over a fresh connection and returns the
// answer (status, Content-Type, header fields, body). For command
// line tools such as `strata sql`; servers never call it. `request.body`
// may be null.
// Unavailable when the connection fails, DeadlineExceeded past
// `timeout`, InvalidArgument for a malformed address.
[[nodiscard]] absl::StatusOr<HttpResponse> HttpCall(std::string_view address,
                                                    const HttpRequest& request,
                                                    std::chrono::milliseconds timeout);

// ---- process limits ----

// Raises the soft RLIMIT_NOFILE to `wanted` (capped at the hard limit) when
// it is lower. Returns the soft limit now in force.
[[nodiscard]] absl::StatusOr<uint64_t> RaiseOpenFileLimit(uint64_t wanted);

}  // namespace strata::server
