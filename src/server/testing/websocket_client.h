#pragma once

// Test-only: a blocking WebSocket client (Boost.Beast's, so the server's own
// frame code is checked against another implementation), with deadlines on
// every wait. Used by the Loki tail's tests (loki_tail_test.cc). Single
// owner; header-only, no gtest. Besides http_adapter.cc the one place Boost
// is included, and only by tests.

// As http_adapter.cc: Beast's templates must be instantiated alike in every
// file of a program (one definition rule).
#ifndef BOOST_BEAST_USE_STD_STRING_VIEW
#define BOOST_BEAST_USE_STD_STRING_VIEW 1
#endif

#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/websocket.hpp>
#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace strata::server::testing {

class WebSocketClient {
 public:
  using Headers = std::vector<std::pair<std::string, std::string>>;

  // Connects to 127.0.0.1:`port` and asks to upgrade GET `target` with
  // `headers`, within `timeout`. status() is the answer's HTTP status: 101
  // when the server accepted (ok()), else its refusal (0: no answer).
  // `receive_buffer_bytes` > 0 sets SO_RCVBUF before connecting, so a
  // client that does not read stalls the server soon.
  WebSocketClient(uint16_t port, const std::string& target, const Headers& headers,
                  std::chrono::milliseconds timeout, int receive_buffer_bytes = 0)
      : ws_(context_) {
    namespace beast = boost::beast;
    namespace websocket = beast::websocket;
    beast::error_code ec;
    beast::get_lowest_layer(ws_).expires_after(timeout);
    auto& socket = beast::get_lowest_layer(ws_).socket();
    socket.open(boost::asio::ip::tcp::v4(), ec);
    if (ec) return;
    if (receive_buffer_bytes > 0) {
      socket.set_option(boost::asio::socket_base::receive_buffer_size(receive_buffer_bytes), ec);
    }
    beast::get_lowest_layer(ws_).socket().connect(
        {boost::asio::ip::make_address("127.0.0.1"), port}, ec);
    if (ec) return;
    ws_.set_option(websocket::stream_base::decorator([headers](websocket::request_type& request) {
      for (const auto& [name, value] : headers) request.set(name, value);
    }));
    websocket::response_type response;
    bool done = false;
    ws_.async_handshake(response, "127.0.0.1:" + std::to_string(port), target,
                        [&](beast::error_code e) {
                          ec = e;
                          done = true;
                        });
    context_.run_for(timeout);
    if (!done) {
      Abort();
      return;
    }
    status_ = response.result_int();
    body_ = response.body();
    if (ec) return;
    beast::get_lowest_layer(ws_).expires_never();
    ws_.read_message_max(64 << 20);
  }

  bool ok() const { return status_ == 101 && !broken_; }
  int status() const { return status_; }
  const std::string& body() const { return body_; }

  // The next message within `timeout`; nullopt when none came, the server
  // closed (closed() and close_code() say so) or the connection failed.
  std::optional<std::string> Read(std::chrono::milliseconds timeout) {
    namespace beast = boost::beast;
    if (!ok() || closed_) return std::nullopt;
    beast::flat_buffer buffer;
    beast::error_code ec;
    bool done = false;
    ws_.async_read(buffer, [&](beast::error_code e, size_t) {
      ec = e;
      done = true;
    });
    context_.restart();
    context_.run_for(timeout);
    if (!done) {
      Abort();
      return std::nullopt;
    }
    if (ec == beast::websocket::error::closed) {
      closed_ = true;
      close_code_ = ws_.reason().code;
      close_reason_ = std::string(ws_.reason().reason.c_str());
      return std::nullopt;
    }
    if (ec) {
      broken_ = true;
      return std::nullopt;
    }
    return beast::buffers_to_string(buffer.data());
  }

  // Sends `text` as one message within `timeout`.
  bool Write(const std::string& text, std::chrono::milliseconds timeout) {
    namespace beast = boost::beast;
    if (!ok() || closed_) return false;
    beast::error_code ec;
    bool done = false;
    ws_.async_write(boost::asio::buffer(text), [&](beast::error_code e, size_t) {
      ec = e;
      done = true;
    });
    context_.restart();
    context_.run_for(timeout);
    if (!done) {
      Abort();
      return false;
    }
    return !ec;
  }

  // Sends a close (1000) and waits for the server's within `timeout`.
  bool Close(std::chrono::milliseconds timeout) {
    namespace beast = boost::beast;
    if (!ok() || closed_) return false;
    beast::error_code ec;
    bool done = false;
    ws_.async_close(beast::websocket::close_code::normal, [&](beast::error_code e) {
      ec = e;
      done = true;
    });
    context_.restart();
    context_.run_for(timeout);
    if (!done) {
      Abort();
      return false;
    }
    closed_ = true;
    return !ec;
  }

  // Whether the server closed the WebSocket, and with what.
  bool closed() const { return closed_; }
  uint16_t close_code() const { return close_code_; }
  const std::string& close_reason() const { return close_reason_; }
  // The connection failed or a wait timed out.
  bool broken() const { return broken_; }

 private:
  void Abort() {
    broken_ = true;
    boost::beast::get_lowest_layer(ws_).close();
    context_.restart();
    context_.run();
  }

  boost::asio::io_context context_;
  boost::beast::websocket::stream<boost::beast::tcp_stream> ws_;
  int status_ = 0;
  std::string body_;
  bool closed_ = false;
  bool broken_ = false;
  uint16_t close_code_ = 0;
  std::string close_reason_;
};

}  // namespace strata::server::testing
