#pragma once

// The functions of PromQL as Prometheus 2.42 declares them: argument types,
// how many optional arguments follow, and the result type. The parser
// checks calls against this table; the evaluator (function_eval.cc)
// implements every entry.

#include <vector>

#include "absl/strings/string_view.h"
#include "compat/promql/ast.h"

namespace strata::compat::promql {

struct Function {
  absl::string_view name;
  std::vector<ValueType> arg_types;
  // As Prometheus counts it: 0, exactly arg_types; n > 0, the last
  // declared argument is optional and at most n arguments of its type
  // stand in its place; -1, at least all but the last, unbounded.
  int variadic = 0;
  ValueType return_type = ValueType::kVector;
};

// The function named `name` (case-sensitive), or nullptr.
const Function* LookupFunction(absl::string_view name);

}  // namespace strata::compat::promql
