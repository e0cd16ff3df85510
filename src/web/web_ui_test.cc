#include "web/web_ui.h"

#include <regex>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "server/gzip.h"

namespace strata::web {
namespace {

using ::testing::HasSubstr;

constexpr EmbeddedAsset kAssets[] = {
    {"/index.html", "text/html; charset=utf-8", "\"index-etag\"", "<html>app</html>", "GZ-INDEX",
     "BR-INDEX"},
    {"/assets/main-ABC.js", "text/javascript; charset=utf-8", "\"js-etag\"", "console.log(1)",
     "GZ-JS", "BR-JS"},
};

server::HttpRequest Get(std::string target,
                        std::vector<std::pair<std::string, std::string>> headers = {}) {
  server::HttpRequest request;
  request.method = "GET";
  request.target = std::move(target);
  request.headers = std::move(headers);
  return request;
}

std::string HeaderOf(const server::HttpResponse& response, std::string_view name) {
  for (const auto& [key, value] : response.headers) {
    if (key == name) return value;
  }
  return "";
}

TEST(WebUiTest, AssetsAreImmutableAndTheAppRevalidates) {
  const server::HttpResponse js = AnswerWebRequest(Get("/assets/main-ABC.js"), kAssets);
  EXPECT_EQ(js.status, 200);
  EXPECT_EQ(js.body, "console.log(1)");
  EXPECT_EQ(js.content_type, "text/javascript; charset=utf-8");
  EXPECT_EQ(HeaderOf(js, "Cache-Control"), "public, max-age=31536000, immutable");
  EXPECT_EQ(HeaderOf(js, "ETag"), "\"js-etag\"");

  for (const char* path : {"/", "/services", "/traces/abc?span=1", "/setup"}) {
    const server::HttpResponse app = AnswerWebRequest(Get(path), kAssets);
    EXPECT_EQ(app.status, 200) << path;
    EXPECT_EQ(app.body, "<html>app</html>") << path;
    EXPECT_EQ(HeaderOf(app, "Cache-Control"), "no-cache") << path;
    EXPECT_EQ(HeaderOf(app, "ETag"), "\"index-etag\"") << path;
  }
  // An unknown asset is a 404, never the app.
  const server::HttpResponse missing = AnswerWebRequest(Get("/assets/main-OLD.js"), kAssets);
  EXPECT_EQ(missing.status, 404);
  EXPECT_THAT(missing.body, ::testing::Not(HasSubstr("<html>")));
  server::HttpRequest post = Get("/services");
  post.method = "POST";
  const server::HttpResponse refused = AnswerWebRequest(post, kAssets);
  EXPECT_EQ(refused.status, 405);
  EXPECT_EQ(HeaderOf(refused, "Allow"), "GET");
}

TEST(WebUiTest, BrotliThenGzipThenIdentityAndAlwaysVary) {
  struct Case {
    std::string accept;
    std::string body;
    std::string encoding;
  };
  const std::vector<Case> cases = {
      {"gzip, deflate, br", "BR-JS", "br"},
      {"br;q=0.5, gzip", "BR-JS", "br"},
      {"gzip", "GZ-JS", "gzip"},
      {"br;q=0, gzip", "GZ-JS", "gzip"},
      {"*", "BR-JS", "br"},
      {"identity", "console.log(1)", ""},
      {"", "console.log(1)", ""},
      {"br;q=0, gzip;q=0", "console.log(1)", ""},
  };
  for (const Case& c : cases) {
    const server::HttpResponse answer =
        AnswerWebRequest(Get("/assets/main-ABC.js", {{"Accept-Encoding", c.accept}}), kAssets);
    EXPECT_EQ(answer.body, c.body) << c.accept;
    EXPECT_EQ(HeaderOf(answer, "Content-Encoding"), c.encoding) << c.accept;
    EXPECT_EQ(HeaderOf(answer, "Vary"), "Accept-Encoding") << c.accept;
  }
}

TEST(WebUiTest, IfNoneMatchGets304WithoutABody) {
  for (const char* tag : {"\"index-etag\"", "W/\"index-etag\"", "\"other\", \"index-etag\"", "*"}) {
    const server::HttpResponse answer =
        AnswerWebRequest(Get("/signin", {{"If-None-Match", tag}}), kAssets);
    EXPECT_EQ(answer.status, 304) << tag;
    EXPECT_TRUE(answer.body.empty()) << tag;
    EXPECT_EQ(HeaderOf(answer, "ETag"), "\"index-etag\"") << tag;
  }
  EXPECT_EQ(AnswerWebRequest(Get("/signin", {{"If-None-Match", "\"js-etag\""}}), kAssets).status,
            200);
}

TEST(WebUiTest, EveryAnswerCarriesTheSecurityHeaders) {
  for (const char* path : {"/", "/assets/main-ABC.js", "/assets/nope.js"}) {
    const server::HttpResponse answer = AnswerWebRequest(Get(path), kAssets);
    EXPECT_EQ(HeaderOf(answer, "Content-Security-Policy"), kContentSecurityPolicy) << path;
    EXPECT_EQ(HeaderOf(answer, "X-Content-Type-Options"), "nosniff") << path;
    EXPECT_EQ(HeaderOf(answer, "Referrer-Policy"), "no-referrer") << path;
  }
  // The policy allows nothing inline and nothing from elsewhere.
  EXPECT_THAT(std::string(kContentSecurityPolicy), HasSubstr("default-src 'self'"));
  EXPECT_THAT(std::string(kContentSecurityPolicy), ::testing::Not(HasSubstr("unsafe")));
  EXPECT_THAT(std::string(kContentSecurityPolicy), HasSubstr("frame-ancestors 'none'"));
}

// The real build: index.html names its script, style and icon, each of
// those exists, every other file is a chunk a script imports, and each
// gzip copy inflates to the file itself.
TEST(WebUiTest, TheEmbeddedBuildIsWholeAndItsCopiesAreTheSameBytes) {
  const std::span<const EmbeddedAsset> assets = EmbeddedAssets();
  const EmbeddedAsset* index = nullptr;
  for (const EmbeddedAsset& asset : assets) {
    if (asset.path == "/index.html") index = &asset;
    auto inflated = server::GunzipLimited(asset.gzip, 64 << 20);
    ASSERT_TRUE(inflated.ok()) << asset.path << ": " << inflated.status();
    EXPECT_EQ(*inflated, asset.identity) << asset.path;
    EXPECT_FALSE(asset.brotli.empty()) << asset.path;
    EXPECT_EQ(asset.etag.front(), '"');
  }
  ASSERT_NE(index, nullptr);
  const std::string html(index->identity);
  const std::regex reference(R"re((?:src|href)="(/assets/[^"]+)")re");
  int named = 0;
  for (auto it = std::sregex_iterator(html.begin(), html.end(), reference);
       it != std::sregex_iterator(); ++it) {
    const std::string path = (*it)[1].str();
    bool found = false;
    for (const EmbeddedAsset& asset : assets) found |= asset.path == path;
    EXPECT_TRUE(found) << path << " is named by index.html but not embedded";
    ++named;
  }
  EXPECT_GE(named, 3);  // script, style, icon
  // Every other file is a chunk a script imports by name (the SQL editor).
  for (const EmbeddedAsset& asset : assets) {
    if (asset.path == "/index.html" || html.find(asset.path) != std::string::npos) continue;
    const std::string_view name = asset.path.substr(asset.path.rfind('/') + 1);
    bool imported = false;
    for (const EmbeddedAsset& other : assets) {
      imported |= other.path != asset.path && other.path.ends_with(".js") &&
                  other.identity.find(name) != std::string_view::npos;
    }
    EXPECT_TRUE(imported) << asset.path << " is embedded but nothing names it";
  }
  // No inline script: the CSP would block it.
  EXPECT_EQ(html.find("<script>"), std::string::npos);
}

}  // namespace
}  // namespace strata::web
