#include "parquet/dictionary_index.h"

#include <cstdint>
#include <random>
#include <string>
#include <unordered_map>
#include <vector>

#include "gtest/gtest.h"

namespace strata::parquet {
namespace {

TEST(ByteDictionaryIndexTest, AssignsIndexesInInsertionOrderAndFindsThemAgain) {
  std::mt19937_64 rng(3);
  ByteDictionaryIndex index;
  std::vector<std::string> values;  // stable storage for the views
  values.reserve(5000);
  std::unordered_map<std::string, uint32_t> reference;
  for (int i = 0; i < 20000; ++i) {
    // Lengths 0..40 around every 8-byte boundary of the hash, many repeats.
    std::string v(rng() % 41, '\0');
    for (char& c : v) c = static_cast<char>('a' + rng() % 3);
    uint64_t hash = 0;
    const uint32_t found = index.Find(v, &hash);
    EXPECT_EQ(hash, ByteDictionaryIndex::Hash(v));
    auto it = reference.find(v);
    if (it == reference.end()) {
      ASSERT_EQ(found, ByteDictionaryIndex::kNotFound) << v;
      ASSERT_LT(values.size(), values.capacity());
      values.push_back(v);
      const uint32_t added = index.Insert(values.back(), hash);
      EXPECT_EQ(added, reference.size());
      reference.emplace(v, added);
    } else {
      ASSERT_EQ(found, it->second) << v;
      EXPECT_EQ(index.value(found), v);
    }
    if (values.size() == values.capacity()) break;
  }
  EXPECT_EQ(index.size(), reference.size());
  // Values that differ only in bytes the short-value hash samples twice.
  for (const std::string& v : {std::string("abcx"), std::string("abcxy"), std::string("\0\0", 2),
                               std::string("\0", 1)}) {
    uint64_t hash;
    if (reference.count(v) == 0) EXPECT_EQ(index.Find(v, &hash), ByteDictionaryIndex::kNotFound);
  }
  index.Clear();
  uint64_t hash;
  EXPECT_EQ(index.size(), 0u);
  EXPECT_EQ(index.Find(values[0], &hash), ByteDictionaryIndex::kNotFound);
}

TEST(SameBytesTest, AgreesWithMemcmpAtEveryLengthAndPosition) {
  for (size_t n = 0; n <= 40; ++n) {
    const std::string a(n, 'q');
    EXPECT_TRUE(SameBytes(a.data(), std::string(a).data(), n)) << n;
    for (size_t at = 0; at < n; ++at) {
      std::string b = a;
      b[at] = 'r';
      EXPECT_FALSE(SameBytes(a.data(), b.data(), n)) << n << " " << at;
      EXPECT_FALSE(SameBytes(b.data(), a.data(), n)) << n << " " << at;
    }
  }
  EXPECT_TRUE(SameBytes(nullptr, nullptr, 0));
}

// Enough distinct values that many share a 32-bit tag's slot sequence and a
// few share the whole tag (about n^2 / 2^33 pairs), through every growth of
// the table; keys of every length class, including empty and long ones and
// values that differ only in their last byte.
TEST(ByteDictionaryIndexTest, ManyValuesAgreeWithAMapThroughGrowth) {
  std::mt19937_64 rng(11);
  ByteDictionaryIndex index;
  std::vector<std::string> values;
  values.reserve(200000);
  std::unordered_map<std::string, uint32_t> reference;
  for (int i = 0; i < 400000 && values.size() < values.capacity(); ++i) {
    const uint64_t k = rng() % 150000;
    std::string v = std::string(k % 70, 'p') + std::to_string(k);
    if (k % 11 == 0) v.clear();
    uint64_t hash = 0;
    const uint32_t found = index.Find(v, &hash);
    auto it = reference.find(v);
    if (it == reference.end()) {
      ASSERT_EQ(found, ByteDictionaryIndex::kNotFound) << v;
      values.push_back(v);
      reference.emplace(v, index.Insert(values.back(), hash));
    } else {
      ASSERT_EQ(found, it->second) << v;
    }
  }
  EXPECT_EQ(index.size(), reference.size());
  for (const auto& [v, i] : reference) {
    uint64_t hash;
    ASSERT_EQ(index.Find(v, &hash), i);
    ASSERT_EQ(index.Find(v + "!", &hash),
              reference.count(v + "!") ? reference.at(v + "!") : ByteDictionaryIndex::kNotFound);
  }
}

TEST(FixedDictionaryIndexTest, SmallAndLargeKeysShareOneIndexSequence) {
  std::mt19937_64 rng(5);
  FixedDictionaryIndex index;
  std::unordered_map<uint64_t, uint32_t> reference;
  for (int i = 0; i < 50000; ++i) {
    const uint64_t key = rng() % 2 ? rng() % 300 : rng() % 4000 * 0x100000001ULL;
    const uint32_t found = index.Find(key);
    auto it = reference.find(key);
    if (it == reference.end()) {
      ASSERT_EQ(found, FixedDictionaryIndex::kNotFound);
      const uint32_t added = index.Insert(key);
      EXPECT_EQ(added, reference.size());
      reference.emplace(key, added);
    } else {
      ASSERT_EQ(found, it->second) << key;
    }
  }
  EXPECT_EQ(index.size(), reference.size());
  EXPECT_EQ(index.Find(UINT64_MAX), FixedDictionaryIndex::kNotFound);
  index.Clear();
  EXPECT_EQ(index.size(), 0u);
  EXPECT_EQ(index.Find(0), FixedDictionaryIndex::kNotFound);
  EXPECT_EQ(index.Find(4000 * 0x100000001ULL - 0x100000001ULL),
            FixedDictionaryIndex::kNotFound);
  EXPECT_EQ(index.Insert(7), 0u);
  EXPECT_EQ(index.Find(7), 0u);
}

}  // namespace
}  // namespace strata::parquet
