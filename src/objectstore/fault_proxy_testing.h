#pragma once

// FaultProxy: a loopback HTTP proxy for tests that stands between an
// S3BatchStore and a real S3 server and misbehaves on purpose, one request
// at a time, as its plan says: answer with a given status and body without
// forwarding (503 SlowDown, 500, 400), forward only part of a request's
// body and then drop both connections (a server or network dying in the
// middle of an upload), forward the request but drop the answer, or
// forward normally. Requests are forwarded with `Connection: close` and
// each client connection carries one request, so every request meets the
// plan. Signatures still verify: the proxy changes no signed header (the
// Host header names the proxy, and the client signed that).
//
// Thread-safety: the constructor and destructor on one thread; requests()
// from any thread. Serves one connection at a time on its own thread.

#include <atomic>
#include <functional>
#include <string>
#include <thread>

namespace strata::objectstore {

class FaultProxy {
 public:
  enum class Action { kForward, kAnswer, kCutRequestBody, kDropAnswer };
  struct Plan {
    Action action = Action::kForward;
    int status = 0;    // kAnswer
    std::string body;  // kAnswer
  };
  // `plan(n)` decides the n-th request (0-based).
  FaultProxy(std::string upstream_host, int upstream_port, std::function<Plan(int)> plan);
  ~FaultProxy();
  FaultProxy(const FaultProxy&) = delete;
  FaultProxy& operator=(const FaultProxy&) = delete;

  int port() const { return port_; }
  std::string endpoint() const { return "http://127.0.0.1:" + std::to_string(port_); }
  // Requests seen so far (whatever the plan did with them).
  int requests() const { return requests_.load(); }

 private:
  void Serve();
  void Handle(int client);

  const std::string upstream_host_;
  const int upstream_port_;
  const std::function<Plan(int)> plan_;
  int listener_ = -1;
  int port_ = 0;
  std::atomic<bool> stop_{false};
  // Written by the serving thread, read by the test: atomic, no lock needed.
  std::atomic<int> requests_{0};
  std::thread thread_;
};

// "http://127.0.0.1:7480" -> host "127.0.0.1", port 7480.
bool SplitHttpEndpoint(const std::string& endpoint, std::string* host, int* port);

}  // namespace strata::objectstore
