#pragma once

// ParseTraceQL: TraceQL query text into a Query (ast.h).
//
// The parser reads the whole language as Grafana's editor does (spanset
// filters, spanset operators including the structural ones, pipelines with
// select, by, coalesce, aggregates and metrics functions), so that text
// Grafana accepts is never called a syntax error; what strata does not
// answer is then refused as a whole, naming the first such construct.
//
// Errors: InvalidArgument "TraceQL: at column N: ..." for text that is not
// TraceQL (or nests deeper than kMaxTraceQLDepth, or is longer than
// kMaxTraceQLBytes); Unimplemented naming the construct (and its column)
// for TraceQL strata does not answer: structural operators, pipeline stages
// other than select, arithmetic, parent., comparisons between two fields.
//
// Thread-safety: reentrant.

#include <cstddef>
#include <string_view>

#include "absl/status/statusor.h"
#include "compat/traceql/ast.h"

namespace strata::compat::traceql {

inline constexpr int kMaxTraceQLDepth = 64;
inline constexpr size_t kMaxTraceQLBytes = 16 * 1024;

[[nodiscard]] absl::StatusOr<Query> ParseTraceQL(std::string_view text);

}  // namespace strata::compat::traceql
