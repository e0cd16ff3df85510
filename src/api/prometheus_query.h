#pragma once

// PromQL evaluation for the Prometheus API's /query and /query_range
// (prometheus_endpoints.cc): the query's parameters, and the selectors of
// a parsed query (for /query_exemplars).

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "api/params.h"
#include "compat/promql/ast.h"
#include "compat/promql/series_source.h"
#include "compat/promql/value.h"

namespace strata::api {

// Prometheus refuses a range query with more steps than this per series.
inline constexpr int64_t kMaxPromSteps = 11'000;
// A query's budgets: series its selectors select, and samples they read
// plus points its intermediate results hold (docs/prometheus.md, Limits).
inline constexpr int64_t kPromMaxSeries = 100'000;
inline constexpr int64_t kPromMaxSamples = 20'000'000;

// What /query and /query_range were asked, times in milliseconds. An
// instant query has start == end and step 0.
struct PromQuery {
  std::string text;
  int64_t start = 0;
  int64_t end = 0;
  int64_t step = 0;
  int64_t timeout_ms = 0;  // 0: the API's query deadline
};

// /query's parameters: `query`, `time` (default: now), `timeout`.
[[nodiscard]] absl::StatusOr<PromQuery> TakeInstantQuery(QueryParams& params, int64_t now_ms);
// /query_range's: `query`, `start`, `end`, `step` (all required), `timeout`.
[[nodiscard]] absl::StatusOr<PromQuery> TakeRangeQuery(QueryParams& params);

// Evaluates `query` over `source`, within the engine's series and sample
// budgets and `deadline_ms` (0: none). InvalidArgument for a query that
// does not parse or type-check; ResourceExhausted past a budget.
[[nodiscard]] absl::StatusOr<compat::promql::QueryResult> EvaluatePromQuery(
    const PromQuery& query, compat::promql::SeriesSource& source, int64_t deadline_ms);

// Every vector selector of `expr`, those under matrix selectors and
// subqueries included, in the order they appear.
std::vector<const compat::promql::Expr*> SelectorsOf(const compat::promql::Expr& expr);

}  // namespace strata::api
