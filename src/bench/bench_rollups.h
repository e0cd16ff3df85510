#pragma once

// `strata bench rollups`: service health answered from the rollups against
// the same answers computed by DuckDB from the raw spans, in one run:
//
//   * every service over the last 24 hours (GET /api/v1/services);
//   * the busiest service's request RED at a 1-minute step over 24 hours
//     (GET /api/v1/red);
//   * both again as DuckDB queries over every spans.parquet (the baseline),
//     checked against the rollup answers: counts, errors and duration sums
//     equal, quantiles in the bucket of DuckDB's quantile_disc ("exact");
//   * ingest with rollups on and off (StorageOptions::write_rollups),
//     alternated round by round into two fresh data directories.
//
// The data directory holds generated traffic over the 24 hours before the
// run, one request per batch (built as `strata bench query` builds it, or
// reused). The service map is not built yet, so the JSON line says null for
// it. Prints a table, then one JSON object as the last line.
//
// Thread-safety: runs on the calling thread (plus the writer's clients).

#include <cstdint>
#include <string>

namespace strata::bench {

struct BenchRollupsOptions {
  uint64_t spans = 20'000'000;
  int batches = 200;
  std::string data_dir;  // empty: ./strata-bench-rollups, removed afterwards
  bool keep = false;
  bool reuse = false;
  // Runs of each rollup answer, and of each DuckDB baseline query.
  int runs = 20;
  int baseline_runs = 3;
  // Ingest rounds per setting (alternated), and spans per round.
  int ingest_rounds = 3;
  uint64_t ingest_spans = 1'000'000;
  // Requests written one at a time while the service map's background
  // pass runs, each timed from acknowledgement to resolved (0 skips).
  int freshness_requests = 20;
  uint64_t seed = 1;
};

// Returns the process exit code (0, or 1 when a step fails or an answer
// differs from the baseline's).
int RunBenchRollups(const BenchRollupsOptions& options);

}  // namespace strata::bench
