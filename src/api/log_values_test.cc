// GET /api/v1/logs answers typed values. Log records whose bodies and
// attributes cover every AnyValue type (maps and arrays nested, bytes, the
// int64 and double extremes, NaN, -0.0, unicode and escapes) are exported
// through strata's ingest service (IngestService: decode, group commit,
// durable publish), once as OTLP/JSON and once as protobuf, and every
// answer is compared with what was sent: the sent request decoded by the
// OTLP/JSON decoder and written back by the OTLP/JSON encoder, whose
// round trip otlp's tests prove lossless. q= is compared with DuckDB's own
// lower() and contains() over the strings of the sent bodies.

#include <algorithm>
#include <cctype>
#include <future>
#include <map>
#include <set>

#include "api/api_server.h"
#include "api/api_test_server.h"
#include "api/params.h"
#include "fmt/format.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "io/posix_file_system.h"
#include "otlp/any_value_codec.h"
#include "otlp/decode.h"
#include "otlp/encode.h"
#include "query/duckdb_engine.h"
#include "query/query_pool.h"
#include "server/http_testing.h"
#include "server/ingest_metrics.h"
#include "server/ingest_service.h"
#include "simdjson.h"
#include "storage/storage.h"
#include "storage/testing/commit_testing.h"

namespace strata::api {
namespace {

using server::testing::Curl;
using server::testing::HttpAnswer;

constexpr int64_t kSecond = 1'000'000'000;
constexpr char kReadToken[] = "read-token";

// Bodies, as sent: one record each. "" sends no body.
const std::vector<std::string>& SentBodies() {
  static const std::vector<std::string> bodies = {
      // The issue's example: a map with a message and a code.
      R"({"kvlistValue":{"values":[{"key":"message","value":{"stringValue":"payment failed"}},)"
      R"({"key":"code","value":{"intValue":"402"}}]}})",
      // Maps and arrays nested, with every scalar type inside.
      R"({"kvlistValue":{"values":[{"key":"order","value":{"kvlistValue":{"values":[)"
      R"({"key":"items","value":{"arrayValue":{"values":[{"stringValue":"Grüße aus Köln"},)"
      R"({"doubleValue":2.5},{"boolValue":false},{"bytesValue":"AAEC/w=="},{}]}}},)"
      R"({"key":"zebrakey","value":{"stringValue":"Deep Needle ✓"}}]}}}]}})",
      R"({"arrayValue":{"values":[{"stringValue":"ÉCOLE élève"},)"
      R"({"intValue":"-9223372036854775808"},{"arrayValue":{"values":[)"
      R"({"stringValue":"日本語のログ"}]}},{"kvlistValue":{}}]}})",
      R"({"stringValue":"quote \" backslash \\ tab \t newline \n Ünïcødé 😀"})",
      R"({"stringValue":""})",
      R"({"intValue":"9223372036854775807"})",
      R"({"doubleValue":0.1})",
      R"({"doubleValue":-0.0})",
      R"({"doubleValue":5e-324})",
      R"({"doubleValue":1.7976931348623157e308})",
      R"({"doubleValue":"NaN"})",
      R"({"doubleValue":"-Infinity"})",
      R"({"boolValue":true})",
      R"({"bytesValue":"3q2+7w=="})",
      R"({"arrayValue":{}})",
      R"({"kvlistValue":{}})",
      "",
  };
  return bodies;
}

// Attributes every record carries (a repeated key included: strata keeps
// it), then "record": the record's index.
constexpr char kRecordAttributes[] =
    R"({"key":"attempt","value":{"intValue":"3"}},{"key":"ratio","value":{"doubleValue":0.25}},)"
    R"({"key":"ok","value":{"boolValue":true}},{"key":"blob","value":{"bytesValue":"AQID"}},)"
    R"({"key":"tags","value":{"arrayValue":{"values":[{"stringValue":"a"},{"intValue":"1"}]}}},)"
    R"({"key":"ctx","value":{"kvlistValue":{"values":[{"key":"user","value":)"
    R"({"stringValue":"Zoë"}}]}}},{"key":"empty","value":{}},)"
    R"({"key":"ключ","value":{"stringValue":"значение"}},)"
    R"({"key":"dup","value":{"stringValue":"x"}},{"key":"dup","value":{"intValue":"7"}})";

std::string RequestJson(std::string_view service, int64_t t0) {
  std::string records;
  for (size_t i = 0; i < SentBodies().size(); ++i) {
    const std::string& body = SentBodies()[i];
    records += fmt::format(R"({}{{"timeUnixNano":"{}","severityNumber":9,"severityText":"INFO",{})"
                           R"("attributes":[{},{{"key":"record","value":{{"intValue":"{}"}}}}]}})",
                           records.empty() ? "" : ",", t0 + static_cast<int64_t>(i) * kSecond,
                           body.empty() ? std::string() : fmt::format(R"("body":{},)", body),
                           kRecordAttributes, i);
  }
  return fmt::format(
      R"({{"resourceLogs":[{{"resource":{{"attributes":[)"
      R"({{"key":"service.name","value":{{"stringValue":"{}"}}}},)"
      R"({{"key":"host.cpus","value":{{"intValue":"64"}}}},)"
      R"({{"key":"res.map","value":{{"kvlistValue":{{"values":[{{"key":"zone","value":)"
      R"({{"stringValue":"eu-1"}}}}]}}}}}}]}},"scopeLogs":[{{"scope":{{"name":"structured-test",)"
      R"("version":"1.0","attributes":[{{"key":"scope.flag","value":{{"boolValue":true}}}},)"
      R"({{"key":"scope.nums","value":{{"arrayValue":{{"values":[{{"doubleValue":1.5}}]}}}}}}]}},)"
      R"("logRecords":[{}]}}]}}]}})",
      service, records);
}

// What was sent, per record time, in the OTLP/JSON encoder's form,
// minified by simdjson: body ("{}" when none) and the three attribute
// lists ("[]" when empty).
struct SentRecord {
  std::string body;
  std::string attributes;
  std::string scope_attributes;
  std::string resource_attributes;
  std::vector<std::string> body_strings;  // every stringValue in the body
};

std::string MinifiedOr(simdjson::dom::element parent, std::string_view key,
                       std::string_view absent) {
  simdjson::dom::element value;
  if (parent[key].get(value) != simdjson::SUCCESS) return std::string(absent);
  return simdjson::minify(value);
}

void CollectStrings(simdjson::dom::element value, std::vector<std::string>* out) {
  if (value.is_object()) {
    for (auto [key, child] : simdjson::dom::object(value.get_object().value())) {
      if (key == "stringValue") {
        out->emplace_back(child.get_string().value());
      } else {
        CollectStrings(child, out);
      }
    }
  } else if (value.is_array()) {
    for (simdjson::dom::element child : simdjson::dom::array(value.get_array().value()))
      CollectStrings(child, out);
  }
}

// Fails the test (and returns nothing) when the request does not decode.
std::map<std::string, SentRecord> SentRecords(const std::string& request_json) {
  std::map<std::string, SentRecord> out;
  otlp::LogBatch batch;
  const absl::Status decoded = otlp::DecodeLogsJson(request_json, &batch);
  EXPECT_TRUE(decoded.ok()) << decoded;
  if (!decoded.ok()) return out;
  const std::string reference = otlp::EncodeLogsJson(batch);
  static simdjson::dom::parser parser;
  simdjson::dom::element doc = parser.parse(reference).value();
  for (simdjson::dom::element resource :
       simdjson::dom::array(doc["resourceLogs"].get_array().value())) {
    const std::string resource_attributes =
        MinifiedOr(resource["resource"].value(), "attributes", "[]");
    for (simdjson::dom::element scope :
         simdjson::dom::array(resource["scopeLogs"].get_array().value())) {
      const std::string scope_attributes = MinifiedOr(scope["scope"].value(), "attributes", "[]");
      for (simdjson::dom::element record :
           simdjson::dom::array(scope["logRecords"].get_array().value())) {
        SentRecord sent{.body = MinifiedOr(record, "body", "{}"),
                        .attributes = MinifiedOr(record, "attributes", "[]"),
                        .scope_attributes = scope_attributes,
                        .resource_attributes = resource_attributes};
        simdjson::dom::element body;
        if (record["body"].get(body) == simdjson::SUCCESS) CollectStrings(body, &sent.body_strings);
        out[std::string(record["timeUnixNano"].get_string().value())] = std::move(sent);
      }
    }
  }
  return out;
}

std::string PercentEncode(std::string_view text) {
  std::string out;
  for (unsigned char c : text) {
    if (std::isalnum(c) != 0 || c == '-' || c == '_' || c == '.' || c == '~') {
      out.push_back(static_cast<char>(c));
    } else {
      out += fmt::format("%{:02X}", c);
    }
  }
  return out;
}

class LogValuesTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { shared_ = new Shared(); }
  static void TearDownTestSuite() {
    delete shared_;
    shared_ = nullptr;
  }

  struct Shared {
    Shared() {
      const int64_t now = SystemNowUnixNano();
      start = now - 30 * 60 * kSecond;
      end = now + 10 * 60 * kSecond;
      data_dir = tmp.path() + "/data";
      auto opened = storage::Storage::Open(fs, data_dir);
      EXPECT_TRUE(opened.ok()) << opened.status();
      storage = *std::move(opened);

      // The same records twice, ten minutes apart: as OTLP/JSON, and as
      // protobuf (the JSON request re-encoded by strata's encoder).
      const std::string json = RequestJson("structured-json", now - 20 * 60 * kSecond);
      const std::string proto_source = RequestJson("structured-proto", now - 10 * 60 * kSecond);
      sent = SentRecords(json);
      sent.merge(SentRecords(proto_source));
      otlp::LogBatch proto_batch;
      EXPECT_TRUE(otlp::DecodeLogsJson(proto_source, &proto_batch).ok());
      Export(server::Encoding::kJson, json);
      Export(server::Encoding::kProtobuf, otlp::EncodeLogsProto(proto_batch));

      test_support::LoopbackApi loopback =
          test_support::StartLoopbackApi(storage.get(), &fs, data_dir, std::string(kReadToken));
      pool = std::move(loopback.pool);
      api = std::move(loopback.api);
      http_server = std::move(loopback.http_server);

      auto opened_engine = query::DuckDbEngine::Open({});
      EXPECT_TRUE(opened_engine.ok());
      engine = *std::move(opened_engine);
    }
    ~Shared() {
      if (http_server != nullptr) http_server->Shutdown(std::chrono::seconds(5));
      http_server.reset();
      api.reset();
      pool.reset();
      if (storage != nullptr) storage->Shutdown(std::chrono::seconds(5));
      storage.reset();
    }

    // Through the ingest service, as the OTLP listeners call it.
    void Export(server::Encoding encoding, std::string body) {
      server::IngestMetrics metrics;
      server::IngestService ingest(*storage, [](std::string_view) { return absl::OkStatus(); },
                                   metrics, {});
      std::promise<server::ExportOutcome> outcome;
      const uint64_t wire_bytes = body.size();
      ingest.Export(server::Signal::kLogs, encoding, server::Transport::kHttp,
                    std::make_shared<const std::string>(std::move(body)), wire_bytes,
                    [&](server::ExportOutcome o) { outcome.set_value(std::move(o)); });
      const server::ExportOutcome done = outcome.get_future().get();
      EXPECT_TRUE(done.status.ok()) << done.status;
      EXPECT_EQ(done.rejected_rows, 0) << done.partial_message;
    }

    PosixFileSystem fs;
    storage::testing::ScopedTempDir tmp{"log_values"};
    std::string data_dir;
    int64_t start = 0, end = 0;
    std::map<std::string, SentRecord> sent;  // by time_unix_nano
    std::unique_ptr<storage::Storage> storage;
    std::unique_ptr<query::QueryPool> pool;
    std::unique_ptr<Api> api;
    std::unique_ptr<server::HttpServer> http_server;
    std::unique_ptr<query::DuckDbEngine> engine;
  };

  static HttpAnswer Get(const std::string& target) {
    return server::testing::Fetch(
        "GET", fmt::format("http://127.0.0.1:{}{}", shared_->http_server->port(), target),
        {std::string("Authorization: Bearer ") + kReadToken});
  }

  static HttpAnswer PostSql(const std::string& sql) {
    return server::testing::Fetch(
        "POST", fmt::format("http://127.0.0.1:{}/api/v1/sql", shared_->http_server->port()),
        {std::string("Authorization: Bearer ") + kReadToken}, sql);
  }

  // The logs of one answer page, parsed (kept alive by `parser`).
  static std::vector<simdjson::dom::element> Logs(const HttpAnswer& answer,
                                                  simdjson::dom::parser& parser) {
    std::vector<simdjson::dom::element> logs;
    simdjson::dom::element doc;
    EXPECT_EQ(parser.parse(answer.body).get(doc), simdjson::SUCCESS) << answer.body;
    simdjson::dom::array array;
    if (doc["logs"].get_array().get(array) != simdjson::SUCCESS) return logs;
    for (simdjson::dom::element log : array) logs.push_back(log);
    return logs;
  }

  // Times of every record q= finds, in answer order.
  static std::vector<std::string> TimesFound(const std::string& q) {
    HttpAnswer answer = Get(fmt::format("/api/v1/logs?limit=1000&start={}&end={}&q={}",
                                        shared_->start, shared_->end, PercentEncode(q)));
    EXPECT_EQ(answer.status, 200) << q << ": " << answer.body;
    simdjson::dom::parser parser;
    std::vector<std::string> times;
    for (simdjson::dom::element log : Logs(answer, parser)) {
      times.emplace_back(log["time_unix_nano"].get_string().value());
    }
    return times;
  }

  // One text from DuckDB's own functions (the reference for case folding).
  static std::string DuckDbText(const std::string& expression) {
    auto result = shared_->engine->Query("SELECT " + expression);
    EXPECT_TRUE(result.ok()) << result.status() << ": " << expression;
    if (!result.ok() || result->rows.empty()) return "";
    return result->rows[0][0].value_or("NULL");
  }

  static Shared* shared_;
};

LogValuesTest::Shared* LogValuesTest::shared_ = nullptr;

TEST_F(LogValuesTest, EveryRecordComesBackWithTheValuesItWasSent) {
  HttpAnswer answer =
      Get(fmt::format("/api/v1/logs?limit=1000&start={}&end={}", shared_->start, shared_->end));
  ASSERT_EQ(answer.status, 200) << answer.body;
  simdjson::dom::parser parser;
  const std::vector<simdjson::dom::element> logs = Logs(answer, parser);
  ASSERT_EQ(logs.size(), 2 * SentBodies().size());
  ASSERT_EQ(shared_->sent.size(), logs.size());
  for (simdjson::dom::element log : logs) {
    const std::string time(log["time_unix_nano"].get_string().value());
    ASSERT_TRUE(shared_->sent.contains(time)) << time;
    const SentRecord& sent = shared_->sent.at(time);
    EXPECT_EQ(simdjson::minify(log["body"].value()), sent.body) << time;
    EXPECT_EQ(simdjson::minify(log["attributes"].value()), sent.attributes) << time;
    EXPECT_EQ(simdjson::minify(log["scope_attributes"].value()), sent.scope_attributes) << time;
    EXPECT_EQ(simdjson::minify(log["resource_attributes"].value()), sent.resource_attributes)
        << time;
  }
}

// The issue's symptoms, spelled out: a map body is not "", and an int
// attribute 3 is the OTLP/JSON int {"intValue":"3"}, not the string "3".
TEST_F(LogValuesTest, MapBodyAndIntAttributeAreTyped) {
  HttpAnswer answer = Get(fmt::format("/api/v1/logs?limit=1000&start={}&end={}&q=payment",
                                      shared_->start, shared_->end));
  ASSERT_EQ(answer.status, 200) << answer.body;
  EXPECT_THAT(
      answer.body,
      ::testing::HasSubstr(
          R"("body":{"kvlistValue":{"values":[{"key":"message","value":)"
          R"({"stringValue":"payment failed"}},{"key":"code","value":{"intValue":"402"}}]}})"));
  EXPECT_THAT(answer.body,
              ::testing::HasSubstr(R"("attributes":[{"key":"attempt","value":{"intValue":"3"}})"));
  // -0.0 keeps its sign, which a comparison of parsed numbers could miss.
  HttpAnswer all =
      Get(fmt::format("/api/v1/logs?limit=1000&start={}&end={}", shared_->start, shared_->end));
  EXPECT_THAT(all.body, ::testing::HasSubstr(R"("body":{"doubleValue":-0.0})"));
}

// The stored bytes of every array and kvlist body, read by a plain DuckDB
// query over the files and decoded by otlp's AnyValue decoder, encode to
// the body the API answers.
TEST_F(LogValuesTest, StoredArrayAndMapBodiesDecodeToTheAnswers) {
  const auto stored = shared_->engine->Query(fmt::format(
      "SELECT CAST(time_unix_nano AS VARCHAR), hex(body_bytes) FROM read_parquet("
      "'{}/telemetry/days/*/*.batch/logs.parquet') WHERE row_kind = 0 AND body_type IN (5, 6)",
      shared_->data_dir));
  ASSERT_TRUE(stored.ok()) << stored.status();
  HttpAnswer answer =
      Get(fmt::format("/api/v1/logs?limit=1000&start={}&end={}", shared_->start, shared_->end));
  ASSERT_EQ(answer.status, 200);
  simdjson::dom::parser parser;
  std::map<std::string, std::string> answered;
  for (simdjson::dom::element log : Logs(answer, parser)) {
    answered[std::string(log["time_unix_nano"].get_string().value())] =
        simdjson::minify(log["body"].value());
  }
  size_t checked = 0;
  simdjson::dom::parser body_parser;
  for (const auto& row : stored->rows) {
    const std::string hex = row[1].value_or("");
    std::string bytes;
    for (size_t i = 0; i + 1 < hex.size(); i += 2) {
      bytes.push_back(static_cast<char>(std::stoi(hex.substr(i, 2), nullptr, 16)));
    }
    otlp::BatchBase batch;
    otlp::ValueColumns body;
    otlp::ValueRow value;
    ASSERT_TRUE(otlp::DecodeAnyValueProto(bytes, &batch, &value).ok()) << hex;
    body.Append(value);
    const std::string json = otlp::EncodeAnyValueJson(batch, body, 0);
    EXPECT_EQ(simdjson::minify(body_parser.parse(json).value()), answered[*row[0]]) << *row[0];
    ++checked;
  }
  EXPECT_EQ(checked, 2 * 5u);  // two copies of five array or kvlist bodies
}

// q= finds every string of every body, at any depth, whatever its case:
// each needle is part of one string, upper-cased by DuckDB, and the records
// expected are those with a string s where DuckDB's contains(lower(s),
// lower(needle)) holds.
TEST_F(LogValuesTest, TextSearchFindsStringsAnywhereInABodyIgnoringCase) {
  std::set<std::string> strings;
  for (const auto& [time, sent] : shared_->sent) {
    strings.insert(sent.body_strings.begin(), sent.body_strings.end());
  }
  ASSERT_GE(strings.size(), 7u);
  size_t searched = 0;
  for (const std::string& s : strings) {
    if (s.size() < 3) continue;
    const std::string needle = DuckDbText(
        fmt::format("upper(substr({0}, 2, greatest(1, length({0}) - 2)))", query::SqlLiteral(s)));
    std::vector<std::string> expected;
    for (const auto& [time, sent] : shared_->sent) {
      for (const std::string& candidate : sent.body_strings) {
        if (DuckDbText(fmt::format("contains(lower({}), lower({}))", query::SqlLiteral(candidate),
                                   query::SqlLiteral(needle))) == "true") {
          expected.push_back(time);
          break;
        }
      }
    }
    EXPECT_FALSE(expected.empty()) << needle;
    std::vector<std::string> found = TimesFound(needle);
    std::sort(found.begin(), found.end());
    EXPECT_EQ(found, expected) << "q=" << needle << " (from \"" << s << "\")";
    ++searched;
  }
  EXPECT_GE(searched, 6u);
}

// Keys, ints, bools and bytes are not text: "zebrakey" is only a key, 402
// only an int, "true" only a bool.
TEST_F(LogValuesTest, TextSearchIgnoresKeysAndNonStringValues) {
  EXPECT_THAT(TimesFound("zebrakey"), ::testing::IsEmpty());
  EXPECT_THAT(TimesFound("402"), ::testing::IsEmpty());
  EXPECT_THAT(TimesFound("true"), ::testing::IsEmpty());
  EXPECT_EQ(TimesFound("ZEBRA").size(), 0u);
  EXPECT_EQ(TimesFound("deep needle ✓").size(), 2u);
}

// The case folding docs/api.md promises: DuckDB's lower(), per code point.
TEST_F(LogValuesTest, TextSearchFoldsUnicodeCaseButNothingElse) {
  EXPECT_EQ(TimesFound("école").size(), 2u);
  EXPECT_EQ(TimesFound("GRÜßE AUS").size(), 2u);
  EXPECT_THAT(TimesFound("grüsse"), ::testing::IsEmpty());
  EXPECT_EQ(TimesFound("ünïcødé 😀").size(), 2u);  // a string body
}

// Paging a q= search with the cursor gives the one-page answer, in order.
TEST_F(LogValuesTest, TextSearchPagesWithTheCursor) {
  const std::vector<std::string> whole = TimesFound("e");
  ASSERT_GE(whole.size(), 6u);
  std::vector<std::string> paged;
  std::string cursor;
  for (int page = 0; page < 50; ++page) {
    HttpAnswer answer =
        Get(fmt::format("/api/v1/logs?limit=2&start={}&end={}&q=e{}", shared_->start, shared_->end,
                        cursor.empty() ? "" : "&cursor=" + cursor));
    ASSERT_EQ(answer.status, 200) << answer.body;
    simdjson::dom::parser parser;
    for (simdjson::dom::element log : Logs(answer, parser)) {
      paged.emplace_back(log["time_unix_nano"].get_string().value());
    }
    simdjson::dom::element doc = parser.parse(answer.body).value();
    std::string_view next;
    if (doc["next_cursor"].get_string().get(next) != simdjson::SUCCESS) break;
    cursor = std::string(next);
  }
  EXPECT_EQ(paged, whole);
}

// The function q= uses is there for SQL too.
TEST_F(LogValuesTest, OtlpValueStringsInSql) {
  HttpAnswer nested = PostSql(
      "SELECT otlp_value_strings(body_type, body_bytes) AS s FROM logs "
      "WHERE service_name = 'structured-json' AND body_type = 6 ORDER BY time_unix_nano LIMIT 2");
  ASSERT_EQ(nested.status, 200) << nested.body;
  EXPECT_THAT(
      nested.body,
      ::testing::HasSubstr(R"("rows":[["[payment failed]"],["[Grüße aus Köln, Deep Needle ✓]"]])"));
  HttpAnswer other =
      PostSql("SELECT otlp_value_strings(7, '\\x01'::BLOB), otlp_value_strings(6, NULL::BLOB)");
  ASSERT_EQ(other.status, 200) << other.body;
  EXPECT_THAT(other.body, ::testing::HasSubstr(R"("rows":[["[]",null]])"));
  HttpAnswer corrupt = PostSql("SELECT otlp_value_strings(6, '\\x2a\\x05'::BLOB)");
  EXPECT_EQ(corrupt.status, 400) << corrupt.body;
  EXPECT_THAT(corrupt.body, ::testing::HasSubstr("otlp_value_strings"));
}

}  // namespace
}  // namespace strata::api
