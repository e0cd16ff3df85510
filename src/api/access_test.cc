// Who may call what: the route table covers every route, and the whole
// route x caller matrix over a real server, sessions and tokens.

#include "api/access.h"

#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "api/api_server.h"
#include "api/api_test_accounts.h"
#include "control/accounts.h"
#include "control/sqlite_token_store.h"
#include "control/token_authenticator.h"
#include "fmt/format.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "server/http_testing.h"

namespace strata::api {
namespace {

using server::testing::HttpAnswer;
using ::testing::HasSubstr;

TEST(RouteRulesTest, EveryRegisteredRouteHasItsOwnRuleAndEveryRuleIsRegistered) {
  ApiOptions options;
  options.storage = [] { return nullptr; };
  Api api(std::move(options));
  server::HttpRouter router;
  api.AddRoutes(&router);
  const std::vector<server::HttpRouter::RouteInfo> routes = router.Routes();
  ASSERT_FALSE(routes.empty());
  for (const auto& route : routes) {
    bool found = false;
    for (const RouteRule& rule : RouteRules()) {
      found |=
          rule.method == route.method && rule.path == route.path && rule.prefix == route.prefix;
    }
    EXPECT_TRUE(found) << route.method << " " << route.path << " has no row in RouteRules()";
  }
  for (const RouteRule& rule : RouteRules()) {
    bool found = false;
    for (const auto& route : routes) {
      found |=
          rule.method == route.method && rule.path == route.path && rule.prefix == route.prefix;
    }
    EXPECT_TRUE(found) << rule.method << " " << rule.path << " is in the table but not served";
  }
  EXPECT_EQ(AccessFor("GET", "/api/v1/services/checkout/operations"), Access::kRead);
  EXPECT_EQ(AccessFor("GET", "/api/v1/users"), Access::kAdmin);
  EXPECT_EQ(AccessFor("PUT", "/api/v1/users"), std::nullopt);
  EXPECT_EQ(AccessFor("GET", "/api/v1/unknown"), std::nullopt);
}

// One caller of the matrix: the headers it sends, and what it may reach.
struct MatrixCaller {
  std::string name;
  std::vector<std::string> headers;
  std::map<Access, int> denied;  // access -> 401 or 403; absent: allowed
};

class AccessTest : public test_support::SignedInApiTest {
 protected:
  void SetUp() override {
    SignedInApiTest::SetUp();
    auto tokens = control::SqliteTokenStore::Open(db_path());
    ASSERT_TRUE(tokens.ok()) << tokens.status();
    tokens_ = *std::move(tokens);
    for (auto scope :
         {control::TokenScope::kIngest, control::TokenScope::kRead, control::TokenScope::kAdmin}) {
      auto created = tokens_->Create(control::TokenScopeName(scope), scope);
      ASSERT_TRUE(created.ok()) << created.status();
      token_[scope] = created->token;
    }
    auto auth = control::TokenAuthenticator::Create(tokens_.get());
    ASSERT_TRUE(auth.ok()) << auth.status();
    auth_ = *std::move(auth);

    ApiOptions options;
    options.storage = [] { return nullptr; };
    options.authenticate = [this](std::string_view token) { return auth_->Authenticate(token); };
    options.accounts = accounts_.get();
    options.tokens = tokens_.get();
    saved_ = std::make_unique<control::SavedQueries>(store_.get());
    options.saved_queries = saved_.get();
    ASSERT_NO_FATAL_FAILURE(StartApi(std::move(options)));
  }

  // Signs in through the API and returns the session cookie's value.
  std::string Login(const std::string& email) {
    HttpAnswer answer = Call(
        "POST", "/api/v1/auth/login", {"X-Strata-Request: 1"},
        fmt::format(R"({{"email":"{}","password":"{}"}})", email, test_support::kUserPassword));
    EXPECT_EQ(answer.status, 200) << answer.body;
    const std::string cookie = answer.Header("set-cookie");
    const size_t start = cookie.find('=') + 1;
    return cookie.substr(start, cookie.find(';') - start);
  }

  static std::string CookieHeader(const std::string& session) {
    return std::string(kSessionCookie) + "=" + session;
  }

  std::unique_ptr<control::SqliteTokenStore> tokens_;
  std::unique_ptr<control::SavedQueries> saved_;
  std::unique_ptr<control::TokenAuthenticator> auth_;
  std::map<control::TokenScope, std::string> token_;
};

// A concrete request path for a rule (prefix rules get a tail naming
// nothing that exists, so allowed callers change nothing).
std::string PathFor(const RouteRule& rule) {
  if (!rule.prefix) return std::string(rule.path);
  if (rule.path == "/api/v1/traces/") return "/api/v1/traces/0af7651916cd43dd8448eb211c80319c";
  if (rule.path == "/api/v1/services/") return "/api/v1/services/checkout/operations";
  return std::string(rule.path) + "999999";
}

TEST_F(AccessTest, EveryRouteAnswersEveryKindOfCallerAsItsRuleSays) {
  auto setup = accounts_->OpenSetup();
  ASSERT_TRUE(setup.ok() && setup->has_value());
  ASSERT_TRUE(
      accounts_
          ->CompleteSetup(**setup, "admin@example.com", "Admin", test_support::kUserPassword, {})
          .ok());
  AddUser("viewer@example.com", control::Role::kViewer);
  AddUser("operator@example.com", control::Role::kOperator);
  const std::string expired = Login("viewer@example.com");
  ASSERT_TRUE(
      store_->db()
          .Exec("UPDATE sessions SET last_seen_at = 0 WHERE token_hash = ?",
                {control::SqlBlob{std::string(
                    reinterpret_cast<const char*>(control::HashToken(expired).data()), 32)}})
          .ok());
  const std::string revoked = Login("viewer@example.com");
  ASSERT_EQ(Call("POST", "/api/v1/auth/logout",
                 {"Cookie: " + CookieHeader(revoked), "X-Strata-Request: 1"})
                .status,
            204);

  const std::map<Access, int> anonymous = {{Access::kRead, 401},
                                           {Access::kSignedIn, 401},
                                           {Access::kOperator, 401},
                                           {Access::kAdmin, 401}};
  auto bearer = [&](control::TokenScope scope) {
    return std::vector<std::string>{"Authorization: Bearer " + token_[scope]};
  };
  auto cookie = [&](const std::string& session) {
    return std::vector<std::string>{"Cookie: " + CookieHeader(session), "X-Strata-Request: 1"};
  };
  std::vector<MatrixCaller> callers = {
      {"anonymous", {}, anonymous},
      {"viewer",
       cookie(Login("viewer@example.com")),
       {{Access::kOperator, 403}, {Access::kAdmin, 403}}},
      {"operator", cookie(Login("operator@example.com")), {{Access::kAdmin, 403}}},
      {"admin", cookie(Login("admin@example.com")), {}},
      {"ingest token",
       bearer(control::TokenScope::kIngest),
       {{Access::kRead, 403},
        {Access::kSignedIn, 403},
        {Access::kOperator, 403},
        {Access::kAdmin, 403}}},
      {"read token",
       bearer(control::TokenScope::kRead),
       {{Access::kSignedIn, 403}, {Access::kOperator, 403}, {Access::kAdmin, 403}}},
      {"admin token", bearer(control::TokenScope::kAdmin), {{Access::kSignedIn, 403}}},
      {"expired session", cookie(expired), anonymous},
      {"revoked session", cookie(revoked), anonymous},
  };
  // Sign-out last: it ends the caller's session.
  std::vector<RouteRule> rules(RouteRules().begin(), RouteRules().end());
  std::stable_partition(rules.begin(), rules.end(),
                        [](const RouteRule& r) { return r.path != "/api/v1/auth/logout"; });
  int checked = 0;
  for (const MatrixCaller& caller : callers) {
    for (const RouteRule& rule : rules) {
      std::vector<std::string> headers = caller.headers;
      if (rule.method != "GET") headers.push_back("X-Strata-Request: 1");
      const HttpAnswer answer = Call(std::string(rule.method), PathFor(rule), headers);
      const auto denied = caller.denied.find(rule.access);
      const std::string what = fmt::format("{} {} {} ({}): {}", caller.name, rule.method,
                                           PathFor(rule), AccessName(rule.access), answer.body);
      if (rule.access != Access::kPublic && denied != caller.denied.end()) {
        EXPECT_EQ(answer.status, denied->second) << what;
      } else {
        EXPECT_NE(answer.status, 401) << what;
        EXPECT_NE(answer.status, 403) << what;
        EXPECT_NE(answer.status, 0) << what;
      }
      ++checked;
    }
  }
  EXPECT_EQ(checked, static_cast<int>(callers.size() * rules.size()));

  // Denials of callers that presented credentials are audited; anonymous
  // requests without any are not.
  auto events = accounts_->ListAudit(std::nullopt, 1000);
  ASSERT_TRUE(events.ok());
  std::map<std::string, int> denials;
  for (const control::AuditEvent& event : *events) {
    if (event.action == "access.denied") ++denials[event.actor];
  }
  EXPECT_GT(denials["user:viewer@example.com"], 0);
  EXPECT_GT(denials["token:ingest"], 0);
  EXPECT_GT(denials["token:read"], 0);
  EXPECT_GT(denials["anonymous"], 0);  // the expired and revoked sessions
  EXPECT_EQ(denials["user:admin@example.com"], 0);
}

TEST_F(AccessTest, CookieRequestsThatChangeThingsFollowTheBrowserRules) {
  auto setup = accounts_->OpenSetup();
  ASSERT_TRUE(setup.ok() && setup->has_value());
  HttpAnswer created = Call("POST", "/api/v1/auth/setup", {"X-Strata-Request: 1"},
                            fmt::format(R"({{"token":"{}","email":"a@example.com","name":"A",)"
                                        R"("password":"{}"}})",
                                        **setup, test_support::kUserPassword));
  ASSERT_EQ(created.status, 201) << created.body;
  const std::string set_cookie = created.Header("set-cookie");
  EXPECT_THAT(set_cookie, HasSubstr("strata_session="));
  EXPECT_THAT(set_cookie, HasSubstr("HttpOnly"));
  EXPECT_THAT(set_cookie, HasSubstr("SameSite=Lax"));
  EXPECT_THAT(set_cookie, HasSubstr("Path=/"));
  EXPECT_EQ(created.Header("cache-control"), "no-store");
  // Setup is closed now.
  HttpAnswer again = Call("POST", "/api/v1/auth/setup", {"X-Strata-Request: 1"},
                          fmt::format(R"({{"token":"{}","email":"b@example.com","name":"B",)"
                                      R"("password":"{}"}})",
                                      **setup, test_support::kUserPassword));
  EXPECT_EQ(again.status, 410) << again.body;

  const std::string session = Login("a@example.com");
  const std::string cookie = "Cookie: " + CookieHeader(session);
  const std::string body = R"({"email":"b@example.com","name":"B","role":"viewer"})";
  EXPECT_EQ(Call("POST", "/api/v1/users", {cookie}, body).status, 403);
  EXPECT_EQ(Call("POST", "/api/v1/users",
                 {cookie, "X-Strata-Request: 1", "Origin: http://evil.example"}, body)
                .status,
            403);
  EXPECT_EQ(Call("GET", "/api/v1/auth/me", {cookie, "Sec-Fetch-Site: cross-site"}).status, 403);
  // Login without the header is refused too (it sets the cookie).
  EXPECT_EQ(Call("POST", "/api/v1/auth/login", {},
                 fmt::format(R"({{"email":"a@example.com","password":"{}"}})",
                             test_support::kUserPassword))
                .status,
            403);
  // A bearer token needs no browser header.
  EXPECT_EQ(Call("POST", "/api/v1/users",
                 {"Authorization: Bearer " + token_[control::TokenScope::kAdmin]},
                 R"({"email":"c@example.com","name":"C","role":"viewer"})")
                .status,
            201);
  HttpAnswer made = Call("POST", "/api/v1/users",
                         {cookie, "X-Strata-Request: 1", fmt::format("Origin: {}", base_),
                          "Sec-Fetch-Site: same-origin"},
                         body);
  ASSERT_EQ(made.status, 201) << made.body;
  EXPECT_THAT(made.body, HasSubstr(R"("url":")" + base_ + "/password#token="));
  HttpAnswer me = Call("GET", "/api/v1/auth/me", {cookie});
  EXPECT_EQ(me.status, 200);
  EXPECT_THAT(me.body, HasSubstr(R"("email":"a@example.com")"));
  EXPECT_THAT(me.body, HasSubstr(R"("role":"admin")"));
}

TEST_F(AccessTest, RoleChangesEndSessionsTheLastAdminStaysAndSignInIsLimited) {
  auto setup = accounts_->OpenSetup();
  ASSERT_TRUE(setup.ok() && setup->has_value());
  auto admin = accounts_->CompleteSetup(**setup, "admin@example.com", "Admin",
                                        test_support::kUserPassword, {});
  ASSERT_TRUE(admin.ok());
  const control::SignedIn viewer = AddUser("viewer@example.com", control::Role::kViewer);
  const std::string viewer_cookie = "Cookie: " + CookieHeader(Login("viewer@example.com"));
  const std::vector<std::string> as_admin = {"Cookie: " + CookieHeader(Login("admin@example.com")),
                                             "X-Strata-Request: 1"};
  EXPECT_EQ(Call("GET", "/api/v1/auth/me", {viewer_cookie}).status, 200);
  HttpAnswer promoted = Call("PATCH", fmt::format("/api/v1/users/{}", viewer.user.id), as_admin,
                             R"({"role":"operator"})");
  ASSERT_EQ(promoted.status, 200) << promoted.body;
  EXPECT_THAT(promoted.body, HasSubstr(R"("role":"operator")"));
  EXPECT_EQ(Call("GET", "/api/v1/auth/me", {viewer_cookie}).status, 401);

  HttpAnswer last = Call("PATCH", fmt::format("/api/v1/users/{}", admin->user.id), as_admin,
                         R"({"active":false})");
  EXPECT_EQ(last.status, 409) << last.body;
  EXPECT_EQ(Call("DELETE", fmt::format("/api/v1/users/{}", admin->user.id), as_admin).status, 409);
  EXPECT_EQ(
      Call("PATCH", fmt::format("/api/v1/users/{}", admin->user.id), as_admin, R"({"role":"x"})")
          .status,
      400);

  HttpAnswer wrong;
  for (int i = 0; i < 6; ++i) {
    wrong = Call("POST", "/api/v1/auth/login", {"X-Strata-Request: 1"},
                 R"({"email":"admin@example.com","password":"not the password"})");
    EXPECT_EQ(wrong.status, 401);
  }
  EXPECT_EQ(wrong.body, R"({"error":"wrong email or password"})");
  HttpAnswer limited = Call("POST", "/api/v1/auth/login", {"X-Strata-Request: 1"},
                            fmt::format(R"({{"email":"admin@example.com","password":"{}"}})",
                                        test_support::kUserPassword));
  EXPECT_EQ(limited.status, 429);
  EXPECT_EQ(limited.Header("retry-after"), "1");
  clock_.Advance(absl::Seconds(1));
  EXPECT_EQ(Call("POST", "/api/v1/auth/login", {"X-Strata-Request: 1"},
                 fmt::format(R"({{"email":"admin@example.com","password":"{}"}})",
                             test_support::kUserPassword))
                .status,
            200);

  HttpAnswer audit = Call("GET", "/api/v1/audit?limit=2", as_admin);
  ASSERT_EQ(audit.status, 200) << audit.body;
  EXPECT_THAT(audit.body, HasSubstr(R"("action":"auth.login")"));
  EXPECT_THAT(audit.body, ::testing::Not(HasSubstr(R"("next_before":null)")));
}

TEST_F(AccessTest, AdminsManageTokensThroughTheApi) {
  const std::vector<std::string> admin = {"Authorization: Bearer " +
                                          token_[control::TokenScope::kAdmin]};
  HttpAnswer created =
      Call("POST", "/api/v1/tokens", admin, R"({"name":"grafana","scope":"read"})");
  ASSERT_EQ(created.status, 201) << created.body;
  EXPECT_THAT(created.body, HasSubstr(R"("token":"strata_)"));
  EXPECT_EQ(Call("POST", "/api/v1/tokens", admin, R"({"name":"grafana","scope":"read"})").status,
            409);
  HttpAnswer listed = Call("GET", "/api/v1/tokens", admin);
  EXPECT_THAT(listed.body, HasSubstr(R"("name":"grafana")"));
  EXPECT_THAT(listed.body, ::testing::Not(HasSubstr("strata_")));  // never the token again
  HttpAnswer revoked = Call("DELETE", "/api/v1/tokens/4", admin);
  EXPECT_EQ(revoked.status, 200) << revoked.body;
  EXPECT_THAT(revoked.body, ::testing::Not(HasSubstr(R"("revoked_at":null)")));
  EXPECT_EQ(Call("DELETE", "/api/v1/tokens/999", admin).status, 404);
}

TEST_F(AccessTest, PeopleSaveQueriesAndShareThemByRole) {
  auto setup = accounts_->OpenSetup();
  ASSERT_TRUE(setup.ok() && setup->has_value());
  ASSERT_TRUE(
      accounts_->CompleteSetup(**setup, "admin@example.com", "A", test_support::kUserPassword, {})
          .ok());
  AddUser("viewer@example.com", control::Role::kViewer);
  const std::vector<std::string> viewer = {"Cookie: " + CookieHeader(Login("viewer@example.com")),
                                           "X-Strata-Request: 1"};
  const std::vector<std::string> admin = {"Cookie: " + CookieHeader(Login("admin@example.com")),
                                          "X-Strata-Request: 1"};
  const std::string body =
      R"({"name":"slow checkout","kind":"traces","time_range":"now-1h",)"
      R"("parameters":{"service":"checkout","min_duration":"500ms","tags":["a", "b"]}})";
  HttpAnswer created = Call("POST", "/api/v1/saved-queries", viewer, body);
  ASSERT_EQ(created.status, 201) << created.body;
  EXPECT_THAT(created.body, HasSubstr(R"("owner":"viewer@example.com")"));
  EXPECT_THAT(
      created.body,
      HasSubstr(R"("parameters":{"service":"checkout","min_duration":"500ms","tags":["a","b"]}})"));
  EXPECT_EQ(Call("POST", "/api/v1/saved-queries", viewer, body).status, 409);
  EXPECT_EQ(Call("POST", "/api/v1/saved-queries", viewer,
                 R"({"name":"x","kind":"traces","time_range":"now-1h","parameters":"no"})")
                .status,
            400);
  std::string shared = body;
  shared.replace(shared.find("slow checkout"), 13, "team view");
  shared.insert(1, R"("shared":true,)");
  EXPECT_EQ(Call("POST", "/api/v1/saved-queries", viewer, shared).status, 403);
  HttpAnswer team = Call("POST", "/api/v1/saved-queries", admin, shared);
  ASSERT_EQ(team.status, 201) << team.body;

  HttpAnswer admin_list = Call("GET", "/api/v1/saved-queries", admin);
  EXPECT_THAT(admin_list.body, HasSubstr("team view"));
  EXPECT_THAT(admin_list.body, ::testing::Not(HasSubstr("slow checkout")));
  HttpAnswer viewer_list = Call("GET", "/api/v1/saved-queries", viewer);
  EXPECT_THAT(viewer_list.body, HasSubstr("team view"));
  EXPECT_THAT(viewer_list.body, HasSubstr("slow checkout"));
  EXPECT_EQ(Call("PATCH", "/api/v1/saved-queries/1", viewer, R"({"time_range":"now-2h"})").status,
            200);
  EXPECT_EQ(Call("GET", "/api/v1/saved-queries/1", admin).status, 404);
  EXPECT_EQ(Call("DELETE", "/api/v1/saved-queries/2", viewer).status, 403);
  EXPECT_EQ(Call("DELETE", "/api/v1/saved-queries/1", viewer).status, 204);
  // Tokens have no saved queries.
  EXPECT_EQ(Call("GET", "/api/v1/saved-queries",
                 {"Authorization: Bearer " + token_[control::TokenScope::kAdmin]})
                .status,
            403);
}

TEST_F(AccessTest, AnMcpSessionIsBoundToTheBrowserSessionOrTokenThatMadeIt) {
  const control::SignedIn first = AddUser("first@example.com", control::Role::kViewer);
  const control::SignedIn second = AddUser("second@example.com", control::Role::kViewer);
  auto mcp = [&](const std::string& credential, const std::string& session,
                 const std::string& body) {
    std::vector<std::string> headers = {credential, "X-Strata-Request: 1",
                                        "Content-Type: application/json"};
    if (!session.empty()) headers.push_back("Mcp-Session-Id: " + session);
    return Call("POST", "/mcp", headers, body);
  };
  const std::string a = "Cookie: " + CookieHeader(first.session_token);
  const std::string b = "Cookie: " + CookieHeader(second.session_token);
  const std::string token = "Authorization: Bearer " + token_[control::TokenScope::kRead];
  HttpAnswer made = mcp(a, "",
                        R"({"jsonrpc":"2.0","id":1,"method":"initialize","params":)"
                        R"({"protocolVersion":"2025-06-18","capabilities":{},)"
                        R"("clientInfo":{"name":"t","version":"1"}}})");
  ASSERT_EQ(made.status, 200) << made.body;
  const std::string id = made.Header("mcp-session-id");
  ASSERT_FALSE(id.empty());
  const std::string ping = R"({"jsonrpc":"2.0","id":2,"method":"ping"})";
  EXPECT_EQ(mcp(b, id, ping).status, 404);
  EXPECT_EQ(mcp(token, id, ping).status, 404);
  EXPECT_EQ(mcp(a, id, ping).status, 200);
}

}  // namespace
}  // namespace strata::api
