#include "compat/promql/engine.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "compat/promql/evaluator.h"

namespace strata::compat::promql {
namespace {

void SortMatrix(std::vector<MatrixSeries>* matrix) {
  std::sort(matrix->begin(), matrix->end(), [](const MatrixSeries& a, const MatrixSeries& b) {
    return CompareLabels(a.labels, b.labels) < 0;
  });
}

}  // namespace

absl::StatusOr<QueryResult> EvaluateInstant(SeriesSource& source, const Expr& expr, int64_t t_ms,
                                            const EngineOptions& options) {
  if (t_ms < -kMaxQueryTimeMs || t_ms > kMaxQueryTimeMs) {
    return absl::InvalidArgumentError("the query time is out of range");
  }
  Evaluator ev(source, options, t_ms, t_ms);
  const StepRange r{t_ms, t_ms, 1};
  QueryResult result;
  result.type = expr.type;
  result.t_ms = t_ms;
  if (expr.type == ValueType::kMatrix) {
    absl::StatusOr<RangeInput> in = ev.EvalRange(expr, r);
    if (!in.ok()) return in.status();
    const int64_t end = in->WindowEnd(t_ms);
    const int64_t start = end - in->range_ms;
    for (Series& s : in->series) {
      MatrixSeries m{std::move(s.labels), {}};
      for (const Sample& x : s.samples) {
        if (x.t_ms >= start && x.t_ms <= end) m.points.push_back(Point{x.t_ms, x.v});
      }
      if (!m.points.empty()) result.matrix.push_back(std::move(m));
    }
    SortMatrix(&result.matrix);
    return result;
  }
  absl::StatusOr<Value> v = ev.Eval(expr, r);
  if (!v.ok()) return v.status();
  switch (v->type) {
    case ValueType::kScalar:
      result.scalar = v->scalar[0];
      break;
    case ValueType::kString:
      result.text = v->text;
      break;
    case ValueType::kVector:
      for (StepSeries& s : v->series) {
        result.vector.push_back(VectorElement{std::move(s.labels), t_ms, s.points[0].v});
      }
      break;
    default:
      return absl::InternalError("an evaluation without a value");
  }
  return result;
}

absl::StatusOr<QueryResult> EvaluateRange(SeriesSource& source, const Expr& expr, int64_t start_ms,
                                          int64_t end_ms, int64_t step_ms,
                                          const EngineOptions& options) {
  if (step_ms <= 0) {
    return absl::InvalidArgumentError(
        "zero or negative query resolution step widths are not accepted. Try a positive integer");
  }
  if (end_ms < start_ms)
    return absl::InvalidArgumentError("end timestamp must not be before start time");
  if (options.max_steps > 0 && (end_ms - start_ms) / step_ms + 1 > options.max_steps) {
    return absl::InvalidArgumentError(
        "exceeded maximum resolution of 11,000 points per timeseries. Try decreasing the query "
        "resolution (?step=XX)");
  }
  if (expr.type != ValueType::kScalar && expr.type != ValueType::kVector) {
    return absl::InvalidArgumentError(
        absl::StrCat("invalid expression type \"", ValueTypeDocName(expr.type),
                     "\" for range query, must be Scalar or instant Vector"));
  }
  Evaluator ev(source, options, start_ms, end_ms);
  const StepRange r{start_ms, end_ms, step_ms};
  absl::StatusOr<Value> v = ev.Eval(expr, r);
  if (!v.ok()) return v.status();
  QueryResult result;
  result.type = ValueType::kMatrix;
  if (v->type == ValueType::kScalar) {
    MatrixSeries m;
    for (int64_t i = 0; i < r.Steps(); ++i)
      m.points.push_back(Point{r.Time(i), v->scalar[static_cast<size_t>(i)]});
    result.matrix.push_back(std::move(m));
    return result;
  }
  for (StepSeries& s : v->series)
    result.matrix.push_back(MatrixSeries{std::move(s.labels), std::move(s.points)});
  SortMatrix(&result.matrix);
  return result;
}

}  // namespace strata::compat::promql
