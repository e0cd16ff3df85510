#pragma once

// What the PromQL engine reads: series of float samples, selected by label
// matchers over a time range. The engine does not know where they come
// from; strata's metrics tables (api/prometheus_series.*) and the in-memory
// store of the Prometheus test files (promql_test_files) both implement it.

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"

namespace strata::compat::promql {

struct Label {
  std::string name;
  std::string value;
  bool operator==(const Label&) const = default;
};

// Sorted by name, names unique; `__name__` holds the metric name.
using Labels = std::vector<Label>;

enum class MatchType { kEqual, kNotEqual, kRegexMatch, kRegexNoMatch };

struct LabelMatcher {
  MatchType type = MatchType::kEqual;
  std::string name;
  std::string value;  // a regular expression for the two regex types
};

// One float sample. `t_ms` is milliseconds since the Unix epoch, as in
// Prometheus. A staleness marker is the NaN with bits kStaleNaNBits.
struct Sample {
  int64_t t_ms = 0;
  double v = 0;
};

inline constexpr uint64_t kStaleNaNBits = 0x7ff0000000000002ull;

struct Series {
  Labels labels;
  std::vector<Sample> samples;  // ascending t_ms, no two with the same time
};

// Limits a source enforces while selecting (the engine passes its own
// remaining budget); exceeding one is an error the API answers with 422.
struct SelectLimits {
  int64_t max_series = 0;   // 0: no limit
  int64_t max_samples = 0;  // 0: no limit
};

class SeriesSource {
 public:
  virtual ~SeriesSource() = default;

  // Every series whose labels satisfy all `matchers` (a matcher on a label a
  // series lacks compares against the empty string, as in Prometheus), with
  // its samples whose time is in [min_ms, max_ms]. Series with no sample in
  // the range may be left out. Order of the series is unspecified.
  virtual absl::StatusOr<std::vector<Series>> Select(absl::Span<const LabelMatcher> matchers,
                                                     int64_t min_ms, int64_t max_ms,
                                                     const SelectLimits& limits) = 0;
};

}  // namespace strata::compat::promql
