#pragma once

// Test-only: a blocking HTTP/1.1 client on a raw TCP socket, so a test can
// send exactly the bytes it wants (a header, half a body), hold the
// connection open, stall, and read answers with a deadline, including one
// that arrives after the server closed or exited; and the parser of an
// answer's head it shares with the curl helper (http_testing.h). Used by
// the server's and the API's unit tests and by tests/hostile/. Single
// owner; header-only, no gtest.

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <charconv>
#include <chrono>
#include <map>
#include <optional>
#include <string>
#include <string_view>

namespace strata::server::testing {

// One HTTP answer: status, headers (names lowercased), body.
struct HttpAnswer {
  int status = 0;
  std::map<std::string, std::string> headers;
  std::string body;

  std::string Header(const std::string& lowercase_name) const {
    auto it = headers.find(lowercase_name);
    return it == headers.end() ? std::string() : it->second;
  }
};

inline std::string Lowercase(std::string s) {
  for (char& c : s) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  }
  return s;
}

// Parses "HTTP/1.1 200 OK\r\nName: value\r\n..." (the head, without the blank
// line) into `answer`. False when it is not an HTTP status line.
inline bool ParseHead(std::string_view head, HttpAnswer* answer) {
  if (head.substr(0, 5) != "HTTP/" || head.size() < 12) return false;
  const size_t space = head.find(' ');
  if (space == std::string_view::npos) return false;
  int status = 0;
  auto [end, ec] = std::from_chars(head.data() + space + 1, head.data() + head.size(), status);
  if (ec != std::errc()) return false;
  answer->status = status;
  answer->headers.clear();
  size_t line = head.find("\r\n");
  while (line != std::string_view::npos) {
    const size_t next = head.find("\r\n", line + 2);
    std::string_view field = head.substr(
        line + 2, next == std::string_view::npos ? std::string_view::npos : next - line - 2);
    const size_t colon = field.find(':');
    if (colon != std::string_view::npos) {
      std::string_view value = field.substr(colon + 1);
      while (!value.empty() && value.front() == ' ') value.remove_prefix(1);
      answer->headers[Lowercase(std::string(field.substr(0, colon)))] = std::string(value);
    }
    line = next;
  }
  return true;
}

// A blocking TCP client with deadlines on every wait.
class RawConnection {
 public:
  // Connects to 127.0.0.1:`port`; connected() says whether it worked and
  // error() holds the errno when not.
  explicit RawConnection(uint16_t port) { Connect(port); }
  // The same for "127.0.0.1:<port>", the form a server's log reports.
  explicit RawConnection(std::string_view loopback_address) {
    const size_t colon = loopback_address.rfind(':');
    uint16_t port = 0;
    const std::string_view digits =
        colon == std::string_view::npos ? std::string_view() : loopback_address.substr(colon + 1);
    if (std::from_chars(digits.data(), digits.data() + digits.size(), port).ec != std::errc()) {
      error_ = EINVAL;
      return;
    }
    Connect(port);
  }
  ~RawConnection() {
    if (fd_ >= 0) close(fd_);
  }
  RawConnection(const RawConnection&) = delete;
  RawConnection& operator=(const RawConnection&) = delete;

  bool connected() const { return fd_ >= 0; }
  int error() const { return error_; }

  bool Send(std::string_view data) {
    while (!data.empty()) {
      const ssize_t n = send(fd_, data.data(), data.size(), MSG_NOSIGNAL);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) return false;
      data.remove_prefix(static_cast<size_t>(n));
    }
    return true;
  }

  // Reads one answer (which must carry Content-Length) within `timeout`;
  // nullopt on timeout, close or error.
  std::optional<HttpAnswer> ReadAnswer(std::chrono::milliseconds timeout) {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    for (;;) {
      const size_t end = buffer_.find("\r\n\r\n");
      if (end != std::string::npos) {
        HttpAnswer answer;
        if (!ParseHead(std::string_view(buffer_).substr(0, end), &answer)) return std::nullopt;
        const size_t length = std::stoul("0" + answer.Header("content-length"));
        if (buffer_.size() >= end + 4 + length) {
          answer.body = buffer_.substr(end + 4, length);
          buffer_.erase(0, end + 4 + length);
          return answer;
        }
      }
      if (ReadSome(deadline) <= 0) return std::nullopt;
    }
  }

  // True when the server closed the connection (end of stream or reset)
  // within `timeout`; data that arrives first is discarded.
  bool WaitClosed(std::chrono::milliseconds timeout) {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    for (;;) {
      const ssize_t n = ReadSome(deadline);
      if (n == 0) return true;
      if (n < 0) return error_ != ETIMEDOUT;
      buffer_.clear();
    }
  }

  // True when nothing says the server closed the connection yet (checked
  // without waiting).
  bool LooksOpen() {
    pollfd p{fd_, POLLIN, 0};
    if (poll(&p, 1, 0) == 0) return true;
    char c;
    const ssize_t n = recv(fd_, &c, 1, MSG_PEEK | MSG_DONTWAIT);
    return n > 0 || (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK));
  }

 private:
  void Connect(uint16_t port) {
    fd_ = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd_ < 0) {
      error_ = errno;
      return;
    }
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_port = htons(port);
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (connect(fd_, reinterpret_cast<sockaddr*>(&address), sizeof(address)) != 0) {
      error_ = errno;
      close(fd_);
      fd_ = -1;
    }
  }

  // > 0 bytes appended, 0 end of stream, < 0 error (error_ set; ETIMEDOUT
  // past the deadline).
  ssize_t ReadSome(std::chrono::steady_clock::time_point deadline) {
    for (;;) {
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
          deadline - std::chrono::steady_clock::now());
      if (left.count() <= 0) {
        error_ = ETIMEDOUT;
        return -1;
      }
      pollfd p{fd_, POLLIN, 0};
      const int ready = poll(&p, 1, static_cast<int>(left.count()));
      if (ready < 0 && errno == EINTR) continue;
      if (ready == 0) continue;
      char chunk[16384];
      const ssize_t n = recv(fd_, chunk, sizeof(chunk), 0);
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) {
        error_ = errno;
        return -1;
      }
      buffer_.append(chunk, static_cast<size_t>(n));
      return n;
    }
  }

  int fd_ = -1;
  int error_ = 0;
  std::string buffer_;
};

}  // namespace strata::server::testing
