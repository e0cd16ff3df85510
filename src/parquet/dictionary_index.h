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

#include "absl/base/attributes.h"

namespace strata::parquet {

namespace dictionary_internal {

inline uint64_t Load64(const char* p) {
  uint64_t v;
  std::memcpy(&v, p, 8);
  return v;
}

inline uint64_t Load32(const char* p) {
  uint32_t v;
  std::memcpy(&v, p, 4);
  return v;
}

}  // namespace dictionary_internal

// Whether a[0, n) == b[0, n), without a memcmp call for values up to 32
// bytes (most dictionary strings): overlapping 8- or 4-byte loads, or the
// first, middle and last byte. Never reads a null pointer when n == 0.
inline bool SameBytes(const char* a, const char* b, size_t n) {
  using dictionary_internal::Load32;
  using dictionary_internal::Load64;
  if (n >= 8) {
    if (n > 16) {
      if (n > 32) return std::memcmp(a, b, n) == 0;
      return ((Load64(a) ^ Load64(b)) | (Load64(a + 8) ^ Load64(b + 8)) |
              (Load64(a + n - 16) ^ Load64(b + n - 16)) |
              (Load64(a + n - 8) ^ Load64(b + n - 8))) == 0;
    }
    return ((Load64(a) ^ Load64(b)) | (Load64(a + n - 8) ^ Load64(b + n - 8))) == 0;
  }
  if (n >= 4) return ((Load32(a) ^ Load32(b)) | (Load32(a + n - 4) ^ Load32(b + n - 4))) == 0;
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
  // Always inline: the column writer calls it once per value that differs
  // from the previous one, and a call spills most of its registers.
  ABSL_ATTRIBUTE_ALWAYS_INLINE uint32_t Find(std::string_view value, uint64_t* hash) const {
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

  // wyhash's structure: up to 16 bytes as two (overlapping) words, longer
  // values 16 bytes per step, then one 64x64->128-bit multiply of the last
  // two words and a folding multiply with the length. Seeded per process.
  static uint64_t Hash(std::string_view value) {
    using dictionary_internal::Load32;
    using dictionary_internal::Load64;
    const char* p = value.data();
    const size_t n = value.size();
    uint64_t seed = kSeed;
    uint64_t a, b;
    if (n <= 16) {
      if (n >= 8) {
        a = Load64(p);
        b = Load64(p + n - 8);
      } else if (n >= 4) {
        a = Load32(p);
        b = Load32(p + n - 4);
      } else if (n > 0) {
        a = static_cast<uint64_t>(static_cast<uint8_t>(p[0])) << 16 |
            static_cast<uint64_t>(static_cast<uint8_t>(p[n / 2])) << 8 |
            static_cast<uint64_t>(static_cast<uint8_t>(p[n - 1]));
        b = 0;
      } else {
        a = b = 0;
      }
    } else {
      size_t rest = n;
      do {
        seed = Fold(Load64(p) ^ kMul1, Load64(p + 8) ^ seed);
        p += 16;
        rest -= 16;
      } while (rest > 16);
      a = Load64(p + rest - 16);
      b = Load64(p + rest - 8);
    }
    const __uint128_t product = static_cast<__uint128_t>(a ^ kMul1) * (b ^ seed);
    return Fold(static_cast<uint64_t>(product) ^ kMul0 ^ n,
                static_cast<uint64_t>(product >> 64) ^ kMul1);
  }

 private:
  static constexpr uint64_t kMul0 = 0xA0761D6478BD642FULL;
  static constexpr uint64_t kMul1 = 0xE7037ED1A0B428DBULL;
  // The low and high halves of x * y, xored.
  static uint64_t Fold(uint64_t x, uint64_t y) {
    const __uint128_t product = static_cast<__uint128_t>(x) * y;
    return static_cast<uint64_t>(product) ^ static_cast<uint64_t>(product >> 64);
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
