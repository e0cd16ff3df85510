#include "control/token.h"

#include <set>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace strata::control {
namespace {

using ::testing::HasSubstr;
using ::testing::MatchesRegex;
using ::testing::StartsWith;

TEST(TokenTest, ScopeNamesRoundTrip) {
  for (TokenScope scope : {TokenScope::kIngest, TokenScope::kRead, TokenScope::kAdmin}) {
    auto parsed = ParseTokenScope(TokenScopeName(scope));
    ASSERT_TRUE(parsed.ok()) << parsed.status();
    EXPECT_EQ(*parsed, scope);
  }
  EXPECT_EQ(TokenScopeName(TokenScope::kIngest), "ingest");
  auto bad = ParseTokenScope("Ingest");
  EXPECT_EQ(bad.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(bad.status().message()), HasSubstr("ingest, read and admin"));
}

TEST(TokenTest, AdminAllowsEveryScopeAndOthersOnlyTheirOwn) {
  EXPECT_TRUE(ScopeAllows(TokenScope::kAdmin, TokenScope::kIngest));
  EXPECT_TRUE(ScopeAllows(TokenScope::kAdmin, TokenScope::kRead));
  EXPECT_TRUE(ScopeAllows(TokenScope::kIngest, TokenScope::kIngest));
  EXPECT_FALSE(ScopeAllows(TokenScope::kRead, TokenScope::kIngest));
  EXPECT_FALSE(ScopeAllows(TokenScope::kIngest, TokenScope::kRead));
  EXPECT_FALSE(ScopeAllows(TokenScope::kIngest, TokenScope::kAdmin));
}

TEST(TokenTest, GeneratedTokensUseThePrefixAndTheUnambiguousAlphabet) {
  std::set<std::string> seen;
  for (int i = 0; i < 100; ++i) {
    const std::string token = GenerateToken();
    EXPECT_EQ(token.size(), kTokenLength);
    EXPECT_THAT(token, StartsWith("strata_"));
    EXPECT_THAT(token.substr(kTokenPrefix.size()), MatchesRegex("[0-9a-hjkmnp-tv-z]{52}"));
    seen.insert(token);
  }
  EXPECT_EQ(seen.size(), 100u);
}

TEST(TokenTest, HashIsBlake2b256OfTheText) {
  // BLAKE2b-256 of the empty string (RFC 7693 parameters, no key).
  const TokenHash empty = HashToken("");
  const unsigned char expected[] = {0x0e, 0x57, 0x51, 0xc0, 0x26, 0xe5, 0x43, 0xb2,
                                    0xe8, 0xab, 0x2e, 0xb0, 0x60, 0x99, 0xda, 0xa1,
                                    0xd1, 0xe5, 0xdf, 0x47, 0x77, 0x8f, 0x77, 0x87,
                                    0xfa, 0xab, 0x45, 0xcd, 0xf1, 0x2f, 0xe3, 0xa8};
  EXPECT_TRUE(std::equal(empty.begin(), empty.end(), std::begin(expected)));
  EXPECT_EQ(HashToken("strata_a"), HashToken("strata_a"));
  EXPECT_NE(HashToken("strata_a"), HashToken("strata_b"));
}

TEST(TokenTest, NameRules) {
  EXPECT_TRUE(ValidateTokenName("ci-collector").ok());
  EXPECT_TRUE(ValidateTokenName("team's \"prod\" agent").ok());
  EXPECT_TRUE(ValidateTokenName("caf\xc3\xa9 7").ok());
  EXPECT_TRUE(ValidateTokenName(std::string(kMaxTokenNameBytes, 'x')).ok());
  EXPECT_TRUE(ValidateTokenName("12a").ok());
  for (const std::string& bad :
       {std::string(), std::string(kMaxTokenNameBytes + 1, 'x'), std::string("tab\there"),
        std::string("new\nline"), std::string("del\x7f"), std::string("c1\xc2\x85"),
        std::string("nul\0x", 5), std::string("bad\xff utf8"), std::string("overlong \xc0\xaf"),
        std::string("123")}) {
    absl::Status status = ValidateTokenName(bad);
    EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << "name: " << bad;
  }
}

}  // namespace
}  // namespace strata::control
