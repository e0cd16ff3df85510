#pragma once

// Test helper for the hostile suite: a blocking HTTP/1.1 client on a raw TCP
// socket, so a test can send exactly the bytes it wants (a header, half a
// body), hold the connection open, and read the answer with a deadline,
// including one that arrives after the server process exited. Single owner.

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <chrono>
#include <map>
#include <optional>
#include <string>
#include <string_view>

namespace strata::testing {

// One HTTP answer: status, header fields (names lowercased), body.
struct RawAnswer {
  int status = 0;
  std::map<std::string, std::string> headers;
  std::string body;

  std::string Header(const std::string& lowercase_name) const {
    auto it = headers.find(lowercase_name);
    return it == headers.end() ? std::string() : it->second;
  }
};

class RawHttpConnection {
 public:
  // Connects to "127.0.0.1:<port>" (the form ServerProcess reports);
  // connected() says whether it worked.
  explicit RawHttpConnection(const std::string& address) {
    const size_t colon = address.rfind(':');
    if (colon == std::string::npos) return;
    sockaddr_in to{};
    to.sin_family = AF_INET;
    to.sin_port = htons(static_cast<uint16_t>(std::stoi(address.substr(colon + 1))));
    if (inet_pton(AF_INET, address.substr(0, colon).c_str(), &to.sin_addr) != 1) return;
    fd_ = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd_ >= 0 && connect(fd_, reinterpret_cast<sockaddr*>(&to), sizeof(to)) != 0) {
      close(fd_);
      fd_ = -1;
    }
  }
  ~RawHttpConnection() {
    if (fd_ >= 0) close(fd_);
  }
  RawHttpConnection(const RawHttpConnection&) = delete;
  RawHttpConnection& operator=(const RawHttpConnection&) = delete;

  bool connected() const { return fd_ >= 0; }

  bool Send(std::string_view data) {
    while (!data.empty()) {
      const ssize_t n = send(fd_, data.data(), data.size(), MSG_NOSIGNAL);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) return false;
      data.remove_prefix(static_cast<size_t>(n));
    }
    return true;
  }

  // Reads one answer head and its Content-Length body within `timeout`.
  // Interim 1xx answers are returned too (a caller waiting for 100 Continue
  // wants it). nullopt on timeout, end of stream or error before a whole
  // answer arrived.
  std::optional<RawAnswer> ReadAnswer(std::chrono::milliseconds timeout) {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    for (;;) {
      const size_t end = buffer_.find("\r\n\r\n");
      if (end != std::string::npos) {
        RawAnswer answer;
        if (!ParseHead(std::string_view(buffer_).substr(0, end), &answer)) return std::nullopt;
        const std::string length_text = answer.Header("content-length");
        const size_t length = length_text.empty() ? 0 : std::stoul(length_text);
        if (buffer_.size() >= end + 4 + length) {
          answer.body = buffer_.substr(end + 4, length);
          buffer_.erase(0, end + 4 + length);
          return answer;
        }
      }
      if (!ReadSome(deadline)) return std::nullopt;
    }
  }

 private:
  static bool ParseHead(std::string_view head, RawAnswer* answer) {
    if (head.substr(0, 5) != "HTTP/") return false;
    const size_t space = head.find(' ');
    if (space == std::string_view::npos || head.size() < space + 4) return false;
    answer->status = std::stoi(std::string(head.substr(space + 1, 3)));
    size_t line = head.find("\r\n");
    while (line != std::string_view::npos) {
      const size_t next = head.find("\r\n", line + 2);
      const std::string_view field = head.substr(
          line + 2, next == std::string_view::npos ? std::string_view::npos : next - line - 2);
      const size_t colon = field.find(':');
      if (colon != std::string_view::npos) {
        std::string name(field.substr(0, colon));
        for (char& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
        std::string_view value = field.substr(colon + 1);
        while (!value.empty() && value.front() == ' ') value.remove_prefix(1);
        answer->headers[name] = std::string(value);
      }
      line = next;
    }
    return true;
  }

  // Appends what arrives before `deadline`; false on timeout, end of
  // stream or error.
  bool ReadSome(std::chrono::steady_clock::time_point deadline) {
    for (;;) {
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
          deadline - std::chrono::steady_clock::now());
      if (left.count() <= 0) return false;
      pollfd p{fd_, POLLIN, 0};
      const int ready = poll(&p, 1, static_cast<int>(left.count()));
      if (ready < 0 && errno != EINTR) return false;
      if (ready <= 0) continue;
      char chunk[16384];
      const ssize_t n = recv(fd_, chunk, sizeof(chunk), 0);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) return false;
      buffer_.append(chunk, static_cast<size_t>(n));
      return true;
    }
  }

  int fd_ = -1;
  std::string buffer_;
};

}  // namespace strata::testing
