// gzip.h: round trips, concatenated members, the output cap (a gzip bomb is
// refused before it is inflated), and corrupt input named precisely.

#include "server/gzip.h"

#include <cstdint>
#include <string>

#include "fmt/format.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace strata::server {
namespace {

using ::testing::HasSubstr;

std::string PseudoRandomText(size_t size, uint64_t seed) {
  std::string out(size, '\0');
  uint64_t x = seed * 0x9E3779B97F4A7C15ull + 1;
  for (char& c : out) {
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    c = static_cast<char>('a' + x % 16);  // compressible, but not trivially
  }
  return out;
}

TEST(GzipTest, RoundTripsEmptySmallAndLargeInputs) {
  for (size_t size : {size_t{0}, size_t{1}, size_t{1000}, size_t{3} << 20}) {
    const std::string text = PseudoRandomText(size, size);
    for (int level : {-1, 0, 1, 9}) {
      absl::StatusOr<std::string> back = GunzipLimited(Gzip(text, level), text.size());
      ASSERT_TRUE(back.ok()) << back.status() << " size " << size << " level " << level;
      EXPECT_EQ(*back, text);
    }
  }
}

TEST(GzipTest, ConcatenatedMembersDecodeInOrder) {
  const std::string a = PseudoRandomText(100'000, 1);
  const std::string b = PseudoRandomText(5, 2);
  const std::string c = PseudoRandomText(70'000, 3);
  absl::StatusOr<std::string> back = GunzipLimited(Gzip(a) + Gzip(b) + Gzip("") + Gzip(c), 1 << 20);
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(*back, a + b + c);
}

TEST(GzipTest, OutputOfExactlyTheLimitIsAcceptedAndOneByteMoreIsOutOfRange) {
  const std::string text = PseudoRandomText(200'000, 7);
  const std::string gz = Gzip(text);
  EXPECT_TRUE(GunzipLimited(gz, text.size()).ok());
  absl::StatusOr<std::string> over = GunzipLimited(gz, text.size() - 1);
  ASSERT_FALSE(over.ok());
  EXPECT_EQ(over.status().code(), absl::StatusCode::kOutOfRange) << over.status();
  EXPECT_THAT(std::string(over.status().message()), HasSubstr("199999"));
  // The limit counts the members together.
  absl::StatusOr<std::string> two = GunzipLimited(gz + gz, 2 * text.size() - 1);
  ASSERT_FALSE(two.ok());
  EXPECT_EQ(two.status().code(), absl::StatusCode::kOutOfRange);
}

TEST(GzipTest, BombIsRefusedBeforeItIsInflated) {
  // 64 MiB of zeros compress to about 64 KiB. The member is cut short and
  // followed by garbage: had the decompressor run on past the cap, it would
  // have reported the truncation (InvalidArgument), not OutOfRange.
  const std::string zeros(64 << 20, '\0');
  std::string bomb = Gzip(zeros, 9);
  ASSERT_LT(bomb.size(), 256u << 10);
  bomb.resize(bomb.size() / 2);
  absl::StatusOr<std::string> full = GunzipLimited(bomb, SIZE_MAX);
  ASSERT_FALSE(full.ok());
  ASSERT_EQ(full.status().code(), absl::StatusCode::kInvalidArgument) << full.status();

  absl::StatusOr<std::string> capped = GunzipLimited(bomb, 1 << 20);
  ASSERT_FALSE(capped.ok());
  EXPECT_EQ(capped.status().code(), absl::StatusCode::kOutOfRange) << capped.status();
}

TEST(GzipTest, CorruptInputIsInvalidArgumentNamingWhatFailed) {
  const std::string text = PseudoRandomText(10'000, 9);
  const std::string gz = Gzip(text);
  struct Case {
    std::string input;
    std::string expected;
  };
  std::string bad_magic = gz;
  bad_magic[0] = 'x';
  std::string bad_crc = gz;
  bad_crc[gz.size() - 6] ^= 0x55;  // the CRC32 trailer
  std::string bad_length = gz;
  bad_length[gz.size() - 2] ^= 0x01;  // ISIZE
  const Case cases[] = {
      {"", "empty"},
      {bad_magic, "member 1 (at byte 0): incorrect header check"},
      {bad_crc, "incorrect data check"},
      {bad_length, "incorrect length check"},
      {gz.substr(0, gz.size() - 3), "truncated"},
      {gz.substr(0, 5), "truncated"},
      {gz + "trailing garbage", fmt::format("member 2 (at byte {})", gz.size())},
      {gz + Gzip(text).substr(0, 40), "member 2"},
  };
  for (const Case& c : cases) {
    absl::StatusOr<std::string> out = GunzipLimited(c.input, 1 << 20);
    ASSERT_FALSE(out.ok()) << c.expected;
    EXPECT_EQ(out.status().code(), absl::StatusCode::kInvalidArgument) << out.status();
    EXPECT_THAT(std::string(out.status().message()), HasSubstr(c.expected));
  }
}

TEST(GzipTest, ZlibAndRawDeflateAreNotGzip) {
  // A zlib stream (78 9c ...) is what Content-Encoding: deflate carries;
  // strata accepts gzip only.
  const std::string zlib_stream("\x78\x9c\x4b\x04\x00\x00\x62\x00\x62", 9);
  absl::StatusOr<std::string> out = GunzipLimited(zlib_stream, 100);
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.status().code(), absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace strata::server
