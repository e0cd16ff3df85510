#pragma once

// A runner for Prometheus's own PromQL test files (promql/testdata/*.test
// of Prometheus 2.42): `load <interval>` blocks of series in Prometheus's
// series notation (`0+10x100`, `_`, `_x3`, `stale`, `Inf`), `clear`, and
// `eval instant at <time> <expr>` (also `eval_fail`, `eval_ordered`) with
// the expected results, checked as Prometheus's test harness checks them:
// values equal within 1e-6 relative, the same series, the order for
// eval_ordered, the same answer again from a range query around the time,
// and again with `@ <time>` added to every selector at several times.
//
// Thread-safety: pure functions. Errors: InvalidArgument for a file that
// is not in the format (a failing eval is a result, not an error).

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace strata::compat::promql {

struct EvalOutcome {
  int line = 0;  // of the eval command, 1-based
  std::string expr;
  bool passed = false;
  std::string message;  // why it failed
};

absl::StatusOr<std::vector<EvalOutcome>> RunPromQLTestFile(absl::string_view text);

}  // namespace strata::compat::promql
