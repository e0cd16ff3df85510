#include "compat/promql/parser.h"

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "compat/promql/functions.h"
#include "compat/promql/lexer.h"
#include "re2/re2.h"

namespace strata::compat::promql {
namespace {

bool IsAggregator(absl::string_view lower, AggregateOp* op) {
  static const std::pair<absl::string_view, AggregateOp> kOps[] = {
      {"sum", AggregateOp::kSum},           {"avg", AggregateOp::kAvg},
      {"min", AggregateOp::kMin},           {"max", AggregateOp::kMax},
      {"count", AggregateOp::kCount},       {"group", AggregateOp::kGroup},
      {"stddev", AggregateOp::kStddev},     {"stdvar", AggregateOp::kStdvar},
      {"topk", AggregateOp::kTopk},         {"bottomk", AggregateOp::kBottomk},
      {"quantile", AggregateOp::kQuantile}, {"count_values", AggregateOp::kCountValues},
  };
  for (const auto& [name, value] : kOps) {
    if (lower == name) {
      *op = value;
      return true;
    }
  }
  return false;
}

bool HasParam(AggregateOp op) {
  return op == AggregateOp::kTopk || op == AggregateOp::kBottomk || op == AggregateOp::kQuantile ||
         op == AggregateOp::kCountValues;
}

int Precedence(BinaryOp op) {
  switch (op) {
    case BinaryOp::kOr:
      return 1;
    case BinaryOp::kAnd:
    case BinaryOp::kUnless:
      return 2;
    case BinaryOp::kEq:
    case BinaryOp::kNe:
    case BinaryOp::kGt:
    case BinaryOp::kLt:
    case BinaryOp::kGe:
    case BinaryOp::kLe:
      return 3;
    case BinaryOp::kAdd:
    case BinaryOp::kSub:
      return 4;
    case BinaryOp::kMul:
    case BinaryOp::kDiv:
    case BinaryOp::kMod:
    case BinaryOp::kAtan2:
      return 5;
    case BinaryOp::kPow:
      return 6;
  }
  return 0;
}

// Go's strconv.ParseInt(s, 0, 64) then ParseFloat, as Prometheus reads a
// number token.
absl::StatusOr<double> ParseNumber(absl::string_view text) {
  const std::string s(text);
  const std::string lower = absl::AsciiStrToLower(s);
  if (lower == "inf" || lower == "+inf") return std::numeric_limits<double>::infinity();
  if (lower == "nan") return std::numeric_limits<double>::quiet_NaN();
  auto parse_int = [&](absl::string_view digits, int base, double* out) {
    if (digits.empty()) return false;
    unsigned long long value = 0;
    for (char c : digits) {
      int d = 0;
      if (c >= '0' && c <= '9') {
        d = c - '0';
      } else if (c >= 'a' && c <= 'f') {
        d = c - 'a' + 10;
      } else if (c >= 'A' && c <= 'F') {
        d = c - 'A' + 10;
      } else {
        return false;
      }
      if (d >= base) return false;
      if (value > (static_cast<unsigned long long>(std::numeric_limits<int64_t>::max()) -
                   static_cast<unsigned long long>(d)) /
                      static_cast<unsigned long long>(base)) {
        return false;
      }
      value = value * base + d;
    }
    *out = static_cast<double>(value);
    return true;
  };
  double value = 0;
  if (lower.size() > 2 && lower[0] == '0' && lower[1] == 'x') {
    if (parse_int(absl::string_view(lower).substr(2), 16, &value)) return value;
    return absl::InvalidArgumentError(absl::StrCat("error parsing number: ", s));
  }
  if (lower.size() > 1 && lower[0] == '0' &&
      parse_int(absl::string_view(lower).substr(1), 8, &value)) {
    return value;
  }
  if (parse_int(lower, 10, &value)) return value;
  errno = 0;
  char* end = nullptr;
  const double f = std::strtod(s.c_str(), &end);
  if (end != s.c_str() + s.size() || s.empty() || (errno == ERANGE && std::isinf(f))) {
    return absl::InvalidArgumentError(absl::StrCat("error parsing number: ", s));
  }
  return f;
}

class Parser {
 public:
  Parser(absl::string_view query, std::vector<Token> tokens)
      : query_(query), tokens_(std::move(tokens)) {}

  absl::StatusOr<std::unique_ptr<Expr>> Run() {
    if (Peek().kind == TokenKind::kEnd) return Error(0, "no expression found in input");
    absl::StatusOr<std::unique_ptr<Expr>> expr = ParseExpr(0);
    if (!expr.ok()) return expr.status();
    if (Peek().kind != TokenKind::kEnd) return Unexpected("");
    return expr;
  }

 private:
  const Token& Peek(size_t ahead = 0) const {
    const size_t i = pos_ + ahead;
    return i < tokens_.size() ? tokens_[i] : tokens_.back();
  }
  const Token& Take() {
    const Token& t = tokens_[pos_];
    if (pos_ + 1 < tokens_.size()) ++pos_;
    return t;
  }
  bool PeekKeyword(absl::string_view keyword, size_t ahead = 0) const {
    const Token& t = Peek(ahead);
    return t.kind == TokenKind::kIdentifier && absl::AsciiStrToLower(t.text) == keyword;
  }

  absl::Status Error(size_t pos, absl::string_view message) const {
    return absl::InvalidArgumentError(
        absl::StrCat(PositionText(query_, pos), ": parse error: ", message));
  }
  absl::Status Unexpected(absl::string_view context) const {
    const Token& t = Peek();
    std::string what =
        t.kind == TokenKind::kEnd ? "end of input" : absl::StrCat("\"", t.text, "\"");
    if (t.kind == TokenKind::kString) what = "string";
    return Error(t.pos, context.empty() ? absl::StrCat("unexpected ", what)
                                        : absl::StrCat("unexpected ", what, " in ", context));
  }
  absl::Status Expect(TokenKind kind, absl::string_view context) {
    if (Peek().kind != kind) return Unexpected(context);
    Take();
    return absl::OkStatus();
  }

  // The binary operator at the current token, if any.
  bool PeekBinaryOp(BinaryOp* op) const {
    const Token& t = Peek();
    switch (t.kind) {
      case TokenKind::kPlus:
        *op = BinaryOp::kAdd;
        return true;
      case TokenKind::kMinus:
        *op = BinaryOp::kSub;
        return true;
      case TokenKind::kStar:
        *op = BinaryOp::kMul;
        return true;
      case TokenKind::kSlash:
        *op = BinaryOp::kDiv;
        return true;
      case TokenKind::kPercent:
        *op = BinaryOp::kMod;
        return true;
      case TokenKind::kCaret:
        *op = BinaryOp::kPow;
        return true;
      case TokenKind::kEqEq:
        *op = BinaryOp::kEq;
        return true;
      case TokenKind::kNe:
        *op = BinaryOp::kNe;
        return true;
      case TokenKind::kGt:
        *op = BinaryOp::kGt;
        return true;
      case TokenKind::kLt:
        *op = BinaryOp::kLt;
        return true;
      case TokenKind::kGe:
        *op = BinaryOp::kGe;
        return true;
      case TokenKind::kLe:
        *op = BinaryOp::kLe;
        return true;
      case TokenKind::kIdentifier: {
        const std::string lower = absl::AsciiStrToLower(t.text);
        if (lower == "and")
          *op = BinaryOp::kAnd;
        else if (lower == "or")
          *op = BinaryOp::kOr;
        else if (lower == "unless")
          *op = BinaryOp::kUnless;
        else if (lower == "atan2")
          *op = BinaryOp::kAtan2;
        else
          return false;
        return true;
      }
      default:
        return false;
    }
  }

  absl::StatusOr<std::unique_ptr<Expr>> ParseExpr(int min_precedence) {
    if (++depth_ > kMaxNestingDepth) return Error(Peek().pos, "expression nested too deeply");
    absl::StatusOr<std::unique_ptr<Expr>> lhs = ParseUnary();
    if (!lhs.ok()) return lhs;
    std::unique_ptr<Expr> left = *std::move(lhs);
    BinaryOp op;
    // Each operator of a left-associative chain nests the tree one level
    // deeper, as parentheses do: the evaluator recurses as deep.
    int chain = 0;
    while (PeekBinaryOp(&op) && Precedence(op) >= min_precedence) {
      if (depth_ + ++chain > kMaxNestingDepth) {
        return Error(Peek().pos, "expression nested too deeply");
      }
      const size_t op_pos = Take().pos;
      auto node = std::make_unique<Expr>();
      node->kind = Expr::Kind::kBinary;
      node->op = op;
      absl::Status modifiers = ParseBinaryModifiers(node.get());
      if (!modifiers.ok()) return modifiers;
      // `^` is right-associative, the others left-associative.
      const int next = op == BinaryOp::kPow ? Precedence(op) : Precedence(op) + 1;
      absl::StatusOr<std::unique_ptr<Expr>> rhs = ParseExpr(next);
      if (!rhs.ok()) return rhs;
      node->lhs = std::move(left);
      node->rhs = *std::move(rhs);
      absl::Status checked = CheckBinary(node.get(), op_pos);
      if (!checked.ok()) return checked;
      left = std::move(node);
    }
    --depth_;
    return left;
  }

  absl::StatusOr<std::vector<std::string>> ParseLabelList(absl::string_view context) {
    std::vector<std::string> labels;
    if (Peek().kind != TokenKind::kLeftParen) return Unexpected(context);
    Take();
    while (true) {
      if (Peek().kind == TokenKind::kRightParen) {
        Take();
        return labels;
      }
      const Token& t = Peek();
      if (t.kind != TokenKind::kIdentifier) return Unexpected(context);
      if (!IsValidLabelName(t.text)) {
        return Error(t.pos,
                     absl::StrCat("unexpected \"", t.text, "\" in ", context, ", expected label"));
      }
      labels.push_back(t.text);
      Take();
      if (Peek().kind == TokenKind::kComma) {
        Take();
      } else if (Peek().kind != TokenKind::kRightParen) {
        return Unexpected(context);
      }
    }
  }

  absl::Status ParseBinaryModifiers(Expr* node) {
    if (PeekKeyword("bool")) {
      Take();
      node->return_bool = true;
    }
    if (PeekKeyword("on") || PeekKeyword("ignoring")) {
      node->matching.on = PeekKeyword("on");
      Take();
      absl::StatusOr<std::vector<std::string>> labels = ParseLabelList("grouping opts");
      if (!labels.ok()) return labels.status();
      node->matching.labels = *std::move(labels);
      if (PeekKeyword("group_left") || PeekKeyword("group_right")) {
        node->matching.card =
            PeekKeyword("group_left") ? Cardinality::kManyToOne : Cardinality::kOneToMany;
        Take();
        if (Peek().kind == TokenKind::kLeftParen) {
          absl::StatusOr<std::vector<std::string>> include = ParseLabelList("grouping opts");
          if (!include.ok()) return include.status();
          node->matching.include = *std::move(include);
        }
      }
    }
    return absl::OkStatus();
  }

  absl::StatusOr<std::unique_ptr<Expr>> ParseUnary() {
    const Token& t = Peek();
    if (t.kind == TokenKind::kMinus || t.kind == TokenKind::kPlus) {
      const bool minus = t.kind == TokenKind::kMinus;
      const size_t pos = Take().pos;
      // The operand binds like `*`: only `^` (and postfix modifiers) bind
      // tighter.
      absl::StatusOr<std::unique_ptr<Expr>> operand = ParseExpr(Precedence(BinaryOp::kPow));
      if (!operand.ok()) return operand;
      std::unique_ptr<Expr> inner = *std::move(operand);
      if (inner->kind == Expr::Kind::kNumber) {
        if (minus) inner->number = -inner->number;
        return inner;
      }
      if (inner->type != ValueType::kScalar && inner->type != ValueType::kVector) {
        return Error(pos,
                     "unary expression only allowed on expressions of type scalar or instant "
                     "vector, got \"" +
                         std::string(ValueTypeDocName(inner->type)) + "\"");
      }
      if (!minus) return inner;
      auto node = std::make_unique<Expr>();
      node->kind = Expr::Kind::kUnary;
      node->type = inner->type;
      node->lhs = std::move(inner);
      return node;
    }
    absl::StatusOr<std::unique_ptr<Expr>> primary = ParsePrimary();
    if (!primary.ok()) return primary;
    return ParsePostfix(*std::move(primary));
  }

  absl::StatusOr<std::unique_ptr<Expr>> ParsePostfix(std::unique_ptr<Expr> expr) {
    while (true) {
      if (Peek().kind == TokenKind::kLeftBracket) {
        absl::StatusOr<std::unique_ptr<Expr>> ranged = ParseRange(std::move(expr));
        if (!ranged.ok()) return ranged;
        expr = *std::move(ranged);
      } else if (PeekKeyword("offset")) {
        const size_t pos = Take().pos;
        bool negative = false;
        if (Peek().kind == TokenKind::kMinus) {
          Take();
          negative = true;
        }
        if (Peek().kind != TokenKind::kDuration) return Unexpected("offset");
        absl::StatusOr<int64_t> ms = ParseDurationMs(Peek().text);
        if (!ms.ok()) return Error(Peek().pos, ms.status().message());
        Take();
        Expr* target = ModifierTarget(expr.get());
        if (target == nullptr) {
          return Error(
              pos,
              "offset modifier must be preceded by an instant vector selector or range vector "
              "selector or a subquery");
        }
        // A zero offset is no duration, so a set offset is never 0.
        if (target->offset_ms != 0) return Error(pos, "offset may not be set multiple times");
        target->offset_ms = negative ? -*ms : *ms;
      } else if (Peek().kind == TokenKind::kAt) {
        const size_t pos = Take().pos;
        Expr* target = ModifierTarget(expr.get());
        if (target == nullptr) {
          return Error(pos,
                       "@ modifier must be preceded by an instant vector selector or range vector "
                       "selector or a subquery");
        }
        if (target->at != AtKind::kNone)
          return Error(pos, "@ <timestamp> may not be set multiple times");
        if (PeekKeyword("start") || PeekKeyword("end")) {
          target->at = PeekKeyword("start") ? AtKind::kStart : AtKind::kEnd;
          Take();
          absl::Status open = Expect(TokenKind::kLeftParen, "@ modifier");
          if (!open.ok()) return open;
          absl::Status close = Expect(TokenKind::kRightParen, "@ modifier");
          if (!close.ok()) return close;
          continue;
        }
        bool negative = false;
        if (Peek().kind == TokenKind::kMinus || Peek().kind == TokenKind::kPlus) {
          negative = Take().kind == TokenKind::kMinus;
        }
        const Token& t = Peek();
        double seconds = 0;
        if (t.kind == TokenKind::kNumber ||
            (t.kind == TokenKind::kIdentifier && (PeekKeyword("inf") || PeekKeyword("nan")))) {
          absl::StatusOr<double> n = ParseNumber(t.text);
          if (!n.ok()) return Error(t.pos, n.status().message());
          seconds = negative ? -*n : *n;
          Take();
        } else {
          return Unexpected("@");
        }
        if (!std::isfinite(seconds) || seconds >= 9.2233720368547758e18 ||
            seconds <= -9.2233720368547758e18 ||
            std::abs(seconds * 1000) >= 9.2233720368547758e18) {
          return Error(pos, absl::StrCat("timestamp out of bounds for @ modifier: ", seconds));
        }
        target->at = AtKind::kTime;
        target->at_ms = static_cast<int64_t>(std::round(seconds * 1000));
      } else {
        return expr;
      }
    }
  }

  // The node an offset or @ after `expr` belongs to.
  static Expr* ModifierTarget(Expr* expr) {
    switch (expr->kind) {
      case Expr::Kind::kVectorSelector:
      case Expr::Kind::kSubquery:
        return expr;
      case Expr::Kind::kMatrixSelector:
        return expr->selector.get();
      default:
        return nullptr;
    }
  }

  absl::StatusOr<std::unique_ptr<Expr>> ParseRange(std::unique_ptr<Expr> expr) {
    const size_t open_pos = Take().pos;  // [
    if (Peek().kind != TokenKind::kDuration) return Unexpected("duration");
    absl::StatusOr<int64_t> range = ParseDurationMs(Peek().text);
    if (!range.ok()) return Error(Peek().pos, range.status().message());
    Take();
    if (Peek().kind == TokenKind::kColon) {
      Take();
      int64_t step = 0;
      if (Peek().kind == TokenKind::kDuration) {
        absl::StatusOr<int64_t> s = ParseDurationMs(Peek().text);
        if (!s.ok()) return Error(Peek().pos, s.status().message());
        step = *s;
        Take();
      }
      absl::Status close = Expect(TokenKind::kRightBracket, "subquery selector");
      if (!close.ok()) return close;
      if (expr->type != ValueType::kScalar && expr->type != ValueType::kVector) {
        return Error(open_pos, absl::StrCat("subquery is only allowed on instant vector, got ",
                                            ValueTypeDocName(expr->type), " instead"));
      }
      auto node = std::make_unique<Expr>();
      node->kind = Expr::Kind::kSubquery;
      node->type = ValueType::kMatrix;
      node->range_ms = *range;
      node->step_ms = step;
      node->lhs = std::move(expr);
      return node;
    }
    absl::Status close = Expect(TokenKind::kRightBracket, "matrix selector");
    if (!close.ok()) return close;
    if (expr->kind != Expr::Kind::kVectorSelector) {
      return Error(open_pos, "ranges only allowed for vector selectors");
    }
    if (expr->offset_ms != 0) {
      return Error(open_pos, "no offset modifiers allowed before range");
    }
    if (expr->at != AtKind::kNone) return Error(open_pos, "no @ modifiers allowed before range");
    auto node = std::make_unique<Expr>();
    node->kind = Expr::Kind::kMatrixSelector;
    node->type = ValueType::kMatrix;
    node->range_ms = *range;
    node->selector = std::move(expr);
    return node;
  }

  absl::StatusOr<std::unique_ptr<Expr>> ParsePrimary() {
    const Token& t = Peek();
    switch (t.kind) {
      case TokenKind::kNumber: {
        absl::StatusOr<double> n = ParseNumber(t.text);
        if (!n.ok()) return Error(t.pos, n.status().message());
        Take();
        auto node = std::make_unique<Expr>();
        node->kind = Expr::Kind::kNumber;
        node->type = ValueType::kScalar;
        node->number = *n;
        return node;
      }
      case TokenKind::kString: {
        auto node = std::make_unique<Expr>();
        node->kind = Expr::Kind::kString;
        node->type = ValueType::kString;
        node->text = Take().text;
        return node;
      }
      case TokenKind::kLeftParen: {
        Take();
        absl::StatusOr<std::unique_ptr<Expr>> inner = ParseExpr(0);
        if (!inner.ok()) return inner;
        absl::Status close = Expect(TokenKind::kRightParen, "paren expression");
        if (!close.ok()) return close;
        auto node = std::make_unique<Expr>();
        node->kind = Expr::Kind::kParen;
        node->type = (*inner)->type;
        node->lhs = *std::move(inner);
        return node;
      }
      case TokenKind::kLeftBrace:
        return ParseSelector("", t.pos);
      case TokenKind::kIdentifier:
        break;
      default:
        return Unexpected("");
    }
    const std::string lower = absl::AsciiStrToLower(t.text);
    if (lower == "inf" || lower == "nan") {
      Take();
      auto node = std::make_unique<Expr>();
      node->kind = Expr::Kind::kNumber;
      node->type = ValueType::kScalar;
      node->number = lower == "inf" ? std::numeric_limits<double>::infinity()
                                    : std::numeric_limits<double>::quiet_NaN();
      return node;
    }
    AggregateOp agg;
    if (IsAggregator(lower, &agg) && (Peek(1).kind == TokenKind::kLeftParen ||
                                      PeekKeyword("by", 1) || PeekKeyword("without", 1))) {
      return ParseAggregate(agg);
    }
    if (Peek(1).kind == TokenKind::kLeftParen) return ParseCall();
    if (IsReservedWord(lower)) return Unexpected("");
    const size_t pos = t.pos;
    std::string name = Take().text;
    return ParseSelector(std::move(name), pos);
  }

  // Keywords that cannot stand as a metric name.
  static bool IsReservedWord(absl::string_view lower) {
    return lower == "bool" || lower == "on" || lower == "ignoring" || lower == "group_left" ||
           lower == "group_right" || lower == "atan2";
  }

  absl::StatusOr<std::unique_ptr<Expr>> ParseCall() {
    const Token name = Take();
    const Function* function = LookupFunction(name.text);
    if (function == nullptr) {
      return Error(name.pos, absl::StrCat("unknown function with name \"", name.text, "\""));
    }
    Take();  // (
    auto node = std::make_unique<Expr>();
    node->kind = Expr::Kind::kCall;
    node->function = function;
    node->type = function->return_type;
    if (Peek().kind != TokenKind::kRightParen) {
      while (true) {
        absl::StatusOr<std::unique_ptr<Expr>> arg = ParseExpr(0);
        if (!arg.ok()) return arg.status();
        node->args.push_back(*std::move(arg));
        if (Peek().kind == TokenKind::kComma) {
          Take();
          if (Peek().kind == TokenKind::kRightParen) {
            return Error(Peek().pos, "trailing commas not allowed in function call args");
          }
          continue;
        }
        break;
      }
    }
    absl::Status close = Expect(TokenKind::kRightParen, "function call arguments");
    if (!close.ok()) return close;
    absl::Status checked = CheckCall(*node, name.pos);
    if (!checked.ok()) return checked;
    return node;
  }

  absl::Status CheckCall(const Expr& node, size_t pos) const {
    const Function& f = *node.function;
    const size_t declared = f.arg_types.size();
    const size_t given = node.args.size();
    if (f.variadic == 0) {
      if (declared != given) {
        return Error(pos, absl::StrCat("expected ", declared, " argument(s) in call to \"", f.name,
                                       "\", got ", given));
      }
    } else {
      const size_t least = declared - 1;
      if (least > given) {
        return Error(pos, absl::StrCat("expected at least ", least, " argument(s) in call to \"",
                                       f.name, "\", got ", given));
      }
      if (f.variadic > 0 && least + static_cast<size_t>(f.variadic) < given) {
        return Error(pos, absl::StrCat("expected at most ", least + f.variadic,
                                       " argument(s) in call to \"", f.name, "\", got ", given));
      }
    }
    for (size_t i = 0; i < given; ++i) {
      const size_t k = i < declared ? i : declared - 1;
      if (node.args[i]->type != f.arg_types[k]) {
        return Error(pos, absl::StrCat("expected type ", ValueTypeDocName(f.arg_types[k]),
                                       " in call to function \"", f.name, "\", got ",
                                       ValueTypeDocName(node.args[i]->type)));
      }
    }
    return absl::OkStatus();
  }

  absl::StatusOr<std::unique_ptr<Expr>> ParseAggregate(AggregateOp op) {
    const size_t pos = Take().pos;
    auto node = std::make_unique<Expr>();
    node->kind = Expr::Kind::kAggregate;
    node->type = ValueType::kVector;
    node->aggregate = op;
    bool grouped = false;
    auto parse_grouping = [&]() -> absl::Status {
      if (PeekKeyword("by") || PeekKeyword("without")) {
        if (grouped) return Unexpected("aggregation");
        node->without = PeekKeyword("without");
        Take();
        absl::StatusOr<std::vector<std::string>> labels = ParseLabelList("grouping opts");
        if (!labels.ok()) return labels.status();
        node->grouping = *std::move(labels);
        grouped = true;
      }
      return absl::OkStatus();
    };
    absl::Status before = parse_grouping();
    if (!before.ok()) return before;
    absl::Status open = Expect(TokenKind::kLeftParen, "aggregation");
    if (!open.ok()) return open;
    std::vector<std::unique_ptr<Expr>> args;
    if (Peek().kind != TokenKind::kRightParen) {
      while (true) {
        absl::StatusOr<std::unique_ptr<Expr>> arg = ParseExpr(0);
        if (!arg.ok()) return arg.status();
        args.push_back(*std::move(arg));
        if (Peek().kind == TokenKind::kComma) {
          Take();
          if (Peek().kind == TokenKind::kRightParen) {
            return Error(Peek().pos, "trailing commas not allowed in function call args");
          }
          continue;
        }
        break;
      }
    }
    absl::Status close = Expect(TokenKind::kRightParen, "aggregation");
    if (!close.ok()) return close;
    absl::Status after = parse_grouping();
    if (!after.ok()) return after;
    const size_t wanted = HasParam(op) ? 2 : 1;
    if (args.size() != wanted) {
      return Error(
          pos,
          absl::StrCat("wrong number of arguments for aggregate expression provided, expected ",
                       wanted, ", got ", args.size()));
    }
    if (HasParam(op)) node->param = std::move(args[0]);
    node->lhs = std::move(args.back());
    if (node->lhs->type != ValueType::kVector) {
      return Error(pos, absl::StrCat("expected type instant vector in aggregation expression, got ",
                                     ValueTypeDocName(node->lhs->type)));
    }
    if (node->param != nullptr) {
      const ValueType want =
          op == AggregateOp::kCountValues ? ValueType::kString : ValueType::kScalar;
      if (node->param->type != want) {
        return Error(pos, absl::StrCat("expected type ", ValueTypeDocName(want),
                                       " in aggregation parameter, got ",
                                       ValueTypeDocName(node->param->type)));
      }
    }
    return node;
  }

  absl::StatusOr<std::unique_ptr<Expr>> ParseSelector(std::string name, size_t pos) {
    auto node = std::make_unique<Expr>();
    node->kind = Expr::Kind::kVectorSelector;
    node->type = ValueType::kVector;
    node->metric_name = name;
    if (Peek().kind == TokenKind::kLeftBrace) {
      Take();
      while (Peek().kind != TokenKind::kRightBrace) {
        const Token& label = Peek();
        if (label.kind != TokenKind::kIdentifier) return Unexpected("label matching");
        std::string label_name = label.text;
        Take();
        LabelMatcher m;
        m.name = std::move(label_name);
        switch (Peek().kind) {
          case TokenKind::kAssign:
            m.type = MatchType::kEqual;
            break;
          case TokenKind::kNe:
            m.type = MatchType::kNotEqual;
            break;
          case TokenKind::kRegex:
            m.type = MatchType::kRegexMatch;
            break;
          case TokenKind::kNotRegex:
            m.type = MatchType::kRegexNoMatch;
            break;
          default:
            return Unexpected("label matching, expected one of \"=\", \"!=\", \"=~\" or \"!~\"");
        }
        Take();
        if (Peek().kind != TokenKind::kString) return Unexpected("label matching, expected string");
        m.value = Take().text;
        if (m.type == MatchType::kRegexMatch || m.type == MatchType::kRegexNoMatch) {
          RE2 re("^(?:" + m.value + ")$", RE2::Quiet);
          if (!re.ok()) {
            return Error(pos, absl::StrCat("error parsing regexp: ", re.error()));
          }
        }
        node->matchers.push_back(std::move(m));
        if (Peek().kind == TokenKind::kComma) {
          Take();
        } else if (Peek().kind != TokenKind::kRightBrace) {
          return Unexpected("label matching, expected \",\" or \"}\"");
        }
      }
      Take();
    }
    if (!name.empty()) {
      for (const LabelMatcher& m : node->matchers) {
        if (m.name == "__name__") {
          return Error(pos, absl::StrCat("metric name must not be set twice: \"", name, "\" or \"",
                                         m.value, "\""));
        }
      }
      node->matchers.push_back(LabelMatcher{MatchType::kEqual, "__name__", name});
    }
    bool not_empty = false;
    for (const LabelMatcher& m : node->matchers) {
      if (!MatcherMatchesEmpty(m)) not_empty = true;
    }
    if (!not_empty)
      return Error(pos, "vector selector must contain at least one non-empty matcher");
    return node;
  }

  static bool MatcherMatchesEmpty(const LabelMatcher& m) {
    switch (m.type) {
      case MatchType::kEqual:
        return m.value.empty();
      case MatchType::kNotEqual:
        return !m.value.empty();
      case MatchType::kRegexMatch:
      case MatchType::kRegexNoMatch: {
        RE2 re("^(?:" + m.value + ")$", RE2::Quiet);
        const bool matches = RE2::FullMatch("", re);
        return m.type == MatchType::kRegexMatch ? matches : !matches;
      }
    }
    return false;
  }

  absl::Status CheckBinary(Expr* node, size_t op_pos) const {
    const ValueType lt = node->lhs->type;
    const ValueType rt = node->rhs->type;
    const BinaryOp op = node->op;
    if (node->return_bool && !IsComparison(op)) {
      return Error(op_pos, "bool modifier can only be used on comparison operators");
    }
    if (IsComparison(op) && !node->return_bool && lt == ValueType::kScalar &&
        rt == ValueType::kScalar) {
      return Error(op_pos, "comparisons between scalars must use BOOL modifier");
    }
    if (IsSetOperator(op) && node->matching.card == Cardinality::kOneToOne) {
      node->matching.card = Cardinality::kManyToMany;
    }
    if (node->matching.on) {
      for (const std::string& a : node->matching.labels) {
        for (const std::string& b : node->matching.include) {
          if (a == b) {
            return Error(op_pos, absl::StrCat("label \"", a,
                                              "\" must not occur in ON and GROUP clause at once"));
          }
        }
      }
    }
    if (lt != ValueType::kScalar && lt != ValueType::kVector) {
      return Error(op_pos, "binary expression must contain only scalar and instant vector types");
    }
    if (rt != ValueType::kScalar && rt != ValueType::kVector) {
      return Error(op_pos, "binary expression must contain only scalar and instant vector types");
    }
    if (lt != ValueType::kVector || rt != ValueType::kVector) {
      if (!node->matching.labels.empty()) {
        return Error(op_pos, "vector matching only allowed between instant vectors");
      }
      node->has_matching = false;
    } else {
      node->has_matching = true;
      if (IsSetOperator(op)) {
        if (node->matching.card == Cardinality::kOneToMany ||
            node->matching.card == Cardinality::kManyToOne) {
          return Error(
              op_pos, absl::StrCat("no grouping allowed for \"", BinaryOpText(op), "\" operation"));
        }
      }
    }
    if ((lt == ValueType::kScalar || rt == ValueType::kScalar) && IsSetOperator(op)) {
      return Error(op_pos, absl::StrCat("set operator \"", BinaryOpText(op),
                                        "\" not allowed in binary scalar expression"));
    }
    node->type = (lt == ValueType::kVector || rt == ValueType::kVector) ? ValueType::kVector
                                                                        : ValueType::kScalar;
    return absl::OkStatus();
  }

  absl::string_view query_;
  std::vector<Token> tokens_;
  size_t pos_ = 0;
  int depth_ = 0;
};

}  // namespace

bool IsValidLabelName(absl::string_view name) {
  if (name.empty()) return false;
  for (size_t i = 0; i < name.size(); ++i) {
    const char c = name[i];
    const bool alpha = c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
    if (!alpha && !(i > 0 && c >= '0' && c <= '9')) return false;
  }
  return true;
}

absl::StatusOr<int64_t> ParseDurationMs(absl::string_view text) {
  // Units in the order Prometheus requires them, each at most once.
  struct Unit {
    absl::string_view name;
    int64_t ms;
  };
  static const Unit kUnits[] = {{"y", 365LL * 24 * 3600 * 1000},
                                {"w", 7LL * 24 * 3600 * 1000},
                                {"d", 24LL * 3600 * 1000},
                                {"h", 3600LL * 1000},
                                {"m", 60LL * 1000},
                                {"s", 1000},
                                {"ms", 1}};
  if (text.empty()) return absl::InvalidArgumentError("empty duration string");
  size_t i = 0;
  size_t next_unit = 0;
  int64_t total = 0;
  while (i < text.size()) {
    const size_t digits_start = i;
    while (i < text.size() && text[i] >= '0' && text[i] <= '9') ++i;
    if (i == digits_start) break;
    const size_t unit_start = i;
    while (i < text.size() && ((text[i] >= 'a' && text[i] <= 'z'))) ++i;
    const absl::string_view unit = text.substr(unit_start, i - unit_start);
    size_t u = next_unit;
    while (u < std::size(kUnits) && kUnits[u].name != unit) ++u;
    if (u == std::size(kUnits)) {
      return absl::InvalidArgumentError(
          absl::StrCat("not a valid duration string: \"", text, "\""));
    }
    next_unit = u + 1;
    int64_t n = 0;
    for (size_t k = digits_start; k < unit_start; ++k) {
      if (n > (std::numeric_limits<int64_t>::max() - 9) / 10) {
        return absl::InvalidArgumentError(
            absl::StrCat("not a valid duration string: \"", text, "\""));
      }
      n = n * 10 + (text[k] - '0');
    }
    if (n > std::numeric_limits<int64_t>::max() / kUnits[u].ms ||
        total > std::numeric_limits<int64_t>::max() - n * kUnits[u].ms) {
      return absl::InvalidArgumentError("duration out of range");
    }
    total += n * kUnits[u].ms;
  }
  if (i != text.size()) {
    return absl::InvalidArgumentError(absl::StrCat("not a valid duration string: \"", text, "\""));
  }
  // Prometheus holds durations in nanoseconds: about 292 years at most.
  if (total > std::numeric_limits<int64_t>::max() / 1000000) {
    return absl::InvalidArgumentError("duration out of range");
  }
  if (total == 0) return absl::InvalidArgumentError("duration must be greater than 0");
  return total;
}

absl::StatusOr<std::unique_ptr<Expr>> ParsePromQL(absl::string_view query) {
  if (query.size() > kMaxQueryBytes) {
    return absl::InvalidArgumentError(
        absl::StrCat("the query is longer than ", kMaxQueryBytes, " bytes"));
  }
  absl::StatusOr<std::vector<Token>> tokens = Lex(query);
  if (!tokens.ok()) return tokens.status();
  return Parser(query, *std::move(tokens)).Run();
}

}  // namespace strata::compat::promql
