#pragma once

// RandomSource is the seeded randomness behind the OTLP message generators.
// It wraps std::mt19937_64, whose output sequence the C++ standard fixes, and
// derives every value with its own arithmetic instead of the <random>
// distributions (whose algorithms differ between standard libraries), so a
// seed replays the same message on every platform and toolchain.
//
// Thread-safety: single owner. Errors: none; bounds are checked with CHECK-
// style asserts because a bad bound is a bug in the generator.

#include <cassert>
#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <random>
#include <string>
#include <string_view>

namespace strata::otlp_reference {

class RandomSource {
 public:
  explicit RandomSource(uint64_t seed) : engine_(seed) {}

  uint64_t Next64() { return engine_(); }
  uint32_t Next32() { return static_cast<uint32_t>(engine_() >> 32); }

  // Uniform in [0, n); n must be positive. The modulo bias is irrelevant for
  // test data and keeps the derivation trivially portable.
  uint64_t Below(uint64_t n) {
    assert(n > 0);
    return engine_() % n;
  }

  // Uniform in [lo, hi], both inclusive.
  int64_t Between(int64_t lo, int64_t hi) {
    assert(lo <= hi);
    uint64_t span = static_cast<uint64_t>(hi) - static_cast<uint64_t>(lo) + 1;
    if (span == 0) return static_cast<int64_t>(engine_());  // the full 64-bit range
    return static_cast<int64_t>(static_cast<uint64_t>(lo) + Below(span));
  }

  // True with probability 1/n.
  bool OneIn(uint64_t n) { return Below(n) == 0; }
  // True with probability percent/100.
  bool Percent(uint64_t percent) { return Below(100) < percent; }
  bool Bool() { return (engine_() & 1) != 0; }

  // Uniform in [0, 1).
  double Unit() { return static_cast<double>(engine_() >> 11) * 0x1.0p-53; }

  // Returns a copy: the list's backing array dies with the full-expression.
  template <typename T>
  T Pick(std::initializer_list<T> choices) {
    assert(choices.size() > 0);
    return choices.begin()[Below(choices.size())];
  }

  // `n` uniformly random bytes.
  std::string Bytes(size_t n) {
    std::string out(n, '\0');
    for (size_t i = 0; i < n; ++i) out[i] = static_cast<char>(engine_() & 0xff);
    return out;
  }

  // `n` random bytes that are not all zero (valid trace and span ids).
  std::string NonZeroBytes(size_t n) {
    std::string out = Bytes(n);
    if (out.find_first_not_of('\0') == std::string::npos) out[n - 1] = 1;
    return out;
  }

 private:
  std::mt19937_64 engine_;
};

}  // namespace strata::otlp_reference
