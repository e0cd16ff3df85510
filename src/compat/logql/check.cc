#include "compat/logql/check.h"

#include <string>
#include <string_view>

#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "common/absl_view.h"
#include "common/status_macros.h"
#include "re2/re2.h"

namespace strata::compat::logql {
namespace {

absl::Status Invalid(std::string_view what) {
  return absl::InvalidArgumentError(absl::StrCat("LogQL: ", Absl(what)));
}

absl::Status CheckRegex(std::string_view pattern) {
  RE2::Options options;
  options.set_log_errors(false);
  const RE2 re(re2::StringPiece(pattern.data(), pattern.size()), options);
  if (!re.ok()) {
    return Invalid(absl::StrCat("invalid regular expression ", Absl(pattern), ": ", re.error()));
  }
  return absl::OkStatus();
}

// Whether a matcher keeps streams that lack its label (matches "").
bool MatchesEmpty(const Matcher& matcher) {
  switch (matcher.op) {
    case MatchOp::kEq:
      return matcher.value.empty();
    case MatchOp::kNe:
      return !matcher.value.empty();
    case MatchOp::kRegex:
    case MatchOp::kNotRegex: {
      RE2::Options options;
      options.set_log_errors(false);
      const RE2 re(absl::StrCat("^(?:", matcher.value, ")$"), options);
      const bool matches = re.ok() && RE2::FullMatch("", re);
      return matcher.op == MatchOp::kRegex ? matches : !matches;
    }
  }
  return true;
}

absl::Status CheckLabelFilter(const LabelFilter& filter) {
  switch (filter.kind) {
    case LabelFilter::Kind::kAnd:
    case LabelFilter::Kind::kOr:
      STRATA_RETURN_IF_ERROR(CheckLabelFilter(*filter.lhs));
      return CheckLabelFilter(*filter.rhs);
    case LabelFilter::Kind::kString:
      if (filter.matcher.op == MatchOp::kRegex || filter.matcher.op == MatchOp::kNotRegex) {
        return CheckRegex(filter.matcher.value);
      }
      return absl::OkStatus();
    default:
      return absl::OkStatus();
  }
}

absl::Status CheckSelector(const LogSelector& log) {
  bool selective = false;
  for (const Matcher& matcher : log.matchers) {
    if (matcher.op == MatchOp::kRegex || matcher.op == MatchOp::kNotRegex) {
      STRATA_RETURN_IF_ERROR(CheckRegex(matcher.value));
    }
    if (!MatchesEmpty(matcher)) selective = true;
  }
  if (!selective) {
    return Invalid(
        "queries require at least one regexp or equality matcher that does not have an "
        "empty-compatible value. For instance, app=~\".*\" does not meet this requirement, but "
        "app=~\".+\" will");
  }
  for (const Stage& stage : log.stages) {
    switch (stage.kind) {
      case Stage::Kind::kLineFilter:
        if (stage.line_filter.op == LineFilterOp::kRegex ||
            stage.line_filter.op == LineFilterOp::kNotRegex) {
          for (const std::string& value : stage.line_filter.values) {
            STRATA_RETURN_IF_ERROR(CheckRegex(value));
          }
        }
        break;
      case Stage::Kind::kRegexp:
        STRATA_RETURN_IF_ERROR(CheckRegex(stage.text));
        break;
      case Stage::Kind::kLabelFilter:
        STRATA_RETURN_IF_ERROR(CheckLabelFilter(*stage.filter));
        break;
      case Stage::Kind::kDrop:
      case Stage::Kind::kKeep:
        for (const LabelSelection& selection : stage.selections) {
          if (selection.matcher.has_value() && (selection.matcher->op == MatchOp::kRegex ||
                                                selection.matcher->op == MatchOp::kNotRegex)) {
            STRATA_RETURN_IF_ERROR(CheckRegex(selection.matcher->value));
          }
        }
        break;
      default:
        break;
    }
  }
  return absl::OkStatus();
}

bool IsLog(const Expr& expr) { return expr.kind == Expr::Kind::kLog; }

absl::Status CheckRange(const Expr& expr) {
  STRATA_RETURN_IF_ERROR(CheckSelector(expr.log));
  if (expr.range_ns <= 0) return Invalid("a range must be positive");
  const UnwrapRule rule = UnwrapRuleOf(expr.function);
  if (rule == UnwrapRule::kRequired && !expr.unwrap.has_value()) {
    return Invalid(absl::StrCat("invalid aggregation ", expr.function, " without unwrap"));
  }
  if (rule == UnwrapRule::kRefused && expr.unwrap.has_value()) {
    return Invalid(absl::StrCat("invalid aggregation ", expr.function, " with unwrap"));
  }
  if (expr.unwrap.has_value()) {
    for (const auto& filter : expr.unwrap->filters)
      STRATA_RETURN_IF_ERROR(CheckLabelFilter(*filter));
  }
  const bool takes_parameter = expr.function == "quantile_over_time";
  if (takes_parameter && !expr.parameter.has_value()) {
    return Invalid("parameter required for operation quantile_over_time");
  }
  if (!takes_parameter && expr.parameter.has_value()) {
    return Invalid(absl::StrCat("parameter not supported for operation ", expr.function));
  }
  if (expr.grouping.present && !expr.unwrap.has_value()) {
    return Invalid(absl::StrCat("grouping not allowed for ", expr.function, " aggregation"));
  }
  return absl::OkStatus();
}

bool IsComparison(BinaryOp op) {
  return op == BinaryOp::kEq || op == BinaryOp::kNe || op == BinaryOp::kGt || op == BinaryOp::kGe ||
         op == BinaryOp::kLt || op == BinaryOp::kLe;
}

bool IsSetOperator(BinaryOp op) {
  return op == BinaryOp::kAnd || op == BinaryOp::kOr || op == BinaryOp::kUnless;
}

// A number after folding: a literal, or an operation between two of them.
bool IsScalar(const Expr& expr) {
  if (expr.kind == Expr::Kind::kNumber) return true;
  return expr.kind == Expr::Kind::kBinary && IsScalar(*expr.lhs) && IsScalar(*expr.rhs);
}

absl::Status CheckMetric(const Expr& expr);

absl::Status CheckOperand(const Expr& expr) {
  if (IsLog(expr)) return Invalid("a log query cannot be used where a metric query is needed");
  return CheckMetric(expr);
}

absl::Status CheckMetric(const Expr& expr) {
  switch (expr.kind) {
    case Expr::Kind::kLog:
      return CheckSelector(expr.log);
    case Expr::Kind::kRange:
      return CheckRange(expr);
    case Expr::Kind::kVectorAggregation: {
      STRATA_RETURN_IF_ERROR(CheckOperand(*expr.lhs));
      const bool takes_parameter = expr.function == "topk" || expr.function == "bottomk";
      if (takes_parameter) {
        if (!expr.parameter.has_value()) {
          return Invalid(absl::StrCat("parameter required for operation ", expr.function));
        }
        if (*expr.parameter <= 0 ||
            *expr.parameter != static_cast<double>(static_cast<int64_t>(*expr.parameter))) {
          return Invalid(absl::StrCat("invalid parameter for operation ", expr.function,
                                      ": a positive whole number is needed"));
        }
      } else if (expr.parameter.has_value()) {
        return Invalid(absl::StrCat("parameter not supported for operation ", expr.function));
      }
      return absl::OkStatus();
    }
    case Expr::Kind::kBinary:
      STRATA_RETURN_IF_ERROR(CheckOperand(*expr.lhs));
      STRATA_RETURN_IF_ERROR(CheckOperand(*expr.rhs));
      if (IsComparison(expr.op) && IsScalar(*expr.lhs) && IsScalar(*expr.rhs) &&
          !expr.matching.return_bool) {
        return Invalid("comparisons between scalars must use BOOL modifier");
      }
      if (IsSetOperator(expr.op) && (IsScalar(*expr.lhs) || IsScalar(*expr.rhs))) {
        return Invalid("set operators (and, or, unless) are not allowed on scalars");
      }
      return absl::OkStatus();
    case Expr::Kind::kLabelReplace:
      STRATA_RETURN_IF_ERROR(CheckOperand(*expr.lhs));
      return CheckRegex(expr.replace_args[3]);
    case Expr::Kind::kNumber:
    case Expr::Kind::kVector:
      return absl::OkStatus();
  }
  return absl::OkStatus();
}

}  // namespace

UnwrapRule UnwrapRuleOf(std::string_view function) {
  if (function == "rate") return UnwrapRule::kOptional;
  if (function == "count_over_time" || function == "bytes_over_time" || function == "bytes_rate" ||
      function == "absent_over_time") {
    return UnwrapRule::kRefused;
  }
  return UnwrapRule::kRequired;
}

absl::Status CheckLogQL(const Expr& expr) { return CheckMetric(expr); }

}  // namespace strata::compat::logql
