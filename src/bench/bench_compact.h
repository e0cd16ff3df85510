#pragma once

// `strata bench compact`: compaction of one big UTC day, measured in one
// process against the same ingest load without compaction:
//
//   1. build: a data directory holding today's day of `spans` spans (plus
//      log records and metric data points in the proportions of `strata
//      bench writer`) in `batches` batches, written through the real
//      writer (or --reuse one);
//   2. calibrate: the writer's acknowledged span rate at full speed from
//      `clients` exporting threads (unless --ingest-rate is given); the
//      load of the next phases is half of it;
//   3. idle: that load for `ingest_seconds` with compaction off; the p99
//      of the requests' latency (paced_ingest.h);
//   4. compacting: the maintenance thread compacts the day level by level
//      (policy min_inputs = `min_inputs`) while the same load runs, for
//      `ingest_seconds` or until compaction has no more work, whichever
//      comes first; the p99 over the requests that started while
//      compaction had work. Compaction runs on until it has none: its
//      merged spans per second, and the peak RSS of the process from its
//      start to its end (VmHWM, reset before; VmRSS sampled as a check).
//
// Then it checks the answers: every phase left exactly the rows it
// acknowledged in the live Snapshot (meta.json counts), compaction ran
// without failures and reduced the batch count. Prints a table, then one
// JSON object as the last line; the exit code is 1 when a step fails or a
// check does not hold (not when the latency target is missed).
//
// Thread-safety: runs on the calling thread plus its client threads and a
// watcher thread.

#include <cstddef>
#include <cstdint>
#include <string>


namespace strata::bench {

struct BenchCompactOptions {
  uint64_t spans = 10'000'000;
  int batches = 200;
  // Where the data directory goes; empty: ./strata-bench-compact, removed
  // afterwards unless `keep`.
  std::string data_dir;
  bool keep = false;
  // Use the data directory as it is instead of building it (it needs
  // batches compaction can merge, e.g. one kept by --build-only).
  bool reuse = false;
  // Build the data directory (kept) and stop.
  bool build_only = false;
  // The measured load runs 2 x ingest_seconds, alternating windows of
  // window_seconds with compaction paused (idle) and running.
  double ingest_seconds = 20;
  double window_seconds = 2;
  // Span rate of the measured load; 0: half of the calibrated full speed.
  double ingest_rate = 0;
  double calibrate_seconds = 5;
  int clients = 32;
  // The compaction policy's min_inputs during the measured phase.
  size_t min_inputs = 4;
  // The maintenance thread's nice value (maintenance.h; 10 is the storage
  // engine's default).
  int maintenance_nice = 10;
  bool maintenance_sched_idle = false;
  // The merge's chunk_rows (table_merge.h); 0: the default.
  uint64_t chunk_rows = 0;
  // Bound on the compaction phase.
  double max_compact_seconds = 3600;
  // 200,000 spans in 20 batches, 3 s phases, a load of 20,000 spans/s
  // unless ingest_rate is given (no calibration).
  bool quick = false;
  uint64_t seed = 1;
};

// Returns the process exit code (0, or 1 when a step fails or a check of
// the answers does not hold).
int RunBenchCompact(const BenchCompactOptions& options);


}  // namespace strata::bench
