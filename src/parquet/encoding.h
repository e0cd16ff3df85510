#pragma once

// Parquet value encodings strata writes and reads:
//
//  * PLAIN: BOOLEAN bit-packed LSB first; INT32/INT64/DOUBLE little-endian;
//    BYTE_ARRAY as a 4-byte little-endian length then the bytes;
//    FIXED_LEN_BYTE_ARRAY as the bytes.
//  * The RLE/bit-packed hybrid (Encodings.md "RLE"): definition/repetition
//    levels (v1 pages prefix it with a 4-byte length) and dictionary indices
//    (RLE_DICTIONARY pages prefix it with one byte holding the bit width).
//
// Encoders append to a std::string. Decoders take a byte range they do not
// own and return InvalidArgument when it is too short or malformed; they
// never read outside it.
//
// Thread-safety: free functions and single-owner values.

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace strata::parquet {

static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__,
              "PLAIN encoding is implemented with memcpy on little-endian hosts");

// Bits needed to store max_value (0 for 0).
inline int BitWidthFor(uint32_t max_value) {
  return max_value == 0 ? 0 : 32 - __builtin_clz(max_value);
}

// ---- PLAIN ----

// `values` holds one byte per value, 0 or 1.
void EncodePlainBooleans(const uint8_t* values, size_t count, std::string* out);
void EncodePlainFixed(const void* values, size_t count, size_t width, std::string* out);
void EncodePlainByteArray(std::string_view value, std::string* out);

// Each decoder consumes exactly `count` values from the front of *data and
// advances it.
[[nodiscard]] absl::Status DecodePlainBooleans(std::string_view* data, size_t count,
                                               std::vector<uint8_t>* out);
[[nodiscard]] absl::Status DecodePlainFixed(std::string_view* data, size_t count, size_t width,
                                            void* out);
// Appends to `bytes` and pushes one end offset per value onto `offsets`.
[[nodiscard]] absl::Status DecodePlainByteArrays(std::string_view* data, size_t count,
                                                 std::vector<uint64_t>* offsets,
                                                 std::string* bytes);
[[nodiscard]] absl::Status DecodePlainFixedLenByteArrays(std::string_view* data, size_t count,
                                                         size_t width,
                                                         std::vector<uint64_t>* offsets,
                                                         std::string* bytes);

// ---- RLE/bit-packed hybrid ----

// Appends the hybrid encoding of values (each < 2^bit_width) without any
// length or bit-width prefix. bit_width is 0..32.
void EncodeRleHybrid(const uint32_t* values, size_t count, int bit_width, std::string* out);
void EncodeRleHybrid(const uint8_t* values, size_t count, int bit_width, std::string* out);

// Decodes a hybrid stream. Values past the last run are an error; trailing
// bytes are allowed (pages may pad).
class RleHybridDecoder {
 public:
  RleHybridDecoder(std::string_view data, int bit_width) : data_(data), bit_width_(bit_width) {}

  // Writes exactly `count` values to out.
  [[nodiscard]] absl::Status Decode(uint32_t* out, size_t count);
  [[nodiscard]] absl::Status Decode(uint8_t* out, size_t count);

  // Skips exactly `count` values without storing them; *matches (unless
  // null) receives how many of them equal `value`. Repeated runs cost O(1)
  // each, and so do bit-packed runs when matches is null; bit width 1 is
  // counted a byte at a time.
  [[nodiscard]] absl::Status Skip(size_t count, uint32_t value, size_t* matches);

  // Skips values until `occurrences` values equal to `value` have been
  // passed and the next value equals `value` again, or `limit` values have
  // been skipped (the end of a stream of `limit` values). *skipped receives
  // the number of values skipped, *passed the occurrences passed (less than
  // asked only when the limit was reached). For repetition levels with
  // value 0 this steps over `occurrences` whole rows.
  [[nodiscard]] absl::Status SkipOccurrences(uint32_t value, size_t occurrences, size_t limit,
                                             size_t* skipped, size_t* passed);

 private:
  // The current literal value, without consuming it (a literal run is open).
  uint32_t PeekLiteral() const;
  template <typename T>
  absl::Status DecodeImpl(T* out, size_t count);
  absl::Status NextRun();

  std::string_view data_;
  size_t pos_ = 0;
  int bit_width_;
  // The current run: either `repeat_remaining_` copies of repeat_value_, or
  // `literal_remaining_` bit-packed values starting at bit literal_bit_.
  uint64_t repeat_remaining_ = 0;
  uint32_t repeat_value_ = 0;
  uint64_t literal_remaining_ = 0;
  uint64_t literal_bit_ = 0;
};

// v1 data page levels: 4-byte little-endian length, then the hybrid stream.
void EncodeLevelsV1(const uint8_t* levels, size_t count, int max_level, std::string* out);
// Decodes `count` levels from the front of *data (advancing past the length
// prefix and stream) and checks each is <= max_level.
[[nodiscard]] absl::Status DecodeLevelsV1(std::string_view* data, size_t count, int max_level,
                                          uint8_t* out);
// Takes the length-prefixed level stream from the front of *data (advancing
// past it) and returns its hybrid bytes, for a RleHybridDecoder with
// BitWidthFor(max_level). The caller checks the decoded levels' range.
[[nodiscard]] absl::StatusOr<std::string_view> TakeLevelsV1(std::string_view* data);

}  // namespace strata::parquet
