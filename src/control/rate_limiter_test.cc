// RateLimiter: a key's uses are counted in a window that opens with its
// first use; past the bound the wait until the window closes is answered
// and nothing is counted; keys are independent; the table stays within
// max_keys, dropping closed windows first, then the oldest.

#include "control/rate_limiter.h"

#include "gtest/gtest.h"

namespace strata::control {
namespace {

const absl::Time kStart = absl::FromUnixSeconds(1'700'000'000);

TEST(RateLimiterTest, AKeyGetsItsBoundPerWindowThenTheWaitUntilItCloses) {
  RateLimiter limiter({.max_per_window = 3, .window = absl::Minutes(10)});
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(limiter.Take("a", kStart + absl::Minutes(i)), absl::ZeroDuration()) << i;
  }
  // The window opened at kStart: it closes at kStart + 10 min.
  EXPECT_EQ(limiter.Take("a", kStart + absl::Minutes(4)), absl::Minutes(6));
  EXPECT_EQ(limiter.Take("a", kStart + absl::Minutes(9)), absl::Minutes(1));
  // Another key has its own window.
  EXPECT_EQ(limiter.Take("b", kStart + absl::Minutes(9)), absl::ZeroDuration());
  // Refusals counted nothing: a new window gives the whole bound again.
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(limiter.Take("a", kStart + absl::Minutes(10)), absl::ZeroDuration()) << i;
  }
  EXPECT_EQ(limiter.Take("a", kStart + absl::Minutes(10)), absl::Minutes(10));
}

TEST(RateLimiterTest, TheTableKeepsAtMostMaxKeysDroppingClosedWindowsFirst) {
  RateLimiter limiter({.max_per_window = 1, .window = absl::Minutes(10), .max_keys = 3});
  EXPECT_EQ(limiter.Take("old", kStart), absl::ZeroDuration());
  EXPECT_EQ(limiter.Take("b", kStart + absl::Minutes(5)), absl::ZeroDuration());
  EXPECT_EQ(limiter.Take("c", kStart + absl::Minutes(6)), absl::ZeroDuration());
  // "old"'s window closed: it makes room, and b and c keep their counts.
  EXPECT_EQ(limiter.Take("d", kStart + absl::Minutes(11)), absl::ZeroDuration());
  EXPECT_EQ(limiter.keys(), 3u);
  EXPECT_GT(limiter.Take("b", kStart + absl::Minutes(11)), absl::ZeroDuration());
  EXPECT_GT(limiter.Take("c", kStart + absl::Minutes(11)), absl::ZeroDuration());
  // Full of open windows: the one opened first (b) goes.
  EXPECT_EQ(limiter.Take("e", kStart + absl::Minutes(12)), absl::ZeroDuration());
  EXPECT_EQ(limiter.keys(), 3u);
  EXPECT_EQ(limiter.Take("b", kStart + absl::Minutes(12)), absl::ZeroDuration());
  EXPECT_EQ(limiter.keys(), 3u);
}

}  // namespace
}  // namespace strata::control
