#pragma once

// ParseLogQL: LogQL query text into an Expr (ast.h).
//
// The parser accepts the language as Grafana's LogQL grammar
// (@grafana/lezer-logql) does, so that text Grafana's editor accepts is
// never called a syntax error here: stream selectors, line filters with
// `or`, the parsers (json, logfmt, regexp, pattern, unpack), label filters,
// line_format, label_format, decolorize, drop, keep, unwrap, range and
// vector aggregations, binary operators with their modifiers, literals,
// vector() and label_replace. Like the grammar it leaves meaning to a later
// step: CheckLogQL (check.h) refuses what Loki refuses (a log query under
// `sum`, sum_over_time without unwrap, ...).
//
// Keywords are case-insensitive as in the grammar (JSON, By); function
// names of range aggregations are not. The words json, logfmt, unpack,
// pattern, regexp, label_format, line_format, label_replace, vector,
// offset, bool, on, ignoring, group_left, group_right, unwrap, decolorize,
// drop and keep are never label names.
//
// Errors: InvalidArgument "LogQL: at column N: ..." for text that is not
// LogQL, nests deeper than kMaxLogQLDepth or is longer than kMaxLogQLBytes.
//
// Thread-safety: reentrant.

#include <cstddef>
#include <memory>
#include <string_view>

#include "absl/status/statusor.h"
#include "compat/logql/ast.h"

namespace strata::compat::logql {

inline constexpr int kMaxLogQLDepth = 64;
inline constexpr size_t kMaxLogQLBytes = 16 * 1024;

[[nodiscard]] absl::StatusOr<std::unique_ptr<Expr>> ParseLogQL(std::string_view text);

}  // namespace strata::compat::logql
