#pragma once

// HttpTransport: the byte stream under one HTTP server connection, plain
// TCP or TLS over it. Private to http_adapter.cc (the one file that
// includes Boost headers keeps that role: only it includes this header).
//
// It is a Beast AsyncReadStream and AsyncWriteStream (get_executor,
// async_read_some, async_write_some), so Beast's HTTP algorithms run on it
// unchanged, plus the few beast::tcp_stream calls the session makes
// (deadlines, cancel, close, the socket). Without TLS every call goes
// straight to the beast::tcp_stream. With TLS, reads and writes are
// composed operations that shuttle bytes between the socket and a
// TlsConnection (tls_context.h): a read decrypts what is buffered, or sends
// what TLS must send (handshake messages, alerts) and reads more from the
// socket; a write encrypts up to kMaxTlsWriteBytes and sends the records.
// The handshake runs inside the first read. Deadlines are the tcp_stream's:
// they cover every socket operation a composed one makes, as they cover
// Beast's own composed reads.
//
// Rules the session keeps (as for any Asio stream): at most one read and
// one write outstanding, both on the connection's strand. A write needs
// the socket for reading only while the handshake is unfinished, which
// happens only when the session answers before reading a request (the 503
// of a connection over the limit), with no read outstanding.
//
// Errors: the tcp_stream's (beast::error::timeout, operation_aborted, ...);
// net::error::eof when the peer ended TLS or closed the socket;
// errc::protocol_error when TLS failed (a failed handshake, a bad record).

#include <boost/asio/buffer.hpp>
#include <boost/asio/compose.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core.hpp>
#include <memory>
#include <string>
#include <vector>

#include "server/tls_context.h"

namespace strata::server::internal {

class HttpTransport {
 public:
  using executor_type = boost::beast::tcp_stream::executor_type;
  using ErrorCode = boost::system::error_code;

  // Plaintext records: TLS's largest plus room for its overhead.
  static constexpr size_t kTlsReadBytes = 17 * 1024;
  // Plaintext one write encrypts (Beast writes a large body in several).
  static constexpr size_t kMaxTlsWriteBytes = 64 * 1024;

  // `tls` null: plain TCP.
  HttpTransport(boost::asio::ip::tcp::socket socket, std::unique_ptr<TlsConnection> tls)
      : tcp_(std::move(socket)), tls_(std::move(tls)) {
    if (tls_ != nullptr) tls_input_.resize(kTlsReadBytes);
  }

  executor_type get_executor() noexcept { return tcp_.get_executor(); }
  boost::asio::ip::tcp::socket& socket() { return tcp_.socket(); }
  template <class Duration>
  void expires_after(Duration duration) {
    tcp_.expires_after(duration);
  }
  template <class TimePoint>
  void expires_at(TimePoint deadline) {
    tcp_.expires_at(deadline);
  }
  void cancel() { tcp_.cancel(); }
  void close() { tcp_.close(); }

  bool tls() const { return tls_ != nullptr; }
  // TLS's close_notify, to write (to tcp()) before half-closing; empty
  // without TLS or before the handshake finished.
  std::string CloseNotify() {
    std::string out;
    if (tls_ == nullptr) return out;
    tls_->Close();
    tls_->TakeOutput(&out);
    return out;
  }
  boost::beast::tcp_stream& tcp() { return tcp_; }

  template <class MutableBuffers, class Handler>
  auto async_read_some(const MutableBuffers& buffers, Handler&& handler) {
    if (tls_ == nullptr) return tcp_.async_read_some(buffers, std::forward<Handler>(handler));
    return boost::asio::async_compose<Handler, void(ErrorCode, size_t)>(
        TlsReadOp<MutableBuffers>(this, buffers), handler, tcp_);
  }

  template <class ConstBuffers, class Handler>
  auto async_write_some(const ConstBuffers& buffers, Handler&& handler) {
    if (tls_ == nullptr) return tcp_.async_write_some(buffers, std::forward<Handler>(handler));
    return boost::asio::async_compose<Handler, void(ErrorCode, size_t)>(
        TlsWriteOp<ConstBuffers>(this, buffers), handler, tcp_);
  }

 private:
  // What a TLS step decided, delivered once its output is on the wire.
  struct Outcome {
    bool finished = false;
    ErrorCode error;
    size_t bytes = 0;
  };
  enum class Step { kStart, kAfterSocketRead, kAfterSocketWrite, kDeliver };

  static ErrorCode TlsFailure() {
    return boost::system::errc::make_error_code(boost::system::errc::protocol_error);
  }

  // Sends what TLS has for the socket, then continues `self` at
  // kAfterSocketWrite; false when there was nothing to send.
  template <class Self>
  bool SendOutput(Self& self, std::unique_ptr<std::string>& out, Step& step) {
    if (!tls_->HasOutput()) return false;
    // On the heap: the op (and the string in it) moves while the write runs.
    out = std::make_unique<std::string>();
    tls_->TakeOutput(out.get());
    step = Step::kAfterSocketWrite;
    boost::asio::async_write(tcp_, boost::asio::buffer(*out), std::move(self));
    return true;
  }

  template <class MutableBuffers>
  struct TlsReadOp {
    TlsReadOp(HttpTransport* t, const MutableBuffers& b) : transport(t), buffers(b) {}

    HttpTransport* transport;
    MutableBuffers buffers;
    Step step = Step::kStart;
    Outcome outcome;
    std::unique_ptr<std::string> out;

    template <class Self>
    void operator()(Self& self, ErrorCode ec = {}, size_t bytes = 0) {
      TlsConnection& tls = *transport->tls_;
      switch (step) {
        case Step::kAfterSocketRead:
          if (ec) return self.complete(ec, 0);
          if (bytes == 0) return self.complete(boost::asio::error::eof, 0);
          tls.Feed(transport->tls_input_.data(), bytes);
          break;
        case Step::kAfterSocketWrite:
          out.reset();
          if (ec) return self.complete(ec, 0);
          if (outcome.finished) return self.complete(outcome.error, outcome.bytes);
          break;
        case Step::kDeliver:
          return self.complete(outcome.error, outcome.bytes);
        case Step::kStart:
          break;
      }
      const boost::asio::mutable_buffer into = FirstNonEmpty(buffers);
      if (into.size() == 0) {
        outcome.finished = true;  // a read of nothing completes at once
      } else {
        switch (tls.Read(static_cast<char*>(into.data()), into.size(), &outcome.bytes)) {
          case TlsConnection::Result::kDone:
            outcome.finished = true;
            break;
          case TlsConnection::Result::kClosed:
            outcome = {true, boost::asio::error::eof, 0};
            break;
          case TlsConnection::Result::kFailed:
            outcome = {true, TlsFailure(), 0};
            break;
          case TlsConnection::Result::kWantRead:
            break;
        }
      }
      if (transport->SendOutput(self, out, step)) return;
      if (outcome.finished) {
        // Never complete inside the initiating call: post to the handler's
        // executor, as Asio requires.
        step = Step::kDeliver;
        return boost::asio::post(std::move(self));
      }
      step = Step::kAfterSocketRead;
      transport->tcp_.async_read_some(boost::asio::buffer(transport->tls_input_), std::move(self));
    }

    static boost::asio::mutable_buffer FirstNonEmpty(const MutableBuffers& sequence) {
      for (auto it = boost::asio::buffer_sequence_begin(sequence);
           it != boost::asio::buffer_sequence_end(sequence); ++it) {
        boost::asio::mutable_buffer buffer(*it);
        if (buffer.size() > 0) return buffer;
      }
      return boost::asio::mutable_buffer();
    }
  };

  template <class ConstBuffers>
  struct TlsWriteOp {
    TlsWriteOp(HttpTransport* t, const ConstBuffers& b) : transport(t), buffers(b) {}

    HttpTransport* transport;
    ConstBuffers buffers;
    Step step = Step::kStart;
    Outcome outcome;
    std::unique_ptr<std::string> out;

    template <class Self>
    void operator()(Self& self, ErrorCode ec = {}, size_t bytes = 0) {
      TlsConnection& tls = *transport->tls_;
      switch (step) {
        case Step::kAfterSocketRead:
          if (ec) return self.complete(ec, 0);
          if (bytes == 0) return self.complete(boost::asio::error::eof, 0);
          tls.Feed(transport->tls_input_.data(), bytes);
          break;
        case Step::kAfterSocketWrite:
          out.reset();
          if (ec) return self.complete(ec, 0);
          if (outcome.finished) return self.complete(outcome.error, outcome.bytes);
          break;
        case Step::kDeliver:
          return self.complete(outcome.error, outcome.bytes);
        case Step::kStart:
          break;
      }
      bool want_read = false;
      for (auto it = boost::asio::buffer_sequence_begin(buffers);
           it != boost::asio::buffer_sequence_end(buffers) && outcome.bytes < kMaxTlsWriteBytes &&
           !want_read && !outcome.finished;
           ++it) {
        boost::asio::const_buffer buffer(*it);
        const size_t size = std::min(buffer.size(), kMaxTlsWriteBytes - outcome.bytes);
        if (size == 0) continue;
        switch (tls.Write(static_cast<const char*>(buffer.data()), size)) {
          case TlsConnection::Result::kDone:
            outcome.bytes += size;
            break;
          case TlsConnection::Result::kWantRead:
            want_read = true;
            break;
          case TlsConnection::Result::kClosed:
            outcome = {true, boost::asio::error::eof, 0};
            break;
          case TlsConnection::Result::kFailed:
            outcome = {true, TlsFailure(), 0};
            break;
        }
      }
      // Written what fits (or everything, or nothing was asked): deliver
      // once the records are sent. Otherwise the handshake needs the peer.
      if (!want_read || outcome.bytes > 0) outcome.finished = true;
      if (transport->SendOutput(self, out, step)) return;
      if (outcome.finished) {
        step = Step::kDeliver;
        return boost::asio::post(std::move(self));
      }
      step = Step::kAfterSocketRead;
      transport->tcp_.async_read_some(boost::asio::buffer(transport->tls_input_), std::move(self));
    }
  };

  boost::beast::tcp_stream tcp_;
  std::unique_ptr<TlsConnection> tls_;
  // Socket bytes on their way into TLS (one socket read at a time).
  std::vector<char> tls_input_;
};

}  // namespace strata::server::internal
