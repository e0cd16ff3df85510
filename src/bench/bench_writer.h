#pragma once

// `strata bench writer`: pushes realistic generated spans, logs and metrics
// (workload/traffic_generator.h) through the real storage engine with its
// default settings into durable batches, and writes the same span rows
// through DuckDB as a baseline in the same run (appended in data chunks,
// then COPY TO parquet with zstd and an fsync, one file per batch strata
// wrote, with the same rows). Prints a table, then one JSON object as the
// last line.
//
// Thread-safety: runs on the calling thread (plus its client threads).

#include <cstdint>
#include <string>


namespace strata::bench {

struct BenchWriterOptions {
  uint64_t spans = 2'000'000;
  uint64_t logs = 500'000;
  uint64_t metric_points = 200'000;
  // Rows per export request (the OpenTelemetry SDKs' default batch is 512).
  int request_rows = 512;
  // Concurrent exporting clients. A server sees many exporters at once (SDKs
  // in every service, collectors with several senders each); each client
  // waits for its acknowledgement, so fewer clients than this leave the
  // commit pipeline (fsync latency) idle rather than measure the writer.
  int clients = 256;
  // Where batches go; empty: ./strata-bench-data, removed afterwards.
  std::string data_dir;
  bool keep = false;
  // Skips the DuckDB baseline (for profiling the writer alone).
  bool skip_baseline = false;
  uint64_t seed = 1;
};

// Returns the process exit code (0, or 1 when a step fails).
int RunBenchWriter(const BenchWriterOptions& options);


}  // namespace strata::bench
