#pragma once

// The duration histogram of rollups.parquet (docs/format/rollups-parquet.md,
// "Duration histogram"): a fixed log-linear layout over nanoseconds, the
// same in every file, so histograms merge exactly by adding the counts of
// equal bucket indexes. Buckets below 128 ns are exact; every other bucket
// is 2^s wide and starts at least at 128 * 2^s, so its midpoint is within
// 1/256 of any duration in it.
//
// Thread-safety: a histogram has a single owner; the free functions are
// reentrant. Errors: FromBuckets returns DataLoss for buckets that break
// the file's rules (it reads them from disk).

#include <cstdint>
#include <optional>
#include <span>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"

namespace strata::rollups {

// Bucket indexes run from 0 to kDurationBuckets - 1.
inline constexpr uint32_t kDurationBuckets = 7296;

// The bucket of a duration (negative durations count in bucket 0).
uint32_t DurationBucket(int64_t duration_nanos);

// The first duration of bucket `index` (< kDurationBuckets) and one past
// its last; the last bucket ends at INT64_MAX inclusive, so its end is
// reported as INT64_MAX.
int64_t BucketStart(uint32_t index);
int64_t BucketEnd(uint32_t index);
// The value a quantile in the bucket reports: the bucket itself below 128,
// else its midpoint.
int64_t BucketValue(uint32_t index);

class DurationHistogram {
 public:
  struct Bucket {
    uint32_t index = 0;
    int64_t count = 0;
    friend bool operator==(const Bucket&, const Bucket&) = default;
  };

  // Buckets as a file stores them: indexes strictly ascending and below
  // kDurationBuckets, counts positive, their sum within int64.
  [[nodiscard]] static absl::StatusOr<DurationHistogram> FromBuckets(
      std::span<const Bucket> buckets);

  void Add(int64_t duration_nanos, int64_t count = 1);
  void Merge(const DurationHistogram& other);

  // Durations counted.
  int64_t count() const { return count_; }
  // The nonzero buckets, indexes ascending.
  const std::vector<Bucket>& buckets() const { return buckets_; }

  // The nearest-rank quantile: BucketValue of the bucket holding the
  // duration of 0-based rank max(ceil(q * n) - 1, 0), q given in
  // thousandths (0 to 1000). No value for an empty histogram.
  std::optional<int64_t> Quantile(int thousandths) const;

  friend bool operator==(const DurationHistogram&, const DurationHistogram&) = default;

 private:
  std::vector<Bucket> buckets_;
  int64_t count_ = 0;
};

}  // namespace strata::rollups
