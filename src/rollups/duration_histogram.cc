// The log-linear duration histogram (duration_histogram.h).

#include "rollups/duration_histogram.h"

#include <algorithm>
#include <bit>
#include <limits>

#include "fmt/format.h"

namespace strata::rollups {
namespace {

// Durations below this are their own bucket; above, each power of two
// splits into this many buckets.
constexpr int64_t kExact = 128;
constexpr int kSubBits = 7;

}  // namespace

uint32_t DurationBucket(int64_t duration_nanos) {
  if (duration_nanos < kExact) return static_cast<uint32_t>(std::max<int64_t>(duration_nanos, 0));
  const auto d = static_cast<uint64_t>(duration_nanos);
  const int e = 63 - std::countl_zero(d);  // 7 to 62
  const int s = e - kSubBits;
  const auto j = static_cast<uint32_t>((d >> s) - kExact);
  return static_cast<uint32_t>(e - kSubBits + 1) * kExact + j;
}

int64_t BucketStart(uint32_t index) {
  if (index < kExact) return index;
  const uint32_t s = index / kExact - 1;
  const uint64_t j = index % kExact;
  return static_cast<int64_t>((kExact + j) << s);
}

int64_t BucketEnd(uint32_t index) {
  if (index < kExact) return index + 1;
  const uint32_t s = index / kExact - 1;
  const uint64_t next = kExact + index % kExact + 1;
  // (next << s) past 2^63 - 1 only for the last bucket.
  if (s >= 63 - 8 && next == 2 * kExact) return std::numeric_limits<int64_t>::max();
  return static_cast<int64_t>(next << s);
}

int64_t BucketValue(uint32_t index) {
  if (index < kExact) return index;
  const uint32_t s = index / kExact - 1;
  return BucketStart(index) + (s == 0 ? 0 : int64_t{1} << (s - 1));
}

absl::StatusOr<DurationHistogram> DurationHistogram::FromBuckets(std::span<const Bucket> buckets) {
  DurationHistogram out;
  for (size_t i = 0; i < buckets.size(); ++i) {
    const Bucket& b = buckets[i];
    if (b.index >= kDurationBuckets) {
      return absl::DataLossError(fmt::format("duration histogram: bucket {} past the last, {}",
                                             b.index, kDurationBuckets - 1));
    }
    if (i > 0 && b.index <= buckets[i - 1].index) {
      return absl::DataLossError(
          fmt::format("duration histogram: bucket {} after bucket {} (indexes must ascend)",
                      b.index, buckets[i - 1].index));
    }
    if (b.count <= 0) {
      return absl::DataLossError(
          fmt::format("duration histogram: bucket {} counts {}", b.index, b.count));
    }
    if (out.count_ > std::numeric_limits<int64_t>::max() - b.count) {
      return absl::DataLossError("duration histogram: counts add past int64");
    }
    out.count_ += b.count;
    out.buckets_.push_back(b);
  }
  return out;
}

void DurationHistogram::Add(int64_t duration_nanos, int64_t count) {
  if (count <= 0) return;
  const uint32_t index = DurationBucket(duration_nanos);
  auto it = std::lower_bound(buckets_.begin(), buckets_.end(), index,
                             [](const Bucket& b, uint32_t i) { return b.index < i; });
  if (it != buckets_.end() && it->index == index) {
    it->count += count;
  } else {
    buckets_.insert(it, Bucket{index, count});
  }
  count_ += count;
}

void DurationHistogram::Merge(const DurationHistogram& other) {
  std::vector<Bucket> merged;
  merged.reserve(buckets_.size() + other.buckets_.size());
  size_t a = 0, b = 0;
  while (a < buckets_.size() || b < other.buckets_.size()) {
    if (b == other.buckets_.size() ||
        (a < buckets_.size() && buckets_[a].index < other.buckets_[b].index)) {
      merged.push_back(buckets_[a++]);
    } else if (a == buckets_.size() || other.buckets_[b].index < buckets_[a].index) {
      merged.push_back(other.buckets_[b++]);
    } else {
      merged.push_back(Bucket{buckets_[a].index, buckets_[a].count + other.buckets_[b].count});
      ++a;
      ++b;
    }
  }
  buckets_ = std::move(merged);
  count_ += other.count_;
}

std::optional<int64_t> DurationHistogram::Quantile(int thousandths) const {
  if (count_ == 0) return std::nullopt;
  const __int128 q = std::clamp(thousandths, 0, 1000);
  // ceil(q * n / 1000) - 1, at least 0.
  const __int128 rank = std::max<__int128>((q * count_ + 999) / 1000 - 1, 0);
  __int128 seen = 0;
  for (const Bucket& b : buckets_) {
    seen += b.count;
    if (seen > rank) return BucketValue(b.index);
  }
  return BucketValue(buckets_.back().index);
}

}  // namespace strata::rollups
