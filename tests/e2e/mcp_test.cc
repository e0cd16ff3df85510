// The MCP server end to end: a real strata holding traffic from strata
// loadgen (traces, logs, metrics), driven by the official TypeScript SDK
// client (mcp_client.mjs) over Streamable HTTP at /mcp and over stdio
// through `strata mcp`; every tool's answer is checked there against the
// REST API's, outputs against the byte budget, and refused callers (no
// token, an ingest token, a revoked token).

#include <chrono>
#include <iostream>
#include <string>
#include <thread>

#include "cli/subprocess.h"
#include "e2e/server_process.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace strata::testing {
namespace {

using ::testing::HasSubstr;

// The body of a read-token GET, or "" when it is not 200.
std::string Read(const std::string& url, const std::string& token) {
  auto [status, body] = Curl({"-H", "Authorization: Bearer " + token, url});
  return status == 200 ? body : "";
}

TEST(McpTest, SdkClientDrivesBothTransportsAndAgreesWithTheRestApi) {
  TempDir dir("e2e-mcp");
  const std::string data = dir.path() + "/data";
  ServerProcess server(data);
  ASSERT_TRUE(server.ready()) << server.output();
  const std::string api = server.api_address();
  const std::string reader = CreateToken(data, "mcp-reader", "read");
  const std::string gone = CreateToken(data, "mcp-gone", "read");
  ASSERT_FALSE(reader.empty());
  ASSERT_FALSE(gone.empty());
  ASSERT_EQ(RunStrata({"token", "revoke", "--data-dir", data, "mcp-gone"}).first, 0);

  Subprocess loadgen({STRATA_BINARY, "loadgen", "--protocol", "http/protobuf", "--target",
                      server.http_address(), "--token", server.first_token(), "--signals",
                      "traces,logs,metrics", "--concurrency", "4", "--duration", "3", "--quiet"},
                     ChildEnvironment());
  ASSERT_EQ(loadgen.Wait(std::chrono::seconds(60)), 0) << loadgen.output();

  // Wait (60 s at most) until the read token is loaded and every signal is
  // queryable: services in the rollups, logs and metric names.
  const std::string base = "http://" + api + "/api/v1/";
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  bool ready = false;
  while (!ready && std::chrono::steady_clock::now() < deadline) {
    ready = Read(base + "services", reader).find("\"name\"") != std::string::npos &&
            Read(base + "logs?limit=1", reader).find("\"time_unix_nano\"") != std::string::npos &&
            Read(base + "metrics/names", reader).find("\"name\"") != std::string::npos;
    if (!ready) std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
  ASSERT_TRUE(ready) << server.output();

  Subprocess client({STRATA_NODE, std::string(STRATA_E2E_DIR) + "/mcp_client.mjs", STRATA_BINARY,
                     api, reader, server.first_token(), gone},
                    ChildEnvironment());
  const int code = client.Wait(std::chrono::seconds(180));
  EXPECT_EQ(code, 0) << client.output();
  std::cout << "mcp_client.mjs: " << client.output();
  EXPECT_THAT(client.output(), HasSubstr(R"("ok":true)")) << client.output();
  EXPECT_EQ(server.Stop(), 0) << server.output();
}

TEST(McpTest, GetStreamCarriesLogNotificationsAndResumesWithLastEventId) {
  TempDir dir("e2e-mcp-streams");
  const std::string data = dir.path() + "/data";
  ServerProcess server(data);
  ASSERT_TRUE(server.ready()) << server.output();
  const std::string reader = CreateToken(data, "mcp-streams", "read");
  const std::string other = CreateToken(data, "mcp-streams-other", "read");
  ASSERT_FALSE(reader.empty());
  ASSERT_FALSE(other.empty());
  // Wait (60 s at most) until the new tokens are loaded.
  const std::string services = "http://" + server.api_address() + "/api/v1/services";
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (Curl({"-H", "Authorization: Bearer " + other, services}).first != 200 &&
         std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
  Subprocess client({STRATA_NODE, std::string(STRATA_E2E_DIR) + "/mcp_streams.mjs",
                     server.api_address(), reader, other},
                    ChildEnvironment());
  EXPECT_EQ(client.Wait(std::chrono::seconds(120)), 0) << client.output();
  std::cout << "mcp_streams.mjs: " << client.output();
  EXPECT_THAT(client.output(), HasSubstr(R"("ok":true)")) << client.output();
  // The drain ends the streams; it must not wait for them.
  EXPECT_EQ(server.Stop(), 0) << server.output();
}

}  // namespace
}  // namespace strata::testing
