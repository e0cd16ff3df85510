#include "compat/promql/ast.h"

#include <cmath>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "compat/promql/functions.h"
#include "compat/promql/result_json.h"

namespace strata::compat::promql {

const char* ValueTypeName(ValueType type) {
  switch (type) {
    case ValueType::kNone:
      return "none";
    case ValueType::kScalar:
      return "scalar";
    case ValueType::kVector:
      return "vector";
    case ValueType::kMatrix:
      return "matrix";
    case ValueType::kString:
      return "string";
  }
  return "none";
}

const char* ValueTypeDocName(ValueType type) {
  switch (type) {
    case ValueType::kVector:
      return "instant vector";
    case ValueType::kMatrix:
      return "range vector";
    default:
      return ValueTypeName(type);
  }
}

bool IsComparison(BinaryOp op) {
  return op == BinaryOp::kEq || op == BinaryOp::kNe || op == BinaryOp::kGt || op == BinaryOp::kLt ||
         op == BinaryOp::kGe || op == BinaryOp::kLe;
}

bool IsSetOperator(BinaryOp op) {
  return op == BinaryOp::kAnd || op == BinaryOp::kOr || op == BinaryOp::kUnless;
}

const char* BinaryOpText(BinaryOp op) {
  switch (op) {
    case BinaryOp::kAdd:
      return "+";
    case BinaryOp::kSub:
      return "-";
    case BinaryOp::kMul:
      return "*";
    case BinaryOp::kDiv:
      return "/";
    case BinaryOp::kMod:
      return "%";
    case BinaryOp::kPow:
      return "^";
    case BinaryOp::kAtan2:
      return "atan2";
    case BinaryOp::kEq:
      return "==";
    case BinaryOp::kNe:
      return "!=";
    case BinaryOp::kGt:
      return ">";
    case BinaryOp::kLt:
      return "<";
    case BinaryOp::kGe:
      return ">=";
    case BinaryOp::kLe:
      return "<=";
    case BinaryOp::kAnd:
      return "and";
    case BinaryOp::kOr:
      return "or";
    case BinaryOp::kUnless:
      return "unless";
  }
  return "?";
}

const char* AggregateOpText(AggregateOp op) {
  switch (op) {
    case AggregateOp::kSum:
      return "sum";
    case AggregateOp::kAvg:
      return "avg";
    case AggregateOp::kMin:
      return "min";
    case AggregateOp::kMax:
      return "max";
    case AggregateOp::kCount:
      return "count";
    case AggregateOp::kGroup:
      return "group";
    case AggregateOp::kStddev:
      return "stddev";
    case AggregateOp::kStdvar:
      return "stdvar";
    case AggregateOp::kTopk:
      return "topk";
    case AggregateOp::kBottomk:
      return "bottomk";
    case AggregateOp::kQuantile:
      return "quantile";
    case AggregateOp::kCountValues:
      return "count_values";
  }
  return "?";
}

namespace {

std::string Quote(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') out.push_back('\\');
    if (c == '\n') {
      out += "\\n";
      continue;
    }
    out.push_back(c);
  }
  out.push_back('"');
  return out;
}

std::string DurationText(int64_t ms) {
  if (ms % 1000 != 0) return absl::StrCat(ms, "ms");
  int64_t s = ms / 1000;
  std::string out;
  if (s >= 3600 && s % 3600 == 0) return absl::StrCat(s / 3600, "h");
  if (s >= 60 && s % 60 == 0) return absl::StrCat(s / 60, "m");
  return absl::StrCat(s, "s");
}

std::string Modifiers(const Expr& e) {
  std::string out;
  if (e.offset_ms < 0) absl::StrAppend(&out, " offset -", DurationText(-e.offset_ms));
  if (e.offset_ms > 0) absl::StrAppend(&out, " offset ", DurationText(e.offset_ms));
  if (e.at == AtKind::kStart) absl::StrAppend(&out, " @ start()");
  if (e.at == AtKind::kEnd) absl::StrAppend(&out, " @ end()");
  if (e.at == AtKind::kTime) {
    absl::StrAppend(&out, " @ ", FormatFloat(static_cast<double>(e.at_ms) / 1000));
  }
  return out;
}

std::string SelectorText(const Expr& e) {
  std::vector<std::string> parts;
  for (const LabelMatcher& m : e.matchers) {
    if (m.name == "__name__" && m.type == MatchType::kEqual && m.value == e.metric_name) continue;
    const char* op = m.type == MatchType::kEqual        ? "="
                     : m.type == MatchType::kNotEqual   ? "!="
                     : m.type == MatchType::kRegexMatch ? "=~"
                                                        : "!~";
    parts.push_back(absl::StrCat(m.name, op, Quote(m.value)));
  }
  std::string out = e.metric_name;
  if (!parts.empty() || out.empty()) absl::StrAppend(&out, "{", absl::StrJoin(parts, ", "), "}");
  return out;
}

}  // namespace

std::string ExprToString(const Expr& e) {
  switch (e.kind) {
    case Expr::Kind::kNumber:
      return FormatFloat(e.number);
    case Expr::Kind::kString:
      return Quote(e.text);
    case Expr::Kind::kVectorSelector:
      return SelectorText(e) + Modifiers(e);
    case Expr::Kind::kMatrixSelector:
      return absl::StrCat(SelectorText(*e.selector), "[", DurationText(e.range_ms), "]",
                          Modifiers(*e.selector));
    case Expr::Kind::kSubquery:
      return absl::StrCat(ExprToString(*e.lhs), "[", DurationText(e.range_ms), ":",
                          e.step_ms > 0 ? DurationText(e.step_ms) : "", "]", Modifiers(e));
    case Expr::Kind::kCall: {
      std::vector<std::string> args;
      for (const auto& a : e.args) args.push_back(ExprToString(*a));
      return absl::StrCat(e.function->name, "(", absl::StrJoin(args, ", "), ")");
    }
    case Expr::Kind::kAggregate: {
      std::string out = AggregateOpText(e.aggregate);
      if (!e.grouping.empty() || e.without) {
        absl::StrAppend(&out, e.without ? " without (" : " by (", absl::StrJoin(e.grouping, ", "),
                        ")");
      }
      absl::StrAppend(&out, " (");
      if (e.param != nullptr) absl::StrAppend(&out, ExprToString(*e.param), ", ");
      absl::StrAppend(&out, ExprToString(*e.lhs), ")");
      return out;
    }
    case Expr::Kind::kUnary:
      return "-" + ExprToString(*e.lhs);
    case Expr::Kind::kParen:
      return "(" + ExprToString(*e.lhs) + ")";
    case Expr::Kind::kBinary: {
      std::string op = BinaryOpText(e.op);
      if (e.return_bool) op += " bool";
      if (e.has_matching && (e.matching.on || !e.matching.labels.empty())) {
        absl::StrAppend(&op, e.matching.on ? " on(" : " ignoring(",
                        absl::StrJoin(e.matching.labels, ", "), ")");
        if (e.matching.card == Cardinality::kManyToOne ||
            e.matching.card == Cardinality::kOneToMany) {
          absl::StrAppend(
              &op, e.matching.card == Cardinality::kManyToOne ? " group_left(" : " group_right(",
              absl::StrJoin(e.matching.include, ", "), ")");
        }
      }
      return absl::StrCat(ExprToString(*e.lhs), " ", op, " ", ExprToString(*e.rhs));
    }
  }
  return "";
}

}  // namespace strata::compat::promql
