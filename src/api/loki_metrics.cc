// RunLokiMetricQuery (loki_query.h): LogQL metric queries.

#include <algorithm>
#include <charconv>
#include <cmath>
#include <limits>
#include <map>
#include <numeric>
#include <optional>
#include <set>
#include <string_view>
#include <utility>

#include "absl/strings/str_cat.h"
#include "api/loki_logs.h"
#include "api/loki_query.h"
#include "common/status_macros.h"
#include "compat/logql/check.h"
#include "compat/logql/pipeline.h"
#include "re2/re2.h"
#include "storage/table/key_presence.h"

namespace strata::api {
namespace {

using compat::logql::BinaryOp;
using compat::logql::Expr;
using compat::logql::Labels;
using compat::logql::LogLine;
using compat::logql::UnwrapConversion;

// One series' value at each step (nullopt: no value there).
using Points = std::vector<std::optional<double>>;

struct Value {
  bool scalar = false;
  Points scalar_points;             // scalar: one per step
  std::map<Labels, Points> series;  // vector
};

struct Context {
  query::QueryPool* pool = nullptr;
  const storage::Snapshot* snapshot = nullptr;
  const std::string* data_dir = nullptr;
  CallOptions call;
  std::chrono::steady_clock::time_point began;
  std::vector<int64_t> steps;  // unix ns
  LokiQueryStats stats;
};

absl::Status TooManySeries() {
  return absl::InvalidArgumentError(
      absl::StrCat("maximum of series (", kLokiSeriesMax, ") reached for a single query"));
}

bool IsLinear(std::string_view function) {
  return function == "count_over_time" || function == "rate" || function == "bytes_over_time" ||
         function == "bytes_rate" || function == "sum_over_time";
}

Labels Grouped(const Labels& labels, const compat::logql::Grouping& grouping) {
  Labels out;
  if (grouping.without) {
    out = labels;
    for (const std::string& name : grouping.labels) out.erase(name);
    return out;
  }
  for (const std::string& name : grouping.labels) {
    auto it = labels.find(name);
    if (it != labels.end() && !it->second.empty()) out[name] = it->second;
  }
  return out;
}

// The unwrapped value of `line`, or nullopt with __error__ set.
std::optional<double> Unwrapped(const compat::logql::Unwrap& unwrap, LogLine* line) {
  const std::string* text = line->Find(unwrap.label);
  if (text == nullptr) return std::nullopt;
  std::optional<double> value;
  switch (unwrap.conversion) {
    case UnwrapConversion::kNone: {
      char* end = nullptr;
      const double v = std::strtod(text->c_str(), &end);
      if (!text->empty() && end == text->c_str() + text->size()) value = v;
      break;
    }
    case UnwrapConversion::kBytes:
      value = compat::logql::ParseHumanBytes(*text);
      break;
    case UnwrapConversion::kDuration:
    case UnwrapConversion::kDurationSeconds:
      value = compat::logql::ParseGoDurationSeconds(*text);
      break;
  }
  return value;
}

double Quantile(double q, std::vector<double> values) {
  if (values.empty()) return std::nan("");
  if (q < 0) return -std::numeric_limits<double>::infinity();
  if (q > 1) return std::numeric_limits<double>::infinity();
  std::sort(values.begin(), values.end());
  const double rank = q * static_cast<double>(values.size() - 1);
  const size_t lower = static_cast<size_t>(std::floor(rank));
  const size_t upper = std::min(values.size() - 1, lower + 1);
  const double weight = rank - std::floor(rank);
  return values[lower] * (1 - weight) + values[upper] * weight;
}

// The value of range function `expr` over the samples of one window.
double RangeValue(const Expr& expr, const std::vector<std::pair<int64_t, double>>& samples,
                  size_t begin, size_t end) {
  const std::string& f = expr.function;
  const double seconds = static_cast<double>(expr.range_ns) / 1e9;
  const double n = static_cast<double>(end - begin);
  double sum = 0;
  for (size_t i = begin; i < end; ++i) sum += samples[i].second;
  if (f == "count_over_time") return n;
  if (f == "rate") return (expr.unwrap.has_value() ? sum : n) / seconds;
  if (f == "bytes_over_time" || f == "sum_over_time") return sum;
  if (f == "bytes_rate") return sum / seconds;
  if (f == "avg_over_time") return sum / n;
  if (f == "first_over_time") return samples[begin].second;
  if (f == "last_over_time") return samples[end - 1].second;
  if (f == "min_over_time" || f == "max_over_time") {
    double best = samples[begin].second;
    for (size_t i = begin; i < end; ++i) {
      best = f == "min_over_time" ? std::min(best, samples[i].second)
                                  : std::max(best, samples[i].second);
    }
    return best;
  }
  if (f == "stddev_over_time" || f == "stdvar_over_time") {
    const double mean = sum / n;
    double squares = 0;
    for (size_t i = begin; i < end; ++i) {
      squares += (samples[i].second - mean) * (samples[i].second - mean);
    }
    const double variance = squares / n;
    return f == "stdvar_over_time" ? variance : std::sqrt(variance);
  }
  std::vector<double> values;
  for (size_t i = begin; i < end; ++i) values.push_back(samples[i].second);
  return Quantile(expr.parameter.value_or(0), std::move(values));
}

absl::StatusOr<Value> EvalRange(Context& ctx, const Expr& expr,
                                const compat::logql::Grouping* sum_grouping) {
  if (expr.function == "rate_counter") {
    return absl::UnimplementedError("rate_counter is not supported by strata");
  }
  const int64_t first = ctx.steps.front() - expr.offset_ns;
  const int64_t last = ctx.steps.back() - expr.offset_ns;
  LokiScan scan;
  scan.matchers = &expr.log.matchers;
  scan.stages = &expr.log.stages;
  scan.start = std::max<int64_t>(0, first - expr.range_ns + 1);
  scan.end = last + 1;
  scan.forward = true;
  // Samples per series, in time order (the scan is forward).
  std::map<Labels, std::vector<std::pair<int64_t, double>>> samples;
  absl::Status failure;
  LokiScanStats scan_stats;
  const absl::Status scanned = ScanLoki(
      *ctx.pool, *ctx.snapshot, *ctx.data_dir, scan, ctx.call,
      [&](LogLine&& line) {
        double value = 1;
        if (expr.function == "bytes_over_time" || expr.function == "bytes_rate") {
          value = static_cast<double>(line.line.size());
        }
        if (expr.unwrap.has_value()) {
          std::optional<double> unwrapped = Unwrapped(*expr.unwrap, &line);
          if (!unwrapped.has_value()) {
            if (line.Find(expr.unwrap->label) == nullptr) return true;  // no such label
            line.parsed.emplace("__error__", "SampleExtractionErr");
          }
          for (const auto& filter : expr.unwrap->filters) {
            if (!compat::logql::PassesLabelFilter(*filter, &line)) return true;
          }
          if (line.parsed.contains("__error__")) {
            failure = absl::InvalidArgumentError(
                "pipeline error: a line could not be unwrapped; add | __error__=\"\" to drop "
                "such lines");
            return false;
          }
          value = *unwrapped;
        }
        if (line.parsed.contains("__error__")) {
          failure = absl::InvalidArgumentError(absl::StrCat(
              "pipeline error: ", line.parsed["__error__"], ": ", line.parsed["__error_details__"],
              "; add | __error__=\"\" to drop such lines"));
          return false;
        }
        Labels key = LokiAllLabels(line);
        key.erase("__error__");
        key.erase("__error_details__");
        if (sum_grouping != nullptr) key = Grouped(key, *sum_grouping);
        if (expr.grouping.present) key = Grouped(key, expr.grouping);
        auto [it, inserted] = samples.try_emplace(std::move(key));
        if (inserted && samples.size() > kLokiSeriesMax) {
          failure = TooManySeries();
          return false;
        }
        it->second.emplace_back(line.time, value);
        return true;
      },
      &scan_stats);
  ctx.stats.rows_read += scan_stats.rows_read;
  ctx.stats.queries += scan_stats.queries;
  STRATA_RETURN_IF_ERROR(scanned);
  STRATA_RETURN_IF_ERROR(failure);
  Value out;
  for (auto& [labels, list] : samples) {
    Points points(ctx.steps.size());
    size_t begin = 0;
    size_t end = 0;
    for (size_t s = 0; s < ctx.steps.size(); ++s) {
      const int64_t hi = ctx.steps[s] - expr.offset_ns;  // inclusive
      const int64_t lo = hi - expr.range_ns;             // exclusive
      while (end < list.size() && list[end].first <= hi) ++end;
      while (begin < end && list[begin].first <= lo) ++begin;
      if (end > begin) points[s] = RangeValue(expr, list, begin, end);
    }
    out.series.emplace(labels, std::move(points));
  }
  if (expr.function == "absent_over_time") {
    Labels labels;
    for (const compat::logql::Matcher& m : expr.log.matchers) {
      if (m.op == compat::logql::MatchOp::kEq) labels[m.name] = m.value;
    }
    Points points(ctx.steps.size());
    for (size_t s = 0; s < ctx.steps.size(); ++s) {
      bool any = false;
      for (const auto& [l, p] : out.series) any = any || p[s].has_value();
      if (!any) points[s] = 1;
    }
    Value absent;
    absent.series.emplace(std::move(labels), std::move(points));
    return absent;
  }
  return out;
}

absl::StatusOr<Value> Eval(Context& ctx, const Expr& expr);

// The SQL of label `name` for the grouped counts: a stream label,
// detected_level, or `level` (an attribute of that name, as the mapping
// takes it: resource, then scope, then record); nullopt for other labels.
std::optional<std::string> GroupLabelSql(const std::string& name) {
  if (IsLokiStreamLabel(name)) return LokiStreamLabelSql(name);
  if (name == "detected_level") {
    return std::string(
        "CASE WHEN severity_number BETWEEN 1 AND 24 THEN ['trace', 'debug', 'info', 'warn', "
        "'error', 'fatal'][(severity_number - 1) // 4 + 1] WHEN coalesce(severity_text, '') <> "
        "'' THEN (CASE lower(severity_text) WHEN 'warning' THEN 'warn' WHEN 'err' THEN 'error' "
        "ELSE lower(severity_text) END) ELSE 'unknown' END");
  }
  if (name == "level") {
    std::string sql = "coalesce(";
    for (const char* family : {"resource_attr", "scope_attr", "attr"}) {
      const std::string at = absl::StrCat("[list_position(", family, "_keys, 'level')]");
      absl::StrAppend(&sql, family, "_str", at, ", CAST(", family, "_int", at, " AS VARCHAR), ");
    }
    return absl::StrCat(sql, "'')");
  }
  return std::nullopt;
}

// Whether `sum by (...) (inner)` can be counted in SQL alone: a linear
// range aggregation without unwrap whose stages are line filters ScanLoki
// runs in SQL and drops of labels the grouping does not use, grouped by
// labels GroupLabelSql knows.
bool CountableInSql(const Expr& sum, const Expr& inner) {
  if (sum.grouping.without || inner.unwrap.has_value() || inner.function == "sum_over_time") {
    return false;
  }
  for (const std::string& name : sum.grouping.labels) {
    if (!GroupLabelSql(name).has_value()) return false;
  }
  for (const compat::logql::Stage& stage : inner.log.stages) {
    if (stage.kind == compat::logql::Stage::Kind::kLineFilter) {
      if (stage.line_filter.ip || stage.line_filter.op == compat::logql::LineFilterOp::kPattern ||
          stage.line_filter.op == compat::logql::LineFilterOp::kNotPattern) {
        return false;
      }
      continue;
    }
    if (stage.kind != compat::logql::Stage::Kind::kDrop) return false;
    for (const compat::logql::LabelSelection& selection : stage.selections) {
      if (std::find(sum.grouping.labels.begin(), sum.grouping.labels.end(), selection.name) !=
          sum.grouping.labels.end()) {
        return false;
      }
    }
  }
  return true;
}

// `sum by (...) (count_over_time|rate|bytes_over_time|bytes_rate(...))`
// in SQL: counts (or bytes) per group and per bucket of gcd(step, range),
// buckets aligned so that every step's window is whole buckets, summed
// here into the windows. The answer's size is groups x buckets, whatever
// the number of records.
absl::StatusOr<Value> EvalGroupedCountsInSql(Context& ctx, const Expr& sum, const Expr& inner) {
  const int64_t step = ctx.steps.size() > 1 ? ctx.steps[1] - ctx.steps[0] : inner.range_ns;
  const int64_t bucket = std::gcd(step, inner.range_ns);
  const int64_t low = ctx.steps.front() - inner.offset_ns - inner.range_ns;  // exclusive
  const int64_t high = ctx.steps.back() - inner.offset_ns;                   // inclusive
  const int64_t buckets = (high - low + bucket - 1) / bucket;
  if (buckets > 1'000'000) {
    return absl::InvalidArgumentError(
        "the range and step are too fine for the window; use a coarser step");
  }
  const bool bytes = inner.function == "bytes_over_time" || inner.function == "bytes_rate";
  // The counts of the records of `part`'s log files; `level_absent`: no
  // file of the part holds a `level` key, so the label is '' without
  // reading the key lists.
  auto count = [&](const query::ViewFiles& part,
                   bool level_absent) -> absl::StatusOr<query::QueryResult> {
    std::vector<query::QueryParam> params;
    std::string select = "SELECT ";
    for (const std::string& name : sum.grouping.labels) {
      absl::StrAppend(&select, level_absent && name == "level" ? "''" : *GroupLabelSql(name), ", ");
    }
    const std::string low_param = internal::NextParam(params);
    params.emplace_back(static_cast<uint64_t>(std::max<int64_t>(0, low)));
    absl::StrAppend(
        &select, "(time_unix_nano - ", low_param, " - 1) // ", bucket, " AS b, ",
        bytes
            ? "sum(strlen(CASE WHEN body_type = 1 THEN body_str ELSE coalesce(body_text, '') END))"
            : "count(*)",
        " FROM logs WHERE time_unix_nano > ", low_param);
    // Parameters are numbered in the order they are pushed: one step at a
    // time.
    const std::string high_param = internal::NextParam(params);
    params.emplace_back(static_cast<uint64_t>(std::max<int64_t>(0, high)));
    const std::string matchers = LokiMatchersSql(inner.log.matchers, &params);
    const std::string line_filters = LokiLineFiltersSql(inner.log.stages, &params);
    absl::StrAppend(&select, " AND time_unix_nano <= ", high_param, " AND ", matchers, line_filters,
                    " GROUP BY ALL");
    const size_t max_rows =
        kLokiSeriesMax * static_cast<size_t>(std::min<int64_t>(buckets, 100'000));
    ++ctx.stats.queries;
    return ctx.pool->Run(part, select,
                         internal::Options(internal::RemainingCall(ctx.call, ctx.began),
                                           std::move(params), max_rows));
  };
  const query::ViewFiles files =
      ViewFilesFor(*ctx.snapshot, *ctx.data_dir, std::nullopt,
                   query::EventWindow{static_cast<uint64_t>(std::max<int64_t>(0, low)),
                                      static_cast<uint64_t>(std::max<int64_t>(0, high + 1))});
  Value out;
  if (files.logs.empty()) return out;
  query::QueryResult result;
  if (std::find(sum.grouping.labels.begin(), sum.grouping.labels.end(), "level") ==
      sum.grouping.labels.end()) {
    STRATA_ASSIGN_OR_RETURN(result, count(files, false));
  } else {
    // Grafana's volume query groups by `level`, which costs three key
    // lists per record: the files that cannot hold the key skip them.
    static constexpr std::string_view kKeyLists[] = {"resource_attr_keys", "scope_attr_keys",
                                                     "attr_keys"};
    query::ViewFiles with = files;
    query::ViewFiles without = files;
    with.logs.clear();
    without.logs.clear();
    for (const std::string& path : files.logs) {
      (storage::FileMayHoldKey(path, kKeyLists, "level") ? with : without).logs.push_back(path);
    }
    for (const auto& [part, level_absent] :
         {std::pair<const query::ViewFiles*, bool>{&with, false}, {&without, true}}) {
      if (part->logs.empty()) continue;
      STRATA_ASSIGN_OR_RETURN(query::QueryResult rows, count(*part, level_absent));
      if (result.rows.empty()) {
        result = std::move(rows);
      } else {
        for (auto& row : rows.rows) result.rows.push_back(std::move(row));
      }
    }
  }
  const size_t labels = sum.grouping.labels.size();
  STRATA_RETURN_IF_ERROR(internal::CheckShape(result, labels + 2, "Loki grouped counts"));
  std::map<Labels, std::map<int64_t, double>> counts;
  for (const auto& row : result.rows) {
    Labels key;
    for (size_t i = 0; i < labels; ++i) {
      if (row[i].has_value() && !row[i]->empty()) key[sum.grouping.labels[i]] = *row[i];
    }
    STRATA_ASSIGN_OR_RETURN(const int64_t b, internal::CellInt(row[labels]));
    STRATA_ASSIGN_OR_RETURN(const double n, internal::CellDouble(row[labels + 1]));
    counts[std::move(key)][b] += n;
    ctx.stats.rows_read += static_cast<int64_t>(n);
  }
  if (counts.size() > kLokiSeriesMax) return TooManySeries();
  const double seconds = static_cast<double>(inner.range_ns) / 1e9;
  const bool rate = inner.function == "rate" || inner.function == "bytes_rate";
  for (const auto& [key, by_bucket] : counts) {
    Points points(ctx.steps.size());
    for (size_t s = 0; s < ctx.steps.size(); ++s) {
      const int64_t first = (ctx.steps[s] - ctx.steps[0]) / bucket;
      const int64_t last = first + inner.range_ns / bucket;  // exclusive
      double total = 0;
      bool any = false;
      for (auto it = by_bucket.lower_bound(first); it != by_bucket.end() && it->first < last;
           ++it) {
        total += it->second;
        any = true;
      }
      if (any) points[s] = rate ? total / seconds : total;
    }
    out.series.emplace(key, std::move(points));
  }
  return out;
}

absl::StatusOr<Value> EvalVectorAggregation(Context& ctx, const Expr& expr) {
  const Expr& inner = *expr.lhs;
  Value operand;
  if (expr.function == "sum" && expr.grouping.present && inner.kind == Expr::Kind::kRange &&
      IsLinear(inner.function) && !inner.grouping.present && CountableInSql(expr, inner)) {
    STRATA_ASSIGN_OR_RETURN(operand, EvalGroupedCountsInSql(ctx, expr, inner));
  } else if (expr.function == "sum" && expr.grouping.present && inner.kind == Expr::Kind::kRange &&
             IsLinear(inner.function) && !inner.grouping.present) {
    STRATA_ASSIGN_OR_RETURN(operand, EvalRange(ctx, inner, &expr.grouping));
  } else {
    STRATA_ASSIGN_OR_RETURN(operand, Eval(ctx, inner));
  }
  if (operand.scalar) {
    return absl::InvalidArgumentError(absl::StrCat(expr.function, " needs a vector operand"));
  }
  const std::string& f = expr.function;
  Value out;
  const size_t steps = ctx.steps.size();
  if (f == "sort" || f == "sort_desc") return operand;  // order is the answer's, per step
  if (f == "topk" || f == "bottomk") {
    const size_t k = static_cast<size_t>(expr.parameter.value_or(1));
    std::map<Labels, std::vector<const std::pair<const Labels, Points>*>> groups;
    for (const auto& entry : operand.series) {
      groups[Grouped(entry.first, expr.grouping)].push_back(&entry);
    }
    for (const auto& entry : operand.series) out.series.emplace(entry.first, Points(steps));
    for (const auto& [group, members] : groups) {
      for (size_t s = 0; s < steps; ++s) {
        std::vector<std::pair<double, const Labels*>> present;
        for (const auto* m : members) {
          if (m->second[s].has_value()) present.emplace_back(*m->second[s], &m->first);
        }
        std::sort(present.begin(), present.end(), [&](const auto& a, const auto& b) {
          return f == "topk" ? a.first > b.first : a.first < b.first;
        });
        for (size_t i = 0; i < present.size() && i < k; ++i) {
          out.series[*present[i].second][s] = present[i].first;
        }
      }
    }
    std::erase_if(out.series, [](const auto& entry) {
      return std::none_of(entry.second.begin(), entry.second.end(),
                          [](const auto& p) { return p.has_value(); });
    });
    return out;
  }
  std::map<Labels, std::vector<const Points*>> groups;
  for (const auto& [labels, points] : operand.series) {
    Labels key = Grouped(labels, expr.grouping);
    if (!expr.grouping.present) key.clear();
    groups[std::move(key)].push_back(&points);
  }
  for (const auto& [key, members] : groups) {
    Points points(steps);
    for (size_t s = 0; s < steps; ++s) {
      std::vector<double> values;
      for (const Points* p : members) {
        if ((*p)[s].has_value()) values.push_back(*(*p)[s]);
      }
      if (values.empty()) continue;
      double sum = 0;
      for (double v : values) sum += v;
      const double n = static_cast<double>(values.size());
      if (f == "sum") points[s] = sum;
      if (f == "avg") points[s] = sum / n;
      if (f == "count") points[s] = n;
      if (f == "min") points[s] = *std::min_element(values.begin(), values.end());
      if (f == "max") points[s] = *std::max_element(values.begin(), values.end());
      if (f == "stddev" || f == "stdvar") {
        double squares = 0;
        for (double v : values) squares += (v - sum / n) * (v - sum / n);
        points[s] = f == "stdvar" ? squares / n : std::sqrt(squares / n);
      }
    }
    out.series.emplace(key, std::move(points));
  }
  return out;
}

std::optional<double> Apply(BinaryOp op, double a, double b, bool return_bool, bool* keep) {
  *keep = true;
  auto compare = [&](bool result) -> std::optional<double> {
    if (return_bool) return result ? 1.0 : 0.0;
    *keep = result;
    return a;
  };
  switch (op) {
    case BinaryOp::kAdd:
      return a + b;
    case BinaryOp::kSub:
      return a - b;
    case BinaryOp::kMul:
      return a * b;
    case BinaryOp::kDiv:
      return a / b;
    case BinaryOp::kMod:
      return std::fmod(a, b);
    case BinaryOp::kPow:
      return std::pow(a, b);
    case BinaryOp::kEq:
      return compare(a == b);
    case BinaryOp::kNe:
      return compare(a != b);
    case BinaryOp::kGt:
      return compare(a > b);
    case BinaryOp::kGe:
      return compare(a >= b);
    case BinaryOp::kLt:
      return compare(a < b);
    case BinaryOp::kLe:
      return compare(a <= b);
    default:
      return std::nullopt;
  }
}

bool IsComparison(BinaryOp op) {
  return op == BinaryOp::kEq || op == BinaryOp::kNe || op == BinaryOp::kGt || op == BinaryOp::kGe ||
         op == BinaryOp::kLt || op == BinaryOp::kLe;
}

Labels MatchKey(const Labels& labels, const compat::logql::VectorMatching& m) {
  Labels key;
  if (m.on) {
    for (const std::string& name : m.labels) {
      auto it = labels.find(name);
      if (it != labels.end()) key[name] = it->second;
    }
    return key;
  }
  key = labels;
  for (const std::string& name : m.labels) key.erase(name);
  return key;
}

absl::StatusOr<Value> EvalBinary(Context& ctx, const Expr& expr) {
  STRATA_ASSIGN_OR_RETURN(Value lhs, Eval(ctx, *expr.lhs));
  STRATA_ASSIGN_OR_RETURN(Value rhs, Eval(ctx, *expr.rhs));
  const size_t steps = ctx.steps.size();
  const BinaryOp op = expr.op;
  const bool return_bool = expr.matching.return_bool;
  Value out;
  if (lhs.scalar && rhs.scalar) {
    out.scalar = true;
    out.scalar_points.resize(steps);
    for (size_t s = 0; s < steps; ++s) {
      bool keep = true;
      if (lhs.scalar_points[s].has_value() && rhs.scalar_points[s].has_value()) {
        out.scalar_points[s] =
            Apply(op, *lhs.scalar_points[s], *rhs.scalar_points[s], return_bool, &keep);
      }
    }
    return out;
  }
  if (lhs.scalar || rhs.scalar) {
    const Value& vector = lhs.scalar ? rhs : lhs;
    const Value& scalar = lhs.scalar ? lhs : rhs;
    for (const auto& [labels, points] : vector.series) {
      Points result(steps);
      for (size_t s = 0; s < steps; ++s) {
        if (!points[s].has_value() || !scalar.scalar_points[s].has_value()) continue;
        const double a = lhs.scalar ? *scalar.scalar_points[s] : *points[s];
        const double b = lhs.scalar ? *points[s] : *scalar.scalar_points[s];
        bool keep = true;
        std::optional<double> v = Apply(op, a, b, return_bool, &keep);
        // A filtering comparison keeps the vector's own value.
        if (keep && v.has_value()) result[s] = IsComparison(op) && !return_bool ? *points[s] : *v;
      }
      Labels result_labels = labels;
      if (!IsComparison(op) || return_bool) result_labels.erase("__name__");
      out.series.emplace(std::move(result_labels), std::move(result));
    }
    return out;
  }
  // Vector and vector.
  const compat::logql::VectorMatching& m = expr.matching;
  if (op == BinaryOp::kAnd || op == BinaryOp::kUnless || op == BinaryOp::kOr) {
    std::map<Labels, std::vector<bool>> rhs_present;
    for (const auto& [labels, points] : rhs.series) {
      auto& present = rhs_present[MatchKey(labels, m)];
      present.resize(steps);
      for (size_t s = 0; s < steps; ++s) present[s] = present[s] || points[s].has_value();
    }
    std::map<Labels, std::vector<bool>> lhs_present;
    for (const auto& [labels, points] : lhs.series) {
      Points result(steps);
      auto it = rhs_present.find(MatchKey(labels, m));
      auto& mine = lhs_present[MatchKey(labels, m)];
      mine.resize(steps);
      for (size_t s = 0; s < steps; ++s) {
        mine[s] = mine[s] || points[s].has_value();
        const bool other = it != rhs_present.end() && it->second[s];
        if (op == BinaryOp::kAnd ? other : (op == BinaryOp::kUnless ? !other : true)) {
          result[s] = points[s];
        }
      }
      out.series.emplace(labels, std::move(result));
    }
    if (op == BinaryOp::kOr) {
      for (const auto& [labels, points] : rhs.series) {
        auto it = lhs_present.find(MatchKey(labels, m));
        Points result(steps);
        for (size_t s = 0; s < steps; ++s) {
          if (it == lhs_present.end() || !it->second[s]) result[s] = points[s];
        }
        out.series.emplace(labels, std::move(result));
      }
    }
    return out;
  }
  const bool right_many = m.group_left;  // lhs is the "many" side
  const bool left_many = m.group_right;
  const Value& one = right_many ? rhs : lhs;
  const Value& many = right_many ? lhs : rhs;
  std::map<Labels, const std::pair<const Labels, Points>*> one_side;
  for (const auto& entry : one.series) {
    auto [it, inserted] = one_side.emplace(MatchKey(entry.first, m), &entry);
    if (!inserted) {
      return absl::InvalidArgumentError(
          "multiple matches for labels: many-to-one matching must be explicit "
          "(group_left/group_right)");
    }
  }
  std::set<Labels> seen;
  for (const auto& [labels, points] : many.series) {
    auto it = one_side.find(MatchKey(labels, m));
    if (it == one_side.end()) continue;
    const Points& other = it->second->second;
    Labels result_labels;
    if (right_many || left_many) {
      result_labels = labels;
      for (const std::string& name : m.include) {
        auto found = it->second->first.find(name);
        if (found != it->second->first.end()) result_labels[name] = found->second;
      }
    } else {
      result_labels = m.on ? MatchKey(labels, m) : MatchKey(labels, m);
      if (IsComparison(op) && !return_bool) result_labels = labels;
    }
    if (!right_many && !left_many && !seen.insert(MatchKey(labels, m)).second) {
      return absl::InvalidArgumentError(
          "found duplicate series for the match group; many-to-many matching not allowed");
    }
    Points result(steps);
    for (size_t s = 0; s < steps; ++s) {
      if (!points[s].has_value() || !other[s].has_value()) continue;
      const bool many_is_lhs = right_many || (!left_many && &many == &lhs);
      const double a = many_is_lhs ? *points[s] : *other[s];
      const double b = many_is_lhs ? *other[s] : *points[s];
      bool keep = true;
      std::optional<double> v = Apply(op, a, b, return_bool, &keep);
      if (keep && v.has_value()) result[s] = *v;
    }
    out.series.emplace(std::move(result_labels), std::move(result));
  }
  return out;
}

absl::StatusOr<Value> EvalLabelReplace(Context& ctx, const Expr& expr) {
  STRATA_ASSIGN_OR_RETURN(Value operand, Eval(ctx, *expr.lhs));
  const std::string& destination = expr.replace_args[0];
  const std::string& replacement = expr.replace_args[1];
  const std::string& source = expr.replace_args[2];
  RE2 re(absl::StrCat("^(?:", expr.replace_args[3], ")$"));
  if (!re.ok()) return absl::InvalidArgumentError("label_replace: invalid regular expression");
  // Go's $1 and ${1} become RE2's \1.
  std::string rewrite;
  for (size_t i = 0; i < replacement.size(); ++i) {
    if (replacement[i] == '$' && i + 1 < replacement.size()) {
      size_t j = i + 1;
      const bool braced = replacement[j] == '{';
      if (braced) ++j;
      size_t k = j;
      while (k < replacement.size() && std::isdigit(static_cast<unsigned char>(replacement[k])))
        ++k;
      if (k > j && (!braced || (k < replacement.size() && replacement[k] == '}'))) {
        absl::StrAppend(&rewrite, "\\", replacement.substr(j, k - j));
        i = braced ? k : k - 1;
        continue;
      }
    }
    if (replacement[i] == '\\') rewrite.push_back('\\');
    rewrite.push_back(replacement[i]);
  }
  Value out;
  for (auto& [labels, points] : operand.series) {
    Labels result = labels;
    auto it = labels.find(source);
    std::string value = it == labels.end() ? "" : it->second;
    if (RE2::Replace(&value, re, rewrite)) {
      if (value.empty()) {
        result.erase(destination);
      } else {
        result[destination] = value;
      }
    }
    out.series.emplace(std::move(result), std::move(points));
  }
  return out;
}

absl::StatusOr<Value> Eval(Context& ctx, const Expr& expr) {
  switch (expr.kind) {
    case Expr::Kind::kLog:
      return absl::InvalidArgumentError("a log query cannot be used in a metric query");
    case Expr::Kind::kRange:
      return EvalRange(ctx, expr, nullptr);
    case Expr::Kind::kVectorAggregation:
      return EvalVectorAggregation(ctx, expr);
    case Expr::Kind::kBinary:
      return EvalBinary(ctx, expr);
    case Expr::Kind::kLabelReplace:
      return EvalLabelReplace(ctx, expr);
    case Expr::Kind::kNumber: {
      Value value;
      value.scalar = true;
      value.scalar_points.assign(ctx.steps.size(), expr.number);
      return value;
    }
    case Expr::Kind::kVector: {
      Value value;
      value.series.emplace(Labels{}, Points(ctx.steps.size(), expr.number));
      return value;
    }
  }
  return absl::InternalError("unknown expression");
}

// Prometheus's rendering of a sample value.
std::string FormatValue(double v) {
  if (std::isnan(v)) return "NaN";
  if (std::isinf(v)) return v > 0 ? "+Inf" : "-Inf";
  char buffer[64];
  const auto [end, ec] = std::to_chars(buffer, buffer + sizeof(buffer), v);
  return std::string(buffer, end);
}

void WriteTime(int64_t ns, otlp::JsonWriter* json) { json->Double(static_cast<double>(ns) / 1e9); }

void WriteMetric(const Labels& labels, otlp::JsonWriter* json) {
  json->BeginObject();
  for (const auto& [name, value] : labels) {
    json->Key(name);
    json->String(value);
  }
  json->EndObject();
}

}  // namespace

absl::StatusOr<std::string> RunLokiMetricQuery(query::QueryPool& pool,
                                               const storage::Snapshot& snapshot,
                                               const std::string& data_dir,
                                               const LokiMetricQuery& q, const CallOptions& call,
                                               std::chrono::steady_clock::time_point began) {
  Context ctx;
  ctx.pool = &pool;
  ctx.snapshot = &snapshot;
  ctx.data_dir = &data_dir;
  ctx.call = call;
  ctx.began = began;
  const bool instant = q.step == 0;
  if (instant) {
    ctx.steps.push_back(q.end);
  } else {
    if (q.step <= 0) {
      return absl::InvalidArgumentError(
          "zero or negative query resolution step widths are not accepted. Try a positive "
          "integer");
    }
    if ((q.end - q.start) / q.step + 1 > kLokiPointsMax) {
      return absl::InvalidArgumentError(
          absl::StrCat("exceeded maximum resolution of ", kLokiPointsMax,
                       " points per timeseries. Try decreasing the query resolution (?step=XX)"));
    }
    for (int64_t t = q.start; t <= q.end; t += q.step) ctx.steps.push_back(t);
  }
  STRATA_ASSIGN_OR_RETURN(Value value, Eval(ctx, *q.expr));
  if (value.series.size() > kLokiSeriesMax) return TooManySeries();
  ctx.stats.seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - began).count();
  std::string out;
  otlp::JsonWriter json(&out);
  json.BeginObject();
  json.Key("status");
  json.String("success");
  json.Key("data");
  json.BeginObject();
  json.Key("resultType");
  if (instant && value.scalar) {
    json.String("scalar");
    json.Key("result");
    json.BeginArray();
    WriteTime(ctx.steps[0], &json);
    json.String(value.scalar_points[0].has_value() ? FormatValue(*value.scalar_points[0]) : "NaN");
    json.EndArray();
  } else if (instant) {
    json.String("vector");
    json.Key("result");
    json.BeginArray();
    std::vector<std::pair<const Labels*, double>> samples;
    for (const auto& [labels, points] : value.series) {
      if (points[0].has_value()) samples.emplace_back(&labels, *points[0]);
    }
    if (q.expr->kind == Expr::Kind::kVectorAggregation &&
        (q.expr->function == "sort" || q.expr->function == "sort_desc")) {
      const bool descending = q.expr->function == "sort_desc";
      std::stable_sort(samples.begin(), samples.end(), [&](const auto& a, const auto& b) {
        return descending ? a.second > b.second : a.second < b.second;
      });
    }
    for (const auto& [labels, v] : samples) {
      json.BeginObject();
      json.Key("metric");
      WriteMetric(*labels, &json);
      json.Key("value");
      json.BeginArray();
      WriteTime(ctx.steps[0], &json);
      json.String(FormatValue(v));
      json.EndArray();
      json.EndObject();
    }
    json.EndArray();
  } else {
    json.String("matrix");
    json.Key("result");
    json.BeginArray();
    auto write_series = [&](const Labels& labels, const Points& points) {
      if (std::none_of(points.begin(), points.end(), [](const auto& p) { return p.has_value(); })) {
        return;
      }
      json.BeginObject();
      json.Key("metric");
      WriteMetric(labels, &json);
      json.Key("values");
      json.BeginArray();
      for (size_t s = 0; s < points.size(); ++s) {
        if (!points[s].has_value()) continue;
        json.BeginArray();
        WriteTime(ctx.steps[s], &json);
        json.String(FormatValue(*points[s]));
        json.EndArray();
      }
      json.EndArray();
      json.EndObject();
    };
    if (value.scalar) {
      write_series(Labels{}, value.scalar_points);
    } else {
      for (const auto& [labels, points] : value.series) write_series(labels, points);
    }
    json.EndArray();
  }
  WriteLokiStats(ctx.stats, &json);
  json.EndObject();
  json.EndObject();
  return out;
}

}  // namespace strata::api
