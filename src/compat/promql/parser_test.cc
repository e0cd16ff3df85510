#include "compat/promql/parser.h"

#include <cmath>
#include <string>

#include "compat/promql/functions.h"
#include "gtest/gtest.h"

namespace strata::compat::promql {
namespace {

std::unique_ptr<Expr> MustParse(const std::string& q) {
  absl::StatusOr<std::unique_ptr<Expr>> e = ParsePromQL(q);
  EXPECT_TRUE(e.ok()) << q << ": " << e.status();
  return e.ok() ? *std::move(e) : nullptr;
}

std::string Error(const std::string& q) {
  absl::StatusOr<std::unique_ptr<Expr>> e = ParsePromQL(q);
  EXPECT_FALSE(e.ok()) << q << " parsed";
  return e.ok() ? "" : std::string(e.status().message());
}

TEST(PromQLParserTest, NumbersInEveryNotation) {
  EXPECT_EQ(MustParse("0x1F")->number, 31);
  EXPECT_EQ(MustParse("1e3")->number, 1000);
  EXPECT_EQ(MustParse(".5")->number, 0.5);
  EXPECT_EQ(MustParse("-2")->number, -2);
  EXPECT_EQ(MustParse("010")->number, 8);  // Go's ParseInt with base 0
  EXPECT_TRUE(std::isinf(MustParse("Inf")->number));
  EXPECT_TRUE(std::isinf(MustParse("-inf")->number));
  EXPECT_TRUE(std::isnan(MustParse("NaN")->number));
}

TEST(PromQLParserTest, DurationsCombineUnitsInOrder) {
  EXPECT_EQ(*ParseDurationMs("1h30m"), 90 * 60 * 1000);
  EXPECT_EQ(*ParseDurationMs("100ms"), 100);
  EXPECT_EQ(*ParseDurationMs("1y"), 365LL * 24 * 3600 * 1000);
  EXPECT_FALSE(ParseDurationMs("30m1h").ok());
  EXPECT_FALSE(ParseDurationMs("0s").ok());
  EXPECT_FALSE(ParseDurationMs("1.5h").ok());
}

TEST(PromQLParserTest, SelectorsWithAllMatchersAndModifiers) {
  auto e = MustParse(R"(foo{a="b", c!="d", e=~"f.*", g!~"h",} offset -5m @ 100.5)");
  ASSERT_EQ(e->kind, Expr::Kind::kVectorSelector);
  ASSERT_EQ(e->matchers.size(), 5u);
  EXPECT_EQ(e->matchers[4].name, "__name__");
  EXPECT_EQ(e->offset_ms, -5 * 60 * 1000);
  EXPECT_EQ(e->at, AtKind::kTime);
  EXPECT_EQ(e->at_ms, 100500);
  auto m = MustParse("rate({__name__=~\"http_.*\"}[5m] @ end() offset 1m)");
  ASSERT_EQ(m->args[0]->kind, Expr::Kind::kMatrixSelector);
  EXPECT_EQ(m->args[0]->selector->at, AtKind::kEnd);
  EXPECT_EQ(m->args[0]->selector->offset_ms, 60000);
  auto s = MustParse("max_over_time(rate(x[1m])[1h:5m] offset 1d)");
  ASSERT_EQ(s->args[0]->kind, Expr::Kind::kSubquery);
  EXPECT_EQ(s->args[0]->step_ms, 300000);
  EXPECT_EQ(s->args[0]->offset_ms, 86400000);
}

TEST(PromQLParserTest, PrecedenceAndAssociativity) {
  EXPECT_EQ(ExprToString(*MustParse("2 ^ 3 ^ 2")), "2 ^ 3 ^ 2");
  auto pow = MustParse("2 ^ 3 ^ 2");
  EXPECT_EQ(pow->rhs->kind, Expr::Kind::kBinary);  // right-associative
  auto sub = MustParse("1 - 2 - 3");
  EXPECT_EQ(sub->lhs->kind, Expr::Kind::kBinary);  // left-associative
  auto mixed = MustParse("a + b * c > bool d or e and f");
  EXPECT_EQ(mixed->op, BinaryOp::kOr);
  EXPECT_EQ(mixed->lhs->op, BinaryOp::kGt);
  EXPECT_TRUE(mixed->lhs->return_bool);
  EXPECT_EQ(mixed->rhs->op, BinaryOp::kAnd);
  auto unary = MustParse("-a ^ b");
  EXPECT_EQ(unary->kind, Expr::Kind::kUnary);  // -(a ^ b)
  auto matching = MustParse("a * on(x, y) group_left(z) b");
  EXPECT_EQ(matching->matching.card, Cardinality::kManyToOne);
  EXPECT_EQ(matching->matching.include.size(), 1u);
}

TEST(PromQLParserTest, AggregationsWithGroupingEitherSide) {
  auto before = MustParse("sum by (job) (rate(x[5m]))");
  auto after = MustParse("sum(rate(x[5m])) without (instance,)");
  EXPECT_EQ(before->grouping, std::vector<std::string>{"job"});
  EXPECT_TRUE(after->without);
  auto topk = MustParse("topk(3, x)");
  ASSERT_NE(topk->param, nullptr);
  MustParse("count_values(\"v\", x)");
  MustParse("quantile(0.9, x)");
  MustParse("SUM(x)");
}

TEST(PromQLParserTest, TypeErrorsAsPrometheusReportsThem) {
  EXPECT_NE(Error("rate(x)").find("expected type range vector"), std::string::npos);
  EXPECT_NE(Error("1 > 2").find("comparisons between scalars must use BOOL modifier"),
            std::string::npos);
  EXPECT_NE(Error("x and 1").find("set operator"), std::string::npos);
  EXPECT_NE(Error("x + bool y").find("bool modifier"), std::string::npos);
  EXPECT_NE(Error("sum(x[5m])").find("aggregation expression"), std::string::npos);
  EXPECT_NE(Error("topk(x, y)").find("aggregation parameter"), std::string::npos);
  EXPECT_NE(Error("{}").find("at least one non-empty matcher"), std::string::npos);
  EXPECT_NE(Error("{a=~\".*\"}").find("at least one non-empty matcher"), std::string::npos);
  EXPECT_NE(Error("foo{__name__=\"bar\"}").find("set twice"), std::string::npos);
  EXPECT_NE(Error("sum(x)[5m]").find("ranges only allowed"), std::string::npos);
  EXPECT_NE(Error("x offset 5m [10m]").find("no offset modifiers"), std::string::npos);
  EXPECT_NE(Error("sum(x) offset 5m").find("offset modifier must be preceded"), std::string::npos);
  EXPECT_NE(Error("x offset 1m offset 2m").find("multiple times"), std::string::npos);
  EXPECT_NE(Error("x @ 1 @ 2").find("multiple times"), std::string::npos);
  EXPECT_NE(Error("x @ Inf").find("out of bounds"), std::string::npos);
  EXPECT_NE(Error("foo(x)").find("unknown function"), std::string::npos);
  EXPECT_NE(Error("label_join(x, \"a\")").find("at least 3"), std::string::npos);
  EXPECT_NE(Error("round(x, 1, 2)").find("at most 2"), std::string::npos);
  EXPECT_NE(Error("x{a=~\"(\"}").find("error parsing regexp"), std::string::npos);
  EXPECT_NE(Error("x[5m][1m:]").find("subquery is only allowed"), std::string::npos);
  EXPECT_NE(Error("a + on(x) group_left(x) b").find("must not occur"), std::string::npos);
  EXPECT_NE(Error("a and on(x) group_left b").find("no grouping"), std::string::npos);
  EXPECT_NE(Error("-x[5m]").find("unary expression"), std::string::npos);
  EXPECT_NE(Error("x[0s]").find("greater than 0"), std::string::npos);
  EXPECT_NE(Error("").find("no expression"), std::string::npos);
  EXPECT_NE(Error("x[5m").find("1:5: parse error"), std::string::npos);
}

TEST(PromQLParserTest, StringsInEveryQuoting) {
  EXPECT_EQ(MustParse(R"("a\tb\x41\u00e9")")->text, "a\tbA\xc3\xa9");
  EXPECT_EQ(MustParse(R"('it\'s')")->text, "it's");
  EXPECT_EQ(MustParse("`raw\\n`")->text, "raw\\n");
  Error(R"("a\'")");
  Error("\"unterminated");
  Error(R"("\q")");
}

TEST(PromQLParserTest, CommentsAndKeywordsAsNames) {
  MustParse("x # a comment\n + 1");
  auto by_metric = MustParse("sum");
  EXPECT_EQ(by_metric->kind, Expr::Kind::kVectorSelector);
  MustParse("foo{by=\"x\", offset=\"y\"}");
  MustParse("sum by (offset, bool) (x)");
  MustParse("hour()");
  MustParse("hour(x)");
  Error("hour(x, y)");
}

TEST(PromQLParserTest, DeepNestingIsRefusedNotACrash) {
  std::string deep(100000, '(');
  EXPECT_FALSE(ParsePromQL(deep + "1" + std::string(100000, ')')).ok());
  std::string chain = "x";
  for (int i = 0; i < 100000; ++i) chain += "+x";
  EXPECT_FALSE(ParsePromQL(chain).ok());
  std::string long_enough = "x";
  for (int i = 0; i < 300; ++i) long_enough += " + x";
  EXPECT_TRUE(ParsePromQL(long_enough).ok());
}

}  // namespace
}  // namespace strata::compat::promql
