// PromQL's functions (functions.h), as Prometheus 2.42 computes them: the
// range-vector functions window by window over each series, the others
// point by point.

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <map>
#include <numbers>
#include <optional>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "compat/promql/evaluator.h"
#include "compat/promql/functions.h"
#include "compat/promql/label_matcher.h"
#include "compat/promql/parser.h"
#include "re2/re2.h"

namespace strata::compat::promql {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

using Window = absl::Span<const Sample>;

std::pair<double, double> KahanInc(double inc, double sum, double c) {
  const double t = sum + inc;
  if (std::abs(sum) >= std::abs(inc)) {
    c += (sum - t) + inc;
  } else {
    c += (inc - t) + sum;
  }
  return {t, c};
}

// Least squares over the window, x in seconds relative to intercept_ms.
std::pair<double, double> LinearRegression(Window s, int64_t intercept_ms) {
  double n = 0, sum_x = 0, c_x = 0, sum_y = 0, c_y = 0, sum_xy = 0, c_xy = 0, sum_x2 = 0, c_x2 = 0;
  const double init_y = s[0].v;
  bool const_y = true;
  for (size_t i = 0; i < s.size(); ++i) {
    if (const_y && i > 0 && s[i].v != init_y) const_y = false;
    n += 1;
    const double x = static_cast<double>(s[i].t_ms - intercept_ms) / 1e3;
    std::tie(sum_x, c_x) = KahanInc(x, sum_x, c_x);
    std::tie(sum_y, c_y) = KahanInc(s[i].v, sum_y, c_y);
    std::tie(sum_xy, c_xy) = KahanInc(x * s[i].v, sum_xy, c_xy);
    std::tie(sum_x2, c_x2) = KahanInc(x * x, sum_x2, c_x2);
  }
  if (const_y) {
    if (std::isinf(init_y)) return {kNaN, kNaN};
    return {0, init_y};
  }
  sum_x += c_x;
  sum_y += c_y;
  sum_xy += c_xy;
  sum_x2 += c_x2;
  const double cov_xy = sum_xy - sum_x * sum_y / n;
  const double var_x = sum_x2 - sum_x * sum_x / n;
  const double slope = cov_xy / var_x;
  return {slope, sum_y / n - slope * sum_x / n};
}

// Prometheus's extrapolatedRate for rate, increase and delta.
std::optional<double> ExtrapolatedRate(Window s, int64_t range_start, int64_t range_end,
                                       int64_t range_ms, bool is_counter, bool is_rate) {
  if (s.size() < 2) return std::nullopt;
  double result = s.back().v - s.front().v;
  if (is_counter) {
    double last = 0;
    for (const Sample& x : s) {
      if (x.v < last) result += last;
      last = x.v;
    }
  }
  double to_start = static_cast<double>(s.front().t_ms - range_start) / 1000;
  const double to_end = static_cast<double>(range_end - s.back().t_ms) / 1000;
  const double sampled = static_cast<double>(s.back().t_ms - s.front().t_ms) / 1000;
  const double average = sampled / static_cast<double>(s.size() - 1);
  if (is_counter && result > 0 && s.front().v >= 0) {
    const double to_zero = sampled * (s.front().v / result);
    if (to_zero < to_start) to_start = to_zero;
  }
  const double threshold = average * 1.1;
  double interval = sampled;
  interval += to_start < threshold ? to_start : average / 2;
  interval += to_end < threshold ? to_end : average / 2;
  double factor = interval / sampled;
  if (is_rate) factor /= static_cast<double>(range_ms) / 1000;
  return result * factor;
}

std::optional<double> InstantValue(Window s, bool is_rate) {
  if (s.size() < 2) return std::nullopt;
  const Sample& last = s[s.size() - 1];
  const Sample& prev = s[s.size() - 2];
  double result = (is_rate && last.v < prev.v) ? last.v : last.v - prev.v;
  const int64_t interval = last.t_ms - prev.t_ms;
  if (interval == 0) return std::nullopt;
  if (is_rate) result /= static_cast<double>(interval) / 1000;
  return result;
}

// Days since 1970-01-01 to a civil date (Howard Hinnant's algorithm).
void CivilFromDays(int64_t z, int64_t* y, unsigned* m, unsigned* d) {
  z += 719468;
  const int64_t era = (z >= 0 ? z : z - 146096) / 146097;
  const auto doe = static_cast<unsigned>(z - era * 146097);
  const unsigned yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
  const int64_t year = static_cast<int64_t>(yoe) + era * 400;
  const unsigned doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
  const unsigned mp = (5 * doy + 2) / 153;
  *d = doy - (153 * mp + 2) / 5 + 1;
  *m = mp < 10 ? mp + 3 : mp - 9;
  *y = year + (*m <= 2);
}

bool IsLeap(int64_t y) { return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0; }

double TimeFunction(absl::string_view name, double v) {
  // Go's int64(v) truncates; out of range (NaN, Inf) it is the minimum.
  int64_t secs = std::numeric_limits<int64_t>::min();
  if (v > -9.2233720368547758e18 && v < 9.2233720368547758e18) secs = static_cast<int64_t>(v);
  int64_t days = secs / 86400;
  int64_t rem = secs % 86400;
  if (rem < 0) {
    rem += 86400;
    days -= 1;
  }
  int64_t y;
  unsigned m, d;
  CivilFromDays(days, &y, &m, &d);
  static const int kDaysIn[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  if (name == "day_of_month") return d;
  if (name == "day_of_week")
    return static_cast<double>(((days % 7) + 11) % 7);  // 1970-01-01 was a Thursday
  if (name == "day_of_year") {
    int doy = static_cast<int>(d);
    for (unsigned k = 1; k < m; ++k) doy += kDaysIn[k - 1] + (k == 2 && IsLeap(y) ? 1 : 0);
    return doy;
  }
  if (name == "days_in_month") return kDaysIn[m - 1] + (m == 2 && IsLeap(y) ? 1 : 0);
  if (name == "hour") return static_cast<double>(rem / 3600);
  if (name == "minute") return static_cast<double>((rem % 3600) / 60);
  if (name == "month") return m;
  return static_cast<double>(y);  // year
}

bool IsTimeFunction(absl::string_view n) {
  return n == "day_of_month" || n == "day_of_week" || n == "day_of_year" || n == "days_in_month" ||
         n == "hour" || n == "minute" || n == "month" || n == "year";
}

// The math functions that map each value and drop the metric name.
bool MathFunction(absl::string_view n, double (**f)(double)) {
  static const std::pair<absl::string_view, double (*)(double)> kFunctions[] = {
      {"abs", [](double x) { return std::abs(x); }},
      {"ceil", [](double x) { return std::ceil(x); }},
      {"floor", [](double x) { return std::floor(x); }},
      {"exp", [](double x) { return std::exp(x); }},
      {"sqrt", [](double x) { return std::sqrt(x); }},
      {"ln", [](double x) { return std::log(x); }},
      {"log2", [](double x) { return std::log2(x); }},
      {"log10", [](double x) { return std::log10(x); }},
      {"sin", [](double x) { return std::sin(x); }},
      {"cos", [](double x) { return std::cos(x); }},
      {"tan", [](double x) { return std::tan(x); }},
      {"asin", [](double x) { return std::asin(x); }},
      {"acos", [](double x) { return std::acos(x); }},
      {"atan", [](double x) { return std::atan(x); }},
      {"sinh", [](double x) { return std::sinh(x); }},
      {"cosh", [](double x) { return std::cosh(x); }},
      {"tanh", [](double x) { return std::tanh(x); }},
      {"asinh", [](double x) { return std::asinh(x); }},
      {"acosh", [](double x) { return std::acosh(x); }},
      {"atanh", [](double x) { return std::atanh(x); }},
      {"deg", [](double x) { return x * 180 / std::numbers::pi; }},
      {"rad", [](double x) { return x * std::numbers::pi / 180; }},
      {"sgn",
       [](double x) {
         if (x < 0) return -1.0;
         if (x > 0) return 1.0;
         return x;
       }},
  };
  for (const auto& [name, fn] : kFunctions) {
    if (name == n) {
      *f = fn;
      return true;
    }
  }
  return false;
}

// The labels absent() and absent_over_time() give: the equality matchers
// of a selector argument, except names matched more than once.
Labels AbsentLabels(const Expr& arg) {
  const Expr* vs = nullptr;
  if (arg.kind == Expr::Kind::kVectorSelector) vs = &arg;
  if (arg.kind == Expr::Kind::kMatrixSelector) vs = arg.selector.get();
  Labels out;
  if (vs == nullptr) return out;
  std::vector<std::string> empty;
  for (const LabelMatcher& m : vs->matchers) {
    if (m.name == "__name__") continue;
    const bool has =
        std::any_of(out.begin(), out.end(), [&](const Label& l) { return l.name == m.name; });
    if (m.type == MatchType::kEqual && !has) {
      SetLabel(&out, m.name, m.value);
    } else {
      empty.push_back(m.name);
    }
  }
  for (const std::string& name : empty) SetLabel(&out, name, "");
  return out;
}

// Go's strconv.ParseFloat for an `le` label value.
bool ParseGoFloat(const std::string& s, double* out) {
  if (s.empty() || std::isspace(static_cast<unsigned char>(s[0]))) return false;
  std::string lower;
  for (char c : s) lower.push_back(static_cast<char>(std::tolower(static_cast<unsigned char>(c))));
  const std::string body = (lower[0] == '+' || lower[0] == '-') ? lower.substr(1) : lower;
  if (body == "inf" || body == "infinity") {
    *out = lower[0] == '-' ? -kInf : kInf;
    return true;
  }
  if (body == "nan") {
    *out = kNaN;
    return true;
  }
  if (body.rfind("0x", 0) == 0 && body.find('p') == std::string::npos) return false;
  char* end = nullptr;
  *out = std::strtod(s.c_str(), &end);
  return end == s.c_str() + s.size();
}

struct Bucket {
  double upper;
  double count;
};

double BucketQuantile(double q, std::vector<Bucket> buckets) {
  if (std::isnan(q)) return kNaN;
  if (q < 0) return -kInf;
  if (q > 1) return kInf;
  std::sort(buckets.begin(), buckets.end(),
            [](const Bucket& a, const Bucket& b) { return a.upper < b.upper; });
  if (!std::isinf(buckets.back().upper) || buckets.back().upper < 0) return kNaN;
  // Coalesce buckets with the same bound.
  std::vector<Bucket> merged;
  for (const Bucket& b : buckets) {
    if (!merged.empty() && merged.back().upper == b.upper) {
      merged.back().count += b.count;
    } else {
      merged.push_back(b);
    }
  }
  double max = -kInf;
  for (Bucket& b : merged) {
    if (b.count > max) {
      max = b.count;
    } else if (b.count < max) {
      b.count = max;
    }
  }
  if (merged.size() < 2) return kNaN;
  const double observations = merged.back().count;
  if (observations == 0) return kNaN;
  double rank = q * observations;
  size_t b = 0;
  while (b < merged.size() - 1 && !(merged[b].count >= rank)) ++b;
  if (b == merged.size() - 1) return merged[merged.size() - 2].upper;
  if (b == 0 && merged[0].upper <= 0) return merged[0].upper;
  double start = 0;
  const double end = merged[b].upper;
  double count = merged[b].count;
  if (b > 0) {
    start = merged[b - 1].upper;
    count -= merged[b - 1].count;
    rank -= merged[b - 1].count;
  }
  return start + (end - start) * (rank / count);
}

// Go's Regexp.ExpandString over RE2's submatches.
std::string Expand(const std::string& tmpl, const RE2& re,
                   const std::vector<re2::StringPiece>& groups) {
  std::string out;
  const std::map<std::string, int>& names = re.NamedCapturingGroups();
  for (size_t i = 0; i < tmpl.size(); ++i) {
    if (tmpl[i] != '$' || i + 1 >= tmpl.size()) {
      out.push_back(tmpl[i]);
      continue;
    }
    if (tmpl[i + 1] == '$') {
      out.push_back('$');
      ++i;
      continue;
    }
    const bool brace = tmpl[i + 1] == '{';
    size_t j = i + (brace ? 2 : 1);
    const size_t name_start = j;
    while (j < tmpl.size() && (std::isalnum(static_cast<unsigned char>(tmpl[j])) || tmpl[j] == '_'))
      ++j;
    const std::string name = tmpl.substr(name_start, j - name_start);
    if (name.empty() || (brace && (j >= tmpl.size() || tmpl[j] != '}'))) {
      out.push_back('$');  // malformed: the $ is text
      continue;
    }
    const size_t next = brace ? j + 1 : j;
    int index = -1;
    if (std::all_of(name.begin(), name.end(), [](char c) { return c >= '0' && c <= '9'; })) {
      index = name.size() > 8 ? -1 : std::atoi(name.c_str());
    } else {
      auto it = names.find(name);
      if (it != names.end()) index = it->second;
    }
    if (index >= 0 && static_cast<size_t>(index) < groups.size() &&
        groups[static_cast<size_t>(index)].data() != nullptr) {
      out.append(groups[static_cast<size_t>(index)].data(),
                 groups[static_cast<size_t>(index)].size());
    }
    i = next - 1;
  }
  return out;
}

}  // namespace

absl::StatusOr<Value> Evaluator::EvalRangeFunction(const Expr& e, const StepRange& r) {
  const absl::string_view name = e.function->name;
  size_t matrix_arg = 0;
  while (e.function->arg_types[matrix_arg] != ValueType::kMatrix) ++matrix_arg;
  std::vector<Value> scalars(e.args.size());
  for (size_t a = 0; a < e.args.size(); ++a) {
    if (a == matrix_arg) continue;
    absl::StatusOr<Value> v = Eval(*e.args[a], r);
    if (!v.ok()) return v.status();
    scalars[a] = *std::move(v);
  }
  absl::StatusOr<RangeInput> input = EvalRange(*e.args[matrix_arg], r);
  if (!input.ok()) return input.status();
  const int64_t steps = r.Steps();
  const bool keep_name = name == "last_over_time";
  std::vector<StepSeries> result;
  for (Series& series : input->series) {
    StepSeries out{keep_name ? series.labels : DropMetricName(series.labels), {}};
    const std::vector<Sample>& s = series.samples;
    size_t lo = 0, hi = 0;
    for (int64_t i = 0; i < steps; ++i) {
      absl::Status tick = Tick();
      if (!tick.ok()) return tick;
      const int64_t t = r.Time(i);
      const int64_t end = input->WindowEnd(t);
      const int64_t start = end - input->range_ms;
      while (hi < s.size() && s[hi].t_ms <= end) ++hi;
      while (lo < hi && s[lo].t_ms < start) ++lo;
      if (lo >= hi) continue;
      const Window w(s.data() + lo, hi - lo);
      std::optional<double> v;
      if (name == "rate" || name == "increase" || name == "delta") {
        v = ExtrapolatedRate(w, start, end, input->range_ms, name != "delta", name == "rate");
      } else if (name == "irate" || name == "idelta") {
        v = InstantValue(w, name == "irate");
      } else if (name == "deriv") {
        if (w.size() >= 2) v = LinearRegression(w, w[0].t_ms).first;
      } else if (name == "predict_linear") {
        if (w.size() >= 2) {
          auto [slope, intercept] = LinearRegression(w, t);
          v = slope * scalars[1].scalar[static_cast<size_t>(i)] + intercept;
        }
      } else if (name == "holt_winters") {
        const double sf = scalars[1].scalar[static_cast<size_t>(i)];
        const double tf = scalars[2].scalar[static_cast<size_t>(i)];
        if (!(sf > 0 && sf < 1)) {
          return absl::FailedPreconditionError(
              absl::StrCat("invalid smoothing factor. Expected: 0 < sf < 1, got: ", sf));
        }
        if (!(tf > 0 && tf < 1)) {
          return absl::FailedPreconditionError(
              absl::StrCat("invalid trend factor. Expected: 0 < tf < 1, got: ", tf));
        }
        if (w.size() >= 2) {
          double s0 = 0, s1 = w[0].v, b = w[1].v - w[0].v;
          for (size_t k = 1; k < w.size(); ++k) {
            const double x = sf * w[k].v;
            if (k > 1) b = tf * (s1 - s0) + (1 - tf) * b;
            const double y = (1 - sf) * (s1 + b);
            s0 = s1;
            s1 = x + y;
          }
          v = s1;
        }
      } else if (name == "resets" || name == "changes") {
        int n = 0;
        for (size_t k = 1; k < w.size(); ++k) {
          const double prev = w[k - 1].v, cur = w[k].v;
          if (name == "resets" ? cur < prev
                               : (cur != prev && !(std::isnan(cur) && std::isnan(prev))))
            ++n;
        }
        v = n;
      } else if (name == "avg_over_time") {
        double mean = 0, count = 0;
        for (const Sample& x : w) {
          count += 1;
          if (std::isinf(mean)) {
            if (std::isinf(x.v) && (mean > 0) == (x.v > 0)) continue;
            if (!std::isinf(x.v) && !std::isnan(x.v)) continue;
          }
          mean += x.v / count - mean / count;
        }
        v = mean;
      } else if (name == "sum_over_time") {
        double sum = 0;
        for (const Sample& x : w) sum += x.v;
        v = sum;
      } else if (name == "count_over_time") {
        v = static_cast<double>(w.size());
      } else if (name == "min_over_time" || name == "max_over_time") {
        double m = w[0].v;
        for (const Sample& x : w) {
          if (name == "max_over_time" ? (x.v > m || std::isnan(m)) : (x.v < m || std::isnan(m)))
            m = x.v;
        }
        v = m;
      } else if (name == "stddev_over_time" || name == "stdvar_over_time") {
        double count = 0, mean = 0, c_mean = 0, aux = 0, c_aux = 0;
        for (const Sample& x : w) {
          count += 1;
          const double delta = x.v - (mean + c_mean);
          std::tie(mean, c_mean) = KahanInc(delta / count, mean, c_mean);
          std::tie(aux, c_aux) = KahanInc(delta * (x.v - (mean + c_mean)), aux, c_aux);
        }
        v = (aux + c_aux) / count;
        if (name == "stddev_over_time") v = std::sqrt(*v);
      } else if (name == "quantile_over_time") {
        std::vector<double> values;
        for (const Sample& x : w) values.push_back(x.v);
        v = Quantile(scalars[0].scalar[static_cast<size_t>(i)], std::move(values));
      } else if (name == "last_over_time") {
        v = w.back().v;
      } else if (name == "present_over_time" || name == "absent_over_time") {
        v = 1;
      } else {
        return absl::UnimplementedError(absl::StrCat("function ", name, " is not implemented"));
      }
      if (v.has_value()) out.points.push_back(Point{t, *v});
    }
    absl::Status counted = AddPoints(static_cast<int64_t>(out.points.size()));
    if (!counted.ok()) return counted;
    if (!out.points.empty()) result.push_back(std::move(out));
  }
  Value value;
  value.type = ValueType::kVector;
  if (name == "absent_over_time") {
    std::vector<bool> found(static_cast<size_t>(steps), false);
    for (const StepSeries& s : result) {
      for (const Point& p : s.points) found[static_cast<size_t>(r.Index(p.t_ms))] = true;
    }
    StepSeries absent{AbsentLabels(*e.args[0]), {}};
    for (int64_t i = 0; i < steps; ++i) {
      if (!found[static_cast<size_t>(i)]) absent.points.push_back(Point{r.Time(i), 1});
    }
    if (!absent.points.empty()) value.series.push_back(std::move(absent));
    return value;
  }
  absl::StatusOr<std::vector<StepSeries>> finished = Finish(std::move(result));
  if (!finished.ok()) return finished.status();
  value.series = *std::move(finished);
  return value;
}

absl::StatusOr<Value> Evaluator::EvalCall(const Expr& e, const StepRange& r) {
  const absl::string_view name = e.function->name;
  for (ValueType t : e.function->arg_types) {
    if (t == ValueType::kMatrix) return EvalRangeFunction(e, r);
  }
  const int64_t steps = r.Steps();
  Value out;
  out.type = ValueType::kVector;
  if (name == "time" || name == "pi") {
    out.type = ValueType::kScalar;
    for (int64_t i = 0; i < steps; ++i) {
      out.scalar.push_back(name == "pi" ? std::numbers::pi : static_cast<double>(r.Time(i)) / 1000);
    }
    return out;
  }
  if (IsTimeFunction(name) && e.args.empty()) {
    StepSeries s;
    for (int64_t i = 0; i < steps; ++i) {
      s.points.push_back(
          Point{r.Time(i), TimeFunction(name, static_cast<double>(r.Time(i)) / 1000)});
    }
    out.series.push_back(std::move(s));
    return out;
  }
  // timestamp() of a selector gives its samples' times, not the steps.
  if (name == "timestamp") {
    const Expr* arg = e.args[0].get();
    while (arg->kind == Expr::Kind::kParen) arg = arg->lhs.get();
    absl::StatusOr<Value> v = arg->kind == Expr::Kind::kVectorSelector
                                  ? EvalVectorSelector(*arg, r, true)
                                  : Eval(*arg, r);
    if (!v.ok()) return v;
    for (StepSeries& s : v->series) {
      s.labels = DropMetricName(std::move(s.labels));
      if (arg->kind != Expr::Kind::kVectorSelector) {
        for (Point& p : s.points) p.v = static_cast<double>(p.t_ms) / 1000;
      }
    }
    absl::StatusOr<std::vector<StepSeries>> finished = Finish(std::move(v->series));
    if (!finished.ok()) return finished.status();
    out.series = *std::move(finished);
    return out;
  }
  std::vector<Value> args;
  for (const auto& a : e.args) {
    absl::StatusOr<Value> v = Eval(*a, r);
    if (!v.ok()) return v.status();
    args.push_back(*std::move(v));
  }
  if (name == "vector") {
    StepSeries s;
    for (int64_t i = 0; i < steps; ++i)
      s.points.push_back(Point{r.Time(i), args[0].scalar[static_cast<size_t>(i)]});
    out.series.push_back(std::move(s));
    return out;
  }
  if (name == "scalar") {
    out.type = ValueType::kScalar;
    out.scalar.assign(static_cast<size_t>(steps), kNaN);
    std::vector<int> count(static_cast<size_t>(steps), 0);
    for (const StepSeries& s : args[0].series) {
      for (const Point& p : s.points) {
        const auto i = static_cast<size_t>(r.Index(p.t_ms));
        ++count[i];
        out.scalar[i] = count[i] == 1 ? p.v : kNaN;
      }
    }
    return out;
  }
  if (name == "absent") {
    std::vector<bool> found(static_cast<size_t>(steps), false);
    for (const StepSeries& s : args[0].series) {
      for (const Point& p : s.points) found[static_cast<size_t>(r.Index(p.t_ms))] = true;
    }
    StepSeries s{AbsentLabels(*e.args[0]), {}};
    for (int64_t i = 0; i < steps; ++i) {
      if (!found[static_cast<size_t>(i)]) s.points.push_back(Point{r.Time(i), 1});
    }
    if (!s.points.empty()) out.series.push_back(std::move(s));
    return out;
  }
  size_t vector_arg = 0;
  while (args[vector_arg].type != ValueType::kVector) ++vector_arg;
  std::vector<StepSeries>& in = args[vector_arg].series;
  if (name == "sort" || name == "sort_desc") {
    if (steps == 1) {
      const bool desc = name == "sort_desc";
      std::stable_sort(in.begin(), in.end(), [desc](const StepSeries& a, const StepSeries& b) {
        const double x = a.points[0].v, y = b.points[0].v;
        if (std::isnan(x)) return false;
        if (std::isnan(y)) return true;
        return desc ? x > y : x < y;
      });
    }
    out.series = std::move(in);
    return out;
  }
  if (name == "histogram_quantile") {
    absl::flat_hash_map<std::string, int> group_ids;
    std::vector<Labels> groups;
    std::vector<std::vector<std::vector<Bucket>>> buckets;  // [group][step]
    for (const StepSeries& s : in) {
      double upper;
      if (!ParseGoFloat(LabelValue(s.labels, "le"), &upper)) continue;
      // Grouped by all labels but `le`; the answer drops the name too, so
      // two histograms differing only in name collide (an error).
      Labels labels = s.labels;
      SetLabel(&labels, "le", "");
      auto [it, inserted] =
          group_ids.try_emplace(LabelsKey(labels), static_cast<int>(groups.size()));
      if (inserted) {
        groups.push_back(DropMetricName(std::move(labels)));
        buckets.emplace_back(static_cast<size_t>(steps));
      }
      for (const Point& p : s.points) {
        buckets[static_cast<size_t>(it->second)][static_cast<size_t>(r.Index(p.t_ms))].push_back(
            Bucket{upper, p.v});
      }
    }
    for (size_t g = 0; g < groups.size(); ++g) {
      StepSeries s{groups[g], {}};
      for (int64_t i = 0; i < steps; ++i) {
        std::vector<Bucket>& b = buckets[g][static_cast<size_t>(i)];
        if (b.empty()) continue;
        s.points.push_back(
            Point{r.Time(i), BucketQuantile(args[0].scalar[static_cast<size_t>(i)], std::move(b))});
      }
      out.series.push_back(std::move(s));
    }
    absl::StatusOr<std::vector<StepSeries>> finished = Finish(std::move(out.series));
    if (!finished.ok()) return finished.status();
    out.series = *std::move(finished);
    return out;
  }
  if (name == "label_replace" || name == "label_join") {
    const std::string& dst = args[1].text;
    const bool replace = name == "label_replace";
    if (!IsValidLabelName(dst)) {
      return absl::FailedPreconditionError(
          absl::StrCat("invalid destination label name in ", name, "(): ", dst));
    }
    std::unique_ptr<RE2> re;
    if (replace) {
      re = std::make_unique<RE2>("^(?:" + args[4].text + ")$", RE2::Quiet);
      if (!re->ok()) {
        return absl::FailedPreconditionError(
            absl::StrCat("invalid regular expression in label_replace(): ", args[4].text));
      }
    } else {
      for (size_t a = 3; a < args.size(); ++a) {
        if (!IsValidLabelName(args[a].text)) {
          return absl::FailedPreconditionError(
              absl::StrCat("invalid source label name in label_join(): ", args[a].text));
        }
      }
    }
    for (StepSeries& s : in) {
      if (replace) {
        const std::string src = LabelValue(s.labels, args[3].text);
        std::vector<re2::StringPiece> groups(static_cast<size_t>(re->NumberOfCapturingGroups()) +
                                             1);
        if (re->Match(src, 0, src.size(), RE2::ANCHOR_BOTH, groups.data(),
                      static_cast<int>(groups.size()))) {
          SetLabel(&s.labels, dst, Expand(args[2].text, *re, groups));
        }
      } else {
        std::vector<std::string> values;
        for (size_t a = 3; a < args.size(); ++a)
          values.push_back(LabelValue(s.labels, args[a].text));
        SetLabel(&s.labels, dst, absl::StrJoin(values, args[2].text));
      }
    }
    absl::StatusOr<std::vector<StepSeries>> finished = Finish(std::move(in));
    if (!finished.ok()) return finished.status();
    out.series = *std::move(finished);
    return out;
  }
  if (name == "histogram_count" || name == "histogram_sum" || name == "histogram_fraction") {
    return out;  // native histograms only; strata has none
  }
  double (*math)(double) = nullptr;
  const bool is_math = MathFunction(name, &math);
  for (StepSeries& s : in) {
    s.labels = DropMetricName(std::move(s.labels));
    std::vector<Point> kept;
    kept.reserve(s.points.size());
    for (const Point& p : s.points) {
      const auto i = static_cast<size_t>(r.Index(p.t_ms));
      double v = p.v;
      if (is_math) {
        v = math(v);
      } else if (IsTimeFunction(name)) {
        v = TimeFunction(name, v);
      } else if (name == "clamp") {
        const double lo = args[1].scalar[i], hi = args[2].scalar[i];
        if (hi < lo) continue;
        v = GoMax(lo, GoMin(hi, v));
      } else if (name == "clamp_max") {
        v = GoMin(args[1].scalar[i], v);
      } else if (name == "clamp_min") {
        v = GoMax(args[1].scalar[i], v);
      } else if (name == "round") {
        const double to_nearest = args.size() > 1 ? args[1].scalar[i] : 1;
        const double inverse = 1.0 / to_nearest;
        v = std::floor(v * inverse + 0.5) / inverse;
      } else {
        return absl::UnimplementedError(absl::StrCat("function ", name, " is not implemented"));
      }
      kept.push_back(Point{p.t_ms, v});
    }
    s.points = std::move(kept);
  }
  absl::StatusOr<std::vector<StepSeries>> finished = Finish(std::move(in));
  if (!finished.ok()) return finished.status();
  out.series = *std::move(finished);
  return out;
}

}  // namespace strata::compat::promql
