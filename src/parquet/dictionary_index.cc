#include "parquet/dictionary_index.h"

#include <algorithm>
#include <chrono>

namespace strata::parquet {
namespace {

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

const uint64_t ByteDictionaryIndex::kSeed =
    static_cast<uint64_t>(std::chrono::steady_clock::now().time_since_epoch().count()) *
        0x9E3779B97F4A7C15ULL |
    1;

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
