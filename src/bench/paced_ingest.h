#pragma once

// Ingest load for the benchmarks: client threads export generated traffic
// (workload/traffic_generator.h) through Storage::Write, as SDK exporters
// do, either as fast as they are acknowledged or paced at a fixed rate,
// and record each request's latency (the call of Write to its return, so
// the whole durable commit).
//
// The traffic is a mix of single-signal requests of `request_rows` rows:
// out of every 27 requests, 20 carry spans, 5 log records and 2 metric
// data points (the proportions of `strata bench writer`). Each client
// generates its next request before the request is due, so generation
// costs CPU but never delays a request.
//
// Thread-safety: RunPacedIngest runs its own client threads and returns
// after joining them; `stop` is called from all of them. Errors: requests
// refused with ResourceExhausted are counted (their rows are not stored);
// any other error is counted as a failure, logged once, and leaves the
// stored rows unknown (the caller's checks must then fail).

#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <vector>

#include "bench/bench_common.h"
#include "storage/storage.h"

namespace strata::bench {

struct PacedIngestOptions {
  // Target span rate; the other signals follow the mix. 0: each client
  // sends its next request as soon as the last one is answered.
  double spans_per_sec = 0;
  int clients = 32;
  int request_rows = 512;
  // Phases that must not repeat each other's rows use different seeds.
  uint64_t seed = 1;
  std::chrono::nanoseconds duration = std::chrono::seconds(10);
  // Checked before each request; the load ends early once it returns true.
  // May be empty.
  std::function<bool()> stop;
  // When the load begins (and what IngestSample::start_sec counts from);
  // default: when RunPacedIngest is called.
  std::optional<BenchClock::time_point> start;
};

struct IngestSample {
  double start_sec = 0;    // since the load began (PacedIngestOptions::start)
  double latency_sec = 0;  // Write's call to its return
};

struct PacedIngestResult {
  std::vector<IngestSample> samples;  // acknowledged requests, by client
  // Acknowledged rows.
  uint64_t spans = 0;
  uint64_t logs = 0;
  uint64_t points = 0;
  uint64_t refused = 0;  // ResourceExhausted
  uint64_t failed = 0;   // any other error
  // Requests that left more than a millisecond after they were due (the
  // clients could not keep the rate).
  uint64_t late = 0;
  double seconds = 0;  // from the start to the last answer

  double spans_per_sec() const { return seconds > 0 ? static_cast<double>(spans) / seconds : 0; }
};

PacedIngestResult RunPacedIngest(storage::Storage& storage, const PacedIngestOptions& options);

}  // namespace strata::bench
