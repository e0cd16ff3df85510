#include "compat/promql/result_json.h"

#include <cmath>
#include <limits>

#include "gtest/gtest.h"

namespace strata::compat::promql {
namespace {

TEST(PromQLResultJsonTest, FloatsAsGoFormatsThem) {
  EXPECT_EQ(FormatFloat(2), "2");
  EXPECT_EQ(FormatFloat(0.1), "0.1");
  EXPECT_EQ(FormatFloat(1e21), "1000000000000000000000");
  EXPECT_EQ(FormatFloat(1.5e-7), "0.00000015");
  EXPECT_EQ(FormatFloat(-3.25), "-3.25");
  EXPECT_EQ(FormatFloat(1.0 / 3), "0.3333333333333333");
  EXPECT_EQ(FormatFloat(std::numeric_limits<double>::quiet_NaN()), "NaN");
  EXPECT_EQ(FormatFloat(std::numeric_limits<double>::infinity()), "+Inf");
  EXPECT_EQ(FormatFloat(-std::numeric_limits<double>::infinity()), "-Inf");
}

TEST(PromQLResultJsonTest, TimestampsWithThreeDecimalsWhenNotWhole) {
  EXPECT_EQ(FormatTimestamp(1435781451781), "1435781451.781");
  EXPECT_EQ(FormatTimestamp(1500), "1.500");
  EXPECT_EQ(FormatTimestamp(1005), "1.005");
  EXPECT_EQ(FormatTimestamp(60000), "60");
  EXPECT_EQ(FormatTimestamp(-1500), "-1.500");
}

TEST(PromQLResultJsonTest, EveryResultTypeInPrometheusShape) {
  QueryResult scalar{.type = ValueType::kScalar, .t_ms = 1000, .scalar = 2};
  EXPECT_EQ(ResultDataJson(scalar), R"({"resultType":"scalar","result":[1,"2"]})");
  QueryResult text{.type = ValueType::kString, .t_ms = 1000, .text = "a\"<b>"};
  EXPECT_EQ(ResultDataJson(text), R"({"resultType":"string","result":[1,"a\"\u003cb\u003e"]})");
  QueryResult vector{.type = ValueType::kVector};
  vector.vector.push_back(VectorElement{
      {{"__name__", "up"}, {"job", "x"}}, 2500, std::numeric_limits<double>::infinity()});
  EXPECT_EQ(
      ResultDataJson(vector),
      R"({"resultType":"vector","result":[{"metric":{"__name__":"up","job":"x"},"value":[2.500,"+Inf"]}]})");
  QueryResult matrix{.type = ValueType::kMatrix};
  matrix.matrix.push_back(MatrixSeries{{}, {{0, 1}, {15000, 0.5}}});
  EXPECT_EQ(ResultDataJson(matrix),
            R"({"resultType":"matrix","result":[{"metric":{},"values":[[0,"1"],[15,"0.5"]]}]})");
  QueryResult empty{.type = ValueType::kVector};
  EXPECT_EQ(ResultDataJson(empty), R"({"resultType":"vector","result":[]})");
}

}  // namespace
}  // namespace strata::compat::promql
