#include "api/json_output.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace strata::api {
namespace {

using ::testing::HasSubstr;

TEST(JsonOutputTest, SqlJsonBodyIsRead) {
  EXPECT_EQ(*ParseSqlJson(R"({"sql": "SELECT 1"})"), "SELECT 1");
  EXPECT_EQ(*ParseSqlJson(" {\n\"sql\":\"a\\\"b\\n\\u00e9\\ud83d\\ude00\"} "),
            "a\"b\n\xC3\xA9\xF0\x9F\x98\x80");
  auto message = [](std::string_view body) {
    return std::string(ParseSqlJson(body).status().message());
  };
  EXPECT_THAT(message("SELECT 1"), HasSubstr("body: not valid JSON"));
  EXPECT_THAT(message("[1]"), HasSubstr("body: expected a JSON object"));
  EXPECT_THAT(message("{}"), HasSubstr("body: missing member \"sql\""));
  EXPECT_THAT(message(R"({"sql": 1})"), HasSubstr("body: member \"sql\" must be a string"));
  EXPECT_THAT(message(R"({"sql": "a", "sql": "b"})"), HasSubstr("given twice"));
  EXPECT_THAT(message(R"({"sql": "a"} x)"), HasSubstr("body: not valid JSON"));
  EXPECT_THAT(message(R"({"sql": "a)"), HasSubstr("body: not valid JSON"));
  EXPECT_THAT(message(R"({"sql": "\ud800"})"), HasSubstr("body: not valid JSON"));
}

TEST(JsonOutputTest, SqlResultTypesBecomeJsonValues) {
  query::QueryResult result;
  result.columns = {"i", "d", "b", "s", "h", "n", "x"};
  result.types = {"BIGINT", "DOUBLE", "BOOLEAN", "VARCHAR", "HUGEINT", "DOUBLE", "DECIMAL(18,3)"};
  result.rows = {
      {"42", "1.5", "true", "a\"b", "170141183460469231731687303715884105727", "nan", "-1.250"},
      {std::nullopt, "-inf", "false", "", "0", "inf", std::nullopt}};
  result.truncated = true;
  const std::string expected =
      R"({"columns":[{"name":"i","type":"BIGINT"},{"name":"d","type":"DOUBLE"},)"
      R"({"name":"b","type":"BOOLEAN"},{"name":"s","type":"VARCHAR"},)"
      R"({"name":"h","type":"HUGEINT"},{"name":"n","type":"DOUBLE"},)"
      R"j({"name":"x","type":"DECIMAL(18,3)"}],)j"
      R"("rows":[[42,1.5,true,"a\"b",170141183460469231731687303715884105727,"NaN",-1.250],)"
      R"([null,"-Infinity",false,"",0,"Infinity",null]],"truncated":true,"truncated_reason":"why"})";
  EXPECT_EQ(SqlResultJson(result, "why"), expected);
  result.truncated = false;
  EXPECT_THAT(SqlResultJson(result, "why"), ::testing::EndsWith(R"("truncated":false})"));
}

TEST(JsonOutputTest, ErrorsAndListsEscapeStrings) {
  EXPECT_EQ(ErrorJson("start: \"x\"\n"), R"({"error":"start: \"x\"\n"})");
  LogPage page;
  page.values.bodies.AppendString("hi");
  page.values.log_attributes.Append(
      otlp::AttributeRow{.key = "k\"", .value = {.type = otlp::ValueType::kInt, .bits = 3}});
  page.values.resource_attributes.Append(otlp::AttributeRow{
      .key = "service.name", .value = {.type = otlp::ValueType::kString, .str = "svc"}});
  page.logs.push_back(LogEntry{.time = 5,
                               .observed_time = 6,
                               .severity_number = 9,
                               .severity_text = "INFO",
                               .service = "svc",
                               .trace_id = "",
                               .span_id = "",
                               .body = 0,
                               .attributes = {0, 1},
                               .scope_attributes = {},
                               .resource_attributes = {0, 1}});
  EXPECT_EQ(LogsJson(page),
            R"({"logs":[{"time_unix_nano":"5","observed_time_unix_nano":"6","severity_number":9,)"
            R"("severity_text":"INFO","body":{"stringValue":"hi"},"service_name":"svc",)"
            R"("trace_id":"","span_id":"","attributes":[{"key":"k\"","value":{"intValue":"3"}}],)"
            R"("scope_attributes":[],"resource_attributes":[{"key":"service.name",)"
            R"("value":{"stringValue":"svc"}}]}],"next_cursor":null})");
}

}  // namespace
}  // namespace strata::api
