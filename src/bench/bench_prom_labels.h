#pragma once

// The series-listing lines of `strata bench compat` (docs/benchmarks.md,
// "Series, label names and label values"): the code behind the Prometheus
// API's /api/v1/series, /api/v1/labels and /api/v1/label/__name__/values
// (MetricsSeriesSource::SelectLabels and the endpoint's reduction of its
// label sets, in process, without HTTP or JSON), over one window, three
// ways: through a new decoded-file cache of the default bound (cold: its
// first call), through that cache again (warm), and with no cache (`strata
// serve --promql-cache-mb 0`: every label set from DuckDB). Each call's
// answer must equal the uncached one, else an Internal error.

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "compat/promql/series_source.h"
#include "query/query_pool.h"
#include "query/view_files.h"

namespace strata::bench {

// The selector the series line asks for (Grafana's label browser does so
// after a metric is picked): every bucket series of the histograms.
inline constexpr char kPromSeriesMetric[] = "http_server_request_duration_seconds_bucket";

struct PromListTimes {
  double cold_ms = 0;          // the first call through a new cache
  double cached_p50_ms = 0;    // later calls through it
  double uncached_p50_ms = 0;  // calls with no cache
  size_t answers = 0;          // series, label names or label values answered
  // What the cold call ran (PointCache's counters): decode queries and
  // catalog queries apart from them.
  size_t cold_decode_queries = 0;
  size_t cold_catalog_queries = 0;
};

struct PromLabelsBenchNumbers {
  PromListTimes series;        // match[]=kPromSeriesMetric
  PromListTimes labels;        // no match[] (every series)
  PromListTimes label_values;  // of __name__, no match[]
  // The answers themselves, sorted, for comparison with Prometheus.
  std::vector<std::string> label_names;
  std::vector<std::string> metric_names;
};

// Times each listing `runs` times (at least 1) with and without the cache,
// over [start_ms, end_ms] of `files` (read through `pool`).
absl::StatusOr<PromLabelsBenchNumbers> RunPromLabelsBench(query::QueryPool& pool,
                                                          const query::ViewFiles& files,
                                                          int64_t start_ms, int64_t end_ms,
                                                          int runs);

}  // namespace strata::bench
