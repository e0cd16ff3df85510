// OAuth client registration bodies and redirect URIs (oauth_requests.h).

#include "api/oauth_requests.h"

#include <string>

#include "gtest/gtest.h"

namespace strata::api {
namespace {

TEST(OAuthRequestsTest, RedirectUrisAreHttpsOrLoopbackHttp) {
  for (const char* ok : {"https://app.example/cb", "http://127.0.0.1:33418/callback",
                         "http://localhost/cb", "http://[::1]:8080/cb?x=1", "HTTPS://A.example"}) {
    EXPECT_TRUE(CheckRedirectUri(ok).ok()) << ok;
  }
  for (const char* bad :
       {"", "http://evil.example/cb", "http://127.0.0.1.evil.example/cb", "ftp://127.0.0.1/cb",
        "https://app.example/cb#frag", "https://app.example/c b", "https://user@app.example/",
        "https:///path", "javascript:alert(1)", "http://localhost@evil.example/"}) {
    EXPECT_FALSE(CheckRedirectUri(bad).ok()) << bad;
  }
  EXPECT_FALSE(
      CheckRedirectUri("https://a.example/" + std::string(kMaxRedirectUriBytes, 'x')).ok());
}

TEST(OAuthRequestsTest, RegistrationTakesPublicClientsAndIgnoresUnknownMembers) {
  auto parsed = ParseClientRegistration(
      R"({"client_name":"agent","redirect_uris":["http://127.0.0.1:9/cb"],"logo_uri":"x",)"
      R"("token_endpoint_auth_method":"none","grant_types":["authorization_code","refresh_token"]})");
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_EQ(parsed->name, "agent");
  ASSERT_EQ(parsed->redirect_uris.size(), 1u);
  for (
      const char* bad : {
          R"({"redirect_uris":[]})",
          R"({"client_name":"a"})",
          R"({"redirect_uris":"http://127.0.0.1/cb"})",
          R"({"redirect_uris":["http://127.0.0.1/cb"],"token_endpoint_auth_method":"client_secret_basic"})",
          R"({"redirect_uris":["http://127.0.0.1/cb"],"grant_types":["client_credentials"]})",
          R"({"redirect_uris":["http://127.0.0.1/cb"],"response_types":["token"]})",
          R"({"redirect_uris":["http://127.0.0.1/cb"],"client_name":"a\u0001"})",
          R"([1])",
          "not json",
      }) {
    EXPECT_FALSE(ParseClientRegistration(bad).ok()) << bad;
  }
  std::string many = R"({"redirect_uris":[)";
  for (size_t i = 0; i <= kMaxRedirectUris; ++i) {
    many += (i ? "," : "") + std::string(R"("http://127.0.0.1/)") + std::to_string(i) + "\"";
  }
  EXPECT_FALSE(ParseClientRegistration(many + "]}").ok());
  EXPECT_FALSE(ParseClientRegistration(std::string(kMaxRegistrationBytes + 1, ' ')).ok());
}

}  // namespace
}  // namespace strata::api
