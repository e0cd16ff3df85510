#pragma once

// A running server's /metrics page for end-to-end tests: one unlabelled
// sample of it, and polling until a condition holds.

#include <chrono>
#include <functional>
#include <sstream>
#include <string>
#include <thread>

#include "e2e/server_process.h"

namespace strata::testing {

// The value of an unlabelled sample in a /metrics page, or -1.
inline double MetricSample(const std::string& page, const std::string& name) {
  std::istringstream lines(page);
  std::string line;
  while (std::getline(lines, line)) {
    if (line.starts_with(name + " ")) return std::stod(line.substr(name.size() + 1));
  }
  return -1;
}

// The server's /metrics page, or "" when it does not answer 200.
inline std::string MetricsPage(const ServerProcess& server) {
  auto [status, page] = Curl({"http://" + server.api_address() + "/metrics"});
  return status == 200 ? page : "";
}

// Polls /metrics until `done` holds for it, for at most `limit`.
inline bool WaitForMetrics(const ServerProcess& server,
                           const std::function<bool(const std::string&)>& done,
                           std::chrono::seconds limit = std::chrono::seconds(30)) {
  const auto deadline = std::chrono::steady_clock::now() + limit;
  while (std::chrono::steady_clock::now() < deadline) {
    if (done(MetricsPage(server))) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return false;
}

}  // namespace strata::testing
