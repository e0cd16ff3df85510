#include "compat/promql/label_matcher.h"

#include <algorithm>

#include "absl/strings/str_cat.h"

namespace strata::compat::promql {

const std::string& LabelValue(const Labels& labels, absl::string_view name) {
  static const std::string* empty = new std::string();
  for (const Label& l : labels) {
    if (l.name == name) return l.value;
  }
  return *empty;
}

absl::StatusOr<MatcherSet> MatcherSet::Compile(absl::Span<const LabelMatcher> matchers) {
  MatcherSet set;
  for (const LabelMatcher& m : matchers) {
    Compiled c{m, nullptr};
    if (m.type == MatchType::kRegexMatch || m.type == MatchType::kRegexNoMatch) {
      auto re = std::make_shared<const RE2>("^(?:" + m.value + ")$", RE2::Quiet);
      if (!re->ok()) {
        return absl::InvalidArgumentError(absl::StrCat("error parsing regexp: ", re->error()));
      }
      c.regex = std::move(re);
    }
    set.matchers_.push_back(std::move(c));
  }
  return set;
}

bool MatcherSet::Matches(const Labels& labels) const {
  for (const Compiled& c : matchers_) {
    const std::string& value = LabelValue(labels, c.matcher.name);
    bool ok = false;
    switch (c.matcher.type) {
      case MatchType::kEqual:
        ok = value == c.matcher.value;
        break;
      case MatchType::kNotEqual:
        ok = value != c.matcher.value;
        break;
      case MatchType::kRegexMatch:
        ok = RE2::FullMatch(value, *c.regex);
        break;
      case MatchType::kRegexNoMatch:
        ok = !RE2::FullMatch(value, *c.regex);
        break;
    }
    if (!ok) return false;
  }
  return true;
}

Labels SortedByName(Labels labels) {
  std::sort(labels.begin(), labels.end(),
            [](const Label& a, const Label& b) { return a.name < b.name; });
  return labels;
}

}  // namespace strata::compat::promql
