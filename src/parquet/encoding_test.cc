#include "parquet/encoding.h"

#include <algorithm>
#include <random>
#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace strata::parquet {
namespace {

std::vector<uint32_t> Decode(const std::string& bytes, int width, size_t count) {
  std::vector<uint32_t> out(count);
  RleHybridDecoder decoder(bytes, width);
  absl::Status s = decoder.Decode(out.data(), count);
  EXPECT_TRUE(s.ok()) << s << " width " << width;
  return out;
}

// Patterns that exercise runs shorter and longer than 8, literal stretches
// that are and are not multiples of 8, and a trailing partial group.
std::vector<std::vector<uint32_t>> Patterns(int width, std::mt19937_64& rng) {
  const uint32_t max = width == 32 ? UINT32_MAX : (1u << width) - 1;
  auto random_value = [&]() { return static_cast<uint32_t>(rng() & max); };
  std::vector<std::vector<uint32_t>> patterns;
  patterns.push_back({});
  patterns.push_back({max});
  patterns.push_back(std::vector<uint32_t>(1000, max));
  std::vector<uint32_t> alternating;
  for (int i = 0; i < 37; ++i) alternating.push_back(i % 2 ? max : 0);
  patterns.push_back(alternating);
  for (int trial = 0; trial < 20; ++trial) {
    std::vector<uint32_t> v;
    const int segments = 1 + static_cast<int>(rng() % 20);
    for (int s = 0; s < segments; ++s) {
      const size_t length = rng() % 3 == 0 ? 1 + rng() % 7 : 1 + rng() % 100;
      if (rng() % 2) {
        v.insert(v.end(), length, random_value());
      } else {
        for (size_t i = 0; i < length; ++i) v.push_back(random_value());
      }
    }
    patterns.push_back(v);
  }
  return patterns;
}

TEST(RleHybridTest, RoundTripsEveryWidth) {
  std::mt19937_64 rng(42);
  for (int width = 0; width <= 32; ++width) {
    for (const std::vector<uint32_t>& values : Patterns(width, rng)) {
      std::string bytes;
      EncodeRleHybrid(values.data(), values.size(), width, &bytes);
      EXPECT_EQ(Decode(bytes, width, values.size()), values) << "width " << width;
      // Decoding in small steps gives the same values.
      RleHybridDecoder decoder(bytes, width);
      std::vector<uint32_t> stepped(values.size());
      for (size_t i = 0; i < values.size(); i += 3) {
        ASSERT_TRUE(
            decoder.Decode(stepped.data() + i, std::min<size_t>(3, values.size() - i)).ok());
      }
      EXPECT_EQ(stepped, values);
    }
  }
}

// The hybrid encoder as first written (one value at a time), kept as the
// reference: the faster encoder must produce the same bytes, so files do
// not change when it does.
template <typename T>
std::string ReferenceRleHybrid(const std::vector<T>& values, int width) {
  std::string out;
  auto varint = [&](uint64_t v) {
    while (v >= 0x80) {
      out.push_back(static_cast<char>((v & 0x7F) | 0x80));
      v >>= 7;
    }
    out.push_back(static_cast<char>(v));
  };
  auto literals = [&](size_t begin, size_t count) {
    if (count == 0) return;
    varint(((count + 7) / 8) << 1 | 1);
    uint64_t acc = 0;
    int bits = 0;
    for (size_t i = 0; i < (count + 7) / 8 * 8; ++i) {
      acc |= (i < count ? static_cast<uint64_t>(values[begin + i]) : 0) << bits;
      bits += width;
      while (bits >= 8) {
        out.push_back(static_cast<char>(acc & 0xFF));
        acc >>= 8;
        bits -= 8;
      }
    }
  };
  size_t literal_start = 0, i = 0;
  while (i < values.size()) {
    size_t end = i + 1;
    while (end < values.size() && values[end] == values[i]) ++end;
    const size_t run = end - i;
    if (run >= 8) {
      const size_t literal_count = i - literal_start;
      const size_t borrow = (8 - literal_count % 8) % 8;
      if (run - borrow >= 8) {
        literals(literal_start, literal_count + borrow);
        varint(static_cast<uint64_t>(run - borrow) << 1);
        for (int b = 0; b < (width + 7) / 8; ++b) {
          out.push_back(static_cast<char>((static_cast<uint32_t>(values[i]) >> (8 * b)) & 0xFF));
        }
        literal_start = end;
      }
    }
    i = end;
  }
  literals(literal_start, values.size() - literal_start);
  return out;
}

TEST(RleHybridTest, MatchesTheReferenceEncoderByteForByte) {
  std::mt19937_64 rng(11);
  for (int width = 0; width <= 32; ++width) {
    for (const std::vector<uint32_t>& values : Patterns(width, rng)) {
      std::string bytes;
      EncodeRleHybrid(values.data(), values.size(), width, &bytes);
      EXPECT_EQ(bytes, ReferenceRleHybrid(values, width)) << "width " << width;
      if (width > 8) continue;
      const std::vector<uint8_t> narrow(values.begin(), values.end());
      bytes.clear();
      EncodeRleHybrid(narrow.data(), narrow.size(), width, &bytes);
      EXPECT_EQ(bytes, ReferenceRleHybrid(narrow, width)) << "width " << width;
    }
  }
  // Level-like streams: long runs broken by short stretches, at every
  // alignment of the 8-byte run scanner.
  for (int trial = 0; trial < 200; ++trial) {
    std::vector<uint8_t> levels;
    const int segments = 1 + static_cast<int>(rng() % 30);
    for (int s = 0; s < segments; ++s) {
      levels.insert(levels.end(), rng() % 40, static_cast<uint8_t>(rng() % 4));
    }
    std::string bytes;
    EncodeRleHybrid(levels.data(), levels.size(), 2, &bytes);
    EXPECT_EQ(bytes, ReferenceRleHybrid(levels, 2));
  }
  // Index-like streams: runs of 0..20 around the lengths 7 and 8 and the
  // four-value steps of the 32-bit run scanners, at every alignment.
  for (int trial = 0; trial < 300; ++trial) {
    std::vector<uint32_t> indices;
    const int segments = 1 + static_cast<int>(rng() % 30);
    const uint32_t distinct = 1 + static_cast<uint32_t>(rng() % 5);
    for (int s = 0; s < segments; ++s) {
      indices.insert(indices.end(), rng() % 21,
                     static_cast<uint32_t>(rng() % distinct) * 40503u % (1u << 17));
    }
    std::string bytes;
    EncodeRleHybrid(indices.data(), indices.size(), 17, &bytes);
    EXPECT_EQ(bytes, ReferenceRleHybrid(indices, 17)) << "trial " << trial;
  }
}

TEST(RleHybridTest, ListLevelsMatchTheReferenceEncoderByteForByte) {
  // Repetition and definition levels of list rows: short runs (a row's 0
  // then its 1s) with runs of 6 to 10 equal values around the 8 the
  // encoder looks for, shifted through every alignment of the 8-value scan
  // and cut at every length near the end (the scalar tail), at widths 1
  // (the one-multiply bit packing) and 2.
  std::mt19937_64 rng(23);
  for (int trial = 0; trial < 400; ++trial) {
    const int width = 1 + static_cast<int>(rng() % 2);
    std::vector<uint8_t> levels(rng() % 9, 1);
    const int rows = 1 + static_cast<int>(rng() % 60);
    for (int r = 0; r < rows; ++r) {
      const size_t length = rng() % 4 == 0 ? 6 + rng() % 5 : 1 + rng() % 5;
      const auto first = static_cast<uint8_t>(rng() % (width == 1 ? 2 : 4));
      const auto rest = static_cast<uint8_t>(rng() % (width == 1 ? 2 : 4));
      levels.push_back(first);
      levels.insert(levels.end(), length - 1, rest);
    }
    for (size_t cut = levels.size() > 17 ? levels.size() - 17 : 0; cut <= levels.size(); ++cut) {
      std::string bytes;
      EncodeRleHybrid(levels.data(), cut, width, &bytes);
      const std::vector<uint8_t> prefix(levels.begin(), levels.begin() + cut);
      ASSERT_EQ(bytes, ReferenceRleHybrid(prefix, width)) << "trial " << trial << " cut " << cut;
    }
  }
  // Random bits, all lengths up to 200: every group and tail of the width-1
  // packing.
  for (size_t n = 0; n <= 200; ++n) {
    std::vector<uint8_t> bits(n);
    for (uint8_t& b : bits) b = static_cast<uint8_t>(rng() & 1);
    std::string bytes;
    EncodeRleHybrid(bits.data(), bits.size(), 1, &bytes);
    ASSERT_EQ(bytes, ReferenceRleHybrid(bits, 1)) << "n " << n;
  }
}

TEST(RleHybridTest, LongRunsBecomeRleRuns) {
  std::vector<uint32_t> values(100000, 5);
  std::string bytes;
  EncodeRleHybrid(values.data(), values.size(), 3, &bytes);
  EXPECT_LE(bytes.size(), 5u);
  EXPECT_EQ(Decode(bytes, 3, values.size()), values);
}

TEST(RleHybridTest, ByteLevelsRoundTrip) {
  std::mt19937_64 rng(7);
  std::vector<uint8_t> levels;
  for (int i = 0; i < 5000; ++i) levels.push_back(rng() % 5 == 0 ? 0 : 1);
  std::string bytes;
  EncodeLevelsV1(levels.data(), levels.size(), 1, &bytes);
  bytes += "values";
  std::string_view view = bytes;
  std::vector<uint8_t> decoded(levels.size());
  ASSERT_TRUE(DecodeLevelsV1(&view, levels.size(), 1, decoded.data()).ok());
  EXPECT_EQ(decoded, levels);
  EXPECT_EQ(view, "values");
}

TEST(RleHybridTest, MalformedStreamsAreRejected) {
  std::vector<uint32_t> out(100);
  // Asking for more values than the stream holds.
  std::string bytes;
  const std::vector<uint32_t> values(10, 1);
  EncodeRleHybrid(values.data(), values.size(), 1, &bytes);
  EXPECT_FALSE(RleHybridDecoder(bytes, 1).Decode(out.data(), 11).ok());
  // A run value wider than the bit width.
  EXPECT_FALSE(RleHybridDecoder(std::string("\x10\x05", 2), 2).Decode(out.data(), 1).ok());
  // A truncated header varint and an empty stream.
  EXPECT_FALSE(RleHybridDecoder("\x80\x80", 3).Decode(out.data(), 1).ok());
  EXPECT_FALSE(RleHybridDecoder("", 3).Decode(out.data(), 1).ok());
  // Widths beyond 32.
  EXPECT_FALSE(RleHybridDecoder("\x02\x00", 33).Decode(out.data(), 1).ok());
  // A bit-packed run claiming far more groups than bytes: bounded by the bytes.
  EXPECT_FALSE(RleHybridDecoder("\xff\xff\xff\x7f\x01", 8).Decode(out.data(), 2).ok());
  // Levels above the maximum.
  std::string levels;
  const std::vector<uint8_t> twos(10, 2);
  EncodeLevelsV1(twos.data(), twos.size(), 3, &levels);
  std::string_view view = levels;
  uint8_t decoded[10];
  EXPECT_FALSE(DecodeLevelsV1(&view, 10, 3 - 1, decoded).ok() &&
               DecodeLevelsV1(&view, 10, 1, decoded).ok());
  view = levels;
  EXPECT_FALSE(DecodeLevelsV1(&view, 10, 1, decoded).ok());
}

TEST(PlainTest, RoundTrips) {
  const std::vector<uint8_t> bools = {1, 0, 0, 1, 1, 1, 0, 1, 1, 0, 1};
  std::string bytes;
  EncodePlainBooleans(bools.data(), bools.size(), &bytes);
  EXPECT_EQ(bytes.size(), 2u);
  const std::vector<int64_t> ints = {INT64_MIN, -1, 0, 1, INT64_MAX};
  EncodePlainFixed(ints.data(), ints.size(), 8, &bytes);
  EncodePlainByteArray("", &bytes);
  EncodePlainByteArray(std::string("a\0b", 3), &bytes);
  bytes += "0123456789abcdef";

  std::string_view view = bytes;
  std::vector<uint8_t> decoded_bools;
  ASSERT_TRUE(DecodePlainBooleans(&view, bools.size(), &decoded_bools).ok());
  EXPECT_EQ(decoded_bools, bools);
  std::vector<int64_t> decoded_ints(ints.size());
  ASSERT_TRUE(DecodePlainFixed(&view, ints.size(), 8, decoded_ints.data()).ok());
  EXPECT_EQ(decoded_ints, ints);
  std::vector<uint64_t> offsets = {0};
  std::string data;
  ASSERT_TRUE(DecodePlainByteArrays(&view, 2, &offsets, &data).ok());
  EXPECT_EQ(offsets, (std::vector<uint64_t>{0, 0, 3}));
  EXPECT_EQ(data, std::string("a\0b", 3));
  ASSERT_TRUE(DecodePlainFixedLenByteArrays(&view, 2, 8, &offsets, &data).ok());
  EXPECT_TRUE(view.empty());
  EXPECT_FALSE(DecodePlainFixed(&view, 1, 4, decoded_ints.data()).ok());
  std::string_view short_array(
      "\x05\x00\x00\x00"
      "abc",
      7);
  EXPECT_FALSE(DecodePlainByteArrays(&short_array, 1, &offsets, &data).ok());
}

// Skip and SkipOccurrences agree with decoding everything and counting, on
// streams that mix repeated and bit-packed runs.
TEST(RleHybridTest, SkipAndSkipOccurrencesMatchAFullDecode) {
  std::mt19937_64 rng(17);
  for (int trial = 0; trial < 300; ++trial) {
    const int width = trial % 3 == 0 ? 2 : 1;
    const uint32_t max_value = (1u << width) - 1;
    std::vector<uint8_t> values;
    const size_t n = 1 + rng() % 3000;
    while (values.size() < n) {
      const size_t run = 1 + rng() % (rng() % 2 ? 40 : 4);
      const uint8_t v = static_cast<uint8_t>(rng() % (max_value + 1));
      for (size_t i = 0; i < run && values.size() < n; ++i) {
        values.push_back(rng() % 3 == 0 ? static_cast<uint8_t>(rng() % (max_value + 1)) : v);
      }
    }
    std::string encoded;
    EncodeRleHybrid(values.data(), values.size(), width, &encoded);
    const uint32_t value = static_cast<uint32_t>(rng() % (max_value + 1));

    // Skip a prefix counting matches, then decode the rest.
    const size_t prefix = rng() % (n + 1);
    RleHybridDecoder skipper(encoded, width);
    size_t matches = 0;
    ASSERT_TRUE(skipper.Skip(prefix, value, &matches).ok());
    EXPECT_EQ(matches,
              static_cast<size_t>(std::count(values.begin(), values.begin() + prefix, value)));
    std::vector<uint8_t> rest(n - prefix);
    ASSERT_TRUE(skipper.Decode(rest.data(), rest.size()).ok());
    EXPECT_TRUE(std::equal(rest.begin(), rest.end(), values.begin() + prefix));
    RleHybridDecoder blind(encoded, width);
    ASSERT_TRUE(blind.Skip(prefix, value, nullptr).ok());
    ASSERT_TRUE(blind.Decode(rest.data(), rest.size()).ok());
    EXPECT_TRUE(std::equal(rest.begin(), rest.end(), values.begin() + prefix));

    // Pass k occurrences and stop before the next one.
    const size_t total = static_cast<size_t>(std::count(values.begin(), values.end(), value));
    const size_t k = rng() % (total + 2);
    size_t expected_skipped = n, expected_passed = 0;
    for (size_t i = 0; i < n; ++i) {
      if (values[i] == value) {
        if (expected_passed == k) {
          expected_skipped = i;
          break;
        }
        ++expected_passed;
      }
    }
    RleHybridDecoder finder(encoded, width);
    size_t skipped = 0, passed = 0;
    ASSERT_TRUE(finder.SkipOccurrences(value, k, n, &skipped, &passed).ok());
    EXPECT_EQ(skipped, expected_skipped) << trial;
    EXPECT_EQ(passed, expected_passed) << trial;
    std::vector<uint8_t> after(n - skipped);
    ASSERT_TRUE(finder.Decode(after.data(), after.size()).ok());
    EXPECT_TRUE(std::equal(after.begin(), after.end(), values.begin() + skipped)) << trial;
  }
}

}  // namespace
}  // namespace strata::parquet
