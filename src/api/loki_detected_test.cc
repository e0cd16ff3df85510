#include "api/loki_detected.h"

#include "gtest/gtest.h"
#include "simdjson.h"

namespace strata::api {
namespace {

using compat::logql::LogLine;

TEST(LokiFieldDetectorTest, TypesFromTheFirstParserThatReadsAValue) {
  EXPECT_EQ(LokiFieldDetector::TypeOf("true"), "boolean");
  EXPECT_EQ(LokiFieldDetector::TypeOf("-42"), "int");
  EXPECT_EQ(LokiFieldDetector::TypeOf("2.5"), "float");
  EXPECT_EQ(LokiFieldDetector::TypeOf("1h30m"), "duration");
  EXPECT_EQ(LokiFieldDetector::TypeOf("10KB"), "bytes");
  EXPECT_EQ(LokiFieldDetector::TypeOf("GET /cart"), "string");
}

TEST(LokiFieldDetectorTest, FieldsFromMetadataJsonAndLogfmtWithCardinality) {
  LokiFieldDetector detector(100);
  LogLine json;
  json.line = R"({"a":1,"b":{"c":"x"},"d":"5s","service_name":"dup"})";
  json.stream = {{"service_name", "cart"}};
  json.metadata = {{"trace_id", "abc"}};
  detector.Add(json);
  LogLine logfmt;
  logfmt.line = "dur=250ms size=10KB ok=true a=2.5 bare";
  logfmt.metadata = {{"trace_id", "def"}};
  detector.Add(logfmt);
  LogLine again = logfmt;
  again.line = "dur=1s size=10KB";
  detector.Add(again);

  simdjson::dom::parser parser;
  const std::string answer = detector.Json();
  simdjson::dom::element doc = parser.parse(answer).value();
  EXPECT_EQ(int64_t(doc["limit"]), 100);
  std::map<std::string, std::string> got;
  for (simdjson::dom::element field : simdjson::dom::array(doc["fields"])) {
    std::string parsers;
    simdjson::dom::array list;
    if (field["parsers"].get_array().get(list) == simdjson::SUCCESS) {
      for (simdjson::dom::element p : list) parsers += std::string(std::string_view(p)) + ",";
    } else {
      EXPECT_TRUE(field["parsers"].is_null());
      parsers = "null";
    }
    got[std::string(std::string_view(field["label"]))] =
        std::string(std::string_view(field["type"])) + " " +
        std::to_string(int64_t(field["cardinality"])) + " " + parsers;
  }
  // `a` is an int in one line and a float in another: a string. A parsed
  // name the stream has (service_name) and a bare logfmt key are no fields.
  EXPECT_EQ(got, (std::map<std::string, std::string>{
                     {"a", "string 2 json,logfmt,"},
                     {"b_c", "string 1 json,"},
                     {"d", "duration 1 json,"},
                     {"dur", "duration 2 logfmt,"},
                     {"ok", "boolean 1 logfmt,"},
                     {"size", "bytes 1 logfmt,"},
                     {"trace_id", "string 2 null"},
                 }));
}

TEST(LokiFieldDetectorTest, FieldsPastTheLimitAreNotTracked) {
  LokiFieldDetector detector(2);
  LogLine line;
  line.line = "a=1 b=2 c=3";
  detector.Add(line);
  const std::string answer = detector.Json();
  EXPECT_NE(answer.find(R"("label":"b")"), std::string::npos) << answer;
  EXPECT_EQ(answer.find(R"("label":"c")"), std::string::npos) << answer;
  EXPECT_NE(answer.find(R"("limit":2)"), std::string::npos) << answer;
}

}  // namespace
}  // namespace strata::api
