// LookupCacheBudget (batch_lookup_state.h). BatchLookupState itself is
// tested through trace lookups (trace_lookup_test.cc, "the lookup cache").

#include "storage/batch_lookup_state.h"

#include <thread>
#include <vector>

#include "gtest/gtest.h"

namespace strata::storage {
namespace {

TEST(LookupCacheBudgetTest, ChargesFitUnderTheLimitAndReleasesGiveThemBack) {
  LookupCacheBudget budget(100);
  EXPECT_TRUE(budget.TryCharge(60));
  EXPECT_FALSE(budget.TryCharge(41));
  EXPECT_EQ(budget.used_bytes(), 60u);
  EXPECT_TRUE(budget.TryCharge(40));  // exactly full
  EXPECT_FALSE(budget.TryCharge(1));
  budget.Release(60);
  EXPECT_EQ(budget.used_bytes(), 40u);
  EXPECT_FALSE(budget.TryCharge(101));
  EXPECT_FALSE(budget.TryCharge(SIZE_MAX));
  EXPECT_TRUE(budget.TryCharge(0));
  EXPECT_EQ(budget.limit_bytes(), 100u);
}

TEST(LookupCacheBudgetTest, ZeroLimitKeepsNothing) {
  LookupCacheBudget budget(0);
  EXPECT_FALSE(budget.TryCharge(1));
  EXPECT_EQ(budget.used_bytes(), 0u);
}

TEST(LookupCacheBudgetTest, ConcurrentChargesNeverPassTheLimit) {
  LookupCacheBudget budget(1000);
  std::vector<std::thread> threads;
  std::vector<int> granted(4, 0);
  for (size_t t = 0; t < granted.size(); ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 1000; ++i) granted[t] += budget.TryCharge(3);
    });
  }
  for (std::thread& thread : threads) thread.join();
  int total = 0;
  for (int g : granted) total += g;
  EXPECT_EQ(total, 333);
  EXPECT_EQ(budget.used_bytes(), 999u);
}

}  // namespace
}  // namespace strata::storage
