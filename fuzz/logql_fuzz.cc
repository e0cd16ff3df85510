// Fuzz target for the LogQL parser and checks (src/compat/logql/): the
// input is query text as a client sends it in /loki/api/v1/query_range?query=.
// The parser must answer with an Expr or InvalidArgument and never crash; a
// query it accepts must have a tree whose every node is whole, and the
// checks must answer OK or InvalidArgument. The pipeline of a log query
// (its regular expressions, patterns, json paths and templates come from
// the query too) must compile or be refused with InvalidArgument or
// Unimplemented, and run over a few lines without crashing.

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "compat/logql/check.h"
#include "compat/logql/parser.h"
#include "compat/logql/pipeline.h"

namespace {

using strata::compat::logql::Expr;
using strata::compat::logql::LabelFilter;
using strata::compat::logql::Stage;

void CheckFilter(const LabelFilter& filter) {
  if (filter.kind == LabelFilter::Kind::kAnd || filter.kind == LabelFilter::Kind::kOr) {
    if (filter.lhs == nullptr || filter.rhs == nullptr) __builtin_trap();
    CheckFilter(*filter.lhs);
    CheckFilter(*filter.rhs);
  }
}

void CheckTree(const Expr& expr) {
  for (const Stage& stage : expr.log.stages) {
    if (stage.kind == Stage::Kind::kLabelFilter) {
      if (stage.filter == nullptr) __builtin_trap();
      CheckFilter(*stage.filter);
    }
    if (stage.kind == Stage::Kind::kLineFilter && stage.line_filter.values.empty()) {
      __builtin_trap();
    }
  }
  switch (expr.kind) {
    case Expr::Kind::kLog:
      if (expr.log.matchers.empty()) __builtin_trap();
      break;
    case Expr::Kind::kRange:
      if (expr.log.matchers.empty()) __builtin_trap();
      if (expr.unwrap.has_value()) {
        for (const auto& filter : expr.unwrap->filters) CheckFilter(*filter);
      }
      break;
    case Expr::Kind::kBinary:
      if (expr.lhs == nullptr || expr.rhs == nullptr) __builtin_trap();
      CheckTree(*expr.lhs);
      CheckTree(*expr.rhs);
      break;
    case Expr::Kind::kVectorAggregation:
      if (expr.lhs == nullptr) __builtin_trap();
      CheckTree(*expr.lhs);
      break;
    case Expr::Kind::kLabelReplace:
      if (expr.lhs == nullptr || expr.replace_args.size() != 4) __builtin_trap();
      CheckTree(*expr.lhs);
      break;
    default:
      break;
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  const auto parsed = strata::compat::logql::ParseLogQL(text);
  if (!parsed.ok()) {
    if (!absl::IsInvalidArgument(parsed.status())) __builtin_trap();
    return 0;
  }
  if (*parsed == nullptr) __builtin_trap();
  CheckTree(**parsed);
  const absl::Status checked = strata::compat::logql::CheckLogQL(**parsed);
  if (!checked.ok() && !absl::IsInvalidArgument(checked)) __builtin_trap();
  const auto pipeline = strata::compat::logql::LogPipeline::Compile((*parsed)->log.stages);
  if (!pipeline.ok()) {
    if (!absl::IsInvalidArgument(pipeline.status()) && !absl::IsUnimplemented(pipeline.status())) {
      __builtin_trap();
    }
    return 0;
  }
  for (std::string_view text : {std::string_view(R"({"a":{"b":1},"c":"d","_entry":"e"})"),
                                std::string_view("level=info msg=\"x y\" n=5 d=250ms"),
                                std::string_view("\x1b[31mGET /x 200\x1b[0m"), text}) {
    strata::compat::logql::LogLine line;
    line.line = std::string(text);
    line.stream = {{"service_name", "api"}};
    line.metadata = {{"detected_level", "info"}};
    (void)pipeline->Process(&line);
  }
  return 0;
}
