// PromotionMatcher against the promotion rules written out plainly
// (spans-parquet.md "Promoted columns"): for each column, its source keys in
// priority order; a key counts at its first occurrence in the set; the
// column takes the first key whose first occurrence has the column's type,
// and every earlier key whose first occurrence has another type is a miss.

#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "gtest/gtest.h"
#include "otlp/batch.h"
#include "storage/table/promotion.h"

namespace strata::storage {
namespace {

struct Result {
  std::vector<int64_t> rows;
  std::vector<std::string_view> missed;
  bool operator==(const Result&) const = default;
};

Result Reference(const std::vector<PromotionRule>& rules, const otlp::AttributeColumns& table,
                 otlp::Range range) {
  Result out;
  for (const PromotionRule& rule : rules) {
    int64_t value = -1;
    for (std::string_view key : rule.keys) {
      int64_t first = -1;
      for (uint32_t i = range.begin; i < range.end(); ++i) {
        if (table.key[i] == key) {
          first = i;
          break;
        }
      }
      if (first < 0) continue;
      if (table.value.type[first] == rule.type) {
        value = first;
        break;
      }
      out.missed.push_back(key);
    }
    out.rows.push_back(value);
  }
  return out;
}

// Rules with keys of 1 to 26 bytes, keys equal in length and in their first
// 8 bytes, and one rule whose keys are another's prefix.
std::vector<PromotionRule> Rules() {
  return {
      {"a", {"k", "kk"}, otlp::ValueType::kString},
      {"b", {"http.method", "http.methoX", "http.request.method"}, otlp::ValueType::kString},
      {"c", {"http.status_code", "http.response.status_code"}, otlp::ValueType::kInt},
      {"d", {"db.system"}, otlp::ValueType::kString},
      {"e", {"db.system.name", "db.systemXname"}, otlp::ValueType::kString},
      {"f", {"12345678", "1234567"}, otlp::ValueType::kInt},
  };
}

TEST(PromotionMatcherTest, MatchesTheRulesOnRandomAttributeSets) {
  const std::vector<PromotionRule> rules = Rules();
  const PromotionMatcher matcher(rules);
  // Every source key, near misses of them, and unrelated keys.
  std::vector<std::string> keys = {"", "x", "url.full", "server.port", "123456789", "db.systen"};
  for (const PromotionRule& rule : rules) {
    for (std::string_view key : rule.keys) {
      keys.emplace_back(key);
      std::string near(key);
      near.back() ^= 1;
      keys.push_back(near);
      keys.push_back(std::string(key) + "!");
    }
  }
  const otlp::ValueType types[] = {otlp::ValueType::kString, otlp::ValueType::kInt,
                                   otlp::ValueType::kBool, otlp::ValueType::kDouble};
  std::mt19937_64 rng(20261201);
  for (int round = 0; round < 5000; ++round) {
    // Keys are copied so that no two occurrences share their bytes.
    std::vector<std::string> storage;
    otlp::AttributeColumns table;
    const size_t before = rng() % 3;  // rows before the range
    const size_t count = rng() % 12;
    const size_t after = rng() % 3;
    storage.reserve(before + count + after);
    for (size_t i = 0; i < before + count + after; ++i) {
      storage.push_back(keys[rng() % keys.size()]);
      table.key.push_back(storage.back());
      table.value.Append(types[rng() % 4], {}, 0);
    }
    const otlp::Range range{static_cast<uint32_t>(before), static_cast<uint32_t>(count)};
    Result got;
    matcher.Match(table, range, &got.rows, &got.missed);
    const Result want = Reference(rules, table, range);
    ASSERT_EQ(got.rows, want.rows) << "round " << round;
    ASSERT_EQ(got.missed, want.missed) << "round " << round;
  }
}

TEST(PromotionMatcherTest, AnEmptyRangeMatchesNothing) {
  const PromotionMatcher matcher(Rules());
  otlp::AttributeColumns table;
  table.key.push_back("k");
  table.value.AppendString("v");
  Result got;
  matcher.Match(table, {1, 0}, &got.rows, &got.missed);
  EXPECT_EQ(got.rows, std::vector<int64_t>(Rules().size(), -1));
  EXPECT_TRUE(got.missed.empty());
}

}  // namespace
}  // namespace strata::storage
