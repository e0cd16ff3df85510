#include "api/prometheus_series_builder.h"

#include <algorithm>
#include <tuple>

#include "common/status_macros.h"
#include "compat/promql/label_matcher.h"

namespace strata::api::internal {

CompiledMatcher::CompiledMatcher(const compat::promql::LabelMatcher& m) : m_(m) {
  if (m.type == compat::promql::MatchType::kRegexMatch ||
      m.type == compat::promql::MatchType::kRegexNoMatch) {
    re_ = std::make_unique<RE2>(absl::StrCat("^(?:", m.value, ")$"), RE2::Quiet);
  }
}

absl::Status CompiledMatcher::status() const {
  if (re_ != nullptr && !re_->ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("bad regular expression \"", m_.value, "\": ", re_->error()));
  }
  return absl::OkStatus();
}

absl::StatusOr<std::optional<size_t>> SeriesBuilder::Intern(compat::promql::Labels labels) {
  std::string key = KeyOf(labels);
  if (auto found = index_.find(key); found != index_.end()) return found->second;
  for (const CompiledMatcher& matcher : matchers_) {
    if (!matcher.Matches(compat::promql::LabelValue(labels, matcher.name()))) {
      index_.emplace(std::move(key), std::nullopt);
      return std::nullopt;
    }
  }
  if (limits_.max_series > 0 && static_cast<int64_t>(out_.size()) >= limits_.max_series) {
    return absl::ResourceExhaustedError(absl::StrCat(
        "the query selects more than ", limits_.max_series, " series; narrow its matchers"));
  }
  const auto baseline = baselines_.find(key);
  running_.push_back(baseline == baselines_.end() ? 0 : baseline->second);
  index_.emplace(std::move(key), out_.size());
  out_.push_back({std::move(labels), {}});
  return out_.size() - 1;
}

absl::Status SeriesBuilder::Add(compat::promql::Labels labels, int64_t t_ms, double v, bool delta,
                                bool stale) {
  STRATA_ASSIGN_OR_RETURN(const std::optional<size_t> i, Intern(std::move(labels)));
  if (!i.has_value()) return absl::OkStatus();
  return Append(*i, t_ms, v, delta, stale);
}

void SeriesBuilder::SetBaseline(const compat::promql::Labels& labels, double total) {
  baselines_[KeyOf(labels)] += total;
}

std::vector<compat::promql::Series> SeriesBuilder::Finish() {
  std::vector<size_t> order(out_.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    const compat::promql::Labels& x = out_[a].labels;
    const compat::promql::Labels& y = out_[b].labels;
    return std::lexicographical_compare(
        x.begin(), x.end(), y.begin(), y.end(),
        [](const compat::promql::Label& l, const compat::promql::Label& r) {
          return std::tie(l.name, l.value) < std::tie(r.name, r.value);
        });
  });
  std::vector<compat::promql::Series> sorted;
  sorted.reserve(out_.size());
  for (size_t i : order) sorted.push_back(std::move(out_[i]));
  return sorted;
}

std::string SeriesBuilder::KeyOf(const compat::promql::Labels& labels) {
  std::string key;
  for (const auto& label : labels) absl::StrAppend(&key, label.name, "\x1f", label.value, "\x1e");
  return key;
}

}  // namespace strata::api::internal
