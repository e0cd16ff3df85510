// SnappyUncompress against the real Snappy (Debian's libsnappy1v5, loaded
// with dlopen so that strata never links it): blocks that library
// compresses decode to their input, and mutated blocks are accepted or
// refused exactly as the library's own validator decides.

#include "otlp/snappy_block.h"

#include <dlfcn.h>

#include <random>
#include <string>

#include "gtest/gtest.h"

namespace strata::otlp {
namespace {

// The C API of snappy-c.h: status 0 is success.
struct RealSnappy {
  using Compress = int (*)(const char*, size_t, char*, size_t*);
  using MaxLength = size_t (*)(size_t);
  using Validate = int (*)(const char*, size_t);
  Compress compress = nullptr;
  MaxLength max_length = nullptr;
  Validate validate = nullptr;

  static const RealSnappy* Load() {
    static const RealSnappy* loaded = []() -> const RealSnappy* {
      void* library = dlopen("libsnappy.so.1", RTLD_NOW);
      if (library == nullptr) return nullptr;
      auto* s = new RealSnappy;
      s->compress = reinterpret_cast<Compress>(dlsym(library, "snappy_compress"));
      s->max_length = reinterpret_cast<MaxLength>(dlsym(library, "snappy_max_compressed_length"));
      s->validate = reinterpret_cast<Validate>(dlsym(library, "snappy_validate_compressed_buffer"));
      return s;
    }();
    return loaded;
  }

  std::string Encode(const std::string& input) const {
    std::string out(max_length(input.size()), '\0');
    size_t size = out.size();
    EXPECT_EQ(compress(input.data(), input.size(), out.data(), &size), 0);
    out.resize(size);
    return out;
  }
};

// Inputs that exercise every element: runs (overlapping copies), repeated
// phrases at near and far offsets (1-, 2- and 4-byte offsets), random
// bytes (long literals).
std::string Input(std::mt19937& rng, int kind, size_t size) {
  std::string out;
  const std::string words[] = {"level=info ", "msg=\"request completed\" ", "duration=12ms ",
                               "{\"service\":\"cart\"} ", "trace_id=0af7651916cd43dd "};
  while (out.size() < size) {
    switch (kind) {
      case 0:
        out.append(1 + rng() % 300, static_cast<char>('a' + rng() % 3));
        break;
      case 1:
        out += words[rng() % 5];
        break;
      default:
        out.push_back(static_cast<char>(rng()));
    }
  }
  out.resize(size);
  return out;
}

TEST(SnappyBlockTest, DecodesWhatTheRealSnappyEncodes) {
  const RealSnappy* snappy = RealSnappy::Load();
  ASSERT_NE(snappy, nullptr) << "libsnappy.so.1 (Debian libsnappy1v5) is not installed";
  ASSERT_NE(snappy->compress, nullptr);
  std::mt19937 rng(7);
  int checked = 0;
  for (size_t size : {size_t{0}, size_t{1}, size_t{59}, size_t{61}, size_t{300}, size_t{70'000},
                      size_t{300'000}}) {
    for (int kind = 0; kind < 3; ++kind) {
      const std::string input = Input(rng, kind, size);
      const std::string block = snappy->Encode(input);
      const absl::StatusOr<std::string> out = SnappyUncompress(block, 1 << 20);
      ASSERT_TRUE(out.ok()) << out.status() << " size " << size << " kind " << kind;
      EXPECT_EQ(*out, input) << "size " << size << " kind " << kind;
      ++checked;
    }
  }
  EXPECT_EQ(checked, 21);
}

TEST(SnappyBlockTest, AcceptsAndRefusesMutatedBlocksAsTheRealSnappyDoes) {
  const RealSnappy* snappy = RealSnappy::Load();
  ASSERT_NE(snappy, nullptr);
  std::mt19937 rng(11);
  int refused = 0;
  for (int round = 0; round < 3000; ++round) {
    std::string block = snappy->Encode(Input(rng, round % 3, 1 + rng() % 2000));
    switch (rng() % 3) {
      case 0:
        block.resize(rng() % block.size());
        break;
      case 1:
        block[rng() % block.size()] = static_cast<char>(rng());
        break;
      default:
        block.insert(block.begin() + static_cast<std::ptrdiff_t>(rng() % block.size()),
                     static_cast<char>(rng()));
    }
    const bool real_ok = snappy->validate(block.data(), block.size()) == 0;
    const absl::StatusOr<std::string> ours = SnappyUncompress(block, size_t{1} << 32);
    ASSERT_EQ(ours.ok(), real_ok) << "round " << round << ": " << ours.status();
    refused += real_ok ? 0 : 1;
  }
  EXPECT_GT(refused, 500);
}

TEST(SnappyBlockTest, RefusesADeclaredLengthAboveTheCapBeforeDecoding) {
  const RealSnappy* snappy = RealSnappy::Load();
  ASSERT_NE(snappy, nullptr);
  const std::string block = snappy->Encode(std::string(5000, 'x'));
  EXPECT_TRUE(SnappyUncompress(block, 5000).ok());
  const absl::StatusOr<std::string> out = SnappyUncompress(block, 4999);
  EXPECT_EQ(out.status().code(), absl::StatusCode::kOutOfRange) << out.status();
  // A copy before the start, and an offset of 0.
  EXPECT_FALSE(SnappyUncompress(std::string("\x05\x01\x05", 3), 100).ok());
  EXPECT_FALSE(SnappyUncompress(std::string("\x06\x00x\x05\x00", 5), 100).ok());
}

}  // namespace
}  // namespace strata::otlp
