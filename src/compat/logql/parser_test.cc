#include "compat/logql/parser.h"

#include <string>

#include "compat/logql/check.h"
#include "compat/logql/literals.h"
#include "gtest/gtest.h"

namespace strata::compat::logql {
namespace {

std::unique_ptr<Expr> Parse(const std::string& text) {
  absl::StatusOr<std::unique_ptr<Expr>> parsed = ParseLogQL(text);
  EXPECT_TRUE(parsed.ok()) << text << ": " << parsed.status();
  return parsed.ok() ? *std::move(parsed) : nullptr;
}

bool Rejected(const std::string& text) { return !ParseLogQL(text).ok(); }

TEST(LogQLParserTest, SelectorKeepsEveryMatcherWithItsOperator) {
  auto expr = Parse(R"({service_name="api", env!="dev", pod=~"a.*", ns!~"kube-.*"})");
  ASSERT_NE(expr, nullptr);
  ASSERT_EQ(expr->kind, Expr::Kind::kLog);
  ASSERT_EQ(expr->log.matchers.size(), 4u);
  EXPECT_EQ(expr->log.matchers[0].name, "service_name");
  EXPECT_EQ(expr->log.matchers[0].value, "api");
  EXPECT_EQ(expr->log.matchers[1].op, MatchOp::kNe);
  EXPECT_EQ(expr->log.matchers[2].op, MatchOp::kRegex);
  EXPECT_EQ(expr->log.matchers[3].op, MatchOp::kNotRegex);
}

TEST(LogQLParserTest, LineFiltersChainAndTakeOr) {
  auto expr =
      Parse(R"({a="b"} |= "error" or "fatal" != "debug" |~ `time.?out` !~ "x" |> "<_> ms")");
  ASSERT_NE(expr, nullptr);
  ASSERT_EQ(expr->log.stages.size(), 5u);
  EXPECT_EQ(expr->log.stages[0].line_filter.op, LineFilterOp::kContains);
  EXPECT_EQ(expr->log.stages[0].line_filter.values, (std::vector<std::string>{"error", "fatal"}));
  EXPECT_EQ(expr->log.stages[1].line_filter.op, LineFilterOp::kNotContains);
  EXPECT_EQ(expr->log.stages[2].line_filter.values[0], "time.?out");
  EXPECT_EQ(expr->log.stages[3].line_filter.op, LineFilterOp::kNotRegex);
  EXPECT_EQ(expr->log.stages[4].line_filter.op, LineFilterOp::kPattern);
}

TEST(LogQLParserTest, StringsDecodeEscapesButRawStringsDoNot) {
  auto expr = Parse(R"({a="b\"c\\d\n"} |= `a\nb`)");
  ASSERT_NE(expr, nullptr);
  EXPECT_EQ(expr->log.matchers[0].value, "b\"c\\d\n");
  EXPECT_EQ(expr->log.stages[0].line_filter.values[0], "a\\nb");
}

TEST(LogQLParserTest, ParsersTakeTheirParametersAndFlags) {
  auto expr = Parse(
      R"q({a="b"} | json first="a.b", second | logfmt --strict --keep-empty x, y="z" | regexp "(?P<x>\\d+)" | pattern "<ip> <_>" | unpack | decolorize)q");
  ASSERT_NE(expr, nullptr);
  const auto& stages = expr->log.stages;
  ASSERT_EQ(stages.size(), 6u);
  EXPECT_EQ(stages[0].kind, Stage::Kind::kJson);
  ASSERT_EQ(stages[0].extractions.size(), 2u);
  EXPECT_EQ(stages[0].extractions[0].expression.value_or(""), "a.b");
  EXPECT_FALSE(stages[0].extractions[1].expression.has_value());
  EXPECT_EQ(stages[1].kind, Stage::Kind::kLogfmt);
  EXPECT_TRUE(stages[1].strict);
  EXPECT_TRUE(stages[1].keep_empty);
  EXPECT_EQ(stages[1].extractions.size(), 2u);
  EXPECT_EQ(stages[2].text, "(?P<x>\\d+)");
  EXPECT_EQ(stages[3].kind, Stage::Kind::kPattern);
  EXPECT_EQ(stages[4].kind, Stage::Kind::kUnpack);
  EXPECT_EQ(stages[5].kind, Stage::Kind::kDecolorize);
}

TEST(LogQLParserTest, LabelFiltersReadNumbersDurationsAndBytes) {
  auto expr = Parse(
      R"({a="b"} | logfmt | status >= 500 and latency > 250ms or size <= 1.5KiB, level=~"err.*" | x == -2)");
  ASSERT_NE(expr, nullptr);
  const LabelFilter& root = *expr->log.stages[1].filter;
  // `or` binds weaker than `and` and `,`.
  ASSERT_EQ(root.kind, LabelFilter::Kind::kOr);
  EXPECT_EQ(root.lhs->kind, LabelFilter::Kind::kAnd);
  EXPECT_EQ(root.lhs->lhs->kind, LabelFilter::Kind::kNumber);
  EXPECT_EQ(root.lhs->lhs->op, CompareOp::kGe);
  EXPECT_EQ(root.lhs->lhs->value, 500);
  EXPECT_EQ(root.lhs->rhs->kind, LabelFilter::Kind::kDuration);
  EXPECT_DOUBLE_EQ(root.lhs->rhs->value, 0.25);
  EXPECT_EQ(root.rhs->kind, LabelFilter::Kind::kAnd);
  EXPECT_EQ(root.rhs->lhs->kind, LabelFilter::Kind::kBytes);
  EXPECT_DOUBLE_EQ(root.rhs->lhs->value, 1.5 * 1024);
  EXPECT_EQ(root.rhs->rhs->kind, LabelFilter::Kind::kString);
  EXPECT_EQ(expr->log.stages[2].filter->value, -2);
}

TEST(LogQLParserTest, FormattingStagesAndDropKeep) {
  auto expr = Parse(
      R"({a="b"} | line_format "{{.msg}}" | label_format dst=src, tmpl="{{.x}}-y" | drop __error__, __error_details__, level="debug" | keep a, b)");
  ASSERT_NE(expr, nullptr);
  const auto& stages = expr->log.stages;
  EXPECT_EQ(stages[0].text, "{{.msg}}");
  ASSERT_EQ(stages[1].formats.size(), 2u);
  EXPECT_TRUE(stages[1].formats[0].rename);
  EXPECT_EQ(stages[1].formats[0].value, "src");
  EXPECT_FALSE(stages[1].formats[1].rename);
  ASSERT_EQ(stages[2].selections.size(), 3u);
  EXPECT_TRUE(stages[2].selections[2].matcher.has_value());
  EXPECT_EQ(stages[3].kind, Stage::Kind::kKeep);
}

TEST(LogQLParserTest, GrafanasVolumeQueryParses) {
  auto expr = Parse(
      R"(sum by (level, detected_level) (count_over_time({service_name="x"} | drop __error__ [1m])))");
  ASSERT_NE(expr, nullptr);
  ASSERT_EQ(expr->kind, Expr::Kind::kVectorAggregation);
  EXPECT_EQ(expr->function, "sum");
  EXPECT_EQ(expr->grouping.labels, (std::vector<std::string>{"level", "detected_level"}));
  const Expr& range = *expr->lhs;
  EXPECT_EQ(range.function, "count_over_time");
  EXPECT_EQ(range.range_ns, 60'000'000'000);
  EXPECT_EQ(range.log.stages[0].kind, Stage::Kind::kDrop);
  EXPECT_TRUE(CheckLogQL(*expr).ok());
}

TEST(LogQLParserTest, UnwrapOffsetAndParameter) {
  // Grafana's grammar has no offset after `| json | unwrap x [5m]`.
  EXPECT_TRUE(Rejected(
      R"(quantile_over_time(0.99, {a="b"} | json | unwrap duration(latency) | __error__="" [5m] offset 1h) by (route))"));
  auto expr = Parse(
      R"(quantile_over_time(0.99, {a="b"} [5m] offset 1h | json | unwrap duration(latency) | __error__="") by (route))");
  ASSERT_NE(expr, nullptr);
  EXPECT_EQ(*expr->parameter, 0.99);
  EXPECT_EQ(expr->offset_ns, 3600'000'000'000);
  ASSERT_TRUE(expr->unwrap.has_value());
  EXPECT_EQ(expr->unwrap->conversion, UnwrapConversion::kDuration);
  EXPECT_EQ(expr->unwrap->label, "latency");
  EXPECT_EQ(expr->unwrap->filters.size(), 1u);
  EXPECT_TRUE(expr->grouping.present);
  EXPECT_TRUE(CheckLogQL(*expr).ok());
}

TEST(LogQLParserTest, BinaryOperatorsFollowPrometheusPrecedence) {
  auto expr = Parse("vector(1) + vector(2) * 3 ^ 2 ^ 1 > bool 4 or vector(0)");
  ASSERT_NE(expr, nullptr);
  ASSERT_EQ(expr->kind, Expr::Kind::kBinary);
  EXPECT_EQ(expr->op, BinaryOp::kOr);
  const Expr& comparison = *expr->lhs;
  EXPECT_EQ(comparison.op, BinaryOp::kGt);
  EXPECT_TRUE(comparison.matching.return_bool);
  const Expr& sum = *comparison.lhs;
  EXPECT_EQ(sum.op, BinaryOp::kAdd);
  EXPECT_EQ(sum.rhs->op, BinaryOp::kMul);
  const Expr& power = *sum.rhs->rhs;
  EXPECT_EQ(power.op, BinaryOp::kPow);
  EXPECT_EQ(power.rhs->kind, Expr::Kind::kBinary);  // right-associative
}

TEST(LogQLParserTest, VectorMatchingModifiers) {
  auto expr = Parse(
      R"(sum by (a) (rate({x="y"}[1m])) / on (a) group_left (b) sum by (a, b) (rate({x="y"}[1m])))");
  ASSERT_NE(expr, nullptr);
  EXPECT_TRUE(expr->matching.on);
  EXPECT_EQ(expr->matching.labels, std::vector<std::string>{"a"});
  EXPECT_TRUE(expr->matching.group_left);
  EXPECT_EQ(expr->matching.include, std::vector<std::string>{"b"});
}

TEST(LogQLParserTest, TopkTakesItsParameterAndGroupingAfter) {
  auto expr = Parse(R"(topk(5, sum(rate({a="b"}[5m])) by (c)) without (d))");
  ASSERT_NE(expr, nullptr);
  EXPECT_EQ(expr->function, "topk");
  EXPECT_EQ(*expr->parameter, 5);
  EXPECT_TRUE(expr->grouping.without);
  EXPECT_TRUE(CheckLogQL(*expr).ok());
}

TEST(LogQLParserTest, SyntaxErrorsNameTheColumn) {
  absl::StatusOr<std::unique_ptr<Expr>> parsed = ParseLogQL(R"({a="b"} |= )");
  ASSERT_FALSE(parsed.ok());
  EXPECT_TRUE(absl::IsInvalidArgument(parsed.status()));
  EXPECT_NE(parsed.status().message().find("column 12"), std::string::npos) << parsed.status();
}

TEST(LogQLParserTest, RejectsWhatTheGrammarRejects) {
  for (const char* text : {
           "",
           "{}",
           R"({a="b",})",
           R"({a=b})",
           R"({a=="b"})",
           R"({json="b"})",
           R"({a="b"} | json |)",
           R"({a="b"} |= "x" or)",
           R"({a="b"} | x =~ 5)",
           R"({a="b"} | x == "y")",
           R"({a="b"} | unwrap x)",
           R"(count_over_time({a="b"}))",
           R"(count_over_time({a="b"}[5x]))",
           R"(count_over_time({a="b"}[1.5d]))",
           R"(count_over_time({a="b"}[1s1m]))",
           R"(sum by (a (rate({a="b"}[1m])))",
           R"(vector(-1))",
           R"(-vector(1))",
           R"({a="b"} | x > 1KBx)",
           R"({a="b"} |= "unterminated)",
           R"({a="b"} | logfmt --lenient)",
           R"(sum({a="b"}))",
           R"(sum(({a="b"} |= "x")))",
           R"({a="b"} != 1)",
       }) {
    EXPECT_TRUE(Rejected(text)) << text;
  }
}

TEST(LogQLParserTest, LimitsOnLengthAndDepth) {
  EXPECT_TRUE(Rejected(std::string(kMaxLogQLBytes + 1, ' ') + "vector(1)"));
  std::string deep;
  for (int i = 0; i <= kMaxLogQLDepth; ++i) deep += "(";
  deep += "vector(1)";
  for (int i = 0; i <= kMaxLogQLDepth; ++i) deep += ")";
  EXPECT_TRUE(Rejected(deep));
  std::string shallow = "((((vector(1))))) + 1";
  EXPECT_FALSE(Rejected(shallow));
}

TEST(LogQLCheckTest, RefusesWhatLokiRefuses) {
  for (const char* text : {
           R"({a=""})",
           R"({a=~".*"})",
           R"({a!="x"})",
           R"(sum_over_time({a="b"}[1m]))",
           R"(count_over_time({a="b"} | unwrap x [1m]))",
           R"(quantile_over_time({a="b"} | unwrap x [1m]))",
           R"(count_over_time({a="b"}[1m]) by (a))",
           R"(topk(sum(rate({a="b"}[1m]))))",
           R"(sum(2, rate({a="b"}[1m])))",
           R"(sum({a="b"} + 1))",
           R"({a="b"} + 1)",
           R"(1 > 2)",
           R"(vector(1) or 1)",
           R"q({a="b"} |~ "(")q",
       }) {
    auto expr = Parse(text);
    ASSERT_NE(expr, nullptr) << text;
    EXPECT_FALSE(CheckLogQL(*expr).ok()) << text;
  }
  for (
      const char* text : {
          R"({a=~".+"})",
          R"(1 > bool 2)",
          R"(vector(1)+vector(1))",
          R"(rate({a="b"} | unwrap x [1m]))",
          R"(sum by (level, detected_level) (count_over_time({service_name="x"} | drop __error__ [1m])))",
      }) {
    auto expr = Parse(text);
    ASSERT_NE(expr, nullptr) << text;
    EXPECT_TRUE(CheckLogQL(*expr).ok()) << text;
  }
}

TEST(LogQLLiteralsTest, DurationsBytesAndNumbers) {
  EXPECT_EQ(ParseLogQLDuration("1h30m"), 5400'000'000'000);
  EXPECT_EQ(ParseLogQLDuration("1.5s"), 1'500'000'000);
  EXPECT_EQ(ParseLogQLDuration("2d"), 2 * 86400'000'000'000);
  EXPECT_EQ(ParseLogQLDuration("100ms"), 100'000'000);
  EXPECT_EQ(ParseLogQLDuration("5\xC2\xB5s"), 5'000);
  EXPECT_FALSE(ParseLogQLDuration("5").has_value());
  EXPECT_FALSE(ParseLogQLDuration("1m1h").has_value());
  EXPECT_EQ(ParseLogQLBytes("10KB"), 10'000);
  EXPECT_EQ(ParseLogQLBytes("2MiB"), 2 * 1024 * 1024);
  EXPECT_FALSE(ParseLogQLBytes("2kiB").has_value());
  EXPECT_EQ(ParseLogQLNumber("0x1f"), 31);
  EXPECT_EQ(ParseLogQLNumber(".5"), 0.5);
  EXPECT_EQ(ParseLogQLNumber("2.5e-1"), 0.25);
  EXPECT_FALSE(ParseLogQLNumber("1e").has_value());
}

}  // namespace
}  // namespace strata::compat::logql
