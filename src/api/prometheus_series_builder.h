#pragma once

// How MetricsSeriesSource (prometheus_series.h) assembles its answer: label
// matchers with their regular expressions compiled, and the series being
// built from points in time order, keyed by their label sets, within the
// engine's limits.
//
// Thread-safety: single owner (one Select, Exemplars or SelectLabels call).

#include <bit>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "compat/promql/series_source.h"
#include "re2/re2.h"

namespace strata::api::internal {

// A label matcher with its regular expression compiled (fully anchored, as
// Prometheus anchors them).
class CompiledMatcher {
 public:
  explicit CompiledMatcher(const compat::promql::LabelMatcher& m);

  const std::string& name() const { return m_.name; }
  // InvalidArgument when the regular expression does not compile.
  absl::Status status() const;
  bool Matches(std::string_view value) const {
    switch (m_.type) {
      case compat::promql::MatchType::kEqual:
        return value == m_.value;
      case compat::promql::MatchType::kNotEqual:
        return value != m_.value;
      case compat::promql::MatchType::kRegexMatch:
        return RE2::FullMatch(value, *re_);
      case compat::promql::MatchType::kRegexNoMatch:
        return !RE2::FullMatch(value, *re_);
    }
    return false;
  }

 private:
  compat::promql::LabelMatcher m_;
  std::unique_ptr<RE2> re_;
};

// Series being built, keyed by their labels. `matchers` and `limits` must
// outlive the builder.
class SeriesBuilder {
 public:
  SeriesBuilder(const std::vector<CompiledMatcher>& matchers,
                const compat::promql::SelectLimits& limits)
      : matchers_(matchers), limits_(limits) {}

  // The index of series `labels` (sorted by the caller), made if new;
  // nullopt when the matchers refuse it. ResourceExhausted past the series
  // budget.
  absl::StatusOr<std::optional<size_t>> Intern(compat::promql::Labels labels);

  // Adds sample (t_ms, v) to series `i`; `delta`: v is an increment since
  // the series' previous sample. ResourceExhausted past the samples budget.
  absl::Status Append(size_t i, int64_t t_ms, double v, bool delta, bool stale) {
    compat::promql::Series& series = out_[i];
    double value = v;
    if (stale) {
      value = std::bit_cast<double>(compat::promql::kStaleNaNBits);
    } else if (delta) {
      running_[i] += v;
      value = running_[i];
    }
    if (!series.samples.empty() && series.samples.back().t_ms >= t_ms) {
      // Points are read in time order; two in one millisecond keep the last.
      series.samples.back().v = value;
      return absl::OkStatus();
    }
    if (limits_.max_samples > 0 && ++samples_ > limits_.max_samples) {
      return absl::ResourceExhaustedError(absl::StrCat("the query reads more than ",
                                                       limits_.max_samples,
                                                       " samples; narrow its range or matchers"));
    }
    series.samples.push_back({t_ms, value});
    return absl::OkStatus();
  }

  // Intern, then Append to the series unless the matchers refuse it.
  absl::Status Add(compat::promql::Labels labels, int64_t t_ms, double v, bool delta, bool stale);

  // The running total a delta series starts from: the sum of its deltas
  // before the window (call before its first Add).
  void SetBaseline(const compat::promql::Labels& labels, double total);

  // The series in label order, as Prometheus's storage returns them (the
  // order functions such as topk break ties by).
  std::vector<compat::promql::Series> Finish();

 private:
  static std::string KeyOf(const compat::promql::Labels& labels);

  std::map<std::string, double> baselines_;
  const std::vector<CompiledMatcher>& matchers_;
  const compat::promql::SelectLimits& limits_;
  absl::flat_hash_map<std::string, std::optional<size_t>> index_;
  std::vector<compat::promql::Series> out_;
  std::vector<double> running_;
  int64_t samples_ = 0;
};

}  // namespace strata::api::internal
