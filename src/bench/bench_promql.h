#pragma once

// The PromQL lines of `strata bench compat` (docs/benchmarks.md): one
// model of request-duration histograms, request counters and memory gauges
// written to strata (as OTLP) and, as OpenMetrics through `promtool tsdb
// create-blocks-from openmetrics`, to a throwaway Debian Prometheus on
// loopback; then the two queries of the issue timed on both in the same
// run: strata's evaluation in process, Prometheus's as its own
// `execTotalTime` (stats=all), so neither side pays for HTTP. Then the
// series listings of bench_prom_labels.h over the same window, whose
// answers must agree with Prometheus's.

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "bench/bench_prom_labels.h"
#include "query/query_pool.h"
#include "storage/storage.h"

namespace strata::bench {

struct PromqlBenchOptions {
  // OTLP points to write (the series are fixed: 80 histograms, 80 counters,
  // 20 gauges; the window grows with the points, one every 15 s).
  uint64_t points = 1'000'000;
  int runs = 10;
  // Where the OpenMetrics text and Prometheus's TSDB go (removed after).
  std::string scratch_dir;
};

struct PromqlBenchNumbers {
  double window_hours = 0;
  uint64_t points = 0;
  uint64_t prometheus_samples = 0;
  double strata_rate_p50_ms = 0;
  double prometheus_rate_p50_ms = 0;
  double strata_quantile_p50_ms = 0;
  double prometheus_quantile_p50_ms = 0;
  size_t rate_series = 0;
  size_t quantile_series = 0;
  // /api/v1/series, /labels and /label/__name__/values over the same
  // window (bench_prom_labels.h), checked against Prometheus's answers.
  PromLabelsBenchNumbers listings;
};

// Writes the model into `storage` (ending at `end_ns`), then times. The
// pool must read `storage`'s data directory `data_dir`.
absl::StatusOr<PromqlBenchNumbers> RunPromqlBench(storage::Storage& storage, query::QueryPool& pool,
                                                  const std::string& data_dir, int64_t end_ns,
                                                  const PromqlBenchOptions& options);

}  // namespace strata::bench
