#include "api/forwarded.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace strata::api {
namespace {

server::HttpRequest From(std::string peer,
                         std::vector<std::pair<std::string, std::string>> headers) {
  server::HttpRequest request;
  request.method = "GET";
  request.target = "/api/v1/auth/me";
  request.peer_address = std::move(peer);
  request.headers = std::move(headers);
  request.headers.emplace_back("Host", "10.0.0.5:7520");
  return request;
}

TEST(ForwardedTest, TrustedProxiesParseAsAddressesAndNetworks) {
  auto parsed = ParseTrustedProxies(" 10.0.0.1, 192.168.0.0/16,::1 ,fd00::/8");
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_EQ(parsed->size(), 4u);
  EXPECT_TRUE(AddressIn("10.0.0.1", *parsed));
  EXPECT_FALSE(AddressIn("10.0.0.2", *parsed));
  EXPECT_TRUE(AddressIn("192.168.200.7", *parsed));
  EXPECT_TRUE(AddressIn("::ffff:192.168.1.1", *parsed));  // IPv4-mapped, as sockets write it
  EXPECT_TRUE(AddressIn("[::1]", *parsed));
  EXPECT_TRUE(AddressIn("fd12:3456::1", *parsed));
  EXPECT_FALSE(AddressIn("fe80::1", *parsed));
  EXPECT_FALSE(AddressIn("not an address", *parsed));
  EXPECT_TRUE(ParseTrustedProxies("").ok());
  EXPECT_TRUE(ParseTrustedProxies("0.0.0.0/0")->size() == 1);
  for (const char* bad : {"10.0.0.0/33", "::/129", "10.0.0/8", "proxy.example.com", "10.0.0.1/",
                          "10.0.0.1/-1", "1.2.3.4,,x"}) {
    EXPECT_EQ(ParseTrustedProxies(bad).status().code(), absl::StatusCode::kInvalidArgument) << bad;
  }
}

TEST(ForwardedTest, HeadersAreBelievedOnlyFromTrustedProxies) {
  const std::vector<IpNetwork> trusted = *ParseTrustedProxies("10.0.0.0/24");
  const std::vector<std::pair<std::string, std::string>> forwarded = {
      {"X-Forwarded-For", "203.0.113.9, 10.0.0.7"},
      {"X-Forwarded-Proto", "https"},
      {"X-Forwarded-Host", "strata.example.com"}};

  const RequestView direct = ViewOf(From("198.51.100.4", forwarded), trusted, false);
  EXPECT_EQ(direct.address, "198.51.100.4");
  EXPECT_FALSE(direct.secure);
  EXPECT_EQ(direct.host, "10.0.0.5:7520");

  const RequestView proxied = ViewOf(From("10.0.0.2", forwarded), trusted, false);
  EXPECT_EQ(proxied.address, "203.0.113.9");  // 10.0.0.7 is a proxy too
  EXPECT_TRUE(proxied.secure);
  EXPECT_EQ(proxied.host, "strata.example.com");

  // A client that sends its own X-Forwarded-For through the proxy cannot
  // pick its address: the rightmost untrusted entry wins.
  const RequestView spoofed =
      ViewOf(From("10.0.0.2", {{"X-Forwarded-For", "127.0.0.1, 203.0.113.9"}}), trusted, false);
  EXPECT_EQ(spoofed.address, "203.0.113.9");
  // Garbage stops the walk at the last good hop.
  const RequestView garbage =
      ViewOf(From("10.0.0.2", {{"X-Forwarded-For", "203.0.113.9, junk"}}), trusted, false);
  EXPECT_EQ(garbage.address, "10.0.0.2");
  // No proxies configured: nothing is believed.
  EXPECT_EQ(ViewOf(From("10.0.0.2", forwarded), {}, false).address, "10.0.0.2");
  // A TLS listener is secure whatever the headers say.
  EXPECT_TRUE(ViewOf(From("198.51.100.4", {}), trusted, true).secure);
}

}  // namespace
}  // namespace strata::api
