// The MCP server's OAuth 2.1 flow against a real strata (docs/mcp.md,
// "Authorization"): the first admin is set up through the API, and
// mcp_oauth_flow.mjs drives discovery, registration, consent with that
// session, the PKCE code exchange, /mcp with the access token and refresh
// rotation, with every refusal the flow must give. Two servers on one
// PostgreSQL control store (--catalog) share it: mcp_oauth_cluster.mjs
// registers on one, consents and uses the token on the other.

#include <chrono>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <regex>
#include <string>

#include "cli/subprocess.h"
#include "e2e/server_process.h"
#include "fmt/format.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "postgres/postgres_testing.h"

namespace strata::testing {
namespace {

using ::testing::HasSubstr;

// Sets up the first admin through `server`'s API; returns the session
// cookie's value ("" after a test failure).
std::string SetUpAdmin(const ServerProcess& server, const std::string& headers) {
  auto [status, body] = Curl(
      {"-D", headers, "-X", "POST", "-H", "X-Strata-Request: 1", "-H",
       "Content-Type: application/json", "--data-binary",
       fmt::format(R"({{"token":"{}","email":"ops@example.com","name":"Ops","password":"{}"}})",
                   server.setup_token(), "correct horse battery"),
       "http://" + server.api_address() + "/api/v1/auth/setup"});
  EXPECT_EQ(status, 201) << body;
  std::ifstream in(headers);
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::smatch match;
  EXPECT_TRUE(std::regex_search(text, match, std::regex("strata_session=([0-9a-z]+)"))) << text;
  return match.empty() ? "" : match[1].str();
}

TEST(McpOAuthTest, TheFlowWorksWithPkceAndRefusesWhatItMust) {
  TempDir dir("e2e-mcp-oauth");
  ServerProcess server(dir.path() + "/data");
  ASSERT_TRUE(server.ready()) << server.output();
  ASSERT_FALSE(server.setup_token().empty()) << server.output();
  const std::string cookie = SetUpAdmin(server, dir.path() + "/headers.txt");
  ASSERT_FALSE(cookie.empty());

  Subprocess flow({STRATA_NODE, std::string(STRATA_E2E_DIR) + "/mcp_oauth_flow.mjs",
                   server.api_address(), cookie, server.first_token()},
                  ChildEnvironment());
  const int code = flow.Wait(std::chrono::seconds(120));
  std::cout << "mcp_oauth_flow.mjs: " << flow.output();
  EXPECT_EQ(code, 0) << flow.output();
  EXPECT_THAT(flow.output(), HasSubstr(R"("ok":true)"));
  EXPECT_EQ(server.Stop(), 0) << server.output();
}

TEST(McpOAuthTest, TwoServersOnOneControlStoreShareClientsCodesAndGrants) {
  if (!postgres::testing::PostgresServer::BinariesPresent()) {
    GTEST_SKIP() << "PostgreSQL 15 is not installed; scripts/setup.sh --tests installs it";
  }
  std::string error;
  const std::string url = postgres::testing::PostgresServer::Get().NewDatabase(&error);
  ASSERT_FALSE(url.empty()) << error;
  TempDir dir("e2e-mcp-oauth-cluster");
  const std::string store = dir.path() + "/store";
  std::filesystem::create_directories(store);
  auto flags = [&](const std::string& node) {
    return std::vector<std::string>{
        "--object-store", "file://" + store, "--catalog", url, "--node-id", node};
  };
  ServerProcess one(dir.path() + "/one", flags("01"));
  ASSERT_TRUE(one.ready()) << one.output();
  ASSERT_FALSE(one.setup_token().empty()) << one.output();
  ServerProcess two(dir.path() + "/two", flags("02"));
  ASSERT_TRUE(two.ready()) << two.output();
  const std::string cookie = SetUpAdmin(one, dir.path() + "/headers.txt");
  ASSERT_FALSE(cookie.empty());

  Subprocess flow({STRATA_NODE, std::string(STRATA_E2E_DIR) + "/mcp_oauth_cluster.mjs",
                   one.api_address(), two.api_address(), cookie},
                  ChildEnvironment());
  const int code = flow.Wait(std::chrono::seconds(120));
  std::cout << "mcp_oauth_cluster.mjs: " << flow.output();
  EXPECT_EQ(code, 0) << flow.output();
  EXPECT_THAT(flow.output(), HasSubstr(R"("ok":true)"));
  EXPECT_EQ(one.Stop(), 0) << one.output();
  EXPECT_EQ(two.Stop(), 0) << two.output();
}

}  // namespace
}  // namespace strata::testing
