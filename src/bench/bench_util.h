#pragma once

// What the standalone benchmarks of src/bench/ share: `--name=N` flags,
// CPU clocks and a digest. Header-only; Linux, like strata. Reentrant.

#include <time.h>

#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

namespace strata::bench {

// Whether `arg` is `<name>=<N>`; if so, sets *out to N (0 when N is not a
// number).
inline bool ParseFlag(std::string_view arg, std::string_view name, uint64_t* out) {
  if (arg.substr(0, name.size()) != name || arg.size() <= name.size() || arg[name.size()] != '=') {
    return false;
  }
  *out = std::strtoull(std::string(arg.substr(name.size() + 1)).c_str(), nullptr, 10);
  return true;
}

// CPU seconds `clock` has counted: CLOCK_PROCESS_CPUTIME_ID (every thread
// of this process) or CLOCK_THREAD_CPUTIME_ID (the calling thread).
inline double CpuSeconds(clockid_t clock) {
  timespec ts{};
  clock_gettime(clock, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

// FNV-1a over `bytes`, continuing from `h` (start with
// kFnv1aOffsetBasis): a digest of written files, so a change meant to keep
// their bytes identical can be checked.
inline constexpr uint64_t kFnv1aOffsetBasis = 0xcbf29ce484222325ULL;
inline uint64_t Fnv1a(std::string_view bytes, uint64_t h) {
  for (unsigned char c : bytes) {
    h ^= c;
    h *= 0x100000001b3ULL;
  }
  return h;
}

}  // namespace strata::bench
