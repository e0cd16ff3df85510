#pragma once

// What the standalone benchmarks of bench/ share: `--name=N` flags and
// CPU clocks. Header-only; Linux, like strata. Reentrant.

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

}  // namespace strata::bench
