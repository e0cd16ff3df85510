#pragma once

// strata's metrics tables as Prometheus series (docs/prometheus.md, "How
// OTLP metrics become series"): the SeriesSource the PromQL engine reads,
// and the metadata the Prometheus API lists.

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "api/prometheus_point_cache.h"
#include "api/search.h"
#include "compat/promql/series_source.h"
#include "query/query_pool.h"
#include "query/view_files.h"

namespace strata::api {
namespace internal {
class SeriesBuilder;  // prometheus_series_builder.h
}  // namespace internal

// One metric family as /api/v1/metadata lists it.
struct PromMetadata {
  std::string name;  // the family name (without _bucket, _sum, _count)
  std::string type;  // counter, gauge, histogram, summary
  std::string unit;  // the OTLP unit as stored
  std::string help;  // the OTLP description
};

// The exemplars of one series.
struct PromExemplars {
  compat::promql::Labels series;
  std::vector<MetricExemplar> exemplars;  // in the order the points were read (time)
};

class MetricsSeriesSource : public compat::promql::SeriesSource {
 public:
  // `pool`, `files`, `call` and `cache` must outlive the source. Points
  // are read through `cache` (prometheus_point_cache.h; null: every point
  // from DuckDB).
  MetricsSeriesSource(query::QueryPool& pool, const query::ViewFiles& files,
                      const CallOptions& call, internal::PointCache* cache)
      : pool_(pool), files_(files), call_(call), cache_(cache) {}

  absl::StatusOr<std::vector<compat::promql::Series>> Select(
      absl::Span<const compat::promql::LabelMatcher> matchers, int64_t min_ms, int64_t max_ms,
      const compat::promql::SelectLimits& limits) override;

  // The label sets Select would answer, without their samples (from the
  // cache's decoded files, else one DISTINCT query; target_info's too):
  // for /api/v1/series, /labels and /label/{name}/values. At most `max_series` (0: no limit), else
  // ResourceExhausted.
  absl::StatusOr<std::vector<compat::promql::Labels>> SelectLabels(
      absl::Span<const compat::promql::LabelMatcher> matchers, int64_t min_ms, int64_t max_ms,
      int64_t max_series);

  // The exemplars with a time in [min_ms, max_ms] of the series the
  // matchers select: a gauge's or counter's on its series, a histogram's on
  // the `_bucket` series whose bucket holds the exemplar's value.
  absl::StatusOr<std::vector<PromExemplars>> Exemplars(
      absl::Span<const compat::promql::LabelMatcher> matchers, int64_t min_ms, int64_t max_ms,
      int64_t max_series);

  // The families with a point in [min_ms, max_ms], by name.
  absl::StatusOr<std::vector<PromMetadata>> Metadata(int64_t min_ms, int64_t max_ms);

 private:
  enum class Mode { kSamples, kLabels, kExemplars };
  absl::StatusOr<std::vector<compat::promql::Series>> Collect(
      absl::Span<const compat::promql::LabelMatcher> matchers, int64_t min_ms, int64_t max_ms,
      const compat::promql::SelectLimits& limits, Mode mode,
      std::vector<PromExemplars>* exemplars_out);
  // Adds target_info's samples in [min_ms, max_ms] to `builder` (all at
  // time 0 when `labels_only`): from the cache's decoded files when it
  // can, else from one DISTINCT query, with the same answer. At most
  // `max_rows` (0: the pool's default), else ResourceExhausted.
  absl::Status AddTargetInfo(int64_t min_ms, int64_t max_ms, bool labels_only, size_t max_rows,
                             const CallOptions& call, internal::SeriesBuilder& builder);

  query::QueryPool& pool_;
  const query::ViewFiles& files_;
  const CallOptions& call_;
  internal::PointCache* const cache_;
};

}  // namespace strata::api
