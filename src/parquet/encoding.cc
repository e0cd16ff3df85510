#include "parquet/encoding.h"

#include <cstring>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "common/check.h"
#include "fmt/format.h"

namespace strata::parquet {
namespace {

void WriteVarint(uint64_t value, std::string* out) {
  while (value >= 0x80) {
    out->push_back(static_cast<char>((value & 0x7F) | 0x80));
    value >>= 7;
  }
  out->push_back(static_cast<char>(value));
}

// Packs whole groups of 8 values of at most 8 bits, W bits each, to
// `groups` * W bytes at dst (W a constant, so the loop unrolls).
template <int W, typename T>
void PackNarrowGroups(const T* values, size_t groups, uint8_t* dst) {
  for (size_t g = 0; g < groups; ++g, values += 8, dst += W) {
    uint64_t acc = 0;
    for (int j = 0; j < 8; ++j) acc |= static_cast<uint64_t>(values[j]) << (j * W);
    std::memcpy(dst, &acc, W);
  }
}

// Width 1 from bytes (levels of flat optional columns and lists): the 8
// values of a group, each 0 or 1, gathered into a byte by one multiply
// (byte k of the word lands in bit k, with no carries).
void PackBitGroups(const uint8_t* values, size_t groups, uint8_t* dst) {
  for (size_t g = 0; g < groups; ++g) {
    uint64_t word;
    std::memcpy(&word, values + 8 * g, 8);
    dst[g] = static_cast<uint8_t>((word * 0x0102040810204080ULL) >> 56);
  }
}

template <typename T>
void PackGroups(const T* values, size_t groups, size_t width, uint8_t* dst) {
  switch (width) {
    case 1:
      if constexpr (sizeof(T) == 1) return PackBitGroups(values, groups, dst);
      return PackNarrowGroups<1>(values, groups, dst);
    case 2:
      return PackNarrowGroups<2>(values, groups, dst);
    case 3:
      return PackNarrowGroups<3>(values, groups, dst);
    case 4:
      return PackNarrowGroups<4>(values, groups, dst);
    case 5:
      return PackNarrowGroups<5>(values, groups, dst);
    case 6:
      return PackNarrowGroups<6>(values, groups, dst);
    case 7:
      return PackNarrowGroups<7>(values, groups, dst);
    case 8:
      return PackNarrowGroups<8>(values, groups, dst);
    default:
      break;
  }
  for (size_t g = 0; g < groups; ++g, values += 8) {
    uint64_t acc = 0;
    size_t bits = 0;
    for (size_t j = 0; j < 8; ++j) {
      acc |= static_cast<uint64_t>(values[j]) << bits;
      bits += width;
      while (bits >= 8) {
        *dst++ = static_cast<uint8_t>(acc);
        acc >>= 8;
        bits -= 8;
      }
    }
  }
}

// Bit-packs values LSB first; `count` is a multiple of 8 except possibly for
// the final group, which is zero-padded to 8 values. Writes straight into
// the string (one resize), a group of 8 values at a time.
template <typename T>
void BitPack(const T* values, size_t count, int bit_width, std::string* out) {
  const size_t groups = (count + 7) / 8;
  const size_t width = static_cast<size_t>(bit_width);
  const size_t at = out->size();
  out->resize(at + groups * width);
  if (width == 0 || groups == 0) return;
  auto* dst = reinterpret_cast<uint8_t*>(out->data() + at);
  const size_t full = count / 8;
  PackGroups(values, full, width, dst);
  if (full < groups) {
    T tail[8] = {};
    std::memcpy(tail, values + 8 * full, (count - 8 * full) * sizeof(T));
    PackGroups(tail, 1, width, dst + full * width);
  }
}

template <typename T>
void EmitLiterals(const T* values, size_t count, int bit_width, std::string* out) {
  if (count == 0) return;
  const uint64_t groups = (count + 7) / 8;
  WriteVarint((groups << 1) | 1, out);
  BitPack(values, count, bit_width, out);
}

void EmitRepeat(uint32_t value, size_t count, int bit_width, std::string* out) {
  WriteVarint(static_cast<uint64_t>(count) << 1, out);
  const int value_bytes = (bit_width + 7) / 8;
  for (int b = 0; b < value_bytes; ++b)
    out->push_back(static_cast<char>((value >> (8 * b)) & 0xFF));
}

// The end of the run of values equal to values[i] (i < count).
size_t RunEnd(const uint8_t* values, size_t i, size_t count) {
  const uint8_t value = values[i];
  size_t end = i + 1;
  // Eight bytes at a time: a level stream is mostly long runs.
  const uint64_t pattern = 0x0101010101010101ULL * value;
  while (end + 8 <= count) {
    uint64_t word;
    std::memcpy(&word, values + end, 8);
    const uint64_t diff = word ^ pattern;
    if (diff != 0) return end + static_cast<size_t>(__builtin_ctzll(diff)) / 8;
    end += 8;
  }
  while (end < count && values[end] == value) ++end;
  return end;
}

size_t RunEnd(const uint32_t* values, size_t i, size_t count) {
  const uint32_t value = values[i];
  size_t end = i + 1;
#if defined(__SSE2__)
  // Four at a time: the runs found here are 8 or more long, and in sorted
  // data (a service's spans) thousands.
  const __m128i pattern = _mm_set1_epi32(static_cast<int>(value));
  while (end + 4 <= count) {
    const __m128i four = _mm_loadu_si128(reinterpret_cast<const __m128i*>(values + end));
    const int equal = _mm_movemask_ps(_mm_castsi128_ps(_mm_cmpeq_epi32(four, pattern)));
    if (equal != 0xF) return end + static_cast<size_t>(__builtin_ctz(~equal));
    end += 4;
  }
#endif
  while (end < count && values[end] == value) ++end;
  return end;
}

// LongRunStart (below) one value at a time from p, `streak` equalities
// values[k] == values[k + 1] in a row (from i on) ending just before p.
template <typename T>
size_t LongRunStartScalar(const T* values, size_t p, size_t streak, size_t count) {
  for (; p + 1 < count; ++p) {
    streak = values[p] == values[p + 1] ? streak + 1 : 0;
    if (streak == 7) return p - 6;
  }
  return count;
}

// Neighbour equalities, kEqualNeighbours of them per call: bit k set when
// values[k] == values[k + 1]; reads values[0, kEqualNeighbours + 1).
template <typename T>
constexpr size_t kEqualNeighbours = sizeof(T) == 1 ? 16 : 8;

uint64_t EqualNeighbours(const uint8_t* values) {
#if defined(__SSE2__)
  const __m128i a = _mm_loadu_si128(reinterpret_cast<const __m128i*>(values));
  const __m128i b = _mm_loadu_si128(reinterpret_cast<const __m128i*>(values + 1));
  return static_cast<uint64_t>(static_cast<uint32_t>(_mm_movemask_epi8(_mm_cmpeq_epi8(a, b))));
#else
  // Eight at a time: 0x80 in each zero byte of a ^ b (exact, no carries
  // between bytes), then gathered into 8 bits.
  constexpr uint64_t kLow7 = 0x7F7F7F7F7F7F7F7FULL;
  uint64_t equal = 0;
  for (int half = 0; half < 2; ++half) {
    uint64_t a, b;
    std::memcpy(&a, values + 8 * half, 8);
    std::memcpy(&b, values + 8 * half + 1, 8);
    const uint64_t x = a ^ b;
    const uint64_t zero = ~(((x & kLow7) + kLow7) | x | kLow7);
    equal |= (((zero >> 7) * 0x0102040810204080ULL) >> 56) << (8 * half);
  }
  return equal;
#endif
}

uint64_t EqualNeighbours(const uint32_t* values) {
#if defined(__SSE2__)
  // Two 4-lane compares of the values against their right neighbours.
  const auto load = [](const uint32_t* p) {
    return _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
  };
  const int low =
      _mm_movemask_ps(_mm_castsi128_ps(_mm_cmpeq_epi32(load(values), load(values + 1))));
  const int high =
      _mm_movemask_ps(_mm_castsi128_ps(_mm_cmpeq_epi32(load(values + 4), load(values + 5))));
  return static_cast<uint64_t>(low | high << 4);
#else
  uint64_t equal = 0;
  for (int k = 0; k < 8; ++k) equal |= static_cast<uint64_t>(values[k] == values[k + 1]) << k;
  return equal;
#endif
}

// The start of the first run of 8 or more equal values at or after i, where
// i starts a run (values[i - 1] != values[i]), or count if there is none.
// The greedy encoder below passes over shorter runs without emitting
// anything, so it may skip straight there. Levels (list rows of a few
// elements: 0 1 1 0 1 0 ...) and dictionary indices (mostly distinct
// neighbours) are mostly such short runs; this looks at 16 (levels) or 8
// (indices) neighbour equalities per step instead of finding each run's
// end.
template <typename T>
size_t LongRunStart(const T* values, size_t i, size_t count) {
  // Bits 0..6: the equalities values[k] == values[k + 1] for k = p - 7 ..
  // p - 1 (zero before i: i starts a run). They hold no 7 ones in a row,
  // or the previous step would have returned.
  constexpr size_t kStep = kEqualNeighbours<T>;
  uint64_t carry = 0;
  size_t p = i;
  while (p + kStep + 1 <= count) {
    // Bit k of `equal` is values[p + k] == values[p + k + 1].
    const uint64_t equal = EqualNeighbours(values + p);
    // Bit b of `seven` is set when bits b..b+6 of v all are, i.e.
    // values[p - 7 + b .. p + b] are equal; the lowest such b starts a run
    // (bit b - 1 is clear).
    const uint64_t v = (equal << 7) | carry;
    const uint64_t two = v & (v >> 1);
    const uint64_t four = two & (two >> 2);
    const uint64_t seven = four & (four >> 3);
    if (seven != 0) return p - 7 + static_cast<size_t>(__builtin_ctzll(seven));
    carry = equal >> (kStep - 7);
    p += kStep;
  }
  // The last few values one at a time (carry has a clear bit: its leading
  // ones are the equalities in a row just before p).
  const size_t streak = static_cast<size_t>(__builtin_clzll(~carry << 57));
  return LongRunStartScalar(values, p, streak, count);
}

// Greedy hybrid encoder: runs of 8 or more equal values become RLE runs;
// everything else is bit-packed. A bit-packed run in the middle of the stream
// must hold a multiple of 8 values, so a literal stretch borrows up to 7
// values from the following run to round itself up.
template <typename T>
void EncodeRleHybridImpl(const T* values, size_t count, int bit_width, std::string* out) {
  STRATA_CHECK(bit_width >= 0 && bit_width <= 32, "bit width out of range");
  size_t literal_start = 0;
  size_t i = 0;
  while (i < count) {
    i = LongRunStart(values, i, count);
    if (i == count) break;
    const size_t run_end = RunEnd(values, i, count);
    const size_t run = run_end - i;
    if (run >= 8) {
      const size_t literal_count = i - literal_start;
      const size_t borrow = (8 - literal_count % 8) % 8;
      if (run - borrow >= 8) {
        EmitLiterals(values + literal_start, literal_count + borrow, bit_width, out);
        EmitRepeat(static_cast<uint32_t>(values[i]), run - borrow, bit_width, out);
        literal_start = run_end;
      }
    }
    i = run_end;
  }
  EmitLiterals(values + literal_start, count - literal_start, bit_width, out);
}

absl::Status Truncated(const char* what, size_t need, size_t have) {
  return absl::InvalidArgumentError(
      fmt::format("{}: need {} bytes, only {} remain", what, need, have));
}

}  // namespace

// ---- PLAIN ----

void EncodePlainBooleans(const uint8_t* values, size_t count, std::string* out) {
  BitPack(values, count, 1, out);
  // BitPack pads to whole groups of 8 values, i.e. whole bytes; PLAIN wants
  // exactly ceil(count / 8) bytes, which is the same number.
}

void EncodePlainFixed(const void* values, size_t count, size_t width, std::string* out) {
  out->append(static_cast<const char*>(values), count * width);
}

void EncodePlainByteArray(std::string_view value, std::string* out) {
  const uint32_t length = static_cast<uint32_t>(value.size());
  char prefix[4];
  std::memcpy(prefix, &length, 4);
  out->append(prefix, 4);
  out->append(value.data(), value.size());
}

absl::Status DecodePlainBooleans(std::string_view* data, size_t count, std::vector<uint8_t>* out) {
  const size_t bytes = (count + 7) / 8;
  if (bytes > data->size()) return Truncated("PLAIN booleans", bytes, data->size());
  const uint8_t* p = reinterpret_cast<const uint8_t*>(data->data());
  for (size_t i = 0; i < count; ++i) out->push_back((p[i / 8] >> (i % 8)) & 1);
  data->remove_prefix(bytes);
  return absl::OkStatus();
}

absl::Status DecodePlainFixed(std::string_view* data, size_t count, size_t width, void* out) {
  if (width != 0 && count > data->size() / width) {
    return Truncated("PLAIN values", count * width, data->size());
  }
  if (count == 0) return absl::OkStatus();
  std::memcpy(out, data->data(), count * width);
  data->remove_prefix(count * width);
  return absl::OkStatus();
}

absl::Status DecodePlainByteArrays(std::string_view* data, size_t count,
                                   std::vector<uint64_t>* offsets, std::string* bytes) {
  for (size_t i = 0; i < count; ++i) {
    if (data->size() < 4) return Truncated("PLAIN byte array length", 4, data->size());
    uint32_t length;
    std::memcpy(&length, data->data(), 4);
    data->remove_prefix(4);
    if (length > data->size()) return Truncated("PLAIN byte array", length, data->size());
    bytes->append(data->data(), length);
    data->remove_prefix(length);
    offsets->push_back(bytes->size());
  }
  return absl::OkStatus();
}

absl::Status DecodePlainFixedLenByteArrays(std::string_view* data, size_t count, size_t width,
                                           std::vector<uint64_t>* offsets, std::string* bytes) {
  if (width != 0 && count > data->size() / width) {
    return Truncated("PLAIN fixed-length byte arrays", count * width, data->size());
  }
  for (size_t i = 0; i < count; ++i) {
    bytes->append(data->data() + i * width, width);
    offsets->push_back(bytes->size());
  }
  data->remove_prefix(count * width);
  return absl::OkStatus();
}

// ---- RLE/bit-packed hybrid ----

void EncodeRleHybrid(const uint32_t* values, size_t count, int bit_width, std::string* out) {
  EncodeRleHybridImpl(values, count, bit_width, out);
}

void EncodeRleHybrid(const uint8_t* values, size_t count, int bit_width, std::string* out) {
  EncodeRleHybridImpl(values, count, bit_width, out);
}

absl::Status RleHybridDecoder::NextRun() {
  uint64_t header = 0;
  for (int shift = 0;; shift += 7) {
    if (shift >= 63) return absl::InvalidArgumentError("RLE run header varint too long");
    if (pos_ >= data_.size()) {
      return absl::InvalidArgumentError(
          fmt::format("RLE stream ended at byte {} with values still expected", pos_));
    }
    const uint8_t byte = static_cast<uint8_t>(data_[pos_++]);
    header |= static_cast<uint64_t>(byte & 0x7F) << shift;
    if ((byte & 0x80) == 0) break;
  }
  if (header & 1) {
    const uint64_t groups = header >> 1;
    const uint64_t available_bytes = data_.size() - pos_;
    const uint64_t bytes = groups * static_cast<uint64_t>(bit_width_);
    if (groups > (uint64_t{1} << 40) || bytes > available_bytes) {
      // Some writers drop the zero padding of a final group; accept as many
      // whole values as the remaining bytes hold.
      if (bit_width_ == 0) return absl::InvalidArgumentError("bad bit-packed run");
      literal_remaining_ = available_bytes * 8 / static_cast<uint64_t>(bit_width_);
    } else {
      literal_remaining_ = groups * 8;
    }
    if (literal_remaining_ == 0) {
      return absl::InvalidArgumentError(fmt::format("empty bit-packed run at byte {}", pos_));
    }
    literal_bit_ = static_cast<uint64_t>(pos_) * 8;
    pos_ += bit_width_ == 0 ? 0 : std::min<uint64_t>(bytes, available_bytes);
    return absl::OkStatus();
  }
  repeat_remaining_ = header >> 1;
  if (repeat_remaining_ == 0) {
    return absl::InvalidArgumentError(fmt::format("empty RLE run at byte {}", pos_));
  }
  const size_t value_bytes = static_cast<size_t>((bit_width_ + 7) / 8);
  if (value_bytes > data_.size() - pos_) {
    return absl::InvalidArgumentError(fmt::format("truncated RLE run value at byte {}", pos_));
  }
  uint64_t value = 0;
  for (size_t b = 0; b < value_bytes; ++b) {
    value |= static_cast<uint64_t>(static_cast<uint8_t>(data_[pos_ + b])) << (8 * b);
  }
  pos_ += value_bytes;
  if (bit_width_ < 32 && (value >> bit_width_) != 0) {
    return absl::InvalidArgumentError(
        fmt::format("RLE run value {} does not fit in {} bits", value, bit_width_));
  }
  repeat_value_ = static_cast<uint32_t>(value);
  return absl::OkStatus();
}

template <typename T>
absl::Status RleHybridDecoder::DecodeImpl(T* out, size_t count) {
  if (bit_width_ < 0 || bit_width_ > 32) {
    return absl::InvalidArgumentError(fmt::format("bit width {} out of range", bit_width_));
  }
  if (bit_width_ > static_cast<int>(8 * sizeof(T))) {
    return absl::InvalidArgumentError(
        fmt::format("bit width {} too wide for {}-bit values", bit_width_, 8 * sizeof(T)));
  }
  const uint8_t* bytes = reinterpret_cast<const uint8_t*>(data_.data());
  const uint64_t mask = bit_width_ == 32 ? 0xFFFFFFFFull : (uint64_t{1} << bit_width_) - 1;
  size_t done = 0;
  while (done < count) {
    if (repeat_remaining_ == 0 && literal_remaining_ == 0) {
      if (absl::Status s = NextRun(); !s.ok()) return s;
    }
    if (repeat_remaining_ > 0) {
      const size_t n = static_cast<size_t>(std::min<uint64_t>(repeat_remaining_, count - done));
      std::fill(out + done, out + done + n, static_cast<T>(repeat_value_));
      repeat_remaining_ -= n;
      done += n;
      continue;
    }
    const size_t n = static_cast<size_t>(std::min<uint64_t>(literal_remaining_, count - done));
    for (size_t i = 0; i < n; ++i) {
      // Gather the bytes that hold this value (at most 5 for 32 bits).
      const uint64_t first_byte = literal_bit_ / 8;
      const int shift = static_cast<int>(literal_bit_ % 8);
      const int needed = (shift + bit_width_ + 7) / 8;
      uint64_t word = 0;
      for (int b = 0; b < needed; ++b)
        word |= static_cast<uint64_t>(bytes[first_byte + b]) << (8 * b);
      out[done + i] = static_cast<T>((word >> shift) & mask);
      literal_bit_ += static_cast<uint64_t>(bit_width_);
    }
    literal_remaining_ -= n;
    done += n;
  }
  return absl::OkStatus();
}

absl::Status RleHybridDecoder::Decode(uint32_t* out, size_t count) {
  return DecodeImpl(out, count);
}
absl::Status RleHybridDecoder::Decode(uint8_t* out, size_t count) { return DecodeImpl(out, count); }

uint32_t RleHybridDecoder::PeekLiteral() const {
  const uint8_t* bytes = reinterpret_cast<const uint8_t*>(data_.data());
  const uint64_t mask = bit_width_ == 32 ? 0xFFFFFFFFull : (uint64_t{1} << bit_width_) - 1;
  const uint64_t first_byte = literal_bit_ / 8;
  const int shift = static_cast<int>(literal_bit_ % 8);
  const int needed = (shift + bit_width_ + 7) / 8;
  uint64_t word = 0;
  for (int b = 0; b < needed; ++b) word |= static_cast<uint64_t>(bytes[first_byte + b]) << (8 * b);
  return static_cast<uint32_t>((word >> shift) & mask);
}

absl::Status RleHybridDecoder::Skip(size_t count, uint32_t value, size_t* matches) {
  if (bit_width_ < 0 || bit_width_ > 32) {
    return absl::InvalidArgumentError(fmt::format("bit width {} out of range", bit_width_));
  }
  if (matches != nullptr) *matches = 0;
  const uint8_t* bytes = reinterpret_cast<const uint8_t*>(data_.data());
  size_t done = 0;
  while (done < count) {
    if (repeat_remaining_ == 0 && literal_remaining_ == 0) {
      if (absl::Status s = NextRun(); !s.ok()) return s;
    }
    if (repeat_remaining_ > 0) {
      const size_t n = static_cast<size_t>(std::min<uint64_t>(repeat_remaining_, count - done));
      if (matches != nullptr && repeat_value_ == value) *matches += n;
      repeat_remaining_ -= n;
      done += n;
      continue;
    }
    const size_t n = static_cast<size_t>(std::min<uint64_t>(literal_remaining_, count - done));
    if (matches == nullptr) {
      literal_bit_ += static_cast<uint64_t>(n) * static_cast<uint64_t>(bit_width_);
    } else if (bit_width_ == 1) {
      // Levels of a flat optional column or a list: count set bits a byte at
      // a time.
      size_t left = n;
      size_t ones = 0;
      while (left > 0) {
        const int shift = static_cast<int>(literal_bit_ % 8);
        if (shift == 0 && left >= 64) {
          // The run's bytes are inside data_ (NextRun checked), so 8 whole
          // bytes of it can be read at once.
          uint64_t word;
          std::memcpy(&word, bytes + literal_bit_ / 8, 8);
          ones += static_cast<size_t>(__builtin_popcountll(word));
          literal_bit_ += 64;
          left -= 64;
          continue;
        }
        const size_t take = std::min<size_t>(left, static_cast<size_t>(8 - shift));
        const uint32_t bits = (bytes[literal_bit_ / 8] >> shift) & ((1u << take) - 1);
        ones += static_cast<size_t>(__builtin_popcount(bits));
        literal_bit_ += take;
        left -= take;
      }
      *matches += value == 1 ? ones : (value == 0 ? n - ones : 0);
    } else {
      size_t left = n;
      while (left > 0) {
        if (bit_width_ == 2 && value <= 3 && literal_bit_ % 8 == 0 && left >= 32) {
          // Definition levels of lists with null elements: 32 two-bit lanes
          // per word; a lane matches when it XORs to zero with `value`.
          uint64_t word;
          std::memcpy(&word, bytes + literal_bit_ / 8, 8);
          const uint64_t x = word ^ (0x5555555555555555ull * value);
          const uint64_t differing = (x | (x >> 1)) & 0x5555555555555555ull;
          *matches += 32 - static_cast<size_t>(__builtin_popcountll(differing));
          literal_bit_ += 64;
          left -= 32;
          continue;
        }
        *matches += PeekLiteral() == value;
        literal_bit_ += static_cast<uint64_t>(bit_width_);
        --left;
      }
    }
    literal_remaining_ -= n;
    done += n;
  }
  return absl::OkStatus();
}

absl::Status RleHybridDecoder::SkipOccurrences(uint32_t value, size_t occurrences, size_t limit,
                                               size_t* skipped, size_t* passed) {
  if (bit_width_ < 0 || bit_width_ > 32) {
    return absl::InvalidArgumentError(fmt::format("bit width {} out of range", bit_width_));
  }
  const uint8_t* bytes = reinterpret_cast<const uint8_t*>(data_.data());
  size_t seen = 0;
  size_t done = 0;
  while (done < limit) {
    if (repeat_remaining_ == 0 && literal_remaining_ == 0) {
      if (absl::Status s = NextRun(); !s.ok()) return s;
    }
    if (repeat_remaining_ > 0) {
      uint64_t n = std::min<uint64_t>(repeat_remaining_, limit - done);
      if (repeat_value_ == value) {
        if (seen == occurrences) break;
        n = std::min<uint64_t>(n, occurrences - seen);
        seen += static_cast<size_t>(n);
      }
      repeat_remaining_ -= n;
      done += static_cast<size_t>(n);
      continue;
    }
    if (bit_width_ == 1 && value <= 1) {
      // Whole bytes' worth of bits at once while they cannot hold the
      // occurrence to stop before.
      const size_t left = static_cast<size_t>(std::min<uint64_t>(literal_remaining_, limit - done));
      const int shift = static_cast<int>(literal_bit_ % 8);
      if (shift == 0 && left >= 64) {
        uint64_t word;
        std::memcpy(&word, bytes + literal_bit_ / 8, 8);
        const size_t ones = static_cast<size_t>(__builtin_popcountll(word));
        const size_t hits = value == 1 ? ones : 64 - ones;
        if (seen + hits <= occurrences) {
          seen += hits;
          literal_bit_ += 64;
          literal_remaining_ -= 64;
          done += 64;
          continue;
        }
      }
      const size_t take = std::min<size_t>(left, static_cast<size_t>(8 - shift));
      const uint32_t bits = (bytes[literal_bit_ / 8] >> shift) & ((1u << take) - 1);
      const size_t ones = static_cast<size_t>(__builtin_popcount(bits));
      const size_t hits = value == 1 ? ones : take - ones;
      if (seen + hits <= occurrences) {
        seen += hits;
        literal_bit_ += take;
        literal_remaining_ -= take;
        done += take;
        continue;
      }
      // The stopping point is inside these bits: go one at a time.
    }
    const uint32_t next = PeekLiteral();
    if (next == value) {
      if (seen == occurrences) break;
      ++seen;
    }
    literal_bit_ += static_cast<uint64_t>(bit_width_);
    --literal_remaining_;
    ++done;
  }
  *skipped = done;
  *passed = seen;
  return absl::OkStatus();
}

absl::StatusOr<std::string_view> TakeLevelsV1(std::string_view* data) {
  if (data->size() < 4) return Truncated("level length", 4, data->size());
  uint32_t length;
  std::memcpy(&length, data->data(), 4);
  data->remove_prefix(4);
  if (length > data->size()) return Truncated("levels", length, data->size());
  const std::string_view levels = data->substr(0, length);
  data->remove_prefix(length);
  return levels;
}

void EncodeLevelsV1(const uint8_t* levels, size_t count, int max_level, std::string* out) {
  const size_t length_at = out->size();
  out->append(4, '\0');
  EncodeRleHybrid(levels, count, BitWidthFor(static_cast<uint32_t>(max_level)), out);
  const uint32_t length = static_cast<uint32_t>(out->size() - length_at - 4);
  std::memcpy(out->data() + length_at, &length, 4);
}

absl::Status DecodeLevelsV1(std::string_view* data, size_t count, int max_level, uint8_t* out) {
  if (data->size() < 4) return Truncated("level length", 4, data->size());
  uint32_t length;
  std::memcpy(&length, data->data(), 4);
  data->remove_prefix(4);
  if (length > data->size()) return Truncated("levels", length, data->size());
  RleHybridDecoder decoder(data->substr(0, length), BitWidthFor(static_cast<uint32_t>(max_level)));
  if (absl::Status s = decoder.Decode(out, count); !s.ok()) return s;
  for (size_t i = 0; i < count; ++i) {
    if (out[i] > max_level) {
      return absl::InvalidArgumentError(
          fmt::format("level {} exceeds the column's maximum {}", out[i], max_level));
    }
  }
  data->remove_prefix(length);
  return absl::OkStatus();
}

}  // namespace strata::parquet
