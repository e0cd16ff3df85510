#pragma once

// The span-metrics and service-graph series Grafana's Tempo data source
// draws its RED tables and service graph from (docs/prometheus.md, "Series
// from traces"), made from strata's rollups rather than stored: per
// operation, `traces_spanmetrics_calls_total` and
// `traces_spanmetrics_latency_{bucket,sum,count}`; per service-map edge,
// `traces_service_graph_request_total`,
// `traces_service_graph_request_failed_total` and
// `traces_service_graph_request_server_seconds_{bucket,sum,count}`.
//
// Each is a counter with one sample per UTC minute, at the minute's end:
// everything counted in the minutes up to it (running totals, so rate()
// and increase() work as on any counter). A series has samples from its
// first counted minute until 15 minutes after its last, then goes stale.
// PromSeriesSources puts these beside the metrics tables' series: the names
// are reserved, so OTLP metrics of the same names are not served.
//
// Thread-safety: a source is used by one query at a time. Errors: the
// rollup cache's (DataLoss, I/O); ResourceExhausted past the query's
// budgets; InvalidArgument for a regex RE2 refuses.

#include <cstdint>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "api/prometheus_series.h"
#include "api/service_health.h"
#include "api/service_map.h"
#include "compat/promql/series_source.h"
#include "io/file_system.h"
#include "storage/commit/catalog.h"

namespace strata::api {

// The `le` bounds of the latency histograms, in seconds: 1 ms doubling up
// to 32.768 s, then +Inf.
inline constexpr int kTraceLatencyBounds = 16;
double TraceLatencyBoundSeconds(int index);

class TraceMetricsSource {
 public:
  // Every argument must outlive the source.
  TraceMetricsSource(RollupCache& rollups, ServiceMap& map, FileSystem& fs,
                     const storage::Snapshot& snapshot)
      : rollups_(rollups), map_(map), fs_(fs), snapshot_(snapshot) {}

  // Whether `name` is a series name this source makes.
  static bool Serves(std::string_view name);
  // Whether some name this source makes satisfies the `__name__` matchers
  // among `matchers` (false for a regex RE2 refuses).
  static bool WantedBy(absl::Span<const compat::promql::LabelMatcher> matchers);

  absl::StatusOr<std::vector<compat::promql::Series>> Select(
      absl::Span<const compat::promql::LabelMatcher> matchers, int64_t min_ms, int64_t max_ms,
      const compat::promql::SelectLimits& limits);
  // The label sets Select would answer (in another order), without
  // samples: it reads the operation rows and edges of the window's minutes
  // and the 15 before them, not those of all earlier minutes, and keeps
  // nothing per minute (the listings /labels, /label/x/values and /series).
  absl::StatusOr<std::vector<compat::promql::Labels>> SelectLabels(
      absl::Span<const compat::promql::LabelMatcher> matchers, int64_t min_ms, int64_t max_ms,
      int64_t max_series);
  // The families, by name.
  static std::vector<PromMetadata> Metadata();

  // What this source's calls did, for the tests: minutes Select stepped
  // through building running totals, and measures it kept per minute and
  // base. SelectLabels adds to neither.
  struct Work {
    int64_t minute_steps = 0;
    int64_t minute_measures = 0;
  };
  const Work& work() const { return work_; }

 private:
  RollupCache& rollups_;
  ServiceMap& map_;
  FileSystem& fs_;
  const storage::Snapshot& snapshot_;
  Work work_;
};

// What the Prometheus API reads: the metrics tables' series and, beside
// them, the series from traces. A selector that names one name (an
// equality matcher on `__name__`) reads only the side that has it.
class PromSeriesSources : public compat::promql::SeriesSource {
 public:
  PromSeriesSources(MetricsSeriesSource& metrics, TraceMetricsSource& traces)
      : metrics_(metrics), traces_(traces) {}

  absl::StatusOr<std::vector<compat::promql::Series>> Select(
      absl::Span<const compat::promql::LabelMatcher> matchers, int64_t min_ms, int64_t max_ms,
      const compat::promql::SelectLimits& limits) override;
  absl::StatusOr<std::vector<compat::promql::Labels>> SelectLabels(
      absl::Span<const compat::promql::LabelMatcher> matchers, int64_t min_ms, int64_t max_ms,
      int64_t max_series);
  absl::StatusOr<std::vector<PromMetadata>> Metadata(int64_t min_ms, int64_t max_ms);

  MetricsSeriesSource& metrics() { return metrics_; }

 private:
  MetricsSeriesSource& metrics_;
  TraceMetricsSource& traces_;
};

}  // namespace strata::api
