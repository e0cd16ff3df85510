// LookupCacheBudget and BatchLookupState's dictionary page cache
// (batch_lookup_state.h). The layout cache is tested through trace lookups
// (trace_lookup_test.cc, "the lookup cache").

#include "storage/index/batch_lookup_state.h"

#include <algorithm>
#include <cstring>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "gtest/gtest.h"
#include "io/file_system.h"
#include "io/memory_file.h"
#include "storage/table/trace_run.h"

namespace strata::storage {
namespace {

// The filter of a one-trace index (BatchLookupState needs one).
TraceFilter OneTraceFilter() {
  TraceRun run;
  run.trace_id[0] = 1;
  absl::StatusOr<std::string> bytes = BuildTraceIndex({&run, 1}, 1, 0);
  EXPECT_TRUE(bytes.ok()) << bytes.status();
  absl::StatusOr<TraceFilter> filter = TraceFilter::Open(MemoryFile(*bytes, "x.batch/spans.tidx"));
  EXPECT_TRUE(filter.ok()) << filter.status();
  return *std::move(filter);
}

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

TEST(LookupCacheBudgetTest, HeadroomStaysFree) {
  LookupCacheBudget budget(100);
  EXPECT_TRUE(budget.TryCharge(50, 25));
  EXPECT_FALSE(budget.TryCharge(26, 25));  // would leave 24 free
  EXPECT_TRUE(budget.TryCharge(25, 25));   // leaves exactly 25
  EXPECT_TRUE(budget.TryCharge(25));       // headroom is for the caller that asks for it
  EXPECT_FALSE(budget.TryCharge(0, 1));
  EXPECT_FALSE(budget.TryCharge(1, SIZE_MAX));
  EXPECT_EQ(budget.used_bytes(), 100u);
}

std::shared_ptr<const parquet::DictionaryPage> Page(size_t body_bytes, char fill) {
  auto page = std::make_shared<parquet::DictionaryPage>();
  page->header.num_values = 1;
  page->body.assign(body_bytes, fill);
  return page;
}

TEST(BatchLookupStateTest, KeepsOfferedDictionaryPagesOncePerChunk) {
  auto budget = std::make_shared<LookupCacheBudget>(1 << 20);
  BatchLookupState state(OneTraceFilter(), budget);
  EXPECT_EQ(state.FindDictionary(7), nullptr);
  std::shared_ptr<const parquet::DictionaryPage> first = Page(1000, 'a');
  state.OfferDictionary(7, first);
  EXPECT_EQ(state.FindDictionary(7), first);
  EXPECT_EQ(state.FindDictionary(8), nullptr);
  // A second page for the same chunk is not kept (a kept page never changes).
  state.OfferDictionary(7, Page(1000, 'b'));
  EXPECT_EQ(state.FindDictionary(7), first);
  EXPECT_EQ(state.cached_dictionaries(), 1u);
  EXPECT_EQ(state.cached_bytes(), BatchLookupState::DictionaryChargeBytes(*first));
  EXPECT_EQ(budget->used_bytes(), state.cached_bytes());
  EXPECT_GT(state.cached_bytes(), 1000u);
}

TEST(BatchLookupStateTest, DictionaryPagesLeaveAQuarterOfTheBudgetAndGoBackWithTheState) {
  const size_t page_bytes = BatchLookupState::DictionaryChargeBytes(*Page(1000, 'x'));
  // Room for exactly four pages under three quarters of the limit.
  auto budget = std::make_shared<LookupCacheBudget>(page_bytes * 4 * 4 / 3 + 3);
  {
    BatchLookupState state(OneTraceFilter(), budget);
    for (size_t chunk = 0; chunk < 10; ++chunk) state.OfferDictionary(chunk, Page(1000, 'x'));
    EXPECT_EQ(state.cached_dictionaries(), 4u);
    for (size_t chunk = 0; chunk < 4; ++chunk) EXPECT_NE(state.FindDictionary(chunk), nullptr);
    for (size_t chunk = 4; chunk < 10; ++chunk) EXPECT_EQ(state.FindDictionary(chunk), nullptr);
    EXPECT_EQ(budget->used_bytes(), 4 * page_bytes);
    EXPECT_LE(budget->used_bytes() + budget->limit_bytes() / 4, budget->limit_bytes());
    // A page another reader still holds outlives the state; its bytes do not
    // count against the budget once the state is gone.
  }
  EXPECT_EQ(budget->used_bytes(), 0u);
}

TEST(BatchLookupStateTest, WithoutABudgetNothingIsKept) {
  BatchLookupState state(OneTraceFilter(), nullptr);
  state.OfferDictionary(0, Page(10, 'x'));
  EXPECT_EQ(state.FindDictionary(0), nullptr);
  EXPECT_EQ(state.cached_bytes(), 0u);
}

TEST(BatchLookupStateTest, ConcurrentOffersKeepOnePagePerChunkAndChargeItOnce) {
  auto budget = std::make_shared<LookupCacheBudget>(1 << 20);
  auto state = std::make_unique<BatchLookupState>(OneTraceFilter(), budget);
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (size_t chunk = 0; chunk < 50; ++chunk) {
        state->OfferDictionary(chunk, Page(100 + chunk, static_cast<char>('a' + t)));
        EXPECT_NE(state->FindDictionary(chunk), nullptr);
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  EXPECT_EQ(state->cached_dictionaries(), 50u);
  size_t expected = 0;
  for (size_t chunk = 0; chunk < 50; ++chunk) {
    expected += BatchLookupState::DictionaryChargeBytes(*state->FindDictionary(chunk));
  }
  EXPECT_EQ(state->cached_bytes(), expected);
  EXPECT_EQ(budget->used_bytes(), expected);
  state.reset();
  EXPECT_EQ(budget->used_bytes(), 0u);
}

}  // namespace
}  // namespace strata::storage
