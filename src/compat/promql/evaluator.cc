#include "compat/promql/evaluator.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <limits>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "compat/promql/label_matcher.h"
#include "compat/promql/parser.h"
#include "compat/promql/result_json.h"

namespace strata::compat::promql {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

bool IsStale(double v) { return std::bit_cast<uint64_t>(v) == kStaleNaNBits; }

// Prometheus's vectorElemBinop: the value and whether to keep the element
// (comparisons filter).
std::pair<double, bool> ElemBinop(BinaryOp op, double l, double r) {
  switch (op) {
    case BinaryOp::kAdd:
      return {l + r, true};
    case BinaryOp::kSub:
      return {l - r, true};
    case BinaryOp::kMul:
      return {l * r, true};
    case BinaryOp::kDiv:
      return {l / r, true};
    case BinaryOp::kPow:
      return {std::pow(l, r), true};
    case BinaryOp::kMod:
      return {std::fmod(l, r), true};
    case BinaryOp::kAtan2:
      return {std::atan2(l, r), true};
    case BinaryOp::kEq:
      return {l, l == r};
    case BinaryOp::kNe:
      return {l, l != r};
    case BinaryOp::kGt:
      return {l, l > r};
    case BinaryOp::kLt:
      return {l, l < r};
    case BinaryOp::kGe:
      return {l, l >= r};
    case BinaryOp::kLe:
      return {l, l <= r};
    default:
      return {kNaN, false};
  }
}

// The operators whose result drops the metric name (atan2 keeps it in
// Prometheus 2.42).
bool IsArithmetic(BinaryOp op) {
  return !IsComparison(op) && !IsSetOperator(op) && op != BinaryOp::kAtan2;
}

// Points of each series at each step: by_step[i] lists (series, value).
std::vector<std::vector<std::pair<int, double>>> ByStep(const std::vector<StepSeries>& series,
                                                        const StepRange& r) {
  std::vector<std::vector<std::pair<int, double>>> by_step(static_cast<size_t>(r.Steps()));
  for (size_t j = 0; j < series.size(); ++j) {
    for (const Point& p : series[j].points) {
      by_step[static_cast<size_t>(r.Index(p.t_ms))].emplace_back(static_cast<int>(j), p.v);
    }
  }
  return by_step;
}

// The labels that decide a match: only `names` (on) or all but `names` and
// __name__ (ignoring).
std::string MatchSignature(const Labels& labels, bool on, const std::vector<std::string>& names) {
  std::string key;
  for (const Label& l : labels) {
    const bool listed = std::find(names.begin(), names.end(), l.name) != names.end();
    if (on ? !listed : (listed || l.name == "__name__")) continue;
    absl::StrAppend(&key, l.name, "\xff", l.value, "\xff");
  }
  return key;
}

Labels MatchedLabels(const Labels& labels, bool on, const std::vector<std::string>& names) {
  Labels out;
  for (const Label& l : labels) {
    const bool listed = std::find(names.begin(), names.end(), l.name) != names.end();
    if (on ? listed : (!listed && l.name != "__name__")) out.push_back(l);
  }
  return out;
}

}  // namespace

std::string LabelsKey(const Labels& labels) {
  std::string key;
  for (const Label& l : labels) absl::StrAppend(&key, l.name, "\xff", l.value, "\xff");
  return key;
}

Labels DropMetricName(Labels labels) {
  labels.erase(std::remove_if(labels.begin(), labels.end(),
                              [](const Label& l) { return l.name == "__name__"; }),
               labels.end());
  return labels;
}

void SetLabel(Labels* labels, const std::string& name, const std::string& value) {
  auto it = std::lower_bound(labels->begin(), labels->end(), name,
                             [](const Label& l, const std::string& n) { return l.name < n; });
  const bool present = it != labels->end() && it->name == name;
  if (value.empty()) {
    if (present) labels->erase(it);
  } else if (present) {
    it->value = value;
  } else {
    labels->insert(it, Label{name, value});
  }
}

int CompareLabels(const Labels& a, const Labels& b) {
  const size_t n = std::min(a.size(), b.size());
  for (size_t i = 0; i < n; ++i) {
    if (a[i].name != b[i].name) return a[i].name < b[i].name ? -1 : 1;
    if (a[i].value != b[i].value) return a[i].value < b[i].value ? -1 : 1;
  }
  if (a.size() == b.size()) return 0;
  return a.size() < b.size() ? -1 : 1;
}

std::string LabelsText(const Labels& labels) {
  std::vector<std::string> parts;
  for (const Label& l : labels) {
    std::string quoted;
    AppendJsonString(l.value, &quoted);
    parts.push_back(absl::StrCat(l.name, "=", quoted));
  }
  return absl::StrCat("{", absl::StrJoin(parts, ", "), "}");
}

double GoMax(double a, double b) {
  if (std::isinf(a) && a > 0) return a;
  if (std::isinf(b) && b > 0) return b;
  if (std::isnan(a) || std::isnan(b)) return kNaN;
  if (a == 0 && a == b) return std::signbit(a) ? b : a;
  return a > b ? a : b;
}

double GoMin(double a, double b) {
  if (std::isinf(a) && a < 0) return a;
  if (std::isinf(b) && b < 0) return b;
  if (std::isnan(a) || std::isnan(b)) return kNaN;
  if (a == 0 && a == b) return std::signbit(a) ? a : b;
  return a < b ? a : b;
}

double Quantile(double q, std::vector<double> values) {
  if (values.empty()) return kNaN;
  if (q < 0) return -std::numeric_limits<double>::infinity();
  if (q > 1) return std::numeric_limits<double>::infinity();
  std::sort(values.begin(), values.end(), [](double a, double b) {
    if (std::isnan(a)) return !std::isnan(b);
    return a < b;
  });
  const double n = static_cast<double>(values.size());
  const double rank = q * (n - 1);
  const double lower = std::max(0.0, std::floor(rank));
  const double upper = std::min(n - 1, lower + 1);
  const double weight = rank - std::floor(rank);
  return values[static_cast<size_t>(lower)] * (1 - weight) +
         values[static_cast<size_t>(upper)] * weight;
}

absl::Status Evaluator::Tick() {
  if ((++ticks_ & 1023) != 0) return absl::OkStatus();
  if (absl::Now() > options_.deadline) {
    return absl::DeadlineExceededError("query timed out in expression evaluation");
  }
  if (options_.cancelled && options_.cancelled()) return absl::CancelledError("query cancelled");
  return absl::OkStatus();
}

absl::Status Evaluator::AddPoints(int64_t n) {
  points_used_ += n;
  if (options_.max_points > 0 && points_used_ > options_.max_points) {
    return absl::ResourceExhaustedError(
        absl::StrCat("query processing would load too many samples into memory (more than ",
                     options_.max_points, ")"));
  }
  return Tick();
}

absl::StatusOr<std::vector<StepSeries>> Evaluator::Finish(std::vector<StepSeries> out) {
  absl::flat_hash_map<std::string, size_t> index;
  std::vector<StepSeries> merged;
  std::vector<bool> needs_sort;
  for (StepSeries& s : out) {
    if (s.points.empty()) continue;
    auto [it, inserted] = index.try_emplace(LabelsKey(s.labels), merged.size());
    if (inserted) {
      merged.push_back(std::move(s));
      needs_sort.push_back(false);
      continue;
    }
    StepSeries& target = merged[it->second];
    target.points.insert(target.points.end(), s.points.begin(), s.points.end());
    needs_sort[it->second] = true;
  }
  for (size_t i = 0; i < merged.size(); ++i) {
    if (!needs_sort[i]) continue;
    std::vector<Point>& p = merged[i].points;
    std::sort(p.begin(), p.end(), [](const Point& a, const Point& b) { return a.t_ms < b.t_ms; });
    for (size_t k = 1; k < p.size(); ++k) {
      if (p[k].t_ms == p[k - 1].t_ms) {
        return absl::FailedPreconditionError(
            "vector cannot contain metrics with the same labelset");
      }
    }
  }
  return merged;
}

int64_t Evaluator::AtTime(const Expr& e) const {
  switch (e.at) {
    case AtKind::kStart:
      return query_start_;
    case AtKind::kEnd:
      return query_end_;
    default:
      // Far beyond any sample, and far enough from the ends of int64 that
      // the arithmetic on times below cannot overflow.
      return std::clamp(e.at_ms, -kMaxQueryTimeMs, kMaxQueryTimeMs);
  }
}

absl::StatusOr<std::vector<Series>> Evaluator::Select(const Expr& selector, int64_t min_ms,
                                                      int64_t max_ms) {
  SelectLimits limits;
  if (options_.max_series > 0)
    limits.max_series = std::max<int64_t>(1, options_.max_series - series_used_);
  if (options_.max_points > 0)
    limits.max_samples = std::max<int64_t>(1, options_.max_points - points_used_);
  absl::StatusOr<std::vector<Series>> series =
      source_.Select(selector.matchers, min_ms, max_ms, limits);
  if (!series.ok()) return series.status();
  series_used_ += static_cast<int64_t>(series->size());
  if (options_.max_series > 0 && series_used_ > options_.max_series) {
    return absl::ResourceExhaustedError(
        absl::StrCat("the query selects more than ", options_.max_series, " series"));
  }
  int64_t samples = 0;
  for (const Series& s : *series) samples += static_cast<int64_t>(s.samples.size());
  absl::Status counted = AddPoints(samples);
  if (!counted.ok()) return counted;
  return series;
}

absl::StatusOr<Value> Evaluator::EvalVectorSelector(const Expr& e, const StepRange& r,
                                                    bool timestamps) {
  const bool has_at = e.at != AtKind::kNone;
  const int64_t at = AtTime(e);
  const int64_t lookback = options_.lookback_ms;
  const int64_t min_ms = (has_at ? at : r.start) - e.offset_ms - lookback;
  const int64_t max_ms = (has_at ? at : r.end) - e.offset_ms;
  absl::StatusOr<std::vector<Series>> selected = Select(e, min_ms, max_ms);
  if (!selected.ok()) return selected.status();
  Value out;
  out.type = ValueType::kVector;
  const int64_t steps = r.Steps();
  // The sample an instant selector sees at reference time `ref`: the
  // latest at or before it, within the lookback, not a staleness marker.
  auto lookup = [&](const std::vector<Sample>& s, size_t* j, int64_t ref, Point* found) {
    while (*j < s.size() && s[*j].t_ms <= ref) ++*j;
    if (*j == 0) return false;
    const Sample& last = s[*j - 1];
    if (last.t_ms < ref - lookback || IsStale(last.v)) return false;
    found->v = timestamps ? static_cast<double>(last.t_ms) / 1000 : last.v;
    return true;
  };
  for (Series& series : *selected) {
    StepSeries ss{std::move(series.labels), {}};
    size_t j = 0;
    if (has_at) {
      Point p;
      if (lookup(series.samples, &j, at - e.offset_ms, &p)) {
        ss.points.reserve(static_cast<size_t>(steps));
        for (int64_t i = 0; i < steps; ++i) ss.points.push_back(Point{r.Time(i), p.v});
      }
    } else {
      for (int64_t i = 0; i < steps; ++i) {
        Point p;
        if (lookup(series.samples, &j, r.Time(i) - e.offset_ms, &p)) {
          ss.points.push_back(Point{r.Time(i), p.v});
        }
      }
    }
    absl::Status counted = AddPoints(static_cast<int64_t>(ss.points.size()));
    if (!counted.ok()) return counted;
    if (!ss.points.empty()) out.series.push_back(std::move(ss));
  }
  return out;
}

absl::StatusOr<RangeInput> Evaluator::EvalRange(const Expr& e, const StepRange& r) {
  if (e.kind == Expr::Kind::kParen) return EvalRange(*e.lhs, r);
  RangeInput in;
  in.range_ms = e.range_ms;
  if (e.kind == Expr::Kind::kMatrixSelector) {
    const Expr& vs = *e.selector;
    in.offset_ms = vs.offset_ms;
    in.has_at = vs.at != AtKind::kNone;
    in.at_ms = AtTime(vs);
    const int64_t min_ms = (in.has_at ? in.at_ms : r.start) - vs.offset_ms - e.range_ms;
    const int64_t max_ms = (in.has_at ? in.at_ms : r.end) - vs.offset_ms;
    absl::StatusOr<std::vector<Series>> selected = Select(vs, min_ms, max_ms);
    if (!selected.ok()) return selected.status();
    for (Series& s : *selected) {
      s.samples.erase(std::remove_if(s.samples.begin(), s.samples.end(),
                                     [](const Sample& x) { return IsStale(x.v); }),
                      s.samples.end());
      if (!s.samples.empty()) in.series.push_back(std::move(s));
    }
    return in;
  }
  if (e.kind != Expr::Kind::kSubquery) {
    return absl::InternalError("a range vector that is no selector or subquery");
  }
  in.offset_ms = e.offset_ms;
  in.has_at = e.at != AtKind::kNone;
  in.at_ms = AtTime(e);
  const int64_t step = e.step_ms > 0 ? e.step_ms : options_.default_subquery_step_ms;
  const int64_t end = (in.has_at ? in.at_ms : r.end) - e.offset_ms;
  const int64_t first = (in.has_at ? in.at_ms : r.start) - e.offset_ms - e.range_ms;
  // The first multiple of the step at or after `first`.
  int64_t start = (first / step) * step;
  if (start < first) start += step;
  if (start > end) return in;
  const StepRange sub{start, end, step};
  if (sub.Steps() > options_.max_points && options_.max_points > 0) {
    return absl::ResourceExhaustedError("the subquery has too many steps");
  }
  absl::StatusOr<Value> inner = Eval(*e.lhs, sub);
  if (!inner.ok()) return inner.status();
  if (inner->type == ValueType::kScalar) {
    Series s;
    for (int64_t i = 0; i < sub.Steps(); ++i)
      s.samples.push_back(Sample{sub.Time(i), inner->scalar[static_cast<size_t>(i)]});
    in.series.push_back(std::move(s));
    return in;
  }
  for (StepSeries& ss : inner->series) {
    Series s{std::move(ss.labels), {}};
    s.samples.reserve(ss.points.size());
    for (const Point& p : ss.points) s.samples.push_back(Sample{p.t_ms, p.v});
    in.series.push_back(std::move(s));
  }
  return in;
}

absl::StatusOr<Value> Evaluator::Eval(const Expr& e, const StepRange& r) {
  absl::Status tick = Tick();
  if (!tick.ok()) return tick;
  const size_t steps = static_cast<size_t>(r.Steps());
  switch (e.kind) {
    case Expr::Kind::kNumber: {
      Value v;
      v.type = ValueType::kScalar;
      v.scalar.assign(steps, e.number);
      return v;
    }
    case Expr::Kind::kString: {
      Value v;
      v.type = ValueType::kString;
      v.text = e.text;
      return v;
    }
    case Expr::Kind::kParen:
      return Eval(*e.lhs, r);
    case Expr::Kind::kUnary: {
      absl::StatusOr<Value> v = Eval(*e.lhs, r);
      if (!v.ok()) return v;
      if (v->type == ValueType::kScalar) {
        for (double& x : v->scalar) x = -x;
        return v;
      }
      for (StepSeries& s : v->series) {
        s.labels = DropMetricName(std::move(s.labels));
        for (Point& p : s.points) p.v = -p.v;
      }
      absl::StatusOr<std::vector<StepSeries>> finished = Finish(std::move(v->series));
      if (!finished.ok()) return finished.status();
      v->series = *std::move(finished);
      return v;
    }
    case Expr::Kind::kVectorSelector:
      return EvalVectorSelector(e, r, false);
    case Expr::Kind::kCall:
      return EvalCall(e, r);
    case Expr::Kind::kAggregate:
      return EvalAggregate(e, r);
    case Expr::Kind::kBinary:
      return EvalBinary(e, r);
    case Expr::Kind::kMatrixSelector:
    case Expr::Kind::kSubquery:
      break;
  }
  return absl::InternalError("a range vector where an instant value was expected");
}

absl::StatusOr<Value> Evaluator::EvalBinary(const Expr& e, const StepRange& r) {
  absl::StatusOr<Value> lhs = Eval(*e.lhs, r);
  if (!lhs.ok()) return lhs;
  absl::StatusOr<Value> rhs = Eval(*e.rhs, r);
  if (!rhs.ok()) return rhs;
  const bool ls = lhs->type == ValueType::kScalar;
  const bool rs = rhs->type == ValueType::kScalar;
  if (ls && rs) {
    Value v;
    v.type = ValueType::kScalar;
    v.scalar.resize(lhs->scalar.size());
    for (size_t i = 0; i < v.scalar.size(); ++i) {
      auto [value, keep] = ElemBinop(e.op, lhs->scalar[i], rhs->scalar[i]);
      v.scalar[i] = IsComparison(e.op) ? (keep ? 1 : 0) : value;
    }
    return v;
  }
  if (ls || rs) {
    // Vector and scalar: the vector's elements, each with the scalar of
    // its step; comparisons keep the vector's value.
    Value& vec = ls ? *rhs : *lhs;
    const std::vector<double>& scalar = ls ? lhs->scalar : rhs->scalar;
    const bool swap = ls;
    const bool drop = IsArithmetic(e.op) || e.return_bool;
    for (StepSeries& s : vec.series) {
      if (drop) s.labels = DropMetricName(std::move(s.labels));
      std::vector<Point> kept;
      kept.reserve(s.points.size());
      for (const Point& p : s.points) {
        double l = p.v;
        double rv = scalar[static_cast<size_t>(r.Index(p.t_ms))];
        if (swap) std::swap(l, rv);
        auto [value, keep] = ElemBinop(e.op, l, rv);
        if (IsComparison(e.op) && swap) value = rv;
        if (e.return_bool) {
          value = keep ? 1 : 0;
          keep = true;
        }
        if (keep) kept.push_back(Point{p.t_ms, value});
      }
      s.points = std::move(kept);
    }
    absl::StatusOr<std::vector<StepSeries>> finished = Finish(std::move(vec.series));
    if (!finished.ok()) return finished.status();
    Value v;
    v.type = ValueType::kVector;
    v.series = *std::move(finished);
    return v;
  }
  return EvalVectorBinary(e, r, *std::move(lhs), *std::move(rhs));
}

absl::StatusOr<Value> Evaluator::EvalVectorBinary(const Expr& e, const StepRange& r, Value lhs,
                                                  Value rhs) {
  const VectorMatching& m = e.matching;
  Value out;
  out.type = ValueType::kVector;
  // Signatures interned as numbers, so that each step is array lookups.
  absl::flat_hash_map<std::string, int> sig_ids;
  auto sig_of = [&](const Labels& labels) {
    auto [it, inserted] = sig_ids.try_emplace(MatchSignature(labels, m.on, m.labels),
                                              static_cast<int>(sig_ids.size()));
    return it->second;
  };
  std::vector<int> lsig;
  std::vector<int> rsig;
  for (const StepSeries& s : lhs.series) lsig.push_back(sig_of(s.labels));
  for (const StepSeries& s : rhs.series) rsig.push_back(sig_of(s.labels));
  const size_t nsig = sig_ids.size();
  const auto lsteps = ByStep(lhs.series, r);
  const auto rsteps = ByStep(rhs.series, r);
  const int64_t steps = r.Steps();

  if (IsSetOperator(e.op)) {
    std::vector<StepSeries> result;
    for (StepSeries& s : lhs.series) result.push_back(StepSeries{s.labels, {}});
    const size_t rbase = result.size();
    if (e.op == BinaryOp::kOr) {
      for (StepSeries& s : rhs.series) result.push_back(StepSeries{s.labels, {}});
    }
    std::vector<int64_t> seen(nsig, -1);
    for (int64_t i = 0; i < steps; ++i) {
      absl::Status tick = Tick();
      if (!tick.ok()) return tick;
      const int64_t t = r.Time(i);
      const auto& lv = lsteps[static_cast<size_t>(i)];
      const auto& rv = rsteps[static_cast<size_t>(i)];
      if (e.op == BinaryOp::kOr) {
        for (const auto& [j, v] : lv) {
          seen[static_cast<size_t>(lsig[static_cast<size_t>(j)])] = i;
          result[static_cast<size_t>(j)].points.push_back(Point{t, v});
        }
        for (const auto& [j, v] : rv) {
          if (seen[static_cast<size_t>(rsig[static_cast<size_t>(j)])] == i) continue;
          result[rbase + static_cast<size_t>(j)].points.push_back(Point{t, v});
        }
      } else {
        for (const auto& [j, v] : rv) seen[static_cast<size_t>(rsig[static_cast<size_t>(j)])] = i;
        for (const auto& [j, v] : lv) {
          const bool present = seen[static_cast<size_t>(lsig[static_cast<size_t>(j)])] == i;
          if (present == (e.op == BinaryOp::kAnd)) {
            result[static_cast<size_t>(j)].points.push_back(Point{t, v});
          }
        }
      }
    }
    absl::StatusOr<std::vector<StepSeries>> finished = Finish(std::move(result));
    if (!finished.ok()) return finished.status();
    out.series = *std::move(finished);
    return out;
  }

  // One-to-one and many-to-one; one-to-many swaps the sides.
  const bool swapped = m.card == Cardinality::kOneToMany;
  const std::vector<StepSeries>& many = swapped ? rhs.series : lhs.series;
  const std::vector<StepSeries>& one = swapped ? lhs.series : rhs.series;
  const std::vector<int>& many_sig = swapped ? rsig : lsig;
  const std::vector<int>& one_sig = swapped ? lsig : rsig;
  const auto& many_steps = swapped ? rsteps : lsteps;
  const auto& one_steps = swapped ? lsteps : rsteps;

  // The result labels of each (many, one) pair, interned.
  absl::flat_hash_map<std::pair<int, int>, int> pair_out;
  absl::flat_hash_map<std::string, int> out_ids;
  std::vector<StepSeries> result;
  auto result_id = [&](int mi, int oi) {
    auto [it, inserted] = pair_out.try_emplace(std::make_pair(mi, oi), 0);
    if (!inserted) return it->second;
    Labels labels = many[static_cast<size_t>(mi)].labels;
    if (IsArithmetic(e.op) || e.return_bool) labels = DropMetricName(std::move(labels));
    if (m.card == Cardinality::kOneToOne) {
      Labels kept;
      for (const Label& l : labels) {
        const bool listed = std::find(m.labels.begin(), m.labels.end(), l.name) != m.labels.end();
        if (m.on == listed) kept.push_back(l);
      }
      labels = std::move(kept);
    }
    for (const std::string& name : m.include) {
      SetLabel(&labels, name, LabelValue(one[static_cast<size_t>(oi)].labels, name));
    }
    auto [oit, oinserted] = out_ids.try_emplace(LabelsKey(labels), static_cast<int>(result.size()));
    if (oinserted) result.push_back(StepSeries{std::move(labels), {}});
    it->second = oit->second;
    return oit->second;
  };

  std::vector<int64_t> one_seen(nsig, -1);
  std::vector<int> one_at(nsig, -1);
  std::vector<double> one_value(nsig, 0);
  std::vector<int64_t> matched(nsig, -1);
  std::vector<int64_t> out_seen;
  for (int64_t i = 0; i < steps; ++i) {
    absl::Status tick = Tick();
    if (!tick.ok()) return tick;
    const int64_t t = r.Time(i);
    for (const auto& [j, v] : one_steps[static_cast<size_t>(i)]) {
      const auto sig = static_cast<size_t>(one_sig[static_cast<size_t>(j)]);
      if (one_seen[sig] == i) {
        const Labels& a = one[static_cast<size_t>(j)].labels;
        const Labels& b = one[static_cast<size_t>(one_at[sig])].labels;
        return absl::FailedPreconditionError(absl::StrCat(
            "found duplicate series for the match group ",
            LabelsText(MatchedLabels(a, m.on, m.labels)), " on the ", swapped ? "left" : "right",
            " hand-side of the operation: [", LabelsText(a), ", ", LabelsText(b),
            "];many-to-many matching not allowed: matching labels must be unique on one side"));
      }
      one_seen[sig] = i;
      one_at[sig] = j;
      one_value[sig] = v;
    }
    for (const auto& [j, v] : many_steps[static_cast<size_t>(i)]) {
      const auto sig = static_cast<size_t>(many_sig[static_cast<size_t>(j)]);
      if (one_seen[sig] != i) continue;
      double vl = v;
      double vr = one_value[sig];
      if (swapped) std::swap(vl, vr);
      auto [value, keep] = ElemBinop(e.op, vl, vr);
      if (e.return_bool) {
        value = keep ? 1 : 0;
      } else if (!keep) {
        continue;
      }
      const int id = result_id(j, one_at[sig]);
      if (m.card == Cardinality::kOneToOne) {
        if (matched[sig] == i) {
          return absl::FailedPreconditionError(
              "multiple matches for labels: many-to-one matching must be explicit "
              "(group_left/group_right)");
        }
        matched[sig] = i;
      } else {
        if (out_seen.size() < result.size()) out_seen.resize(result.size(), -1);
        if (out_seen[static_cast<size_t>(id)] == i) {
          return absl::FailedPreconditionError(
              "multiple matches for labels: grouping labels must ensure unique matches");
        }
        out_seen[static_cast<size_t>(id)] = i;
      }
      result[static_cast<size_t>(id)].points.push_back(Point{t, value});
    }
  }
  absl::StatusOr<std::vector<StepSeries>> finished = Finish(std::move(result));
  if (!finished.ok()) return finished.status();
  out.series = *std::move(finished);
  return out;
}

}  // namespace strata::compat::promql
