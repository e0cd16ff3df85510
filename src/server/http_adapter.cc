// Boost.Beast/Asio behind http_adapter.h (HttpServer, HttpResponder) and
// NewHttpClient (otlp_client.h). The only file that includes Boost headers
// (with http_transport.h, its private header for the connection's byte
// stream, plain or TLS); the router, health routes and OTLP/HTTP handler are
// in http_routes.cc, OpenSSL is behind tls_context.h.
//
// Server structure. One io_context runs on `io_threads` threads. The
// acceptor lives on its own strand; every connection (HttpSession) lives on
// a strand of its own, so a session's state is touched by one thread at a
// time without locks. A session is a small state machine:
//
//   kIdle (waiting for the first byte, idle_timeout)
//     -> kReading (header within header_timeout, then the body, each read
//        within read_timeout, all of it before request_timeout)
//     -> kHandling (the handler has the request; answers come back through
//        an HttpResponder, posted onto the session's strand; a timer answers
//        504 at request_timeout)
//     -> kWriting (write_timeout) -> kIdle again, or kClosing (shut down
//        sending, drain what the client still sends for linger_timeout)
//     -> kClosed.
//   kHandling -> kStreaming (the handler chose HttpResponder::Stream(): the
//        head, then each chunk the HttpStream is given, one write at a time
//        within stream_write_timeout; no request is read meanwhile)
//     -> kClosing after the last chunk (End(), or the server draining).
//
// Shutdown. Past the drain deadline, Abandon() answers a session that is
// still kReading or kHandling 503 (its pending read cancelled, its
// handler's answer ignored) and closes the others; Shutdown() gives those
// answers kAbandonWait to be written and read, then force-closes whatever
// is left.
//
// Lifetimes. The server's registry holds every open session (strong
// references); pending operations hold their session too. A responder holds
// only a weak reference plus the server's Gate: posting to a session's strand
// happens under the Gate's lock, and Shutdown() closes the Gate before it
// destroys the io_context, so an IngestService callback that arrives after
// shutdown finds the Gate closed instead of a destroyed io_context.

#define BOOST_BEAST_USE_STD_STRING_VIEW 1

#include "server/http_adapter.h"

#include <pthread.h>

#include <algorithm>
#include <atomic>
#include <boost/asio/dispatch.hpp>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ip/v6_only.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/core/detail/base64.hpp>
#include <boost/beast/core/detail/sha1.hpp>
#include <boost/beast/http.hpp>
#include <deque>
#include <optional>
#include <thread>
#include <unordered_map>

#include "absl/status/status.h"
#include "common/host_port.h"
#include "common/mutex.h"
#include "common/runbook.h"
#include "fmt/format.h"
#include "server/http_transport.h"
#include "server/ingest.h"
#include "server/otlp_client.h"
#include "server/otlp_http_codec.h"
#include "server/tls_context.h"
#include "server/websocket_frame.h"

namespace strata::server {

namespace net = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = net::ip::tcp;
using Clock = std::chrono::steady_clock;
using ErrorCode = boost::system::error_code;

namespace {

constexpr char kServerName[] = "strata";
// The first read of an idle connection, and each read while lingering.
constexpr size_t kSmallReadBytes = 4096;
// An idle connection keeps at most this much buffer capacity.
constexpr size_t kIdleBufferCapacity = 16 << 10;
// After the drain deadline, how long the 503s Shutdown() sends to requests
// still in progress may take to be written and read before their
// connections are closed.
constexpr auto kAbandonWait = std::chrono::milliseconds(300);
// Then, how long Shutdown() waits for force-closed connections to finish
// closing before it stops the io threads.
constexpr auto kForceCloseWait = std::chrono::seconds(2);
// Bounds the wait for the acceptor's strand in StopAccepting().
constexpr auto kStopAcceptingWait = std::chrono::seconds(5);
// After an accept error such as EMFILE: pause before the next accept
// rather than spin on the listening socket.
constexpr auto kAcceptErrorPause = std::chrono::milliseconds(50);

// Sent to a connection over max_connections, before it is closed.
constexpr std::string_view kTooManyConnections =
    "HTTP/1.1 503 Service Unavailable\r\n"
    "Server: strata\r\n"
    "Retry-After: 1\r\n"
    "Content-Type: text/plain; charset=utf-8\r\n"
    "Content-Length: 42\r\n"
    "Connection: close\r\n"
    "\r\n"
    "too many open connections; retry shortly\r\n";
constexpr std::string_view kContinue = "HTTP/1.1 100 Continue\r\n\r\n";

// ParseHostPort, plus port 0 ("pick a free port"), which tests and
// embedders use; serve's flags never pass it.
absl::StatusOr<HostPort> ParseListenAddress(std::string_view text) {
  if (text.size() >= 2 && text.substr(text.size() - 2) == ":0") {
    absl::StatusOr<HostPort> parsed =
        ParseHostPort(std::string(text.substr(0, text.size() - 1)) + "1");
    if (parsed.ok()) parsed->port = 0;
    return parsed;
  }
  return ParseHostPort(text);
}

bool IsHttpParseError(const ErrorCode& ec) {
  return &ec.category() == &http::make_error_code(http::error::bad_target).category();
}

}  // namespace

// ---------------------------------------------------------------------------
// Session and exchange

namespace internal {

class HttpSession;

// Whether the server's io_context may still be posted to. See the file
// comment (Lifetimes).
struct Gate {
  Mutex mu;
  bool open ABSL_GUARDED_BY(mu) = true;
};

// What an HttpResponder needs to deliver one answer.
struct HttpExchange {
  std::shared_ptr<Gate> gate;
  std::weak_ptr<HttpSession> session;
  uint64_t sequence = 0;  // which request of the session this answers

  bool Deliver(HttpResponse response);
  std::shared_ptr<HttpStream> DeliverStream(HttpResponse head, const HttpStreamOptions& options);
};

// One client connection. Confined to its strand: every member below is
// touched only by handlers running there (entry points from other threads
// post first).
class HttpSession : public std::enable_shared_from_this<HttpSession> {
 public:
  // `tls` null: plain HTTP.
  HttpSession(HttpServer::Impl* server, tcp::socket socket, std::unique_ptr<TlsConnection> tls);

  // Entry points; any thread.
  void Start();
  void Refuse();
  void Deliver(uint64_t sequence, HttpResponse response);
  void DeliverStream(uint64_t sequence, HttpResponse head, std::shared_ptr<HttpStream> stream,
                     uint64_t max_client_frame_bytes);
  // A chunk of the stream: `framed` as it goes on the wire, `payload` the
  // bytes the stream counted for it.
  void StreamAppend(std::string framed, uint64_t payload);
  // `last`: a WebSocket's close frame ("" for the default).
  void StreamEnd(std::string last);
  void Drain();
  void Abandon();
  void ForceClose();

 private:
  enum class State { kIdle, kReading, kHandling, kWriting, kStreaming, kClosing, kClosed };

  const HttpServerOptions& options() const;
  void ReadRequest();
  void OnIdleRead(const ErrorCode& ec, size_t bytes);
  void BeginRequest();
  void OnHeader(const ErrorCode& ec);
  void ReadBody();
  void OnBody(const ErrorCode& ec);
  void OnReadError(const ErrorCode& ec);
  void Dispatch();
  void OnResponse(uint64_t sequence, HttpResponse response);
  void OnRequestDeadline(const ErrorCode& ec, uint64_t sequence);
  void Write(HttpResponse response, bool close);
  void OnWritten(const ErrorCode& ec, bool keep_alive);
  void OnStreamStart(uint64_t sequence, HttpResponse head, std::shared_ptr<HttpStream> stream,
                     uint64_t max_client_frame_bytes);
  void PumpStream();
  // WebSocket: handles the client's frames in buffer_, then reads more.
  void ReadWebSocket();
  void OnWebSocketRead(const ErrorCode& ec, size_t bytes);
  // WebSocket: ends the stream with `close_frame` after what is queued; the
  // producer sees the stream closed at once.
  void EndWebSocket(std::string close_frame);
  void OnStreamWritten(const ErrorCode& ec);
  void Linger();
  void HalfClose();
  void DiscardUntilClosed();
  void Close();
  void ReleaseBodyBytes();

  HttpServer::Impl* const server_;
  HttpTransport stream_;
  // The client's IP address ("" when the socket could not say).
  std::string peer_address_;
  beast::flat_buffer buffer_;
  net::steady_timer deadline_timer_;
  std::optional<http::request_parser<http::string_body>> parser_;
  State state_ = State::kIdle;
  // Numbers the requests of this connection; an answer or deadline for an
  // earlier one is ignored.
  uint64_t sequence_ = 0;
  Clock::time_point request_start_;
  Clock::time_point request_deadline_;
  std::string target_;  // of the request being read or handled
  bool header_done_ = false;
  bool keep_alive_ = true;
  // A "100 Continue" is being written (the state stays kReading).
  bool continue_pending_ = false;
  // This request's share of max_inflight_body_bytes, held from its header
  // until its body is handed to the handler (or it is refused).
  uint64_t reserved_body_bytes_ = 0;
  // kStreaming: the producer's stream, the chunks not yet written (the
  // front one being written when stream_writing_), each with the payload
  // bytes it returns to the stream once written.
  std::shared_ptr<HttpStream> stream_out_;
  std::deque<std::pair<std::string, uint64_t>> stream_chunks_;
  bool stream_writing_ = false;
  bool stream_ending_ = false;     // End() or the drain: finish after the queue
  bool stream_last_sent_ = false;  // the last chunk is queued
  // kStreaming over a WebSocket: the close frame to send last ("" until
  // chosen: 1000, or 1001 at the drain), the client's frame limit, and
  // whether the read of the client's frames is outstanding.
  bool websocket_ = false;
  std::string websocket_close_;
  uint64_t websocket_max_frame_ = 0;
  bool websocket_reading_ = false;
};

}  // namespace internal

// ---------------------------------------------------------------------------
// HttpServer::Impl

class HttpServer::Impl {
 public:
  Impl(HttpServerOptions options, HttpHandler handler);
  ~Impl();

  absl::Status Listen();
  void Run();
  void StopAccepting();
  void Shutdown(std::chrono::nanoseconds drain_timeout);
  HttpServerStats GetStats() const;
  uint16_t port() const { return port_; }
  std::string address() const { return bound_address_; }

  // For sessions.
  const HttpServerOptions& options() const { return options_; }
  const HttpHandler& handler() const { return handler_; }
  const std::shared_ptr<internal::Gate>& gate() const { return gate_; }
  // Read without the lock on io threads; set once by Shutdown(). A session
  // that misses the change finishes one more request, whose answer then
  // closes it (or the drain deadline does).
  bool draining() const { return draining_.load(std::memory_order_acquire); }
  void Remove(internal::HttpSession* session) ABSL_LOCKS_EXCLUDED(mu_);
  void CountRequest() { requests_.fetch_add(1, std::memory_order_relaxed); }
  void CountTimeout() { timeouts_.fetch_add(1, std::memory_order_relaxed); }
  // Takes `bytes` of max_inflight_body_bytes; false when they do not fit.
  // A request is always admitted when no other body is being received, so
  // one as large as max_body_bytes cannot starve.
  bool ReserveBodyBytes(uint64_t bytes) {
    uint64_t current = body_bytes_.load(std::memory_order_relaxed);
    for (;;) {
      if (options_.max_inflight_body_bytes > 0 && current > 0 &&
          current + bytes > options_.max_inflight_body_bytes) {
        return false;
      }
      if (body_bytes_.compare_exchange_weak(current, current + bytes, std::memory_order_relaxed)) {
        return true;
      }
    }
  }
  void ReleaseBodyBytes(uint64_t bytes) { body_bytes_.fetch_sub(bytes, std::memory_order_relaxed); }
  void Refused(std::string_view target, int status) const {
    if (options_.on_refused) options_.on_refused(target, status);
  }

 private:
  void Accept();
  void OnAccept(const ErrorCode& ec, tcp::socket socket);
  std::vector<std::shared_ptr<internal::HttpSession>> Sessions() const ABSL_LOCKS_EXCLUDED(mu_);
  // Waits until no session is open or `deadline`.
  void WaitForSessions(Clock::time_point deadline) ABSL_LOCKS_EXCLUDED(mu_);

  // Constant after construction (or after Listen() for the endpoint).
  const HttpServerOptions options_;
  const HttpHandler handler_;
  const std::shared_ptr<internal::Gate> gate_ = std::make_shared<internal::Gate>();
  std::unique_ptr<net::io_context> io_context_;
  std::optional<net::executor_work_guard<net::io_context::executor_type>> work_;
  std::optional<net::strand<net::io_context::executor_type>> accept_strand_;
  // Used on accept_strand_ only (and by Listen/Shutdown with no io thread
  // touching them).
  std::optional<tcp::acceptor> acceptor_;
  std::optional<net::steady_timer> accept_pause_;
  uint16_t port_ = 0;
  std::string bound_address_;
  std::vector<std::thread> threads_;

  // Counters: relaxed atomics, as they only feed statistics.
  std::atomic<uint64_t> accepted_{0};
  std::atomic<uint64_t> refused_{0};
  std::atomic<uint64_t> requests_{0};
  std::atomic<uint64_t> timeouts_{0};
  std::atomic<bool> draining_{false};
  // Bytes reserved by requests whose bodies are being received. An atomic
  // counter rather than a lock: sessions on every io thread take and
  // return shares, and only the sum matters.
  std::atomic<uint64_t> body_bytes_{0};

  mutable Mutex mu_;
  CondVar changed_;
  std::unordered_map<internal::HttpSession*, std::shared_ptr<internal::HttpSession>> sessions_
      ABSL_GUARDED_BY(mu_);
  bool accepting_ ABSL_GUARDED_BY(mu_) = false;
  bool shut_down_ ABSL_GUARDED_BY(mu_) = false;
};

namespace internal {

bool HttpExchange::Deliver(HttpResponse response) {
  MutexLock lock(&gate->mu);
  if (!gate->open) return false;
  std::shared_ptr<HttpSession> target = session.lock();
  if (target == nullptr) return false;
  target->Deliver(sequence, std::move(response));
  return true;
}

std::shared_ptr<HttpStream> HttpExchange::DeliverStream(HttpResponse head,
                                                        const HttpStreamOptions& options) {
  MutexLock lock(&gate->mu);
  if (!gate->open) return nullptr;
  std::shared_ptr<HttpSession> target = session.lock();
  if (target == nullptr) return nullptr;
  auto stream = std::make_shared<HttpStream>(gate, session, options.max_queued_bytes,
                                             options.websocket, options.on_closed);
  target->DeliverStream(sequence, std::move(head), stream, options.max_client_frame_bytes);
  return stream;
}

HttpSession::HttpSession(HttpServer::Impl* server, tcp::socket socket,
                         std::unique_ptr<TlsConnection> tls)
    : server_(server),
      stream_(std::move(socket), std::move(tls)),
      deadline_timer_(stream_.get_executor()) {
  beast::error_code ec;
  const tcp::endpoint peer = stream_.socket().remote_endpoint(ec);
  if (!ec) peer_address_ = peer.address().to_string();
}

const HttpServerOptions& HttpSession::options() const { return server_->options(); }

void HttpSession::Start() {
  net::dispatch(stream_.get_executor(), [self = shared_from_this()] { self->ReadRequest(); });
}

void HttpSession::Refuse() {
  net::dispatch(stream_.get_executor(), [self = shared_from_this()] {
    self->state_ = State::kWriting;
    self->stream_.expires_after(self->options().write_timeout);
    net::async_write(self->stream_,
                     net::buffer(kTooManyConnections.data(), kTooManyConnections.size()),
                     [self](const ErrorCode& ec, size_t) {
                       if (ec) return self->Close();
                       self->Linger();
                     });
  });
}

void HttpSession::Deliver(uint64_t sequence, HttpResponse response) {
  net::post(stream_.get_executor(),
            [self = shared_from_this(), sequence, response = std::move(response)]() mutable {
              self->OnResponse(sequence, std::move(response));
            });
}

void HttpSession::DeliverStream(uint64_t sequence, HttpResponse head,
                                std::shared_ptr<HttpStream> stream,
                                uint64_t max_client_frame_bytes) {
  net::post(stream_.get_executor(), [self = shared_from_this(), sequence, head = std::move(head),
                                     stream = std::move(stream), max_client_frame_bytes]() mutable {
    self->OnStreamStart(sequence, std::move(head), std::move(stream), max_client_frame_bytes);
  });
}

void HttpSession::StreamAppend(std::string framed, uint64_t payload) {
  net::post(stream_.get_executor(),
            [self = shared_from_this(), framed = std::move(framed), payload]() mutable {
              if (self->state_ != State::kStreaming || self->stream_ending_) return;
              self->stream_chunks_.emplace_back(std::move(framed), payload);
              self->PumpStream();
            });
}

void HttpSession::StreamEnd(std::string last) {
  net::post(stream_.get_executor(), [self = shared_from_this(), last = std::move(last)]() mutable {
    if (self->state_ != State::kStreaming) return;
    if (self->websocket_close_.empty()) self->websocket_close_ = std::move(last);
    self->stream_ending_ = true;
    self->PumpStream();
  });
}

void HttpSession::Drain() {
  net::post(stream_.get_executor(), [self = shared_from_this()] {
    if (self->state_ == State::kIdle) self->Close();
    if (self->state_ == State::kStreaming) {
      if (self->websocket_close_.empty()) {
        self->websocket_close_ =
            WebSocketCloseFrame(kWebSocketGoingAway, "the server is shutting down");
      }
      self->stream_ending_ = true;
      self->PumpStream();
    }
  });
}

void HttpSession::Abandon() {
  net::post(stream_.get_executor(), [self = shared_from_this()] {
    const bool in_progress = self->state_ == State::kHandling ||
                             (self->state_ == State::kReading && !self->continue_pending_);
    if (!in_progress) {
      if (self->state_ != State::kWriting && self->state_ != State::kClosing) self->Close();
      return;  // an answer being written, or lingering: kAbandonWait bounds it
    }
    if (!self->header_done_ && self->parser_.has_value()) {
      self->target_ = std::string(self->parser_->get().target());
    }
    // The read handler then sees a state other than kReading and returns.
    self->stream_.cancel();
    self->deadline_timer_.cancel();
    self->server_->Refused(self->target_, 503);
    HttpResponse response =
        HttpResponse::Text(503, "the server is shutting down; retry the request\n");
    response.headers.emplace_back(
        "Retry-After",
        std::to_string(std::max<int64_t>(1, self->options().shutdown_retry_after.count())));
    self->Write(std::move(response), /*close=*/true);
  });
}

void HttpSession::ForceClose() {
  net::post(stream_.get_executor(), [self = shared_from_this()] { self->Close(); });
}

void HttpSession::ReadRequest() {
  if (state_ == State::kClosed) return;
  if (server_->draining()) return Close();
  state_ = State::kIdle;
  if (buffer_.size() > 0) return BeginRequest();  // a pipelined request is waiting
  if (buffer_.capacity() > kIdleBufferCapacity) buffer_.shrink_to_fit();
  stream_.expires_after(options().idle_timeout);
  stream_.async_read_some(buffer_.prepare(kSmallReadBytes),
                          [self = shared_from_this()](const ErrorCode& ec, size_t bytes) {
                            self->OnIdleRead(ec, bytes);
                          });
}

void HttpSession::OnIdleRead(const ErrorCode& ec, size_t bytes) {
  if (state_ == State::kClosed) return;
  if (ec) {
    if (ec == beast::error::timeout) server_->CountTimeout();
    return Close();
  }
  buffer_.commit(bytes);
  BeginRequest();
}

void HttpSession::BeginRequest() {
  state_ = State::kReading;
  request_start_ = Clock::now();
  request_deadline_ = request_start_ + options().request_timeout;
  target_.clear();
  header_done_ = false;
  parser_.emplace();
  parser_->header_limit(options().max_header_bytes);
  parser_->body_limit(options().max_body_bytes);
  stream_.expires_at(std::min(request_start_ + options().header_timeout, request_deadline_));
  http::async_read_header(
      stream_, buffer_, *parser_,
      [self = shared_from_this()](const ErrorCode& ec, size_t) { self->OnHeader(ec); });
}

void HttpSession::OnHeader(const ErrorCode& ec) {
  if (state_ != State::kReading) return;  // closed, or answered by Abandon()
  if (ec) return OnReadError(ec);
  header_done_ = true;
  server_->CountRequest();
  target_ = std::string(parser_->get().target());
  // Reserve the body's bytes in the server-wide budget before reading it:
  // the declared length, or the per-request cap for a chunked body.
  const uint64_t body_bytes =
      parser_->content_length().value_or(parser_->chunked() ? options().max_body_bytes : 0);
  if (body_bytes > 0) {
    if (!server_->ReserveBodyBytes(body_bytes)) {
      server_->Refused(target_, 429);
      HttpResponse busy = HttpResponse::Text(
          429, "the server is receiving too many request bodies at once; retry shortly\n");
      busy.headers.emplace_back("Retry-After", "1");
      return Write(std::move(busy), /*close=*/true);
    }
    reserved_body_bytes_ = body_bytes;
  }
  if (!parser_->is_done() &&
      AsciiEqualsIgnoreCase(TrimHttpWhitespace(parser_->get()[http::field::expect]),
                            "100-continue")) {
    // The client waits for this before sending the body (curl does for
    // large bodies). A body over the limit never gets here: the parser
    // refused its Content-Length with the header.
    stream_.expires_after(options().write_timeout);
    continue_pending_ = true;
    net::async_write(stream_, net::buffer(kContinue.data(), kContinue.size()),
                     [self = shared_from_this()](const ErrorCode& write_error, size_t) {
                       self->continue_pending_ = false;
                       if (self->state_ != State::kReading) return;
                       if (write_error) return self->Close();
                       self->ReadBody();
                     });
    return;
  }
  ReadBody();
}

void HttpSession::ReadBody() {
  if (parser_->is_done()) return Dispatch();
  stream_.expires_at(std::min(Clock::now() + options().read_timeout, request_deadline_));
  http::async_read_some(
      stream_, buffer_, *parser_,
      [self = shared_from_this()](const ErrorCode& ec, size_t) { self->OnBody(ec); });
}

void HttpSession::OnBody(const ErrorCode& ec) {
  if (state_ != State::kReading) return;  // closed, or answered by Abandon()
  if (ec) return OnReadError(ec);
  ReadBody();
}

void HttpSession::OnReadError(const ErrorCode& ec) {
  // The request line parses before the fields, so a refusal during the
  // header (a Content-Length over the limit) still knows its target.
  if (!header_done_ && parser_.has_value()) target_ = std::string(parser_->get().target());
  if (ec == http::error::header_limit) {
    server_->Refused(target_, 431);
    return Write(HttpResponse::Text(431, fmt::format("request header too large: at most {} bytes\n",
                                                     options().max_header_bytes)),
                 /*close=*/true);
  }
  if (ec == http::error::body_limit) {
    server_->Refused(target_, 413);
    return Write(HttpResponse::Text(413, fmt::format("request body too large: at most {} bytes\n",
                                                     options().max_body_bytes)),
                 /*close=*/true);
  }
  if (ec == beast::error::timeout) {
    // The client stalled; the stream already closed the socket.
    server_->CountTimeout();
    if (!target_.empty()) server_->Refused(target_, 408);
    return Close();
  }
  if (IsHttpParseError(ec) && ec != http::error::end_of_stream &&
      ec != http::error::partial_message) {
    server_->Refused(target_, 400);
    return Write(HttpResponse::Text(400, fmt::format("malformed HTTP request: {}\n", ec.message())),
                 /*close=*/true);
  }
  Close();  // end of stream, reset, or aborted by Close()
}

void HttpSession::Dispatch() {
  state_ = State::kHandling;
  auto& message = parser_->get();
  HttpRequest request;
  request.method = std::string(message.method_string());
  request.target = std::string(message.target());
  request.headers.reserve(std::distance(message.begin(), message.end()));
  for (const auto& field : message) {
    request.headers.emplace_back(std::string(field.name_string()), std::string(field.value()));
  }
  request.body = std::make_shared<std::string>(std::move(message.body()));
  request.arrival = request_start_;
  request.peer_address = peer_address_;
  keep_alive_ = message.keep_alive();
  parser_.reset();
  // The body now belongs to the handler (for OTLP: to the writer's own
  // in-flight budget, or it is refused and freed).
  ReleaseBodyBytes();

  const uint64_t sequence = ++sequence_;
  auto exchange = std::make_shared<HttpExchange>();
  exchange->gate = server_->gate();
  exchange->session = weak_from_this();
  exchange->sequence = sequence;
  deadline_timer_.expires_at(request_deadline_);
  deadline_timer_.async_wait([self = shared_from_this(), sequence](const ErrorCode& ec) {
    self->OnRequestDeadline(ec, sequence);
  });
  server_->handler()(std::move(request), HttpResponder(std::move(exchange)));
}

void HttpSession::OnResponse(uint64_t sequence, HttpResponse response) {
  if (state_ != State::kHandling || sequence != sequence_) return;  // too late
  deadline_timer_.cancel();
  Write(std::move(response), /*close=*/false);
}

void HttpSession::OnRequestDeadline(const ErrorCode& ec, uint64_t sequence) {
  if (ec || state_ != State::kHandling || sequence != sequence_) return;
  server_->Refused(target_, 504);
  Write(HttpResponse::Text(504, "the request was not answered before its deadline; retry\n"),
        /*close=*/false);
}

void HttpSession::Write(HttpResponse response, bool close) {
  state_ = State::kWriting;
  ReleaseBodyBytes();
  if (response.status < 100 || response.status > 999) {
    response = HttpResponse::Text(500, fmt::format("internal error: a handler answered with "
                                                   "HTTP status {}\n",
                                                   response.status));
  }
  auto message = std::make_shared<http::response<http::string_body>>();
  message->version(11);
  message->result(static_cast<unsigned>(response.status));
  message->set(http::field::server, kServerName);
  if (!response.content_type.empty())
    message->set(http::field::content_type, response.content_type);
  for (const auto& [name, value] : response.headers) message->insert(name, value);
  message->body() = std::move(response.body);
  const bool keep_alive = !close && keep_alive_ && !server_->draining();
  message->keep_alive(keep_alive);
  message->prepare_payload();
  stream_.expires_after(options().write_timeout);
  http::async_write(stream_, *message,
                    [self = shared_from_this(), message, keep_alive](const ErrorCode& ec, size_t) {
                      self->OnWritten(ec, keep_alive);
                    });
}

void HttpSession::OnWritten(const ErrorCode& ec, bool keep_alive) {
  if (state_ == State::kClosed) return;
  if (ec) {
    if (ec == beast::error::timeout) server_->CountTimeout();
    return Close();
  }
  if (keep_alive) return ReadRequest();
  Linger();
}

void HttpSession::OnStreamStart(uint64_t sequence, HttpResponse head,
                                std::shared_ptr<HttpStream> stream,
                                uint64_t max_client_frame_bytes) {
  if (state_ != State::kHandling || sequence != sequence_) {
    stream->MarkClosed();  // too late: the deadline's 504 went out instead
    return;
  }
  deadline_timer_.cancel();
  ReleaseBodyBytes();
  state_ = State::kStreaming;
  stream_out_ = std::move(stream);
  if (head.status < 100 || head.status > 999) head.status = 500;
  std::string wire = fmt::format(
      "HTTP/1.1 {} {}\r\nServer: {}\r\n", head.status,
      std::string_view(http::obsolete_reason(static_cast<http::status>(head.status))), kServerName);
  if (!head.content_type.empty()) wire += fmt::format("Content-Type: {}\r\n", head.content_type);
  for (const auto& [name, value] : head.headers) wire += fmt::format("{}: {}\r\n", name, value);
  if (stream_out_->websocket()) {
    // The upgrade's head carries its own Upgrade and Connection fields, and
    // no body: the frames follow.
    websocket_ = true;
    websocket_max_frame_ = max_client_frame_bytes;
    wire += "\r\n";
    stream_chunks_.emplace_back(std::move(wire), 0);
    if (server_->draining()) {
      websocket_close_ = WebSocketCloseFrame(kWebSocketGoingAway, "the server is shutting down");
      stream_ending_ = true;
    }
    PumpStream();
    return ReadWebSocket();
  }
  wire += "Transfer-Encoding: chunked\r\nConnection: close\r\n\r\n";
  if (!head.body.empty()) wire += fmt::format("{:x}\r\n{}\r\n", head.body.size(), head.body);
  stream_chunks_.emplace_back(std::move(wire), 0);
  if (server_->draining()) stream_ending_ = true;
  PumpStream();
}

void HttpSession::PumpStream() {
  if (state_ != State::kStreaming || stream_writing_) return;
  if (stream_chunks_.empty()) {
    if (!stream_ending_) return;
    if (stream_last_sent_) return Linger();
    stream_last_sent_ = true;
    if (websocket_) {
      if (websocket_close_.empty())
        websocket_close_ = WebSocketCloseFrame(kWebSocketNormalClose, "");
      stream_chunks_.emplace_back(websocket_close_, 0);
    } else {
      stream_chunks_.emplace_back("0\r\n\r\n", 0);
    }
  }
  stream_writing_ = true;
  stream_.expires_after(options().stream_write_timeout);
  const std::string& chunk = stream_chunks_.front().first;
  net::async_write(
      stream_, net::buffer(chunk.data(), chunk.size()),
      [self = shared_from_this()](const ErrorCode& ec, size_t) { self->OnStreamWritten(ec); });
}

void HttpSession::OnStreamWritten(const ErrorCode& ec) {
  stream_writing_ = false;
  if (state_ != State::kStreaming) return;  // closed meanwhile
  if (ec) {
    if (ec == beast::error::timeout) server_->CountTimeout();
    return Close();
  }
  stream_out_->Written(stream_chunks_.front().second);
  stream_chunks_.pop_front();
  PumpStream();
}

namespace {

std::string_view StatusText(const absl::Status& status) {
  return std::string_view(status.message().data(), status.message().size());
}

}  // namespace

void HttpSession::ReadWebSocket() {
  if (state_ != State::kStreaming || websocket_reading_) return;
  for (;;) {
    const auto* data = static_cast<const char*>(buffer_.data().data());
    absl::StatusOr<std::optional<WebSocketClientFrame>> frame =
        ParseClientFrame(std::string_view(data, buffer_.size()), websocket_max_frame_);
    if (!frame.ok()) {
      const uint16_t code = absl::IsResourceExhausted(frame.status()) ? kWebSocketMessageTooBig
                                                                      : kWebSocketProtocolError;
      return EndWebSocket(WebSocketCloseFrame(code, StatusText(frame.status())));
    }
    if (!frame->has_value()) break;
    WebSocketClientFrame f = std::move(**frame);
    buffer_.consume(f.consumed);
    if (f.opcode == WebSocketOpcode::kPing) {
      if (!stream_ending_) {
        stream_chunks_.emplace_back(WebSocketFrame(WebSocketOpcode::kPong, f.payload), 0);
        PumpStream();
      }
    } else if (f.opcode == WebSocketOpcode::kClose) {
      // Echo the client's code (RFC 6455 5.5.1); the stream is over.
      absl::StatusOr<WebSocketClose> close = ParseClosePayload(f.payload);
      if (!close.ok()) {
        return EndWebSocket(
            WebSocketCloseFrame(kWebSocketProtocolError, StatusText(close.status())));
      }
      return EndWebSocket(
          WebSocketCloseFrame(close->code == 1005 ? kWebSocketNormalClose : close->code, ""));
    }
    // Pongs and data messages are read and dropped: this endpoint only sends.
  }
  websocket_reading_ = true;
  stream_.async_read_some(buffer_.prepare(kSmallReadBytes),
                          [self = shared_from_this()](const ErrorCode& ec, size_t bytes) {
                            self->OnWebSocketRead(ec, bytes);
                          });
}

void HttpSession::OnWebSocketRead(const ErrorCode& ec, size_t bytes) {
  websocket_reading_ = false;
  if (state_ == State::kClosed) return;
  // HalfClose() left the discarding of what the client still sends to
  // this read.
  if (state_ == State::kClosing) return DiscardUntilClosed();
  if (ec) {
    if (ec == beast::error::timeout) server_->CountTimeout();
    return Close();
  }
  buffer_.commit(bytes);
  if (stream_ending_) return;  // a close is on its way; Linger() reads the rest
  ReadWebSocket();
}

void HttpSession::EndWebSocket(std::string close_frame) {
  if (stream_out_ != nullptr) stream_out_->MarkClosed();
  if (state_ != State::kStreaming) return;
  if (!stream_ending_) {
    websocket_close_ = std::move(close_frame);
    stream_ending_ = true;
  }
  PumpStream();
}

void HttpSession::Linger() {
  // Half-close, then read and discard until the client closes too (or the
  // linger deadline): closing with unread bytes would make the kernel send
  // a reset that can destroy the answer before the client reads it.
  if (stream_out_ != nullptr) stream_out_->MarkClosed();
  state_ = State::kClosing;
  buffer_.consume(buffer_.size());
  // Over TLS, end it properly first (close_notify), so the client can tell
  // the answer was not cut short.
  std::string close_notify = stream_.CloseNotify();
  if (close_notify.empty()) return HalfClose();
  auto bytes = std::make_shared<std::string>(std::move(close_notify));
  stream_.expires_after(options().linger_timeout);
  net::async_write(stream_.tcp(), net::buffer(*bytes),
                   [self = shared_from_this(), bytes](const ErrorCode& ec, size_t) {
                     if (self->state_ == State::kClosed) return;
                     if (ec) return self->Close();
                     self->HalfClose();
                   });
}

void HttpSession::HalfClose() {
  ErrorCode ignored;
  stream_.socket().shutdown(tcp::socket::shutdown_send, ignored);
  stream_.expires_after(options().linger_timeout);
  // A WebSocket's read of the client's frames may still be outstanding: it
  // goes on discarding when it completes (one read at a time).
  if (websocket_reading_) return;
  DiscardUntilClosed();
}

void HttpSession::DiscardUntilClosed() {
  stream_.async_read_some(buffer_.prepare(kSmallReadBytes),
                          [self = shared_from_this()](const ErrorCode& ec, size_t) {
                            if (self->state_ == State::kClosed) return;
                            if (ec) return self->Close();
                            self->DiscardUntilClosed();
                          });
}

void HttpSession::Close() {
  if (state_ == State::kClosed) return;
  state_ = State::kClosed;
  // The chunks stay until the session is destroyed: a cancelled write may
  // still name the front one.
  if (stream_out_ != nullptr) stream_out_->MarkClosed();
  ErrorCode ignored;
  stream_.socket().shutdown(tcp::socket::shutdown_both, ignored);
  stream_.close();
  deadline_timer_.cancel();
  parser_.reset();
  ReleaseBodyBytes();
  server_->Remove(this);
}

void HttpSession::ReleaseBodyBytes() {
  if (reserved_body_bytes_ == 0) return;
  server_->ReleaseBodyBytes(reserved_body_bytes_);
  reserved_body_bytes_ = 0;
}

}  // namespace internal

// ---------------------------------------------------------------------------
// HttpResponder

HttpResponder::HttpResponder(std::shared_ptr<internal::HttpExchange> exchange)
    : exchange_(std::move(exchange)) {}

HttpResponder::HttpResponder(HttpResponder&& other) noexcept = default;

HttpResponder& HttpResponder::operator=(HttpResponder&& other) noexcept {
  if (this != &other) {
    if (exchange_ != nullptr) {
      Respond(HttpResponse::Text(500, "internal error: the request was dropped unanswered\n"));
    }
    exchange_ = std::move(other.exchange_);
  }
  return *this;
}

HttpResponder::~HttpResponder() {
  if (exchange_ != nullptr) {
    Respond(HttpResponse::Text(500, "internal error: the request was dropped unanswered\n"));
  }
}

bool HttpResponder::Respond(HttpResponse response) {
  std::shared_ptr<internal::HttpExchange> exchange = std::move(exchange_);
  if (exchange == nullptr) return false;
  return exchange->Deliver(std::move(response));
}

std::shared_ptr<HttpStream> HttpResponder::Stream(HttpResponse head, HttpStreamOptions options) {
  std::shared_ptr<internal::HttpExchange> exchange = std::move(exchange_);
  if (exchange == nullptr) return nullptr;
  return exchange->DeliverStream(std::move(head), options);
}

// ---------------------------------------------------------------------------
// HttpStream

HttpStream::HttpStream(std::shared_ptr<internal::Gate> gate,
                       std::weak_ptr<internal::HttpSession> session, uint64_t max_queued_bytes,
                       bool websocket, std::function<void()> on_closed)
    : gate_(std::move(gate)),
      session_(std::move(session)),
      max_queued_bytes_(max_queued_bytes),
      websocket_(websocket),
      on_closed_(std::move(on_closed)) {}

HttpStream::WriteResult HttpStream::Write(std::string_view bytes) {
  if (closed()) return WriteResult::kClosed;
  if (bytes.empty()) return WriteResult::kQueued;
  const uint64_t queued = queued_bytes();
  if (queued > 0 && queued + bytes.size() > max_queued_bytes_) return WriteResult::kFull;
  std::string framed;
  if (websocket_) {
    framed = WebSocketFrame(WebSocketOpcode::kText, bytes);
  } else {
    framed = fmt::format("{:x}\r\n", bytes.size());
    framed.reserve(framed.size() + bytes.size() + 2);
    framed.append(bytes);
    framed += "\r\n";
  }
  MutexLock lock(&gate_->mu);
  std::shared_ptr<internal::HttpSession> session = session_.lock();
  if (!gate_->open || session == nullptr) {
    MarkClosed();
    return WriteResult::kClosed;
  }
  queued_bytes_.fetch_add(bytes.size(), std::memory_order_acq_rel);
  session->StreamAppend(std::move(framed), bytes.size());
  return WriteResult::kQueued;
}

void HttpStream::End() {
  MutexLock lock(&gate_->mu);
  std::shared_ptr<internal::HttpSession> session = session_.lock();
  if (!gate_->open || session == nullptr) {
    MarkClosed();
    return;
  }
  session->StreamEnd("");
}

void HttpStream::Close(uint16_t code, std::string_view reason) {
  MutexLock lock(&gate_->mu);
  std::shared_ptr<internal::HttpSession> session = session_.lock();
  if (!gate_->open || session == nullptr) {
    MarkClosed();
    return;
  }
  session->StreamEnd(websocket_ ? WebSocketCloseFrame(code, reason) : std::string());
}

HttpStream::WriteResult HttpStream::Ping() {
  if (!websocket_ || closed()) return WriteResult::kClosed;
  MutexLock lock(&gate_->mu);
  std::shared_ptr<internal::HttpSession> session = session_.lock();
  if (!gate_->open || session == nullptr) {
    MarkClosed();
    return WriteResult::kClosed;
  }
  session->StreamAppend(WebSocketFrame(WebSocketOpcode::kPing, ""), 0);
  return WriteResult::kQueued;
}

// ---------------------------------------------------------------------------
// WebSocket handshake

std::string WebSocketAcceptValue(std::string_view key) {
  // RFC 6455 section 1.3's GUID.
  constexpr std::string_view kGuid = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11";
  beast::detail::sha1_context context;
  beast::detail::init(context);
  beast::detail::update(context, key.data(), key.size());
  beast::detail::update(context, kGuid.data(), kGuid.size());
  unsigned char digest[beast::detail::sha1_context::digest_size];
  beast::detail::finish(context, digest);
  std::string out(beast::detail::base64::encoded_size(sizeof(digest)), '\0');
  out.resize(beast::detail::base64::encode(out.data(), digest, sizeof(digest)));
  return out;
}

// ---------------------------------------------------------------------------
// HttpServer::Impl

HttpServer::Impl::Impl(HttpServerOptions options, HttpHandler handler)
    : options_(std::move(options)),
      handler_(std::move(handler)),
      io_context_(std::make_unique<net::io_context>(std::max(1, options_.io_threads))) {
  work_.emplace(io_context_->get_executor());
  accept_strand_.emplace(net::make_strand(*io_context_));
}

HttpServer::Impl::~Impl() { Shutdown(std::chrono::nanoseconds(0)); }

absl::Status HttpServer::Impl::Listen() {
  absl::StatusOr<HostPort> host_port = ParseListenAddress(options_.address);
  if (!host_port.ok()) return host_port.status();
  auto fail = [&](std::string_view what, const ErrorCode& ec) {
    return absl::FailedPreconditionError(fmt::format("cannot listen on {}: {}: {}; {}",
                                                     options_.address, what, ec.message(),
                                                     RunbookRef("cannot-listen")));
  };
  ErrorCode ec;
  std::vector<tcp::endpoint> candidates;
  if (host_port->host.empty()) {
    // All interfaces: IPv6 with IPv4-mapped addresses where the host has
    // IPv6, else IPv4.
    candidates.emplace_back(tcp::v6(), host_port->port);
    candidates.emplace_back(tcp::v4(), host_port->port);
  } else if (net::ip::address address = net::ip::make_address(host_port->host, ec); !ec) {
    candidates.emplace_back(address, host_port->port);
  } else {
    tcp::resolver resolver(*io_context_);
    auto results = resolver.resolve(host_port->host, std::to_string(host_port->port), ec);
    if (ec) return fail("cannot resolve the host", ec);
    for (const auto& entry : results) candidates.push_back(entry.endpoint());
    if (candidates.empty()) return fail("the host resolves to no address", ec);
  }
  ErrorCode last_error;
  for (const tcp::endpoint& endpoint : candidates) {
    acceptor_.emplace(*accept_strand_);
    if (acceptor_->open(endpoint.protocol(), ec); ec) {
      last_error = ec;
      continue;
    }
    if (host_port->host.empty() && endpoint.protocol() == tcp::v6()) {
      acceptor_->set_option(net::ip::v6_only(false), ec);
    }
    acceptor_->set_option(net::socket_base::reuse_address(true), ec);
    if (acceptor_->bind(endpoint, ec); ec) return fail("bind", ec);
    if (acceptor_->listen(net::socket_base::max_listen_connections, ec); ec) {
      return fail("listen", ec);
    }
    const tcp::endpoint local = acceptor_->local_endpoint(ec);
    if (ec) return fail("local address", ec);
    port_ = local.port();
    bound_address_ = local.address().is_v6()
                         ? fmt::format("[{}]:{}", local.address().to_string(), port_)
                         : fmt::format("{}:{}", local.address().to_string(), port_);
    accept_pause_.emplace(*accept_strand_);
    return absl::OkStatus();
  }
  acceptor_.reset();
  return fail("open socket", last_error);
}

void HttpServer::Impl::Run() {
  {
    MutexLock lock(&mu_);
    accepting_ = true;
  }
  net::dispatch(*accept_strand_, [this] { Accept(); });
  const int threads = std::max(1, options_.io_threads);
  for (int i = 0; i < threads; ++i) {
    threads_.emplace_back([this] {
      pthread_setname_np(pthread_self(), "strata-http");
      io_context_->run();
    });
  }
}

void HttpServer::Impl::Accept() {
  acceptor_->async_accept(
      net::make_strand(*io_context_),
      [this](const ErrorCode& ec, tcp::socket socket) { OnAccept(ec, std::move(socket)); });
}

void HttpServer::Impl::OnAccept(const ErrorCode& ec, tcp::socket socket) {
  if (ec == net::error::operation_aborted || !acceptor_->is_open()) return;
  if (ec) {
    // Out of file descriptors or memory: the backlog holds the connection
    // until an open one closes.
    accept_pause_->expires_after(kAcceptErrorPause);
    accept_pause_->async_wait([this](const ErrorCode& wait_error) {
      if (!wait_error && acceptor_->is_open()) Accept();
    });
    return;
  }
  ErrorCode ignored;
  socket.set_option(tcp::no_delay(true), ignored);
  std::unique_ptr<TlsConnection> tls;
  if (options_.tls != nullptr) {
    tls = options_.tls->NewConnection();
    if (tls == nullptr) {  // out of memory: never fall back to plain text
      socket.close(ignored);
      return Accept();
    }
  }
  auto session = std::make_shared<internal::HttpSession>(this, std::move(socket), std::move(tls));
  bool admitted = false;
  {
    MutexLock lock(&mu_);
    if (static_cast<int64_t>(sessions_.size()) < options_.max_connections && !draining()) {
      sessions_.emplace(session.get(), session);
      admitted = true;
    }
  }
  if (admitted) {
    accepted_.fetch_add(1, std::memory_order_relaxed);
    if (options_.on_connections) options_.on_connections(+1);
    session->Start();
  } else {
    refused_.fetch_add(1, std::memory_order_relaxed);
    session->Refuse();
  }
  Accept();
}

void HttpServer::Impl::Remove(internal::HttpSession* session) {
  std::shared_ptr<internal::HttpSession> keep;  // released after the lock
  {
    MutexLock lock(&mu_);
    auto it = sessions_.find(session);
    if (it == sessions_.end()) return;  // a refused connection
    keep = std::move(it->second);
    sessions_.erase(it);
    changed_.SignalAll();
  }
  if (options_.on_connections) options_.on_connections(-1);
}

std::vector<std::shared_ptr<internal::HttpSession>> HttpServer::Impl::Sessions() const {
  MutexLock lock(&mu_);
  std::vector<std::shared_ptr<internal::HttpSession>> out;
  out.reserve(sessions_.size());
  for (const auto& entry : sessions_) out.push_back(entry.second);
  return out;
}

void HttpServer::Impl::WaitForSessions(Clock::time_point deadline) {
  MutexLock lock(&mu_);
  while (!sessions_.empty()) {
    if (!changed_.WaitUntil(&mu_, deadline) && Clock::now() >= deadline) return;
  }
}

void HttpServer::Impl::StopAccepting() {
  {
    MutexLock lock(&mu_);
    if (!accepting_) return;
  }
  net::post(*accept_strand_, [this] {
    ErrorCode ignored;
    acceptor_->close(ignored);
    accept_pause_->cancel();
    MutexLock lock(&mu_);
    accepting_ = false;
    changed_.SignalAll();
  });
  const Clock::time_point deadline = Clock::now() + kStopAcceptingWait;
  MutexLock lock(&mu_);
  while (accepting_) {
    if (!changed_.WaitUntil(&mu_, deadline) && Clock::now() >= deadline) return;
  }
}

void HttpServer::Impl::Shutdown(std::chrono::nanoseconds drain_timeout) {
  {
    MutexLock lock(&mu_);
    if (shut_down_) return;
    shut_down_ = true;
  }
  if (!threads_.empty()) {
    StopAccepting();
    draining_.store(true, std::memory_order_release);
    const Clock::time_point deadline = Clock::now() + drain_timeout;
    for (const auto& session : Sessions()) session->Drain();
    WaitForSessions(deadline);
    for (const auto& session : Sessions()) session->Abandon();
    WaitForSessions(Clock::now() + kAbandonWait);
    for (const auto& session : Sessions()) session->ForceClose();
    WaitForSessions(Clock::now() + kForceCloseWait);
  }
  {
    MutexLock lock(&gate_->mu);
    gate_->open = false;
  }
  work_.reset();
  io_context_->stop();
  for (std::thread& thread : threads_) thread.join();
  threads_.clear();
  std::unordered_map<internal::HttpSession*, std::shared_ptr<internal::HttpSession>> left;
  {
    MutexLock lock(&mu_);
    left.swap(sessions_);
  }
  if (!left.empty() && options_.on_connections) {
    options_.on_connections(-static_cast<int64_t>(left.size()));
  }
  left.clear();
  accept_pause_.reset();
  acceptor_.reset();
  // A strand refers to state inside its io_context: it goes first.
  accept_strand_.reset();
  // Destroys the handlers still queued, and with them the last references
  // to closed sessions.
  io_context_.reset();
}

HttpServerStats HttpServer::Impl::GetStats() const {
  HttpServerStats stats;
  {
    MutexLock lock(&mu_);
    stats.open_connections = static_cast<int64_t>(sessions_.size());
  }
  stats.connections_accepted = accepted_.load(std::memory_order_relaxed);
  stats.connections_refused = refused_.load(std::memory_order_relaxed);
  stats.requests = requests_.load(std::memory_order_relaxed);
  stats.timeouts = timeouts_.load(std::memory_order_relaxed);
  stats.body_bytes_reserved = body_bytes_.load(std::memory_order_relaxed);
  return stats;
}

// ---------------------------------------------------------------------------
// HttpServer

HttpServer::HttpServer(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
HttpServer::~HttpServer() = default;

absl::StatusOr<std::unique_ptr<HttpServer>> HttpServer::Start(HttpServerOptions options,
                                                              HttpHandler handler) {
  auto impl = std::make_unique<Impl>(std::move(options), std::move(handler));
  if (absl::Status s = impl->Listen(); !s.ok()) return s;
  impl->Run();
  return std::unique_ptr<HttpServer>(new HttpServer(std::move(impl)));
}

uint16_t HttpServer::port() const { return impl_->port(); }
std::string HttpServer::address() const { return impl_->address(); }
void HttpServer::StopAccepting() { impl_->StopAccepting(); }
void HttpServer::Shutdown(std::chrono::nanoseconds drain_timeout) {
  impl_->Shutdown(drain_timeout);
}
HttpServerStats HttpServer::GetStats() const { return impl_->GetStats(); }

// ---------------------------------------------------------------------------
// OTLP/HTTP client (NewHttpClient, otlp_client.h)

namespace {

// Answers bigger than this are an error: OTLP answers are tiny.
constexpr uint64_t kMaxAnswerBytes = 4 << 20;

// Errors that mean a kept-alive connection was closed by the server while
// idle: the request never reached it, so it is safe to send again.
bool IsStaleConnection(const ErrorCode& ec) {
  return ec == http::error::end_of_stream || ec == net::error::eof ||
         ec == net::error::connection_reset || ec == net::error::broken_pipe;
}

class HttpOtlpClient final : public OtlpClient {
 public:
  HttpOtlpClient(OtlpClientOptions options, std::string host_header)
      : options_(std::move(options)),
        host_header_(std::move(host_header)),
        work_(io_context_.get_executor()) {}
  ~HttpOtlpClient() override;

  // Resolves the target and starts the connections (unconnected) and threads.
  absl::Status Start(const HostPort& target);
  void Export(Signal signal, std::shared_ptr<const std::string> payload, Done done) override;

 private:
  struct Call {
    Signal signal = Signal::kTraces;
    std::shared_ptr<const std::string> payload;
    Done done;
    Clock::time_point deadline;
  };
  class Connection;

  // The next queued call for `connection`, or nullopt after parking it idle.
  std::optional<Call> NextCall(Connection* connection) ABSL_LOCKS_EXCLUDED(mu_);
  // Runs the call's `done` and counts it answered.
  void Finish(Call* call, ExportReply reply) ABSL_LOCKS_EXCLUDED(mu_);
  bool closing() const ABSL_LOCKS_EXCLUDED(mu_);

  // Constant after Start().
  const OtlpClientOptions options_;
  const std::string host_header_;
  tcp::resolver::results_type endpoints_;
  net::io_context io_context_;
  std::optional<net::executor_work_guard<net::io_context::executor_type>> work_;
  // Declared after io_context_: destroyed (sockets closed) before it.
  std::vector<std::unique_ptr<Connection>> connections_;
  std::vector<std::thread> threads_;

  mutable Mutex mu_;
  CondVar answered_;
  std::deque<Call> queue_ ABSL_GUARDED_BY(mu_);
  std::vector<Connection*> idle_ ABSL_GUARDED_BY(mu_);
  uint64_t outstanding_ ABSL_GUARDED_BY(mu_) = 0;
  bool closing_ ABSL_GUARDED_BY(mu_) = false;
};

// One keep-alive connection, confined to its strand. Runs one call at a
// time: connect if needed, write, read the answer, then take the next call.
class HttpOtlpClient::Connection {
 public:
  Connection(HttpOtlpClient* client, net::io_context& io_context)
      : client_(client), stream_(net::make_strand(io_context)) {}

  // Any thread: take the next queued call (the client popped this
  // connection from its idle list).
  void Wake() {
    net::post(stream_.get_executor(), [this] { Next(); });
  }
  // Any thread: abort what is in progress (it fails Unavailable).
  void Abort() {
    net::post(stream_.get_executor(), [this] {
      aborted_ = true;
      Disconnect();
    });
  }

 private:
  void Next();
  void Connect();
  void Send();
  void OnSent(const ErrorCode& ec);
  void OnAnswer(const ErrorCode& ec);
  void Fail(const ErrorCode& ec, std::string_view step);
  void Complete(ExportReply reply);
  void Disconnect();

  HttpOtlpClient* const client_;
  beast::tcp_stream stream_;
  beast::flat_buffer buffer_;
  std::optional<Call> call_;
  std::optional<http::request<http::span_body<const char>>> request_;
  std::optional<http::response_parser<http::string_body>> parser_;
  bool connected_ = false;
  bool reused_ = false;   // the call runs on a connection an earlier call used
  bool retried_ = false;  // the call was already resent once
  bool aborted_ = false;
};

void HttpOtlpClient::Connection::Next() {
  if (call_.has_value()) return;
  call_ = client_->NextCall(this);
  if (!call_.has_value()) return;
  retried_ = false;
  if (Clock::now() >= call_->deadline) {
    return Complete(ExportReply{.status = absl::DeadlineExceededError(fmt::format(
                                    "{}: no free connection within {} ms", client_->options_.target,
                                    client_->options_.timeout.count()))});
  }
  if (connected_) {
    reused_ = true;
    return Send();
  }
  Connect();
}

void HttpOtlpClient::Connection::Connect() {
  reused_ = false;
  stream_.expires_at(call_->deadline);
  stream_.async_connect(client_->endpoints_, [this](const ErrorCode& ec, const tcp::endpoint&) {
    if (ec) return Fail(ec, "connect");
    connected_ = true;
    ErrorCode ignored;
    stream_.socket().set_option(tcp::no_delay(true), ignored);
    Send();
  });
}

void HttpOtlpClient::Connection::Send() {
  const OtlpClientOptions& options = client_->options_;
  request_.emplace(http::verb::post, HttpPathFor(call_->signal), 11);
  request_->set(http::field::host, client_->host_header_);
  request_->set(http::field::user_agent, "strata-loadgen");
  request_->set(http::field::content_type, ContentTypeFor(options.encoding));
  if (options.gzip) request_->set(http::field::content_encoding, "gzip");
  if (!options.token.empty()) request_->set(http::field::authorization, "Bearer " + options.token);
  request_->keep_alive(true);
  request_->body() = beast::span<const char>(call_->payload->data(), call_->payload->size());
  request_->prepare_payload();
  stream_.expires_at(call_->deadline);
  http::async_write(stream_, *request_, [this](const ErrorCode& ec, size_t) { OnSent(ec); });
}

void HttpOtlpClient::Connection::OnSent(const ErrorCode& ec) {
  if (ec) return Fail(ec, "send");
  parser_.emplace();
  parser_->body_limit(kMaxAnswerBytes);
  http::async_read(stream_, buffer_, *parser_,
                   [this](const ErrorCode& read_error, size_t) { OnAnswer(read_error); });
}

void HttpOtlpClient::Connection::OnAnswer(const ErrorCode& ec) {
  if (ec) return Fail(ec, "read the answer");
  const auto& answer = parser_->get();
  ExportReply reply = ParseExportReply(call_->signal, static_cast<int>(answer.result_int()),
                                       answer[http::field::content_type],
                                       answer[http::field::retry_after], answer.body());
  if (!answer.keep_alive()) Disconnect();
  parser_.reset();
  request_.reset();
  Complete(std::move(reply));
}

void HttpOtlpClient::Connection::Fail(const ErrorCode& ec, std::string_view step) {
  Disconnect();
  if (ec == beast::error::timeout) {
    return Complete(ExportReply{.status = absl::DeadlineExceededError(fmt::format(
                                    "{}: no answer within {} ms ({})", client_->options_.target,
                                    client_->options_.timeout.count(), step))});
  }
  if (!aborted_ && reused_ && !retried_ && IsStaleConnection(ec) && !client_->closing() &&
      Clock::now() < call_->deadline) {
    retried_ = true;
    return Connect();
  }
  Complete(ExportReply{.status = absl::UnavailableError(
                           fmt::format("{}: {}: {}", client_->options_.target, step,
                                       aborted_ ? "the client is closing" : ec.message()))});
}

void HttpOtlpClient::Connection::Complete(ExportReply reply) {
  Call call = std::move(*call_);
  call_.reset();
  client_->Finish(&call, std::move(reply));
  Next();
}

void HttpOtlpClient::Connection::Disconnect() {
  ErrorCode ignored;
  stream_.socket().shutdown(tcp::socket::shutdown_both, ignored);
  stream_.close();
  buffer_.consume(buffer_.size());
  connected_ = false;
}

absl::Status HttpOtlpClient::Start(const HostPort& target) {
  tcp::resolver resolver(io_context_);
  ErrorCode ec;
  const std::string host = target.host.empty() ? "localhost" : target.host;
  endpoints_ = resolver.resolve(host, std::to_string(target.port), ec);
  if (ec || endpoints_.empty()) {
    return absl::UnavailableError(fmt::format("OTLP/HTTP target {}: cannot resolve {}: {}",
                                              options_.target, host, ec.message()));
  }
  const int connections = std::max(1, options_.connections);
  for (int i = 0; i < connections; ++i) {
    connections_.push_back(std::make_unique<Connection>(this, io_context_));
  }
  {
    MutexLock lock(&mu_);
    for (const auto& connection : connections_) idle_.push_back(connection.get());
  }
  for (int i = 0; i < std::max(1, options_.threads); ++i) {
    threads_.emplace_back([this] {
      pthread_setname_np(pthread_self(), "strata-httpcli");
      io_context_.run();
    });
  }
  return absl::OkStatus();
}

HttpOtlpClient::~HttpOtlpClient() {
  std::deque<Call> dropped;
  {
    MutexLock lock(&mu_);
    closing_ = true;
    dropped.swap(queue_);
  }
  for (Call& call : dropped) {
    Finish(&call, ExportReply{.status = absl::UnavailableError(
                                  fmt::format("{}: the client is closing", options_.target))});
  }
  for (const auto& connection : connections_) connection->Abort();
  {
    // Aborted operations complete promptly; the bound is a safety net.
    const Clock::time_point deadline = Clock::now() + options_.timeout + std::chrono::seconds(5);
    MutexLock lock(&mu_);
    while (outstanding_ > 0) {
      if (!answered_.WaitUntil(&mu_, deadline) && Clock::now() >= deadline) break;
    }
  }
  work_.reset();
  io_context_.stop();
  for (std::thread& thread : threads_) thread.join();
}

void HttpOtlpClient::Export(Signal signal, std::shared_ptr<const std::string> payload, Done done) {
  Connection* wake = nullptr;
  {
    MutexLock lock(&mu_);
    if (!closing_) {
      ++outstanding_;
      queue_.push_back(
          Call{signal, std::move(payload), std::move(done), Clock::now() + options_.timeout});
      if (!idle_.empty()) {
        wake = idle_.back();
        idle_.pop_back();
      }
      done = nullptr;
    }
  }
  if (done) {
    done(ExportReply{.status = absl::UnavailableError(
                         fmt::format("{}: the client is closing", options_.target))});
    return;
  }
  if (wake != nullptr) wake->Wake();
}

std::optional<HttpOtlpClient::Call> HttpOtlpClient::NextCall(Connection* connection) {
  MutexLock lock(&mu_);
  if (queue_.empty()) {
    idle_.push_back(connection);
    return std::nullopt;
  }
  Call call = std::move(queue_.front());
  queue_.pop_front();
  return call;
}

void HttpOtlpClient::Finish(Call* call, ExportReply reply) {
  call->done(std::move(reply));
  MutexLock lock(&mu_);
  --outstanding_;
  if (outstanding_ == 0) answered_.SignalAll();
}

bool HttpOtlpClient::closing() const {
  MutexLock lock(&mu_);
  return closing_;
}

}  // namespace

absl::StatusOr<std::unique_ptr<OtlpClient>> NewHttpClient(const OtlpClientOptions& options) {
  absl::StatusOr<HostPort> target = ParseHostPort(options.target);
  if (!target.ok()) return target.status();
  if (target->port == 0) {
    return absl::InvalidArgumentError(
        fmt::format("OTLP/HTTP target \"{}\": the port must not be 0", options.target));
  }
  const std::string host_header =
      target->host.find(':') != std::string::npos
          ? fmt::format("[{}]:{}", target->host, target->port)
          : fmt::format("{}:{}", target->host.empty() ? "localhost" : target->host, target->port);
  auto client = std::make_unique<HttpOtlpClient>(options, host_header);
  if (absl::Status s = client->Start(*target); !s.ok()) return s;
  return std::unique_ptr<OtlpClient>(std::move(client));
}

absl::StatusOr<HttpResponse> HttpCall(std::string_view address, const HttpRequest& request,
                                      std::chrono::milliseconds timeout) {
  absl::StatusOr<HostPort> target = ParseHostPort(address);
  if (!target.ok()) return target.status();
  const std::string host = target->host.empty() ? "localhost" : target->host;
  net::io_context io;
  beast::tcp_stream stream(io);
  stream.expires_after(timeout);
  beast::error_code ec;
  tcp::resolver resolver(io);
  const auto endpoints = resolver.resolve(host, std::to_string(target->port), ec);
  if (!ec) stream.connect(endpoints, ec);
  http::request<http::string_body> req;
  http::response<http::string_body> res;
  if (!ec) {
    req.method_string(request.method);
    req.target(request.target);
    req.version(11);
    req.set(http::field::host, fmt::format("{}:{}", host, target->port));
    req.set(http::field::connection, "close");
    for (const auto& [name, value] : request.headers) req.set(name, value);
    if (request.body != nullptr) req.body() = *request.body;
    req.prepare_payload();
    http::write(stream, req, ec);
  }
  beast::flat_buffer buffer;
  if (!ec) http::read(stream, buffer, res, ec);
  if (ec == beast::error::timeout) {
    return absl::DeadlineExceededError(
        fmt::format("{} {}: no answer within {} ms", request.method, address, timeout.count()));
  }
  if (ec) {
    return absl::UnavailableError(fmt::format("{} {}: {}", request.method, address, ec.message()));
  }
  HttpResponse out;
  out.status = static_cast<int>(res.result_int());
  out.content_type = std::string(res[http::field::content_type]);
  for (const auto& field : res) {
    out.headers.emplace_back(std::string(field.name_string()), std::string(field.value()));
  }
  out.body = std::move(res.body());
  return out;
}

}  // namespace strata::server
