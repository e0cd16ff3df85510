// SIGTERM against a real `strata serve` with work in progress: a SQL query
// that would outlive the drain timeout, and an OTLP/HTTP upload whose body
// is still arriving. Each is answered 503 (never an empty reply or a reset),
// and the process exits within --drain-timeout-sec plus one second.

#include <chrono>
#include <cstdio>
#include <future>
#include <regex>
#include <string>
#include <thread>

#include "e2e/server_process.h"
#include "fmt/format.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "server/testing/raw_connection.h"

namespace strata::testing {
namespace {

using server::testing::HttpAnswer;
using server::testing::RawConnection;

using ::testing::HasSubstr;
using Clock = std::chrono::steady_clock;

constexpr auto kWait = std::chrono::seconds(30);
// Long enough that a test on a loaded machine (ctest -j2, sanitizers) still
// sees the draining server before the deadline closes its listeners.
constexpr auto kDrain = std::chrono::seconds(5);
const std::vector<std::string> kDrainFlags = {"--drain-timeout-sec", "5", "--query-timeout-sec",
                                              "60"};
// Runs far longer than the drain timeout (and than the query timeout).
constexpr char kEndlessQuery[] =
    "SELECT count(*) FROM range(100000000) a(i), range(100000) b(j) WHERE a.i + b.j = -1";

// GET `path` on a fresh connection; nullopt when no answer came.
std::optional<HttpAnswer> Get(const std::string& address, const std::string& path) {
  RawConnection connection(address);
  if (!connection.connected()) return std::nullopt;
  if (!connection.Send(
          fmt::format("GET {} HTTP/1.1\r\nHost: strata\r\nConnection: close\r\n\r\n", path))) {
    return std::nullopt;
  }
  return connection.ReadAnswer(kWait);
}

// SIGTERM now; the future gives the exit code and when the process ended.
// The caller reads server.output() only after the future is ready.
std::future<std::pair<int, Clock::time_point>> StopInBackground(ServerProcess& server) {
  return std::async(std::launch::async, [&server] {
    const int code = server.Stop(kWait);
    return std::make_pair(code, Clock::now());
  });
}

// Polls `condition` every 20 ms until it holds or kWait passes.
template <typename Condition>
bool Eventually(Condition condition) {
  const auto deadline = Clock::now() + kWait;
  while (!condition()) {
    if (Clock::now() >= deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return true;
}

// The value of the gauge `name` on the API's /metrics, or -1.
int64_t Gauge(const std::string& api, const std::string& name) {
  std::optional<HttpAnswer> page = Get(api, "/metrics");
  std::smatch match;
  if (!page.has_value() ||
      !std::regex_search(page->body, match, std::regex("\n" + name + " ([0-9]+)\n"))) {
    return -1;
  }
  return std::stoll(match[1].str());
}

std::string SqlRequest(const std::string& token, const std::string& sql) {
  return fmt::format(
      "POST /api/v1/sql HTTP/1.1\r\nHost: strata\r\nAuthorization: Bearer {}\r\n"
      "Content-Type: text/plain\r\nContent-Length: {}\r\n\r\n{}",
      token, sql.size(), sql);
}

std::string CreateReadToken(const std::string& data) {
  auto [code, output] =
      RunStrata({"token", "create", "--name", "reader", "--scope", "read", "--data-dir", data});
  std::smatch match;
  if (code != 0 || !std::regex_search(output, match, std::regex(R"((strata_[0-9A-Za-z]+))"))) {
    ADD_FAILURE() << output;
    return "";
  }
  return match[1].str();
}

TEST(ShutdownTest, SigtermDuringALongQueryAnswersIt503AndExitsWithinTheDrainTimeoutPlusOneSecond) {
  TempDir dir("hostile-shutdown-query");
  const std::string data = dir.path() + "/data";
  const std::string token = CreateReadToken(data);
  ASSERT_FALSE(token.empty());
  ServerProcess server(data, kDrainFlags);
  ASSERT_TRUE(server.ready()) << server.output();
  const std::string api = server.api_address();

  RawConnection query(api);
  ASSERT_TRUE(query.connected());
  ASSERT_TRUE(query.Send(SqlRequest(token, kEndlessQuery)));
  ASSERT_TRUE(Eventually([&] { return Gauge(api, "strata_queries_running") == 1; }))
      << "the query never showed as running on /metrics\n"
      << server.output();
  std::future<std::optional<HttpAnswer>> answer =
      std::async(std::launch::async, [&] { return query.ReadAnswer(kWait); });

  const Clock::time_point sigterm = Clock::now();
  auto stopped = StopInBackground(server);
  // Once shutdown has begun (/readyz says so), a new query is refused at
  // once rather than started.
  ASSERT_TRUE(Eventually([&] {
    std::optional<HttpAnswer> ready = Get(api, "/readyz");
    return ready.has_value() && ready->status == 503;
  }));
  RawConnection late(api);
  ASSERT_TRUE(late.Send(SqlRequest(token, "SELECT 1")));
  std::optional<HttpAnswer> refused = late.ReadAnswer(kWait);
  ASSERT_TRUE(refused.has_value());
  EXPECT_EQ(refused->status, 503) << refused->body;
  EXPECT_LT(Clock::now() - sigterm, kDrain) << "refused before the drain deadline";

  const auto [code, exit_time] = stopped.get();
  const auto exited = exit_time - sigterm;
  std::printf(
      "SIGTERM to exit: %lld ms (drain timeout %lld ms)\n",
      static_cast<long long>(std::chrono::duration_cast<std::chrono::milliseconds>(exited).count()),
      static_cast<long long>(std::chrono::milliseconds(kDrain).count()));
  EXPECT_EQ(code, 0) << server.output();
  EXPECT_LT(exited, kDrain + std::chrono::seconds(1))
      << std::chrono::duration_cast<std::chrono::milliseconds>(exited).count() << " ms\n"
      << server.output();
  std::optional<HttpAnswer> got = answer.get();
  ASSERT_TRUE(got.has_value()) << "empty reply to the running query\n" << server.output();
  EXPECT_EQ(got->status, 503) << got->body;
  EXPECT_EQ(got->Header("retry-after"), "1");
  EXPECT_THAT(got->body, HasSubstr("shutting down"));
}

TEST(ShutdownTest, SigtermDuringASlowUploadAnswersIt503WithConnectionClose) {
  TempDir dir("hostile-shutdown-upload");
  ServerProcess server(dir.path() + "/data", kDrainFlags);
  ASSERT_TRUE(server.ready()) << server.output();

  RawConnection upload(server.http_address());
  ASSERT_TRUE(upload.connected());
  // "Expect: 100-continue" makes the server say when it has read the
  // header, so the upload is known to be in progress before SIGTERM.
  ASSERT_TRUE(upload.Send(
      fmt::format("POST /v1/traces HTTP/1.1\r\nHost: strata\r\nAuthorization: Bearer {}\r\n"
                  "Content-Type: application/json\r\nContent-Length: 1000000\r\n"
                  "Expect: 100-continue\r\n\r\n",
                  server.first_token())));
  std::optional<HttpAnswer> go_on = upload.ReadAnswer(kWait);
  ASSERT_TRUE(go_on.has_value());
  ASSERT_EQ(go_on->status, 100);
  ASSERT_TRUE(upload.Send("{\"resourceSpans\":[" + std::string(4096, ' ')));

  const Clock::time_point sigterm = Clock::now();
  auto stopped = StopInBackground(server);
  std::optional<HttpAnswer> answer = upload.ReadAnswer(kWait);
  const auto [code, exit_time] = stopped.get();
  const auto exited = exit_time - sigterm;
  std::printf(
      "SIGTERM to exit: %lld ms (drain timeout %lld ms)\n",
      static_cast<long long>(std::chrono::duration_cast<std::chrono::milliseconds>(exited).count()),
      static_cast<long long>(std::chrono::milliseconds(kDrain).count()));
  ASSERT_TRUE(answer.has_value()) << "the upload was cut without an answer\n" << server.output();
  EXPECT_EQ(answer->status, 503) << answer->body;
  EXPECT_EQ(answer->Header("connection"), "close");
  EXPECT_EQ(answer->Header("retry-after"), "5");
  EXPECT_EQ(code, 0) << server.output();
  EXPECT_LT(exited, kDrain + std::chrono::seconds(1))
      << std::chrono::duration_cast<std::chrono::milliseconds>(exited).count() << " ms";
}

}  // namespace
}  // namespace strata::testing
