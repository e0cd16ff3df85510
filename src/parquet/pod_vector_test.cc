#include "parquet/pod_vector.h"

#include <cstdint>
#include <random>
#include <vector>

#include "gtest/gtest.h"

namespace strata::parquet {
namespace {

// Random appends of every kind, checked against std::vector after each: the
// short fills (which store past the size, into the slack) must never
// change a value already appended, across every growth.
template <typename T>
void CheckAgainstStdVector(uint64_t seed) {
  std::mt19937_64 rng(seed);
  PodVector<T> pod;
  std::vector<T> reference;
  for (int step = 0; step < 5000; ++step) {
    const auto value = static_cast<T>(rng());
    switch (rng() % 5) {
      case 0:
        pod.push_back(value);
        reference.push_back(value);
        break;
      case 1: {
        const size_t count = rng() % 20;  // short and long fills
        pod.Append(count, value);
        reference.insert(reference.end(), count, value);
        break;
      }
      case 2: {
        std::vector<T> source(rng() % 40);
        for (T& v : source) v = static_cast<T>(rng());
        pod.Append(source.data(), source.size());
        reference.insert(reference.end(), source.begin(), source.end());
        break;
      }
      case 3: {
        const size_t size = reference.empty() ? 0 : rng() % (reference.size() + 1);
        pod.Truncate(size);
        reference.resize(size);
        break;
      }
      default:
        if (rng() % 50 == 0) {
          pod.clear();
          reference.clear();
        }
        break;
    }
    ASSERT_EQ(pod.size(), reference.size()) << "step " << step;
    ASSERT_TRUE(std::equal(reference.begin(), reference.end(), pod.data())) << "step " << step;
  }
}

TEST(PodVectorTest, MatchesStdVectorForBytes) { CheckAgainstStdVector<uint8_t>(1); }

TEST(PodVectorTest, MatchesStdVectorForIndices) { CheckAgainstStdVector<uint32_t>(2); }

TEST(PodVectorTest, StartsEmptyAndIndexes) {
  PodVector<uint8_t> pod;
  EXPECT_TRUE(pod.empty());
  pod.Append(3, 7);
  pod[1] = 9;
  EXPECT_EQ(pod.size(), 3u);
  EXPECT_EQ(pod[0], 7);
  EXPECT_EQ(pod[1], 9);
  EXPECT_EQ(pod[2], 7);
}

TEST(PodVectorTest, AppendingNoValuesToAVectorThatNeverGrewWritesNothing) {
  // The column writer appends the levels of an empty run when a column's
  // first value leaves the dictionary (a log body longer than a page).
  PodVector<uint8_t> pod;
  pod.Append(size_t{0}, uint8_t{1});
  EXPECT_TRUE(pod.empty());
  EXPECT_EQ(pod.data(), nullptr);
  pod.Append(2, 1);
  pod.Append(size_t{0}, uint8_t{5});
  EXPECT_EQ(pod.size(), 2u);
}

}  // namespace
}  // namespace strata::parquet
