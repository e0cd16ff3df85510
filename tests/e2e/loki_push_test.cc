// POST /loki/api/v1/push against a running `strata serve`: pushed on the
// OTLP/HTTP port with the ingest token, read back through the Loki query
// API on the API port with a read token; a read token cannot push.

#include <chrono>
#include <string>
#include <thread>

#include "e2e/server_process.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace strata::testing {
namespace {

using ::testing::HasSubstr;

TEST(LokiPushE2eTest, PushedStreamsReadBackThroughQueryRange) {
  TempDir dir("e2e-loki-push");
  const std::string data = dir.path() + "/data";
  ServerProcess server(data, {});
  ASSERT_TRUE(server.ready()) << server.output();
  const std::string reader = CreateToken(data, "reader", "read");
  ASSERT_FALSE(reader.empty());
  const std::string push = "http://" + server.http_address() + "/loki/api/v1/push";
  const std::string body =
      R"({"streams":[{"stream":{"service_name":"cart","team":"pay"},"values":[)"
      R"(["1700000000000000005","pushed line",{"user":"u1","detected_level":"error"}]]}]})";

  auto [status, answer] =
      Curl({"-X", "POST", "-H", "Authorization: Bearer " + server.first_token(), "-H",
            "Content-Type: application/json", "--data-binary", body, push});
  ASSERT_EQ(status, 204) << answer;

  // The read token is accepted once the server reloads tokens (1 s).
  const std::string query = "http://" + server.api_address() +
                            "/loki/api/v1/query_range?query=%7Bservice_name%3D%22cart%22%7D"
                            "&start=1699999999000000000&end=1700000001000000000&limit=10";
  status = 401;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (status == 401 && std::chrono::steady_clock::now() < deadline) {
    std::tie(status, answer) = Curl({"-H", "Authorization: Bearer " + reader, query});
    if (status == 401) std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  ASSERT_EQ(status, 200) << answer;
  EXPECT_THAT(answer, HasSubstr(R"("service_name":"cart")"));
  EXPECT_THAT(answer, HasSubstr(R"("team":"pay")"));
  EXPECT_THAT(answer, HasSubstr(R"("user":"u1")"));
  EXPECT_THAT(answer, HasSubstr(R"("detected_level":"error")"));
  EXPECT_THAT(answer, HasSubstr(R"(["1700000000000000005","pushed line")"));

  // A read token may not push (403); nothing more is stored.
  std::tie(status, answer) = Curl({"-X", "POST", "-H", "Authorization: Bearer " + reader, "-H",
                                   "Content-Type: application/json", "--data-binary", body, push});
  EXPECT_EQ(status, 403) << answer;
}

}  // namespace
}  // namespace strata::testing
