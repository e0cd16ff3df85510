#pragma once

// Label matchers compiled for matching many series: regexes become RE2
// programs anchored at both ends, as Prometheus anchors them. Any
// SeriesSource may use this to apply the matchers the engine passes.
//
// Thread-safety: a compiled MatcherSet is immutable and safe for
// concurrent use. Errors: InvalidArgument for a regex RE2 refuses.

#include <memory>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "compat/promql/series_source.h"
#include "re2/re2.h"

namespace strata::compat::promql {

class MatcherSet {
 public:
  static absl::StatusOr<MatcherSet> Compile(absl::Span<const LabelMatcher> matchers);

  // Whether `labels` (sorted by name) satisfy every matcher; a label the
  // series lacks has the empty value.
  bool Matches(const Labels& labels) const;

 private:
  struct Compiled {
    LabelMatcher matcher;
    std::shared_ptr<const RE2> regex;  // for the regex types
  };
  std::vector<Compiled> matchers_;
};

// `labels` sorted by name (the order Labels keeps).
Labels SortedByName(Labels labels);

// The value of label `name` in sorted `labels`, or "" when absent.
const std::string& LabelValue(const Labels& labels, absl::string_view name);

}  // namespace strata::compat::promql
