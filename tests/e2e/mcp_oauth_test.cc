// The MCP server's OAuth 2.1 flow against a real strata (docs/mcp.md,
// "Authorization"): the first admin is set up through the API, and
// mcp_oauth_flow.mjs drives discovery, registration, consent with that
// session, the PKCE code exchange, /mcp with the access token and refresh
// rotation, with every refusal the flow must give.

#include <chrono>
#include <fstream>
#include <iostream>
#include <regex>
#include <string>

#include "cli/subprocess.h"
#include "e2e/server_process.h"
#include "fmt/format.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace strata::testing {
namespace {

using ::testing::HasSubstr;

TEST(McpOAuthTest, TheFlowWorksWithPkceAndRefusesWhatItMust) {
  TempDir dir("e2e-mcp-oauth");
  ServerProcess server(dir.path() + "/data");
  ASSERT_TRUE(server.ready()) << server.output();
  ASSERT_FALSE(server.setup_token().empty()) << server.output();
  const std::string headers = dir.path() + "/headers.txt";
  auto [status, body] = Curl(
      {"-D", headers, "-X", "POST", "-H", "X-Strata-Request: 1", "-H",
       "Content-Type: application/json", "--data-binary",
       fmt::format(R"({{"token":"{}","email":"ops@example.com","name":"Ops","password":"{}"}})",
                   server.setup_token(), "correct horse battery"),
       "http://" + server.api_address() + "/api/v1/auth/setup"});
  ASSERT_EQ(status, 201) << body;
  std::ifstream in(headers);
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::smatch match;
  ASSERT_TRUE(std::regex_search(text, match, std::regex("strata_session=([0-9a-z]+)"))) << text;

  Subprocess flow({STRATA_NODE, std::string(STRATA_E2E_DIR) + "/mcp_oauth_flow.mjs",
                   server.api_address(), match[1].str(), server.first_token()},
                  ChildEnvironment());
  const int code = flow.Wait(std::chrono::seconds(120));
  std::cout << "mcp_oauth_flow.mjs: " << flow.output();
  EXPECT_EQ(code, 0) << flow.output();
  EXPECT_THAT(flow.output(), HasSubstr(R"("ok":true)"));
  EXPECT_EQ(server.Stop(), 0) << server.output();
}

}  // namespace
}  // namespace strata::testing
