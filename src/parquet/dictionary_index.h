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

// Whether a[0, n) == b[0, n), without a memcmp call for values up to 16
// bytes (most dictionary strings): overlapping 8- or 4-byte loads, or the
// first, middle and last byte. Never reads a null pointer when n == 0.
inline bool SameBytes(const char* a, const char* b, size_t n) {
  if (n >= 8) {
    if (n > 16) return std::memcmp(a, b, n) == 0;
    uint64_t a0, b0, a1, b1;
    std::memcpy(&a0, a, 8);
    std::memcpy(&b0, b, 8);
    std::memcpy(&a1, a + n - 8, 8);
    std::memcpy(&b1, b + n - 8, 8);
    return ((a0 ^ b0) | (a1 ^ b1)) == 0;
  }
  if (n >= 4) {
    uint32_t a0, b0, a1, b1;
    std::memcpy(&a0, a, 4);
    std::memcpy(&b0, b, 4);
    std::memcpy(&a1, a + n - 4, 4);
    std::memcpy(&b1, b + n - 4, 4);
    return ((a0 ^ b0) | (a1 ^ b1)) == 0;
  }
  if (n == 0) return true;
  return a[0] == b[0] && a[n / 2] == b[n / 2] && a[n - 1] == b[n - 1];
}

class ByteDictionaryIndex {
 public:
  static constexpr uint32_t kNotFound = UINT32_MAX;

  uint32_t size() const { return static_cast<uint32_t>(values_.size()); }
  // The value of an index (the view Insert was given).
  std::string_view value(uint32_t index) const { return values_[index]; }
  // The index of `value`, or kNotFound. *hash receives the hash for Insert.
  // Inline: the column writer calls it once per value that differs from
  // the previous one.
  uint32_t Find(std::string_view value, uint64_t* hash) const {
    const uint64_t h = Hash(value);
    *hash = h;
    if (slots_.empty()) return kNotFound;
    const Slot* slots = slots_.data();
    const size_t mask = slots_.size() - 1;
    const auto tag = static_cast<uint32_t>(h >> 32);
    for (size_t i = static_cast<size_t>(h) & mask;; i = (i + 1) & mask) {
      const Slot slot = slots[i];
      if (slot.index_plus_one == 0) return kNotFound;
      if (slot.tag == tag) {
        const std::string_view candidate = values_[slot.index_plus_one - 1];
        if (candidate.size() == value.size() &&
            SameBytes(candidate.data(), value.data(), value.size())) {
          return slot.index_plus_one - 1;
        }
      }
    }
  }
  // Adds `value` (not present; hash from Find) as index size(); returns it.
  uint32_t Insert(std::string_view value, uint64_t hash);
  void Clear();

  static uint64_t Hash(std::string_view value) {
    const char* p = value.data();
    size_t n = value.size();
    uint64_t h = kSeed ^ (n * 0x9E3779B97F4A7C15ULL);
    while (n >= 8) {
      uint64_t word;
      std::memcpy(&word, p, 8);
      h = Mix(h, word);
      p += 8;
      n -= 8;
    }
    if (n > 0) {
      // The last 1..7 bytes without a variable-length memcpy call: the last
      // eight bytes of the value when it has them, else up to two 4-byte
      // loads or single bytes (the length is already in h).
      uint64_t word;
      if (value.size() >= 8) {
        std::memcpy(&word, p + n - 8, 8);
      } else if (n >= 4) {
        uint32_t lo, hi;
        std::memcpy(&lo, p, 4);
        std::memcpy(&hi, p + n - 4, 4);
        word = static_cast<uint64_t>(hi) << 32 | lo;
      } else {
        word = static_cast<uint64_t>(static_cast<uint8_t>(p[0])) |
               static_cast<uint64_t>(static_cast<uint8_t>(p[n / 2])) << 8 |
               static_cast<uint64_t>(static_cast<uint8_t>(p[n - 1])) << 16;
      }
      h = Mix(h, word);
    }
    h *= 0x94D049BB133111EBULL;
    return h ^ (h >> 29);
  }

 private:
  static uint64_t Mix(uint64_t h, uint64_t word) {
    h = (h ^ word) * 0xBF58476D1CE4E5B9ULL;
    return h ^ (h >> 31);
  }
  void Grow();

  // Per-process seed: distinct inputs that collide in one process need not
  // collide in another.
  static const uint64_t kSeed;

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
