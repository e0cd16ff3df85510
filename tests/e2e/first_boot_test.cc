// The first-boot story with a real server, as a new operator lives it:
// boot -> the printed setup link makes the first admin -> telemetry sent
// with the printed ingest token -> a saved query -> restart -> the account,
// the saved query and the data are all there -> more ingest.

#include <string>

#include "e2e/server_process.h"
#include "fmt/format.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace strata::testing {
namespace {

using ::testing::HasSubstr;

constexpr char kPassword[] = "first boot password";

std::string Spans(std::string_view trace_id, std::string_view name) {
  return fmt::format(
      R"({{"resourceSpans":[{{"resource":{{"attributes":[{{"key":"service.name","value":{{"stringValue":"first-boot"}}}}]}},)"
      R"("scopeSpans":[{{"spans":[{{"traceId":"{}","spanId":"eee19b7ec3c1b174","name":"{}","kind":2,)"
      R"("startTimeUnixNano":"1700000000000000000","endTimeUnixNano":"1700000000100000000"}}]}}]}}]}})",
      trace_id, name);
}

// curl arguments for a JSON POST from a browser-like client with a cookie jar.
std::vector<std::string> BrowserPost(const std::string& url, const std::string& jar,
                                     const std::string& body) {
  return {"-X", "POST", "-c", jar, "-b", jar, "-H", "X-Strata-Request: 1", "--data-binary",
          body, url};
}

TEST(FirstBootTest, SetupIngestSaveRestartAndEverythingIsStillThere) {
  TempDir dir("e2e-first-boot");
  const std::string data = dir.path() + "/data";
  const std::string jar = dir.path() + "/cookies";
  const std::string trace1 = "5b8efff798038103d269b633813fc60c";
  const std::string trace2 = "6c9f00a8a9149214e37ac744924fd71d";
  std::string ingest_token;
  {
    ServerProcess server(data);
    ASSERT_TRUE(server.ready()) << server.output();
    ASSERT_FALSE(server.setup_token().empty()) << server.output();
    ingest_token = server.first_token();
    ASSERT_FALSE(ingest_token.empty());
    const std::string api = "http://" + server.api_address();

    auto [setup, admin] = Curl(BrowserPost(
        api + "/api/v1/auth/setup", jar,
        fmt::format(R"({{"token":"{}","email":"ops@example.com","name":"Ops","password":"{}"}})",
                    server.setup_token(), kPassword)));
    ASSERT_EQ(setup, 201) << admin;
    EXPECT_THAT(admin, HasSubstr(R"("role":"admin")"));

    auto [sent, sent_body] =
        Curl({"-X", "POST", "-H", "Authorization: Bearer " + ingest_token, "-H",
              "Content-Type: application/json", "--data-binary", Spans(trace1, "before restart"),
              "http://" + server.http_address() + "/v1/traces"});
    ASSERT_EQ(sent, 200) << sent_body;

    auto [saved, saved_body] =
        Curl(BrowserPost(api + "/api/v1/saved-queries", jar,
                         R"({"name":"first boot traces","kind":"traces","time_range":"now-1h",)"
                         R"("parameters":{"service":"first-boot"}})"));
    ASSERT_EQ(saved, 201) << saved_body;

    auto [read, trace] = Curl({"-b", jar, api + "/api/v1/traces/" + trace1});
    ASSERT_EQ(read, 200) << trace;
    EXPECT_THAT(trace, HasSubstr("before restart"));
    ASSERT_EQ(server.Stop(), 0) << server.output();
  }
  {
    ServerProcess server(data);
    ASSERT_TRUE(server.ready()) << server.output();
    EXPECT_TRUE(server.setup_token().empty()) << "setup must stay closed: " << server.output();
    EXPECT_TRUE(server.first_token().empty()) << "no second default token";
    const std::string api = "http://" + server.api_address();

    auto [closed, closed_body] = Curl(BrowserPost(
        api + "/api/v1/auth/setup", jar,
        R"({"token":"x","email":"x@example.com","name":"X","password":"twelve chars!"})"));
    EXPECT_EQ(closed, 410) << closed_body;

    // The session survived the restart (it lives in the control database).
    auto [me, me_body] = Curl({"-b", jar, api + "/api/v1/auth/me"});
    EXPECT_EQ(me, 200) << me_body;
    // And the password signs in again.
    auto [login, login_body] = Curl(
        BrowserPost(api + "/api/v1/auth/login", jar,
                    fmt::format(R"({{"email":"ops@example.com","password":"{}"}})", kPassword)));
    ASSERT_EQ(login, 200) << login_body;

    auto [listed, queries] = Curl({"-b", jar, api + "/api/v1/saved-queries"});
    ASSERT_EQ(listed, 200) << queries;
    EXPECT_THAT(queries, HasSubstr(R"("name":"first boot traces")"));
    EXPECT_THAT(queries, HasSubstr(R"("parameters":{"service":"first-boot"})"));

    auto [read, trace] = Curl({"-b", jar, api + "/api/v1/traces/" + trace1});
    ASSERT_EQ(read, 200) << trace;
    EXPECT_THAT(trace, HasSubstr("before restart"));

    auto [sent, sent_body] =
        Curl({"-X", "POST", "-H", "Authorization: Bearer " + ingest_token, "-H",
              "Content-Type: application/json", "--data-binary", Spans(trace2, "after restart"),
              "http://" + server.http_address() + "/v1/traces"});
    ASSERT_EQ(sent, 200) << sent_body;
    auto [read2, trace_after] = Curl({"-b", jar, api + "/api/v1/traces/" + trace2});
    ASSERT_EQ(read2, 200) << trace_after;
    EXPECT_THAT(trace_after, HasSubstr("after restart"));

    auto [audit, events] = Curl({"-b", jar, api + "/api/v1/audit"});
    ASSERT_EQ(audit, 200) << events;
    EXPECT_THAT(events, HasSubstr(R"("action":"auth.setup")"));
    EXPECT_THAT(events, HasSubstr(R"("action":"auth.login")"));
    EXPECT_EQ(server.Stop(), 0) << server.output();
  }
}

}  // namespace
}  // namespace strata::testing
