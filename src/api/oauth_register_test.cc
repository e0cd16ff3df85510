// POST /oauth/register's limits over a real server (docs/api.md, "OAuth
// client registration limits"): a bounded number of registrations per
// client address and window, answered 429 with Retry-After past it (the
// address as forwarded.h believes it), other addresses unaffected, a new
// window after the old one closes; and the cap on clients no user
// consented to holding however many addresses register.

#include <memory>
#include <string>

#include "api/api_server.h"
#include "api/api_test_accounts.h"
#include "api/forwarded.h"
#include "control/oauth.h"
#include "fmt/format.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "server/http_testing.h"

namespace strata::api {
namespace {

using server::testing::HttpAnswer;
using ::testing::HasSubstr;

class OAuthRegisterTest : public test_support::SignedInApiTest {
 protected:
  void SetUp() override {
    SignedInApiTest::SetUp();
    ASSERT_NO_FATAL_FAILURE(Start(control::OAuthOptions{.max_unused_clients = 4}));
  }

  // (Re)starts the server over the control database with `oauth_options`.
  void Start(control::OAuthOptions oauth_options) {
    http_.reset();
    api_.reset();
    oauth_.reset();
    auto oauth = control::OAuth::Open(db_path(), clock_.Now(), oauth_options);
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
    options.now = [this] { return absl::ToUnixNanos(clock_.Now()); };
    ASSERT_NO_FATAL_FAILURE(StartApi(std::move(options)));
  }

  HttpAnswer Register(const std::string& address) {
    return Call("POST", "/oauth/register",
                {"Content-Type: application/json", "X-Forwarded-For: " + address},
                R"({"client_name":"agent","redirect_uris":["http://127.0.0.1:9/cb"]})");
  }

  std::unique_ptr<control::OAuth> oauth_;
};

TEST_F(OAuthRegisterTest, EachAddressGetsABoundedNumberPerWindow) {
  EXPECT_EQ(Register("203.0.113.1").status, 201);
  clock_.Advance(absl::Seconds(60));
  EXPECT_EQ(Register("203.0.113.1").status, 201);
  clock_.Advance(absl::Seconds(60));
  const HttpAnswer refused = Register("203.0.113.1");
  EXPECT_EQ(refused.status, 429) << refused.body;
  // The window opened 2 minutes ago and lasts 10.
  EXPECT_EQ(refused.Header("retry-after"), "480");
  EXPECT_THAT(refused.body, HasSubstr(R"("error":"temporarily_unavailable")"));
  EXPECT_THAT(refused.body, HasSubstr("at most 2 per 600 s"));
  // Another address is unaffected.
  EXPECT_EQ(Register("203.0.113.2").status, 201);
  // Refusals count nothing; a new window gives the bound again.
  clock_.Advance(absl::Seconds(480));
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

TEST_F(OAuthRegisterTest, AFullServerSaysWhenToRetry) {
  // Two slots; the unused clients are not culled before 100.
  Start(control::OAuthOptions{.max_clients = 2, .max_unused_clients = 100});
  EXPECT_EQ(Register("198.51.100.1").status, 201);
  EXPECT_EQ(Register("198.51.100.2").status, 201);
  const HttpAnswer refused = Register("198.51.100.3");
  EXPECT_EQ(refused.status, 429) << refused.body;
  EXPECT_THAT(refused.body, HasSubstr(R"("error":"temporarily_unavailable")"));
  EXPECT_THAT(refused.body, HasSubstr("limit of 2 OAuth clients"));
  // An abandoned consent's code is cleaned an hour after it expires.
  EXPECT_EQ(refused.Header("retry-after"), "3600");
}

}  // namespace
}  // namespace strata::api
