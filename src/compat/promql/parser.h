#pragma once

// The PromQL parser: expression text into a type-checked Expr (ast.h),
// accepting exactly what Prometheus 2.42's parser accepts. Its messages
// follow Prometheus's ("1:5: parse error: unexpected ...").
//
// Thread-safety: a pure function. Errors: InvalidArgument for text that is
// not PromQL or does not type-check (the API's `bad_data`).

#include <memory>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "compat/promql/ast.h"

namespace strata::compat::promql {

// Queries longer than this are refused before lexing.
inline constexpr size_t kMaxQueryBytes = 256 * 1024;
// Expressions nested deeper than this (parentheses, arguments, operands,
// chains of operators) are refused: the parser and the evaluator recurse.
// At this depth evaluation fits in a 1 MiB stack in the release build and
// in the default 8 MiB one under ASan.
inline constexpr int kMaxNestingDepth = 500;

absl::StatusOr<std::unique_ptr<Expr>> ParsePromQL(absl::string_view query);

// A duration as PromQL writes it (`1h30m`, `100ms`), in milliseconds.
absl::StatusOr<int64_t> ParseDurationMs(absl::string_view text);

// A label name Prometheus accepts: [a-zA-Z_][a-zA-Z0-9_]*.
bool IsValidLabelName(absl::string_view name);

}  // namespace strata::compat::promql
