// TakeInstantQuery, TakeRangeQuery and SelectorsOf (prometheus_query.h).

#include "api/prometheus_query.h"

#include "absl/strings/str_cat.h"
#include "api/prometheus_params.h"
#include "common/status_macros.h"
#include "compat/promql/engine.h"
#include "compat/promql/parser.h"

namespace strata::api {
namespace {

namespace promql = compat::promql;

absl::StatusOr<std::string> TakeQueryText(QueryParams& params) {
  STRATA_ASSIGN_OR_RETURN(std::optional<std::string> text, params.Take("query"));
  if (!text.has_value() || text->empty()) {
    return absl::InvalidArgumentError(
        "invalid parameter \"query\": unknown position: parse error: no expression found in input");
  }
  return *std::move(text);
}

absl::Status TakeTimeout(QueryParams& params, PromQuery* query) {
  STRATA_ASSIGN_OR_RETURN(std::optional<std::string> timeout, params.Take("timeout"));
  if (timeout.has_value() && !timeout->empty()) {
    STRATA_ASSIGN_OR_RETURN(query->timeout_ms, ParsePromDuration("timeout", *timeout));
  }
  return absl::OkStatus();
}

absl::StatusOr<int64_t> TakeRequiredTime(QueryParams& params, std::string_view name) {
  STRATA_ASSIGN_OR_RETURN(std::optional<std::string> text, params.Take(name));
  if (!text.has_value() || text->empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat("invalid parameter \"", std::string(name), "\": missing"));
  }
  return ParsePromTime(name, *text);
}

void Collect(const promql::Expr& expr, std::vector<const promql::Expr*>* out) {
  if (expr.kind == promql::Expr::Kind::kVectorSelector) {
    out->push_back(&expr);
    return;
  }
  for (const auto* child :
       {expr.selector.get(), expr.lhs.get(), expr.rhs.get(), expr.param.get()}) {
    if (child != nullptr) Collect(*child, out);
  }
  for (const auto& arg : expr.args) Collect(*arg, out);
}

}  // namespace

absl::StatusOr<PromQuery> TakeInstantQuery(QueryParams& params, int64_t now_ms) {
  PromQuery query;
  STRATA_ASSIGN_OR_RETURN(query.text, TakeQueryText(params));
  STRATA_ASSIGN_OR_RETURN(std::optional<std::string> time, params.Take("time"));
  query.start = now_ms;
  if (time.has_value() && !time->empty()) {
    STRATA_ASSIGN_OR_RETURN(query.start, ParsePromTime("time", *time));
  }
  query.end = query.start;
  STRATA_RETURN_IF_ERROR(TakeTimeout(params, &query));
  return query;
}

absl::StatusOr<PromQuery> TakeRangeQuery(QueryParams& params) {
  PromQuery query;
  STRATA_ASSIGN_OR_RETURN(query.text, TakeQueryText(params));
  STRATA_ASSIGN_OR_RETURN(query.start, TakeRequiredTime(params, "start"));
  STRATA_ASSIGN_OR_RETURN(query.end, TakeRequiredTime(params, "end"));
  if (query.end < query.start) {
    return absl::InvalidArgumentError("end timestamp must not be before start time");
  }
  STRATA_ASSIGN_OR_RETURN(std::optional<std::string> step, params.Take("step"));
  if (!step.has_value() || step->empty()) {
    return absl::InvalidArgumentError("invalid parameter \"step\": missing");
  }
  absl::StatusOr<int64_t> step_ms = ParsePromDuration("step", *step);
  if (!step_ms.ok()) {
    return absl::InvalidArgumentError(
        "zero or negative query resolution step widths are not accepted. Try a positive integer");
  }
  query.step = *step_ms;
  if ((query.end - query.start) / query.step > kMaxPromSteps) {
    return absl::InvalidArgumentError(
        "exceeded maximum resolution of 11,000 points per timeseries. Try decreasing the query "
        "resolution (?step=XX)");
  }
  STRATA_RETURN_IF_ERROR(TakeTimeout(params, &query));
  return query;
}

absl::StatusOr<promql::QueryResult> EvaluatePromQuery(const PromQuery& query,
                                                      promql::SeriesSource& source,
                                                      int64_t deadline_ms) {
  STRATA_ASSIGN_OR_RETURN(std::unique_ptr<promql::Expr> expr, promql::ParsePromQL(query.text));
  promql::EngineOptions options;
  options.max_series = kPromMaxSeries;
  options.max_points = kPromMaxSamples;
  options.max_steps = kMaxPromSteps + 1;
  if (deadline_ms > 0) options.deadline = absl::Now() + absl::Milliseconds(deadline_ms);
  if (query.step == 0) return promql::EvaluateInstant(source, *expr, query.start, options);
  return promql::EvaluateRange(source, *expr, query.start, query.end, query.step, options);
}

std::vector<const promql::Expr*> SelectorsOf(const promql::Expr& expr) {
  std::vector<const promql::Expr*> out;
  Collect(expr, &out);
  return out;
}

}  // namespace strata::api
