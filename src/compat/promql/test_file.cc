#include "compat/promql/test_file.h"

#include <bit>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <memory>
#include <optional>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "compat/promql/engine.h"
#include "compat/promql/evaluator.h"
#include "compat/promql/functions.h"
#include "compat/promql/memory_source.h"
#include "compat/promql/parser.h"
#include "compat/promql/result_json.h"

namespace strata::compat::promql {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// A number as the series notation writes it: an optional sign, then Inf,
// NaN or a decimal number. Returns the characters read, 0 for none.
size_t ScanValue(absl::string_view s, double* out) {
  size_t i = 0;
  double sign = 1;
  if (i < s.size() && (s[i] == '+' || s[i] == '-')) {
    if (s[i] == '-') sign = -1;
    ++i;
  }
  const std::string rest = absl::AsciiStrToLower(s.substr(i, 3));
  if (rest == "inf") {
    *out = sign * std::numeric_limits<double>::infinity();
    return i + 3;
  }
  if (rest == "nan") {
    *out = kNaN;
    return i + 3;
  }
  const size_t start = i;
  while (i < s.size() && (std::isdigit(static_cast<unsigned char>(s[i])) || s[i] == '.')) ++i;
  if (i == start) return 0;
  if (i < s.size() && (s[i] == 'e' || s[i] == 'E')) {
    size_t j = i + 1;
    if (j < s.size() && (s[j] == '+' || s[j] == '-')) ++j;
    const size_t digits = j;
    while (j < s.size() && std::isdigit(static_cast<unsigned char>(s[j]))) ++j;
    if (j > digits) i = j;
  }
  *out = sign * std::strtod(std::string(s.substr(start, i - start)).c_str(), nullptr);
  return i;
}

// One value token of a series: its values (nullopt for `_`).
absl::Status ParseValueToken(absl::string_view token, std::vector<std::optional<double>>* out) {
  auto parse_count = [](absl::string_view digits, int64_t* n) {
    return absl::SimpleAtoi(digits, n) && *n >= 0 && *n < 10'000'000;
  };
  if (token == "_") {
    out->push_back(std::nullopt);
    return absl::OkStatus();
  }
  if (absl::StartsWith(token, "_x")) {
    int64_t n;
    if (!parse_count(token.substr(2), &n))
      return absl::InvalidArgumentError(absl::StrCat("bad value ", token));
    for (int64_t i = 0; i < n; ++i) out->push_back(std::nullopt);
    return absl::OkStatus();
  }
  if (token == "stale") {
    out->push_back(std::bit_cast<double>(kStaleNaNBits));
    return absl::OkStatus();
  }
  double first;
  size_t n = ScanValue(token, &first);
  if (n == 0) return absl::InvalidArgumentError(absl::StrCat("bad value ", token));
  if (n == token.size()) {
    out->push_back(first);
    return absl::OkStatus();
  }
  double increment = 0;
  absl::string_view rest = token.substr(n);
  if (rest[0] == '+' || rest[0] == '-') {
    const size_t m = ScanValue(rest, &increment);
    if (m == 0) return absl::InvalidArgumentError(absl::StrCat("bad value ", token));
    rest = rest.substr(m);
  }
  int64_t times;
  if (rest.empty() || rest[0] != 'x' || !parse_count(rest.substr(1), &times)) {
    return absl::InvalidArgumentError(absl::StrCat("bad value ", token));
  }
  double v = first;
  for (int64_t i = 0; i <= times; ++i) {
    out->push_back(v);
    v += increment;
  }
  return absl::OkStatus();
}

// `metric{a="b"} rest` into labels and the rest.
absl::StatusOr<std::pair<Labels, std::string>> ParseSeriesLine(absl::string_view line) {
  size_t i = 0;
  bool in_braces = false, in_quote = false;
  for (; i < line.size(); ++i) {
    const char c = line[i];
    if (in_quote) {
      if (c == '\\') {
        ++i;
      } else if (c == '"') {
        in_quote = false;
      }
    } else if (c == '"') {
      in_quote = true;
    } else if (c == '{') {
      in_braces = true;
    } else if (c == '}') {
      in_braces = false;
    } else if (!in_braces && (c == ' ' || c == '\t')) {
      break;
    }
  }
  const absl::string_view desc = line.substr(0, i);
  if (desc == "{}")
    return std::make_pair(Labels{}, std::string(absl::StripAsciiWhitespace(line.substr(i))));
  absl::StatusOr<std::unique_ptr<Expr>> e = ParsePromQL(desc);
  if (!e.ok() || (*e)->kind != Expr::Kind::kVectorSelector) {
    return absl::InvalidArgumentError(absl::StrCat("bad series ", desc));
  }
  Labels labels;
  for (const LabelMatcher& m : (*e)->matchers) SetLabel(&labels, m.name, m.value);
  return std::make_pair(std::move(labels), std::string(absl::StripAsciiWhitespace(line.substr(i))));
}

absl::StatusOr<int64_t> ParseTime(absl::string_view text) {
  if (text == "0") return 0;
  absl::StatusOr<int64_t> ms = ParseDurationMs(text);
  // Times of 0 (0s, 0m) are durations the parser refuses as ranges.
  if (!ms.ok() && absl::StrContains(ms.status().message(), "greater than 0")) return 0;
  return ms;
}

bool AlmostEqual(double a, double b) {
  if (std::isnan(a) && std::isnan(b)) return true;
  if (a == b) return true;
  constexpr double kEpsilon = 0.000001;
  const double min_normal = std::numeric_limits<double>::min();
  const double diff = std::abs(a - b);
  if (a == 0 || b == 0 || diff < min_normal) return diff < kEpsilon * min_normal;
  return diff / (std::abs(a) + std::abs(b)) < kEpsilon;
}

struct Expected {
  bool scalar = false;
  double scalar_value = 0;
  // Labels key -> (position, value, labels).
  absl::flat_hash_map<std::string, std::pair<int, double>> series;
  std::vector<Labels> series_labels;
};

std::string CompareVector(const Expected& want, const std::vector<VectorElement>& got,
                          bool ordered) {
  if (want.scalar) return "expected a scalar, got a vector";
  absl::flat_hash_map<std::string, bool> seen;
  for (size_t pos = 0; pos < got.size(); ++pos) {
    const std::string key = LabelsKey(got[pos].labels);
    auto it = want.series.find(key);
    if (it == want.series.end())
      return absl::StrCat("unexpected metric ", LabelsText(got[pos].labels), " in result");
    if (ordered && it->second.first != static_cast<int>(pos)) {
      return absl::StrCat("expected metric ", LabelsText(got[pos].labels), " at position ",
                          it->second.first + 1, " but was at ", pos + 1);
    }
    if (!AlmostEqual(it->second.second, got[pos].v)) {
      return absl::StrCat("expected ", FormatFloat(it->second.second), " for ",
                          LabelsText(got[pos].labels), " but got ", FormatFloat(got[pos].v));
    }
    seen[key] = true;
  }
  for (const Labels& l : want.series_labels) {
    if (!seen.contains(LabelsKey(l)))
      return absl::StrCat("expected metric ", LabelsText(l), " not found");
  }
  return "";
}

std::string Compare(const Expected& want, const QueryResult& got, bool ordered) {
  switch (got.type) {
    case ValueType::kScalar:
      if (!want.scalar) return "expected a vector, got a scalar";
      if (!AlmostEqual(want.scalar_value, got.scalar)) {
        return absl::StrCat("expected scalar ", FormatFloat(want.scalar_value), " but got ",
                            FormatFloat(got.scalar));
      }
      return "";
    case ValueType::kVector:
      return CompareVector(want, got.vector, ordered);
    default:
      return absl::StrCat("unexpected result type ", ValueTypeName(got.type));
  }
}

// Functions whose value depends on the evaluation time: with them, adding
// `@` changes the answer, so Prometheus's harness does not try it.
bool HasAtUnsafeFunction(const Expr& e) {
  if (e.kind == Expr::Kind::kCall) {
    const absl::string_view n = e.function->name;
    if (n == "days_in_month" || n == "day_of_month" || n == "day_of_week" || n == "day_of_year" ||
        n == "hour" || n == "minute" || n == "month" || n == "year" || n == "predict_linear" ||
        n == "time" || n == "timestamp") {
      return true;
    }
  }
  for (const auto& a : e.args) {
    if (HasAtUnsafeFunction(*a)) return true;
  }
  for (const Expr* c : {e.lhs.get(), e.rhs.get(), e.param.get(), e.selector.get()}) {
    if (c != nullptr && HasAtUnsafeFunction(*c)) return true;
  }
  return false;
}

// Adds `@ t` to every selector and subquery without one, not inside a
// subquery (which then has an @ of its own).
void SetAt(Expr* e, int64_t t_ms) {
  switch (e->kind) {
    case Expr::Kind::kVectorSelector:
      if (e->at == AtKind::kNone) {
        e->at = AtKind::kTime;
        e->at_ms = t_ms;
      }
      return;
    case Expr::Kind::kMatrixSelector:
      SetAt(e->selector.get(), t_ms);
      return;
    case Expr::Kind::kSubquery:
      if (e->at == AtKind::kNone) {
        e->at = AtKind::kTime;
        e->at_ms = t_ms;
      }
      return;
    default:
      break;
  }
  for (auto& a : e->args) SetAt(a.get(), t_ms);
  for (Expr* c : {e->lhs.get(), e->rhs.get(), e->param.get()}) {
    if (c != nullptr) SetAt(c, t_ms);
  }
}

// One evaluation as the harness does it: instant at t, then a range query
// over [t-1m, t+1m] whose point at t must give the same answer.
std::string Check(InMemorySeriesSource& source, const Expr& expr, int64_t t, const Expected& want,
                  bool ordered, bool fail) {
  EngineOptions options;
  absl::StatusOr<QueryResult> got = EvaluateInstant(source, expr, t, options);
  if (!got.ok()) {
    if (fail) return "";
    return absl::StrCat("error at ", t, "ms: ", got.status().ToString());
  }
  if (fail) return absl::StrCat("expected an error at ", t, "ms, got none");
  std::string diff = Compare(want, *got, ordered);
  if (!diff.empty()) return absl::StrCat("at ", t, "ms: ", diff);
  if (expr.type != ValueType::kScalar && expr.type != ValueType::kVector) return "";
  absl::StatusOr<QueryResult> range =
      EvaluateRange(source, expr, t - 60000, t + 60000, 60000, options);
  if (!range.ok())
    return absl::StrCat("range mode error at ", t, "ms: ", range.status().ToString());
  if (ordered) return "";
  QueryResult at_t;
  at_t.type = expr.type;
  for (const MatrixSeries& s : range->matrix) {
    for (const Point& p : s.points) {
      if (p.t_ms == t) {
        at_t.vector.push_back(VectorElement{s.labels, t, p.v});
        at_t.scalar = p.v;
      }
    }
  }
  diff = Compare(want, at_t, false);
  if (!diff.empty()) return absl::StrCat("range mode at ", t, "ms: ", diff);
  return "";
}

}  // namespace

absl::StatusOr<std::vector<EvalOutcome>> RunPromQLTestFile(absl::string_view text) {
  const std::vector<std::string> lines = absl::StrSplit(text, '\n');
  InMemorySeriesSource source;
  std::vector<EvalOutcome> outcomes;
  auto indented = [](const std::string& l) {
    return !l.empty() && (l[0] == ' ' || l[0] == '\t') && !absl::StripAsciiWhitespace(l).empty();
  };
  for (size_t i = 0; i < lines.size(); ++i) {
    const std::string line(absl::StripTrailingAsciiWhitespace(lines[i]));
    const absl::string_view trimmed = absl::StripAsciiWhitespace(line);
    if (trimmed.empty() || trimmed[0] == '#') continue;
    const int line_no = static_cast<int>(i) + 1;
    if (trimmed == "clear") {
      source.Clear();
      continue;
    }
    if (absl::StartsWith(trimmed, "load ")) {
      absl::StatusOr<int64_t> interval = ParseTime(absl::StripAsciiWhitespace(trimmed.substr(5)));
      if (!interval.ok()) return interval.status();
      while (i + 1 < lines.size() && indented(lines[i + 1])) {
        ++i;
        const absl::string_view def = absl::StripAsciiWhitespace(lines[i]);
        if (def[0] == '#') continue;
        absl::StatusOr<std::pair<Labels, std::string>> series = ParseSeriesLine(def);
        if (!series.ok()) return series.status();
        std::vector<std::optional<double>> values;
        for (absl::string_view token :
             absl::StrSplit(series->second, absl::ByAnyChar(" \t"), absl::SkipEmpty())) {
          absl::Status parsed = ParseValueToken(token, &values);
          if (!parsed.ok()) return parsed;
        }
        std::vector<Sample> samples;
        for (size_t k = 0; k < values.size(); ++k) {
          if (values[k].has_value())
            samples.push_back(Sample{static_cast<int64_t>(k) * *interval, *values[k]});
        }
        source.Add(series->first, samples);
      }
      continue;
    }
    bool fail = false, ordered = false;
    absl::string_view rest = trimmed;
    if (absl::ConsumePrefix(&rest, "eval_fail ")) {
      fail = true;
    } else if (absl::ConsumePrefix(&rest, "eval_ordered ")) {
      ordered = true;
    } else if (!absl::ConsumePrefix(&rest, "eval ")) {
      return absl::InvalidArgumentError(absl::StrCat("line ", line_no, ": unknown command"));
    }
    rest = absl::StripLeadingAsciiWhitespace(rest);
    if (!absl::ConsumePrefix(&rest, "instant")) {
      return absl::InvalidArgumentError(absl::StrCat("line ", line_no, ": only instant evals"));
    }
    rest = absl::StripLeadingAsciiWhitespace(rest);
    if (!absl::ConsumePrefix(&rest, "at "))
      return absl::InvalidArgumentError(absl::StrCat("line ", line_no, ": no at"));
    rest = absl::StripLeadingAsciiWhitespace(rest);
    const size_t space = rest.find_first_of(" \t");
    absl::StatusOr<int64_t> t = ParseTime(rest.substr(0, space));
    if (!t.ok()) return t.status();
    EvalOutcome outcome;
    outcome.line = line_no;
    outcome.expr = std::string(absl::StripAsciiWhitespace(rest.substr(space)));
    Expected want;
    while (i + 1 < lines.size() && indented(lines[i + 1])) {
      ++i;
      const std::string def(absl::StripAsciiWhitespace(lines[i]));
      if (def[0] == '#') continue;
      double v;
      if (ScanValue(def, &v) == def.size()) {
        want.scalar = true;
        want.scalar_value = v;
        continue;
      }
      absl::StatusOr<std::pair<Labels, std::string>> series = ParseSeriesLine(def);
      if (!series.ok()) return series.status();
      std::vector<std::optional<double>> values;
      absl::Status parsed = ParseValueToken(series->second, &values);
      if (!parsed.ok() || values.empty() || !values[0].has_value()) {
        return absl::InvalidArgumentError(absl::StrCat("line ", i + 1, ": bad expected value"));
      }
      want.series[LabelsKey(series->first)] = {static_cast<int>(want.series_labels.size()),
                                               *values[0]};
      want.series_labels.push_back(series->first);
    }
    absl::StatusOr<std::unique_ptr<Expr>> expr = ParsePromQL(outcome.expr);
    if (!expr.ok()) {
      outcome.passed = fail;
      outcome.message = expr.status().ToString();
      outcomes.push_back(std::move(outcome));
      continue;
    }
    std::string message = Check(source, **expr, *t, want, ordered, fail);
    if (message.empty() && !HasAtUnsafeFunction(**expr)) {
      std::vector<int64_t> times = {-10 * *t, 0, *t / 5, *t, 10 * *t};
      if (*t == 0) times = {-1000, 0, 1000};
      for (int64_t at_time : times) {
        absl::StatusOr<std::unique_ptr<Expr>> with_at = ParsePromQL(outcome.expr);
        SetAt(with_at->get(), *t);
        message = Check(source, **with_at, at_time, want, ordered, fail);
        if (!message.empty()) {
          message = absl::StrCat("with @ ", *t, "ms evaluated ", message);
          break;
        }
      }
    }
    outcome.passed = message.empty();
    outcome.message = std::move(message);
    outcomes.push_back(std::move(outcome));
  }
  return outcomes;
}

}  // namespace strata::compat::promql
