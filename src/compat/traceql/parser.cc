#include "compat/traceql/parser.h"

#include <optional>
#include <string>
#include <utility>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "common/absl_view.h"
#include "common/status_macros.h"
#include "compat/traceql/lexer.h"

namespace strata::compat::traceql {
namespace {

using FieldPtr = std::unique_ptr<FieldExpr>;
using SpansetPtr = std::unique_ptr<SpansetExpr>;

std::optional<Intrinsic> UnscopedIntrinsic(std::string_view word) {
  if (word == "name") return Intrinsic::kName;
  if (word == "status") return Intrinsic::kStatus;
  if (word == "statusMessage") return Intrinsic::kStatusMessage;
  if (word == "kind") return Intrinsic::kKind;
  if (word == "duration") return Intrinsic::kDuration;
  if (word == "rootName") return Intrinsic::kRootName;
  if (word == "rootServiceName") return Intrinsic::kRootServiceName;
  if (word == "traceDuration") return Intrinsic::kTraceDuration;
  return std::nullopt;
}

std::optional<Intrinsic> ScopedIntrinsic(std::string_view scope, std::string_view word) {
  if (scope == "span") {
    if (word == "name") return Intrinsic::kName;
    if (word == "status") return Intrinsic::kStatus;
    if (word == "statusMessage") return Intrinsic::kStatusMessage;
    if (word == "kind") return Intrinsic::kKind;
    if (word == "duration") return Intrinsic::kDuration;
    if (word == "id") return Intrinsic::kSpanId;
    if (word == "parentID") return Intrinsic::kParentId;
  } else if (scope == "trace") {
    if (word == "rootName") return Intrinsic::kRootName;
    if (word == "rootService") return Intrinsic::kRootServiceName;
    if (word == "duration") return Intrinsic::kTraceDuration;
    if (word == "id") return Intrinsic::kTraceId;
  } else if (scope == "event") {
    if (word == "name") return Intrinsic::kEventName;
    if (word == "timeSinceStart") return Intrinsic::kEventTimeSinceStart;
  } else if (scope == "link") {
    if (word == "traceID") return Intrinsic::kLinkTraceId;
    if (word == "spanID") return Intrinsic::kLinkSpanId;
  } else if (scope == "instrumentation") {
    if (word == "name") return Intrinsic::kScopeName;
    if (word == "version") return Intrinsic::kScopeVersion;
  }
  return std::nullopt;
}

std::optional<Static> EnumValue(std::string_view word) {
  static constexpr std::pair<std::string_view, int> kStatuses[] = {
      {"unset", kStatusUnset}, {"ok", kStatusOk}, {"error", kStatusError}};
  static constexpr std::pair<std::string_view, int> kKinds[] = {
      {"unspecified", 0}, {"internal", 1}, {"server", 2},
      {"client", 3},      {"producer", 4}, {"consumer", 5}};
  Static value;
  value.text = std::string(word);
  for (const auto& [text, number] : kStatuses) {
    if (word == text) {
      value.kind = StaticKind::kStatus;
      value.int_value = number;
      return value;
    }
  }
  for (const auto& [text, number] : kKinds) {
    if (word == text) {
      value.kind = StaticKind::kKind;
      value.int_value = number;
      return value;
    }
  }
  if (word == "true" || word == "false") {
    value.kind = StaticKind::kBool;
    value.bool_value = word == "true";
    return value;
  }
  if (word == "nil") {
    value.kind = StaticKind::kNil;
    return value;
  }
  return std::nullopt;
}

std::optional<FieldOp> ComparisonOp(TokenKind kind) {
  switch (kind) {
    case TokenKind::kEq:
      return FieldOp::kEq;
    case TokenKind::kNe:
      return FieldOp::kNe;
    case TokenKind::kGt:
      return FieldOp::kGt;
    case TokenKind::kGe:
      return FieldOp::kGe;
    case TokenKind::kLt:
      return FieldOp::kLt;
    case TokenKind::kLe:
      return FieldOp::kLe;
    case TokenKind::kRegex:
      return FieldOp::kRegex;
    case TokenKind::kNotRegex:
      return FieldOp::kNotRegex;
    default:
      return std::nullopt;
  }
}

// `value op field` as `field op' value`.
FieldOp Mirrored(FieldOp op) {
  switch (op) {
    case FieldOp::kGt:
      return FieldOp::kLt;
    case FieldOp::kGe:
      return FieldOp::kLe;
    case FieldOp::kLt:
      return FieldOp::kGt;
    case FieldOp::kLe:
      return FieldOp::kGe;
    default:
      return op;
  }
}

// Nanoseconds in one unit of a duration literal's suffix.
double UnitNanos(std::string_view text) {
  if (text.ends_with("ns")) return 1;
  if (text.ends_with("us") || text.ends_with("\xC2\xB5s")) return 1e3;
  if (text.ends_with("ms")) return 1e6;
  if (text.ends_with("s")) return 1e9;
  if (text.ends_with("m")) return 60e9;
  return 3600e9;  // h
}

size_t UnitBytes(std::string_view text) {
  if (text.ends_with("\xC2\xB5s")) return 3;
  if (text.ends_with("ns") || text.ends_with("us") || text.ends_with("ms")) return 2;
  return 1;
}

bool IsMetricsFunction(std::string_view word) {
  return word == "rate" || word == "count_over_time" || word == "min_over_time" ||
         word == "max_over_time" || word == "avg_over_time" || word == "sum_over_time" ||
         word == "quantile_over_time" || word == "histogram_over_time" || word == "compare" ||
         word == "topk" || word == "bottomk";
}

bool IsAggregate(std::string_view word) {
  return word == "count" || word == "avg" || word == "min" || word == "max" || word == "sum";
}

// The value of a bare scalar-filter term, to tell a comparison from a number.
enum class ScalarType { kNumber, kBool };

class Parser {
 public:
  explicit Parser(std::string_view text) : text_(text), lexer_(text) {}

  absl::StatusOr<Query> Run() {
    if (text_.size() > kMaxTraceQLBytes) {
      return absl::InvalidArgumentError(
          absl::StrCat("TraceQL: a query is at most ", kMaxTraceQLBytes, " bytes"));
    }
    STRATA_RETURN_IF_ERROR(Advance());
    if (tok_.kind == TokenKind::kEnd) return SyntaxError("a query is empty");
    Query query;
    STRATA_ASSIGN_OR_RETURN(query.spansets, SpansetOr(0));
    while (tok_.kind == TokenKind::kPipe) {
      STRATA_RETURN_IF_ERROR(Advance());
      STRATA_RETURN_IF_ERROR(Stage(&query));
    }
    if (tok_.kind != TokenKind::kEnd) return SyntaxError("expected the end of the query or |");
    if (unsupported_.has_value()) return absl::UnimplementedError(*unsupported_);
    return query;
  }

 private:
  absl::Status Advance() {
    STRATA_ASSIGN_OR_RETURN(tok_, lexer_.Next());
    return absl::OkStatus();
  }

  absl::Status SyntaxError(std::string_view what) const {
    std::string found = tok_.kind == TokenKind::kEnd
                            ? "the end of the query"
                            : absl::StrCat("'", std::string(tok_.text), "'");
    return absl::InvalidArgumentError(
        absl::StrCat("TraceQL: at column ", tok_.offset + 1, ": ", Absl(what), "; found ", found));
  }

  absl::Status Expect(TokenKind kind, std::string_view what) {
    if (tok_.kind != kind) return SyntaxError(absl::StrCat("expected ", Absl(what)));
    return Advance();
  }

  absl::Status Deeper(int depth) const {
    if (depth > kMaxTraceQLDepth) {
      return absl::InvalidArgumentError(absl::StrCat("TraceQL: at column ", tok_.offset + 1,
                                                     ": nested more than ", kMaxTraceQLDepth,
                                                     " deep"));
    }
    return absl::OkStatus();
  }

  // Remembers the first construct strata does not answer; parsing goes on
  // so that a syntax error later in the text is still reported as one.
  void Unsupported(size_t offset, std::string_view what) {
    if (unsupported_.has_value()) return;
    unsupported_ = absl::StrCat("TraceQL: at column ", offset + 1, ": ", Absl(what),
                                " is not supported by strata (docs/tempo.md lists what is)");
  }

  bool IsWord(std::string_view word) const {
    return tok_.kind == TokenKind::kIdent && tok_.text == word;
  }

  // ---- spansets ----

  absl::StatusOr<SpansetPtr> SpansetOr(int depth) {
    STRATA_RETURN_IF_ERROR(Deeper(depth));
    STRATA_ASSIGN_OR_RETURN(SpansetPtr lhs, SpansetAnd(depth));
    while (tok_.kind == TokenKind::kOr) {
      STRATA_RETURN_IF_ERROR(Advance());
      STRATA_ASSIGN_OR_RETURN(SpansetPtr rhs, SpansetAnd(depth));
      lhs = Combine(SpansetExpr::Kind::kOr, std::move(lhs), std::move(rhs));
    }
    return lhs;
  }

  absl::StatusOr<SpansetPtr> SpansetAnd(int depth) {
    STRATA_ASSIGN_OR_RETURN(SpansetPtr lhs, SpansetStructural(depth));
    while (tok_.kind == TokenKind::kAnd) {
      STRATA_RETURN_IF_ERROR(Advance());
      STRATA_ASSIGN_OR_RETURN(SpansetPtr rhs, SpansetStructural(depth));
      lhs = Combine(SpansetExpr::Kind::kAnd, std::move(lhs), std::move(rhs));
    }
    return lhs;
  }

  absl::StatusOr<SpansetPtr> SpansetStructural(int depth) {
    STRATA_ASSIGN_OR_RETURN(SpansetPtr lhs, SpansetPrimary(depth));
    while (tok_.kind == TokenKind::kStructural || tok_.kind == TokenKind::kGt ||
           tok_.kind == TokenKind::kLt || tok_.kind == TokenKind::kNotRegex) {
      Unsupported(tok_.offset, absl::StrCat("the structural operator ", std::string(tok_.text)));
      STRATA_RETURN_IF_ERROR(Advance());
      STRATA_ASSIGN_OR_RETURN(SpansetPtr rhs, SpansetPrimary(depth));
      lhs = Combine(SpansetExpr::Kind::kAnd, std::move(lhs), std::move(rhs));
    }
    return lhs;
  }

  static SpansetPtr Combine(SpansetExpr::Kind kind, SpansetPtr lhs, SpansetPtr rhs) {
    auto node = std::make_unique<SpansetExpr>();
    node->kind = kind;
    node->lhs = std::move(lhs);
    node->rhs = std::move(rhs);
    return node;
  }

  absl::StatusOr<SpansetPtr> SpansetPrimary(int depth) {
    if (tok_.kind == TokenKind::kLeftParen) {
      STRATA_RETURN_IF_ERROR(Advance());
      STRATA_ASSIGN_OR_RETURN(SpansetPtr inner, SpansetOr(depth + 1));
      STRATA_RETURN_IF_ERROR(Expect(TokenKind::kRightParen, "')'"));
      return inner;
    }
    if (tok_.kind != TokenKind::kLeftBrace) return SyntaxError("expected a spanset filter { ... }");
    STRATA_RETURN_IF_ERROR(Advance());
    auto filter = std::make_unique<SpansetExpr>();
    filter->kind = SpansetExpr::Kind::kFilter;
    if (tok_.kind != TokenKind::kRightBrace) {
      STRATA_ASSIGN_OR_RETURN(filter->condition, FieldOr(depth + 1));
    }
    STRATA_RETURN_IF_ERROR(Expect(TokenKind::kRightBrace, "'}' to end the spanset filter"));
    return filter;
  }

  // ---- conditions inside { } ----

  absl::StatusOr<FieldPtr> FieldOr(int depth) {
    STRATA_RETURN_IF_ERROR(Deeper(depth));
    STRATA_ASSIGN_OR_RETURN(FieldPtr lhs, FieldAnd(depth));
    while (tok_.kind == TokenKind::kOr) {
      STRATA_RETURN_IF_ERROR(Advance());
      STRATA_ASSIGN_OR_RETURN(FieldPtr rhs, FieldAnd(depth));
      lhs = Binary(FieldOp::kOr, std::move(lhs), std::move(rhs));
    }
    return lhs;
  }

  absl::StatusOr<FieldPtr> FieldAnd(int depth) {
    STRATA_ASSIGN_OR_RETURN(FieldPtr lhs, FieldCompare(depth));
    while (tok_.kind == TokenKind::kAnd) {
      STRATA_RETURN_IF_ERROR(Advance());
      STRATA_ASSIGN_OR_RETURN(FieldPtr rhs, FieldCompare(depth));
      lhs = Binary(FieldOp::kAnd, std::move(lhs), std::move(rhs));
    }
    return lhs;
  }

  static FieldPtr Binary(FieldOp op, FieldPtr lhs, FieldPtr rhs) {
    auto node = std::make_unique<FieldExpr>();
    node->kind = FieldExpr::Kind::kBinary;
    node->op = op;
    node->lhs = std::move(lhs);
    node->rhs = std::move(rhs);
    return node;
  }

  absl::StatusOr<FieldPtr> FieldCompare(int depth) {
    const size_t offset = tok_.offset;
    STRATA_ASSIGN_OR_RETURN(FieldPtr lhs, Arithmetic(depth));
    const std::optional<FieldOp> op = ComparisonOp(tok_.kind);
    if (!op.has_value()) return lhs;
    STRATA_RETURN_IF_ERROR(Advance());
    STRATA_ASSIGN_OR_RETURN(FieldPtr rhs, Arithmetic(depth));
    const bool lhs_field = lhs->kind == FieldExpr::Kind::kField;
    const bool rhs_field = rhs->kind == FieldExpr::Kind::kField;
    const bool lhs_static = lhs->kind == FieldExpr::Kind::kStatic;
    const bool rhs_static = rhs->kind == FieldExpr::Kind::kStatic;
    if (lhs_field && rhs_static) return Binary(*op, std::move(lhs), std::move(rhs));
    if (lhs_static && rhs_field) return Binary(Mirrored(*op), std::move(rhs), std::move(lhs));
    if (lhs_field && rhs_field) {
      Unsupported(offset, "a comparison of two fields");
    } else if (lhs_static && rhs_static) {
      Unsupported(offset, "a comparison of two values");
    } else {
      Unsupported(offset, "a comparison of a condition");
    }
    return Binary(*op, std::move(lhs), std::move(rhs));
  }

  // + - * / % ^: parsed, and refused.
  absl::StatusOr<FieldPtr> Arithmetic(int depth) {
    STRATA_ASSIGN_OR_RETURN(FieldPtr lhs, Unary(depth));
    while (tok_.kind == TokenKind::kPlus || tok_.kind == TokenKind::kMinus ||
           tok_.kind == TokenKind::kStar || tok_.kind == TokenKind::kSlash ||
           tok_.kind == TokenKind::kPercent || tok_.kind == TokenKind::kCaret) {
      Unsupported(tok_.offset, absl::StrCat("arithmetic (", std::string(tok_.text), ")"));
      STRATA_RETURN_IF_ERROR(Advance());
      STRATA_ASSIGN_OR_RETURN(FieldPtr rhs, Unary(depth));
      lhs = Binary(FieldOp::kAnd, std::move(lhs), std::move(rhs));
    }
    return lhs;
  }

  absl::StatusOr<FieldPtr> Unary(int depth) {
    STRATA_RETURN_IF_ERROR(Deeper(depth));
    if (tok_.kind == TokenKind::kNot) {
      STRATA_RETURN_IF_ERROR(Advance());
      STRATA_ASSIGN_OR_RETURN(FieldPtr operand, Unary(depth + 1));
      auto node = std::make_unique<FieldExpr>();
      node->kind = FieldExpr::Kind::kUnary;
      node->op = FieldOp::kNot;
      node->lhs = std::move(operand);
      return node;
    }
    if (tok_.kind == TokenKind::kMinus) {
      const size_t offset = tok_.offset;
      STRATA_RETURN_IF_ERROR(Advance());
      STRATA_ASSIGN_OR_RETURN(FieldPtr operand, Unary(depth + 1));
      if (operand->kind == FieldExpr::Kind::kStatic) {
        Static& value = operand->value;
        switch (value.kind) {
          case StaticKind::kInt:
          case StaticKind::kDuration:
            value.int_value = -value.int_value;
            value.text = absl::StrCat("-", value.text);
            return operand;
          case StaticKind::kFloat:
            value.float_value = -value.float_value;
            value.text = absl::StrCat("-", value.text);
            return operand;
          default:
            break;
        }
      }
      Unsupported(offset, "negation of anything but a number");
      return operand;
    }
    return Primary(depth);
  }

  absl::StatusOr<FieldPtr> Primary(int depth) {
    auto node = std::make_unique<FieldExpr>();
    switch (tok_.kind) {
      case TokenKind::kLeftParen: {
        STRATA_RETURN_IF_ERROR(Advance());
        STRATA_ASSIGN_OR_RETURN(FieldPtr inner, FieldOr(depth + 1));
        STRATA_RETURN_IF_ERROR(Expect(TokenKind::kRightParen, "')'"));
        return inner;
      }
      case TokenKind::kAttribute:
      case TokenKind::kScoped: {
        node->kind = FieldExpr::Kind::kField;
        STRATA_ASSIGN_OR_RETURN(node->field, FieldOf(tok_));
        STRATA_RETURN_IF_ERROR(Advance());
        return node;
      }
      case TokenKind::kString: {
        node->value.kind = StaticKind::kString;
        node->value.text = tok_.value;
        STRATA_RETURN_IF_ERROR(Advance());
        return node;
      }
      case TokenKind::kInt:
      case TokenKind::kFloat:
      case TokenKind::kDuration: {
        STRATA_ASSIGN_OR_RETURN(node->value, NumberOf(tok_));
        STRATA_RETURN_IF_ERROR(Advance());
        return node;
      }
      case TokenKind::kIdent: {
        if (const std::optional<Intrinsic> intrinsic = UnscopedIntrinsic(tok_.text)) {
          node->kind = FieldExpr::Kind::kField;
          node->field.intrinsic = *intrinsic;
          node->field.text = std::string(tok_.text);
          STRATA_RETURN_IF_ERROR(Advance());
          return node;
        }
        if (std::optional<Static> value = EnumValue(tok_.text)) {
          node->value = *std::move(value);
          STRATA_RETURN_IF_ERROR(Advance());
          return node;
        }
        return SyntaxError("expected an intrinsic, an attribute or a value");
      }
      default:
        return SyntaxError("expected an intrinsic, an attribute or a value");
    }
  }

  absl::StatusOr<Field> FieldOf(const Token& token) {
    Field field;
    field.text = std::string(token.text);
    if (token.kind == TokenKind::kScoped) {
      const std::optional<Intrinsic> intrinsic = ScopedIntrinsic(token.scope, token.value);
      if (!intrinsic.has_value()) {
        return SyntaxError(absl::StrCat(token.scope, ":", token.value, " is no intrinsic"));
      }
      field.intrinsic = *intrinsic;
      return field;
    }
    field.name = token.value;
    if (token.scope.empty()) {
      field.scope = Scope::kUnscoped;
    } else if (token.scope == "span") {
      field.scope = Scope::kSpan;
    } else if (token.scope == "resource") {
      field.scope = Scope::kResource;
    } else if (token.scope == "event") {
      field.scope = Scope::kEvent;
    } else if (token.scope == "link") {
      field.scope = Scope::kLink;
    } else if (token.scope == "instrumentation") {
      field.scope = Scope::kInstrumentation;
    } else {
      Unsupported(token.offset, "parent.");
    }
    return field;
  }

  absl::StatusOr<Static> NumberOf(const Token& token) {
    Static value;
    value.text = std::string(token.text);
    if (token.kind == TokenKind::kInt) {
      value.kind = StaticKind::kInt;
      if (!absl::SimpleAtoi(Absl(token.text), &value.int_value)) {
        // Larger than an int64: compared as a float.
        value.kind = StaticKind::kFloat;
        value.int_overflow = true;
        if (!absl::SimpleAtod(Absl(token.text), &value.float_value)) {
          return SyntaxError("a number out of range");
        }
      }
      return value;
    }
    if (token.kind == TokenKind::kFloat) {
      value.kind = StaticKind::kFloat;
      if (!absl::SimpleAtod(Absl(token.text), &value.float_value))
        return SyntaxError("a bad number");
      return value;
    }
    const std::string_view number = token.text.substr(0, token.text.size() - UnitBytes(token.text));
    double amount = 0;
    if (!absl::SimpleAtod(Absl(number), &amount)) return SyntaxError("a bad duration");
    const double nanos = amount * UnitNanos(token.text);
    if (!(nanos < 9.2e18)) return SyntaxError("a duration out of range");
    value.kind = StaticKind::kDuration;
    value.int_value = static_cast<int64_t>(nanos);
    return value;
  }

  // ---- pipeline stages ----

  absl::Status Stage(Query* query) {
    const size_t offset = tok_.offset;
    if (IsWord("select")) {
      STRATA_RETURN_IF_ERROR(Advance());
      std::vector<FieldPtr> fields;
      STRATA_RETURN_IF_ERROR(FieldList(&fields));
      for (FieldPtr& field : fields) {
        if (field->kind != FieldExpr::Kind::kField) {
          Unsupported(offset, "select() of anything but intrinsics and attributes");
          continue;
        }
        query->select.push_back(std::move(field->field));
      }
      return absl::OkStatus();
    }
    if (IsWord("by")) {
      Unsupported(offset, "by()");
      STRATA_RETURN_IF_ERROR(Advance());
      std::vector<FieldPtr> fields;
      return FieldList(&fields);
    }
    if (IsWord("coalesce")) {
      Unsupported(offset, "coalesce()");
      STRATA_RETURN_IF_ERROR(Advance());
      STRATA_RETURN_IF_ERROR(Expect(TokenKind::kLeftParen, "'('"));
      return Expect(TokenKind::kRightParen, "')'");
    }
    if (tok_.kind == TokenKind::kIdent && IsMetricsFunction(tok_.text)) return MetricsStage();
    if (StartsSpanset()) {
      Unsupported(offset, "a spanset filter after |");
      return SpansetOr(0).status();
    }
    Unsupported(offset, "an aggregate filter");
    STRATA_ASSIGN_OR_RETURN(const ScalarType type, ScalarOr(0));
    if (type != ScalarType::kBool) {
      return absl::InvalidArgumentError(absl::StrCat(
          "TraceQL: at column ", offset + 1, ": an aggregate must be compared with a value"));
    }
    return absl::OkStatus();
  }

  // Whether the tokens ahead (past any '(') open a spanset filter.
  bool StartsSpanset() const {
    if (tok_.kind == TokenKind::kLeftBrace) return true;
    if (tok_.kind != TokenKind::kLeftParen) return false;
    Lexer ahead = lexer_;
    for (int i = 0; i < kMaxTraceQLDepth; ++i) {
      absl::StatusOr<Token> next = ahead.Next();
      if (!next.ok()) return false;
      if (next->kind == TokenKind::kLeftBrace) return true;
      if (next->kind != TokenKind::kLeftParen) return false;
    }
    return false;
  }

  // ( field, ... ): at least one.
  absl::Status FieldList(std::vector<FieldPtr>* fields) {
    STRATA_RETURN_IF_ERROR(Expect(TokenKind::kLeftParen, "'('"));
    while (true) {
      STRATA_ASSIGN_OR_RETURN(FieldPtr field, FieldOr(1));
      fields->push_back(std::move(field));
      if (tok_.kind != TokenKind::kComma) break;
      STRATA_RETURN_IF_ERROR(Advance());
    }
    return Expect(TokenKind::kRightParen, "')' or ','");
  }

  absl::Status MetricsStage() {
    const std::string function(tok_.text);
    Unsupported(tok_.offset, absl::StrCat("the metrics function ", function, "()"));
    STRATA_RETURN_IF_ERROR(Advance());
    STRATA_RETURN_IF_ERROR(Expect(TokenKind::kLeftParen, "'('"));
    if (function == "topk" || function == "bottomk") {
      STRATA_RETURN_IF_ERROR(Expect(TokenKind::kInt, "a whole number"));
    } else if (function == "compare") {
      STRATA_RETURN_IF_ERROR(SpansetOr(1).status());
      while (tok_.kind == TokenKind::kComma) {
        STRATA_RETURN_IF_ERROR(Advance());
        STRATA_RETURN_IF_ERROR(Number());
      }
    } else if (function != "rate" && function != "count_over_time") {
      STRATA_RETURN_IF_ERROR(FieldOr(1).status());
      if (function == "quantile_over_time") {
        if (tok_.kind != TokenKind::kComma) return SyntaxError("expected ', quantile'");
        while (tok_.kind == TokenKind::kComma) {
          STRATA_RETURN_IF_ERROR(Advance());
          STRATA_RETURN_IF_ERROR(Number());
        }
      }
    }
    STRATA_RETURN_IF_ERROR(Expect(TokenKind::kRightParen, "')'"));
    if (IsWord("by")) {
      STRATA_RETURN_IF_ERROR(Advance());
      std::vector<FieldPtr> fields;
      STRATA_RETURN_IF_ERROR(FieldList(&fields));
    }
    return absl::OkStatus();
  }

  absl::Status Number() {
    if (tok_.kind != TokenKind::kInt && tok_.kind != TokenKind::kFloat) {
      return SyntaxError("expected a number");
    }
    return Advance();
  }

  // Aggregate filters: comparisons of count(), avg(f), min(f), max(f),
  // sum(f), numbers and durations, joined by && and ||.
  absl::StatusOr<ScalarType> ScalarOr(int depth) {
    STRATA_RETURN_IF_ERROR(Deeper(depth));
    STRATA_ASSIGN_OR_RETURN(ScalarType lhs, ScalarAnd(depth));
    while (tok_.kind == TokenKind::kOr) {
      STRATA_RETURN_IF_ERROR(Advance());
      STRATA_ASSIGN_OR_RETURN(const ScalarType rhs, ScalarAnd(depth));
      if (lhs != ScalarType::kBool || rhs != ScalarType::kBool) {
        return SyntaxError("|| joins comparisons");
      }
    }
    return lhs;
  }

  absl::StatusOr<ScalarType> ScalarAnd(int depth) {
    STRATA_ASSIGN_OR_RETURN(ScalarType lhs, ScalarCompare(depth));
    while (tok_.kind == TokenKind::kAnd) {
      STRATA_RETURN_IF_ERROR(Advance());
      STRATA_ASSIGN_OR_RETURN(const ScalarType rhs, ScalarCompare(depth));
      if (lhs != ScalarType::kBool || rhs != ScalarType::kBool) {
        return SyntaxError("&& joins comparisons");
      }
    }
    return lhs;
  }

  absl::StatusOr<ScalarType> ScalarCompare(int depth) {
    STRATA_ASSIGN_OR_RETURN(const ScalarType lhs, ScalarArithmetic(depth));
    if (!ComparisonOp(tok_.kind).has_value() || tok_.kind == TokenKind::kRegex ||
        tok_.kind == TokenKind::kNotRegex) {
      return lhs;
    }
    STRATA_RETURN_IF_ERROR(Advance());
    STRATA_ASSIGN_OR_RETURN(const ScalarType rhs, ScalarArithmetic(depth));
    if (lhs != ScalarType::kNumber || rhs != ScalarType::kNumber) {
      return SyntaxError("a comparison of aggregates takes numbers");
    }
    return ScalarType::kBool;
  }

  absl::StatusOr<ScalarType> ScalarArithmetic(int depth) {
    STRATA_ASSIGN_OR_RETURN(const ScalarType lhs, ScalarPrimary(depth));
    ScalarType type = lhs;
    while (tok_.kind == TokenKind::kPlus || tok_.kind == TokenKind::kMinus ||
           tok_.kind == TokenKind::kStar || tok_.kind == TokenKind::kSlash ||
           tok_.kind == TokenKind::kPercent || tok_.kind == TokenKind::kCaret) {
      STRATA_RETURN_IF_ERROR(Advance());
      STRATA_ASSIGN_OR_RETURN(const ScalarType rhs, ScalarPrimary(depth));
      if (type != ScalarType::kNumber || rhs != ScalarType::kNumber) {
        return SyntaxError("arithmetic takes numbers");
      }
    }
    return type;
  }

  absl::StatusOr<ScalarType> ScalarPrimary(int depth) {
    switch (tok_.kind) {
      case TokenKind::kLeftParen: {
        STRATA_RETURN_IF_ERROR(Advance());
        STRATA_ASSIGN_OR_RETURN(const ScalarType inner, ScalarOr(depth + 1));
        STRATA_RETURN_IF_ERROR(Expect(TokenKind::kRightParen, "')'"));
        return inner;
      }
      case TokenKind::kMinus: {
        STRATA_RETURN_IF_ERROR(Advance());
        return ScalarPrimary(depth + 1);
      }
      case TokenKind::kInt:
      case TokenKind::kFloat:
      case TokenKind::kDuration: {
        STRATA_RETURN_IF_ERROR(Advance());
        return ScalarType::kNumber;
      }
      case TokenKind::kIdent:
        if (IsAggregate(tok_.text)) {
          const bool count = tok_.text == "count";
          STRATA_RETURN_IF_ERROR(Advance());
          STRATA_RETURN_IF_ERROR(Expect(TokenKind::kLeftParen, "'('"));
          if (!count) STRATA_RETURN_IF_ERROR(FieldOr(depth + 1).status());
          STRATA_RETURN_IF_ERROR(Expect(TokenKind::kRightParen, "')'"));
          return ScalarType::kNumber;
        }
        [[fallthrough]];
      default:
        return SyntaxError("expected an aggregate such as count() or avg(duration), or a number");
    }
  }

  const std::string_view text_;
  Lexer lexer_;
  Token tok_;
  std::optional<std::string> unsupported_;
};

}  // namespace

absl::StatusOr<Query> ParseTraceQL(std::string_view text) { return Parser(text).Run(); }

}  // namespace strata::compat::traceql
