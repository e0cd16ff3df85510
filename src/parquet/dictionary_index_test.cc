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
