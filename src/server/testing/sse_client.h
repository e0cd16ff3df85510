#pragma once

// Test-only: a blocking client for streamed HTTP answers (chunked
// transfer encoding) carrying Server-Sent Events, on a raw loopback TCP
// socket, so a test can stop reading, shrink its receive buffer, and wait
// for events with deadlines. Used by http_stream_test.cc and the live
// tail's tests. Single owner; header-only, no gtest.

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "server/testing/raw_connection.h"

namespace strata::server::testing {

struct SseEvent {
  std::string id;    // "" when the event had no id field
  std::string type;  // "message" when it had no event field
  std::string data;  // data lines joined with '\n'
};

class SseClient {
 public:
  using Clock = std::chrono::steady_clock;
  using Headers = std::vector<std::pair<std::string, std::string>>;

  // Connects to 127.0.0.1:`port` (with SO_RCVBUF `receive_buffer_bytes`
  // when > 0, set before connecting so the window stays small), sends
  // GET `target` with `headers`, and reads the answer's head within
  // `timeout`. ok() says whether all of that worked.
  SseClient(uint16_t port, const std::string& target, const Headers& headers,
            std::chrono::milliseconds timeout, int receive_buffer_bytes = 0) {
    fd_ = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd_ < 0) return;
    if (receive_buffer_bytes > 0) {
      setsockopt(fd_, SOL_SOCKET, SO_RCVBUF, &receive_buffer_bytes, sizeof(receive_buffer_bytes));
    }
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_port = htons(port);
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (connect(fd_, reinterpret_cast<sockaddr*>(&address), sizeof(address)) != 0) return;
    std::string request = "GET " + target + " HTTP/1.1\r\nHost: 127.0.0.1\r\n";
    for (const auto& [name, value] : headers) request += name + ": " + value + "\r\n";
    request += "\r\n";
    std::string_view left = request;
    while (!left.empty()) {
      const ssize_t n = send(fd_, left.data(), left.size(), MSG_NOSIGNAL);
      if (n <= 0) return;
      left.remove_prefix(static_cast<size_t>(n));
    }
    const Clock::time_point deadline = Clock::now() + timeout;
    for (;;) {
      const size_t end = raw_.find("\r\n\r\n");
      if (end != std::string::npos) {
        if (!ParseHead(std::string_view(raw_).substr(0, end), &head_)) return;
        raw_.erase(0, end + 4);
        chunked_ = Lowercase(head_.Header("transfer-encoding")) == "chunked";
        head_ok_ = true;
        return;
      }
      if (ReadSome(deadline) <= 0) return;
    }
  }
  ~SseClient() {
    if (fd_ >= 0) close(fd_);
  }
  SseClient(const SseClient&) = delete;
  SseClient& operator=(const SseClient&) = delete;

  bool ok() const { return head_ok_; }
  // Status and headers (the body is read with the calls below).
  const HttpAnswer& head() const { return head_; }

  // The body of an answer with Content-Length (an error), within `timeout`.
  std::string ReadWholeBody(std::chrono::milliseconds timeout) {
    const Clock::time_point deadline = Clock::now() + timeout;
    const size_t length = std::stoul("0" + head_.Header("content-length"));
    while (raw_.size() < length && ReadSome(deadline) > 0) {
    }
    return raw_.substr(0, length);
  }

  // The next event (comments are counted, not returned) within `timeout`;
  // nullopt on timeout, the end of the stream, or an error.
  std::optional<SseEvent> NextEvent(std::chrono::milliseconds timeout) {
    const Clock::time_point deadline = Clock::now() + timeout;
    for (;;) {
      Dechunk();
      if (std::optional<SseEvent> event = TakeEvent(); event.has_value()) return event;
      if (ended_) return std::nullopt;
      if (ReadSome(deadline) < 0 && error_ == ETIMEDOUT) return std::nullopt;
    }
  }

  // True when the stream ends (last chunk, or the connection closes)
  // within `timeout`; events that arrive first are kept for NextEvent().
  bool WaitEnd(std::chrono::milliseconds timeout) {
    const Clock::time_point deadline = Clock::now() + timeout;
    for (;;) {
      Dechunk();
      if (ended_) return true;
      if (ReadSome(deadline) < 0 && error_ == ETIMEDOUT) return false;
    }
  }

  // Comment lines (": ...") seen so far.
  int comments() const { return comments_; }
  // The last chunk arrived (a clean end).
  bool saw_last_chunk() const { return saw_last_chunk_; }

 private:
  // > 0 bytes appended to raw_, 0 end of stream, < 0 error (ETIMEDOUT past
  // the deadline).
  ssize_t ReadSome(Clock::time_point deadline) {
    for (;;) {
      const auto left =
          std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
      if (left.count() <= 0) {
        error_ = ETIMEDOUT;
        return -1;
      }
      pollfd p{fd_, POLLIN, 0};
      const int ready = poll(&p, 1, static_cast<int>(left.count()));
      if (ready <= 0) continue;
      char chunk[16384];
      const ssize_t n = recv(fd_, chunk, sizeof(chunk), 0);
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) {
        error_ = errno;
        ended_ = true;
        return -1;
      }
      if (n == 0) {
        ended_ = true;
        return 0;
      }
      raw_.append(chunk, static_cast<size_t>(n));
      return n;
    }
  }

  // Moves complete chunks from raw_ to body_.
  void Dechunk() {
    if (!chunked_) {
      body_ += raw_;
      raw_.clear();
      return;
    }
    for (;;) {
      const size_t line = raw_.find("\r\n");
      if (line == std::string::npos) return;
      const size_t size = std::stoul(raw_.substr(0, line), nullptr, 16);
      if (size == 0) {
        saw_last_chunk_ = true;
        ended_ = true;
        raw_.clear();
        return;
      }
      if (raw_.size() < line + 2 + size + 2) return;
      body_.append(raw_, line + 2, size);
      raw_.erase(0, line + 2 + size + 2);
    }
  }

  // The first complete event in body_, skipping comments.
  std::optional<SseEvent> TakeEvent() {
    for (;;) {
      const size_t end = body_.find("\n\n");
      if (end == std::string::npos) return std::nullopt;
      const std::string block = body_.substr(0, end);
      body_.erase(0, end + 2);
      SseEvent event;
      bool any = false;
      size_t start = 0;
      while (start <= block.size()) {
        size_t next = block.find('\n', start);
        if (next == std::string::npos) next = block.size();
        const std::string_view field(block.data() + start, next - start);
        start = next + 1;
        if (field.empty()) continue;
        if (field.front() == ':') {
          ++comments_;
          continue;
        }
        const size_t colon = field.find(':');
        const std::string_view name = field.substr(0, colon);
        std::string_view value =
            colon == std::string_view::npos ? std::string_view() : field.substr(colon + 1);
        if (!value.empty() && value.front() == ' ') value.remove_prefix(1);
        any = true;
        if (name == "id") event.id = std::string(value);
        if (name == "event") event.type = std::string(value);
        if (name == "data") event.data += (event.data.empty() ? "" : "\n") + std::string(value);
      }
      if (!any) continue;
      if (event.type.empty()) event.type = "message";
      return event;
    }
  }

  int fd_ = -1;
  int error_ = 0;
  bool head_ok_ = false;
  bool chunked_ = false;
  bool ended_ = false;
  bool saw_last_chunk_ = false;
  int comments_ = 0;
  HttpAnswer head_;
  std::string raw_;   // received, not yet de-chunked
  std::string body_;  // de-chunked, not yet parsed into events
};

}  // namespace strata::server::testing
