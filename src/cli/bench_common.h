#pragma once

// Small measurements the `strata bench` commands share: wall time and this
// process's resident memory from /proc. Linux only, like strata.

#include <chrono>
#include <fstream>
#include <string>

namespace strata::cli {

using BenchClock = std::chrono::steady_clock;

inline double SecondsSince(BenchClock::time_point start) {
  return std::chrono::duration<double>(BenchClock::now() - start).count();
}

// A field of /proc/self/status given in kB ("VmHWM:" peak resident set,
// "VmRSS:" resident set), in MiB; 0 when absent.
inline double ProcStatusMiB(const char* field) {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind(field, 0) == 0) return std::stod(line.substr(std::string(field).size())) / 1024;
  }
  return 0;
}

// Restarts VmHWM from the current resident set.
inline void ResetPeakRss() { std::ofstream("/proc/self/clear_refs") << "5"; }

}  // namespace strata::cli
