// The duration histogram (duration_histogram.h) against its specification
// (docs/format/rollups-parquet.md): bucket edges for every power of two,
// the 1/256 bound, exact merging, and quantiles compared with DuckDB's
// quantile_disc over the same durations.

#include "rollups/duration_histogram.h"

#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "fmt/format.h"
#include "gtest/gtest.h"
#include "query/duckdb_engine.h"

namespace strata::rollups {
namespace {

TEST(DurationHistogramTest, BucketsTileTheDurationsWithTheDocumentedBound) {
  EXPECT_EQ(DurationBucket(std::numeric_limits<int64_t>::min()), 0u);
  EXPECT_EQ(DurationBucket(-1), 0u);
  for (int64_t d = 0; d < 300; ++d) {
    const uint32_t b = DurationBucket(d);
    EXPECT_LE(BucketStart(b), d);
    EXPECT_LT(d, BucketEnd(b));
  }
  EXPECT_EQ(DurationBucket(127), 127u);
  EXPECT_EQ(DurationBucket(128), 128u);
  EXPECT_EQ(DurationBucket(255), 255u);
  EXPECT_EQ(DurationBucket(256), 256u);  // 256 and 257 share bucket 256
  EXPECT_EQ(DurationBucket(257), 256u);
  EXPECT_EQ(DurationBucket(std::numeric_limits<int64_t>::max()), kDurationBuckets - 1);
  EXPECT_EQ(BucketEnd(kDurationBuckets - 1), std::numeric_limits<int64_t>::max());
  // Consecutive buckets meet, with no gap and no overlap, up to the last.
  for (uint32_t b = 0; b + 1 < kDurationBuckets; ++b) {
    ASSERT_EQ(BucketEnd(b), BucketStart(b + 1)) << b;
    ASSERT_EQ(DurationBucket(BucketStart(b)), b) << b;
    ASSERT_EQ(DurationBucket(BucketEnd(b) - 1), b) << b;
    const int64_t value = BucketValue(b);
    ASSERT_GE(value, BucketStart(b));
    ASSERT_LT(value, BucketEnd(b));
    // The reported value is within 1/256 of every duration of the bucket.
    const double worst = std::max(value - BucketStart(b), BucketEnd(b) - 1 - value);
    ASSERT_LE(worst, static_cast<double>(BucketStart(b)) / 256.0) << b;
  }
}

// Durations spread over 0 to about an hour, with exact small ones,
// negatives and repeats, as a seeded generator makes them.
std::vector<int64_t> Durations(size_t n, uint64_t seed) {
  std::mt19937_64 random(seed);
  std::uniform_real_distribution<double> exponent(0.0, 12.5);
  std::vector<int64_t> out;
  for (size_t i = 0; i < n; ++i) {
    switch (random() % 10) {
      case 0:
        out.push_back(static_cast<int64_t>(random() % 200) - 20);
        break;
      case 1:
        out.push_back(1'000'000);
        break;
      default:
        out.push_back(static_cast<int64_t>(std::pow(10.0, exponent(random))));
    }
  }
  return out;
}

TEST(DurationHistogramTest, QuantilesAreDuckDbsWithinTheBound) {
  std::unique_ptr<query::DuckDbEngine> db;
  {
    auto opened = query::DuckDbEngine::Open({});
    ASSERT_TRUE(opened.ok()) << opened.status();
    db = *std::move(opened);
  }
  for (const size_t n : {1u, 2u, 7u, 1000u, 5000u}) {
    const std::vector<int64_t> durations = Durations(n, n);
    DurationHistogram h;
    std::string values;
    for (int64_t d : durations) {
      h.Add(d);
      values += fmt::format("{}({})", values.empty() ? "" : ",", d);
    }
    ASSERT_EQ(h.count(), static_cast<int64_t>(n));
    const std::vector<int> qs = {0, 1, 250, 500, 900, 950, 990, 999, 1000};
    std::string select;
    for (int q : qs) {
      select += fmt::format("{}quantile_disc(d, {}::DOUBLE / 1000)", select.empty() ? "" : ", ", q);
    }
    auto exact = db->Query(fmt::format("SELECT {} FROM (VALUES {}) t(d)", select, values));
    ASSERT_TRUE(exact.ok()) << exact.status();
    ASSERT_EQ(exact->rows.size(), 1u);
    for (size_t i = 0; i < qs.size(); ++i) {
      const int64_t want = std::stoll(*exact->rows[0][i]);
      const std::optional<int64_t> got = h.Quantile(qs[i]);
      ASSERT_TRUE(got.has_value());
      // The bucket of DuckDB's duration, so within the bucket's bound.
      EXPECT_EQ(DurationBucket(*got), DurationBucket(want)) << "n " << n << " q " << qs[i];
      if (want < 128) {
        EXPECT_EQ(*got, std::max<int64_t>(want, 0)) << "n " << n << " q " << qs[i];
      } else {
        EXPECT_LE(std::abs(static_cast<double>(*got - want)), static_cast<double>(want) / 256.0)
            << "n " << n << " q " << qs[i] << " got " << *got << " want " << want;
      }
    }
  }
}

TEST(DurationHistogramTest, MergingInAnyGroupingIsAddingAll) {
  const std::vector<int64_t> durations = Durations(3000, 7);
  DurationHistogram whole, a, b, c;
  for (size_t i = 0; i < durations.size(); ++i) {
    whole.Add(durations[i]);
    (i % 3 == 0 ? a : i % 3 == 1 ? b : c).Add(durations[i]);
  }
  DurationHistogram ab = a;
  ab.Merge(b);
  ab.Merge(c);
  DurationHistogram cb = c;
  cb.Merge(b);
  DurationHistogram cba = cb;
  cba.Merge(a);
  EXPECT_EQ(ab, whole);
  EXPECT_EQ(cba, whole);
  DurationHistogram empty;
  empty.Merge(whole);
  EXPECT_EQ(empty, whole);
  EXPECT_FALSE(DurationHistogram().Quantile(500).has_value());
}

TEST(DurationHistogramTest, StoredBucketsAreChecked) {
  using B = DurationHistogram::Bucket;
  const std::vector<B> good = {{0, 2}, {130, 1}, {kDurationBuckets - 1, 5}};
  absl::StatusOr<DurationHistogram> read = DurationHistogram::FromBuckets(good);
  ASSERT_TRUE(read.ok()) << read.status();
  EXPECT_EQ(read->count(), 8);
  EXPECT_EQ(read->buckets(), good);
  for (const std::vector<B>& bad :
       {std::vector<B>{{kDurationBuckets, 1}}, std::vector<B>{{5, 1}, {5, 1}},
        std::vector<B>{{6, 1}, {5, 1}}, std::vector<B>{{5, 0}}, std::vector<B>{{5, -3}},
        std::vector<B>{{1, std::numeric_limits<int64_t>::max()}, {2, 1}}}) {
    absl::StatusOr<DurationHistogram> refused = DurationHistogram::FromBuckets(bad);
    EXPECT_TRUE(absl::IsDataLoss(refused.status())) << refused.status();
  }
}

}  // namespace
}  // namespace strata::rollups
