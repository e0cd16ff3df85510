#include "storage/index/binary_fuse_filter.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <utility>

#include "absl/status/status.h"
#include "common/little_endian.h"
#include "fmt/format.h"

namespace strata::storage {
namespace {

// ---------------------------------------------------------------------------
// The key -> positions and fingerprint mapping (docs/format/trace-index.md,
// "Filter"). Part of the file format: do not change.

// A 64-bit finaliser (MurmurHash3's fmix64): a bijection that spreads every
// input bit over the whole word.
uint64_t Finalize64(uint64_t x) {
  x ^= x >> 33;
  x *= 0xff51afd7ed558ccdULL;
  x ^= x >> 33;
  x *= 0xc4ceb9fe1a85ec53ULL;
  x ^= x >> 33;
  return x;
}

uint64_t KeyHash(uint64_t key, uint64_t seed) { return Finalize64(key + seed); }

uint8_t FingerprintOf(uint64_t hash) { return static_cast<uint8_t>(hash ^ (hash >> 32)); }

struct Positions {
  uint32_t at[3];
};

// Position 0 falls in a segment chosen by the high bits of the hash (a
// multiply-shift, so no division); positions 1 and 2 lie in the next two
// segments, at offsets taken from other bits of the hash.
Positions PositionsOf(uint64_t hash, uint32_t segment_length, uint32_t segment_count) {
  const uint64_t start_range = uint64_t{segment_count} * segment_length;
  const uint64_t p0 =
      static_cast<uint64_t>((static_cast<unsigned __int128>(hash) * start_range) >> 64);
  const uint64_t mask = segment_length - 1;
  const uint64_t p1 = (p0 + segment_length) ^ ((hash >> 18) & mask);
  const uint64_t p2 = (p0 + 2 * uint64_t{segment_length}) ^ (hash & mask);
  return {{static_cast<uint32_t>(p0), static_cast<uint32_t>(p1), static_cast<uint32_t>(p2)}};
}

// ---------------------------------------------------------------------------
// Sizing (writer only: the reader takes the stored sizes).

struct Shape {
  uint32_t segment_length = 0;
  uint32_t segment_count = 0;
  uint32_t array_length() const { return (segment_count + 2) * segment_length; }
};

// Segments grow with the set (the paper's rule for arity 3), so a key's
// three positions stay close together while large sets still get enough
// segments to peel well.
Shape ShapeFor(size_t key_count) {
  Shape shape;
  if (key_count <= 1) {
    shape.segment_length = 4;
    shape.segment_count = 1;
    return shape;
  }
  const double n = static_cast<double>(key_count);
  const int exponent =
      std::clamp(static_cast<int>(std::floor(std::log(n) / std::log(3.33) + 2.25)), 2, 18);
  shape.segment_length = uint32_t{1} << exponent;
  // Spare room shrinks toward 12.5% as the set grows; small sets need more.
  const double size_factor = std::max(1.125, 0.875 + 0.25 * std::log(1e6) / std::log(n));
  const uint64_t capacity = static_cast<uint64_t>(std::llround(n * size_factor));
  const uint64_t segments = (capacity + shape.segment_length - 1) / shape.segment_length;
  shape.segment_count = static_cast<uint32_t>(std::max<uint64_t>(segments, 3) - 2);
  return shape;
}

// ---------------------------------------------------------------------------
// Construction: hypergraph peeling (the paper's Algorithm 3, restated).
//
// Every position keeps how many keys map to it and the xor of their hashes
// and of their slot numbers (0, 1, 2). A position with exactly one key
// therefore names that key and the slot it occupies. Peeling repeatedly
// removes such a key; if every key is removed, assigning fingerprints in
// reverse peeling order gives each key a free position to make its three
// bytes xor to its fingerprint.

class Peeler {
 public:
  explicit Peeler(Shape shape) : shape_(shape) {}

  // Fills `fingerprints` (array_length bytes) and returns true when every
  // key peels for `seed`; returns false otherwise (retry with another seed).
  bool Run(std::span<const uint64_t> keys, uint64_t seed, std::vector<uint8_t>& fingerprints) {
    const uint32_t array_length = shape_.array_length();
    // count_and_slot[p] = (number of keys at p) * 4, xor (their slots).
    count_and_slot_.assign(array_length, 0);
    hash_xor_.assign(array_length, 0);
    AddInSegmentOrder(keys, seed);

    peeled_hash_.resize(keys.size());
    peeled_slot_.resize(keys.size());
    size_t peeled = 0;
    lonely_.clear();
    for (uint32_t p = 0; p < array_length; ++p) {
      if ((count_and_slot_[p] >> 2) == 1) {
        lonely_.push_back(p);
      }
    }
    while (!lonely_.empty()) {
      const uint32_t p = lonely_.back();
      lonely_.pop_back();
      if ((count_and_slot_[p] >> 2) != 1) {
        continue;  // emptied since it was queued
      }
      const uint64_t hash = hash_xor_[p];
      peeled_hash_[peeled] = hash;
      peeled_slot_[peeled] = static_cast<uint8_t>(count_and_slot_[p] & 3);
      ++peeled;
      Remove(hash);
    }
    if (peeled != keys.size()) {
      return false;
    }

    fingerprints.assign(array_length, 0);
    for (size_t i = peeled; i-- > 0;) {
      const uint64_t hash = peeled_hash_[i];
      const Positions pos = PositionsOf(hash, shape_.segment_length, shape_.segment_count);
      // The key's own slot is still zero: only this key writes it.
      fingerprints[pos.at[peeled_slot_[i]]] = FingerprintOf(hash) ^ fingerprints[pos.at[0]] ^
                                              fingerprints[pos.at[1]] ^ fingerprints[pos.at[2]];
    }
    return true;
  }

 private:
  // Adds every key, in the order of its first position's segment (a
  // counting sort on it), so the three positions of consecutive keys lie
  // in a window of a few segments that stays in cache. Only speed depends
  // on the order; the filter does not.
  void AddInSegmentOrder(std::span<const uint64_t> keys, uint64_t seed) {
    const int shift = std::countr_zero(shape_.segment_length);
    const uint64_t start_range = uint64_t{shape_.segment_count} * shape_.segment_length;
    const auto segment_of = [&](uint64_t hash) {
      return static_cast<uint32_t>(
          static_cast<uint64_t>((static_cast<unsigned __int128>(hash) * start_range) >> 64) >>
          shift);
    };
    segment_start_.assign(shape_.segment_count + 1, 0);
    for (uint64_t key : keys) {
      ++segment_start_[segment_of(KeyHash(key, seed)) + 1];
    }
    for (uint32_t s = 0; s < shape_.segment_count; ++s) {
      segment_start_[s + 1] += segment_start_[s];
    }
    sorted_hash_.resize(keys.size());
    for (uint64_t key : keys) {
      const uint64_t hash = KeyHash(key, seed);
      sorted_hash_[segment_start_[segment_of(hash)]++] = hash;
    }
    for (uint64_t hash : sorted_hash_) {
      Add(hash);
    }
  }

  void Add(uint64_t hash) {
    const Positions pos = PositionsOf(hash, shape_.segment_length, shape_.segment_count);
    for (uint32_t slot = 0; slot < 3; ++slot) {
      count_and_slot_[pos.at[slot]] = (count_and_slot_[pos.at[slot]] + 4) ^ slot;
      hash_xor_[pos.at[slot]] ^= hash;
    }
  }

  void Remove(uint64_t hash) {
    const Positions pos = PositionsOf(hash, shape_.segment_length, shape_.segment_count);
    for (uint32_t slot = 0; slot < 3; ++slot) {
      const uint32_t p = pos.at[slot];
      count_and_slot_[p] = (count_and_slot_[p] - 4) ^ slot;
      hash_xor_[p] ^= hash;
      if ((count_and_slot_[p] >> 2) == 1) {
        lonely_.push_back(p);
      }
    }
  }

  Shape shape_;
  std::vector<uint32_t> count_and_slot_;
  std::vector<uint64_t> hash_xor_;
  std::vector<uint32_t> lonely_;  // positions seen with exactly one key
  std::vector<uint32_t> segment_start_;
  std::vector<uint64_t> sorted_hash_;
  std::vector<uint64_t> peeled_hash_;
  std::vector<uint8_t> peeled_slot_;
};

absl::Status FilterError(std::string_view file_name, std::string_view check,
                         std::string_view detail) {
  return absl::DataLossError(fmt::format("{}: filter {}: {}", file_name, check, detail));
}

}  // namespace

BinaryFuse8Filter::BinaryFuse8Filter(uint64_t seed, uint32_t segment_length, uint32_t segment_count,
                                     std::vector<uint8_t> fingerprints, int build_attempts)
    : seed_(seed),
      segment_length_(segment_length),
      segment_count_(segment_count),
      fingerprints_(std::move(fingerprints)),
      build_attempts_(build_attempts) {}

absl::StatusOr<BinaryFuse8Filter> BinaryFuse8Filter::Build(std::span<const uint64_t> keys,
                                                           uint64_t first_seed) {
  if (keys.size() > kMaxKeys) {
    return absl::InvalidArgumentError(
        fmt::format("binary fuse filter: {} keys, at most {}", keys.size(), kMaxKeys));
  }
  // Duplicate keys share all three positions, so they never peel. Rather
  // than sort every set up front, the first failure sorts and dedupes once;
  // later failures are bad luck with the seed and only change the seed.
  std::vector<uint64_t> unique_keys;
  bool deduplicated = false;
  Shape shape = ShapeFor(keys.size());
  Peeler peeler(shape);
  std::vector<uint8_t> fingerprints;
  for (int attempt = 0; attempt < kMaxBuildAttempts; ++attempt) {
    const uint64_t seed = first_seed + static_cast<uint64_t>(attempt) * kSeedStep;
    if (peeler.Run(keys, seed, fingerprints)) {
      return BinaryFuse8Filter(seed, shape.segment_length, shape.segment_count,
                               std::move(fingerprints), attempt + 1);
    }
    if (!deduplicated) {
      deduplicated = true;
      unique_keys.assign(keys.begin(), keys.end());
      std::sort(unique_keys.begin(), unique_keys.end());
      unique_keys.erase(std::unique(unique_keys.begin(), unique_keys.end()), unique_keys.end());
      if (unique_keys.size() != keys.size()) {
        keys = unique_keys;
        shape = ShapeFor(keys.size());
        peeler = Peeler(shape);
      }
    }
  }
  return absl::InternalError(
      fmt::format("binary fuse filter: no seed out of {} built a filter for {} keys",
                  kMaxBuildAttempts, keys.size()));
}

uint64_t BinaryFuse8Filter::SectionBytes(uint64_t array_length) {
  return (kSectionHeaderBytes + array_length + 7) / 8 * 8;
}

absl::StatusOr<BinaryFuse8Filter> BinaryFuse8Filter::Deserialize(std::string_view section,
                                                                 std::string_view file_name) {
  if (section.size() < kSectionHeaderBytes) {
    return FilterError(file_name, "size",
                       fmt::format("section of {} bytes is shorter than its {}-byte header",
                                   section.size(), kSectionHeaderBytes));
  }
  const uint64_t seed = LoadLittleEndian(section.data() + 0, 8);
  const uint64_t segment_length = LoadLittleEndian(section.data() + 8, 4);
  const uint64_t segment_count = LoadLittleEndian(section.data() + 12, 4);
  const uint64_t array_length = LoadLittleEndian(section.data() + 16, 4);
  const uint64_t reserved = LoadLittleEndian(section.data() + 20, 4);
  if (reserved != 0) {
    return FilterError(file_name, "reserved", fmt::format("{}, not 0", reserved));
  }
  if (segment_length == 0 || (segment_length & (segment_length - 1)) != 0) {
    return FilterError(file_name, "segment length",
                       fmt::format("{} is not a power of two", segment_length));
  }
  if (segment_count == 0) {
    return FilterError(file_name, "segment count", "0");
  }
  if ((segment_count + 2) * segment_length != array_length) {
    return FilterError(
        file_name, "array length",
        fmt::format("{}, but (segment count {} + 2) * segment length {} is {}", array_length,
                    segment_count, segment_length, (segment_count + 2) * segment_length));
  }
  if (section.size() != SectionBytes(array_length)) {
    return FilterError(file_name, "size",
                       fmt::format("section of {} bytes, but array length {} needs {}",
                                   section.size(), array_length, SectionBytes(array_length)));
  }
  for (size_t i = kSectionHeaderBytes + array_length; i < section.size(); ++i) {
    if (section[i] != 0) {
      return FilterError(file_name, "padding", "not zero");
    }
  }
  const auto* begin = reinterpret_cast<const uint8_t*>(section.data()) + kSectionHeaderBytes;
  return BinaryFuse8Filter(seed, static_cast<uint32_t>(segment_length),
                           static_cast<uint32_t>(segment_count),
                           std::vector<uint8_t>(begin, begin + array_length), 0);
}

bool BinaryFuse8Filter::Contains(uint64_t key) const {
  const uint64_t hash = KeyHash(key, seed_);
  const Positions pos = PositionsOf(hash, segment_length_, segment_count_);
  const uint8_t* f = fingerprints_.data();
  return (FingerprintOf(hash) ^ f[pos.at[0]] ^ f[pos.at[1]] ^ f[pos.at[2]]) == 0;
}

void BinaryFuse8Filter::AppendSerialized(std::string& out) const {
  const size_t start = out.size();
  PutU64(out, seed_);
  PutU32(out, segment_length_);
  PutU32(out, segment_count_);
  PutU32(out, static_cast<uint32_t>(fingerprints_.size()));
  PutU32(out, 0);
  out.append(reinterpret_cast<const char*>(fingerprints_.data()), fingerprints_.size());
  out.resize(start + SerializedBytes(), '\0');
}

bool operator==(const BinaryFuse8Filter& a, const BinaryFuse8Filter& b) {
  return a.seed_ == b.seed_ && a.segment_length_ == b.segment_length_ &&
         a.segment_count_ == b.segment_count_ && a.fingerprints_ == b.fingerprints_;
}

}  // namespace strata::storage
