// Fuzz target for the TraceQL parser (src/compat/traceql/): the input is
// query text as a client sends it in /tempo/api/search?q=. The parser must
// answer with a Query, InvalidArgument or Unimplemented and never crash;
// a query it accepts must have a spanset tree whose every node is whole,
// and translate to SQL or to InvalidArgument.

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "compat/traceql/parser.h"
#include "compat/traceql/to_sql.h"

namespace {

using strata::compat::traceql::FieldExpr;
using strata::compat::traceql::SpansetExpr;

void CheckField(const FieldExpr& node) {
  switch (node.kind) {
    case FieldExpr::Kind::kUnary:
      if (node.lhs == nullptr) __builtin_trap();
      CheckField(*node.lhs);
      break;
    case FieldExpr::Kind::kBinary:
      if (node.lhs == nullptr || node.rhs == nullptr) __builtin_trap();
      CheckField(*node.lhs);
      CheckField(*node.rhs);
      break;
    default:
      break;
  }
}

void CheckSpansets(const SpansetExpr& node) {
  if (node.kind == SpansetExpr::Kind::kFilter) {
    if (node.condition != nullptr) CheckField(*node.condition);
    return;
  }
  if (node.lhs == nullptr || node.rhs == nullptr) __builtin_trap();
  CheckSpansets(*node.lhs);
  CheckSpansets(*node.rhs);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  const absl::StatusOr<strata::compat::traceql::Query> query =
      strata::compat::traceql::ParseTraceQL(text);
  if (query.ok()) {
    if (query->spansets == nullptr) __builtin_trap();
    CheckSpansets(*query->spansets);
    // The translation answers SQL or InvalidArgument, binding only what it
    // says it binds.
    strata::compat::traceql::SqlParams params{.before = 2};
    const absl::StatusOr<strata::compat::traceql::TraceQLSql> sql =
        strata::compat::traceql::TraceQLToSql(*query, &params);
    if (!sql.ok() && !absl::IsInvalidArgument(sql.status())) __builtin_trap();
    if (sql.ok() && sql->filters.empty()) __builtin_trap();
    for (const strata::compat::traceql::Field& field : query->select) {
      (void)strata::compat::traceql::SelectedFieldSql(field, &params);
    }
  } else if (!absl::IsInvalidArgument(query.status()) && !absl::IsUnimplemented(query.status())) {
    __builtin_trap();
  }
  return 0;
}
