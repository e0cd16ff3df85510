#include "parquet/dictionary_index.h"

#include <algorithm>
#include <chrono>

namespace strata::parquet {
namespace {

// Per-process seed: distinct inputs that collide in one process need not
// collide in another.
const uint64_t kSeed = static_cast<uint64_t>(
                           std::chrono::steady_clock::now().time_since_epoch().count()) *
                           0x9E3779B97F4A7C15ULL |
                       1;

inline uint64_t Mix(uint64_t h, uint64_t word) {
  h = (h ^ word) * 0xBF58476D1CE4E5B9ULL;
  return h ^ (h >> 31);
}

// Slot of a hash in a table of `mask + 1` slots (low bits; the tag is the
// high 32 bits).
inline size_t SlotOf(uint64_t hash, size_t mask) { return static_cast<size_t>(hash) & mask; }

inline uint64_t MixKey(uint64_t key) {
  key ^= key >> 33;
  key *= 0xFF51AFD7ED558CCDULL;
  key ^= key >> 33;
  key *= 0xC4CEB9FE1A85EC53ULL;
  return key ^ (key >> 33);
}

}  // namespace

uint64_t ByteDictionaryIndex::Hash(std::string_view value) {
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

uint32_t ByteDictionaryIndex::Find(std::string_view value, uint64_t* hash) const {
  const uint64_t h = Hash(value);
  *hash = h;
  if (slots_.empty()) return kNotFound;
  const size_t mask = slots_.size() - 1;
  const auto tag = static_cast<uint32_t>(h >> 32);
  for (size_t i = SlotOf(h, mask);; i = (i + 1) & mask) {
    const Slot& slot = slots_[i];
    if (slot.index_plus_one == 0) return kNotFound;
    if (slot.tag == tag) {
      const std::string_view candidate = values_[slot.index_plus_one - 1];
      // memcmp must not see the null data() of an empty view, even with
      // size 0.
      if (candidate.size() == value.size() &&
          (value.empty() || std::memcmp(candidate.data(), value.data(), value.size()) == 0)) {
        return slot.index_plus_one - 1;
      }
    }
  }
}

uint32_t ByteDictionaryIndex::Insert(std::string_view value, uint64_t hash) {
  if (2 * (values_.size() + 1) > slots_.size()) Grow();
  const auto index = static_cast<uint32_t>(values_.size());
  values_.push_back(value);
  const size_t mask = slots_.size() - 1;
  size_t i = SlotOf(hash, mask);
  while (slots_[i].index_plus_one != 0) i = (i + 1) & mask;
  slots_[i] = {index + 1, static_cast<uint32_t>(hash >> 32)};
  return index;
}

void ByteDictionaryIndex::Grow() {
  const size_t size = std::max<size_t>(64, 2 * slots_.size());
  slots_.assign(size, Slot{});
  const size_t mask = size - 1;
  for (uint32_t index = 0; index < values_.size(); ++index) {
    const uint64_t h = Hash(values_[index]);
    size_t i = SlotOf(h, mask);
    while (slots_[i].index_plus_one != 0) i = (i + 1) & mask;
    slots_[i] = {index + 1, static_cast<uint32_t>(h >> 32)};
  }
}

void ByteDictionaryIndex::Clear() {
  slots_.clear();
  values_.clear();
}

uint32_t FixedDictionaryIndex::FindLarge(uint64_t key) const {
  if (slots_.empty()) return kNotFound;
  const size_t mask = slots_.size() - 1;
  for (size_t i = SlotOf(MixKey(key), mask);; i = (i + 1) & mask) {
    const Slot& slot = slots_[i];
    if (slot.index_plus_one == 0) return kNotFound;
    if (slot.key == key) return slot.index_plus_one - 1;
  }
}

uint32_t FixedDictionaryIndex::Insert(uint64_t key) {
  const uint32_t index = size_++;
  if (key < kSmallKeys) {
    small_[key] = index;
    return index;
  }
  if (2 * (large_count_ + 1) > slots_.size()) Grow();
  ++large_count_;
  const size_t mask = slots_.size() - 1;
  size_t i = SlotOf(MixKey(key), mask);
  while (slots_[i].index_plus_one != 0) i = (i + 1) & mask;
  slots_[i] = {key, index + 1};
  return index;
}

void FixedDictionaryIndex::Grow() {
  std::vector<Slot> old = std::move(slots_);
  const size_t size = std::max<size_t>(64, 2 * old.size());
  slots_.assign(size, Slot{});
  const size_t mask = size - 1;
  for (const Slot& s : old) {
    if (s.index_plus_one == 0) continue;
    size_t i = SlotOf(MixKey(s.key), mask);
    while (slots_[i].index_plus_one != 0) i = (i + 1) & mask;
    slots_[i] = s;
  }
}

void FixedDictionaryIndex::Clear() {
  std::fill(std::begin(small_), std::end(small_), kNotFound);
  slots_.clear();
  large_count_ = 0;
  size_ = 0;
}

}  // namespace strata::parquet
