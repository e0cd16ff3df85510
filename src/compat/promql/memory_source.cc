#include "compat/promql/memory_source.h"

#include <algorithm>
#include <map>

#include "absl/strings/str_cat.h"
#include "compat/promql/label_matcher.h"

namespace strata::compat::promql {

void InMemorySeriesSource::Add(const Labels& labels, const std::vector<Sample>& samples) {
  Series* target = nullptr;
  for (Series& s : series_) {
    if (s.labels == labels) target = &s;
  }
  if (target == nullptr) {
    series_.push_back(Series{labels, {}});
    target = &series_.back();
  }
  std::map<int64_t, double> merged;
  for (const Sample& s : target->samples) merged[s.t_ms] = s.v;
  for (const Sample& s : samples) merged[s.t_ms] = s.v;
  target->samples.clear();
  for (const auto& [t, v] : merged) target->samples.push_back(Sample{t, v});
}

absl::StatusOr<std::vector<Series>> InMemorySeriesSource::Select(
    absl::Span<const LabelMatcher> matchers, int64_t min_ms, int64_t max_ms,
    const SelectLimits& limits) {
  absl::StatusOr<MatcherSet> set = MatcherSet::Compile(matchers);
  if (!set.ok()) return set.status();
  std::vector<Series> out;
  int64_t samples = 0;
  for (const Series& s : series_) {
    if (!set->Matches(s.labels)) continue;
    auto lo = std::lower_bound(s.samples.begin(), s.samples.end(), min_ms,
                               [](const Sample& a, int64_t t) { return a.t_ms < t; });
    auto hi = std::upper_bound(s.samples.begin(), s.samples.end(), max_ms,
                               [](int64_t t, const Sample& a) { return t < a.t_ms; });
    if (lo >= hi) continue;
    if (limits.max_series > 0 && static_cast<int64_t>(out.size()) >= limits.max_series) {
      return absl::ResourceExhaustedError(
          absl::StrCat("the query selects more than ", limits.max_series, " series"));
    }
    samples += hi - lo;
    if (limits.max_samples > 0 && samples > limits.max_samples) {
      return absl::ResourceExhaustedError(
          absl::StrCat("the query selects more than ", limits.max_samples, " samples"));
    }
    out.push_back(Series{s.labels, std::vector<Sample>(lo, hi)});
  }
  return out;
}

}  // namespace strata::compat::promql
