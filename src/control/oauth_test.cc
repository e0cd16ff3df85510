// OAuth codes, grants and tokens (oauth.h) with a clock of the test's own:
// expiry of codes and access tokens, PKCE, single use and family
// revocation.

#include "control/oauth.h"

#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "control/control_testing.h"
#include "control/sqlite_account_store.h"
#include "gtest/gtest.h"

namespace strata::control {
namespace {

constexpr char kResource[] = "http://127.0.0.1:7520/mcp";
constexpr char kRedirect[] = "http://127.0.0.1:9/cb";
constexpr char kVerifier[] = "a-verifier-of-forty-three-characters-or-more-0123";

class OAuthTest : public testing::TempDirTest {
 protected:
  void SetUp() override {
    TempDirTest::SetUp();
    const std::string db = dir() + "/control/strata.sqlite";
    auto store = SqliteAccountStore::Open(db, now_);
    ASSERT_TRUE(store.ok()) << store.status();
    store_ = *std::move(store);
    auto user = store_->CreateUser(NewUser{.email = "a@example.com", .name = "A"}, now_);
    ASSERT_TRUE(user.ok()) << user.status();
    user_id_ = user->id;
    auto oauth = OAuth::Open(db, now_);
    ASSERT_TRUE(oauth.ok()) << oauth.status();
    oauth_ = *std::move(oauth);
    auto client = oauth_->RegisterClient("agent", {kRedirect}, now_);
    ASSERT_TRUE(client.ok()) << client.status();
    client_id_ = client->client_id;
  }

  std::string Code(absl::Time at) {
    auto code = oauth_->IssueCode(OAuthApproval{.client_id = client_id_,
                                                .user_id = user_id_,
                                                .redirect_uri = kRedirect,
                                                .code_challenge = PkceChallenge(kVerifier),
                                                .resource = kResource},
                                  at);
    EXPECT_TRUE(code.ok()) << code.status();
    return code.value_or("");
  }

  absl::Time now_ = absl::FromUnixSeconds(1750000000);
  std::unique_ptr<SqliteAccountStore> store_;
  std::unique_ptr<OAuth> oauth_;
  int64_t user_id_ = 0;
  std::string client_id_;
};

TEST_F(OAuthTest, PkceChallengeIsBase64UrlOfSha256) {
  // Computed independently: node -e "crypto.createHash('sha256')
  //   .update(v).digest('base64url')".
  EXPECT_EQ(PkceChallenge("dBjftJeZ4CVP-mJ92K9TRSqQuLfXuoPlqQz8XCo1eQk"),
            "dhwACDY3ioHXGHjFABg6zq60QqGza5cPOQk12mGZngQ");
}

TEST_F(OAuthTest, CodesAndAccessTokensExpire) {
  const std::string late = Code(now_);
  auto expired = oauth_->ExchangeCode(late, client_id_, kRedirect, kVerifier, kResource,
                                      now_ + absl::Seconds(61));
  EXPECT_TRUE(absl::IsUnauthenticated(expired.status())) << expired.status();
  const std::string code = Code(now_);
  auto tokens = oauth_->ExchangeCode(code, client_id_, kRedirect, kVerifier, kResource,
                                     now_ + absl::Seconds(59));
  ASSERT_TRUE(tokens.ok()) << tokens.status();
  auto live = oauth_->ResolveAccess(tokens->access_token, kResource, now_ + absl::Minutes(59));
  ASSERT_TRUE(live.ok() && live->has_value());
  auto other = oauth_->ResolveAccess(tokens->access_token, "http://other/mcp", now_);
  ASSERT_TRUE(other.ok());
  EXPECT_FALSE(other->has_value());
  auto late_use = oauth_->ResolveAccess(tokens->access_token, kResource, now_ + absl::Minutes(61));
  ASSERT_TRUE(late_use.ok());
  EXPECT_FALSE(late_use->has_value());
  // The refresh token still works after the access token expired.
  auto refreshed =
      oauth_->Refresh(tokens->refresh_token, client_id_, kResource, now_ + absl::Minutes(61));
  ASSERT_TRUE(refreshed.ok()) << refreshed.status();
}

TEST_F(OAuthTest, ACodeIsBoundToItsClientRedirectAndVerifier) {
  auto other = oauth_->RegisterClient("other", {kRedirect}, now_);
  ASSERT_TRUE(other.ok());
  EXPECT_FALSE(
      oauth_->ExchangeCode(Code(now_), other->client_id, kRedirect, kVerifier, kResource, now_)
          .ok());
  EXPECT_FALSE(
      oauth_
          ->ExchangeCode(Code(now_), client_id_, "http://127.0.0.1:9/x", kVerifier, kResource, now_)
          .ok());
  EXPECT_FALSE(oauth_
                   ->ExchangeCode(Code(now_), client_id_, kRedirect,
                                  "another-verifier-of-forty-three-characters-or-more", kResource,
                                  now_)
                   .ok());
  EXPECT_TRUE(
      oauth_->ExchangeCode(Code(now_), client_id_, kRedirect, kVerifier, kResource, now_).ok());
}

TEST_F(OAuthTest, DeactivatedUsersTokensStopWorking) {
  auto tokens = oauth_->ExchangeCode(Code(now_), client_id_, kRedirect, kVerifier, kResource, now_);
  ASSERT_TRUE(tokens.ok());
  ASSERT_TRUE(store_->ChangeUser(user_id_, UserChange{.active = false}, now_).ok());
  auto access = oauth_->ResolveAccess(tokens->access_token, kResource, now_);
  ASSERT_TRUE(access.ok());
  EXPECT_FALSE(access->has_value());
  EXPECT_FALSE(oauth_->Refresh(tokens->refresh_token, client_id_, kResource, now_).ok());
}

TEST_F(OAuthTest, ClientsNoUserConsentedToAreCappedOldestFirst) {
  // The fixture's client becomes used: a user consented (a grant).
  ASSERT_TRUE(
      oauth_->ExchangeCode(Code(now_), client_id_, kRedirect, kVerifier, kResource, now_).ok());
  auto capped = OAuth::Open(dir() + "/control/strata.sqlite", now_,
                            OAuthOptions{.max_clients = 10, .max_unused_clients = 3});
  ASSERT_TRUE(capped.ok()) << capped.status();
  OAuth& oauth = **capped;
  std::vector<std::string> unused;
  for (int i = 0; i < 6; ++i) {
    auto client = oauth.RegisterClient("unused", {kRedirect}, now_ + absl::Seconds(i));
    ASSERT_TRUE(client.ok()) << client.status();
    unused.push_back(client->client_id);
    EXPECT_EQ(oauth.UnusedClients().value_or(-1), std::min(i + 1, 3)) << i;
  }
  // The three oldest unused clients made room; the used one stays.
  for (int i = 0; i < 6; ++i) {
    EXPECT_EQ(oauth.GetClient(unused[i]).ok(), i >= 3) << i;
  }
  EXPECT_TRUE(oauth.GetClient(client_id_).ok());
  // A client with a code waiting for its exchange is in use too.
  auto approved = oauth.IssueCode(OAuthApproval{.client_id = unused[3],
                                                .user_id = user_id_,
                                                .redirect_uri = kRedirect,
                                                .code_challenge = PkceChallenge(kVerifier),
                                                .resource = kResource},
                                  now_);
  ASSERT_TRUE(approved.ok()) << approved.status();
  ASSERT_TRUE(oauth.RegisterClient("unused", {kRedirect}, now_ + absl::Seconds(7)).ok());
  ASSERT_TRUE(oauth.RegisterClient("unused", {kRedirect}, now_ + absl::Seconds(8)).ok());
  EXPECT_TRUE(oauth.GetClient(unused[3]).ok());
  EXPECT_FALSE(oauth.GetClient(unused[4]).ok());
  EXPECT_EQ(oauth.UnusedClients().value_or(-1), 3);
}

TEST_F(OAuthTest, UsedClientsStillCountAgainstTheTotal) {
  ASSERT_TRUE(
      oauth_->ExchangeCode(Code(now_), client_id_, kRedirect, kVerifier, kResource, now_).ok());
  auto capped = OAuth::Open(dir() + "/control/strata.sqlite", now_,
                            OAuthOptions{.max_clients = 2, .max_unused_clients = 5});
  ASSERT_TRUE(capped.ok()) << capped.status();
  ASSERT_TRUE((*capped)->RegisterClient("second", {kRedirect}, now_).ok());
  auto third = (*capped)->RegisterClient("third", {kRedirect}, now_);
  EXPECT_TRUE(absl::IsResourceExhausted(third.status())) << third.status();
}

}  // namespace
}  // namespace strata::control
