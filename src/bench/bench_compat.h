#pragma once

// `strata bench compat`: the compatible APIs' latency on a large data
// directory built as `strata bench query` builds it (docs/benchmarks.md):
// Tempo's TraceQL search of one service's error traces over the last hour,
// the same with a duration condition, tag values for service.name, and a
// trace by id as Tempo's protobuf; each beside its baseline in the same run
// (strata's own search of the same traces, and the trace as strata's
// OTLP/JSON). Prints a table and, last, one JSON line.

#include <cstdint>
#include <string>

namespace strata::bench {

struct BenchCompatOptions {
  uint64_t spans = 20'000'000;
  int batches = 200;
  // Where the data directory goes; empty: ./strata-bench-compat, removed
  // afterwards unless `keep`.
  std::string data_dir;
  bool keep = false;
  // Use the data directory as it is (an earlier --keep run's, or
  // `strata bench query --keep`'s).
  bool reuse = false;
  // Runs of each search and of the tag values.
  int runs = 20;
  // Trace ids looked up.
  int lookups = 200;
  uint64_t seed = 1;
  // OTLP metric points for the PromQL lines (bench_promql.h); 0: none.
  uint64_t metric_points = 1'000'000;
};

int RunBenchCompat(const BenchCompatOptions& options);

}  // namespace strata::bench
