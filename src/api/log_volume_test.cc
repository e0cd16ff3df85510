// GET /api/v1/logs/volume, body.<path>= filters and GET
// /api/v1/attributes, on generated traffic (workload/traffic_generator.h
// with structured bodies: kvlists and arrays holding every AnyValue type
// and non-ASCII text) plus hand-written records. Volumes and attribute
// discovery are compared with plain DuckDB queries over the stored Parquet
// files; body paths with what was sent (the sent requests as OTLP/JSON,
// walked here in JSON, independently of the protobuf walk the server does).

#include "api/log_volume.h"

#include <algorithm>
#include <filesystem>
#include <map>
#include <set>
#include <tuple>

#include "api/api_server.h"
#include "api/api_test_server.h"
#include "api/attribute_discovery.h"
#include "api/log_filter.h"
#include "api/params.h"
#include "fmt/format.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "io/posix_file_system.h"
#include "otlp/decode.h"
#include "otlp/encode.h"
#include "query/duckdb_engine.h"
#include "query/query_pool.h"
#include "server/http_testing.h"
#include "simdjson.h"
#include "storage/storage.h"
#include "storage/testing/commit_testing.h"
#include "workload/traffic_generator.h"

namespace strata::api {
namespace {

using server::testing::Curl;
using server::testing::HttpAnswer;

constexpr int64_t kSecond = 1'000'000'000;
constexpr int64_t kMinute = 60 * kSecond;
constexpr char kReadToken[] = "read-token";

// Hand-written records: severities outside the generator's (0, 2, 6, 21,
// 24), a key with a dot beside a nested key of the same spelling, arrays
// of kvlists, and a string "402" beside the generator's int 402.
std::string HandWrittenLogsJson(int64_t t0, std::string_view service,
                                std::string_view extra_attribute) {
  constexpr std::string_view kBody =
      R"({"kvlistValue":{"values":[{"key":"http.status","value":{"intValue":"503"}},)"
      R"({"key":"http","value":{"kvlistValue":{"values":[{"key":"status","value":)"
      R"({"stringValue":"ok"}}]}}},{"key":"items","value":{"arrayValue":{"values":[)"
      R"({"stringValue":"a"},{"kvlistValue":{"values":[{"key":"id","value":{"intValue":"7"}}]}}]}}},)"
      R"({"key":"code","value":{"stringValue":"402"}},{"key":"ratio","value":{"doubleValue":0.5}},)"
      R"({"key":"code","value":{"intValue":"999"}},{"key":"flag","value":{"boolValue":true}}]}})";
  std::string records;
  const int severities[] = {0, 2, 6, 21, 24};
  for (size_t i = 0; i < std::size(severities); ++i) {
    records +=
        fmt::format(R"({}{{"timeUnixNano":"{}","severityNumber":{},"body":{},"attributes":[{}]}})",
                    i == 0 ? "" : ",", t0 + static_cast<int64_t>(i) * kSecond, severities[i], kBody,
                    extra_attribute);
  }
  return fmt::format(
      R"({{"resourceLogs":[{{"resource":{{"attributes":[{{"key":"service.name","value":)"
      R"({{"stringValue":"{}"}}}}]}},"scopeLogs":[{{"scope":{{"name":"hand"}},"logRecords":[{}]}}]}}]}})",
      service, records);
}

// Spans that take attribute discovery's key= answers off their promoted
// columns: http.route as an int (a promotion miss) and service.name as a
// span attribute, beside the resource's.
std::string OddSpansJson(int64_t t0) {
  return fmt::format(
      R"({{"resourceSpans":[{{"resource":{{"attributes":[{{"key":"service.name","value":)"
      R"({{"stringValue":"odd"}}}}]}},"scopeSpans":[{{"scope":{{"name":"t"}},"spans":[)"
      R"({{"traceId":"5b8efff798038103d269b633813fc60d","spanId":"eee19b7ec3c1b175","name":"a",)"
      R"("startTimeUnixNano":"{0}","endTimeUnixNano":"{1}","attributes":[)"
      R"({{"key":"http.route","value":{{"intValue":"7"}}}}]}},)"
      R"({{"traceId":"5b8efff798038103d269b633813fc60d","spanId":"eee19b7ec3c1b176","name":"b",)"
      R"("startTimeUnixNano":"{0}","endTimeUnixNano":"{1}","attributes":[)"
      R"({{"key":"service.name","value":{{"stringValue":"inner"}}}},)"
      R"({{"key":"http.route","value":{{"stringValue":"/odd"}}}}]}}]}}]}}]}})",
      t0, t0 + kSecond);
}

// A gauge whose points carry exemplars: with ids and a double, with an int
// and no ids, and a point with none.
std::string ExemplarMetricsJson(int64_t t0) {
  return fmt::format(
      R"({{"resourceMetrics":[{{"resource":{{"attributes":[{{"key":"service.name","value":)"
      R"({{"stringValue":"exemplary"}}}}]}},"scopeMetrics":[{{"scope":{{"name":"t"}},"metrics":[)"
      R"({{"name":"test.exemplars","gauge":{{"dataPoints":[)"
      R"({{"timeUnixNano":"{0}","asDouble":1.5,"exemplars":[{{"timeUnixNano":"{1}","asDouble":0.25,)"
      R"("traceId":"5b8efff798038103d269b633813fc60c","spanId":"eee19b7ec3c1b174"}},)"
      R"({{"timeUnixNano":"{2}","asInt":"-7"}}]}},)"
      R"({{"timeUnixNano":"{3}","asDouble":2.5}},)"
      R"({{"timeUnixNano":"{4}","asDouble":3.5,"exemplars":[{{"timeUnixNano":"{5}","asDouble":1e300,)"
      R"("spanId":"0102030405060708"}}]}}]}}}}]}}]}}]}})",
      t0, t0 - 1000, t0 - 500, t0 + kSecond, t0 + 2 * kSecond, t0 + 2 * kSecond - 3);
}

class LogVolumeTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { shared_ = new Shared(); }
  static void TearDownTestSuite() {
    delete shared_;
    shared_ = nullptr;
  }

  struct Shared {
    Shared() {
      const int64_t now = SystemNowUnixNano();
      start = now - 60 * kMinute;
      end = now;
      old_start = now - 58 * kMinute;
      data_dir = tmp.path() + "/data";
      auto opened = storage::Storage::Open(fs, data_dir);
      EXPECT_TRUE(opened.ok()) << opened.status();
      storage = *std::move(opened);

      // The oldest logs batch alone carries "old.only.key".
      WriteLogsJson(HandWrittenLogsJson(old_start, "hand-old",
                                        R"({"key":"old.only.key","value":{"intValue":"1"}})"));
      storage::WriteRequest odd;
      odd.traces = Decoded<otlp::TraceBatch>(OddSpansJson(old_start + kSecond),
                                             [](std::string_view json, otlp::TraceBatch* batch) {
                                               return otlp::DecodeTracesJson(json, batch);
                                             });
      Write(std::move(odd), 2);
      workload::TrafficOptions traffic;
      traffic.seed = 19;
      traffic.start_time_unix_nano = static_cast<uint64_t>(now - 45 * kMinute);
      traffic.structured_body_percent = 40;
      workload::TrafficGenerator generator(traffic);
      for (int i = 0; i < 3; ++i) {
        storage::WriteRequest request;
        request.traces = generator.Traces(200);
        request.logs = generator.Logs(300);
        request.metrics = generator.Metrics(100);
        sent_logs_json.push_back(otlp::EncodeLogsJson(*request.logs));
        request.rows = 600;
        request.bytes = 1 << 20;
        EXPECT_TRUE(storage->Write(std::move(request)).ok());
      }
      exemplar_t0 = now - 20 * kMinute;
      storage::WriteRequest exemplars;
      exemplars.metrics = Decoded<otlp::MetricBatch>(
          ExemplarMetricsJson(exemplar_t0), [](std::string_view json, otlp::MetricBatch* batch) {
            return otlp::DecodeMetricsJson(json, batch);
          });
      Write(std::move(exemplars), 3);
      WriteLogsJson(HandWrittenLogsJson(now - 5 * kMinute, "hand", ""));
      WriteLogsJson(HandWrittenLogsJson(now - 2 * kMinute, "hand", ""));

      test_support::LoopbackApi loopback =
          test_support::StartLoopbackApi(storage.get(), &fs, data_dir, std::string(kReadToken));
      pool = std::move(loopback.pool);
      api = std::move(loopback.api);
      http_server = std::move(loopback.http_server);

      // The reference: plain DuckDB over the stored files.
      auto opened_engine = query::DuckDbEngine::Open({});
      EXPECT_TRUE(opened_engine.ok());
      engine = *std::move(opened_engine);
      test_support::CreateTruthViews(*engine, data_dir);
    }
    ~Shared() {
      if (http_server != nullptr) http_server->Shutdown(std::chrono::seconds(5));
      http_server.reset();
      api.reset();
      pool.reset();
      if (storage != nullptr) storage->Shutdown(std::chrono::seconds(5));
      storage.reset();
    }

    // `json` decoded by `decode` (a test failure when it does not decode).
    template <typename Batch, typename Decode>
    static std::unique_ptr<Batch> Decoded(const std::string& json, Decode decode) {
      auto batch = std::make_unique<Batch>();
      const absl::Status decoded = decode(json, batch.get());
      EXPECT_TRUE(decoded.ok()) << decoded;
      return batch;
    }

    void Write(storage::WriteRequest request, uint64_t rows) {
      request.rows = rows;
      request.bytes = 4096;
      EXPECT_TRUE(storage->Write(std::move(request)).ok());
    }

    void WriteLogsJson(const std::string& json) {
      storage::WriteRequest request;
      request.logs =
          Decoded<otlp::LogBatch>(json, [](std::string_view text, otlp::LogBatch* batch) {
            return otlp::DecodeLogsJson(text, batch);
          });
      sent_logs_json.push_back(otlp::EncodeLogsJson(*request.logs));
      Write(std::move(request), 5);
    }

    PosixFileSystem fs;
    storage::testing::ScopedTempDir tmp{"log_volume"};
    std::string data_dir;
    int64_t start = 0, end = 0, old_start = 0, exemplar_t0 = 0;
    std::vector<std::string> sent_logs_json;  // every logs request, as OTLP/JSON
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
  static std::string Window() {
    return fmt::format("start={}&end={}", shared_->start, shared_->end);
  }
  static std::vector<std::vector<std::string>> Truth(const std::string& sql) {
    auto result = shared_->engine->Query(sql);
    EXPECT_TRUE(result.ok()) << result.status() << "\n" << sql;
    std::vector<std::vector<std::string>> rows;
    if (!result.ok()) return rows;
    for (const auto& row : result->rows) {
      std::vector<std::string> out;
      for (const auto& cell : row) out.push_back(cell.value_or("NULL"));
      rows.push_back(std::move(out));
    }
    return rows;
  }

  // (bucket start, severity range) -> count of a volume answer.
  static std::map<std::pair<std::string, std::string>, int64_t> VolumeCounts(
      const HttpAnswer& answer, int64_t* total) {
    std::map<std::pair<std::string, std::string>, int64_t> out;
    simdjson::dom::parser parser;
    simdjson::dom::element doc;
    EXPECT_EQ(parser.parse(answer.body).get(doc), simdjson::SUCCESS) << answer.body;
    *total = doc["total"].get_int64().value();
    int64_t sum = 0;
    for (simdjson::dom::element bucket : simdjson::dom::array(doc["buckets"].get_array().value())) {
      const std::string start(bucket["start_time_unix_nano"].get_string().value());
      int64_t bucket_total = 0;
      for (auto [name, count] : simdjson::dom::object(bucket["counts"].get_object().value())) {
        out[{start, std::string(name)}] = count.get_int64().value();
        bucket_total += count.get_int64().value();
      }
      EXPECT_EQ(bucket["total"].get_int64().value(), bucket_total) << answer.body;
      sum += bucket_total;
    }
    EXPECT_EQ(sum, *total);
    return out;
  }

  // Times of the records GET /api/v1/logs finds with `query`.
  static std::multiset<std::string> TimesFound(const std::string& query) {
    HttpAnswer answer = Get(fmt::format("/api/v1/logs?limit=1000&{}&{}", Window(), query));
    EXPECT_EQ(answer.status, 200) << query << ": " << answer.body;
    simdjson::dom::parser parser;
    simdjson::dom::element doc;
    std::multiset<std::string> times;
    if (parser.parse(answer.body).get(doc) != simdjson::SUCCESS) return times;
    for (simdjson::dom::element log : simdjson::dom::array(doc["logs"].get_array().value())) {
      times.emplace(log["time_unix_nano"].get_string().value());
    }
    EXPECT_TRUE(doc["next_cursor"].is_null()) << "more than one page: " << query;
    return times;
  }

  static Shared* shared_;
};

LogVolumeTest::Shared* LogVolumeTest::shared_ = nullptr;

// ---- volume ----

TEST_F(LogVolumeTest, VolumeMatchesDuckDbPerBucketAndSeverity) {
  const int64_t step = 60 * kSecond;
  struct Case {
    std::string query;
    std::string where;
  };
  const std::vector<Case> cases = {
      {"", "true"},
      {"service=checkout", "service_name = 'checkout'"},
      {"severity_min=warn", "severity_number >= 13"},
      {"attr.tenant.id=7",
       "attr_int[list_position(attr_keys, 'tenant.id')] = 7 OR "
       "attr_str[list_position(attr_keys, 'tenant.id')] = '7'"},
      {"service=hand&severity_min=2", "service_name = 'hand' AND severity_number >= 2"},
  };
  for (const Case& c : cases) {
    HttpAnswer answer = Get(fmt::format("/api/v1/logs/volume?step=60s&{}&{}", Window(), c.query));
    ASSERT_EQ(answer.status, 200) << c.query << ": " << answer.body;
    int64_t total = 0;
    const auto counts = VolumeCounts(answer, &total);
    std::map<std::pair<std::string, std::string>, int64_t> expected;
    int64_t expected_total = 0;
    for (const auto& row : Truth(fmt::format(
             "SELECT CAST({0} + (time_unix_nano - {0}) // {2} * {2} AS VARCHAR), CASE"
             " WHEN severity_number BETWEEN 1 AND 4 THEN 'trace'"
             " WHEN severity_number BETWEEN 5 AND 8 THEN 'debug'"
             " WHEN severity_number BETWEEN 9 AND 12 THEN 'info'"
             " WHEN severity_number BETWEEN 13 AND 16 THEN 'warn'"
             " WHEN severity_number BETWEEN 17 AND 20 THEN 'error'"
             " WHEN severity_number BETWEEN 21 AND 24 THEN 'fatal' ELSE 'unspecified' END,"
             " count(*) FROM logs WHERE time_unix_nano >= {0} AND time_unix_nano < {1} AND ({3})"
             " GROUP BY ALL",
             shared_->start, shared_->end, step, c.where))) {
      expected[{row[0], row[1]}] = std::stoll(row[2]);
      expected_total += std::stoll(row[2]);
    }
    EXPECT_EQ(counts, expected) << c.query;
    EXPECT_EQ(total, expected_total) << c.query;
    EXPECT_GT(total, 0) << c.query;
  }
}

TEST_F(LogVolumeTest, VolumeCountsWhatTheLogSearchFinds) {
  // q= reads structured bodies through otlp_value_strings, which plain
  // DuckDB lacks: the volume's total must equal the search's records.
  for (const std::string query : {"q=PAYMENT%20FAILED", "q=%E6%94%AF%E6%89%95", "q=failed"}) {
    int64_t total = 0;
    HttpAnswer answer = Get(fmt::format("/api/v1/logs/volume?{}&{}", Window(), query));
    ASSERT_EQ(answer.status, 200) << answer.body;
    VolumeCounts(answer, &total);
    EXPECT_EQ(static_cast<size_t>(total), TimesFound(query).size()) << query;
    EXPECT_GT(total, 0) << query;
  }
}

TEST_F(LogVolumeTest, VolumeDefaultsAndLimits) {
  HttpAnswer answer = Get("/api/v1/logs/volume?" + Window());
  ASSERT_EQ(answer.status, 200) << answer.body;
  EXPECT_THAT(answer.body, ::testing::HasSubstr("\"step_nano\":\"60000000000\""));
  HttpAnswer too_many = Get("/api/v1/logs/volume?step=100ms&" + Window());
  EXPECT_EQ(too_many.status, 400);
  EXPECT_THAT(too_many.body, ::testing::HasSubstr("step: the window holds 36000 buckets"));
  EXPECT_EQ(Get("/api/v1/logs/volume?step=0&" + Window()).status, 400);
  EXPECT_EQ(Get("/api/v1/logs/volume?limit=5&" + Window()).status, 400);
  EXPECT_EQ(Get("/api/v1/logs/volume?cursor=v1.1.1&" + Window()).status, 400);
  EXPECT_EQ(Get("/api/v1/logs/volume?severity_min=loud").status, 400);
}

TEST_F(LogVolumeTest, SeverityRangesFollowOtlp) {
  EXPECT_EQ(kSeverityRangeNames[SeverityRangeOf(0)], "unspecified");
  EXPECT_EQ(kSeverityRangeNames[SeverityRangeOf(1)], "trace");
  EXPECT_EQ(kSeverityRangeNames[SeverityRangeOf(4)], "trace");
  EXPECT_EQ(kSeverityRangeNames[SeverityRangeOf(5)], "debug");
  EXPECT_EQ(kSeverityRangeNames[SeverityRangeOf(12)], "info");
  EXPECT_EQ(kSeverityRangeNames[SeverityRangeOf(13)], "warn");
  EXPECT_EQ(kSeverityRangeNames[SeverityRangeOf(20)], "error");
  EXPECT_EQ(kSeverityRangeNames[SeverityRangeOf(24)], "fatal");
  EXPECT_EQ(kSeverityRangeNames[SeverityRangeOf(25)], "unspecified");
  EXPECT_EQ(kSeverityRangeNames[SeverityRangeOf(-3)], "unspecified");
}

// ---- body paths ----

// The value at `path` in an OTLP/JSON AnyValue, walked in JSON.
std::optional<simdjson::dom::element> JsonValueAt(simdjson::dom::element value,
                                                  const std::vector<std::string>& path) {
  for (const std::string& segment : path) {
    simdjson::dom::element children;
    if (value["kvlistValue"]["values"].get(children) == simdjson::SUCCESS) {
      bool found = false;
      for (simdjson::dom::element entry : simdjson::dom::array(children.get_array().value())) {
        std::string_view key;
        if (entry["key"].get(key) != simdjson::SUCCESS) key = "";
        if (key == segment) {
          if (entry["value"].get(value) != simdjson::SUCCESS) return std::nullopt;
          found = true;
          break;
        }
      }
      if (!found) return std::nullopt;
    } else if (value["arrayValue"]["values"].get(children) == simdjson::SUCCESS) {
      if (segment.empty() || segment.find_first_not_of("0123456789") != std::string::npos ||
          (segment.size() > 1 && segment[0] == '0')) {
        return std::nullopt;
      }
      const size_t index = std::stoul(segment);
      simdjson::dom::array array = children.get_array().value();
      if (index >= array.size()) return std::nullopt;
      value = array.at(index).value();
    } else {
      return std::nullopt;
    }
  }
  return value;
}

bool JsonValueEquals(simdjson::dom::element value, const std::string& text) {
  std::string_view s;
  if (value["stringValue"].get(s) == simdjson::SUCCESS) return s == text;
  if (value["intValue"].get(s) == simdjson::SUCCESS) {
    // A decimal string in OTLP/JSON: equal when `text` is the same integer.
    try {
      size_t used = 0;
      const long long parsed = std::stoll(text, &used);
      return used == text.size() && std::to_string(parsed) == std::string(s);
    } catch (...) {
      return false;
    }
  }
  double d = 0;
  if (value["doubleValue"].get(d) == simdjson::SUCCESS) {
    try {
      size_t used = 0;
      const double parsed = std::stod(text, &used);
      return used == text.size() && parsed == d;
    } catch (...) {
      return false;
    }
  }
  bool b = false;
  if (value["boolValue"].get(b) == simdjson::SUCCESS) {
    return (text == "true" && b) || (text == "false" && !b);
  }
  return false;
}

TEST_F(LogVolumeTest, BodyPathFiltersFindWhatWasSent) {
  struct Case {
    std::string param;  // after "body.", percent-encoded
    std::vector<std::string> path;
    std::string value;
  };
  const std::vector<Case> cases = {
      {"code=402", {"code"}, "402"},
      {"code=403", {"code"}, "403"},
      {"code=999", {"code"}, "999"},  // a repeated key: only the first counts
      {"user.id=7", {"user", "id"}, "7"},
      {"user.name=Zo%C3%AB", {"user", "name"}, "Zoë"},
      {"message=payment%20failed", {"message"}, "payment failed"},
      {"tags.1=404", {"tags", "1"}, "404"},
      {"tags.0=checkout", {"tags", "0"}, "checkout"},
      {"tags.01=checkout", {"tags", "01"}, "checkout"},
      {"retry=true", {"retry"}, "true"},
      {"ratio=0.5", {"ratio"}, "0.5"},
      {"ratio=5e-1", {"ratio"}, "5e-1"},
      {"http%5C.status=503", {"http.status"}, "503"},
      {"http.status=ok", {"http", "status"}, "ok"},
      {"items.1.id=7", {"items", "1", "id"}, "7"},
      {"1=402", {"1"}, "402"},
      {"3.code=402", {"3", "code"}, "402"},
      {"raw=AAH%2B%2Fw%3D%3D", {"raw"}, "AAH+/w=="},
      {"none=", {"none"}, ""},
  };
  simdjson::dom::parser parser;
  for (const Case& c : cases) {
    std::multiset<std::string> expected;
    for (const std::string& json : shared_->sent_logs_json) {
      simdjson::dom::element doc = parser.parse(json).value();
      for (simdjson::dom::element resource :
           simdjson::dom::array(doc["resourceLogs"].get_array().value())) {
        for (simdjson::dom::element scope :
             simdjson::dom::array(resource["scopeLogs"].get_array().value())) {
          for (simdjson::dom::element record :
               simdjson::dom::array(scope["logRecords"].get_array().value())) {
            simdjson::dom::element body;
            if (record["body"].get(body) != simdjson::SUCCESS) continue;
            const std::optional<simdjson::dom::element> at = JsonValueAt(body, c.path);
            if (at.has_value() && JsonValueEquals(*at, c.value)) {
              expected.emplace(record["timeUnixNano"].get_string().value());
            }
          }
        }
      }
    }
    EXPECT_EQ(TimesFound("body." + c.param), expected) << c.param;
    int64_t total = 0;
    HttpAnswer volume = Get(fmt::format("/api/v1/logs/volume?{}&body.{}", Window(), c.param));
    ASSERT_EQ(volume.status, 200) << volume.body;
    VolumeCounts(volume, &total);
    EXPECT_EQ(static_cast<size_t>(total), expected.size()) << c.param;
  }
  // The cases that must find something do.
  EXPECT_FALSE(TimesFound("body.code=402").empty());
  EXPECT_FALSE(TimesFound("body.user.id=7").empty());
  EXPECT_FALSE(TimesFound("body.http%5C.status=503").empty());
  EXPECT_FALSE(TimesFound("body.items.1.id=7").empty());
  EXPECT_FALSE(TimesFound("body.tags.1=404").empty());
  // Filters combine: all must match.
  const auto both = TimesFound("body.code=402&body.retry=true");
  const auto code = TimesFound("body.code=402");
  const auto retry = TimesFound("body.retry=true");
  std::multiset<std::string> intersection;
  std::set_intersection(code.begin(), code.end(), retry.begin(), retry.end(),
                        std::inserter(intersection, intersection.begin()));
  EXPECT_EQ(both, intersection);
}

TEST_F(LogVolumeTest, BodyPathFunctionInSql) {
  const size_t expected = TimesFound("body.user.id=7").size();
  HttpAnswer answer = PostSql(fmt::format(
      "SELECT count(*) FROM logs WHERE time_unix_nano >= {} AND time_unix_nano < {} AND "
      "otlp_value_path_equals(body_type, body_bytes, 'user.id', '7')",
      shared_->start, shared_->end));
  ASSERT_EQ(answer.status, 200) << answer.body;
  EXPECT_THAT(answer.body, ::testing::HasSubstr(fmt::format("\"rows\":[[{}]]", expected)));
  HttpAnswer bad = PostSql("SELECT otlp_value_path_equals(6, '\\x32\\x00'::BLOB, 'a..b', '1')");
  EXPECT_EQ(bad.status, 400) << bad.body;
  EXPECT_THAT(bad.body, ::testing::HasSubstr("path has an empty segment"));
}

TEST_F(LogVolumeTest, BadBodyPathsAreRefused) {
  for (const std::string& param :
       {std::string("body.=1"), std::string("body.a..b=1"), std::string("body.a.=1"),
        std::string("body.a%5Cx=1"), std::string("body.a%5C=1"),
        "body." + std::string(600, 'k') + "=1"}) {
    HttpAnswer answer = Get("/api/v1/logs?" + param);
    EXPECT_EQ(answer.status, 400) << param << ": " << answer.body;
    EXPECT_THAT(answer.body, ::testing::HasSubstr("body.")) << param;
  }
  std::string many;
  for (size_t i = 0; i <= kMaxBodyPathFilters; ++i) many += fmt::format("&body.k{}=1", i);
  EXPECT_EQ(Get("/api/v1/logs?" + Window() + many).status, 400);
}

// ---- metric exemplars ----

TEST_F(LogVolumeTest, MetricSeriesCarryTheirStoredExemplars) {
  HttpAnswer answer =
      Get(fmt::format("/api/v1/metrics/query?name=test.exemplars&agg=max&{}", Window()));
  ASSERT_EQ(answer.status, 200) << answer.body;
  simdjson::dom::parser parser;
  simdjson::dom::element doc = parser.parse(answer.body).value();
  std::vector<std::string> found;
  for (simdjson::dom::element series : simdjson::dom::array(doc["series"].get_array().value())) {
    for (simdjson::dom::element e : simdjson::dom::array(series["exemplars"].get_array().value())) {
      std::string value = "NULL";
      double number = 0;
      if (e["value"].get(number) == simdjson::SUCCESS) value = fmt::format("{}", number);
      found.push_back(fmt::format("{}|{}|{}|{}",
                                  std::string(e["time_unix_nano"].get_string().value()), value,
                                  std::string(e["trace_id"].get_string().value()),
                                  std::string(e["span_id"].get_string().value())));
    }
  }
  std::vector<std::string> expected;
  for (const auto& row : Truth(fmt::format(
           "SELECT t, coalesce(d, CAST(i AS DOUBLE)), coalesce(lower(hex(tr)), ''),"
           " coalesce(lower(hex(sp)), '') FROM (SELECT unnest(exemplar_time_unix_nano) AS t,"
           " unnest(exemplar_value_double) AS d, unnest(exemplar_value_int) AS i,"
           " unnest(exemplar_trace_id) AS tr, unnest(exemplar_span_id) AS sp FROM metrics"
           " WHERE metric_name = 'test.exemplars' AND time_unix_nano >= {} AND time_unix_nano < {})"
           " ORDER BY t",
           shared_->start, shared_->end))) {
    const std::string value = row[1] == "NULL" ? row[1] : fmt::format("{}", std::stod(row[1]));
    expected.push_back(fmt::format("{}|{}|{}|{}", row[0], value, row[2], row[3]));
  }
  EXPECT_EQ(found, expected);
  ASSERT_EQ(found.size(), 3u);
  EXPECT_EQ(found[0], fmt::format("{}|0.25|5b8efff798038103d269b633813fc60c|eee19b7ec3c1b174",
                                  shared_->exemplar_t0 - 1000));
  EXPECT_EQ(found[1], fmt::format("{}|-7||", shared_->exemplar_t0 - 500));
}

// ---- attribute discovery ----

struct DiscoveredKey {
  std::string types;  // sorted, comma-separated
  int64_t count = 0;
  std::vector<std::pair<std::string, int64_t>> values;
  friend bool operator==(const DiscoveredKey&, const DiscoveredKey&) = default;
};
using Discovered = std::map<std::pair<std::string, std::string>, DiscoveredKey>;

std::ostream& operator<<(std::ostream& os, const DiscoveredKey& k) {
  os << "{" << k.types << " " << k.count << " [";
  for (const auto& [v, n] : k.values) os << v << ":" << n << " ";
  return os << "]}";
}

class AttributeDiscoveryTest : public LogVolumeTest {
 protected:
  static Discovered Parse(const HttpAnswer& answer, simdjson::dom::element* sample,
                          simdjson::dom::parser& parser) {
    Discovered out;
    simdjson::dom::element doc;
    EXPECT_EQ(parser.parse(answer.body).get(doc), simdjson::SUCCESS) << answer.body;
    *sample = doc["sample"].value();
    for (simdjson::dom::element a : simdjson::dom::array(doc["attributes"].get_array().value())) {
      DiscoveredKey key;
      for (simdjson::dom::element t : simdjson::dom::array(a["types"].get_array().value())) {
        key.types += (key.types.empty() ? "" : ",") + std::string(t.get_string().value());
      }
      key.count = a["count"].get_int64().value();
      for (simdjson::dom::element v : simdjson::dom::array(a["values"].get_array().value())) {
        key.values.emplace_back(std::string(v["value"].get_string().value()),
                                v["count"].get_int64().value());
      }
      out[{std::string(a["family"].get_string().value()),
           std::string(a["key"].get_string().value())}] = std::move(key);
    }
    return out;
  }

  // The reference: every key of `table`'s rows matching `where`, with the
  // top `values` string, int, double and bool values, from plain DuckDB.
  static Discovered Expected(const std::string& table, const std::string& where, size_t values) {
    static constexpr std::string_view kTypeNames[] = {"empty",  "string", "bool",   "int",
                                                      "double", "array",  "kvlist", "bytes"};
    Discovered out;
    for (const auto& [family, prefix] : {std::pair<std::string, std::string>{"attribute", "attr"},
                                         {"resource", "resource_attr"}}) {
      std::map<std::string, std::set<std::string>> types;
      for (const auto& row : Truth(fmt::format(
               "SELECT k, t, count(*) FROM (SELECT unnest({0}_keys) AS k, unnest({0}_types) AS t"
               " FROM {1} WHERE {2}) GROUP BY k, t",
               prefix, table, where))) {
        out[{family, row[0]}].count += std::stoll(row[2]);
        types[row[0]].emplace(kTypeNames[std::stoi(row[1])]);
      }
      for (const auto& [key, names] : types) {
        out[{family, key}].types = fmt::format("{}", fmt::join(names, ","));
      }
      // Values per type, each type's list unnested on its own.
      std::map<std::pair<std::string, std::string>, int64_t> counts;
      for (const std::string list : {"str", "int", "double", "bool"}) {
        for (const auto& row : Truth(fmt::format(
                 "SELECT k, CAST(v AS VARCHAR), count(*) FROM (SELECT unnest({0}_keys) AS k,"
                 " unnest({0}_{3}) AS v FROM"
                 " {1} WHERE {2}) WHERE v IS NOT NULL GROUP BY ALL",
                 prefix, table, where, list))) {
          counts[{row[0], row[1]}] += std::stoll(row[2]);
        }
      }
      for (const auto& [key_value, n] : counts) {
        out[{family, key_value.first}].values.emplace_back(key_value.second, n);
      }
    }
    for (auto& [key, entry] : out) {
      std::sort(entry.values.begin(), entry.values.end(), [](const auto& a, const auto& b) {
        return std::tie(b.second, a.first) < std::tie(a.second, b.first);
      });
      if (entry.values.size() > values) entry.values.resize(values);
    }
    return out;
  }
};

TEST_F(AttributeDiscoveryTest, SpansAndMetricsMatchDuckDbWhenTheSampleIsComplete) {
  for (const auto& [signal, time] :
       {std::pair<std::string, std::string>{"spans", "start_time_unix_nano"},
        {"metrics", "time_unix_nano"}}) {
    for (const std::string service : {"", "checkout"}) {
      HttpAnswer answer =
          Get(fmt::format("/api/v1/attributes?signal={}&limit=1000&values=5&{}{}", signal, Window(),
                          service.empty() ? "" : "&service=" + service));
      ASSERT_EQ(answer.status, 200) << answer.body;
      simdjson::dom::parser parser;
      simdjson::dom::element sample;
      const Discovered found = Parse(answer, &sample, parser);
      EXPECT_TRUE(sample["complete"].get_bool().value()) << answer.body;
      // Three generated batches, and the odd spans or the exemplar batch.
      EXPECT_EQ(sample["batches_read"].get_int64().value(), 4) << answer.body;
      const std::string where =
          fmt::format("{0} >= {1} AND {0} < {2}{3}", time, shared_->start, shared_->end,
                      service.empty() ? "" : " AND service_name = '" + service + "'");
      EXPECT_EQ(
          sample["rows"].get_int64().value(),
          std::stoll(Truth(fmt::format("SELECT count(*) FROM {} WHERE {}", signal, where))[0][0]));
      const Discovered expected = Expected(signal, where, 5);
      EXPECT_EQ(found, expected) << signal << " " << service;
      EXPECT_GT(found.size(), 5u);
    }
  }
}

TEST_F(AttributeDiscoveryTest, LogsReadOnlyTheNewestBatches) {
  // Six logs batches meet the window; the oldest alone has old.only.key.
  HttpAnswer answer = Get("/api/v1/attributes?signal=logs&limit=1000&" + Window());
  ASSERT_EQ(answer.status, 200) << answer.body;
  simdjson::dom::parser parser;
  simdjson::dom::element sample;
  Discovered found = Parse(answer, &sample, parser);
  EXPECT_EQ(sample["batches_in_window"].get_int64().value(), 6) << answer.body;
  EXPECT_EQ(sample["batches_read"].get_int64().value(), static_cast<int64_t>(kDiscoveryBatches));
  EXPECT_FALSE(sample["complete"].get_bool().value());
  EXPECT_EQ(found.count({"attribute", "old.only.key"}), 0u);
  EXPECT_EQ(found.count({"attribute", "tenant.id"}), 1u);

  // A window holding only the oldest batch finds it, completely.
  const int64_t old_end = shared_->old_start + 10 * kSecond;
  answer = Get(
      fmt::format("/api/v1/attributes?signal=logs&start={}&end={}", shared_->old_start, old_end));
  ASSERT_EQ(answer.status, 200) << answer.body;
  simdjson::dom::parser parser2;
  found = Parse(answer, &sample, parser2);
  EXPECT_TRUE(sample["complete"].get_bool().value()) << answer.body;
  EXPECT_EQ(found, Expected("logs",
                            fmt::format("time_unix_nano >= {} AND time_unix_nano < {}",
                                        shared_->old_start, old_end),
                            kDiscoveryValuesDefault));
  EXPECT_EQ(found.at({"attribute", "old.only.key"}).types, "int");
}

// key= reads a key's first occurrence per family, through the promoted
// column where one holds it: service.name on every signal, http.route on
// spans. Every key the full answer finds must come back alike with key=,
// in a window of generated traffic alone (promoted columns answer) and in
// one with the odd spans (a promotion miss and a span attribute
// service.name send both keys back to the lists). The generated and
// hand-written attribute sets repeat no key, so the reference counts every
// occurrence.
TEST_F(AttributeDiscoveryTest, KeyAnswersAgreeWithDuckDbOnEveryPath) {
  for (const auto& [signal, time] :
       {std::pair<std::string, std::string>{"spans", "start_time_unix_nano"},
        {"logs", "time_unix_nano"},
        {"metrics", "time_unix_nano"}}) {
    // Windows whose sample is complete: six logs batches meet the whole
    // window, and the answer reads the newest four.
    std::vector<std::pair<int64_t, int64_t>> windows = {
        {shared_->start, shared_->end}, {shared_->old_start + 10 * kSecond, shared_->end}};
    if (signal == "logs") {
      windows = {{shared_->end - 6 * kMinute, shared_->end},
                 {shared_->old_start, shared_->old_start + 10 * kSecond}};
    }
    for (const auto& [start, end] : windows) {
      const std::string window = fmt::format("start={}&end={}", start, end);
      const std::string where = fmt::format("{0} >= {1} AND {0} < {2}", time, start, end);
      const Discovered expected = Expected(signal, where, 100);
      // The promoted keys, and a few through the lists.
      std::set<std::string> keys = {"service.name", "service.version", "http.route"};
      for (const auto& [family_key, entry] : expected) {
        if (keys.size() < 7) keys.insert(family_key.second);
      }
      ASSERT_EQ(expected.count({"resource", "service.name"}), 1u) << signal;
      if (signal == "spans") ASSERT_EQ(expected.count({"attribute", "http.route"}), 1u);
      for (const std::string& key : keys) {
        std::string encoded;
        PercentEncode(key, &encoded);
        HttpAnswer answer = Get(fmt::format("/api/v1/attributes?signal={}&key={}&values=100&{}",
                                            signal, encoded, window));
        ASSERT_EQ(answer.status, 200) << answer.body;
        simdjson::dom::parser parser;
        simdjson::dom::element sample;
        const Discovered found = Parse(answer, &sample, parser);
        Discovered want;
        for (const auto& [family_key, entry] : expected) {
          if (family_key.second == key) want[family_key] = entry;
        }
        EXPECT_TRUE(sample["complete"].get_bool().value()) << answer.body;
        EXPECT_EQ(found, want) << signal << " " << key << " from " << start;
        EXPECT_EQ(
            sample["rows"].get_int64().value(),
            std::stoll(Truth(fmt::format("SELECT count(*) FROM {} WHERE {}", signal, where))[0][0]))
            << signal << " " << key;
      }
    }
  }
  // The odd spans are in the first window only, and change both keys.
  const std::string where = fmt::format("start_time_unix_nano >= {} AND start_time_unix_nano < {}",
                                        shared_->start, shared_->end);
  const Discovered expected = Expected("spans", where, 100);
  EXPECT_EQ(expected.at({"attribute", "http.route"}).types, "int,string");
  EXPECT_EQ(expected.count({"attribute", "service.name"}), 1u);
}

TEST_F(AttributeDiscoveryTest, KeyLimitAndValuesParameters) {
  HttpAnswer answer = Get("/api/v1/attributes?signal=spans&key=http.route&values=100&" + Window());
  ASSERT_EQ(answer.status, 200) << answer.body;
  simdjson::dom::parser parser;
  simdjson::dom::element sample;
  Discovered found = Parse(answer, &sample, parser);
  ASSERT_EQ(found.size(), 1u) << answer.body;
  const std::string where = fmt::format("start_time_unix_nano >= {} AND start_time_unix_nano < {}",
                                        shared_->start, shared_->end);
  EXPECT_EQ(found.begin()->second, Expected("spans", where, 100).at({"attribute", "http.route"}));

  answer = Get("/api/v1/attributes?signal=spans&limit=1&values=0&" + Window());
  ASSERT_EQ(answer.status, 200) << answer.body;
  simdjson::dom::parser parser2;
  found = Parse(answer, &sample, parser2);
  ASSERT_EQ(found.size(), 1u);
  EXPECT_TRUE(found.begin()->second.values.empty());
  EXPECT_THAT(answer.body, ::testing::HasSubstr("\"keys_truncated\":true"));

  for (const std::string bad :
       {"", "signal=traces", "signal=spans&limit=1001", "signal=spans&values=101",
        "signal=spans&limit=0", "signal=spans&colour=red"}) {
    HttpAnswer refused = Get("/api/v1/attributes?" + bad);
    EXPECT_EQ(refused.status, 400) << bad << ": " << refused.body;
  }
}

}  // namespace
}  // namespace strata::api
