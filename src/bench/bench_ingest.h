#pragma once

// `strata bench ingest`: the whole ingest path measured in one process. It
// starts strata's OTLP/gRPC and OTLP/HTTP listeners on loopback in front of
// a fresh data directory and drives them with the load generator (which
// runs in the same process, so its CPU is counted): acknowledged spans/s
// over gRPC and over HTTP at full speed, export latency at half the gRPC
// rate, CPU seconds per million spans, and the writer alone on the same
// requests for comparison. An optional overload phase keeps far more
// requests in flight than the budget admits and samples RSS, to show the
// server sheds load (429) with flat memory. Last line: one JSON object.

#include <cstdint>
#include <string>


namespace strata::bench {

struct BenchIngestOptions {
  // Seconds of each full-speed phase and of the latency phase.
  double phase_sec = 10;
  int request_spans = 500;
  int concurrency = 64;
  // gRPC channels; OTLP/HTTP uses one connection per request in flight.
  int connections = 4;
  // Seconds of the overload phase (0 skips it; the check is 300).
  double overload_sec = 0;
  // Requests in flight during the overload phase.
  int overload_concurrency = 2048;
  // Where the data directory goes; empty: ./strata-bench-data, removed after.
  std::string data_dir;
  bool keep = false;
  uint64_t seed = 1;
};

int RunBenchIngest(const BenchIngestOptions& options);


}  // namespace strata::bench
