// Fuzz target for the PromQL parser and engine (src/compat/promql/): the
// input is expression text as a client sends it in
// /prometheus/api/v1/query?query=. The parser must answer with a
// type-checked tree or InvalidArgument and never crash; every node of an
// accepted tree must be whole and typed as Prometheus types it. An
// accepted expression is then evaluated, as an instant and as a range
// query over a few series, under small budgets: the engine must answer or
// fail with one of the errors engine.h names, never Internal or
// Unimplemented.

#include <bit>
#include <cstddef>
#include <cstdint>
#include <string>

#include "absl/time/clock.h"
#include "compat/promql/engine.h"
#include "compat/promql/functions.h"
#include "compat/promql/memory_source.h"
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

strata::compat::promql::InMemorySeriesSource* Source() {
  using strata::compat::promql::Sample;
  static auto* source = [] {
    auto* s = new strata::compat::promql::InMemorySeriesSource();
    std::vector<Sample> counter, gauge;
    for (int i = 0; i < 60; ++i) {
      counter.push_back(Sample{i * 15000LL, static_cast<double>(i % 20) * 3});
      gauge.push_back(Sample{
          i * 15000LL, i % 7 == 0 ? std::bit_cast<double>(strata::compat::promql::kStaleNaNBits)
                                  : (i % 5 == 0 ? std::nan("") : i - 30.5)});
    }
    s->Add({{"__name__", "c"}, {"job", "a"}}, counter);
    s->Add({{"__name__", "c"}, {"job", "b"}}, gauge);
    s->Add({{"__name__", "g"}, {"job", "a"}}, gauge);
    for (const char* le : {"0.1", "1", "+Inf", "x"}) {
      s->Add({{"__name__", "h_bucket"}, {"job", "a"}, {"le", le}}, counter);
    }
    return s;
  }();
  return source;
}

bool Allowed(const absl::Status& status) {
  return status.ok() || absl::IsInvalidArgument(status) || absl::IsResourceExhausted(status) ||
         absl::IsFailedPrecondition(status) || absl::IsDeadlineExceeded(status);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  const auto parsed = strata::compat::promql::ParsePromQL(text);
  if (parsed.ok()) {
    if (*parsed == nullptr) __builtin_trap();
    Check(**parsed);
    (void)strata::compat::promql::ExprToString(**parsed);
    strata::compat::promql::EngineOptions options;
    options.max_points = 200000;
    options.max_series = 50;
    options.deadline = absl::Now() + absl::Seconds(2);
    const auto instant =
        strata::compat::promql::EvaluateInstant(*Source(), **parsed, 600000, options);
    if (!Allowed(instant.status())) __builtin_trap();
    const auto range =
        strata::compat::promql::EvaluateRange(*Source(), **parsed, 0, 900000, 30000, options);
    if (!Allowed(range.status())) __builtin_trap();
  } else if (!absl::IsInvalidArgument(parsed.status())) {
    __builtin_trap();
  }
  return 0;
}
