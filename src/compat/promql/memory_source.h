#pragma once

// A SeriesSource over series held in memory: the samples of Prometheus's
// test files (test_file.h) and the engine's unit tests.
//
// Thread-safety: Add() needs a single owner; Select() is const and safe
// for concurrent use once loading is done. Errors: Select() returns
// ResourceExhausted when the limits are exceeded.

#include <vector>

#include "compat/promql/series_source.h"

namespace strata::compat::promql {

class InMemorySeriesSource : public SeriesSource {
 public:
  // Adds `samples` (ascending by time) to the series with `labels` (sorted
  // by name), creating it if needed; a sample at a time the series already
  // has replaces it.
  void Add(const Labels& labels, const std::vector<Sample>& samples);
  void Clear() { series_.clear(); }

  absl::StatusOr<std::vector<Series>> Select(absl::Span<const LabelMatcher> matchers,
                                             int64_t min_ms, int64_t max_ms,
                                             const SelectLimits& limits) override;

 private:
  std::vector<Series> series_;
};

}  // namespace strata::compat::promql
