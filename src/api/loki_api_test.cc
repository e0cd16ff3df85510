// The Loki API end to end: generated traffic written through the real
// storage engine, the Api's routes behind a real HttpServer, the requests
// Grafana's Loki data source sends through curl, and the answers compared
// with ground truth from DuckDB queries over all the Parquet files.

#include <algorithm>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/escaping.h"
#include "api/api_test_server.h"
#include "fmt/format.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "io/posix_file_system.h"
#include "otlp/decode.h"
#include "query/value_json.h"
#include "server/http_testing.h"
#include "simdjson.h"
#include "storage/storage.h"
#include "storage/testing/commit_testing.h"
#include "workload/traffic_generator.h"

namespace strata::api {
namespace {

using server::testing::Curl;
using server::testing::HttpAnswer;
using ::testing::HasSubstr;

constexpr int64_t kSecond = 1'000'000'000;
constexpr char kToken[] = "read-token";

std::string Encode(const std::string& text) {
  std::string out;
  for (unsigned char c : text) {
    if (std::isalnum(c) || c == '_' || c == '-' || c == '.') {
      out.push_back(static_cast<char>(c));
    } else {
      out += fmt::format("%{:02X}", c);
    }
  }
  return out;
}

class LokiApiTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { shared_ = new Shared(); }
  static void TearDownTestSuite() {
    delete shared_;
    shared_ = nullptr;
  }

  struct Shared {
    Shared() {
      now = api::SystemNowUnixNano();
      // Whole seconds, so that windows given in seconds are exact.
      end = now / kSecond * kSecond;
      data_dir = tmp.path() + "/data";
      auto opened = storage::Storage::Open(fs, data_dir);
      EXPECT_TRUE(opened.ok()) << opened.status();
      storage = *std::move(opened);
      workload::TrafficOptions traffic;
      traffic.seed = 31;
      traffic.start_time_unix_nano = static_cast<uint64_t>(end - 30 * 60 * kSecond);
      traffic.trace_spacing_nanos = 3 * kSecond;
      workload::TrafficGenerator generator(traffic);
      for (int i = 0; i < 3; ++i) {
        storage::WriteRequest request;
        request.traces = generator.Traces(150);
        request.logs = generator.Logs(600);
        request.rows = 750;
        request.bytes = 1 << 20;
        EXPECT_TRUE(storage->Write(std::move(request)).ok());
      }
      // Service "levels": a batch whose records carry a `level` attribute
      // in each family (and one record none), and a batch without any.
      // Service "bodies": kvlist, array and other non-string bodies, for
      // the line filters that search their JSON text.
      for (const std::string& json :
           {LevelsJson(end, true), LevelsJson(end, false), BodiesJson(end)}) {
        auto batch = std::make_unique<otlp::LogBatch>();
        EXPECT_TRUE(otlp::DecodeLogsJson(json, batch.get()).ok());
        storage::WriteRequest request;
        request.rows = static_cast<int64_t>(batch->logs.size());
        request.logs = std::move(batch);
        request.bytes = static_cast<int64_t>(json.size());
        EXPECT_TRUE(storage->Write(std::move(request)).ok());
      }
      served = test_support::StartLoopbackApi(storage.get(), &fs, data_dir, kToken);
      auto engine = query::DuckDbEngine::Open({});
      EXPECT_TRUE(engine.ok()) << engine.status();
      truth = *std::move(engine);
      test_support::CreateTruthViews(*truth, data_dir);
    }
    // OTLP/JSON logs of service "levels" a minute before `end`: with
    // `level` as a resource, a scope and a record attribute (string and
    // int), or with no `level` at all.
    static std::string LevelsJson(int64_t end, bool with_level) {
      auto attr = [](const char* key, const std::string& value) {
        return fmt::format(R"({{"key":"{}","value":{}}})", key, value);
      };
      auto record = [&](int n, int severity, const std::string& attributes) {
        return fmt::format(
            R"({{"timeUnixNano":"{}","severityNumber":{},"body":{{"stringValue":"levels {}"}},"attributes":[{}]}})",
            end - 60 * kSecond + n * kSecond, severity, n, attributes);
      };
      const std::string service = attr("service.name", R"({"stringValue":"levels"})");
      if (!with_level) {
        return fmt::format(
            R"({{"resourceLogs":[{{"resource":{{"attributes":[{}]}},"scopeLogs":[{{"scope":{{"name":"s"}},"logRecords":[{},{},{}]}}]}}]}})",
            service, record(1, 9, ""), record(2, 17, ""), record(3, 9, ""));
      }
      return fmt::format(
          R"({{"resourceLogs":[{{"resource":{{"attributes":[{},{}]}},"scopeLogs":[{{"scope":{{"name":"s"}},"logRecords":[{},{}]}}]}},)"
          R"({{"resource":{{"attributes":[{}]}},"scopeLogs":[{{"scope":{{"name":"s","attributes":[{}]}},"logRecords":[{}]}},)"
          R"({{"scope":{{"name":"t"}},"logRecords":[{},{},{}]}}]}}]}})",
          service, attr("level", R"({"stringValue":"info"})"), record(4, 9, ""), record(5, 17, ""),
          service, attr("level", R"({"intValue":"3"})"), record(6, 13, ""),
          record(7, 5, attr("level", R"({"stringValue":"debug"})")), record(8, 21, ""),
          record(9, 9, attr("other", R"({"stringValue":"x"})")));
    }

    // OTLP/JSON logs of service "bodies" two minutes before `end`, one body
    // of each kind: a kvlist with escapes, unicode, numbers, a literal and
    // bytes inside, an array, an int, a double, bytes, and a string.
    static std::string BodiesJson(int64_t end) {
      const std::string bodies[] = {
          R"({"kvlistValue":{"values":[{"key":"message","value":{"stringValue":"payment failed\n\"card\" declined"}},)"
          R"({"key":"code","value":{"intValue":"402"}},{"key":"user","value":{"kvlistValue":{"values":[)"
          R"({"key":"name","value":{"stringValue":"Алиса"}},{"key":"vip","value":{"boolValue":true}}]}}},)"
          R"({"key":"raw","value":{"bytesValue":"AAH+/w=="}}]}})",
          R"({"arrayValue":{"values":[{"stringValue":"retry"},{"doubleValue":67.5},{"stringValue":"tab\there"}]}})",
          R"({"intValue":"402"})",
          R"({"doubleValue":2.0})",
          R"({"bytesValue":"AAH+/w=="})",
          R"({"stringValue":"payment failed plain"})",
      };
      std::string records;
      for (size_t i = 0; i < std::size(bodies); ++i) {
        records += fmt::format(R"({}{{"timeUnixNano":"{}","severityNumber":9,"body":{}}})",
                               i == 0 ? "" : ",",
                               end - 120 * kSecond + static_cast<int64_t>(i) * kSecond, bodies[i]);
      }
      return fmt::format(
          R"({{"resourceLogs":[{{"resource":{{"attributes":[{{"key":"service.name","value":{{"stringValue":"bodies"}}}}]}},"scopeLogs":[{{"logRecords":[{}]}}]}}]}})",
          records);
    }

    int64_t now = 0;
    int64_t end = 0;
    storage::testing::ScopedTempDir tmp{"loki_api"};
    PosixFileSystem fs;
    std::string data_dir;
    std::unique_ptr<storage::Storage> storage;
    test_support::LoopbackApi served;
    std::unique_ptr<query::DuckDbEngine> truth;
  };

  static std::string Base() {
    return fmt::format("http://{}/loki/api/v1", shared_->served.http_server->address());
  }

  // GET as Grafana sends it: the token as a basic-auth password; `extra`
  // headers ("Name: value") besides.
  static HttpAnswer Get(const std::string& path_and_query,
                        const std::vector<std::string>& extra = {}) {
    std::vector<std::string> headers = {"Authorization: Basic " +
                                        absl::Base64Escape(std::string("grafana:") + kToken)};
    headers.insert(headers.end(), extra.begin(), extra.end());
    return server::testing::Fetch("GET", Base() + path_and_query, headers);
  }

  static int64_t Start() { return shared_->end - 3600 * kSecond; }

  // The window as Loki's nanosecond parameters.
  static std::string Window() { return fmt::format("start={}&end={}", Start(), shared_->end); }

  static std::vector<std::vector<std::string>> Truth(const std::string& sql) {
    auto result = shared_->truth->Query(sql);
    EXPECT_TRUE(result.ok()) << result.status() << " for " << sql;
    std::vector<std::vector<std::string>> rows;
    if (result.ok()) {
      for (const auto& row : result->rows) {
        std::vector<std::string> cells;
        for (const auto& cell : row) cells.push_back(cell.value_or(""));
        rows.push_back(std::move(cells));
      }
    }
    return rows;
  }

  static std::string TruthValue(const std::string& sql) {
    auto rows = Truth(sql);
    return rows.empty() ? "" : rows[0][0];
  }

  // The busiest service in the window.
  static std::string Service() {
    return TruthValue(fmt::format(
        "SELECT service_name FROM logs WHERE time_unix_nano >= {} AND time_unix_nano < {} GROUP "
        "BY 1 ORDER BY count(*) DESC, 1 LIMIT 1",
        Start(), shared_->end));
  }

  struct Entry {
    int64_t time = 0;
    std::string line;
    std::map<std::string, std::string> stream;
    std::map<std::string, std::string> metadata;
    std::map<std::string, std::string> parsed;
  };

  static std::map<std::string, std::string> LabelsOf(simdjson::dom::element object) {
    std::map<std::string, std::string> labels;
    simdjson::dom::object o;
    if (object.get_object().get(o) != simdjson::SUCCESS) return labels;
    for (auto field : o) {
      labels[std::string(field.key)] = std::string(field.value.get_string().value());
    }
    return labels;
  }

  // The entries of a log query's answer, in the order of the answer's
  // streams (callers sort them).
  static std::vector<Entry> Entries(const HttpAnswer& answer) {
    std::vector<Entry> entries;
    simdjson::dom::parser parser;
    simdjson::dom::element doc;
    if (parser.parse(answer.body).get(doc) != simdjson::SUCCESS) {
      ADD_FAILURE() << answer.body;
      return entries;
    }
    EXPECT_EQ(std::string_view(doc["data"]["resultType"].get_string().value()), "streams");
    for (simdjson::dom::element stream :
         simdjson::dom::array(doc["data"]["result"].get_array().value())) {
      const auto labels = LabelsOf(stream["stream"].value());
      for (simdjson::dom::element value :
           simdjson::dom::array(stream["values"].get_array().value())) {
        simdjson::dom::array cells = value.get_array().value();
        Entry e;
        e.time = std::stoll(std::string(cells.at(0).get_string().value()));
        e.line = std::string(cells.at(1).get_string().value());
        e.stream = labels;
        if (cells.size() > 2) {
          simdjson::dom::element extra = cells.at(2).value();
          simdjson::dom::element member;
          if (extra["structuredMetadata"].get(member) == simdjson::SUCCESS) {
            e.metadata = LabelsOf(member);
          }
          if (extra["parsed"].get(member) == simdjson::SUCCESS) e.parsed = LabelsOf(member);
        }
        entries.push_back(std::move(e));
      }
    }
    return entries;
  }

  static std::vector<int64_t> Times(const std::vector<Entry>& entries, bool descending) {
    std::vector<int64_t> times;
    for (const Entry& e : entries) times.push_back(e.time);
    std::sort(times.begin(), times.end());
    if (descending) std::reverse(times.begin(), times.end());
    return times;
  }

  static std::vector<int64_t> TruthTimes(const std::string& sql) {
    std::vector<int64_t> times;
    for (const auto& row : Truth(sql)) times.push_back(std::stoll(row[0]));
    return times;
  }

  // {labels as "k=v,..." -> value} of a vector answer.
  static std::map<std::string, double> VectorOf(const HttpAnswer& answer) {
    std::map<std::string, double> out;
    simdjson::dom::parser parser;
    simdjson::dom::element doc;
    if (parser.parse(answer.body).get(doc) != simdjson::SUCCESS) {
      ADD_FAILURE() << answer.body;
      return out;
    }
    EXPECT_EQ(std::string_view(doc["data"]["resultType"].get_string().value()), "vector")
        << answer.body;
    for (simdjson::dom::element sample :
         simdjson::dom::array(doc["data"]["result"].get_array().value())) {
      std::string key;
      for (const auto& [k, v] : LabelsOf(sample["metric"].value())) key += k + "=" + v + ",";
      out[key] = std::stod(std::string(sample["value"].at(1).get_string().value()));
    }
    return out;
  }

  static Shared* shared_;
};

LokiApiTest::Shared* LokiApiTest::shared_ = nullptr;

TEST_F(LokiApiTest, BuildInfoAndSaveAndTestQuery) {
  const HttpAnswer info = Get("/status/buildinfo");
  EXPECT_EQ(info.status, 200);
  EXPECT_THAT(info.body, HasSubstr("\"version\":\"3."));
  // Grafana's Save & test: an instant query of vector(1)+vector(1).
  const HttpAnswer test = Get("/query?query=" + Encode("vector(1)+vector(1)"));
  ASSERT_EQ(test.status, 200) << test.body;
  EXPECT_EQ(VectorOf(test), (std::map<std::string, double>{{"", 2}}));
  // No credential: refused, as every read route.
  EXPECT_EQ(Curl({Base() + "/status/buildinfo"}).status, 401);
}

TEST_F(LokiApiTest, LineFilterQueriesMatchDuckDbInBothDirections) {
  const std::string service = Service();
  ASSERT_FALSE(service.empty());
  const std::string where = fmt::format(
      "service_name = '{}' AND contains(body_str, 'request') AND time_unix_nano >= {} AND "
      "time_unix_nano < {}",
      service, Start(), shared_->end);
  const int64_t total = std::stoll(TruthValue("SELECT count(*) FROM logs WHERE " + where));
  ASSERT_GT(total, 20);
  const std::string query = Encode(fmt::format(R"({{service_name="{}"}} |= "request")", service));
  for (const bool forward : {false, true}) {
    for (const int64_t limit : {int64_t{7}, total + 5}) {
      const HttpAnswer answer =
          Get(fmt::format("/query_range?query={}&{}&limit={}&direction={}", query, Window(), limit,
                          forward ? "FORWARD" : "backward"));
      ASSERT_EQ(answer.status, 200) << answer.body;
      const std::vector<Entry> entries = Entries(answer);
      EXPECT_EQ(Times(entries, !forward),
                TruthTimes(fmt::format("SELECT time_unix_nano FROM logs WHERE {} ORDER BY 1 {} "
                                       "LIMIT {}",
                                       where, forward ? "ASC" : "DESC", limit)))
          << "forward " << forward << " limit " << limit;
      for (const Entry& e : entries) {
        EXPECT_THAT(e.line, HasSubstr("request"));
        EXPECT_EQ(e.stream.at("service_name"), service);
      }
    }
  }
}

// A line filter on a body that is not a string searches its JSON text,
// the logs view's body_text, whatever the needle: inside a string (with
// escapes and unicode), a key, a number, a literal, base64, or across
// tokens (JSON's own punctuation).
TEST_F(LokiApiTest, LineFiltersSearchTheJsonTextOfStructuredBodies) {
  // The truth: each stored body of service "bodies" read by plain DuckDB
  // and written as text by query::ValueJsonWriter (the logs view's
  // body_text), then searched.
  std::vector<std::string> texts;
  for (const std::vector<std::string>& row :
       Truth("SELECT body_type, coalesce(body_str, ''), coalesce(body_int, 0), "
             "coalesce(body_double, 0), coalesce(body_bool, false), coalesce(hex(body_bytes), '') "
             "FROM logs WHERE service_name = 'bodies'")) {
    const int type = std::stoi(row[0]);
    if (type == 1) {
      texts.push_back(row[1]);
      continue;
    }
    std::string bytes;
    for (size_t i = 0; i + 1 < row[5].size(); i += 2) {
      bytes.push_back(static_cast<char>(std::stoi(row[5].substr(i, 2), nullptr, 16)));
    }
    query::ValueJsonWriter writer;
    std::string text;
    ASSERT_TRUE(writer
                    .AppendText({.type = static_cast<uint8_t>(type),
                                 .int_value = std::stoll(row[2]),
                                 .double_value = std::stod(row[3]),
                                 .bool_value = row[4] == "true",
                                 .bytes = bytes},
                                &text)
                    .ok());
    texts.push_back(text);
  }
  ASSERT_EQ(texts.size(), 6u);
  int matched_some = 0;
  for (const std::string needle :
       {"payment failed", "declined", "\\\"card", "\\n\\\"", "Алиса", "lis", "402", "67.5", "2.0",
        "AAH+", "rue", "message", "\":402,\"user\":{", "ab\\t", "b\\th", "no such text"}) {
    const size_t want = std::count_if(texts.begin(), texts.end(), [&](const std::string& text) {
      return text.find(needle) != std::string::npos;
    });
    std::string escaped;
    for (const char c : needle) {
      if (c == '"' || c == '\\') escaped.push_back('\\');
      escaped.push_back(c);
    }
    const HttpAnswer answer = Get(fmt::format(
        "/query_range?query={}&{}&limit=100",
        Encode(fmt::format(R"({{service_name="bodies"}} |= "{}")", escaped)), Window()));
    ASSERT_EQ(answer.status, 200) << answer.body;
    const std::vector<Entry> entries = Entries(answer);
    EXPECT_EQ(entries.size(), want) << needle;
    for (const Entry& e : entries) EXPECT_THAT(e.line, HasSubstr(needle));
    if (!entries.empty()) ++matched_some;
  }
  EXPECT_GE(matched_some, 14);
}

TEST_F(LokiApiTest, CategorizedLabelsPutOtlpFieldsInStructuredMetadata) {
  const std::string service = Service();
  const HttpAnswer answer =
      Get(fmt::format("/query_range?query={}&{}&limit=50",
                      Encode(fmt::format(R"({{service_name="{}"}})", service)), Window()),
          {"X-Loki-Response-Encoding-Flags: categorize-labels"});
  ASSERT_EQ(answer.status, 200) << answer.body;
  EXPECT_THAT(answer.body, HasSubstr("\"encodingFlags\":[\"categorize-labels\"]"));
  const std::vector<Entry> entries = Entries(answer);
  ASSERT_EQ(entries.size(), 50u);
  for (const Entry& e : entries) {
    // Default resource attributes are stream labels; others are metadata.
    EXPECT_EQ(e.stream.at("service_name"), service);
    EXPECT_EQ(e.stream.at("k8s_namespace_name"), "shop");
    EXPECT_EQ(e.stream.count("host_name"), 0u);
    EXPECT_EQ(e.metadata.at("host_name"),
              TruthValue(fmt::format("SELECT DISTINCT resource_attr_str[list_position("
                                     "resource_attr_keys, 'host.name')] FROM logs "
                                     "WHERE service_name = '{}'",
                                     service)));
    // The record the entry shows, by everything the entry says of it
    // (records may share a time).
    const int severity = std::stoi(e.metadata.at("severity_number"));
    const char* levels[] = {"trace", "debug", "info", "warn", "error", "fatal"};
    EXPECT_EQ(e.metadata.at("detected_level"), levels[(severity - 1) / 4]);
    const std::string trace =
        e.metadata.count("trace_id") != 0 ? e.metadata.at("trace_id") : std::string();
    EXPECT_NE(TruthValue(fmt::format(
                  "SELECT count(*) FROM logs WHERE time_unix_nano = {} AND service_name = '{}' "
                  "AND body_str = '{}' AND severity_text = '{}' AND severity_number = {} AND "
                  "coalesce(lower(hex(trace_id)), '') = '{}' AND "
                  "attr_int[list_position(attr_keys, 'tenant.id')] = {}",
                  e.time, service, e.line, e.metadata.at("severity_text"), severity, trace,
                  e.metadata.at("tenant_id"))),
              "0")
        << e.time << " " << e.line;
  }
  // The plain form carries the same labels in the stream.
  const HttpAnswer plain =
      Get(fmt::format("/query_range?query={}&{}&limit=5",
                      Encode(fmt::format(R"({{service_name="{}"}})", service)), Window()));
  ASSERT_EQ(plain.status, 200);
  EXPECT_THAT(plain.body, Not(HasSubstr("encodingFlags")));
  for (const Entry& e : Entries(plain)) EXPECT_EQ(e.stream.count("detected_level"), 1u);
}

TEST_F(LokiApiTest, ParsersAndLabelFiltersMatchDuckDb) {
  const std::string service = Service();
  const std::string window =
      fmt::format("time_unix_nano >= {} AND time_unix_nano < {}", Start(), shared_->end);
  struct Case {
    std::string logql;
    std::string truth_where;
  };
  const std::vector<Case> cases = {
      {fmt::format(R"({{service_name="{}"}} | detected_level="error")", service),
       fmt::format("service_name = '{}' AND severity_number BETWEEN 17 AND 20", service)},
      {fmt::format(R"({{service_name=~"{}|nothing"}} | severity_number >= 13)", service),
       fmt::format("service_name = '{}' AND severity_number >= 13", service)},
      {fmt::format(R"({{service_name="{}"}} != "request" |~ "fail|slow")", service),
       fmt::format("service_name = '{}' AND NOT contains(body_str, 'request') AND "
                   "regexp_matches(body_str, 'fail|slow')",
                   service)},
      {fmt::format(R"({{service_name="{}"}} | pattern "<verb> <_>" | verb="upstream")", service),
       fmt::format("service_name = '{}' AND starts_with(body_str, 'upstream ')", service)},
      {fmt::format(R"({{service_name="{}"}} | regexp "(?P<n>[0-9]+)ms" | n > 200)", service),
       fmt::format("service_name = '{}' AND regexp_matches(body_str, '[0-9]+ms') AND "
                   "TRY_CAST(regexp_extract(body_str, '([0-9]+)ms', 1) AS INTEGER) > 200",
                   service)},
      {fmt::format(R"({{service_name="{}"}} | tenant_id < 10 | drop trace_id)", service),
       fmt::format("service_name = '{}' AND attr_int[list_position(attr_keys, 'tenant.id')] < 10",
                   service)},
  };
  for (const Case& c : cases) {
    const HttpAnswer answer =
        Get(fmt::format("/query_range?query={}&{}&limit=5000", Encode(c.logql), Window()));
    ASSERT_EQ(answer.status, 200) << c.logql << ": " << answer.body;
    const auto expected = TruthTimes(fmt::format(
        "SELECT time_unix_nano FROM logs WHERE {} AND {} ORDER BY 1 DESC", c.truth_where, window));
    EXPECT_GT(expected.size(), 0u) << c.logql;
    EXPECT_EQ(Times(Entries(answer), true), expected) << c.logql;
  }
}

TEST_F(LokiApiTest, LineFormatAndJsonRewriteTheLine) {
  const std::string service = Service();
  const HttpAnswer answer = Get(fmt::format(
      "/query_range?query={}&{}&limit=20",
      Encode(fmt::format(
          R"({{service_name="{}"}} | line_format "{{{{.detected_level | upper}}}}: {{{{.k8s_pod_name}}}}" | json)",
          service)),
      Window()));
  ASSERT_EQ(answer.status, 200) << answer.body;
  const std::string pod = TruthValue(fmt::format(
      "SELECT DISTINCT resource_attr_str[list_position(resource_attr_keys, 'k8s.pod.name')] "
      "FROM logs WHERE service_name = '{}'",
      service));
  const std::vector<Entry> entries = Entries(answer);
  ASSERT_EQ(entries.size(), 20u);
  for (const Entry& e : entries) {
    EXPECT_THAT(e.line, HasSubstr(": " + pod));
    // The new line is no JSON: the json stage marks it.
    EXPECT_EQ(e.stream.at("__error__"), "JSONParserErr");
  }
}

TEST_F(LokiApiTest, VolumeByLevelMatchesDuckDbWhereSomeBatchesHaveNoLevelKey) {
  // Batches whose key lists cannot hold `level` skip reading them
  // (storage/table/key_presence.h); the answer must equal DuckDB reading
  // every list of every batch.
  const std::string volume =
      R"(sum by (level, detected_level) (count_over_time({service_name="levels"} | drop __error__ [30m])))";
  const HttpAnswer instant =
      Get(fmt::format("/query?query={}&time={}", Encode(volume), shared_->end));
  ASSERT_EQ(instant.status, 200) << instant.body;
  std::string level = "coalesce(";
  for (const char* family : {"resource_attr", "scope_attr", "attr"}) {
    const std::string at = fmt::format("[list_position({}_keys, 'level')]", family);
    level += fmt::format("{}_str{}, CAST({}_int{} AS VARCHAR), ", family, at, family, at);
  }
  level += "'')";
  std::map<std::string, double> expected;
  for (const auto& row : Truth(fmt::format(
           "SELECT {}, ['trace', 'debug', 'info', 'warn', 'error', 'fatal'][(severity_number - "
           "1) // 4 + 1], count(*) FROM logs WHERE service_name = 'levels' GROUP BY ALL",
           level))) {
    // Labels in name order, as VectorOf keys them.
    expected["detected_level=" + row[1] + "," + (row[0].empty() ? "" : "level=" + row[0] + ",")] =
        std::stod(row[2]);
  }
  // Each family's level, and records without one in both batches.
  EXPECT_EQ(expected.size(), 7u);
  EXPECT_TRUE(expected.contains("detected_level=info,level=info,"));
  EXPECT_TRUE(expected.contains("detected_level=warn,level=3,"));
  EXPECT_TRUE(expected.contains("detected_level=debug,level=debug,"));
  EXPECT_EQ(expected["detected_level=info,"], 3);
  EXPECT_EQ(VectorOf(instant), expected);
}

TEST_F(LokiApiTest, MetricQueriesMatchDuckDb) {
  const std::string service = Service();
  // The volume query Grafana sends with every log search, instant at the
  // end: the last minute's records by level.
  const std::string volume = fmt::format(
      R"(sum by (level, detected_level) (count_over_time({{service_name="{}"}} | drop __error__ [30m])))",
      service);
  const HttpAnswer instant =
      Get(fmt::format("/query?query={}&time={}", Encode(volume), shared_->end));
  ASSERT_EQ(instant.status, 200) << instant.body;
  std::map<std::string, double> expected;
  for (const auto& row : Truth(fmt::format(
           "SELECT CASE (severity_number - 1) // 4 WHEN 0 THEN 'trace' WHEN 1 THEN 'debug' WHEN "
           "2 THEN 'info' WHEN 3 THEN 'warn' WHEN 4 THEN 'error' ELSE 'fatal' END, count(*) FROM "
           "logs WHERE service_name = '{}' AND time_unix_nano > {} AND time_unix_nano <= {} "
           "GROUP BY 1",
           service, shared_->end - 1800 * kSecond, shared_->end))) {
    expected["detected_level=" + row[0] + ","] = std::stod(row[1]);
  }
  ASSERT_FALSE(expected.empty());
  EXPECT_EQ(VectorOf(instant), expected);
  // The same counts through the C++ pipeline (a parser stage keeps the
  // query out of SQL).
  const HttpAnswer parsed = Get(fmt::format(
      "/query?query={}&time={}",
      Encode(fmt::format(
          R"(sum by (detected_level) (count_over_time({{service_name="{}"}} | logfmt [30m])))",
          service)),
      shared_->end));
  ASSERT_EQ(parsed.status, 200) << parsed.body;
  EXPECT_EQ(VectorOf(parsed), expected);

  // A range query: rate per service over 5 minutes at a 1-minute step.
  const int64_t step = 60 * kSecond;
  const int64_t window = 300 * kSecond;
  const HttpAnswer range = Get(fmt::format(
      "/query_range?query={}&start={}&end={}&step=60",
      Encode(R"(sum by (service_name) (rate({service_namespace="shop"} |= "request" [5m])))"),
      Start(), shared_->end));
  ASSERT_EQ(range.status, 200) << range.body;
  simdjson::dom::parser parser;
  simdjson::dom::element doc = parser.parse(range.body).value();
  EXPECT_EQ(std::string_view(doc["data"]["resultType"].get_string().value()), "matrix");
  int checked = 0;
  for (simdjson::dom::element series :
       simdjson::dom::array(doc["data"]["result"].get_array().value())) {
    const std::string name(series["metric"]["service_name"].get_string().value());
    for (simdjson::dom::element point :
         simdjson::dom::array(series["values"].get_array().value())) {
      const double t = point.at(0).get_double().value();
      const int64_t at = static_cast<int64_t>(std::llround(t)) * kSecond;
      ASSERT_EQ((at - Start()) % step, 0);
      const double rate = std::stod(std::string(point.at(1).get_string().value()));
      const double truth = std::stod(TruthValue(fmt::format(
          "SELECT count(*) / 300.0 FROM logs WHERE service_name = '{}' AND contains(body_str, "
          "'request') AND time_unix_nano > {} AND time_unix_nano <= {}",
          name, at - window, at)));
      EXPECT_DOUBLE_EQ(rate, truth) << name << " at " << at;
      ++checked;
    }
  }
  EXPECT_GT(checked, 10);

  // topk keeps the k largest.
  const HttpAnswer top = Get(fmt::format(
      "/query?query={}&time={}",
      Encode(R"(topk(2, sum by (service_name) (count_over_time({service_namespace="shop"}[1h]))))"),
      shared_->end));
  ASSERT_EQ(top.status, 200) << top.body;
  std::map<std::string, double> top_expected;
  for (const auto& row :
       Truth(fmt::format("SELECT service_name, count(*) FROM logs WHERE time_unix_nano > {} AND "
                         "time_unix_nano <= {} GROUP BY 1 ORDER BY 2 DESC LIMIT 2",
                         shared_->end - 3600 * kSecond, shared_->end))) {
    top_expected["service_name=" + row[0] + ","] = std::stod(row[1]);
  }
  EXPECT_EQ(VectorOf(top), top_expected);
}

TEST_F(LokiApiTest, LabelsValuesAndSeries) {
  const HttpAnswer labels = Get("/labels?" + Window());
  ASSERT_EQ(labels.status, 200) << labels.body;
  EXPECT_EQ(labels.body,
            "{\"status\":\"success\",\"data\":[\"deployment_environment_name\","
            "\"k8s_namespace_name\",\"k8s_pod_name\",\"service_name\",\"service_namespace\"]}");
  const HttpAnswer values = Get("/label/service_name/values?" + Window());
  ASSERT_EQ(values.status, 200) << values.body;
  std::string expected = "{\"status\":\"success\",\"data\":[";
  bool first = true;
  for (const auto& row :
       Truth(fmt::format("SELECT DISTINCT service_name FROM logs WHERE time_unix_nano >= {} AND "
                         "time_unix_nano < {} ORDER BY 1",
                         Start(), shared_->end))) {
    expected += (first ? "\"" : ",\"") + row[0] + "\"";
    first = false;
  }
  EXPECT_EQ(values.body, expected + "]}");
  const std::string service = Service();
  const HttpAnswer series = Get(fmt::format(
      "/series?{}&match[]={}", Window(), Encode(fmt::format(R"({{service_name="{}"}})", service))));
  ASSERT_EQ(series.status, 200) << series.body;
  EXPECT_THAT(series.body, HasSubstr(fmt::format("\"service_name\":\"{}\"", service)));
  EXPECT_THAT(series.body, HasSubstr("\"k8s_namespace_name\":\"shop\""));
}

// The bytes, records and distinct stream-label sets of `where` over the
// logs, and the batch files holding such records, from DuckDB.
TEST_F(LokiApiTest, IndexStatsMatchDuckDb) {
  const std::string service = Service();
  const std::string logs_glob = shared_->data_dir + "/**/logs.parquet";
  const std::string window_sql =
      fmt::format("time_unix_nano >= {} AND time_unix_nano < {}", Start(), shared_->end);
  for (const auto& [selector, where] : std::vector<std::pair<std::string, std::string>>{
           {fmt::format(R"({{service_name="{}"}})", service),
            fmt::format("service_name = '{}'", service)},
           {R"({service_namespace="shop"} |= "ignored by the index")",
            "resource_attr_str[list_position(resource_attr_keys, 'service.namespace')] = 'shop'"},
       }) {
    const HttpAnswer answer =
        Get(fmt::format("/index/stats?query={}&{}", Encode(selector), Window()));
    ASSERT_EQ(answer.status, 200) << answer.body;
    const auto truth = Truth(fmt::format(
        "SELECT count(DISTINCT [service_name, {}]), count(*), sum(strlen(body_str)), "
        "count(body_str) FROM logs WHERE {} AND {}",
        [] {
          std::string labels;
          for (const char* a : {"service.namespace", "k8s.namespace.name", "k8s.pod.name",
                                "deployment.environment.name"}) {
            labels += fmt::format(
                "{}coalesce(resource_attr_str[list_position(resource_attr_keys, '{}')], '')",
                labels.empty() ? "" : ", ", a);
          }
          return labels;
        }(),
        where, window_sql));
    ASSERT_EQ(truth.size(), 1u);
    ASSERT_EQ(truth[0][1], truth[0][3]) << "every body is a string";
    const std::string chunks = TruthValue(fmt::format(
        "SELECT count(DISTINCT filename) FROM read_parquet('{}', filename = true) WHERE "
        "row_kind = 0 AND {}",
        logs_glob, window_sql));
    EXPECT_EQ(answer.body, fmt::format(R"({{"streams":{},"chunks":{},"entries":{},"bytes":{}}})",
                                       truth[0][0], chunks, truth[0][1], truth[0][2]))
        << selector;
    EXPECT_NE(truth[0][1], "0");
  }
  // A window with no records: all zero.
  const HttpAnswer empty = Get(fmt::format("/index/stats?query={}&start={}&end={}",
                                           Encode(R"({service_namespace="shop"})"),
                                           Start() - 7200 * kSecond, Start() - 3600 * kSecond));
  ASSERT_EQ(empty.status, 200) << empty.body;
  EXPECT_EQ(empty.body, R"({"streams":0,"chunks":0,"entries":0,"bytes":0})");
  EXPECT_EQ(Get("/index/stats?" + Window()).status, 400);
}

// Volumes are bytes of lines, grouped by the selector's labels, by
// targetLabels, or per label name.
TEST_F(LokiApiTest, VolumeMatchesDuckDbBytesBySeriesAndByLabel) {
  const std::string window_sql =
      fmt::format("time_unix_nano >= {} AND time_unix_nano < {}", Start(), shared_->end);
  const std::string shop =
      "resource_attr_str[list_position(resource_attr_keys, 'service.namespace')] = 'shop'";
  const std::string selector = Encode(R"({service_namespace="shop"})");
  auto bytes_by = [&](const std::string& group, const std::string& label, int limit) {
    std::map<std::string, double> out;
    for (const auto& row : Truth(fmt::format(
             "SELECT {}, sum(strlen(body_str)) FROM logs WHERE {} AND {} GROUP BY 1 ORDER BY 2 "
             "DESC LIMIT {}",
             group, shop, window_sql, limit))) {
      out[label + "=" + row[0] + ","] = std::stod(row[1]);
    }
    return out;
  };
  // By default, the labels the selector names.
  const HttpAnswer all = Get(fmt::format("/index/volume?query={}&{}", selector, Window()));
  ASSERT_EQ(all.status, 200) << all.body;
  EXPECT_EQ(VectorOf(all), bytes_by("'shop'", "service_namespace", 10));
  // targetLabels, the largest first, limited.
  const HttpAnswer by_service = Get(fmt::format(
      "/index/volume?query={}&{}&targetLabels=service_name&limit=2", selector, Window()));
  ASSERT_EQ(by_service.status, 200) << by_service.body;
  const auto expected = bytes_by("service_name", "service_name", 2);
  ASSERT_EQ(expected.size(), 2u);
  EXPECT_EQ(VectorOf(by_service), expected);
  // aggregateBy=labels: one series per label, with the empty value.
  const HttpAnswer by_label =
      Get(fmt::format("/index/volume?query={}&{}&targetLabels=service_name,k8s_pod_name,no_such"
                      "&aggregateBy=labels",
                      selector, Window()));
  ASSERT_EQ(by_label.status, 200) << by_label.body;
  const double total = bytes_by("'shop'", "service_namespace", 1).begin()->second;
  EXPECT_EQ(VectorOf(by_label),
            (std::map<std::string, double>{{"k8s_pod_name=,", total}, {"service_name=,", total}}));
  for (const std::string bad : {"aggregateBy=streams", "limit=-1", "limit=5000"}) {
    EXPECT_EQ(Get(fmt::format("/index/volume?query={}&{}&{}", selector, Window(), bad)).status, 400)
        << bad;
  }
}

TEST_F(LokiApiTest, VolumeRangeMatchesDuckDbPerStep) {
  const int64_t step = 10 * kSecond;
  // The records span the first minutes of the last half hour: a start
  // inside them (the first point holds the step before it) and an end off
  // the step grid (the last point is the last step before it).
  const int64_t start = shared_->end - 1770 * kSecond;
  const int64_t end = shared_->end - 1500 * kSecond - 7 * kSecond;
  const HttpAnswer answer = Get(
      fmt::format("/index/volume_range?query={}&start={}&end={}&step=10s&targetLabels=service_name",
                  Encode(R"({service_namespace="shop"})"), start, end));
  ASSERT_EQ(answer.status, 200) << answer.body;
  simdjson::dom::parser parser;
  simdjson::dom::element doc = parser.parse(answer.body).value();
  EXPECT_EQ(std::string_view(doc["data"]["resultType"].get_string().value()), "matrix");
  std::map<std::pair<std::string, int64_t>, std::string> got;
  for (simdjson::dom::element series :
       simdjson::dom::array(doc["data"]["result"].get_array().value())) {
    const std::string name(series["metric"]["service_name"].get_string().value());
    for (simdjson::dom::element point :
         simdjson::dom::array(series["values"].get_array().value())) {
      const int64_t at = std::llround(point.at(0).get_double().value()) * kSecond;
      got[{name, at}] = std::string(point.at(1).get_string().value());
    }
  }
  std::map<std::pair<std::string, int64_t>, std::string> expected;
  for (int64_t t = start; t <= end; t += step) {
    for (const auto& row : Truth(fmt::format(
             "SELECT service_name, sum(strlen(body_str)) FROM logs WHERE time_unix_nano > {} AND "
             "time_unix_nano <= {} GROUP BY 1",
             t - step, t))) {
      expected[{row[0], t}] = row[1];
    }
  }
  EXPECT_GT(expected.size(), 10u);
  EXPECT_EQ(got, expected);
  EXPECT_EQ(Get(fmt::format("/index/volume_range?query={}&{}&step=0.0001",
                            Encode(R"({service_namespace="shop"})"), Window()))
                .status,
            400);
}

TEST_F(LokiApiTest, DetectedLabelsCountDistinctValuesAsDuckDb) {
  const HttpAnswer answer = Get(fmt::format("/detected_labels?query={}&{}",
                                            Encode(R"({service_namespace="shop"})"), Window()));
  ASSERT_EQ(answer.status, 200) << answer.body;
  std::string expected = R"({"detectedLabels":[)";
  bool first = true;
  for (const auto& [label, attribute] : std::vector<std::pair<std::string, std::string>>{
           {"deployment_environment_name", "deployment.environment.name"},
           {"k8s_namespace_name", "k8s.namespace.name"},
           {"k8s_pod_name", "k8s.pod.name"},
           {"service_name", "service.name"},
           {"service_namespace", "service.namespace"}}) {
    const std::string count = TruthValue(fmt::format(
        "SELECT count(DISTINCT resource_attr_str[list_position(resource_attr_keys, '{}')]) FROM "
        "logs WHERE time_unix_nano >= {} AND time_unix_nano < {} AND "
        "resource_attr_str[list_position(resource_attr_keys, 'service.namespace')] = 'shop'",
        attribute, Start(), shared_->end));
    expected +=
        fmt::format(R"({}{{"label":"{}","cardinality":{}}})", first ? "" : ",", label, count);
    first = false;
  }
  EXPECT_EQ(answer.body, expected + "]}");
}

TEST_F(LokiApiTest, DetectedFieldsCountStructuredMetadataAsDuckDb) {
  const std::string service = Service();
  const std::string where =
      fmt::format("service_name = '{}' AND time_unix_nano >= {} AND time_unix_nano < {}", service,
                  Start(), shared_->end);
  auto fields = [&](const std::string& extra) {
    const HttpAnswer answer =
        Get(fmt::format("/detected_fields?query={}&{}{}",
                        Encode(fmt::format(R"({{service_name="{}"}})", service)), Window(), extra));
    EXPECT_EQ(answer.status, 200) << answer.body;
    std::map<std::string, std::pair<std::string, int64_t>> out;
    simdjson::dom::parser parser;
    simdjson::dom::element doc;
    if (parser.parse(answer.body).get(doc) != simdjson::SUCCESS) return out;
    for (simdjson::dom::element field : simdjson::dom::array(doc["fields"].get_array().value())) {
      EXPECT_TRUE(field["parsers"].is_null()) << "no line of the traffic is JSON or logfmt";
      out[std::string(field["label"].get_string().value())] = {
          std::string(field["type"].get_string().value()), field["cardinality"].get_int64()};
    }
    return out;
  };
  const auto all = fields("&line_limit=5000");
  EXPECT_EQ(all.at("tenant_id").first, "int");
  EXPECT_EQ(all.at("tenant_id").second,
            std::stoll(TruthValue("SELECT count(DISTINCT attr_int[list_position(attr_keys, "
                                  "'tenant.id')]) FROM logs WHERE " +
                                  where)));
  EXPECT_EQ(all.at("detected_level").second,
            std::stoll(TruthValue("SELECT count(DISTINCT (severity_number - 1) // 4) FROM logs "
                                  "WHERE " +
                                  where)));
  EXPECT_EQ(all.at("trace_id").second,
            std::stoll(TruthValue("SELECT count(DISTINCT trace_id) FROM logs WHERE " + where)));
  // line_limit bounds the lines read: every record has its own observed
  // time.
  EXPECT_EQ(fields("&line_limit=7").at("observed_timestamp").second, 7);
  EXPECT_EQ(fields("&line_limit=7&field_limit=3").size(), 3u);
  EXPECT_EQ(
      Get(fmt::format("/detected_fields?query={}&line_limit=9999", Encode(R"({service_name="x"})")))
          .status,
      400);
}

TEST_F(LokiApiTest, ErrorsAreLokisPlainTextAnswers) {
  const std::string w = Window();
  for (const auto& [path, needle] : std::vector<std::pair<std::string, std::string>>{
           {"/query_range?query=" + Encode("{service_name=}") + "&" + w, "parse error"},
           {"/query_range?query=" + Encode(R"({a=""})") + "&" + w, "at least one"},
           {"/query_range?query=" + Encode(R"({service_name="x"})") + "&limit=6000&" + w,
            "max entries limit"},
           {"/query?query=" + Encode(R"({service_name="x"})"), "instant query type"},
           {"/query_range?query=" + Encode(R"(count_over_time({service_name="x"}[1m]))") +
                "&step=0.001&" + w,
            "maximum resolution"},
           {"/query_range?query=" + Encode(R"({service_name="x"})") + "&direction=up&" + w,
            "direction"},
           {"/query_range?query=" + Encode(R"(sum_over_time({service_name="x"}[1m]))") + "&" + w,
            "unwrap"},
       }) {
    const HttpAnswer answer = Get(path);
    EXPECT_EQ(answer.status, 400) << path << ": " << answer.body;
    EXPECT_THAT(answer.body, HasSubstr(needle)) << path;
    EXPECT_THAT(answer.Header("content-type"), HasSubstr("text/plain")) << path;
  }
}

}  // namespace
}  // namespace strata::api
