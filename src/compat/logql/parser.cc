#include "compat/logql/parser.h"

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "common/absl_view.h"
#include "common/status_macros.h"
#include "compat/logql/lexer.h"
#include "compat/logql/literals.h"

namespace strata::compat::logql {
namespace {

using ExprPtr = std::unique_ptr<Expr>;
using FilterPtr = std::unique_ptr<LabelFilter>;

// Words that are always keywords, whatever their case; never label names.
bool IsReservedWord(std::string_view word) {
  static constexpr std::string_view kWords[] = {
      "json",          "logfmt", "unpack",     "pattern", "regexp", "label_format", "line_format",
      "label_replace", "vector", "offset",     "bool",    "on",     "ignoring",     "group_left",
      "group_right",   "unwrap", "decolorize", "drop",    "keep"};
  const std::string lower = absl::AsciiStrToLower(Absl(word));
  for (std::string_view reserved : kWords) {
    if (lower == reserved) return true;
  }
  return false;
}

bool IsRangeFunction(std::string_view word) {
  static constexpr std::string_view kWords[] = {"count_over_time",  "rate",
                                                "rate_counter",     "bytes_over_time",
                                                "bytes_rate",       "avg_over_time",
                                                "sum_over_time",    "min_over_time",
                                                "max_over_time",    "stdvar_over_time",
                                                "stddev_over_time", "quantile_over_time",
                                                "first_over_time",  "last_over_time",
                                                "absent_over_time"};
  for (std::string_view name : kWords) {
    if (word == name) return true;
  }
  return false;
}

std::optional<std::string> VectorFunction(std::string_view word) {
  static constexpr std::string_view kWords[] = {"sum",  "avg",    "count",    "max",
                                                "min",  "stddev", "stdvar",   "bottomk",
                                                "topk", "sort",   "sort_desc"};
  std::string lower = absl::AsciiStrToLower(Absl(word));
  for (std::string_view name : kWords) {
    if (lower == name) return lower;
  }
  return std::nullopt;
}

std::optional<MatchOp> StringMatchOp(TokenKind kind) {
  switch (kind) {
    case TokenKind::kEq:
      return MatchOp::kEq;
    case TokenKind::kNe:
      return MatchOp::kNe;
    case TokenKind::kRegex:
      return MatchOp::kRegex;
    case TokenKind::kNotRegex:
      return MatchOp::kNotRegex;
    default:
      return std::nullopt;
  }
}

std::optional<CompareOp> NumberCompareOp(TokenKind kind) {
  switch (kind) {
    case TokenKind::kEq:
    case TokenKind::kEqEq:
      return CompareOp::kEq;
    case TokenKind::kNe:
      return CompareOp::kNe;
    case TokenKind::kGt:
      return CompareOp::kGt;
    case TokenKind::kGe:
      return CompareOp::kGe;
    case TokenKind::kLt:
      return CompareOp::kLt;
    case TokenKind::kLe:
      return CompareOp::kLe;
    default:
      return std::nullopt;
  }
}

std::optional<LineFilterOp> LineFilterOpOf(TokenKind kind) {
  switch (kind) {
    case TokenKind::kPipeExact:
      return LineFilterOp::kContains;
    case TokenKind::kNe:
      return LineFilterOp::kNotContains;
    case TokenKind::kPipeMatch:
      return LineFilterOp::kRegex;
    case TokenKind::kNotRegex:
      return LineFilterOp::kNotRegex;
    case TokenKind::kPipePattern:
      return LineFilterOp::kPattern;
    case TokenKind::kNotPattern:
      return LineFilterOp::kNotPattern;
    default:
      return std::nullopt;
  }
}

// Binding strength of a binary operator (higher binds tighter), as Loki and
// Prometheus have it; 0 for a token that is no binary operator.
int Precedence(const Token& token, BinaryOp* op) {
  switch (token.kind) {
    case TokenKind::kPow:
      *op = BinaryOp::kPow;
      return 6;
    case TokenKind::kMul:
      *op = BinaryOp::kMul;
      return 5;
    case TokenKind::kDiv:
      *op = BinaryOp::kDiv;
      return 5;
    case TokenKind::kMod:
      *op = BinaryOp::kMod;
      return 5;
    case TokenKind::kAdd:
      *op = BinaryOp::kAdd;
      return 4;
    case TokenKind::kSub:
      *op = BinaryOp::kSub;
      return 4;
    case TokenKind::kEqEq:
      *op = BinaryOp::kEq;
      return 3;
    case TokenKind::kNe:
      *op = BinaryOp::kNe;
      return 3;
    case TokenKind::kGt:
      *op = BinaryOp::kGt;
      return 3;
    case TokenKind::kGe:
      *op = BinaryOp::kGe;
      return 3;
    case TokenKind::kLt:
      *op = BinaryOp::kLt;
      return 3;
    case TokenKind::kLe:
      *op = BinaryOp::kLe;
      return 3;
    case TokenKind::kIdent: {
      const std::string lower = absl::AsciiStrToLower(Absl(token.text));
      if (lower == "and") {
        *op = BinaryOp::kAnd;
        return 2;
      }
      if (lower == "unless") {
        *op = BinaryOp::kUnless;
        return 2;
      }
      if (lower == "or") {
        *op = BinaryOp::kOr;
        return 1;
      }
      return 0;
    }
    default:
      return 0;
  }
}

class Parser {
 public:
  explicit Parser(std::string_view text) : text_(text), lexer_(text) {}

  absl::StatusOr<ExprPtr> Run() {
    if (text_.size() > kMaxLogQLBytes) {
      return absl::InvalidArgumentError(
          absl::StrCat("LogQL: a query is at most ", kMaxLogQLBytes, " bytes"));
    }
    STRATA_RETURN_IF_ERROR(Advance());
    if (tok_.kind == TokenKind::kEnd) return SyntaxError("a query is empty");
    STRATA_ASSIGN_OR_RETURN(ExprPtr expr, Expression(0, 0));
    if (tok_.kind != TokenKind::kEnd) return SyntaxError("expected the end of the query");
    return expr;
  }

 private:
  absl::Status Advance() {
    STRATA_ASSIGN_OR_RETURN(tok_, lexer_.Next());
    return absl::OkStatus();
  }

  // The token after tok_, without consuming anything.
  absl::StatusOr<Token> Peek() const {
    Lexer copy = lexer_;
    return copy.Next();
  }

  absl::Status SyntaxError(std::string_view what) const {
    std::string found = tok_.kind == TokenKind::kEnd
                            ? "the end of the query"
                            : absl::StrCat("'", std::string(tok_.text), "'");
    return absl::InvalidArgumentError(
        absl::StrCat("LogQL: at column ", tok_.offset + 1, ": ", Absl(what), "; found ", found));
  }

  absl::Status Expect(TokenKind kind, std::string_view what) {
    if (tok_.kind != kind) return SyntaxError(absl::StrCat("expected ", Absl(what)));
    return Advance();
  }

  absl::Status Deeper(int depth) const {
    if (depth > kMaxLogQLDepth) {
      return absl::InvalidArgumentError(absl::StrCat(
          "LogQL: at column ", tok_.offset + 1, ": nested more than ", kMaxLogQLDepth, " deep"));
    }
    return absl::OkStatus();
  }

  bool IsWord(std::string_view lower_word) const {
    return tok_.kind == TokenKind::kIdent && absl::AsciiStrToLower(Absl(tok_.text)) == lower_word;
  }

  absl::StatusOr<std::string> LabelName(std::string_view what) {
    if (tok_.kind != TokenKind::kIdent || IsReservedWord(tok_.text)) {
      return SyntaxError(absl::StrCat("expected ", Absl(what)));
    }
    std::string name(tok_.text);
    STRATA_RETURN_IF_ERROR(Advance());
    return name;
  }

  absl::StatusOr<std::string> StringValue(std::string_view what) {
    if (tok_.kind != TokenKind::kString) {
      return SyntaxError(absl::StrCat("expected a string for ", Absl(what)));
    }
    std::string value = std::move(tok_.value);
    STRATA_RETURN_IF_ERROR(Advance());
    return value;
  }

  // A duration, with a `-` written right before it (the grammar's token
  // includes the sign).
  absl::StatusOr<int64_t> DurationValue(std::string_view what) {
    bool negative = false;
    if (tok_.kind == TokenKind::kSub) {
      STRATA_ASSIGN_OR_RETURN(Token next, Peek());
      if (next.kind != TokenKind::kNumeric || next.offset != tok_.offset + 1) {
        return SyntaxError(absl::StrCat("expected a duration for ", Absl(what)));
      }
      negative = true;
      STRATA_RETURN_IF_ERROR(Advance());
    }
    std::optional<int64_t> nanos;
    if (tok_.kind == TokenKind::kNumeric) nanos = ParseLogQLDuration(tok_.text);
    if (!nanos.has_value()) {
      return SyntaxError(absl::StrCat("expected a duration such as 5m for ", Absl(what)));
    }
    STRATA_RETURN_IF_ERROR(Advance());
    return negative ? -*nanos : *nanos;
  }

  absl::StatusOr<double> NumberValue(std::string_view what) {
    std::optional<double> value;
    if (tok_.kind == TokenKind::kNumeric) value = ParseLogQLNumber(tok_.text);
    if (!value.has_value()) return SyntaxError(absl::StrCat("expected a number for ", Absl(what)));
    STRATA_RETURN_IF_ERROR(Advance());
    return *value;
  }

  // ---- expressions ----

  // Precedence climbing over binary operators; `min_precedence` is the
  // weakest operator this call may take.
  absl::StatusOr<ExprPtr> Expression(int depth, int min_precedence) {
    STRATA_RETURN_IF_ERROR(Deeper(depth));
    STRATA_ASSIGN_OR_RETURN(ExprPtr lhs, Primary(depth));
    while (true) {
      BinaryOp op;
      const int precedence = Precedence(tok_, &op);
      if (precedence == 0 || precedence < min_precedence) break;
      STRATA_RETURN_IF_ERROR(Advance());
      auto node = std::make_unique<Expr>();
      node->kind = Expr::Kind::kBinary;
      node->op = op;
      STRATA_RETURN_IF_ERROR(Modifier(&node->matching));
      // ^ is right-associative; the others left.
      const int next_min = op == BinaryOp::kPow ? precedence : precedence + 1;
      STRATA_ASSIGN_OR_RETURN(node->rhs, Expression(depth + 1, next_min));
      node->lhs = std::move(lhs);
      lhs = std::move(node);
    }
    return lhs;
  }

  absl::Status Modifier(VectorMatching* matching) {
    if (IsWord("bool")) {
      matching->return_bool = true;
      STRATA_RETURN_IF_ERROR(Advance());
    }
    if (!IsWord("on") && !IsWord("ignoring")) return absl::OkStatus();
    matching->on = IsWord("on");
    matching->ignoring = !matching->on;
    STRATA_RETURN_IF_ERROR(Advance());
    STRATA_RETURN_IF_ERROR(GroupingLabels(&matching->labels));
    if (!IsWord("group_left") && !IsWord("group_right")) return absl::OkStatus();
    matching->group_left = IsWord("group_left");
    matching->group_right = !matching->group_left;
    STRATA_RETURN_IF_ERROR(Advance());
    if (tok_.kind == TokenKind::kLeftParen) {
      STRATA_RETURN_IF_ERROR(GroupingLabels(&matching->include));
    }
    return absl::OkStatus();
  }

  // ( a, b ) after on/ignoring/group_*: names without colons, a trailing
  // comma allowed.
  absl::Status GroupingLabels(std::vector<std::string>* labels) {
    STRATA_RETURN_IF_ERROR(Expect(TokenKind::kLeftParen, "( after on, ignoring or group_*"));
    while (tok_.kind != TokenKind::kRightParen) {
      if (tok_.kind != TokenKind::kIdent || tok_.text.find(':') != std::string_view::npos) {
        return SyntaxError("expected a label name");
      }
      labels->emplace_back(tok_.text);
      STRATA_RETURN_IF_ERROR(Advance());
      if (tok_.kind == TokenKind::kComma) {
        STRATA_RETURN_IF_ERROR(Advance());
      } else if (tok_.kind != TokenKind::kRightParen) {
        return SyntaxError("expected , or )");
      }
    }
    return Advance();
  }

  absl::StatusOr<ExprPtr> Primary(int depth) {
    switch (tok_.kind) {
      case TokenKind::kLeftBrace:
        return LogQuery();
      case TokenKind::kLeftParen: {
        STRATA_RETURN_IF_ERROR(Advance());
        STRATA_ASSIGN_OR_RETURN(ExprPtr inner, Expression(depth + 1, 0));
        STRATA_RETURN_IF_ERROR(Expect(TokenKind::kRightParen, ")"));
        inner->parenthesized = true;
        return inner;
      }
      case TokenKind::kNumeric:
      case TokenKind::kAdd:
      case TokenKind::kSub: {
        const bool negative = tok_.kind == TokenKind::kSub;
        if (tok_.kind != TokenKind::kNumeric) STRATA_RETURN_IF_ERROR(Advance());
        auto node = std::make_unique<Expr>();
        node->kind = Expr::Kind::kNumber;
        STRATA_ASSIGN_OR_RETURN(node->number, NumberValue("a number literal"));
        if (negative) node->number = -node->number;
        return node;
      }
      case TokenKind::kIdent:
        break;
      default:
        return SyntaxError("expected a stream selector {...}, a function or a number");
    }
    if (IsRangeFunction(tok_.text)) return RangeAggregation(depth);
    if (std::optional<std::string> name = VectorFunction(tok_.text)) {
      return VectorAggregation(depth, *std::move(name));
    }
    if (IsWord("vector")) {
      STRATA_RETURN_IF_ERROR(Advance());
      STRATA_RETURN_IF_ERROR(Expect(TokenKind::kLeftParen, "( after vector"));
      auto node = std::make_unique<Expr>();
      node->kind = Expr::Kind::kVector;
      STRATA_ASSIGN_OR_RETURN(node->number, NumberValue("vector()"));
      STRATA_RETURN_IF_ERROR(Expect(TokenKind::kRightParen, ")"));
      return node;
    }
    if (IsWord("label_replace")) return LabelReplace(depth);
    return SyntaxError("expected a stream selector {...}, a function or a number");
  }

  // The operand of an aggregation or label_replace: the grammar wants a
  // metric expression there, so a log query (even in parentheses) is a
  // syntax error; an operator between log queries is not (CheckLogQL
  // refuses it).
  absl::StatusOr<ExprPtr> MetricOperand(int depth) {
    const Token start = tok_;
    STRATA_ASSIGN_OR_RETURN(ExprPtr operand, Expression(depth, 0));
    if (operand->kind == Expr::Kind::kLog) {
      return absl::InvalidArgumentError(absl::StrCat(
          "LogQL: at column ", start.offset + 1, ": expected a metric query, found a log query"));
    }
    return operand;
  }

  absl::StatusOr<ExprPtr> LabelReplace(int depth) {
    STRATA_RETURN_IF_ERROR(Advance());
    STRATA_RETURN_IF_ERROR(Expect(TokenKind::kLeftParen, "( after label_replace"));
    auto node = std::make_unique<Expr>();
    node->kind = Expr::Kind::kLabelReplace;
    STRATA_ASSIGN_OR_RETURN(node->lhs, MetricOperand(depth + 1));
    for (int i = 0; i < 4; ++i) {
      STRATA_RETURN_IF_ERROR(Expect(TokenKind::kComma, ", in label_replace"));
      STRATA_ASSIGN_OR_RETURN(std::string arg, StringValue("label_replace"));
      node->replace_args.push_back(std::move(arg));
    }
    STRATA_RETURN_IF_ERROR(Expect(TokenKind::kRightParen, ")"));
    return node;
  }

  absl::Status Grouping(struct Grouping* grouping) {
    grouping->present = true;
    grouping->without = IsWord("without");
    STRATA_RETURN_IF_ERROR(Advance());
    STRATA_RETURN_IF_ERROR(Expect(TokenKind::kLeftParen, "( after by or without"));
    if (tok_.kind == TokenKind::kRightParen) return Advance();
    while (true) {
      STRATA_ASSIGN_OR_RETURN(std::string name, LabelName("a label name"));
      grouping->labels.push_back(std::move(name));
      if (tok_.kind == TokenKind::kRightParen) return Advance();
      STRATA_RETURN_IF_ERROR(Expect(TokenKind::kComma, ", or )"));
    }
  }

  bool AtGrouping() const { return IsWord("by") || IsWord("without"); }

  absl::StatusOr<ExprPtr> VectorAggregation(int depth, std::string name) {
    auto node = std::make_unique<Expr>();
    node->kind = Expr::Kind::kVectorAggregation;
    node->function = std::move(name);
    STRATA_RETURN_IF_ERROR(Advance());
    if (AtGrouping()) STRATA_RETURN_IF_ERROR(Grouping(&node->grouping));
    STRATA_RETURN_IF_ERROR(Expect(TokenKind::kLeftParen, "( after an aggregation"));
    if (tok_.kind == TokenKind::kNumeric) {
      STRATA_ASSIGN_OR_RETURN(Token next, Peek());
      if (next.kind == TokenKind::kComma) {
        STRATA_ASSIGN_OR_RETURN(node->parameter, NumberValue("the parameter"));
        STRATA_RETURN_IF_ERROR(Advance());
      }
    }
    STRATA_ASSIGN_OR_RETURN(node->lhs, MetricOperand(depth + 1));
    STRATA_RETURN_IF_ERROR(Expect(TokenKind::kRightParen, ")"));
    if (!node->grouping.present && AtGrouping()) {
      STRATA_RETURN_IF_ERROR(Grouping(&node->grouping));
    }
    return node;
  }

  absl::StatusOr<ExprPtr> RangeAggregation(int depth) {
    auto node = std::make_unique<Expr>();
    node->kind = Expr::Kind::kRange;
    node->function = std::string(tok_.text);
    STRATA_RETURN_IF_ERROR(Advance());
    STRATA_RETURN_IF_ERROR(Expect(TokenKind::kLeftParen, "( after a range aggregation"));
    if (tok_.kind == TokenKind::kNumeric) {
      STRATA_ASSIGN_OR_RETURN(node->parameter, NumberValue("the parameter"));
      STRATA_RETURN_IF_ERROR(Expect(TokenKind::kComma, ", after the parameter"));
    }
    STRATA_RETURN_IF_ERROR(LogRange(depth + 1, node.get()));
    STRATA_RETURN_IF_ERROR(Expect(TokenKind::kRightParen, ")"));
    if (AtGrouping()) STRATA_RETURN_IF_ERROR(Grouping(&node->grouping));
    return node;
  }

  // What can come between a selector and its range, or after the range:
  // pipeline stages, then an unwrap and the label filters after it.
  struct PipelinePart {
    bool stages = false;
    bool unwrap = false;
    bool empty() const { return !stages && !unwrap; }
  };

  absl::Status RangeWithOffset(Expr* node, bool offset_allowed) {
    STRATA_RETURN_IF_ERROR(Expect(TokenKind::kLeftBracket, "[ and a range"));
    STRATA_ASSIGN_OR_RETURN(node->range_ns, DurationValue("the range"));
    STRATA_RETURN_IF_ERROR(Expect(TokenKind::kRightBracket, "]"));
    if (offset_allowed && IsWord("offset")) {
      STRATA_RETURN_IF_ERROR(Advance());
      STRATA_ASSIGN_OR_RETURN(node->offset_ns, DurationValue("offset"));
    }
    return absl::OkStatus();
  }

  // The log range of a range aggregation, in each of the orders the
  // grammar allows: {..} [5m], {..} |= "x" [5m], {..} [5m] |= "x",
  // {..} | unwrap x [5m], {..} [5m] offset 1h | json | unwrap x, and the
  // parenthesized ( {..} | json ) [5m], ( {..} [5m] ).
  absl::Status LogRange(int depth, Expr* node) {
    STRATA_RETURN_IF_ERROR(Deeper(depth));
    if (tok_.kind == TokenKind::kLeftParen) {
      STRATA_RETURN_IF_ERROR(Advance());
      if (tok_.kind == TokenKind::kLeftParen) {
        STRATA_RETURN_IF_ERROR(LogRange(depth + 1, node));
        return Expect(TokenKind::kRightParen, ")");
      }
      STRATA_RETURN_IF_ERROR(Selector(&node->log));
      STRATA_ASSIGN_OR_RETURN(PipelinePart before, Pipeline(node, true));
      if (tok_.kind == TokenKind::kRightParen) {
        if (before.stages && before.unwrap) {
          return SyntaxError("expected a range before the unwrap's closing )");
        }
        STRATA_RETURN_IF_ERROR(Advance());
        STRATA_RETURN_IF_ERROR(RangeWithOffset(node, true));
        if (before.empty() && tok_.kind == TokenKind::kPipe) {
          STRATA_ASSIGN_OR_RETURN(Token next, Peek());
          if (next.kind == TokenKind::kIdent &&
              absl::AsciiStrToLower(Absl(next.text)) == "unwrap") {
            STRATA_ASSIGN_OR_RETURN(PipelinePart after, Pipeline(node, true));
            (void)after;
          }
        }
        return absl::OkStatus();
      }
      STRATA_RETURN_IF_ERROR(AfterSelector(node, before));
      return Expect(TokenKind::kRightParen, ")");
    }
    STRATA_RETURN_IF_ERROR(Selector(&node->log));
    STRATA_ASSIGN_OR_RETURN(PipelinePart before, Pipeline(node, true));
    return AfterSelector(node, before);
  }

  // The range and what may follow it, given what came before it.
  absl::Status AfterSelector(Expr* node, PipelinePart before) {
    if (before.stages && before.unwrap) return RangeWithOffset(node, false);
    STRATA_RETURN_IF_ERROR(RangeWithOffset(node, true));
    if (!before.empty()) return absl::OkStatus();
    STRATA_ASSIGN_OR_RETURN(PipelinePart after, Pipeline(node, true));
    (void)after;
    return absl::OkStatus();
  }

  absl::StatusOr<ExprPtr> LogQuery() {
    auto node = std::make_unique<Expr>();
    node->kind = Expr::Kind::kLog;
    STRATA_RETURN_IF_ERROR(Selector(&node->log));
    STRATA_ASSIGN_OR_RETURN(PipelinePart part, Pipeline(node.get(), false));
    (void)part;
    return node;
  }

  absl::Status Selector(LogSelector* log) {
    STRATA_RETURN_IF_ERROR(Expect(TokenKind::kLeftBrace, "{"));
    while (true) {
      Matcher matcher;
      STRATA_ASSIGN_OR_RETURN(matcher.name, LabelName("a label name"));
      std::optional<MatchOp> op = StringMatchOp(tok_.kind);
      if (!op.has_value()) return SyntaxError("expected =, !=, =~ or !~");
      matcher.op = *op;
      STRATA_RETURN_IF_ERROR(Advance());
      STRATA_ASSIGN_OR_RETURN(matcher.value, StringValue("a label matcher"));
      log->matchers.push_back(std::move(matcher));
      if (tok_.kind == TokenKind::kRightBrace) return Advance();
      STRATA_RETURN_IF_ERROR(Expect(TokenKind::kComma, ", or }"));
    }
  }

  // Pipeline stages (line filters, and `|` stages) up to the first token
  // that is neither; with `unwrap_allowed`, an unwrap and the label filters
  // after it end the pipeline.
  absl::StatusOr<PipelinePart> Pipeline(Expr* node, bool unwrap_allowed) {
    PipelinePart part;
    while (true) {
      // As in Grafana's grammar, != after a log query is always a line
      // filter, never the comparison operator.
      const std::optional<LineFilterOp> line_op = LineFilterOpOf(tok_.kind);
      if (line_op.has_value()) {
        if (part.unwrap) return SyntaxError("expected a label filter after unwrap");
        STRATA_RETURN_IF_ERROR(Advance());
        Stage stage;
        stage.kind = Stage::Kind::kLineFilter;
        stage.line_filter.op = *line_op;
        STRATA_RETURN_IF_ERROR(LineFilterValues(&stage.line_filter));
        node->log.stages.push_back(std::move(stage));
        part.stages = true;
        continue;
      }
      if (tok_.kind != TokenKind::kPipe) return part;
      STRATA_RETURN_IF_ERROR(Advance());
      if (IsWord("unwrap")) {
        if (!unwrap_allowed || part.unwrap) return SyntaxError("unwrap is not allowed here");
        STRATA_RETURN_IF_ERROR(Advance());
        STRATA_RETURN_IF_ERROR(UnwrapStage(node));
        part.unwrap = true;
        continue;
      }
      if (part.unwrap) {
        if (tok_.kind == TokenKind::kIdent && IsReservedWord(tok_.text)) {
          return SyntaxError("expected a label filter after unwrap");
        }
        STRATA_ASSIGN_OR_RETURN(FilterPtr filter, LabelFilterOr(0));
        node->unwrap->filters.push_back(std::move(filter));
        continue;
      }
      Stage stage;
      STRATA_RETURN_IF_ERROR(PipeStage(&stage));
      node->log.stages.push_back(std::move(stage));
      part.stages = true;
    }
  }

  absl::Status IpValue(std::string* value) {
    STRATA_RETURN_IF_ERROR(Advance());  // ip
    STRATA_RETURN_IF_ERROR(Expect(TokenKind::kLeftParen, "( after ip"));
    STRATA_ASSIGN_OR_RETURN(*value, StringValue("ip()"));
    return Expect(TokenKind::kRightParen, ")");
  }

  bool AtIp() const { return tok_.kind == TokenKind::kIdent && tok_.text == "ip"; }

  // "a" [or "b" ...] after a line filter operator; each value may be
  // ip("...") instead (then `ip` is set: strata refuses such filters).
  absl::Status LineFilterValues(LineFilter* filter) {
    // The grammar ends an or-chain at an ip(...), but lets one more chain
    // follow it with `or`.
    int chains = 1;
    while (true) {
      if (AtIp()) {
        filter->ip = true;
        filter->values.emplace_back();
        STRATA_RETURN_IF_ERROR(IpValue(&filter->values.back()));
        if (IsWord("or") && ++chains > 2) return SyntaxError("expected a line filter operator");
      } else {
        STRATA_ASSIGN_OR_RETURN(std::string value, StringValue("a line filter"));
        filter->values.push_back(std::move(value));
      }
      if (!IsWord("or")) return absl::OkStatus();
      STRATA_RETURN_IF_ERROR(Advance());
    }
  }

  absl::Status UnwrapStage(Expr* node) {
    Unwrap unwrap;
    if (tok_.kind == TokenKind::kIdent &&
        (tok_.text == "bytes" || tok_.text == "duration" || tok_.text == "duration_seconds")) {
      STRATA_ASSIGN_OR_RETURN(Token next, Peek());
      if (next.kind == TokenKind::kLeftParen) {
        unwrap.conversion = tok_.text == "bytes"      ? UnwrapConversion::kBytes
                            : tok_.text == "duration" ? UnwrapConversion::kDuration
                                                      : UnwrapConversion::kDurationSeconds;
        STRATA_RETURN_IF_ERROR(Advance());
        STRATA_RETURN_IF_ERROR(Advance());
        STRATA_ASSIGN_OR_RETURN(unwrap.label, LabelName("the label to unwrap"));
        STRATA_RETURN_IF_ERROR(Expect(TokenKind::kRightParen, ")"));
        node->unwrap = std::move(unwrap);
        return absl::OkStatus();
      }
    }
    STRATA_ASSIGN_OR_RETURN(unwrap.label, LabelName("the label to unwrap"));
    node->unwrap = std::move(unwrap);
    return absl::OkStatus();
  }

  // One stage after `|`.
  absl::Status PipeStage(Stage* stage) {
    if (IsWord("json") || IsWord("logfmt")) {
      const bool json = IsWord("json");
      stage->kind = json ? Stage::Kind::kJson : Stage::Kind::kLogfmt;
      STRATA_RETURN_IF_ERROR(Advance());
      while (!json && tok_.kind == TokenKind::kFlag) {
        if (tok_.text == "--strict") stage->strict = true;
        if (tok_.text == "--keep-empty") stage->keep_empty = true;
        STRATA_RETURN_IF_ERROR(Advance());
      }
      if (tok_.kind == TokenKind::kIdent && !IsReservedWord(tok_.text)) {
        return Extractions(&stage->extractions);
      }
      return absl::OkStatus();
    }
    if (IsWord("regexp") || IsWord("pattern") || IsWord("line_format")) {
      stage->kind = IsWord("regexp")    ? Stage::Kind::kRegexp
                    : IsWord("pattern") ? Stage::Kind::kPattern
                                        : Stage::Kind::kLineFormat;
      STRATA_RETURN_IF_ERROR(Advance());
      STRATA_ASSIGN_OR_RETURN(stage->text, StringValue("the stage"));
      return absl::OkStatus();
    }
    if (IsWord("unpack") || IsWord("decolorize")) {
      stage->kind = IsWord("unpack") ? Stage::Kind::kUnpack : Stage::Kind::kDecolorize;
      return Advance();
    }
    if (IsWord("label_format")) {
      stage->kind = Stage::Kind::kLabelFormat;
      STRATA_RETURN_IF_ERROR(Advance());
      return LabelFormats(&stage->formats);
    }
    if (IsWord("drop") || IsWord("keep")) {
      stage->kind = IsWord("drop") ? Stage::Kind::kDrop : Stage::Kind::kKeep;
      STRATA_RETURN_IF_ERROR(Advance());
      return Selections(&stage->selections);
    }
    if (tok_.kind == TokenKind::kIdent && IsReservedWord(tok_.text)) {
      return SyntaxError("expected a parser, a label filter or a formatting stage after |");
    }
    stage->kind = Stage::Kind::kLabelFilter;
    STRATA_ASSIGN_OR_RETURN(stage->filter, LabelFilterOr(0));
    return absl::OkStatus();
  }

  absl::Status Extractions(std::vector<Extraction>* extractions) {
    while (true) {
      Extraction extraction;
      STRATA_ASSIGN_OR_RETURN(extraction.name, LabelName("a label name"));
      if (tok_.kind == TokenKind::kEq) {
        STRATA_RETURN_IF_ERROR(Advance());
        STRATA_ASSIGN_OR_RETURN(extraction.expression, StringValue("an extraction"));
      }
      extractions->push_back(std::move(extraction));
      if (tok_.kind != TokenKind::kComma) return absl::OkStatus();
      STRATA_RETURN_IF_ERROR(Advance());
    }
  }

  absl::Status LabelFormats(std::vector<LabelFormat>* formats) {
    while (true) {
      LabelFormat format;
      STRATA_ASSIGN_OR_RETURN(format.name, LabelName("a label name"));
      STRATA_RETURN_IF_ERROR(Expect(TokenKind::kEq, "= in label_format"));
      if (tok_.kind == TokenKind::kString) {
        format.value = std::move(tok_.value);
        STRATA_RETURN_IF_ERROR(Advance());
      } else {
        format.rename = true;
        STRATA_ASSIGN_OR_RETURN(format.value, LabelName("a label name or a template"));
      }
      formats->push_back(std::move(format));
      if (tok_.kind != TokenKind::kComma) return absl::OkStatus();
      STRATA_RETURN_IF_ERROR(Advance());
    }
  }

  absl::Status Selections(std::vector<LabelSelection>* selections) {
    while (true) {
      LabelSelection selection;
      STRATA_ASSIGN_OR_RETURN(selection.name, LabelName("a label name"));
      if (std::optional<MatchOp> op = StringMatchOp(tok_.kind)) {
        STRATA_RETURN_IF_ERROR(Advance());
        Matcher matcher{.name = selection.name, .op = *op};
        STRATA_ASSIGN_OR_RETURN(matcher.value, StringValue("a label matcher"));
        selection.matcher = std::move(matcher);
      }
      selections->push_back(std::move(selection));
      if (tok_.kind != TokenKind::kComma) return absl::OkStatus();
      STRATA_RETURN_IF_ERROR(Advance());
    }
  }

  // ---- label filters: or binds weaker than and and `,` ----

  absl::StatusOr<FilterPtr> LabelFilterOr(int depth) {
    STRATA_RETURN_IF_ERROR(Deeper(depth));
    STRATA_ASSIGN_OR_RETURN(FilterPtr lhs, LabelFilterAnd(depth));
    while (IsWord("or")) {
      STRATA_RETURN_IF_ERROR(Advance());
      STRATA_ASSIGN_OR_RETURN(FilterPtr rhs, LabelFilterAnd(depth));
      lhs = Combine(LabelFilter::Kind::kOr, std::move(lhs), std::move(rhs));
    }
    return lhs;
  }

  absl::StatusOr<FilterPtr> LabelFilterAnd(int depth) {
    STRATA_ASSIGN_OR_RETURN(FilterPtr lhs, LabelFilterPrimary(depth));
    while (IsWord("and") || tok_.kind == TokenKind::kComma) {
      STRATA_RETURN_IF_ERROR(Advance());
      STRATA_ASSIGN_OR_RETURN(FilterPtr rhs, LabelFilterPrimary(depth));
      lhs = Combine(LabelFilter::Kind::kAnd, std::move(lhs), std::move(rhs));
    }
    return lhs;
  }

  static FilterPtr Combine(LabelFilter::Kind kind, FilterPtr lhs, FilterPtr rhs) {
    auto node = std::make_unique<LabelFilter>();
    node->kind = kind;
    node->lhs = std::move(lhs);
    node->rhs = std::move(rhs);
    return node;
  }

  absl::StatusOr<FilterPtr> LabelFilterPrimary(int depth) {
    if (tok_.kind == TokenKind::kLeftParen) {
      STRATA_RETURN_IF_ERROR(Advance());
      STRATA_ASSIGN_OR_RETURN(FilterPtr inner, LabelFilterOr(depth + 1));
      STRATA_RETURN_IF_ERROR(Expect(TokenKind::kRightParen, ")"));
      return inner;
    }
    auto node = std::make_unique<LabelFilter>();
    STRATA_ASSIGN_OR_RETURN(node->name, LabelName("a label filter"));
    const TokenKind op_kind = tok_.kind;
    const std::optional<MatchOp> match_op = StringMatchOp(op_kind);
    const std::optional<CompareOp> compare_op = NumberCompareOp(op_kind);
    if (!match_op.has_value() && !compare_op.has_value()) {
      return SyntaxError("expected a comparison in a label filter");
    }
    STRATA_RETURN_IF_ERROR(Advance());
    node->matcher.name = node->name;
    if (match_op.has_value() && tok_.kind == TokenKind::kString) {
      node->kind = LabelFilter::Kind::kString;
      node->matcher.op = *match_op;
      node->matcher.value = std::move(tok_.value);
      STRATA_RETURN_IF_ERROR(Advance());
      return node;
    }
    if ((op_kind == TokenKind::kEq || op_kind == TokenKind::kNe) && AtIp()) {
      node->kind = LabelFilter::Kind::kIp;
      node->matcher.op = op_kind == TokenKind::kEq ? MatchOp::kEq : MatchOp::kNe;
      STRATA_RETURN_IF_ERROR(IpValue(&node->matcher.value));
      return node;
    }
    if (!compare_op.has_value()) return SyntaxError("expected a string after =~ or !~");
    node->op = *compare_op;
    STRATA_RETURN_IF_ERROR(LabelFilterValue(node.get()));
    return node;
  }

  // A number (with an optional sign), a duration (with an optional `-`
  // written against it) or a byte size.
  absl::Status LabelFilterValue(LabelFilter* node) {
    bool negative = false;
    bool adjacent_minus = false;
    if (tok_.kind == TokenKind::kAdd || tok_.kind == TokenKind::kSub) {
      negative = tok_.kind == TokenKind::kSub;
      const size_t sign_offset = tok_.offset;
      STRATA_RETURN_IF_ERROR(Advance());
      adjacent_minus = negative && tok_.offset == sign_offset + 1;
      if (tok_.kind != TokenKind::kNumeric) return SyntaxError("expected a number");
      if (!ParseLogQLNumber(tok_.text).has_value() &&
          !(adjacent_minus && ParseLogQLDuration(tok_.text).has_value())) {
        return SyntaxError("expected a number");
      }
    }
    if (tok_.kind != TokenKind::kNumeric) {
      return SyntaxError("expected a number, a duration or a byte size");
    }
    const double sign = negative ? -1 : 1;
    if (std::optional<int64_t> nanos = ParseLogQLDuration(tok_.text)) {
      node->kind = LabelFilter::Kind::kDuration;
      node->value = sign * static_cast<double>(*nanos) / 1e9;
    } else if (std::optional<double> bytes = ParseLogQLBytes(tok_.text)) {
      node->kind = LabelFilter::Kind::kBytes;
      node->value = *bytes;
    } else if (std::optional<double> number = ParseLogQLNumber(tok_.text)) {
      node->kind = LabelFilter::Kind::kNumber;
      node->value = sign * *number;
    } else {
      return SyntaxError("expected a number, a duration or a byte size");
    }
    return Advance();
  }

  const std::string_view text_;
  Lexer lexer_;
  Token tok_;
};

}  // namespace

absl::StatusOr<std::unique_ptr<Expr>> ParseLogQL(std::string_view text) {
  return Parser(text).Run();
}

}  // namespace strata::compat::logql
