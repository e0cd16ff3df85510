// The official MCP conformance suite (@modelcontextprotocol/conformance,
// pinned in package.json) against /mcp of a real strata holding traffic
// from strata loadgen. mcp_conformance.mjs relays the suite's requests with
// a read token and compares the failed scenarios with
// mcp_conformance_expected.yaml, whose reasons docs/mcp.md gives.

#include <chrono>
#include <iostream>
#include <string>

#include "cli/subprocess.h"
#include "e2e/server_process.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace strata::testing {
namespace {

using ::testing::HasSubstr;

TEST(McpConformanceTest, TheOfficialSuiteFindsOnlyTheListedFailures) {
  TempDir dir("e2e-mcp-conformance");
  const std::string data = dir.path() + "/data";
  ServerProcess server(data);
  ASSERT_TRUE(server.ready()) << server.output();
  const std::string reader = CreateToken(data, "conformance-reader", "read");
  ASSERT_FALSE(reader.empty());
  Subprocess loadgen({STRATA_BINARY, "loadgen", "--protocol", "http/protobuf", "--target",
                      server.http_address(), "--token", server.first_token(), "--signals",
                      "traces,logs,metrics", "--concurrency", "2", "--duration", "2", "--quiet"},
                     ChildEnvironment());
  ASSERT_EQ(loadgen.Wait(std::chrono::seconds(60)), 0) << loadgen.output();

  const std::string e2e = STRATA_E2E_DIR;
  Subprocess suite({STRATA_NODE, e2e + "/mcp_conformance.mjs", server.api_address(), reader,
                    e2e + "/mcp_conformance_expected.yaml"},
                   ChildEnvironment());
  const int code = suite.Wait(std::chrono::seconds(300));
  std::cout << "mcp_conformance.mjs: " << suite.output();
  EXPECT_EQ(code, 0) << suite.output();
  EXPECT_THAT(suite.output(), HasSubstr(R"("ok":true)"));
  EXPECT_EQ(server.Stop(), 0) << server.output();
}

}  // namespace
}  // namespace strata::testing
