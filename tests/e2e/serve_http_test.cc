// strata serve as operators and curl see it: OTLP/HTTP JSON through curl,
// refusals (401, 400, 413, 429), token revocation reaching a running server,
// and the health and metrics endpoints.

#include <chrono>
#include <fstream>
#include <regex>
#include <thread>

#include "e2e/server_process.h"
#include "fmt/format.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace strata::testing {
namespace {

using ::testing::HasSubstr;

constexpr char kJsonSpans[] = R"({"resourceSpans":[{"resource":{"attributes":[
  {"key":"service.name","value":{"stringValue":"curl-e2e"}}]},
  "scopeSpans":[{"spans":[{"traceId":"5b8efff798038103d269b633813fc60c",
  "spanId":"eee19b7ec3c1b174","name":"curl span","kind":2,
  "startTimeUnixNano":"1700000000000000000","endTimeUnixNano":"1700000000100000000"}]}]}]})";

std::vector<std::string> PostJson(const std::string& url, const std::string& token,
                                  const std::string& body) {
  std::vector<std::string> args = {"-X", "POST", "-H", "Content-Type: application/json",
                                   "--data-binary", body, url};
  if (!token.empty()) args.insert(args.begin(), {"-H", "Authorization: Bearer " + token});
  return args;
}

// The value of a Prometheus sample line, or -1.
double Sample(const std::string& page, const std::string& series) {
  const std::string line_start = "\n" + series + " ";
  const size_t at = page.find(line_start);
  if (at == std::string::npos) return -1;
  return std::stod(page.substr(at + line_start.size()));
}

TEST(ServeHttpTest, CurlExportsAndRefusalsAndHealth) {
  TempDir dir("e2e-http");
  const std::string data = dir.path() + "/data";
  ServerProcess server(data, {"--max-body-bytes", "65536"});
  ASSERT_TRUE(server.ready()) << server.output();
  const std::string traces = "http://" + server.http_address() + "/v1/traces";
  const std::string token = server.first_token();

  auto [ok_status, ok_body] = Curl(PostJson(traces, token, kJsonSpans));
  EXPECT_EQ(ok_status, 200) << ok_body;
  EXPECT_EQ(ok_body, "{}");

  auto [no_token, no_token_body] = Curl(PostJson(traces, "", kJsonSpans));
  EXPECT_EQ(no_token, 401) << no_token_body;
  auto [wrong, wrong_body] = Curl(PostJson(traces, "strata_not_a_token", kJsonSpans));
  EXPECT_EQ(wrong, 401);
  EXPECT_THAT(wrong_body, ::testing::Not(HasSubstr("strata_not_a_token")));

  auto [garbage, garbage_body] = Curl(PostJson(traces, token, R"({"resourceSpans":[{"scopeSpans":7}]})"));
  EXPECT_EQ(garbage, 400);
  EXPECT_THAT(garbage_body, HasSubstr("resourceSpans[0].scopeSpans: expected an array"));

  const std::string big_path = dir.path() + "/big.json";
  std::ofstream(big_path) << std::string(100'000, ' ') << kJsonSpans;
  auto [big, big_body] = Curl({"-X", "POST", "-H", "Authorization: Bearer " + token, "-H",
                               "Content-Type: application/json", "--data-binary", "@" + big_path,
                               traces});
  EXPECT_EQ(big, 413) << big_body;

  auto [ready, ready_body] = Curl({"http://" + server.api_address() + "/readyz"});
  EXPECT_EQ(ready, 200);
  auto [health, health_body] = Curl({"http://" + server.api_address() + "/healthz"});
  EXPECT_EQ(health, 200);
  auto [metrics_status, metrics] = Curl({"http://" + server.api_address() + "/metrics"});
  ASSERT_EQ(metrics_status, 200);
  EXPECT_EQ(Sample(metrics, "strata_ingest_rows_total{signal=\"traces\",transport=\"http\"}"), 1);
  EXPECT_EQ(Sample(metrics, "strata_ingest_rejected_total{signal=\"traces\",transport=\"http\","
                            "reason=\"unauthenticated\"}"),
            2);
  EXPECT_EQ(Sample(metrics, "strata_ingest_rejected_total{signal=\"traces\",transport=\"http\","
                            "reason=\"invalid_argument\"}"),
            1);
  EXPECT_EQ(Sample(metrics, "strata_batches_published_total"), 1);

  // A token revoked from the shell stops working on the running server
  // within its refresh interval (1 s); wait up to 20 s for it.
  auto [revoke_code, revoke_out] =
      RunStrata({"token", "revoke", "default-ingest", "--data-dir", data});
  ASSERT_EQ(revoke_code, 0) << revoke_out;
  int status = 200;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (status == 200 && std::chrono::steady_clock::now() < deadline) {
    status = Curl(PostJson(traces, token, kJsonSpans)).first;
    if (status == 200) std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  EXPECT_EQ(status, 401);
  EXPECT_EQ(server.Stop(), 0) << server.output();
  EXPECT_THAT(server.output(), ::testing::Not(HasSubstr("strata_not_a_token")));
}

TEST(ServeHttpTest, OverTheInflightBudgetExportsGet429AndNothingIsLost) {
  TempDir dir("e2e-429");
  const std::string data = dir.path() + "/data";
  // A budget smaller than two requests: whenever one is in flight, the next
  // is refused (a lone request is always admitted).
  ServerProcess server(data, {"--inflight-bytes-limit", "1000"});
  ASSERT_TRUE(server.ready()) << server.output();
  const std::string record = dir.path() + "/acked.rec";
  auto [code, output] = RunStrata(
      {"loadgen", "--protocol", "http/protobuf", "--target", server.http_address(), "--token",
       server.first_token(), "--signals", "traces", "--request-spans", "200", "--concurrency",
       "32", "--max-requests", "300", "--duration", "30", "--record", record, "--quiet"});
  ASSERT_EQ(code, 0) << output;
  std::smatch match;
  ASSERT_TRUE(std::regex_search(output, match, std::regex(R"re("RESOURCE_EXHAUSTED":(\d+))re")))
      << output;
  EXPECT_GT(std::stoi(match[1].str()), 0);
  ASSERT_TRUE(std::regex_search(output, match, std::regex(R"re("requests_ok":(\d+))re")));
  const int acknowledged = std::stoi(match[1].str());
  EXPECT_GT(acknowledged, 0);
  auto [metrics_status, metrics] = Curl({"http://" + server.api_address() + "/metrics"});
  EXPECT_GT(Sample(metrics, "strata_ingest_rejected_total{signal=\"traces\",transport=\"http\","
                            "reason=\"over_budget\"}"),
            0);
  ASSERT_EQ(server.Stop(), 0) << server.output();

  auto engine = query::DuckDbEngine::Open({});
  ASSERT_TRUE(engine.ok());
  ASSERT_TRUE(CreateTableView(**engine, data, "spans"));
  auto stored = (*engine)->Query("SELECT count(*) FROM spans WHERE row_kind = 0");
  ASSERT_TRUE(stored.ok()) << stored.status();
  ASSERT_TRUE(std::regex_search(output, match, std::regex(R"re("spans":(\d+))re")));
  // Refused requests stored nothing; acknowledged ones all of their spans.
  EXPECT_EQ(*stored->rows[0][0], match[1].str());
}

}  // namespace
}  // namespace strata::testing
