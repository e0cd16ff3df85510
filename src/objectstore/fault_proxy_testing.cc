#include "objectstore/fault_proxy_testing.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstring>

#include "absl/strings/ascii.h"
#include "fmt/format.h"

namespace strata::objectstore {
namespace {

void SetTimeouts(int fd) {
  timeval tv{10, 0};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
  setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
}

bool SendAll(int fd, std::string_view data) {
  while (!data.empty()) {
    ssize_t n = send(fd, data.data(), data.size(), MSG_NOSIGNAL);
    if (n <= 0) return false;
    data.remove_prefix(static_cast<size_t>(n));
  }
  return true;
}

// Reads one HTTP request (headers, then Content-Length bytes of body).
bool ReadRequest(int fd, std::string* head, std::string* body) {
  std::string data;
  char buffer[65536];
  size_t header_end;
  while ((header_end = data.find("\r\n\r\n")) == std::string::npos) {
    ssize_t n = recv(fd, buffer, sizeof(buffer), 0);
    if (n <= 0 || data.size() > (1 << 20)) return false;
    data.append(buffer, static_cast<size_t>(n));
  }
  *head = data.substr(0, header_end + 4);
  std::string lower = absl::AsciiStrToLower(*head);
  size_t length = 0;
  size_t at = lower.find("\r\ncontent-length:");
  if (at != std::string::npos) length = std::stoul(lower.substr(at + 17));
  *body = data.substr(header_end + 4);
  while (body->size() < length) {
    ssize_t n = recv(fd, buffer, sizeof(buffer), 0);
    if (n <= 0) return false;
    body->append(buffer, static_cast<size_t>(n));
  }
  return true;
}

int ConnectTo(const std::string& host, int port) {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(static_cast<uint16_t>(port));
  inet_pton(AF_INET, host.c_str(), &address.sin_addr);
  if (connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address)) != 0) {
    close(fd);
    return -1;
  }
  SetTimeouts(fd);
  return fd;
}

// The request's head with `Connection: close` added after the request line.
std::string WithConnectionClose(const std::string& head) {
  size_t line_end = head.find("\r\n");
  return head.substr(0, line_end + 2) + "Connection: close\r\n" + head.substr(line_end + 2);
}

}  // namespace

bool SplitHttpEndpoint(const std::string& endpoint, std::string* host, int* port) {
  if (endpoint.rfind("http://", 0) != 0) return false;
  std::string rest = endpoint.substr(7);
  size_t colon = rest.rfind(':');
  if (colon == std::string::npos) return false;
  *host = rest.substr(0, colon);
  *port = std::stoi(rest.substr(colon + 1));
  return true;
}

FaultProxy::FaultProxy(std::string upstream_host, int upstream_port, std::function<Plan(int)> plan)
    : upstream_host_(std::move(upstream_host)),
      upstream_port_(upstream_port),
      plan_(std::move(plan)) {
  listener_ = socket(AF_INET, SOCK_STREAM, 0);
  int one = 1;
  setsockopt(listener_, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  bind(listener_, reinterpret_cast<sockaddr*>(&address), sizeof(address));
  listen(listener_, 16);
  socklen_t length = sizeof(address);
  getsockname(listener_, reinterpret_cast<sockaddr*>(&address), &length);
  port_ = ntohs(address.sin_port);
  thread_ = std::thread([this] { Serve(); });
}

FaultProxy::~FaultProxy() {
  stop_ = true;
  thread_.join();
  close(listener_);
}

void FaultProxy::Serve() {
  while (!stop_) {
    pollfd poll_fd{listener_, POLLIN, 0};
    if (poll(&poll_fd, 1, 50) <= 0) continue;
    int client = accept(listener_, nullptr, nullptr);
    if (client < 0) continue;
    SetTimeouts(client);
    Handle(client);
    close(client);
  }
}

void FaultProxy::Handle(int client) {
  std::string head, body;
  if (!ReadRequest(client, &head, &body)) return;
  Plan plan = plan_(requests_++);
  if (plan.action == Action::kAnswer) {
    SendAll(client, fmt::format("HTTP/1.1 {} Fault\r\nContent-Type: application/xml\r\n"
                                "Content-Length: {}\r\nConnection: close\r\n\r\n{}",
                                plan.status, plan.body.size(), plan.body));
    return;
  }
  int upstream = ConnectTo(upstream_host_, upstream_port_);
  if (upstream < 0) return;
  std::string request = WithConnectionClose(head);
  if (plan.action == Action::kCutRequestBody) {
    // Half the body, then both connections die without an answer.
    SendAll(upstream, request + body.substr(0, body.size() / 2));
    shutdown(upstream, SHUT_RDWR);
    close(upstream);
    return;
  }
  SendAll(upstream, request + body);
  std::string answer;
  char buffer[65536];
  ssize_t n;
  while ((n = recv(upstream, buffer, sizeof(buffer), 0)) > 0) answer.append(buffer, n);
  close(upstream);
  if (plan.action == Action::kDropAnswer) return;
  SendAll(client, answer);
}

}  // namespace strata::objectstore
