// Fuzz target for the PromQL parser (src/compat/promql/): the input is
// expression text as a client sends it in /prometheus/api/v1/query?query=.
// The parser must answer with a type-checked tree or InvalidArgument and
// never crash; every node of an accepted tree must be whole and typed as
// Prometheus types it.

#include <cstddef>
#include <cstdint>
#include <string>

#include "compat/promql/functions.h"
#include "compat/promql/parser.h"

namespace {

using strata::compat::promql::Expr;
using strata::compat::promql::ValueType;

void Check(const Expr& e) {
  if (e.type == ValueType::kNone) __builtin_trap();
  switch (e.kind) {
    case Expr::Kind::kMatrixSelector:
      if (e.selector == nullptr || e.selector->kind != Expr::Kind::kVectorSelector)
        __builtin_trap();
      if (e.range_ms <= 0) __builtin_trap();
      break;
    case Expr::Kind::kVectorSelector:
      if (e.matchers.empty()) __builtin_trap();
      break;
    case Expr::Kind::kSubquery:
      if (e.lhs == nullptr || e.range_ms <= 0) __builtin_trap();
      if (e.lhs->type != ValueType::kScalar && e.lhs->type != ValueType::kVector) __builtin_trap();
      Check(*e.lhs);
      break;
    case Expr::Kind::kCall:
      if (e.function == nullptr) __builtin_trap();
      for (const auto& a : e.args) {
        if (a == nullptr) __builtin_trap();
        Check(*a);
      }
      break;
    case Expr::Kind::kAggregate:
      if (e.lhs == nullptr || e.lhs->type != ValueType::kVector) __builtin_trap();
      Check(*e.lhs);
      if (e.param != nullptr) Check(*e.param);
      break;
    case Expr::Kind::kUnary:
    case Expr::Kind::kParen:
      if (e.lhs == nullptr) __builtin_trap();
      Check(*e.lhs);
      break;
    case Expr::Kind::kBinary:
      if (e.lhs == nullptr || e.rhs == nullptr) __builtin_trap();
      if (e.type != ValueType::kScalar && e.type != ValueType::kVector) __builtin_trap();
      Check(*e.lhs);
      Check(*e.rhs);
      break;
    default:
      break;
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  const auto parsed = strata::compat::promql::ParsePromQL(text);
  if (parsed.ok()) {
    if (*parsed == nullptr) __builtin_trap();
    Check(**parsed);
    (void)strata::compat::promql::ExprToString(**parsed);
  } else if (!absl::IsInvalidArgument(parsed.status())) {
    __builtin_trap();
  }
  return 0;
}
