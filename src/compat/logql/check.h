#pragma once

// CheckLogQL: what Loki refuses in a query that parses (parser.h), with
// Loki's reasons: a stream selector whose every matcher matches the empty
// string, a log query where a metric is needed (under an aggregation or an
// operator), range aggregations with and without unwrap where Loki wants
// the other, parameters that are missing or not allowed, grouping on a
// range aggregation that does not take it, comparisons between numbers
// without `bool`, set operators on numbers, regular expressions RE2 cannot
// compile, and a range that is not positive.
//
// Errors: InvalidArgument with a message in Loki's words.
//
// Thread-safety: reentrant.

#include "absl/status/status.h"
#include "compat/logql/ast.h"

namespace strata::compat::logql {

[[nodiscard]] absl::Status CheckLogQL(const Expr& expr);

// Whether a range aggregation needs `| unwrap` (sum_over_time, ...),
// refuses it (count_over_time, ...) or takes either (rate).
enum class UnwrapRule { kRequired, kRefused, kOptional };
UnwrapRule UnwrapRuleOf(std::string_view function);

}  // namespace strata::compat::logql
