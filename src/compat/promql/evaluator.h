#pragma once

// The insides of the PromQL engine (engine.h): the evaluator and the values
// it passes between nodes. Every node is evaluated over a StepRange at once
// (an instant query is a range of one step), as Prometheus's engine does.
//
// Thread-safety: an Evaluator has a single owner and lives for one query.

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "compat/promql/ast.h"
#include "compat/promql/engine.h"
#include "compat/promql/series_source.h"
#include "compat/promql/value.h"

namespace strata::compat::promql {

struct StepRange {
  int64_t start = 0;
  int64_t end = 0;
  int64_t step = 1;
  int64_t Steps() const { return (end - start) / step + 1; }
  int64_t Time(int64_t i) const { return start + i * step; }
  int64_t Index(int64_t t) const { return (t - start) / step; }
};

// One series of an instant-vector value: points at step times, ascending.
struct StepSeries {
  Labels labels;
  std::vector<Point> points;
};

struct Value {
  ValueType type = ValueType::kNone;
  std::vector<StepSeries> series;  // kVector
  std::vector<double> scalar;      // kScalar: one value per step
  std::string text;                // kString
};

// A range vector: raw samples per series (staleness markers removed) and
// where each step's window lies.
struct RangeInput {
  std::vector<Series> series;
  int64_t range_ms = 0;
  int64_t offset_ms = 0;
  bool has_at = false;
  int64_t at_ms = 0;
  // The window of step time t is [end - range_ms, end].
  int64_t WindowEnd(int64_t t) const { return (has_at ? at_ms : t) - offset_ms; }
};

// Labels helpers (labels sorted by name).
std::string LabelsKey(const Labels& labels);
Labels DropMetricName(Labels labels);
void SetLabel(Labels* labels, const std::string& name, const std::string& value);  // "" deletes
int CompareLabels(const Labels& a, const Labels& b);
std::string LabelsText(const Labels& labels);  // {a="b", c="d"}

// Go's math.Max/math.Min (NaN wins, unlike std::fmax).
double GoMax(double a, double b);
double GoMin(double a, double b);
// Prometheus's quantile over values (sorted here), as the aggregation and
// quantile_over_time compute it.
double Quantile(double q, std::vector<double> values);

class Evaluator {
 public:
  Evaluator(SeriesSource& source, const EngineOptions& options, int64_t query_start,
            int64_t query_end)
      : source_(source), options_(options), query_start_(query_start), query_end_(query_end) {}

  absl::StatusOr<Value> Eval(const Expr& e, const StepRange& r);
  // A range vector: a matrix selector or a subquery, in parentheses or not.
  absl::StatusOr<RangeInput> EvalRange(const Expr& e, const StepRange& r);

  // Checks the deadline and cancellation now and then.
  absl::Status Tick();
  // Counts points against the memory budget.
  absl::Status AddPoints(int64_t n);
  // Merges series with equal labels; two points at one step are
  // Prometheus's "vector cannot contain metrics with the same labelset".
  // Drops series without points.
  absl::StatusOr<std::vector<StepSeries>> Finish(std::vector<StepSeries> out);

 private:
  int64_t AtTime(const Expr& selector_or_subquery) const;
  absl::StatusOr<std::vector<Series>> Select(const Expr& selector, int64_t min_ms, int64_t max_ms);
  absl::StatusOr<Value> EvalVectorSelector(const Expr& e, const StepRange& r, bool timestamps);
  absl::StatusOr<Value> EvalCall(const Expr& e, const StepRange& r);
  absl::StatusOr<Value> EvalRangeFunction(const Expr& e, const StepRange& r);
  absl::StatusOr<Value> EvalAggregate(const Expr& e, const StepRange& r);
  absl::StatusOr<Value> EvalBinary(const Expr& e, const StepRange& r);
  absl::StatusOr<Value> EvalVectorBinary(const Expr& e, const StepRange& r, Value lhs, Value rhs);

  SeriesSource& source_;
  const EngineOptions& options_;
  const int64_t query_start_;
  const int64_t query_end_;
  int64_t series_used_ = 0;
  int64_t points_used_ = 0;
  int64_t ticks_ = 0;
};

}  // namespace strata::compat::promql
