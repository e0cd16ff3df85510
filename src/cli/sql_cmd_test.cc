#include "cli/sql_cmd.h"

#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace strata::cli {
namespace {

std::vector<std::string> Split(std::string_view text, std::string* rest = nullptr) {
  std::vector<std::string> statements;
  std::string left = SplitSqlStatements(text, &statements);
  if (rest != nullptr) *rest = left;
  return statements;
}

TEST(SplitSqlStatementsTest, TwoStatementsOnOneLineAreTwo) {
  std::string rest;
  EXPECT_EQ(Split("SELECT 1; SELECT 2;\n", &rest),
            (std::vector<std::string>{"SELECT 1;", " SELECT 2;"}));
  EXPECT_EQ(rest, "\n");
}

TEST(SplitSqlStatementsTest, SemicolonsInStringsNamesAndCommentsEndNothing) {
  std::string rest;
  EXPECT_EQ(
      Split("SELECT 'a;''b' AS \"x;y\" -- c;\n, $$d;$$, $t$e;$t$ /* f; /* g; */ h; */;", &rest),
      (std::vector<std::string>{
          "SELECT 'a;''b' AS \"x;y\" -- c;\n, $$d;$$, $t$e;$t$ /* f; /* g; */ h; */;"}));
  EXPECT_EQ(rest, "");
  EXPECT_EQ(Split("SELECT E'\\';' AS q; SELECT 2;"),
            (std::vector<std::string>{"SELECT E'\\';' AS q;", " SELECT 2;"}));
  EXPECT_EQ(Split("SELECT $1; SELECT 2;"), (std::vector<std::string>{"SELECT $1;", " SELECT 2;"}));
}

TEST(SplitSqlStatementsTest, UnfinishedStatementIsTheRest) {
  std::string rest;
  EXPECT_EQ(Split("SELECT 1; SELECT 'a;\n", &rest), (std::vector<std::string>{"SELECT 1;"}));
  EXPECT_EQ(rest, " SELECT 'a;\n");
}

TEST(SplitSqlStatementsTest, OnlyCommentsAndEmptyStatementsAreDropped) {
  std::string rest;
  EXPECT_EQ(Split(";; -- note;\n /* x; */ ;", &rest), std::vector<std::string>{});
  EXPECT_EQ(rest, "");
}

TEST(FormatSqlTableTest, TruncatedAnswerSaysWhy) {
  std::string error;
  const std::string table = FormatSqlTable(
      R"({"columns":[{"name":"x","type":"VARCHAR"}],"rows":[["a"]],"truncated":true,)"
      R"("truncated_reason":"the answer's values reached the server's cap"})",
      &error);
  EXPECT_EQ(error, "");
  EXPECT_EQ(table, "x\n-\na\n(1 row; the answer's values reached the server's cap)\n");
  EXPECT_EQ(
      FormatSqlTable(R"({"columns":[{"name":"x","type":"VARCHAR"}],"rows":[],"truncated":true})",
                     &error),
      "x\n-\n(0 rows; more rows exist: raise --limit)\n");
}

}  // namespace
}  // namespace strata::cli
