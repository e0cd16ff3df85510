#pragma once

// BinaryFuse8Filter: a static approximate-membership filter over 64-bit
// keys, the 3-wise binary fuse filter with 8-bit fingerprints of Graf and
// Lemire ("Binary Fuse Filters: Fast and Smaller Than Xor Filters", 2022).
// Contains(key) is true for every key the filter was built from, and for a
// key outside the set with probability about 1/256. It costs about 9 bits
// per key for large sets (more for small ones, see docs/format/
// trace-index.md) and a query reads three bytes.
//
// The key -> (three positions, fingerprint) mapping and the serialised
// section are specified in docs/format/trace-index.md ("Filter"); they are
// part of the on-disk format, so changing either breaks every stored
// spans.tidx. binary_fuse_filter_test.cc pins them with test vectors.
//
// Invariants of a filter (built or deserialised):
//   1. segment_length is a power of two, 1 <= segment_length <= 2^30.
//   2. segment_count >= 1.
//   3. fingerprints().size() == (segment_count + 2) * segment_length < 2^32.
//
// Thread-safety: immutable after construction; safe for concurrent use.
// Errors: Build() returns Internal if no seed out of kMaxBuildAttempts
// succeeds (with duplicates removed this is astronomically unlikely) and
// InvalidArgument for more than kMaxKeys keys; Deserialize() returns
// DataLoss naming the file and the failed check.

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"

namespace strata::storage {

class BinaryFuse8Filter {
 public:
  // The first seed Build() tries by default, and the step to the next seed
  // after a failed attempt (attempt i uses first_seed + i * kSeedStep).
  static constexpr uint64_t kDefaultFirstSeed = 0x7374726174612d31;  // "strata-1"
  static constexpr uint64_t kSeedStep = 0x9e3779b97f4a7c15;
  static constexpr int kMaxBuildAttempts = 64;
  // Keeps per-position key counts (times 4) and the fingerprint array
  // below 2^32 at any set size.
  static constexpr size_t kMaxKeys = (size_t{1} << 30) - 1;
  // Bytes of the section before the fingerprints (seed, segment length,
  // segment count, array length, reserved).
  static constexpr size_t kSectionHeaderBytes = 24;

  // Builds a filter over `keys`. Duplicate keys are allowed (they are
  // removed before a retry, see the .cc). An empty set gives a filter whose
  // fingerprints are all zero (every query is a 1/256 false positive).
  [[nodiscard]] static absl::StatusOr<BinaryFuse8Filter> Build(
      std::span<const uint64_t> keys, uint64_t first_seed = kDefaultFirstSeed);

  // Parses one serialised filter section (exactly its bytes, padding
  // included). `file_name` names the file in errors.
  [[nodiscard]] static absl::StatusOr<BinaryFuse8Filter> Deserialize(std::string_view section,
                                                                     std::string_view file_name);

  // The size of the serialised section for `array_length` fingerprints:
  // the header, the fingerprints, zero padding to a multiple of 8.
  static uint64_t SectionBytes(uint64_t array_length);

  BinaryFuse8Filter(BinaryFuse8Filter&&) = default;
  BinaryFuse8Filter& operator=(BinaryFuse8Filter&&) = default;
  BinaryFuse8Filter(const BinaryFuse8Filter&) = default;
  BinaryFuse8Filter& operator=(const BinaryFuse8Filter&) = default;

  bool Contains(uint64_t key) const;

  // Appends the section (SectionBytes(array_length()) bytes) to `out`.
  void AppendSerialized(std::string& out) const;
  uint64_t SerializedBytes() const { return SectionBytes(fingerprints_.size()); }

  uint64_t seed() const { return seed_; }
  uint32_t segment_length() const { return segment_length_; }
  uint32_t segment_count() const { return segment_count_; }
  std::span<const uint8_t> fingerprints() const { return fingerprints_; }
  // Heap and object bytes this filter holds.
  size_t MemoryBytes() const { return sizeof(*this) + fingerprints_.capacity(); }
  // Attempts the build took (1 when the first seed worked); 0 when
  // deserialised.
  int build_attempts() const { return build_attempts_; }

  friend bool operator==(const BinaryFuse8Filter&, const BinaryFuse8Filter&);

 private:
  BinaryFuse8Filter(uint64_t seed, uint32_t segment_length, uint32_t segment_count,
                    std::vector<uint8_t> fingerprints, int build_attempts);

  uint64_t seed_;
  uint32_t segment_length_;
  uint32_t segment_count_;
  std::vector<uint8_t> fingerprints_;
  int build_attempts_;
};

}  // namespace strata::storage
