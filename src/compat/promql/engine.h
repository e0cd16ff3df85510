#pragma once

// The PromQL evaluator: a parsed expression (parser.h) evaluated over a
// SeriesSource as an instant query at one time or as a range query over
// [start, end] at a step, with Prometheus 2.42's semantics (docs/promql.md):
// the lookback of instant selectors, staleness markers, the extrapolation
// of rate/increase/delta, vector matching and its errors.
//
// Each selector is selected once, over the whole time range the query
// needs, and stepped through in memory series by series.
//
// Thread-safety: the functions are reentrant; the source must be usable
// for the duration of the call. Errors:
//   InvalidArgument    the query cannot be answered as asked (a range query
//                      of a string or range vector, a step of 0): bad_data.
//   ResourceExhausted  a budget of EngineOptions or of the source was
//                      exceeded (the API answers 422).
//   DeadlineExceeded   EngineOptions::deadline passed (the API's timeout).
//   FailedPrecondition an execution error Prometheus reports with
//                      errorType "execution" (422): many-to-many matching,
//                      duplicate label sets, an invalid label_replace regex.
//   anything the source returns.

#include <cstdint>
#include <functional>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "compat/promql/ast.h"
#include "compat/promql/series_source.h"
#include "compat/promql/value.h"

namespace strata::compat::promql {

// Query times (and `@` times) are confined to +-2^60 ms (36 million years),
// so that no arithmetic on times overflows.
inline constexpr int64_t kMaxQueryTimeMs = int64_t{1} << 60;

struct EngineOptions {
  int64_t lookback_ms = 5 * 60 * 1000;
  // The step of a subquery written without one (`x[1h:]`), as Prometheus's
  // default evaluation interval.
  int64_t default_subquery_step_ms = 60 * 1000;
  // Series all selectors of a query may return together (0: no limit).
  int64_t max_series = 0;
  // Samples all selectors may return together, and the points every
  // intermediate result holds, counted together: the bound on the query's
  // memory (as Prometheus's --query.max-samples, whose default this is).
  // It also bounds the steps of a subquery. 0 means no bound: only for
  // tests, never for queries from clients.
  int64_t max_points = 50'000'000;
  // Steps a range query may have ((end - start) / step + 1), as Prometheus
  // refuses more than 11000.
  int64_t max_steps = 11000;
  absl::Time deadline = absl::InfiniteFuture();
  // Called now and then in loops; returning true ends the query with
  // Cancelled (e.g. when the client has gone away).
  std::function<bool()> cancelled;
};

absl::StatusOr<QueryResult> EvaluateInstant(SeriesSource& source, const Expr& expr, int64_t t_ms,
                                            const EngineOptions& options);

absl::StatusOr<QueryResult> EvaluateRange(SeriesSource& source, const Expr& expr, int64_t start_ms,
                                          int64_t end_ms, int64_t step_ms,
                                          const EngineOptions& options);

}  // namespace strata::compat::promql
