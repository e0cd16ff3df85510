#pragma once

// What the `strata bench` commands share: wall and thread CPU time, this process's
// resident memory from /proc, quantiles, blocking clients that drive a
// storage engine, and the generated data directories they build. Linux
// only, like strata.
//
// Thread-safety: the functions are reentrant; Drive and WriteBatches run
// their own client threads and return after joining them.

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <ctime>
#include <fstream>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "storage/storage.h"

namespace strata::bench {

using BenchClock = std::chrono::steady_clock;

inline constexpr uint64_t kHourNanos = 3'600'000'000'000ULL;
inline constexpr uint64_t kDayNanos = 24 * kHourNanos;

inline double SecondsSince(BenchClock::time_point start) {
  return std::chrono::duration<double>(BenchClock::now() - start).count();
}

// CPU time the calling thread has used (user and system).
inline double ThreadCpuSeconds() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) / 1e9;
}

// CPU time the whole process has used (user and system, every thread):
// for work DuckDB spreads over its own threads.
inline double ProcessCpuSeconds() {
  timespec ts{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) / 1e9;
}

inline uint64_t UnixNanosNow() {
  return static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                   std::chrono::system_clock::now().time_since_epoch())
                                   .count());
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

// Milliseconds at quantile q (0..1) of `samples` in seconds (sorted in
// place); 0 when there are none.
// Logs "bench <command>: <step>: <status>" as an error; returns exit code 1.
int FailStep(std::string_view command, std::string_view step, const absl::Status& status);

double QuantileMs(std::vector<double>& samples, double q);

// Runs `count` requests through `storage` from `clients` threads, each
// waiting for its acknowledgement; `make(i)` builds request i (again after
// a ResourceExhausted refusal, which the client backs off from and
// retries). Returns the seconds from the first submit to the last
// acknowledgement, or -1 if any request failed (logged).
double Drive(storage::Storage& storage, int clients, size_t count,
             const std::function<storage::WriteRequest(size_t)>& make);

// Generated traffic (workload/traffic_generator.h) written as `batches`
// requests of about spans / batches spans each. With the writer's
// max_requests_per_batch = 1, each request becomes one batch.
struct GeneratedBatches {
  uint64_t spans = 0;
  int batches = 1;
  uint64_t seed = 1;
  // Span times of request b start at first_time_unix_nano + b * step_nanos.
  uint64_t first_time_unix_nano = 0;
  uint64_t step_nanos = 0;
  // Log records and metric data points each request carries beside its
  // spans, per span (0: spans only).
  double logs_per_span = 0;
  double points_per_span = 0;
  // TrafficOptions::structured_body_percent of the generated log records.
  int structured_body_percent = 0;
};

// What WriteBatches wrote: rows the generator produced and storage
// acknowledged.
struct WrittenRows {
  uint64_t spans = 0;
  uint64_t logs = 0;
  uint64_t points = 0;
  double seconds = 0;  // generation included
};

// Writes `data` through `storage` from two clients (generation happens in
// them). False when a request failed (logged).
bool WriteBatches(storage::Storage& storage, const GeneratedBatches& data, WrittenRows* written);

// Rows a Snapshot holds (meta.json counts; placeholder rows excluded).
struct SnapshotRows {
  uint64_t spans = 0;
  uint64_t logs = 0;
  uint64_t points = 0;
  size_t batches = 0;
  uint64_t bytes = 0;  // every file of every batch
};
SnapshotRows CountRows(const storage::Snapshot& snapshot);

}  // namespace strata::bench
