// The /mcp endpoint's JSON-RPC handling over real HTTP (no telemetry
// needed: the protocol methods answer while storage is absent), and its
// parser and session table on their own.

#include <fstream>
#include <string>
#include <variant>
#include <vector>

#include "api/api_server.h"
#include "api/api_test_server.h"
#include "api/mcp_jsonrpc.h"
#include "api/mcp_sessions.h"
#include "control/control_testing.h"
#include "fmt/format.h"
#include "gtest/gtest.h"
#include "server/http_testing.h"

namespace strata::api {
namespace {

using server::testing::Curl;
using server::testing::HttpAnswer;

constexpr char kToken[] = "mcp-test-read-token";
constexpr char kOtherToken[] = "mcp-test-other-read-token";

TEST(JsonRpcParseTest, MalformedJsonIsAParseError) {
  auto parsed = ParseJsonRpc("{\"jsonrpc\":\"2.0\",");
  ASSERT_TRUE(std::holds_alternative<JsonRpcError>(parsed));
  EXPECT_EQ(std::get<JsonRpcError>(parsed).code, kJsonRpcParseError);
}

TEST(JsonRpcParseTest, WrongVersionIsAnInvalidRequestThatKeepsTheId) {
  auto parsed = ParseJsonRpc(R"({"jsonrpc":"1.0","id":7,"method":"ping"})");
  ASSERT_TRUE(std::holds_alternative<JsonRpcError>(parsed));
  EXPECT_EQ(std::get<JsonRpcError>(parsed).code, kJsonRpcInvalidRequest);
  EXPECT_EQ(std::get<JsonRpcError>(parsed).id, "7");
}

TEST(JsonRpcParseTest, BatchesNonObjectsAndBadMembersAreInvalidRequests) {
  for (const char* body :
       {R"([{"jsonrpc":"2.0","id":1,"method":"ping"}])", "42", R"({"jsonrpc":"2.0","id":1})",
        R"({"jsonrpc":"2.0","id":1.5,"method":"ping"})", R"({"jsonrpc":"2.0","id":1,"method":7})",
        R"({"jsonrpc":"2.0","id":1,"method":"ping","params":[1]})"}) {
    auto parsed = ParseJsonRpc(body);
    ASSERT_TRUE(std::holds_alternative<JsonRpcError>(parsed)) << body;
    EXPECT_EQ(std::get<JsonRpcError>(parsed).code, kJsonRpcInvalidRequest) << body;
  }
}

TEST(JsonRpcParseTest, RequestsNotificationsAndResponsesAreTold) {
  auto request = ParseJsonRpc(R"({"jsonrpc":"2.0","id":"a","method":"tools/list"})");
  ASSERT_TRUE(std::holds_alternative<JsonRpcMessage>(request));
  EXPECT_EQ(std::get<JsonRpcMessage>(request).kind, JsonRpcMessage::Kind::kRequest);
  EXPECT_EQ(std::get<JsonRpcMessage>(request).id, "\"a\"");
  EXPECT_EQ(std::get<JsonRpcMessage>(request).params, "{}");
  auto note = ParseJsonRpc(R"({"jsonrpc":"2.0","method":"notifications/initialized"})");
  ASSERT_TRUE(std::holds_alternative<JsonRpcMessage>(note));
  EXPECT_EQ(std::get<JsonRpcMessage>(note).kind, JsonRpcMessage::Kind::kNotification);
  auto response = ParseJsonRpc(R"({"jsonrpc":"2.0","id":3,"result":{}})");
  ASSERT_TRUE(std::holds_alternative<JsonRpcMessage>(response));
  EXPECT_EQ(std::get<JsonRpcMessage>(response).kind, JsonRpcMessage::Kind::kResponse);
}

TEST(McpSessionsTest, IdleSessionsExpireAndTheOldestMakesRoom) {
  McpSessions sessions(McpSessionLimits{.max_sessions = 2, .idle_ns = 100});
  const std::string a = sessions.Create(0, "2025-06-18", "token:a");
  const std::string b = sessions.Create(10, "2025-06-18", "token:a");
  EXPECT_NE(a, b);
  EXPECT_TRUE(sessions.Touch(a, 50, "token:a"));
  const std::string c = sessions.Create(60, "2025-06-18", "token:a");  // b: least recently used
  EXPECT_FALSE(sessions.Touch(b, 61, "token:a"));
  EXPECT_TRUE(sessions.Touch(c, 61, "token:a"));
  EXPECT_FALSE(sessions.Touch(a, 200, "token:a"));  // idle for 150 ns > 100
  EXPECT_TRUE(sessions.End(c, "token:a"));
  EXPECT_FALSE(sessions.End(c, "token:a"));
}

TEST(McpSessionsTest, ASessionAnswersOnlyTheCredentialThatMadeIt) {
  McpSessions sessions;
  const std::string a = sessions.Create(0, "2025-06-18", "token:aaaa");
  EXPECT_FALSE(sessions.Touch(a, 1, "token:bbbb"));
  EXPECT_FALSE(sessions.Touch(a, 1, "session:7"));
  EXPECT_FALSE(sessions.Touch(a, 1, "token:aaa"));
  EXPECT_FALSE(sessions.End(a, "token:bbbb"));
  EXPECT_TRUE(sessions.Touch(a, 1, "token:aaaa"));  // the refusals did not end it
  EXPECT_TRUE(sessions.End(a, "token:aaaa"));
}

class McpEndpointTest : public control::testing::TempDirTest {
 protected:
  void SetUp() override {
    TempDirTest::SetUp();
    ApiOptions options;
    options.storage = [] { return nullptr; };
    options.data_dir = dir();
    options.authenticate = [](std::string_view token) -> absl::StatusOr<control::TokenScope> {
      if (token == kToken || token == kOtherToken) return control::TokenScope::kRead;
      return absl::UnauthenticatedError("unknown or revoked token");
    };
    api_ = std::make_unique<Api>(std::move(options));
    auto started = test_support::ServeOnLoopback(*api_);
    ASSERT_TRUE(started.ok()) << started.status();
    http_ = *std::move(started);
    base_ = fmt::format("http://127.0.0.1:{}/mcp", http_->port());
  }
  void TearDown() override {
    http_.reset();
    api_.reset();
    TempDirTest::TearDown();
  }

  HttpAnswer Post(const std::string& body, std::vector<std::string> headers = {},
                  bool token = true) {
    headers.insert(headers.begin(), "Content-Type: application/json");
    if (token) headers.push_back(std::string("Authorization: Bearer ") + kToken);
    return test_support::CallApi(base_, "POST", "", headers, body);
  }

  std::string Initialize() {
    HttpAnswer answer = Post(
        R"({"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}})");
    EXPECT_EQ(answer.status, 200) << answer.body;
    EXPECT_NE(answer.body.find(R"("protocolVersion":"2025-06-18")"), std::string::npos);
    return answer.Header("mcp-session-id");
  }

  std::unique_ptr<Api> api_;
  std::unique_ptr<server::HttpServer> http_;
  std::string base_;
};

TEST_F(McpEndpointTest, ErrorsCarryTheirJsonRpcCodes) {
  const std::string session = Initialize();
  ASSERT_EQ(session.size(), 32u);
  const std::string header = "Mcp-Session-Id: " + session;
  HttpAnswer answer = Post("{not json", {header});
  EXPECT_EQ(answer.status, 400);
  EXPECT_NE(answer.body.find("-32700"), std::string::npos) << answer.body;
  answer = Post(R"({"jsonrpc":"1.0","id":2,"method":"ping"})", {header});
  EXPECT_EQ(answer.status, 400);
  EXPECT_NE(answer.body.find(R"("id":2,"error":{"code":-32600)"), std::string::npos) << answer.body;
  answer = Post(R"({"jsonrpc":"2.0","id":3,"method":"no/such"})", {header});
  EXPECT_EQ(answer.status, 200);
  EXPECT_NE(answer.body.find(R"("id":3,"error":{"code":-32601)"), std::string::npos) << answer.body;
  answer =
      Post(R"({"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"nope"}})", {header});
  EXPECT_NE(answer.body.find(R"("code":-32602)"), std::string::npos) << answer.body;
  answer = Post(R"({"jsonrpc":"2.0","id":5,"method":"ping"})", {header});
  EXPECT_EQ(answer.status, 200);
  EXPECT_EQ(answer.body, R"({"jsonrpc":"2.0","id":5,"result":{}})");
  answer = Post(R"({"jsonrpc":"2.0","method":"notifications/initialized"})", {header});
  EXPECT_EQ(answer.status, 202);
  EXPECT_EQ(answer.body, "");
}

TEST_F(McpEndpointTest, TheTransportChecksSessionsVersionsOriginsAndTokens) {
  const std::string ping = R"({"jsonrpc":"2.0","id":1,"method":"ping"})";
  EXPECT_EQ(Post(ping, {}, /*token=*/false).status, 401);
  EXPECT_EQ(Post(ping).status, 400);  // no session
  EXPECT_EQ(Post(ping, {"Mcp-Session-Id: 00000000000000000000000000000000"}).status, 404);
  const std::string session = Initialize();
  const std::string header = "Mcp-Session-Id: " + session;
  EXPECT_EQ(Post(ping, {header, "MCP-Protocol-Version: 1999-01-01"}).status, 400);
  EXPECT_EQ(Post(ping, {header, "MCP-Protocol-Version: 2025-06-18"}).status, 200);
  EXPECT_EQ(Post(ping, {header, "Origin: http://evil.example"}).status, 403);
  // DNS rebinding: Host and Origin agree, but name no loopback host.
  EXPECT_EQ(Post(ping, {header, "Host: evil.example", "Origin: http://evil.example"}).status, 403);
  const std::string port =
      base_.substr(base_.rfind(':') + 1, base_.find("/mcp") - base_.rfind(':') - 1);
  EXPECT_EQ(
      Post(ping, {header, "Host: localhost:" + port, "Origin: http://localhost:" + port}).status,
      200);
  // GET opens the session's stream: it needs a session, a live one of
  // this credential, and a credential.
  EXPECT_EQ(Curl({"-H", std::string("Authorization: Bearer ") + kToken, base_}).status, 400);
  EXPECT_EQ(Curl({"-H", std::string("Authorization: Bearer ") + kToken, "-H",
                  "Mcp-Session-Id: 00000000000000000000000000000000", base_})
                .status,
            404);
  EXPECT_EQ(Curl({"-H", header, base_}).status, 401);
  EXPECT_EQ(Curl({"-H", std::string("Authorization: Bearer ") + kToken, "-H", header, "-H",
                  "Last-Event-ID: x", base_})
                .status,
            400);
  HttpAnswer end = Curl(
      {"-X", "DELETE", "-H", std::string("Authorization: Bearer ") + kToken, "-H", header, base_});
  EXPECT_EQ(end.status, 200);
  EXPECT_EQ(Post(ping, {header}).status, 404);
  const std::string big = dir() + "/big.json";
  std::ofstream(big) << std::string(kMaxJsonRpcMessageBytes + 1, ' ');
  EXPECT_EQ(Curl({"-X", "POST", "-H", std::string("Authorization: Bearer ") + kToken, "-H", header,
                  "--data-binary", "@" + big, base_})
                .status,
            413);
}

TEST_F(McpEndpointTest, ASessionMadeWithOneTokenIsUnknownToAnother) {
  const std::string header = "Mcp-Session-Id: " + Initialize();
  const std::string ping = R"({"jsonrpc":"2.0","id":1,"method":"ping"})";
  const std::string other = std::string("Authorization: Bearer ") + kOtherToken;
  HttpAnswer answer = Post(ping, {header, other}, /*token=*/false);
  EXPECT_EQ(answer.status, 404) << answer.body;
  EXPECT_EQ(Curl({"-X", "DELETE", "-H", other, "-H", header, base_}).status, 404);
  // The same token still reaches it: the refusal ended nothing.
  EXPECT_EQ(Post(ping, {header}).status, 200);
}

TEST_F(McpEndpointTest, SetsTheLogLevelAndCompletesWithNothingWithoutTelemetry) {
  const std::string header = "Mcp-Session-Id: " + Initialize();
  HttpAnswer level =
      Post(R"({"jsonrpc":"2.0","id":1,"method":"logging/setLevel","params":{"level":"info"}})",
           {header});
  EXPECT_EQ(level.body, R"({"jsonrpc":"2.0","id":1,"result":{}})");
  HttpAnswer bad =
      Post(R"({"jsonrpc":"2.0","id":2,"method":"logging/setLevel","params":{}})", {header});
  EXPECT_NE(bad.body.find("-32602"), std::string::npos) << bad.body;
  HttpAnswer complete = Post(
      R"({"jsonrpc":"2.0","id":3,"method":"completion/complete","params":{"ref":{"type":"ref/prompt","name":"why_is_service_slow"},"argument":{"name":"service","value":"ch"}}})",
      {header});
  EXPECT_EQ(
      complete.body,
      R"({"jsonrpc":"2.0","id":3,"result":{"completion":{"values":[],"total":0,"hasMore":false}}})");
  HttpAnswer prompt = Post(
      R"({"jsonrpc":"2.0","id":4,"method":"prompts/get","params":{"name":"nope","arguments":{}}})",
      {header});
  EXPECT_NE(prompt.body.find("no such prompt: nope"), std::string::npos) << prompt.body;
}

TEST_F(McpEndpointTest, ListsToolsResourcesAndPromptsAndSaysWhenRecovering) {
  const std::string header = "Mcp-Session-Id: " + Initialize();
  HttpAnswer tools = Post(R"({"jsonrpc":"2.0","id":1,"method":"tools/list"})", {header});
  for (const char* name :
       {"services_overview", "service_map", "service_performance", "find_traces", "get_trace",
        "search_logs", "query_metrics", "run_sql", "investigate_error"}) {
    EXPECT_NE(tools.body.find(fmt::format(R"("name":"{}")", name)), std::string::npos) << name;
  }
  HttpAnswer sql = Post(
      R"({"jsonrpc":"2.0","id":2,"method":"resources/read","params":{"uri":"strata://docs/sql"}})",
      {header});
  EXPECT_NE(sql.body.find("FROM spans"), std::string::npos) << sql.body;
  HttpAnswer prompt = Post(
      R"({"jsonrpc":"2.0","id":3,"method":"prompts/get","params":{"name":"why_is_service_slow","arguments":{"service":"checkout"}}})",
      {header});
  EXPECT_NE(prompt.body.find("checkout"), std::string::npos) << prompt.body;
  HttpAnswer call = Post(
      R"({"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"services_overview","arguments":{}}})",
      {header});
  EXPECT_NE(call.body.find(R"("isError":true)"), std::string::npos) << call.body;
  EXPECT_NE(call.body.find("recovering"), std::string::npos) << call.body;
}

}  // namespace
}  // namespace strata::api
