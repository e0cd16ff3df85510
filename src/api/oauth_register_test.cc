// POST /oauth/register's limits over a real server (docs/api.md, "OAuth
// client registration limits"): a bounded number of registrations per
// client address and window, answered 429 with Retry-After past it (the
// address as forwarded.h believes it), other addresses unaffected, a new
// window after the old one closes; and the cap on clients no user
// consented to holding however many addresses register.

#include <atomic>
#include <memory>
#include <string>

#include "api/api_server.h"
#include "api/forwarded.h"
#include "control/control_testing.h"
#include "control/oauth.h"
#include "fmt/format.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "server/http_testing.h"

namespace strata::api {
namespace {

using server::testing::Curl;
using server::testing::HttpAnswer;
using ::testing::HasSubstr;

constexpr int64_t kSecond = 1'000'000'000;

class OAuthRegisterTest : public control::testing::TempDirTest {
 protected:
  void SetUp() override {
    TempDirTest::SetUp();
    auto oauth = control::OAuth::Open(dir() + "/control/strata.sqlite", absl::FromUnixNanos(now_),
                                      control::OAuthOptions{.max_unused_clients = 4});
    ASSERT_TRUE(oauth.ok()) << oauth.status();
    oauth_ = *std::move(oauth);
    ApiOptions options;
    options.storage = [] { return nullptr; };
    options.oauth = oauth_.get();
    options.oauth_registrations = {.max_per_window = 2, .window = absl::Minutes(10)};
    // The test's requests come from 127.0.0.1 and name their address in
    // X-Forwarded-For.
    auto trusted = ParseTrustedProxies("127.0.0.1");
    ASSERT_TRUE(trusted.ok()) << trusted.status();
    options.trusted_proxies = *trusted;
    options.now = [this] { return now_.load(); };
    api_ = std::make_unique<Api>(std::move(options));
    server::HttpRouter router;
    api_->AddRoutes(&router);
    auto started = server::HttpServer::Start(server::HttpServerOptions{.address = "127.0.0.1:0"},
                                             std::move(router).ToHandler());
    ASSERT_TRUE(started.ok()) << started.status();
    http_ = *std::move(started);
  }

  void TearDown() override {
    http_.reset();
    api_.reset();
    TempDirTest::TearDown();
  }

  HttpAnswer Register(const std::string& address) {
    return Curl({"-X", "POST", "-H", "Content-Type: application/json", "-H",
                 "X-Forwarded-For: " + address, "--data-binary",
                 R"({"client_name":"agent","redirect_uris":["http://127.0.0.1:9/cb"]})",
                 fmt::format("http://127.0.0.1:{}/oauth/register", http_->port())});
  }

  std::atomic<int64_t> now_{1'750'000'000 * kSecond};
  std::unique_ptr<control::OAuth> oauth_;
  std::unique_ptr<Api> api_;
  std::unique_ptr<server::HttpServer> http_;
};

TEST_F(OAuthRegisterTest, EachAddressGetsABoundedNumberPerWindow) {
  EXPECT_EQ(Register("203.0.113.1").status, 201);
  now_ += 60 * kSecond;
  EXPECT_EQ(Register("203.0.113.1").status, 201);
  now_ += 60 * kSecond;
  const HttpAnswer refused = Register("203.0.113.1");
  EXPECT_EQ(refused.status, 429) << refused.body;
  // The window opened 2 minutes ago and lasts 10.
  EXPECT_EQ(refused.Header("retry-after"), "480");
  EXPECT_THAT(refused.body, HasSubstr(R"("error":"temporarily_unavailable")"));
  EXPECT_THAT(refused.body, HasSubstr("at most 2 per 600 s"));
  // Another address is unaffected.
  EXPECT_EQ(Register("203.0.113.2").status, 201);
  // Refusals count nothing; a new window gives the bound again.
  now_ += 480 * kSecond;
  EXPECT_EQ(Register("203.0.113.1").status, 201);
  EXPECT_EQ(Register("203.0.113.1").status, 201);
  EXPECT_EQ(Register("203.0.113.1").status, 429);
}

TEST_F(OAuthRegisterTest, ClientsNoUserConsentedToStayWithinTheirCap) {
  for (int i = 1; i <= 10; ++i) {
    EXPECT_EQ(Register(fmt::format("198.51.100.{}", i)).status, 201) << i;
  }
  EXPECT_EQ(oauth_->UnusedClients().value_or(-1), 4);
}

}  // namespace
}  // namespace strata::api
