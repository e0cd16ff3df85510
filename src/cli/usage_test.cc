#include "cli/usage.h"

#include "gtest/gtest.h"

namespace strata::cli {
namespace {

TEST(UsageTest, EditDistanceCountsSingleCharacterEdits) {
  EXPECT_EQ(EditDistance("serv", "serve"), 1u);
  EXPECT_EQ(EditDistance("crate", "create"), 1u);
  EXPECT_EQ(EditDistance("verfiy", "verify"), 2u);
  EXPECT_EQ(EditDistance("", "sql"), 3u);
  EXPECT_EQ(EditDistance("token", "token"), 0u);
}

TEST(UsageTest, NearestNameIsSuggestedOnlyWhenClose) {
  const std::vector<std::string> commands = {"serve", "loadgen", "bench",     "sql",
                                             "token", "verify",  "quarantine"};
  EXPECT_EQ(NearestName("serv", commands), "serve");
  EXPECT_EQ(NearestName("verfiy", commands), "verify");
  EXPECT_EQ(NearestName("tokens", commands), "token");
  EXPECT_EQ(NearestName("crate", {"create", "list", "revoke"}), "create");
  EXPECT_EQ(NearestName("xyzzy", commands), "");
  EXPECT_EQ(NearestName("s", commands), "");  // one letter is no evidence
}

}  // namespace
}  // namespace strata::cli
