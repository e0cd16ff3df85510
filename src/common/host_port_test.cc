#include "common/host_port.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace strata {
namespace {

TEST(HostPortTest, ParsesHostAndPort) {
  auto hp = ParseHostPort("127.0.0.1:4317");
  ASSERT_TRUE(hp.ok()) << hp.status();
  EXPECT_EQ(hp->host, "127.0.0.1");
  EXPECT_EQ(hp->port, 4317);
}

TEST(HostPortTest, EmptyHostMeansAllInterfaces) {
  auto hp = ParseHostPort(":7520");
  ASSERT_TRUE(hp.ok()) << hp.status();
  EXPECT_EQ(hp->host, "");
  EXPECT_EQ(hp->port, 7520);
}

TEST(HostPortTest, ParsesBracketedIpv6) {
  auto hp = ParseHostPort("[::1]:4318");
  ASSERT_TRUE(hp.ok()) << hp.status();
  EXPECT_EQ(hp->host, "::1");
  EXPECT_EQ(hp->port, 4318);
}

TEST(HostPortTest, RejectsBadInputWithReason) {
  for (const char* bad : {"localhost", "host:", "host:-1", "host:65536", "host:12ab", "::1:80",
                          "[::1]80", "[::1", "[]:80"}) {
    auto hp = ParseHostPort(bad);
    EXPECT_FALSE(hp.ok()) << bad;
    EXPECT_EQ(hp.status().code(), absl::StatusCode::kInvalidArgument) << bad;
    EXPECT_THAT(std::string(hp.status().message()), ::testing::HasSubstr(bad));
  }
}

TEST(HostPortTest, UrlIsRefusedAsNotHostPort) {
  for (const char* url : {"http://127.0.0.1:4318", "https://[::1]:7520", "http://localhost"}) {
    auto hp = ParseHostPort(url);
    ASSERT_FALSE(hp.ok()) << url;
    EXPECT_THAT(std::string(hp.status().message()),
                ::testing::HasSubstr("give host:port, not a URL"))
        << url;
    EXPECT_THAT(std::string(hp.status().message()), ::testing::Not(::testing::HasSubstr("IPv6")));
  }
}

}  // namespace
}  // namespace strata
