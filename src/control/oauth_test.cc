// OAuth codes, grants and tokens (oauth.h) with a clock of the test's own,
// checked against both implementations: the single node's SqliteOAuth and
// the several nodes' PostgresOAuth (on a throwaway server, a fresh database
// per test): expiry of codes and access tokens, PKCE, single use and
// family revocation, and two OAuth objects on one database acting as two
// nodes.

#include "control/oauth.h"

#include <algorithm>
#include <atomic>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "control/control_testing.h"
#include "control/postgres_account_store.h"
#include "control/postgres_oauth.h"
#include "control/sqlite_account_store.h"
#include "control/sqlite_oauth.h"
#include "gtest/gtest.h"
#include "postgres/postgres_testing.h"

namespace strata::control {
namespace {

constexpr char kResource[] = "http://127.0.0.1:7520/mcp";
constexpr char kRedirect[] = "http://127.0.0.1:9/cb";
constexpr char kVerifier[] = "a-verifier-of-forty-three-characters-or-more-0123";

class OAuthTest : public testing::TempDirTest, public ::testing::WithParamInterface<std::string> {
 protected:
  void SetUp() override {
    TempDirTest::SetUp();
    absl::StatusOr<std::unique_ptr<AccountStore>> store;
    if (GetParam() == "postgres") {
      if (!postgres::testing::PostgresServer::BinariesPresent()) {
        GTEST_SKIP() << "PostgreSQL 15 is not installed (/usr/lib/postgresql/15/bin/initdb); "
                        "scripts/setup.sh --tests installs it";
      }
      std::string error;
      location_ = postgres::testing::PostgresServer::Get().NewDatabase(&error);
      ASSERT_FALSE(location_.empty()) << error;
      store = PostgresAccountStore::Open(location_);
    } else {
      location_ = dir() + "/control/strata.sqlite";
      store = SqliteAccountStore::Open(location_, now_);
    }
    ASSERT_TRUE(store.ok()) << store.status();
    store_ = *std::move(store);
    auto user = store_->CreateUser(NewUser{.email = "a@example.com", .name = "A"}, now_);
    ASSERT_TRUE(user.ok()) << user.status();
    user_id_ = user->id;
    oauth_ = OpenOAuth();
    ASSERT_NE(oauth_, nullptr);
    auto client = oauth_->RegisterClient("agent", {kRedirect}, now_);
    ASSERT_TRUE(client.ok()) << client.status();
    client_id_ = client->client_id;
  }

  // A new OAuth object (its own connection) on this test's database: on
  // PostgreSQL, another node.
  std::unique_ptr<OAuth> OpenOAuth(OAuthOptions options = {}) {
    absl::StatusOr<std::unique_ptr<OAuth>> oauth;
    if (GetParam() == "postgres") {
      oauth = PostgresOAuth::Open(location_, options);
    } else {
      oauth = SqliteOAuth::Open(location_, now_, options);
    }
    EXPECT_TRUE(oauth.ok()) << oauth.status();
    return oauth.ok() ? *std::move(oauth) : nullptr;
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
  std::string location_;
  std::unique_ptr<AccountStore> store_;
  std::unique_ptr<OAuth> oauth_;
  int64_t user_id_ = 0;
  std::string client_id_;
};

TEST_P(OAuthTest, PkceChallengeIsBase64UrlOfSha256) {
  // Computed independently: node -e "crypto.createHash('sha256')
  //   .update(v).digest('base64url')".
  EXPECT_EQ(PkceChallenge("dBjftJeZ4CVP-mJ92K9TRSqQuLfXuoPlqQz8XCo1eQk"),
            "dhwACDY3ioHXGHjFABg6zq60QqGza5cPOQk12mGZngQ");
}

TEST_P(OAuthTest, CodesAndAccessTokensExpire) {
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

TEST_P(OAuthTest, ACodeIsBoundToItsClientRedirectAndVerifier) {
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

TEST_P(OAuthTest, DeactivatedUsersTokensStopWorking) {
  auto tokens = oauth_->ExchangeCode(Code(now_), client_id_, kRedirect, kVerifier, kResource, now_);
  ASSERT_TRUE(tokens.ok());
  ASSERT_TRUE(store_->ChangeUser(user_id_, UserChange{.active = false}, now_).ok());
  auto access = oauth_->ResolveAccess(tokens->access_token, kResource, now_);
  ASSERT_TRUE(access.ok());
  EXPECT_FALSE(access->has_value());
  EXPECT_FALSE(oauth_->Refresh(tokens->refresh_token, client_id_, kResource, now_).ok());
}

TEST_P(OAuthTest, ClientsNoUserConsentedToAreCappedOldestFirst) {
  // The fixture's client becomes used: a user consented (a grant).
  ASSERT_TRUE(
      oauth_->ExchangeCode(Code(now_), client_id_, kRedirect, kVerifier, kResource, now_).ok());
  auto capped = OpenOAuth(OAuthOptions{.max_clients = 10, .max_unused_clients = 3});
  ASSERT_NE(capped, nullptr);
  OAuth& oauth = *capped;
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

TEST_P(OAuthTest, UsedClientsStillCountAgainstTheTotal) {
  ASSERT_TRUE(
      oauth_->ExchangeCode(Code(now_), client_id_, kRedirect, kVerifier, kResource, now_).ok());
  auto capped = OpenOAuth(OAuthOptions{.max_clients = 2, .max_unused_clients = 5});
  ASSERT_NE(capped, nullptr);
  ASSERT_TRUE(capped->RegisterClient("second", {kRedirect}, now_).ok());
  auto third = capped->RegisterClient("third", {kRedirect}, now_);
  EXPECT_TRUE(absl::IsResourceExhausted(third.status())) << third.status();
}

// Two nodes: a client registered and a code issued through one are known
// to the other, which exchanges the code; the used code presented again
// on the first revokes the grant on both.
TEST_P(OAuthTest, ACodeIssuedOnOneNodeIsExchangedOnAnotherAndWorksOnce) {
  auto second = OpenOAuth();
  ASSERT_NE(second, nullptr);
  ASSERT_TRUE(second->GetClient(client_id_).ok());
  const std::string code = Code(now_);
  auto tokens = second->ExchangeCode(code, client_id_, kRedirect, kVerifier, kResource, now_);
  ASSERT_TRUE(tokens.ok()) << tokens.status();
  auto access = oauth_->ResolveAccess(tokens->access_token, kResource, now_);
  ASSERT_TRUE(access.ok()) << access.status();
  ASSERT_TRUE(access->has_value());
  EXPECT_EQ((*access)->user_id, user_id_);
  auto grants = oauth_->ListGrants(user_id_);
  ASSERT_TRUE(grants.ok()) << grants.status();
  ASSERT_EQ(grants->size(), 1u);
  EXPECT_EQ((*grants)[0].id, (*access)->grant_id);
  EXPECT_EQ((*grants)[0].client_name, "agent");

  auto again = oauth_->ExchangeCode(code, client_id_, kRedirect, kVerifier, kResource, now_);
  EXPECT_TRUE(absl::IsUnauthenticated(again.status())) << again.status();
  auto revoked = second->ResolveAccess(tokens->access_token, kResource, now_);
  ASSERT_TRUE(revoked.ok());
  EXPECT_FALSE(revoked->has_value());
  EXPECT_TRUE(absl::IsUnauthenticated(
      second->Refresh(tokens->refresh_token, client_id_, kResource, now_).status()));
  EXPECT_TRUE(oauth_->ListGrants(user_id_)->empty());
}

// A refresh token rotates on one node; the used one presented on the
// other revokes the grant, the new tokens with it.
TEST_P(OAuthTest, AUsedRefreshTokenOnAnotherNodeRevokesTheGrant) {
  auto second = OpenOAuth();
  ASSERT_NE(second, nullptr);
  auto tokens = oauth_->ExchangeCode(Code(now_), client_id_, kRedirect, kVerifier, kResource, now_);
  ASSERT_TRUE(tokens.ok()) << tokens.status();
  auto rotated = oauth_->Refresh(tokens->refresh_token, client_id_, kResource, now_);
  ASSERT_TRUE(rotated.ok()) << rotated.status();
  ASSERT_TRUE(second->ResolveAccess(rotated->access_token, kResource, now_)->has_value());
  auto reused = second->Refresh(tokens->refresh_token, client_id_, kResource, now_);
  EXPECT_TRUE(absl::IsUnauthenticated(reused.status())) << reused.status();
  EXPECT_FALSE(oauth_->ResolveAccess(rotated->access_token, kResource, now_)->has_value());
  EXPECT_FALSE(oauth_->Refresh(rotated->refresh_token, client_id_, kResource, now_).ok());
}

// A user revokes a grant through one node: its tokens stop on the other;
// only the owner can.
TEST_P(OAuthTest, AGrantRevokedOnOneNodeStopsOnTheOther) {
  auto second = OpenOAuth();
  ASSERT_NE(second, nullptr);
  auto tokens = oauth_->ExchangeCode(Code(now_), client_id_, kRedirect, kVerifier, kResource, now_);
  ASSERT_TRUE(tokens.ok()) << tokens.status();
  auto access = oauth_->ResolveAccess(tokens->access_token, kResource, now_);
  ASSERT_TRUE(access.ok() && access->has_value());
  const int64_t grant_id = (*access)->grant_id;
  EXPECT_TRUE(absl::IsNotFound(second->RevokeGrant(user_id_ + 1, grant_id, now_)));
  ASSERT_TRUE(second->RevokeGrant(user_id_, grant_id, now_).ok());
  EXPECT_TRUE(absl::IsNotFound(oauth_->RevokeGrant(user_id_, grant_id, now_)));
  EXPECT_FALSE(oauth_->ResolveAccess(tokens->access_token, kResource, now_)->has_value());
  EXPECT_FALSE(oauth_->Refresh(tokens->refresh_token, client_id_, kResource, now_).ok());
}

// Two nodes exchanging one code at once: one gets tokens, the other finds
// the code used and revokes the grant the first made, every round.
TEST_P(OAuthTest, TwoNodesExchangingOneCodeAtOnceLeaveNoLiveGrant) {
  auto second = OpenOAuth();
  ASSERT_NE(second, nullptr);
  for (int round = 0; round < 30; ++round) {
    const std::string code = Code(now_);
    std::atomic<int> issued{0};
    std::atomic<int> refused{0};
    std::string access_token;
    auto exchange = [&](OAuth* node) {
      auto tokens = node->ExchangeCode(code, client_id_, kRedirect, kVerifier, kResource, now_);
      EXPECT_TRUE(tokens.ok() || absl::IsUnauthenticated(tokens.status())) << tokens.status();
      if (tokens.ok()) {
        access_token = tokens->access_token;
        ++issued;
      } else {
        ++refused;
      }
    };
    std::thread first(exchange, oauth_.get());
    std::thread other(exchange, second.get());
    first.join();
    other.join();
    ASSERT_EQ(issued, 1) << "round " << round;
    ASSERT_EQ(refused, 1) << "round " << round;
    EXPECT_FALSE(oauth_->ResolveAccess(access_token, kResource, now_)->has_value())
        << "round " << round;
  }
  EXPECT_TRUE(oauth_->ListGrants(user_id_)->empty());
}

// Two nodes rotating one refresh token at once: one gets new tokens, the
// other finds it used and revokes the grant, every round.
TEST_P(OAuthTest, TwoNodesRefreshingOneTokenAtOnceLeaveNoLiveGrant) {
  auto second = OpenOAuth();
  ASSERT_NE(second, nullptr);
  for (int round = 0; round < 50; ++round) {
    auto tokens =
        oauth_->ExchangeCode(Code(now_), client_id_, kRedirect, kVerifier, kResource, now_);
    ASSERT_TRUE(tokens.ok()) << tokens.status();
    std::atomic<int> rotated{0};
    std::atomic<int> refused{0};
    std::string access_token;
    auto refresh = [&](OAuth* node) {
      auto fresh = node->Refresh(tokens->refresh_token, client_id_, kResource, now_);
      EXPECT_TRUE(fresh.ok() || absl::IsUnauthenticated(fresh.status())) << fresh.status();
      if (fresh.ok()) {
        access_token = fresh->access_token;
        ++rotated;
      } else {
        ++refused;
      }
    };
    std::thread first(refresh, oauth_.get());
    std::thread other(refresh, second.get());
    first.join();
    other.join();
    ASSERT_EQ(rotated, 1) << "round " << round;
    ASSERT_EQ(refused, 1) << "round " << round;
    EXPECT_FALSE(oauth_->ResolveAccess(access_token, kResource, now_)->has_value())
        << "round " << round;
  }
  EXPECT_TRUE(oauth_->ListGrants(user_id_)->empty());
}

// A deleted user's grants go with them (the cascade).
TEST_P(OAuthTest, ADeletedUsersGrantsGo) {
  auto tokens = oauth_->ExchangeCode(Code(now_), client_id_, kRedirect, kVerifier, kResource, now_);
  ASSERT_TRUE(tokens.ok()) << tokens.status();
  ASSERT_TRUE(store_->DeleteUser(user_id_).ok());
  EXPECT_FALSE(oauth_->ResolveAccess(tokens->access_token, kResource, now_)->has_value());
  EXPECT_TRUE(oauth_->ListGrants(user_id_)->empty());
}

INSTANTIATE_TEST_SUITE_P(Stores, OAuthTest,
                         ::testing::Values(std::string("sqlite"), std::string("postgres")),
                         [](const auto& info) { return info.param; });

}  // namespace
}  // namespace strata::control
