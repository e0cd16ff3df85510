#pragma once

// Small measurements the `strata bench` commands share: wall time and this
// process's resident memory from /proc. Linux only, like strata.

#include <chrono>
#include <cstddef>
#include <fstream>
#include <functional>
#include <string>

#include "storage/storage.h"

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

// Runs `count` requests through `storage` from `clients` threads, each
// waiting for its acknowledgement; `make(i)` builds request i (again after
// a ResourceExhausted refusal, which the client backs off from and
// retries). Returns the seconds from the first submit to the last
// acknowledgement, or -1 if any request failed (logged).
double Drive(storage::Storage& storage, int clients, size_t count,
             const std::function<storage::WriteRequest(size_t)>& make);

}  // namespace strata::cli
