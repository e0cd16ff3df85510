#pragma once

// The running totals delta series have reached before a query's window
// (docs/prometheus.md, "How OTLP metrics become series"): a delta counter's
// total counts from its first point ever, as an ingest-time conversion to
// cumulative would, so rate's zero-point limit on extrapolation sees what
// Prometheus would.

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "api/search.h"
#include "compat/promql/series_source.h"
#include "query/query_pool.h"
#include "query/view_files.h"

namespace strata::api::internal {

// One delta sum or histogram (an OTLP metric variant) whose baselines are
// wanted.
struct DeltaVariant {
  std::string otlp_name;
  std::string unit;  // "" for none
  int64_t type = 0;  // metric_type
  bool monotonic = false;
  bool is_sum = false;  // a sum (one series), else a histogram
  std::string family;   // its Prometheus family name
};

// The total of one series before the window.
struct DeltaBaseline {
  compat::promql::Labels labels;  // sorted by name
  double total = 0;
};

// The sum of every value, count, sum and bucket count (cumulative over the
// buckets, as `le` is) of `variants`' points before `min_ms`, one per
// series; NaN totals left out. A series may appear more than once (two
// identities with one label set): the caller adds them up.
absl::StatusOr<std::vector<DeltaBaseline>> ReadDeltaBaselines(
    query::QueryPool& pool, const query::ViewFiles& files, const CallOptions& call,
    const std::vector<DeltaVariant>& variants, int64_t min_ms);

}  // namespace strata::api::internal
