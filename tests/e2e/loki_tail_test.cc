// GET /loki/api/v1/tail against a running `strata serve`, with a real
// WebSocket client (Boost.Beast's): records exported over OTLP/HTTP after
// the tail opened arrive filtered and in order, /metrics counts the open
// tail and the records it sent, and SIGTERM closes the tail with 1001
// while the process still drains and exits cleanly.

#include <chrono>
#include <csignal>
#include <string>
#include <thread>

#include "e2e/metrics_page.h"
#include "e2e/server_process.h"
#include "gtest/gtest.h"
#include "server/testing/websocket_client.h"

namespace strata::testing {
namespace {

using server::testing::WebSocketClient;
constexpr auto kWait = std::chrono::milliseconds(30'000);

uint16_t PortOf(const std::string& address) {
  return static_cast<uint16_t>(std::stoi(address.substr(address.rfind(':') + 1)));
}

std::string LogsJson(const std::string& body) {
  const int64_t now = std::chrono::duration_cast<std::chrono::nanoseconds>(
                          std::chrono::system_clock::now().time_since_epoch())
                          .count();
  return R"({"resourceLogs":[{"resource":{"attributes":[{"key":"service.name","value":)"
         R"({"stringValue":"e2e-tail"}}]},"scopeLogs":[{"logRecords":[{"timeUnixNano":")" +
         std::to_string(now) + R"(","body":{"stringValue":")" + body + R"("}}]}]}]})";
}

TEST(LokiTailE2eTest, ExportedRecordsArriveFilteredAndSigtermClosesTheTail) {
  TempDir dir("e2e-loki-tail");
  const std::string data = dir.path() + "/data";
  ServerProcess server(data, {});
  ASSERT_TRUE(server.ready()) << server.output();
  const std::string reader = CreateToken(data, "reader", "read");
  ASSERT_FALSE(reader.empty());
  // %7Bservice_name%3D%22e2e-tail%22%7D%20%7C%3D%20%22keep%22
  const std::string target =
      "/loki/api/v1/tail?query=%7Bservice_name%3D%22e2e-tail%22%7D%20%7C%3D%20%22keep%22";
  const WebSocketClient::Headers auth = {{"Authorization", "Bearer " + reader}};
  // The read token is accepted once the server reloads tokens (1 s).
  std::unique_ptr<WebSocketClient> client;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (std::chrono::steady_clock::now() < deadline) {
    client = std::make_unique<WebSocketClient>(PortOf(server.api_address()), target, auth, kWait);
    if (client->status() != 401) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  ASSERT_TRUE(client->ok()) << client->status() << " " << client->body();

  for (const std::string body : {"keep-1", "drop-2", "keep-3"}) {
    auto [status, answer] = Curl({"-H", "Authorization: Bearer " + server.first_token(), "-H",
                                  "Content-Type: application/json", "--data-binary", LogsJson(body),
                                  "http://" + server.http_address() + "/v1/logs"});
    ASSERT_EQ(status, 200) << answer;
  }
  std::string received;
  while (received.find("keep-3") == std::string::npos) {
    std::optional<std::string> message = client->Read(kWait);
    ASSERT_TRUE(message.has_value()) << received;
    received += *message;
  }
  EXPECT_NE(received.find(R"("service_name":"e2e-tail")"), std::string::npos) << received;
  EXPECT_LT(received.find("keep-1"), received.find("keep-3")) << received;
  EXPECT_EQ(received.find("drop-2"), std::string::npos) << received;
  // The tail thread counts a message once it handed it over, which may be
  // after the client read it.
  std::string page;
  EXPECT_TRUE(WaitForMetrics(server, [&](const std::string& p) {
    page = p;
    return MetricSample(p, R"(strata_log_tail_records_sent_total{api="loki"})") == 2;
  })) << page;
  EXPECT_EQ(MetricSample(page, R"(strata_log_tails{api="loki"})"), 1) << page;
  EXPECT_EQ(MetricSample(page, R"(strata_log_tails{api="strata"})"), 0) << page;
  EXPECT_EQ(MetricSample(page, R"(strata_log_tail_records_dropped_total{api="loki"})"), 0) << page;

  server.Signal(SIGTERM);
  EXPECT_FALSE(client->Read(kWait).has_value());
  EXPECT_TRUE(client->closed());
  EXPECT_EQ(client->close_code(), 1001) << client->close_reason();
  EXPECT_EQ(server.Stop(std::chrono::seconds(30)), 0) << server.output();
}

}  // namespace
}  // namespace strata::testing
