#include "compat/traceql/parser.h"

#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace strata::compat::traceql {
namespace {

using ::testing::HasSubstr;

Query Parsed(const std::string& text) {
  absl::StatusOr<Query> query = ParseTraceQL(text);
  EXPECT_TRUE(query.ok()) << text << ": " << query.status();
  return query.ok() ? *std::move(query) : Query{};
}

// The one comparison inside a query of a single `{ field op value }`.
const FieldExpr& OnlyComparison(const Query& query) {
  static const FieldExpr kNone;
  if (query.spansets == nullptr || query.spansets->condition == nullptr) return kNone;
  return *query.spansets->condition;
}

TEST(TraceQLParserTest, ComparisonOfAnAttributeWithAString) {
  const Query query = Parsed(R"({ resource.service.name = "checkout" })");
  const FieldExpr& cmp = OnlyComparison(query);
  ASSERT_EQ(cmp.kind, FieldExpr::Kind::kBinary);
  EXPECT_EQ(cmp.op, FieldOp::kEq);
  EXPECT_EQ(cmp.lhs->field.scope, Scope::kResource);
  EXPECT_EQ(cmp.lhs->field.name, "service.name");
  EXPECT_EQ(cmp.rhs->value.kind, StaticKind::kString);
  EXPECT_EQ(cmp.rhs->value.text, "checkout");
}

TEST(TraceQLParserTest, IntrinsicsInEverySpelling) {
  struct Case {
    std::string text;
    Intrinsic intrinsic;
  };
  for (const Case& c : std::vector<Case>{
           {"{ name = \"a\" }", Intrinsic::kName},
           {"{ span:name = \"a\" }", Intrinsic::kName},
           {"{ status = error }", Intrinsic::kStatus},
           {"{ span:status = error }", Intrinsic::kStatus},
           {"{ kind = server }", Intrinsic::kKind},
           {"{ duration > 1s }", Intrinsic::kDuration},
           {"{ span:duration > 1s }", Intrinsic::kDuration},
           {"{ statusMessage = \"x\" }", Intrinsic::kStatusMessage},
           {"{ rootName = \"x\" }", Intrinsic::kRootName},
           {"{ trace:rootName = \"x\" }", Intrinsic::kRootName},
           {"{ rootServiceName = \"x\" }", Intrinsic::kRootServiceName},
           {"{ trace:rootService = \"x\" }", Intrinsic::kRootServiceName},
           {"{ traceDuration > 1s }", Intrinsic::kTraceDuration},
           {"{ trace:duration > 1s }", Intrinsic::kTraceDuration},
           {"{ trace:id = \"ab\" }", Intrinsic::kTraceId},
           {"{ span:id = \"ab\" }", Intrinsic::kSpanId},
           {"{ span:parentID = \"ab\" }", Intrinsic::kParentId},
           {"{ event:name = \"exception\" }", Intrinsic::kEventName},
           {"{ event:timeSinceStart > 1ms }", Intrinsic::kEventTimeSinceStart},
           {"{ link:traceID = \"ab\" }", Intrinsic::kLinkTraceId},
           {"{ link:spanID = \"ab\" }", Intrinsic::kLinkSpanId},
           {"{ instrumentation:name = \"x\" }", Intrinsic::kScopeName},
           {"{ instrumentation:version = \"1\" }", Intrinsic::kScopeVersion},
       }) {
    const Query query = Parsed(c.text);
    const FieldExpr& cmp = OnlyComparison(query);
    ASSERT_EQ(cmp.kind, FieldExpr::Kind::kBinary) << c.text;
    EXPECT_EQ(cmp.lhs->field.intrinsic, c.intrinsic) << c.text;
  }
}

TEST(TraceQLParserTest, ScopesAndQuotedNames) {
  EXPECT_EQ(OnlyComparison(Parsed("{ .a = 1 }")).lhs->field.scope, Scope::kUnscoped);
  EXPECT_EQ(OnlyComparison(Parsed("{ span.a = 1 }")).lhs->field.scope, Scope::kSpan);
  EXPECT_EQ(OnlyComparison(Parsed("{ event.a = 1 }")).lhs->field.scope, Scope::kEvent);
  EXPECT_EQ(OnlyComparison(Parsed("{ link.a = 1 }")).lhs->field.scope, Scope::kLink);
  EXPECT_EQ(OnlyComparison(Parsed("{ instrumentation.a = 1 }")).lhs->field.scope,
            Scope::kInstrumentation);
  EXPECT_EQ(OnlyComparison(Parsed(R"({ span."a b\"c" = 1 })")).lhs->field.name, "a b\"c");
  EXPECT_EQ(OnlyComparison(Parsed("{ .http.status-code/x = 1 }")).lhs->field.name,
            "http.status-code/x");
}

TEST(TraceQLParserTest, ValuesOfEveryKind) {
  auto value = [](const std::string& literal) {
    return OnlyComparison(Parsed("{ .a = " + literal + " }")).rhs->value;
  };
  EXPECT_EQ(value("42").int_value, 42);
  EXPECT_EQ(value("-42").int_value, -42);
  EXPECT_DOUBLE_EQ(value("1.5").float_value, 1.5);
  EXPECT_DOUBLE_EQ(value("-1.5").float_value, -1.5);
  EXPECT_EQ(value("1.5ms").int_value, 1'500'000);
  EXPECT_EQ(value("100us").int_value, 100'000);
  EXPECT_EQ(value("100\xC2\xB5s").int_value, 100'000);
  EXPECT_EQ(value("2m").int_value, 120'000'000'000);
  EXPECT_EQ(value("1h").int_value, 3'600'000'000'000);
  EXPECT_EQ(value("7ns").int_value, 7);
  EXPECT_TRUE(value("true").bool_value);
  EXPECT_EQ(value("nil").kind, StaticKind::kNil);
  EXPECT_EQ(value("error").kind, StaticKind::kStatus);
  EXPECT_EQ(value("error").int_value, kStatusError);
  EXPECT_EQ(value("consumer").kind, StaticKind::kKind);
  EXPECT_EQ(value("consumer").int_value, 5);
  EXPECT_EQ(value("`a\\d+`").text, "a\\d+");
  EXPECT_EQ(value(R"("q\"\\")").text, "q\"\\");
  const Static big = value("99999999999999999999");
  EXPECT_EQ(big.kind, StaticKind::kFloat);
  EXPECT_TRUE(big.int_overflow);
}

TEST(TraceQLParserTest, ValueBeforeFieldIsMirrored) {
  const Query query = Parsed("{ 1s < duration }");
  const FieldExpr& cmp = OnlyComparison(query);
  EXPECT_EQ(cmp.op, FieldOp::kGt);
  EXPECT_EQ(cmp.lhs->field.intrinsic, Intrinsic::kDuration);
}

TEST(TraceQLParserTest, AndBindsTighterThanOr) {
  const Query query = Parsed("{ .a = 1 || .b = 2 && .c = 3 }");
  const FieldExpr& top = OnlyComparison(query);
  ASSERT_EQ(top.op, FieldOp::kOr);
  EXPECT_EQ(top.rhs->op, FieldOp::kAnd);

  const Query spansets = Parsed("{ .a = 1 } || { .b = 2 } && { .c = 3 }");
  ASSERT_EQ(spansets.spansets->kind, SpansetExpr::Kind::kOr);
  EXPECT_EQ(spansets.spansets->rhs->kind, SpansetExpr::Kind::kAnd);
  const Query grouped = Parsed("({ .a = 1 } || { .b = 2 }) && { .c = 3 }");
  EXPECT_EQ(grouped.spansets->kind, SpansetExpr::Kind::kAnd);
}

TEST(TraceQLParserTest, EmptyFilterAndNegationAndSelect) {
  EXPECT_EQ(Parsed("{}").spansets->condition, nullptr);
  const Query negated = Parsed("{ !(.a = 1) }");
  EXPECT_EQ(OnlyComparison(negated).kind, FieldExpr::Kind::kUnary);
  const Query selected = Parsed("{ .a = 1 } | select(span.b, resource.c, duration)");
  ASSERT_EQ(selected.select.size(), 3u);
  EXPECT_EQ(selected.select[0].name, "b");
  EXPECT_EQ(selected.select[1].scope, Scope::kResource);
  EXPECT_EQ(selected.select[2].intrinsic, Intrinsic::kDuration);
}

TEST(TraceQLParserTest, CommentsAndLinesAreSpace) {
  const Query query = Parsed("{\n  .a = 1 // the first\n  && .b = 2\n}");
  EXPECT_EQ(OnlyComparison(query).op, FieldOp::kAnd);
}

TEST(TraceQLParserTest, SyntaxErrorsNameTheColumn) {
  for (const std::string text : {"",
                                 "{",
                                 "{ .a = 1",
                                 "{ .a = }",
                                 "{ = 1 }",
                                 "{ .a == 1 }",
                                 "{ .a = 1 }}",
                                 ".a = 1",
                                 "{ .a = 1 } &&",
                                 "{ status = bogus }",
                                 "{ Status = error }",
                                 "{ .a = 'x' }",
                                 "{ .a = \"x\\ny\" }",
                                 "{ .a = 1e3 }",
                                 "{ .1a = 1 }",
                                 "{ span.foo:bar = 1 } x",
                                 "{ span:foo = 1 }",
                                 "{ .a = 1 } | count()",
                                 "{ .a = 1 } | select()",
                                 "{ .a = 1 } | rate(duration)",
                                 "{ .a = 1 } || !{ .b = 2 }",
                                 "{ .a = \"unterminated }",
                                 "{ duration > 1d }",
                                 "{ .a = 1 } | topk(5.5)",
                                 "{ .a = 1 } { .b = 2 }"}) {
    const absl::StatusOr<Query> query = ParseTraceQL(text);
    ASSERT_FALSE(query.ok()) << text;
    EXPECT_TRUE(absl::IsInvalidArgument(query.status())) << text << ": " << query.status();
    EXPECT_THAT(query.status().message(), HasSubstr("TraceQL: ")) << text;
  }
  EXPECT_THAT(ParseTraceQL("{ .a = }").status().message(), HasSubstr("at column 8"));
}

TEST(TraceQLParserTest, UnsupportedConstructsAreNamed) {
  struct Case {
    std::string text;
    std::string named;
  };
  for (const Case& c : std::vector<Case>{
           {"{ .a = 1 } >> { .b = 2 }", "structural operator >>"},
           {"{ .a = 1 } > { .b = 2 }", "structural operator >"},
           {"{ .a = 1 } !~ { .b = 2 }", "structural operator !~"},
           {"{ .a = 1 } | count() > 2", "aggregate filter"},
           {"{ .a = 1 } | by(.b)", "by()"},
           {"{ .a = 1 } | coalesce()", "coalesce()"},
           {"{ .a = 1 } | rate() by (.b)", "metrics function rate()"},
           {"{ .a = 1 } | quantile_over_time(duration, 0.9)", "quantile_over_time()"},
           {"{ .a = 1 } | { .b = 2 }", "spanset filter after |"},
           {"{ .a + 1 > 2 }", "arithmetic (+)"},
           {"{ .a = .b }", "two fields"},
           {"{ parent.name = \"x\" }", "parent."},
           {"{ -.a > 1 }", "negation"},
       }) {
    const absl::StatusOr<Query> query = ParseTraceQL(c.text);
    ASSERT_FALSE(query.ok()) << c.text;
    EXPECT_TRUE(absl::IsUnimplemented(query.status())) << c.text << ": " << query.status();
    EXPECT_THAT(query.status().message(), HasSubstr(c.named)) << c.text;
  }
}

TEST(TraceQLParserTest, SyntaxErrorAfterAnUnsupportedConstructIsStillASyntaxError) {
  EXPECT_TRUE(absl::IsInvalidArgument(ParseTraceQL("{ .a = 1 } >> { .b = }").status()));
}

TEST(TraceQLParserTest, DepthAndLengthAreBounded) {
  std::string deep(200, '(');
  deep += "{ .a = 1 }";
  deep += std::string(200, ')');
  EXPECT_THAT(ParseTraceQL(deep).status().message(), HasSubstr("nested more than"));
  std::string nots = "{ " + std::string(500, '!') + ".a }";
  EXPECT_THAT(ParseTraceQL(nots).status().message(), HasSubstr("nested more than"));
  std::string huge = "{ .a = \"" + std::string(kMaxTraceQLBytes, 'x') + "\" }";
  EXPECT_THAT(ParseTraceQL(huge).status().message(), HasSubstr("at most"));
}

}  // namespace
}  // namespace strata::compat::traceql
