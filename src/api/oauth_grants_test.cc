// A signed-in user's OAuth grants through the API (docs/api.md, "OAuth
// grants"): the list shows each client they consented to, and revoking a
// grant refuses its access token and its refresh token at once; another
// user's grant is 404 and stays working; a token caller is refused.

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "api/api_server.h"
#include "api/api_test_accounts.h"
#include "control/oauth.h"
#include "fmt/format.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "server/http_testing.h"

namespace strata::api {
namespace {

using server::testing::HttpAnswer;
using ::testing::HasSubstr;
using ::testing::Not;

constexpr char kResource[] = "http://127.0.0.1:7520/mcp";
constexpr char kRedirect[] = "http://127.0.0.1:9/cb";
constexpr char kVerifier[] = "a-verifier-of-forty-three-characters-or-more-0123";

class OAuthGrantsTest : public test_support::SignedInApiTest {
 protected:
  void SetUp() override {
    SignedInApiTest::SetUp();
    auto oauth = control::OAuth::Open(db_path(), clock_.Now());
    ASSERT_TRUE(oauth.ok()) << oauth.status();
    oauth_ = *std::move(oauth);
    ApiOptions options;
    options.storage = [] { return nullptr; };
    options.authenticate = [](std::string_view token) -> absl::StatusOr<control::TokenScope> {
      if (token == "read-token") return control::TokenScope::kRead;
      return absl::UnauthenticatedError("unknown token");
    };
    options.accounts = accounts_.get();
    options.oauth = oauth_.get();
    options.now = [this] { return absl::ToUnixNanos(clock_.Now()); };
    ASSERT_NO_FATAL_FAILURE(StartApi(std::move(options)));
  }

  // `user` consents to a new client named `name`: its tokens.
  control::OAuthTokens Consent(int64_t user, const std::string& name) {
    auto client = oauth_->RegisterClient(name, {kRedirect}, clock_.Now());
    EXPECT_TRUE(client.ok()) << client.status();
    auto code = oauth_->IssueCode(
        control::OAuthApproval{.client_id = client->client_id,
                               .user_id = user,
                               .redirect_uri = kRedirect,
                               .code_challenge = control::PkceChallenge(kVerifier),
                               .resource = kResource},
        clock_.Now());
    EXPECT_TRUE(code.ok()) << code.status();
    auto tokens = oauth_->ExchangeCode(*code, client->client_id, kRedirect, kVerifier, kResource,
                                       clock_.Now());
    EXPECT_TRUE(tokens.ok()) << tokens.status();
    client_ids_[name] = client->client_id;
    return *std::move(tokens);
  }

  bool AccessWorks(const control::OAuthTokens& tokens) {
    auto access = oauth_->ResolveAccess(tokens.access_token, kResource, clock_.Now());
    EXPECT_TRUE(access.ok()) << access.status();
    return access.ok() && access->has_value();
  }

  std::unique_ptr<control::OAuth> oauth_;
  std::map<std::string, std::string> client_ids_;
};

TEST_F(OAuthGrantsTest, ARevokedGrantsAccessAndRefreshTokensAreRefused) {
  const control::SignedIn alice = AddUser("alice@example.com");
  const control::SignedIn bob = AddUser("bob@example.com");
  const control::OAuthTokens editor = Consent(alice.user.id, "editor agent");
  clock_.Advance(absl::Minutes(1));
  const control::OAuthTokens cli = Consent(alice.user.id, "cli agent");
  const control::OAuthTokens bobs = Consent(bob.user.id, "bob's agent");

  HttpAnswer listed = Call("GET", "/api/v1/auth/me/oauth-grants", As(alice));
  ASSERT_EQ(listed.status, 200) << listed.body;
  EXPECT_EQ(listed.Header("cache-control"), "no-store");
  // Newest first; only alice's.
  EXPECT_THAT(listed.body, HasSubstr(fmt::format(
                               R"({{"grants":[{{"id":2,"client_id":"{}","client_name":"cli agent",)"
                               R"("resource":"{}","created_at":"2025-06-15T15:07:40.000Z",)"
                               R"("last_issued_at":"2025-06-15T15:07:40.000Z"}},{{"id":1,)",
                               client_ids_["cli agent"], kResource)));
  EXPECT_THAT(listed.body, HasSubstr(R"("client_name":"editor agent")"));
  EXPECT_THAT(listed.body, Not(HasSubstr("bob's agent")));

  // Bob cannot revoke alice's grant, nor alice bob's.
  EXPECT_EQ(Call("DELETE", "/api/v1/auth/me/oauth-grants/1", As(bob)).status, 404);
  EXPECT_EQ(Call("DELETE", "/api/v1/auth/me/oauth-grants/3", As(alice)).status, 404);
  // A token is not a person: the route needs a session.
  EXPECT_EQ(
      Call("DELETE", "/api/v1/auth/me/oauth-grants/1", {"Authorization: Bearer read-token"}).status,
      403);
  EXPECT_TRUE(AccessWorks(editor));

  EXPECT_EQ(Call("DELETE", "/api/v1/auth/me/oauth-grants/1", As(alice)).status, 204);
  EXPECT_FALSE(AccessWorks(editor));
  auto refreshed =
      oauth_->Refresh(editor.refresh_token, client_ids_["editor agent"], kResource, clock_.Now());
  EXPECT_TRUE(absl::IsUnauthenticated(refreshed.status())) << refreshed.status();
  // The others keep working, and the list no longer shows it.
  EXPECT_TRUE(AccessWorks(cli));
  EXPECT_TRUE(AccessWorks(bobs));
  EXPECT_TRUE(
      oauth_->Refresh(cli.refresh_token, client_ids_["cli agent"], kResource, clock_.Now()).ok());
  listed = Call("GET", "/api/v1/auth/me/oauth-grants", As(alice));
  EXPECT_THAT(listed.body, Not(HasSubstr("editor agent")));
  EXPECT_THAT(listed.body, HasSubstr("cli agent"));
  // Revoking twice: it is gone.
  EXPECT_EQ(Call("DELETE", "/api/v1/auth/me/oauth-grants/1", As(alice)).status, 404);
  EXPECT_EQ(Call("DELETE", "/api/v1/auth/me/oauth-grants/x", As(alice)).status, 404);
  // The audit log says who revoked what.
  auto audit = accounts_->ListAudit(std::nullopt, 10);
  ASSERT_TRUE(audit.ok()) << audit.status();
  bool found = false;
  for (const auto& event : *audit)
    found |= event.action == "oauth.revoke" && event.target == "grant:1";
  EXPECT_TRUE(found);
}

}  // namespace
}  // namespace strata::api
