#include "common/path.h"

#include "gtest/gtest.h"

namespace strata {
namespace {

TEST(JoinPathTest, PutsOneSlashBetweenDirAndName) {
  EXPECT_EQ(JoinPath("a", "b"), "a/b");
  EXPECT_EQ(JoinPath("a/", "b"), "a/b");
  EXPECT_EQ(JoinPath("/", "b"), "/b");
  EXPECT_EQ(JoinPath("", "b"), "b");
  EXPECT_EQ(JoinPath("/x/y", "b/c"), "/x/y/b/c");
}

TEST(ParentPathTest, IgnoresTrailingSlashes) {
  EXPECT_EQ(ParentPath("a/b"), "a");
  EXPECT_EQ(ParentPath("a/b/"), "a");
  EXPECT_EQ(ParentPath("/a"), "/");
  EXPECT_EQ(ParentPath("/a//"), "/");
  EXPECT_EQ(ParentPath("a"), ".");
  EXPECT_EQ(ParentPath("/"), "/");
  EXPECT_EQ(ParentPath("/x/y/z"), "/x/y");
}

}  // namespace
}  // namespace strata
