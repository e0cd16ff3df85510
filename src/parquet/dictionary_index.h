#pragma once

// The lookup tables behind a column chunk's dictionary: value -> index,
// indexes assigned 0, 1, 2, ... in order of first insertion (the order of
// the dictionary page). ByteDictionaryIndex maps byte strings,
// FixedDictionaryIndex maps the 64-bit key of an INT32 / INT64 / DOUBLE
// value. Both are open-addressing tables with linear probing that keep each
// slot's hash, so a lookup costs one cheap hash, usually one probe and one
// compare: the column writer's dictionary lookups were 14% of the writer's
// CPU with absl::flat_hash_map and std::hash.
//
// FixedDictionaryIndex answers keys below kSmallKeys from a direct array
// (type codes, counts, flags, kinds and status codes are small integers).
//
// Hash flooding: the byte hash is seeded per process, and a table never
// holds more entries than the dictionary byte limit allows (16 KiB of
// dictionary in strata's tables), which bounds the cost of a bad probe
// sequence.
//
// Thread-safety: single owner (one column writer). Views passed to Insert
// must outlive the index (the column writer keeps them in its arena).

#include <cstdint>
#include <cstring>
#include <string_view>
#include <vector>

namespace strata::parquet {

class ByteDictionaryIndex {
 public:
  static constexpr uint32_t kNotFound = UINT32_MAX;

  uint32_t size() const { return static_cast<uint32_t>(values_.size()); }
  // The value of an index (the view Insert was given).
  std::string_view value(uint32_t index) const { return values_[index]; }
  // The index of `value`, or kNotFound. *hash receives the hash for Insert.
  uint32_t Find(std::string_view value, uint64_t* hash) const;
  // Adds `value` (not present; hash from Find) as index size(); returns it.
  uint32_t Insert(std::string_view value, uint64_t hash);
  void Clear();

  static uint64_t Hash(std::string_view value);

 private:
  void Grow();

  // Slot: index + 1 (0 = empty) and the high 32 bits of the hash.
  struct Slot {
    uint32_t index_plus_one = 0;
    uint32_t tag = 0;
  };
  std::vector<Slot> slots_;  // power of two, at most half full
  std::vector<std::string_view> values_;
};

class FixedDictionaryIndex {
 public:
  static constexpr uint32_t kNotFound = UINT32_MAX;
  static constexpr uint64_t kSmallKeys = 256;

  FixedDictionaryIndex() { Clear(); }

  uint32_t size() const { return size_; }
  uint32_t Find(uint64_t key) const {
    if (key < kSmallKeys) return small_[key];
    return FindLarge(key);
  }
  // Adds `key` (not present) as index size(); returns it.
  uint32_t Insert(uint64_t key);
  void Clear();

 private:
  uint32_t FindLarge(uint64_t key) const;
  void Grow();

  struct Slot {
    uint64_t key = 0;
    uint32_t index_plus_one = 0;  // 0 = empty
  };
  uint32_t small_[kSmallKeys];  // index, or kNotFound
  std::vector<Slot> slots_;  // power of two, at most half full
  uint32_t large_count_ = 0;
  uint32_t size_ = 0;
};

}  // namespace strata::parquet
