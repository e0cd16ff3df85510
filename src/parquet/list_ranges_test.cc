// ListRanges: copies share one buffer, and changing any copy leaves the
// others as they were.

#include <thread>
#include <vector>

#include "gtest/gtest.h"
#include "parquet/column_vector.h"

namespace strata::parquet {
namespace {

std::vector<ListRange> Ranges(const ListRanges& r) { return {r.begin(), r.end()}; }

TEST(ListRangesTest, CopiesShareUntilOneChanges) {
  ListRanges a(std::vector<ListRange>{{0, 2}, {2, 0}, {2, 3}});
  const ListRanges b = a;
  ListRanges c = a;
  EXPECT_TRUE(a.SharesWith(b));
  EXPECT_TRUE(a.SharesWith(c));
  EXPECT_EQ(a, b);

  c.push_back({5, 1});
  EXPECT_FALSE(c.SharesWith(a));
  EXPECT_EQ(a.size(), 3u);
  EXPECT_EQ(c.size(), 4u);
  EXPECT_EQ(c.back(), (ListRange{5, 1}));

  c = a;
  c[1].count = 7;
  EXPECT_EQ(a[1], (ListRange{2, 0}));
  EXPECT_EQ(c[1], (ListRange{2, 7}));
  EXPECT_NE(a, c);

  c = a;
  ++c.back().count;
  EXPECT_EQ(a.back(), (ListRange{2, 3}));
  EXPECT_EQ(c.back(), (ListRange{2, 4}));

  c = a;
  for (ListRange& r : c) r.begin += 10;
  EXPECT_EQ(Ranges(a), (std::vector<ListRange>{{0, 2}, {2, 0}, {2, 3}}));
  EXPECT_EQ(Ranges(c), (std::vector<ListRange>{{10, 2}, {12, 0}, {12, 3}}));

  // An unshared buffer is changed in place; equal ranges compare equal
  // without sharing.
  ListRanges d(Ranges(a));
  EXPECT_FALSE(d.SharesWith(a));
  EXPECT_EQ(d, a);
  const ListRange* before = d.data();
  d[0].count = 2;
  EXPECT_EQ(d.data(), before);
}

TEST(ListRangesTest, EmptyRangesNeedNoBuffer) {
  ListRanges empty;
  EXPECT_TRUE(empty.empty());
  EXPECT_EQ(empty.begin(), empty.end());
  EXPECT_EQ(empty, ListRanges(std::vector<ListRange>{}));
  EXPECT_FALSE(empty.SharesWith(ListRanges()));
  empty.reserve(4);
  empty.push_back({0, 1});
  EXPECT_EQ(empty.size(), 1u);
}

// Copies on different threads: each thread changes and reads its own copy
// while the others do the same (run under the tsan preset too).
TEST(ListRangesTest, CopiesChangeIndependentlyOnThreads) {
  std::vector<ListRange> start(1000);
  for (size_t i = 0; i < start.size(); ++i) start[i] = {i, 1};
  const ListRanges shared(start);
  std::vector<std::thread> threads;
  std::vector<uint64_t> sums(4, 0);
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&shared, &sums, t] {
      for (int round = 0; round < 50; ++round) {
        ListRanges mine = shared;
        mine[static_cast<size_t>(round)].count = static_cast<uint64_t>(t);
        mine.push_back({0, 0});
        uint64_t sum = 0;
        for (const ListRange& r : static_cast<const ListRanges&>(mine)) sum += r.count;
        sums[t] += sum;
      }
    });
  }
  for (std::thread& t : threads) t.join();
  for (int t = 0; t < 4; ++t) {
    // Each round: 999 ranges of count 1 and one of count t.
    EXPECT_EQ(sums[t], 50u * (999u + static_cast<uint64_t>(t))) << "thread " << t;
  }
  for (size_t i = 0; i < start.size(); ++i) EXPECT_EQ(shared[i], start[i]);
}

}  // namespace
}  // namespace strata::parquet
