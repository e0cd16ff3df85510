// Aggregations (sum, avg, ..., topk, quantile, count_values) with by and
// without, as Prometheus 2.42 computes them step by step.

#include <algorithm>
#include <cmath>
#include <limits>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "compat/promql/evaluator.h"
#include "compat/promql/parser.h"
#include "compat/promql/result_json.h"

namespace strata::compat::promql {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

Labels GroupLabels(const Labels& labels, const Expr& e) {
  Labels out;
  for (const Label& l : labels) {
    const bool listed = std::find(e.grouping.begin(), e.grouping.end(), l.name) != e.grouping.end();
    if (e.without ? (!listed && l.name != "__name__") : listed) out.push_back(l);
  }
  return out;
}

struct Accumulator {
  int64_t step = -1;  // the step this accumulator holds; -1 none
  double value = 0;
  double mean = 0;
  double count = 0;
  std::vector<std::pair<double, int>> items;  // topk/bottomk/quantile: (value, series)
};

}  // namespace

absl::StatusOr<Value> Evaluator::EvalAggregate(const Expr& e, const StepRange& r) {
  absl::StatusOr<Value> input = Eval(*e.lhs, r);
  if (!input.ok()) return input;
  Value param;
  if (e.param != nullptr) {
    absl::StatusOr<Value> p = Eval(*e.param, r);
    if (!p.ok()) return p;
    param = *std::move(p);
  }
  const std::vector<StepSeries>& in = input->series;
  Value out;
  out.type = ValueType::kVector;
  const int64_t steps = r.Steps();
  std::vector<StepSeries> result;

  if (e.aggregate == AggregateOp::kCountValues) {
    const std::string& label = param.text;
    if (!IsValidLabelName(label)) {
      return absl::FailedPreconditionError(absl::StrCat("invalid label name \"", label, "\""));
    }
    std::vector<Labels> group_labels;
    for (const StepSeries& s : in) group_labels.push_back(GroupLabels(s.labels, e));
    absl::flat_hash_map<std::string, size_t> ids;
    for (int64_t i = 0; i < steps; ++i) {
      absl::Status tick = Tick();
      if (!tick.ok()) return tick;
      const int64_t t = r.Time(i);
      for (size_t j = 0; j < in.size(); ++j) {
        // Series are visited in order; each has at most one point per step.
        auto it = std::lower_bound(in[j].points.begin(), in[j].points.end(), t,
                                   [](const Point& p, int64_t x) { return p.t_ms < x; });
        if (it == in[j].points.end() || it->t_ms != t) continue;
        Labels labels = group_labels[j];
        SetLabel(&labels, label, FormatFloat(it->v));
        auto [id, inserted] = ids.try_emplace(LabelsKey(labels), result.size());
        if (inserted) result.push_back(StepSeries{std::move(labels), {}});
        std::vector<Point>& points = result[id->second].points;
        if (points.empty() || points.back().t_ms != t) points.push_back(Point{t, 0});
        points.back().v += 1;
      }
    }
    absl::StatusOr<std::vector<StepSeries>> finished = Finish(std::move(result));
    if (!finished.ok()) return finished.status();
    out.series = *std::move(finished);
    return out;
  }

  // Groups are fixed per series: intern them once.
  absl::flat_hash_map<std::string, int> group_ids;
  std::vector<Labels> groups;
  std::vector<int> group_of;
  for (const StepSeries& s : in) {
    Labels labels = GroupLabels(s.labels, e);
    auto [it, inserted] = group_ids.try_emplace(LabelsKey(labels), static_cast<int>(groups.size()));
    if (inserted) groups.push_back(std::move(labels));
    group_of.push_back(it->second);
  }
  const bool selects = e.aggregate == AggregateOp::kTopk || e.aggregate == AggregateOp::kBottomk;
  if (selects) {
    for (const StepSeries& s : in) result.push_back(StepSeries{s.labels, {}});
  } else {
    for (const Labels& g : groups) result.push_back(StepSeries{g, {}});
  }
  std::vector<Accumulator> acc(groups.size());
  // The order groups first appear in at a step (Prometheus's output order).
  std::vector<int> order;
  std::vector<std::vector<std::pair<int, double>>> by_step(static_cast<size_t>(steps));
  for (size_t j = 0; j < in.size(); ++j) {
    for (const Point& p : in[j].points) {
      by_step[static_cast<size_t>(r.Index(p.t_ms))].emplace_back(static_cast<int>(j), p.v);
    }
  }
  // For an instant query, topk/bottomk's order is the answer's order.
  std::vector<int> emitted;
  for (int64_t i = 0; i < steps; ++i) {
    absl::Status tick = Tick();
    if (!tick.ok()) return tick;
    const int64_t t = r.Time(i);
    const double p = e.param != nullptr ? param.scalar[static_cast<size_t>(i)] : 0;
    int64_t k = 0;
    if (selects) {
      if (!(p > -9.2233720368547758e18 && p < 9.2233720368547758e18)) {
        return absl::FailedPreconditionError(
            absl::StrCat("Scalar value ", FormatFloat(p), " overflows int64"));
      }
      k = static_cast<int64_t>(p);
      if (k < 1) continue;
    }
    order.clear();
    for (const auto& [j, v] : by_step[static_cast<size_t>(i)]) {
      Accumulator& a = acc[static_cast<size_t>(group_of[static_cast<size_t>(j)])];
      if (a.step != i) {
        a.step = i;
        a.value = v;
        a.mean = v;
        a.count = 1;
        a.items.clear();
        order.push_back(group_of[static_cast<size_t>(j)]);
        switch (e.aggregate) {
          case AggregateOp::kGroup:
            a.value = 1;
            break;
          case AggregateOp::kStddev:
          case AggregateOp::kStdvar:
            a.value = 0;
            break;
          case AggregateOp::kTopk:
          case AggregateOp::kBottomk:
          case AggregateOp::kQuantile:
            a.items.emplace_back(v, j);
            break;
          default:
            break;
        }
        continue;
      }
      switch (e.aggregate) {
        case AggregateOp::kSum:
          a.value += v;
          break;
        case AggregateOp::kAvg:
          a.count += 1;
          if (std::isinf(a.mean)) {
            if (std::isinf(v) && (a.mean > 0) == (v > 0)) break;
            if (!std::isinf(v) && !std::isnan(v)) break;
          }
          a.mean += v / a.count - a.mean / a.count;
          break;
        case AggregateOp::kGroup:
          break;
        case AggregateOp::kCount:
          a.count += 1;
          break;
        case AggregateOp::kMax:
          if (a.value < v || std::isnan(a.value)) a.value = v;
          break;
        case AggregateOp::kMin:
          if (a.value > v || std::isnan(a.value)) a.value = v;
          break;
        case AggregateOp::kStddev:
        case AggregateOp::kStdvar: {
          a.count += 1;
          const double delta = v - a.mean;
          a.mean += delta / a.count;
          a.value += delta * (v - a.mean);
          break;
        }
        case AggregateOp::kTopk:
        case AggregateOp::kBottomk:
        case AggregateOp::kQuantile:
          a.items.emplace_back(v, j);
          break;
        case AggregateOp::kCountValues:
          break;
      }
    }
    for (int g : order) {
      Accumulator& a = acc[static_cast<size_t>(g)];
      double v = a.value;
      switch (e.aggregate) {
        case AggregateOp::kAvg:
          v = a.mean;
          break;
        case AggregateOp::kCount:
          v = a.count;
          break;
        case AggregateOp::kStdvar:
          v = a.value / a.count;
          break;
        case AggregateOp::kStddev:
          v = std::sqrt(a.value / a.count);
          break;
        case AggregateOp::kQuantile: {
          std::vector<double> values;
          for (const auto& item : a.items) values.push_back(item.first);
          v = Quantile(p, std::move(values));
          break;
        }
        case AggregateOp::kTopk:
        case AggregateOp::kBottomk: {
          const bool top = e.aggregate == AggregateOp::kTopk;
          // Larger first for topk (NaN last), smaller first for bottomk.
          auto better = [top](const std::pair<double, int>& x, const std::pair<double, int>& y) {
            if (std::isnan(x.first)) return false;
            if (std::isnan(y.first)) return true;
            return top ? x.first > y.first : x.first < y.first;
          };
          std::stable_sort(a.items.begin(), a.items.end(), better);
          const size_t n =
              std::min<size_t>(a.items.size(), static_cast<size_t>(std::min<int64_t>(k, 1 << 30)));
          for (size_t x = 0; x < n; ++x) {
            const int j = a.items[x].second;
            result[static_cast<size_t>(j)].points.push_back(Point{t, a.items[x].first});
            if (i == 0) emitted.push_back(j);
          }
          continue;
        }
        default:
          break;
      }
      result[static_cast<size_t>(g)].points.push_back(Point{t, v});
    }
  }
  if (selects && steps == 1) {
    // An instant query answers topk/bottomk in their order.
    std::vector<StepSeries> ordered;
    for (int j : emitted) ordered.push_back(std::move(result[static_cast<size_t>(j)]));
    result = std::move(ordered);
  }
  int64_t points = 0;
  for (const StepSeries& s : result) points += static_cast<int64_t>(s.points.size());
  absl::Status counted = AddPoints(points);
  if (!counted.ok()) return counted;
  absl::StatusOr<std::vector<StepSeries>> finished = Finish(std::move(result));
  if (!finished.ok()) return finished.status();
  out.series = *std::move(finished);
  (void)kNaN;
  return out;
}

}  // namespace strata::compat::promql
