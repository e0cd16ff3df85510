#pragma once

// `strata bench query`: builds a data directory of generated traffic
// through the real writer (or reuses one), then measures, in one run:
//
//   * trace by id with no time range (filters -> trace index -> only the
//     trace's rows), for ids that are present and ids that are absent;
//   * the same lookup as a DuckDB scan over every spans.parquet file (the
//     baseline), checked to return the same number of spans;
//   * "error traces of one service in the last hour" (the trace search the
//     API runs) and "p99 duration per operation over 24 hours" (an
//     aggregate through the query pool);
//   * the compact form of a 100,000-span trace fetched over loopback HTTP
//     (bench_trace_compact.h), gzipped and plain: p50 and answer bytes;
//   * a log search with q= over the last hour (5M log records by default,
//     a tenth of them with structured bodies), and attribute discovery
//     for spans in the last hour (GET /api/v1/attributes).
//
// The generated traffic covers the 24 hours before the run, one request
// per batch, so each batch holds a slice of the day. Prints a table, then
// one JSON object as the last line.
//
// Thread-safety: runs on the calling thread (plus two writer clients).

#include <cstdint>
#include <string>

#include "storage/storage.h"

namespace strata::bench {

struct BenchQueryOptions {
  uint64_t spans = 20'000'000;
  int batches = 200;
  // Log records written into the last hour (with a tenth of their count in
  // spans beside them, in batches/20 batches), for the log search with q=;
  // 0: spans / 4 (5M at the default 20M spans).
  uint64_t logs = 0;
  // Where the data directory goes; empty: ./strata-bench-query, removed
  // afterwards unless `keep`.
  std::string data_dir;
  bool keep = false;
  // Use the data directory as it is (built by an earlier --keep run, or by
  // a server) instead of writing traffic into it.
  bool reuse = false;
  // Present and absent ids looked up (each).
  int lookups = 2000;
  // Runs of the DuckDB scan, the search and the aggregate.
  int scans = 5;
  uint64_t seed = 1;
  // The storage engine's lookup cache budget (0: lookups read every
  // footer, as before the cache).
  uint64_t lookup_cache_bytes = storage::StorageOptions::kDefaultLookupCacheBytes;
  // The writer's page row limit (TableOptions::page_rows) for the data it
  // builds; 0: the default.
  uint64_t page_rows = 0;
};

// Returns the process exit code (0, or 1 when a step fails or a check of
// the answers does not hold).
int RunBenchQuery(const BenchQueryOptions& options);

// Writes `options.spans` spans of traffic over the 24 hours before `now`,
// one request (and so one batch) per slice of the day, and log records
// (with a tenth as many spans) into the last hour. False on failure (said
// in the log). `strata bench compat` builds its data the same way.
bool BuildQueryData(storage::Storage& storage, const BenchQueryOptions& options, uint64_t now);

}  // namespace strata::bench
