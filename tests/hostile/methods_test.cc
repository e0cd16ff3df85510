// Wrong methods against a real `strata serve`: every 405 of the API
// listener and of the OTLP/HTTP listener lists in Allow exactly the methods
// its path accepts, so a client told to use one of them is never refused
// again with 405.

#include <string>
#include <vector>

#include "e2e/server_process.h"
#include "fmt/format.h"
#include "gtest/gtest.h"
#include "server/testing/raw_connection.h"

namespace strata::testing {
namespace {

using server::testing::HttpAnswer;
using server::testing::RawConnection;

constexpr auto kWait = std::chrono::seconds(30);

// One request without a body on a fresh connection; nullopt when no answer
// came.
std::optional<HttpAnswer> Ask(const std::string& address, const std::string& method,
                              const std::string& path) {
  RawConnection connection(address);
  if (!connection.connected()) return std::nullopt;
  if (!connection.Send(fmt::format(
          "{} {} HTTP/1.1\r\nHost: strata\r\nContent-Length: 0\r\nConnection: close\r\n\r\n",
          method, path))) {
    return std::nullopt;
  }
  return connection.ReadAnswer(kWait);
}

struct PathMethods {
  std::string path;
  std::string allowed;  // the one method it takes
};

// Sends every method but `allowed` to `path` and checks each 405's Allow.
void ExpectExactAllow(const std::string& address, const PathMethods& route) {
  for (const char* method : {"GET", "POST", "PUT", "DELETE", "OPTIONS", "PATCH"}) {
    if (route.allowed == method) continue;
    std::optional<HttpAnswer> answer = Ask(address, method, route.path);
    ASSERT_TRUE(answer.has_value()) << method << " " << route.path;
    EXPECT_EQ(answer->status, 405) << method << " " << route.path << ": " << answer->body;
    EXPECT_EQ(answer->Header("allow"), route.allowed) << method << " " << route.path;
  }
}

TEST(MethodsTest, ApiListener405sAllowExactlyTheMethodsThePathTakes) {
  TempDir dir("hostile-methods");
  ServerProcess server(dir.path() + "/data");
  ASSERT_TRUE(server.ready()) << server.output();
  const std::vector<PathMethods> routes = {
      {"/api/v1/traces", "GET"},
      {"/api/v1/traces/0123456789abcdef0123456789abcdef", "GET"},
      {"/api/v1/logs", "GET"},
      {"/api/v1/metrics/names", "GET"},
      {"/api/v1/metrics/query", "GET"},
      {"/api/v1/services", "GET"},
      {"/api/v1/services/checkout/operations", "GET"},
      {"/api/v1/services/checkout/endpoints", "GET"},
      {"/api/v1/red", "GET"},
      {"/api/v1/service-map", "GET"},
      {"/api/v1/sql", "POST"},
      {"/healthz", "GET"},
      {"/readyz", "GET"},
      {"/metrics", "GET"},
  };
  for (const PathMethods& route : routes) {
    ASSERT_NO_FATAL_FAILURE(ExpectExactAllow(server.api_address(), route));
  }
  // A path no route serves is 404 whatever the method.
  std::optional<HttpAnswer> unknown = Ask(server.api_address(), "DELETE", "/api/v1/nothing");
  ASSERT_TRUE(unknown.has_value());
  EXPECT_EQ(unknown->status, 404) << unknown->body;
  EXPECT_EQ(server.Stop(), 0) << server.output();
}

TEST(MethodsTest, OtlpHttpListener405sAllowOnlyPost) {
  TempDir dir("hostile-methods-otlp");
  ServerProcess server(dir.path() + "/data");
  ASSERT_TRUE(server.ready()) << server.output();
  for (const char* path : {"/v1/traces", "/v1/logs", "/v1/metrics"}) {
    ASSERT_NO_FATAL_FAILURE(ExpectExactAllow(server.http_address(), {path, "POST"}));
  }
  std::optional<HttpAnswer> unknown = Ask(server.http_address(), "PUT", "/v1/other");
  ASSERT_TRUE(unknown.has_value());
  EXPECT_EQ(unknown->status, 404) << unknown->body;
  EXPECT_EQ(server.Stop(), 0) << server.output();
}

}  // namespace
}  // namespace strata::testing
