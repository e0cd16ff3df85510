// The REST API end to end: generated traffic written through the real
// storage engine into a temp dir, the Api's routes behind a real HttpServer
// on 127.0.0.1:0, requests through curl, and every answer compared with
// ground truth from a plain DuckDB query over all the Parquet files (or
// from hand-written data whose answers are known).

#include <algorithm>
#include <filesystem>
#include <map>
#include <regex>
#include <set>

#include "api/api_server.h"
#include "api/api_test_server.h"
#include "api/search.h"
#include "fmt/chrono.h"
#include "fmt/format.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "io/posix_file_system.h"
#include "otlp/decode.h"
#include "query/duckdb_engine.h"
#include "query/query_pool.h"
#include "rollups/duration_histogram.h"
#include "rollups/rollup_rows.h"
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

constexpr char kReadToken[] = "read-token";
constexpr char kIngestToken[] = "ingest-token";
constexpr char kEdgeTrace[] = "c0ffee00c0ffee00c0ffee00c0ffee01";

std::string SpanJson(std::string_view span_id, std::string_view parent, std::string_view name,
                     int64_t start, int64_t duration, int status, std::string_view attributes) {
  return fmt::format(
      R"({{"traceId":"{}","spanId":"{}",{}"name":"{}","kind":2,"startTimeUnixNano":"{}",)"
      R"("endTimeUnixNano":"{}","status":{{"code":{}}},"attributes":[{}]}})",
      kEdgeTrace, span_id,
      parent.empty() ? std::string() : fmt::format(R"("parentSpanId":"{}",)", parent), name, start,
      start + duration, status, attributes);
}

std::string TraceRequestJson(const std::vector<std::string>& spans) {
  std::string joined;
  for (const std::string& span : spans) joined += (joined.empty() ? "" : ",") + span;
  return fmt::format(
      R"({{"resourceSpans":[{{"resource":{{"attributes":[{{"key":"service.name","value":)"
      R"({{"stringValue":"edge"}}}}]}},"scopeSpans":[{{"scope":{{"name":"t"}},"spans":[{}]}}]}}]}})",
      joined);
}

// A cumulative counter and a delta histogram whose rates and quantiles are
// known (see MetricRatesAndQuantiles).
std::string KnownMetricsJson(int64_t t0) {
  return fmt::format(
      R"({{"resourceMetrics":[{{"resource":{{"attributes":[{{"key":"service.name","value":)"
      R"({{"stringValue":"meter"}}}}]}},"scopeMetrics":[{{"scope":{{"name":"t"}},"metrics":[)"
      R"({{"name":"test.requests","sum":{{"aggregationTemporality":2,"isMonotonic":true,)"
      R"("dataPoints":[{{"timeUnixNano":"{}","asInt":"100"}},{{"timeUnixNano":"{}","asInt":"130"}},)"
      R"({{"timeUnixNano":"{}","asInt":"190"}}]}}}},)"
      R"({{"name":"test.latency","histogram":{{"aggregationTemporality":1,"dataPoints":[)"
      R"({{"timeUnixNano":"{}","count":"100","sum":3000,"bucketCounts":["10","20","60","10"],)"
      R"("explicitBounds":[10,20,50]}}]}}}}]}}]}}]}})",
      t0 + 10 * kSecond, t0 + 20 * kSecond, t0 + 70 * kSecond, t0 + 30 * kSecond);
}

class ApiTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { shared_ = new Shared(); }
  static void TearDownTestSuite() {
    delete shared_;
    shared_ = nullptr;
  }

  struct Shared {
    Shared() {
      now = SystemNowUnixNano();
      start = now - 40 * 60 * kSecond;
      end = now + 10 * 60 * kSecond;
      edge_start = now - 20 * 60 * kSecond;
      metric_t0 = now - 10 * 60 * kSecond;
      data_dir = tmp.path() + "/data";
      auto opened = storage::Storage::Open(fs, data_dir);
      EXPECT_TRUE(opened.ok()) << opened.status();
      storage = *std::move(opened);

      // Multi-service traffic over about twelve minutes, one request (and
      // so one batch) each two: with database calls, messages through a
      // queue (consumers as children or linked to their producer) and
      // CLIENT spans held back and exported three minutes of event time
      // after their children, the last ones in a request of their own.
      workload::TrafficOptions traffic;
      traffic.seed = 11;
      traffic.start_time_unix_nano = static_cast<uint64_t>(now - 30 * 60 * kSecond);
      traffic.messaging_percent = 30;
      traffic.late_parent_percent = 10;
      traffic.trace_spacing_nanos = 4 * kSecond;
      workload::TrafficGenerator generator(traffic);
      for (int i = 0; i < 7; ++i) {
        storage::WriteRequest request;
        request.traces = i < 6 ? generator.Traces(300) : generator.HeldBackSpans();
        if (i < 6) {
          request.logs = generator.Logs(150);
          request.metrics = generator.Metrics(150);
        }
        request.rows = 600;
        request.bytes = 1 << 20;
        EXPECT_TRUE(storage->Write(std::move(request)).ok());
      }
      // The edge trace, one request (and so one batch) per part.
      const std::string custom =
          R"({"key":"custom.key","value":{"stringValue":"abc"}},)"
          R"({"key":"http.response.status_code","value":{"intValue":"599"}})";
      const std::vector<std::vector<std::string>> parts = {
          {SpanJson("0000000000000001", "", "edge-root", edge_start, 900'000'000, 2, custom)},
          {SpanJson("0000000000000002", "0000000000000001", "edge-child", edge_start + kSecond / 10,
                    100'000'000, 0, ""),
           SpanJson("0000000000000003", "0000000000000001", "edge-child", edge_start + kSecond / 5,
                    100'000'000, 0, "")},
          {SpanJson("0000000000000004", "0000000000000002", "edge-db", edge_start + kSecond / 4,
                    5'000'000, 0, ""),
           SpanJson("0000000000000005", "0000000000000003", "edge-db", edge_start + kSecond / 3,
                    5'000'000, 0, "")}};
      for (const auto& part : parts) {
        auto batch = std::make_unique<otlp::TraceBatch>();
        EXPECT_TRUE(otlp::DecodeTracesJson(TraceRequestJson(part), batch.get()).ok());
        storage::WriteRequest request;
        request.traces = std::move(batch);
        request.rows = part.size();
        request.bytes = 4096;
        EXPECT_TRUE(storage->Write(std::move(request)).ok());
      }
      auto metrics = std::make_unique<otlp::MetricBatch>();
      const absl::Status decoded =
          otlp::DecodeMetricsJson(KnownMetricsJson(metric_t0), metrics.get());
      EXPECT_TRUE(decoded.ok()) << decoded;
      storage::WriteRequest request;
      request.metrics = std::move(metrics);
      request.rows = 4;
      request.bytes = 4096;
      EXPECT_TRUE(storage->Write(std::move(request)).ok());

      pool = test_support::OpenTestPool(data_dir, 2, 2);

      ApiOptions options;
      options.storage = [this] { return storage.get(); };
      options.pool = pool.get();
      options.fs = &fs;
      options.data_dir = data_dir;
      options.authenticate = [](std::string_view token) -> absl::StatusOr<control::TokenScope> {
        if (token == kReadToken) return control::TokenScope::kRead;
        if (token == kIngestToken) return control::TokenScope::kIngest;
        return absl::UnauthenticatedError("unknown or revoked token");
      };
      api = std::make_unique<Api>(std::move(options));
      auto started = test_support::ServeOnLoopback(*api);
      EXPECT_TRUE(started.ok()) << started.status();
      http_server = *std::move(started);

      auto opened_engine = query::DuckDbEngine::Open({});
      EXPECT_TRUE(opened_engine.ok());
      engine = *std::move(opened_engine);
      batches = CreateTruthViews();
    }
    // (Re)creates the ground truth's views over every table file in the
    // data directory now; returns the number of spans files.
    size_t CreateTruthViews() { return test_support::CreateTruthViews(*engine, data_dir); }
    ~Shared() {
      if (http_server != nullptr) http_server->Shutdown(std::chrono::seconds(5));
      http_server.reset();
      api.reset();
      pool.reset();
      if (storage != nullptr) storage->Shutdown(std::chrono::seconds(5));
      storage.reset();
    }

    PosixFileSystem fs;
    storage::testing::ScopedTempDir tmp{"api"};
    std::string data_dir;
    int64_t now = 0, start = 0, end = 0, edge_start = 0, metric_t0 = 0;
    size_t batches = 0;
    std::unique_ptr<storage::Storage> storage;
    std::unique_ptr<query::QueryPool> pool;
    std::unique_ptr<Api> api;
    std::unique_ptr<server::HttpServer> http_server;
    std::unique_ptr<query::DuckDbEngine> engine;
  };

  static HttpAnswer Get(const std::string& target, const std::string& token = kReadToken) {
    std::vector<std::string> headers;
    if (!token.empty()) headers.push_back("Authorization: Bearer " + token);
    return server::testing::Fetch(
        "GET", fmt::format("http://127.0.0.1:{}{}", shared_->http_server->port(), target), headers);
  }

  static HttpAnswer PostSql(const std::string& body, const std::string& content_type,
                            const std::string& query = "") {
    return server::testing::Fetch(
        "POST",
        fmt::format("http://127.0.0.1:{}/api/v1/sql{}", shared_->http_server->port(), query),
        {std::string("Authorization: Bearer ") + kReadToken, "Content-Type: " + content_type},
        body);
  }

  static std::string Window() {
    return fmt::format("start={}&end={}", shared_->start, shared_->end);
  }

  // Rows of a ground-truth query.
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

  static std::string WindowSql(std::string_view column) {
    return fmt::format("{} >= {} AND {} < {}", column, shared_->start, column, shared_->end);
  }

  // Trace ids of a GET /api/v1/traces answer, in answer order.
  static std::vector<std::string> TraceIds(const std::string& body) {
    std::vector<std::string> ids;
    static const std::regex kId(R"re("trace_id":"([0-9a-f]{32})")re");
    for (std::sregex_iterator it(body.begin(), body.end(), kId), end; it != end; ++it) {
      ids.push_back((*it)[1].str());
    }
    return ids;
  }

  // Distinct trace ids of spans matching `where` in the window, sorted.
  static std::vector<std::string> TruthTraceIds(const std::string& where) {
    std::vector<std::string> ids;
    for (const auto& row :
         Truth(fmt::format("SELECT DISTINCT lower(hex(trace_id)) FROM spans WHERE {} AND ({}) "
                           "ORDER BY 1",
                           WindowSql("start_time_unix_nano"), where))) {
      ids.push_back(row[0]);
    }
    return ids;
  }

  static std::vector<std::string> Sorted(std::vector<std::string> v) {
    std::sort(v.begin(), v.end());
    return v;
  }

  static Shared* shared_;
};

ApiTest::Shared* ApiTest::shared_ = nullptr;

TEST_F(ApiTest, DataSpansManyBatches) {
  EXPECT_GE(shared_->batches, 9u);
  EXPECT_EQ(
      Truth("SELECT count(DISTINCT filename) FROM read_parquet("
            "'" +
            shared_->data_dir + "/telemetry/days/*/*.batch/spans.parquet', filename = true)")[0][0],
      std::to_string(shared_->batches));
}

TEST_F(ApiTest, TraceByIdComesBackWholeAcrossBatches) {
  HttpAnswer answer = Get(std::string("/api/v1/traces/") + kEdgeTrace);
  ASSERT_EQ(answer.status, 200) << answer.body;
  EXPECT_EQ(answer.Header("content-type"), "application/json");
  EXPECT_THAT(answer.body, HasSubstr("\"resourceSpans\""));
  for (int i = 1; i <= 5; ++i) {
    EXPECT_THAT(answer.body, HasSubstr(fmt::format("\"spanId\":\"000000000000000{}\"", i)));
  }
  // Generated traces: as many spans as the files hold.
  for (const auto& row : Truth("SELECT lower(hex(trace_id)), count(*) FROM spans GROUP BY 1 "
                               "ORDER BY 1 LIMIT 5")) {
    HttpAnswer trace = Get("/api/v1/traces/" + row[0]);
    ASSERT_EQ(trace.status, 200) << trace.body;
    // Every span has a start time; links and events do not.
    size_t spans = 0;
    for (size_t at = trace.body.find("\"startTimeUnixNano\""); at != std::string::npos;
         at = trace.body.find("\"startTimeUnixNano\"", at + 1)) {
      ++spans;
    }
    EXPECT_EQ(spans, std::stoul(row[1])) << row[0];
  }
}

TEST_F(ApiTest, TraceByIdAbsentIs404AndBadIdIs400) {
  HttpAnswer absent = Get("/api/v1/traces/0123456789abcdef0123456789abcdef");
  EXPECT_EQ(absent.status, 404);
  EXPECT_EQ(absent.body, R"({"error":"trace 0123456789abcdef0123456789abcdef not found"})");
  HttpAnswer bad = Get("/api/v1/traces/xyz");
  EXPECT_EQ(bad.status, 400);
  EXPECT_EQ(bad.body, R"({"error":"trace_id: not 32 hex digits: \"xyz\""})");
}

TEST_F(ApiTest, TraceSearchByServiceMatchesDuckDb) {
  const std::string service = Truth(fmt::format(
      "SELECT service_name FROM spans WHERE service_name <> 'edge' GROUP BY 1 ORDER BY count(*) "
      "DESC LIMIT 1"))[0][0];
  HttpAnswer answer = Get("/api/v1/traces?limit=1000&service=" + service + "&" + Window());
  ASSERT_EQ(answer.status, 200) << answer.body;
  const std::vector<std::string> ids = TraceIds(answer.body);
  EXPECT_EQ(Sorted(ids), TruthTraceIds(fmt::format("service_name = '{}'", service)));
  EXPECT_FALSE(ids.empty());

  // Newest first, and each summary covers the trace's spans in the window.
  static const std::regex kSummary(
      R"re(\{"trace_id":"([0-9a-f]{32})","root_service":"([^"]*)","root_name":"([^"]*)","start_time_unix_nano":"(\d+)","duration_nano":"(-?\d+)","span_count":(\d+),"error_count":(\d+))re");
  int64_t previous = INT64_MAX;
  int checked = 0;
  for (std::sregex_iterator it(answer.body.begin(), answer.body.end(), kSummary), end; it != end;
       ++it) {
    const int64_t start = std::stoll((*it)[4].str());
    EXPECT_LE(start, previous);
    previous = start;
    if (checked++ < 5) {
      const auto truth = Truth(fmt::format(
          "SELECT count(*), min(start_time_unix_nano), count(*) FILTER (WHERE status_code = 2) "
          "FROM spans WHERE trace_id = from_hex('{}') AND {}",
          (*it)[1].str(), WindowSql("start_time_unix_nano")));
      EXPECT_EQ((*it)[6].str(), truth[0][0]);
      EXPECT_EQ((*it)[4].str(), truth[0][1]);
      EXPECT_EQ((*it)[7].str(), truth[0][2]);
    }
  }
  EXPECT_EQ(checked, static_cast<int>(ids.size()));
}

TEST_F(ApiTest, TraceSearchFiltersMatchDuckDb) {
  const std::string operation = Truth(
      "SELECT name FROM spans WHERE service_name <> 'edge' GROUP BY 1 ORDER BY count(*) DESC, 1 "
      "LIMIT 1")[0][0];
  const std::string code = Truth(
      "SELECT http_status_code FROM spans WHERE http_status_code <> 200 GROUP BY 1 "
      "ORDER BY count(*) DESC, 1 LIMIT 1")[0][0];
  struct Case {
    std::string query;
    std::string where;
  };
  const std::vector<Case> cases = {
      {"operation=" + operation, fmt::format("name = '{}'", operation)},
      {"min_duration=50ms", "duration_nano >= 50000000"},
      {"max_duration=1ms", "duration_nano <= 1000000"},
      {"min_duration=1ms&max_duration=2ms",
       "duration_nano >= 1000000 AND duration_nano <= 2000000"},
      {"status=error", "status_code = 2"},
      {"attr.http.response.status_code=" + code, "http_status_code = " + code},
      {"attr.custom.key=abc", "trace_id = from_hex('" + std::string(kEdgeTrace) + "')"},
      {"attr.service.name=edge", "service_name = 'edge'"},
  };
  for (const Case& c : cases) {
    HttpAnswer answer = Get("/api/v1/traces?limit=1000&" + c.query + "&" + Window());
    ASSERT_EQ(answer.status, 200) << c.query << " " << answer.body;
    const std::vector<std::string> truth = TruthTraceIds(c.where);
    EXPECT_FALSE(truth.empty()) << c.query;
    EXPECT_EQ(Sorted(TraceIds(answer.body)), truth) << c.query;
  }
  // The edge trace's summary.
  HttpAnswer edge = Get("/api/v1/traces?service=edge&" + Window());
  ASSERT_EQ(edge.status, 200);
  EXPECT_THAT(edge.body,
              HasSubstr(fmt::format(
                  R"({{"trace_id":"{}","root_service":"edge","root_name":"edge-root",)"
                  R"("start_time_unix_nano":"{}","duration_nano":"900000000","span_count":5,)"
                  R"("error_count":1,"services":["edge"],)"
                  R"("service_spans":[{{"service":"edge","spans":5}}],"root_status_code":2}})",
                  kEdgeTrace, shared_->edge_start)));
  // The default limit is 20.
  HttpAnswer all = Get("/api/v1/traces?" + Window());
  ASSERT_EQ(all.status, 200);
  EXPECT_EQ(TraceIds(all.body).size(), 20u);
}

// The search finds the newest matching traces first, then builds their
// summaries from the batches that can hold their spans: every summary field
// must equal a plain query over all the files.
TEST_F(ApiTest, TraceSearchSummariesMatchDuckDb) {
  struct Case {
    std::string query;
    std::string where;
    int64_t limit;
  };
  const std::vector<Case> cases = {
      {"status=error&limit=7", "status_code = 2", 7},
      {"limit=20", "true", 20},
      {"min_duration=50ms&limit=3", "duration_nano >= 50000000", 3},
  };
  for (const Case& c : cases) {
    HttpAnswer answer = Get("/api/v1/traces?" + c.query + "&" + Window());
    ASSERT_EQ(answer.status, 200) << c.query << " " << answer.body;
    const std::string window = WindowSql("start_time_unix_nano");
    const auto truth = Truth(fmt::format(
        "SELECT lower(hex(trace_id)),"
        " arg_min(service_name, (parent_span_id IS NOT NULL, start_time_unix_nano, span_id)),"
        " arg_min(name, (parent_span_id IS NOT NULL, start_time_unix_nano, span_id)),"
        " min(start_time_unix_nano),"
        " max(start_time_unix_nano + duration_nano) - min(start_time_unix_nano), count(*),"
        " count(*) FILTER (WHERE status_code = 2),"
        " string_agg(DISTINCT '\"' || service_name || '\"', ',' ORDER BY '\"' || service_name "
        "|| '\"'),"
        " (SELECT string_agg('{{\"service\":\"' || s || '\",\"spans\":' || n || '}}', ','"
        " ORDER BY s) FROM (SELECT coalesce(service_name, '') AS s, count(*) AS n FROM spans AS x"
        " WHERE {} AND x.trace_id = spans.trace_id GROUP BY 1)),"
        " arg_min(status_code, (parent_span_id IS NOT NULL, start_time_unix_nano, span_id))"
        " FROM spans WHERE {} AND trace_id IN (SELECT trace_id FROM spans WHERE {} AND ({}))"
        " GROUP BY trace_id ORDER BY 4 DESC, trace_id LIMIT {}",
        window, window, window, c.where, c.limit));
    ASSERT_EQ(truth.size(), static_cast<size_t>(c.limit)) << c.query;
    std::string expected;
    for (const auto& row : truth) {
      expected += fmt::format(R"({}{{"trace_id":"{}","root_service":"{}","root_name":"{}",)"
                              R"("start_time_unix_nano":"{}","duration_nano":"{}","span_count":{},)"
                              R"("error_count":{},"services":[{}],"service_spans":[{}],)"
                              R"("root_status_code":{}}})",
                              expected.empty() ? "" : ",", row[0], row[1], row[2], row[3], row[4],
                              row[5], row[6], row[7], row[8], row[9]);
    }
    EXPECT_EQ(answer.body, R"({"traces":[)" + expected + "]}") << c.query;
  }
}

// Only the edge trace's last batch has a span named edge-db; its summary
// still covers the spans of the two batches written before, so the second
// query must read them too.
TEST_F(ApiTest, TraceSearchSummaryCoversEarlierBatchesOfTheTrace) {
  HttpAnswer answer = Get("/api/v1/traces?operation=edge-db&limit=1&" + Window());
  ASSERT_EQ(answer.status, 200) << answer.body;
  EXPECT_EQ(answer.body,
            fmt::format(R"({{"traces":[{{"trace_id":"{}","root_service":"edge",)"
                        R"("root_name":"edge-root","start_time_unix_nano":"{}",)"
                        R"("duration_nano":"900000000","span_count":5,"error_count":1,)"
                        R"("services":["edge"],"service_spans":[{{"service":"edge","spans":5}}],)"
                        R"("root_status_code":2}}]}})",
                        kEdgeTrace, shared_->edge_start));
}

// A window with no span: no traces, and no second query.
TEST_F(ApiTest, TraceSearchOfAnEmptyWindowIsEmpty) {
  HttpAnswer answer = Get("/api/v1/traces?start=1000&end=2000");
  ASSERT_EQ(answer.status, 200) << answer.body;
  EXPECT_EQ(answer.body, R"({"traces":[]})");
}

TEST_F(ApiTest, LogPagesConcatenateToTheFullOrderedListWhileDataArrives) {
  const auto truth = Truth(fmt::format(
      "SELECT time_unix_nano, severity_number, coalesce(lower(hex(span_id)), '') FROM logs "
      "WHERE {} ORDER BY time_unix_nano DESC",
      WindowSql("time_unix_nano")));
  ASSERT_GT(truth.size(), 300u);
  static const std::regex kEntry(
      R"re(\{"time_unix_nano":"(\d+)","observed_time_unix_nano":"\d+","severity_number":(-?\d+),"severity_text":"(?:[^"\\]|\\.)*","body":\{"stringValue":"(?:[^"\\]|\\.)*"\},"service_name":"[^"]*","trace_id":"[0-9a-f]*","span_id":"([0-9a-f]*)")re");
  static const std::regex kCursor(R"re("next_cursor":"([^"]+)")re");
  std::multiset<std::vector<std::string>> seen;
  std::vector<std::string> times;
  std::string cursor;
  int pages = 0;
  for (;;) {
    HttpAnswer page = Get("/api/v1/logs?limit=97&" + Window() +
                          (cursor.empty() ? std::string() : "&cursor=" + cursor));
    ASSERT_EQ(page.status, 200) << page.body;
    ++pages;
    for (std::sregex_iterator it(page.body.begin(), page.body.end(), kEntry), end; it != end;
         ++it) {
      seen.insert({(*it)[1].str(), (*it)[2].str(), (*it)[3].str()});
      times.push_back((*it)[1].str());
    }
    if (pages == 1) {
      // New logs arrive between pages; newer than the first page, they
      // must not show up in later pages.
      workload::TrafficOptions traffic;
      traffic.seed = 99;
      traffic.start_time_unix_nano = static_cast<uint64_t>(shared_->now);
      workload::TrafficGenerator generator(traffic);
      generator.Traces(50);
      storage::WriteRequest request;
      request.logs = generator.Logs(40);
      request.rows = 40;
      request.bytes = 1 << 16;
      ASSERT_TRUE(shared_->storage->Write(std::move(request)).ok());
    }
    std::smatch match;
    if (!std::regex_search(page.body, match, kCursor)) {
      EXPECT_THAT(page.body, HasSubstr("\"next_cursor\":null"));
      break;
    }
    cursor = match[1].str();
    ASSERT_LT(pages, 100);
  }
  EXPECT_GE(pages, 3);
  std::multiset<std::vector<std::string>> expected(truth.begin(), truth.end());
  EXPECT_EQ(seen.size(), truth.size());
  EXPECT_TRUE(seen == expected);
  for (size_t i = 1; i < times.size(); ++i) {
    EXPECT_GE(std::stoull(times[i - 1]), std::stoull(times[i]));
  }
}

TEST_F(ApiTest, LogFiltersMatchDuckDb) {
  static const std::regex kTime(R"re("time_unix_nano":")re");
  auto count = [](const std::string& body) {
    return static_cast<size_t>(std::distance(std::sregex_iterator(body.begin(), body.end(), kTime),
                                             std::sregex_iterator()));
  };
  const auto sample = Truth(
      "SELECT service_name, lower(hex(trace_id)), lower(substr(body_str, 3, 4)) FROM logs "
      "WHERE trace_id IS NOT NULL AND length(body_str) > 8 AND "
      "regexp_full_match(lower(substr(body_str, 3, 4)), '[a-z0-9]{4}') LIMIT 1");
  ASSERT_EQ(sample.size(), 1u);
  struct Case {
    std::string query;
    std::string where;
  };
  const auto attribute = Truth(
      "SELECT attr_keys[1], attr_str[1] FROM logs WHERE len(attr_keys) > 0 AND attr_str[1] IS "
      "NOT NULL LIMIT 1");
  ASSERT_EQ(attribute.size(), 1u);
  const std::vector<Case> cases = {
      {"attr." + attribute[0][0] + "=" + attribute[0][1],
       fmt::format("attr_str[list_position(attr_keys, '{0}')] = '{1}' OR "
                   "resource_attr_str[list_position(resource_attr_keys, '{0}')] = '{1}'",
                   attribute[0][0], attribute[0][1])},
      {"service=" + sample[0][0], fmt::format("service_name = '{}'", sample[0][0])},
      {"severity_min=warn", "severity_number >= 13"},
      {"severity_min=17", "severity_number >= 17"},
      {"trace_id=" + sample[0][1], fmt::format("trace_id = from_hex('{}')", sample[0][1])},
      {"q=" + sample[0][2], fmt::format("contains(lower(body_str), '{}')", sample[0][2])},
  };
  for (const Case& c : cases) {
    // Written after the paging test's extra logs, so count in the window
    // now (ground truth reads the files as they are now).
    HttpAnswer answer = Get("/api/v1/logs?limit=1000&" + c.query + "&" + Window());
    ASSERT_EQ(answer.status, 200) << c.query << " " << answer.body;
    const std::string truth = Truth(
        fmt::format("SELECT count(*) FROM read_parquet('{}/telemetry/days/*/*.batch/logs.parquet') "
                    "WHERE row_kind = 0 AND {} AND ({})",
                    shared_->data_dir, WindowSql("time_unix_nano"), c.where))[0][0];
    EXPECT_EQ(count(answer.body), std::stoul(truth)) << c.query;
    EXPECT_GT(count(answer.body), 0u) << c.query;
  }
}

// The measures an answer object gives, as text, for comparison with DuckDB.
std::map<std::string, std::string> Measures(simdjson::dom::object o,
                                            const std::vector<std::string>& keys) {
  std::map<std::string, std::string> out;
  for (const std::string& key : keys) {
    simdjson::dom::element v = o[key].value();
    std::string text;
    if (v.is_null()) {
      text = "NULL";
    } else if (v.is_string()) {
      text = std::string(v.get_string().value());
    } else {
      text = std::to_string(v.get_int64().value());
    }
    out[key] = text;
  }
  return out;
}

// DuckDB's exact quantile row[q] as the histogram reports it: its bucket's
// value, kept within the exact minimum row[lo] and maximum row[hi].
std::string AsBucketValue(const std::vector<std::string>& row, size_t q, size_t lo, size_t hi) {
  if (row[q] == "NULL") return row[q];
  return std::to_string(
      std::clamp<int64_t>(rollups::BucketValue(rollups::DurationBucket(std::stoll(row[q]))),
                          std::stoll(row[lo]), std::stoll(row[hi])));
}

TEST_F(ApiTest, ServicesOperationsEndpointsAndRedMatchDuckDbOnWholeMinutes) {
  // Earlier tests may have written more batches: the truth reads them too.
  shared_->CreateTruthViews();
  const uint64_t first = rollups::MinuteOf(static_cast<uint64_t>(shared_->start));
  const uint64_t end =
      rollups::MinuteOf(static_cast<uint64_t>(shared_->end)) + rollups::kMinuteNanos;
  const std::string window = fmt::format("start={}&end={}", first, end);
  auto in_window = [&](std::string_view column) {
    return fmt::format("{} >= {} AND {} < {}", column, first, column, end);
  };
  constexpr char kQuantiles[] =
      "quantile_disc(duration_nano, 0.5) FILTER (WHERE {0}), "
      "quantile_disc(duration_nano, 0.95) FILTER (WHERE {0}), "
      "quantile_disc(duration_nano, 0.99) FILTER (WHERE {0}), "
      "min(duration_nano) FILTER (WHERE {0}), max(duration_nano) FILTER (WHERE {0})";

  // Services: requests, spans, log severities and metric points.
  std::map<std::string, std::map<std::string, std::string>> want;
  for (const auto& row : Truth(
           fmt::format("SELECT coalesce(service_name, ''), count(*) FILTER (WHERE kind IN (2, 5)), "
                       "count(*) FILTER (WHERE kind IN (2, 5) AND status_code = 2), count(*), "
                       "count(*) FILTER (WHERE status_code = 2), {} FROM spans WHERE {} GROUP BY 1",
                       fmt::format(fmt::runtime(kQuantiles), "kind IN (2, 5)"),
                       in_window("start_time_unix_nano")))) {
    want[row[0]] = {{"request_count", row[1]},
                    {"request_errors", row[2]},
                    {"span_count", row[3]},
                    {"span_errors", row[4]},
                    {"p50_nano", AsBucketValue(row, 5, 8, 9)},
                    {"p95_nano", AsBucketValue(row, 6, 8, 9)},
                    {"p99_nano", AsBucketValue(row, 7, 8, 9)}};
  }
  const char* kSeverities[] = {"unset", "trace", "debug", "info", "warn", "error", "fatal"};
  for (const auto& row : Truth(fmt::format(
           "SELECT coalesce(service_name, ''), CASE WHEN severity_number BETWEEN 1 AND 24 THEN "
           "1 + (severity_number - 1) // 4 ELSE 0 END, count(*) FROM logs WHERE {} GROUP BY ALL",
           in_window("CASE WHEN time_unix_nano <> 0 THEN time_unix_nano ELSE "
                     "observed_time_unix_nano END")))) {
    want[row[0]][std::string("logs.") + kSeverities[std::stoi(row[1])]] = row[2];
  }
  for (const auto& row : Truth(fmt::format(
           "SELECT coalesce(service_name, ''), count(*) FROM metrics WHERE {} GROUP BY 1",
           in_window("time_unix_nano")))) {
    want[row[0]]["metric_points"] = row[1];
  }
  HttpAnswer answer = Get("/api/v1/services?" + window);
  ASSERT_EQ(answer.status, 200) << answer.body;
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  ASSERT_EQ(parser.parse(answer.body).get(doc), simdjson::SUCCESS) << answer.body;
  EXPECT_EQ(std::string(doc["start"].get_string().value()), std::to_string(first));
  std::map<std::string, std::map<std::string, std::string>> got;
  simdjson::dom::array services_array = doc["services"].get_array().value();
  for (simdjson::dom::element service : services_array) {
    const std::string name(service["name"].get_string().value());
    std::map<std::string, std::string>& m = got[name];
    m = Measures(service.get_object().value(),
                 {"request_count", "request_errors", "span_count", "span_errors", "p50_nano",
                  "p95_nano", "p99_nano", "metric_points"});
    for (const char* severity : kSeverities) {
      const int64_t n = service["logs"][severity].get_int64().value();
      if (n > 0) m[std::string("logs.") + severity] = std::to_string(n);
    }
    // Services without spans have none to count; the truth has no row.
    for (const char* key : {"request_count", "request_errors", "span_count", "span_errors"}) {
      if (m[key] == "0" && want[name].count(key) == 0) m.erase(key);
    }
    for (const char* key : {"p50_nano", "p95_nano", "p99_nano"}) {
      if (m[key] == "NULL" && want[name].count(key) == 0) m.erase(key);
    }
    if (m["metric_points"] == "0" && want[name].count("metric_points") == 0) {
      m.erase("metric_points");
    }
  }
  ASSERT_GE(want.size(), 3u);
  EXPECT_EQ(got, want);

  // One service's operations and endpoints.
  const std::string service = Truth(
      "SELECT service_name FROM spans WHERE service_name <> 'edge' AND http_method IS NOT NULL "
      "ORDER BY 1 LIMIT 1")[0][0];
  const std::vector<std::string> kSpanMeasures = {"span_count", "error_count", "p50_nano",
                                                  "p95_nano",   "p99_nano",    "avg_nano",
                                                  "min_nano",   "max_nano"};
  auto span_measures = [&](const std::vector<std::string>& row, size_t at) {
    return std::map<std::string, std::string>{
        {"span_count", row[at]},
        {"error_count", row[at + 1]},
        {"avg_nano", row[at + 2]},
        {"min_nano", row[at + 3]},
        {"max_nano", row[at + 4]},
        {"p50_nano", AsBucketValue(row, at + 5, at + 3, at + 4)},
        {"p95_nano", AsBucketValue(row, at + 6, at + 3, at + 4)},
        {"p99_nano", AsBucketValue(row, at + 7, at + 3, at + 4)}};
  };
  const std::string measures_sql = fmt::format(
      "count(*), count(*) FILTER (WHERE status_code = 2), "
      "CAST(sum(duration_nano::HUGEINT) // count(*) AS BIGINT), min(duration_nano), "
      "max(duration_nano), {}",
      fmt::format(fmt::runtime(kQuantiles), "true"));
  constexpr char kKindName[] =
      "CASE kind WHEN 0 THEN 'UNSPECIFIED' WHEN 1 THEN 'INTERNAL' WHEN 2 THEN 'SERVER' WHEN 3 "
      "THEN 'CLIENT' WHEN 4 THEN 'PRODUCER' WHEN 5 THEN 'CONSUMER' ELSE kind::VARCHAR END";
  std::map<std::string, std::map<std::string, std::string>> want_ops, got_ops;
  for (const auto& row :
       Truth(fmt::format("SELECT name || ' ' || {}, {} FROM spans WHERE service_name = '{}' AND "
                         "{} GROUP BY ALL",
                         kKindName, measures_sql, service, in_window("start_time_unix_nano")))) {
    want_ops[row[0]] = span_measures(row, 1);
  }
  HttpAnswer ops = Get("/api/v1/services/" + service + "/operations?" + window);
  ASSERT_EQ(ops.status, 200) << ops.body;
  ASSERT_EQ(parser.parse(ops.body).get(doc), simdjson::SUCCESS) << ops.body;
  simdjson::dom::array operations_array = doc["operations"].get_array().value();
  for (simdjson::dom::element op : operations_array) {
    got_ops[fmt::format("{} {}", std::string_view(op["name"].get_string().value()),
                        std::string_view(op["kind"].get_string().value()))] =
        Measures(op.get_object().value(), kSpanMeasures);
  }
  ASSERT_GE(want_ops.size(), 2u);
  EXPECT_EQ(got_ops, want_ops);

  std::map<std::string, std::map<std::string, std::string>> want_endpoints, got_endpoints;
  for (const auto& row : Truth(fmt::format(
           "WITH e AS (SELECT *, CASE WHEN http_method IS NOT NULL THEN 'http ' || http_method || "
           "' ' || coalesce(http_route, '') WHEN rpc_service IS NOT NULL OR rpc_method IS NOT "
           "NULL THEN 'rpc ' || coalesce(rpc_service, '') || ' ' || coalesce(rpc_method, '') "
           "WHEN messaging_system IS NOT NULL THEN 'messaging ' || messaging_system || ' ' || "
           "coalesce(messaging_destination, '') END AS endpoint FROM spans WHERE "
           "service_name = '{}' AND {}) "
           "SELECT endpoint || ' ' || {}, {} FROM e WHERE endpoint IS NOT NULL GROUP BY ALL",
           service, in_window("start_time_unix_nano"), kKindName, measures_sql))) {
    want_endpoints[row[0]] = span_measures(row, 1);
  }
  HttpAnswer endpoints = Get("/api/v1/services/" + service + "/endpoints?" + window);
  ASSERT_EQ(endpoints.status, 200) << endpoints.body;
  ASSERT_EQ(parser.parse(endpoints.body).get(doc), simdjson::SUCCESS) << endpoints.body;
  simdjson::dom::array endpoints_array = doc["endpoints"].get_array().value();
  for (simdjson::dom::element e : endpoints_array) {
    got_endpoints[fmt::format("{} {} {} {}", std::string_view(e["type"].get_string().value()),
                              std::string_view(e["a"].get_string().value()),
                              std::string_view(e["b"].get_string().value()),
                              std::string_view(e["kind"].get_string().value()))] =
        Measures(e.get_object().value(), kSpanMeasures);
  }
  ASSERT_GE(want_endpoints.size(), 1u);
  EXPECT_EQ(got_endpoints, want_endpoints);

  // The service's request RED in 5-minute steps, empty steps included.
  constexpr uint64_t kStep = 5 * rollups::kMinuteNanos;
  std::map<std::string, std::map<std::string, std::string>> want_red, got_red;
  for (uint64_t t = first; t < end; t += kStep) {
    want_red[std::to_string(t)] = {{"count", "0"}, {"errors", "0"}, {"p99_nano", "NULL"}};
  }
  for (const auto& row : Truth(fmt::format(
           "SELECT {} + (start_time_unix_nano - {}) // {} * {}, count(*), "
           "count(*) FILTER (WHERE status_code = 2), quantile_disc(duration_nano, 0.99), "
           "min(duration_nano), max(duration_nano) FROM spans WHERE service_name = '{}' AND kind "
           "IN (2, 5) AND {} GROUP BY 1",
           first, first, kStep, kStep, service, in_window("start_time_unix_nano")))) {
    want_red[row[0]] = {
        {"count", row[1]}, {"errors", row[2]}, {"p99_nano", AsBucketValue(row, 3, 4, 5)}};
  }
  HttpAnswer red = Get(fmt::format("/api/v1/red?service={}&step=5m&{}", service, window));
  ASSERT_EQ(red.status, 200) << red.body;
  ASSERT_EQ(parser.parse(red.body).get(doc), simdjson::SUCCESS) << red.body;
  simdjson::dom::array points_array = doc["points"].get_array().value();
  for (simdjson::dom::element p : points_array) {
    got_red[std::string(p["time"].get_string().value())] =
        Measures(p.get_object().value(), {"count", "errors", "p99_nano"});
  }
  EXPECT_EQ(got_red, want_red);

  // Bad requests name their parameter.
  EXPECT_EQ(Get("/api/v1/services/x/y").status, 404);
  EXPECT_THAT(Get("/api/v1/red?step=90s&" + window).body, HasSubstr("step: not a whole number"));
  EXPECT_THAT(Get("/api/v1/red?operation=x&" + window).body, HasSubstr("operation: needs service"));
  EXPECT_THAT(Get("/api/v1/red?service=a&kind=SERVR&" + window).body, HasSubstr("kind: not a"));
  EXPECT_THAT(Get("/api/v1/services?error_rate_degraded=2&" + window).body,
              HasSubstr("error_rate_degraded: not a fraction"));
}

TEST_F(ApiTest, ServiceMapMatchesADuckDbSelfJoin) {
  shared_->CreateTruthViews();
  const uint64_t first = rollups::MinuteOf(static_cast<uint64_t>(shared_->start));
  const uint64_t end =
      rollups::MinuteOf(static_cast<uint64_t>(shared_->end)) + rollups::kMinuteNanos;
  const std::string truth_sql = ServiceMapReferenceSql(first, end);
  std::map<std::string, std::map<std::string, std::string>> want;
  auto bucket_value = [](const std::string& exact) {
    return std::to_string(rollups::BucketValue(rollups::DurationBucket(std::stoll(exact))));
  };
  for (const auto& row : Truth(truth_sql)) {
    want[row[0]] = {{"calls", row[1]},
                    {"errors", row[2]},
                    {"p50_nano", bucket_value(row[3])},
                    {"p99_nano", bucket_value(row[4])}};
  }
  // Calls between services, and to the database.
  int service_edges = 0, database_edges = 0;
  for (const auto& [edge, measures] : want) {
    service_edges += edge.ends_with(" call") && edge.find("-> service:") != std::string::npos;
    database_edges += edge.ends_with(" database");
  }
  EXPECT_GT(service_edges, 3);
  EXPECT_GT(database_edges, 0);
  // Messages through the queue, and the traffic's late parents: CLIENT
  // spans of another service stored in a later batch than their child.
  int messaging_edges = 0;
  for (const auto& [edge, measures] : want) messaging_edges += edge.ends_with(" messaging");
  EXPECT_GT(messaging_edges, 1);
  const std::string late_parents = Truth(fmt::format(
      "WITH s AS (SELECT filename, trace_id, span_id, parent_span_id, kind, service_name FROM "
      "read_parquet('{}/telemetry/days/*/*.batch/spans.parquet', filename = true) WHERE "
      "row_kind = 0) SELECT count(*) FROM s c JOIN s p ON p.trace_id = c.trace_id AND "
      "p.span_id = c.parent_span_id WHERE p.filename > c.filename AND p.kind = 3 AND "
      "p.service_name <> c.service_name",
      shared_->data_dir))[0][0];
  EXPECT_GT(std::stoi(late_parents), 5);

  HttpAnswer answer = Get(fmt::format("/api/v1/service-map?start={}&end={}", first, end));
  ASSERT_EQ(answer.status, 200) << answer.body;
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  ASSERT_EQ(parser.parse(answer.body).get(doc), simdjson::SUCCESS) << answer.body;
  EXPECT_TRUE(doc["complete"].get_bool().value()) << answer.body;
  std::vector<std::string> nodes;
  simdjson::dom::array nodes_array = doc["nodes"].get_array().value();
  for (simdjson::dom::element node : nodes_array) {
    const std::string type(node["type"].get_string().value());
    const std::string name(node["name"].get_string().value());
    nodes.push_back(type == "service"
                        ? "service:" + std::string(node["namespace"].get_string().value()) + "/" +
                              name
                        : type + ":" + name);
  }
  std::map<std::string, std::map<std::string, std::string>> got;
  simdjson::dom::array edges_array = doc["edges"].get_array().value();
  for (simdjson::dom::element edge : edges_array) {
    const std::string key = nodes.at(edge["source"].get_uint64().value()) + " -> " +
                            nodes.at(edge["target"].get_uint64().value()) + " " +
                            std::string(edge["type"].get_string().value());
    got[key] = Measures(edge.get_object().value(), {"calls", "errors", "p50_nano", "p99_nano"});
  }
  EXPECT_EQ(got, want);
  EXPECT_FALSE(doc["truncated"].get_bool().value());

  // With limit=2, the two most called edges.
  std::vector<int64_t> calls;
  for (const auto& [edge, measures] : want) calls.push_back(std::stoll(measures.at("calls")));
  std::sort(calls.rbegin(), calls.rend());
  answer = Get(fmt::format("/api/v1/service-map?limit=2&start={}&end={}", first, end));
  ASSERT_EQ(answer.status, 200) << answer.body;
  ASSERT_EQ(parser.parse(answer.body).get(doc), simdjson::SUCCESS) << answer.body;
  EXPECT_TRUE(doc["truncated"].get_bool().value());
  std::vector<int64_t> kept;
  simdjson::dom::array limited = doc["edges"].get_array().value();
  for (simdjson::dom::element edge : limited) kept.push_back(edge["calls"].get_int64().value());
  std::sort(kept.rbegin(), kept.rend());
  EXPECT_EQ(kept, std::vector<int64_t>(calls.begin(), calls.begin() + 2));
}

// UTC everywhere: the service-health answers are the same bytes with the
// process's time zone at a non-whole-hour offset (+05:45), for windows
// given in RFC 3339 with an offset and in nanoseconds.
TEST_F(ApiTest, ServiceHealthAnswersIgnoreTheTimeZone) {
  const uint64_t first = rollups::MinuteOf(static_cast<uint64_t>(shared_->start));
  const uint64_t end =
      rollups::MinuteOf(static_cast<uint64_t>(shared_->end)) + rollups::kMinuteNanos;
  // The window's start as local time at +05:45, written out by hand.
  const uint64_t shifted = first / 1'000'000'000 + 5 * 3600 + 45 * 60;
  const std::string start_rfc =
      fmt::format("{:%Y-%m-%dT%H:%M:%S}%2B05:45", fmt::gmtime(static_cast<std::time_t>(shifted)));
  const std::vector<std::string> targets = {
      fmt::format("/api/v1/services?start={}&end={}", start_rfc, end),
      fmt::format("/api/v1/services/frontend/operations?start={}&end={}", first, end),
      fmt::format("/api/v1/red?step=1m&start={}&end={}", start_rfc, end),
      fmt::format("/api/v1/service-map?start={}&end={}", start_rfc, end)};
  std::vector<std::string> utc;
  for (const std::string& t : targets) {
    HttpAnswer a = Get(t);
    ASSERT_EQ(a.status, 200) << t << ": " << a.body;
    EXPECT_THAT(a.body, HasSubstr(fmt::format("\"start\":\"{}\"", first))) << t;
    utc.push_back(a.body);
  }
  const char* old = std::getenv("TZ");
  const std::string saved = old != nullptr ? old : "";
  setenv("TZ", "Asia/Kathmandu", 1);
  tzset();
  for (size_t i = 0; i < targets.size(); ++i) EXPECT_EQ(Get(targets[i]).body, utc[i]) << targets[i];
  if (old != nullptr) {
    setenv("TZ", saved.c_str(), 1);
  } else {
    unsetenv("TZ");
  }
  tzset();
}

TEST_F(ApiTest, MetricNamesAndSumsMatchDuckDb) {
  std::vector<std::string> names;
  for (const auto& row :
       Truth(fmt::format("SELECT DISTINCT metric_name FROM metrics WHERE {} ORDER BY 1",
                         WindowSql("time_unix_nano")))) {
    names.push_back(row[0]);
  }
  HttpAnswer answer = Get("/api/v1/metrics/names?" + Window());
  ASSERT_EQ(answer.status, 200) << answer.body;
  std::vector<std::string> got;
  static const std::regex kName(R"re(\{"name":"([^"]*)")re");
  for (std::sregex_iterator it(answer.body.begin(), answer.body.end(), kName), end; it != end;
       ++it) {
    got.push_back((*it)[1].str());
  }
  EXPECT_EQ(got, names);

  const std::string metric = Truth(
      "SELECT metric_name FROM metrics WHERE metric_type IN (5, 7) AND service_name <> 'meter' "
      "GROUP BY 1 ORDER BY count(DISTINCT (service_name, attr_keys, attr_str, attr_int)) DESC, "
      "1 LIMIT 1")[0][0];
  const auto truth = Truth(fmt::format(
      "SELECT sum(coalesce(value_double, value_int)), min(coalesce(value_double, value_int)), "
      "max(coalesce(value_double, value_int)), count(DISTINCT (service_name, attr_keys, "
      "attr_types, "
      "attr_str, attr_int, attr_double, attr_bool)) FROM metrics WHERE metric_name = '{}' AND {}",
      metric, WindowSql("time_unix_nano")));
  static const std::regex kPoint(R"re(\["(\d+)",(-?[0-9.eE+-]+)\])re");
  static const std::regex kSeries(R"re("labels":)re");
  auto values = [&](const std::string& agg) {
    HttpAnswer series =
        Get(fmt::format("/api/v1/metrics/query?name={}&agg={}&step=1h&{}", metric, agg, Window()));
    EXPECT_EQ(series.status, 200) << series.body;
    std::vector<double> out;
    for (std::sregex_iterator it(series.body.begin(), series.body.end(), kPoint), end; it != end;
         ++it) {
      out.push_back(std::stod((*it)[2].str()));
    }
    const auto count =
        std::distance(std::sregex_iterator(series.body.begin(), series.body.end(), kSeries),
                      std::sregex_iterator());
    EXPECT_EQ(std::to_string(count), truth[0][3]) << agg;
    return out;
  };
  double sum = 0;
  for (double v : values("sum")) sum += v;
  EXPECT_NEAR(sum, std::stod(truth[0][0]), 1e-6 * std::abs(std::stod(truth[0][0])) + 1e-9);
  const std::vector<double> mins = values("min");
  ASSERT_FALSE(mins.empty());
  EXPECT_DOUBLE_EQ(*std::min_element(mins.begin(), mins.end()), std::stod(truth[0][1]));
  const std::vector<double> maxes = values("max");
  ASSERT_FALSE(maxes.empty());
  EXPECT_DOUBLE_EQ(*std::max_element(maxes.begin(), maxes.end()), std::stod(truth[0][2]));
  for (double avg : values("avg")) {
    EXPECT_GE(avg, std::stod(truth[0][1]));
    EXPECT_LE(avg, std::stod(truth[0][2]));
  }
}

TEST_F(ApiTest, MetricRatesAndQuantiles) {
  const int64_t t0 = shared_->metric_t0;
  const std::string window = fmt::format("start={}&end={}&step=1m", t0, t0 + 120 * kSecond);
  HttpAnswer rate = Get("/api/v1/metrics/query?name=test.requests&agg=rate&" + window);
  ASSERT_EQ(rate.status, 200) << rate.body;
  EXPECT_THAT(rate.body,
              HasSubstr(fmt::format(R"("labels":[{{"key":"service.name","value":"meter"}}],)"
                                    R"("points":[["{}",0.5],["{}",1]])",
                                    t0, t0 + 60 * kSecond)));
  struct Quantile {
    std::string agg;
    std::string value;
  };
  for (const Quantile& q : std::vector<Quantile>{
           {"p50", "30"}, {"p90", "50"}, {"p99", "50"}, {"avg", "30"}, {"sum", "3000"}}) {
    HttpAnswer answer =
        Get(fmt::format("/api/v1/metrics/query?name=test.latency&agg={}&{}", q.agg, window));
    ASSERT_EQ(answer.status, 200) << answer.body;
    EXPECT_THAT(answer.body, HasSubstr(fmt::format(R"("points":[["{}",{}]])", t0, q.value)))
        << q.agg;
  }
  HttpAnswer sum = Get("/api/v1/metrics/query?name=test.requests&agg=sum&" + window);
  EXPECT_THAT(sum.body,
              HasSubstr(fmt::format(R"("points":[["{}",230],["{}",190]])", t0, t0 + 60 * kSecond)));
}

TEST_F(ApiTest, SqlAnswersAsJsonAndRefusesWrites) {
  const std::string spans = Truth("SELECT count(*) FROM spans")[0][0];
  HttpAnswer text = PostSql("SELECT count(*) AS n FROM spans", "text/plain");
  ASSERT_EQ(text.status, 200) << text.body;
  EXPECT_EQ(text.body, fmt::format(R"({{"columns":[{{"name":"n","type":"BIGINT"}}],)"
                                   R"("rows":[[{}]],"truncated":false}})",
                                   spans));
  HttpAnswer json = PostSql(R"({"sql": "SELECT 'a\"b' AS s, NULL AS z, true AS t, 1.5 AS d"})",
                            "application/json; charset=utf-8");
  ASSERT_EQ(json.status, 200) << json.body;
  EXPECT_THAT(json.body, HasSubstr(R"("rows":[["a\"b",null,true,1.5]])"));
  HttpAnswer limited = PostSql("SELECT * FROM range(10)", "text/plain", "?limit=3");
  ASSERT_EQ(limited.status, 200) << limited.body;
  EXPECT_THAT(limited.body, HasSubstr(R"("rows":[[0],[1],[2]],"truncated":true)"));

  HttpAnswer insert = PostSql("INSERT INTO spans SELECT * FROM spans", "text/plain");
  EXPECT_EQ(insert.status, 400) << insert.body;
  HttpAnswer create = PostSql("CREATE TABLE t AS SELECT 1", "text/plain");
  EXPECT_EQ(create.status, 400) << create.body;
  HttpAnswer bad_json = PostSql(R"({"query": "SELECT 1"})", "application/json");
  EXPECT_EQ(bad_json.status, 400);
  EXPECT_THAT(bad_json.body, HasSubstr("body: unknown member"));
  HttpAnswer over = PostSql("SELECT 1", "text/plain", "?limit=10001");
  EXPECT_EQ(over.status, 400);
  EXPECT_THAT(over.body, HasSubstr("limit: not an integer in 1..10000"));
}

// The rollups view and its quantile macro through /api/v1/sql: each
// service's requests per minute and their p99, against DuckDB over the
// raw spans.
TEST_F(ApiTest, RollupsViewAndQuantileMacroMatchTheRawSpans) {
  shared_->CreateTruthViews();
  const uint64_t first = rollups::MinuteOf(static_cast<uint64_t>(shared_->start));
  const uint64_t end =
      rollups::MinuteOf(static_cast<uint64_t>(shared_->end)) + rollups::kMinuteNanos;
  std::string want;
  for (const auto& row : Truth(fmt::format(
           "SELECT coalesce(service_name, ''), start_time_unix_nano // 60000000000 * "
           "60000000000, count(*), quantile_disc(duration_nano, 0.99) FROM spans WHERE kind IN "
           "(2, 5) AND start_time_unix_nano >= {} AND start_time_unix_nano < {} GROUP BY ALL "
           "ORDER BY ALL",
           first, end))) {
    want += fmt::format("{}[\"{}\",{},{},{}]", want.empty() ? "" : ",", row[0], row[1], row[2],
                        rollups::BucketValue(rollups::DurationBucket(std::stoll(row[3]))));
  }
  ASSERT_FALSE(want.empty());
  HttpAnswer answer = PostSql(
      fmt::format("SELECT service_name, minute, sum(count)::BIGINT, "
                  "rollup_quantile(flatten(list(hist_index)), flatten(list(hist_count)), 0.99) "
                  "FROM rollups WHERE rollup_name = 'operation' AND span_kind_name IN ('SERVER', "
                  "'CONSUMER') AND minute >= {} AND minute < {} GROUP BY ALL ORDER BY ALL",
                  first, end),
      "text/plain");
  ASSERT_EQ(answer.status, 200) << answer.body;
  EXPECT_THAT(answer.body, HasSubstr("\"rows\":[" + want + "]"));
  // HTTP endpoint rows, most of which the files store as pointers to an
  // equal operation row: the view gives them their measures back.
  std::string want_endpoints;
  for (const auto& row : Truth(fmt::format(
           "SELECT coalesce(service_name, ''), kind, http_method, coalesce(http_route, ''), "
           "count(*), count(*) FILTER (WHERE status_code = 2), sum(duration_nano), "
           "min(duration_nano), max(duration_nano), quantile_disc(duration_nano, 0.5) FROM spans "
           "WHERE http_method IS NOT NULL AND start_time_unix_nano >= {} AND "
           "start_time_unix_nano < {} GROUP BY ALL ORDER BY ALL",
           first, end))) {
    want_endpoints += fmt::format(
        "{}[\"{}\",{},\"{}\",\"{}\",{},{},{},{},{},{}]", want_endpoints.empty() ? "" : ",", row[0],
        row[1], row[2], row[3], row[4], row[5], row[6], row[7], row[8],
        rollups::BucketValue(rollups::DurationBucket(std::stoll(row[9]))));
  }
  ASSERT_FALSE(want_endpoints.empty());
  HttpAnswer endpoints = PostSql(
      fmt::format("SELECT service_name, span_kind, endpoint_a, endpoint_b, sum(count)::BIGINT, "
                  "sum(errors)::BIGINT, sum(duration_sum)::BIGINT, min(duration_min), "
                  "max(duration_max), rollup_quantile(flatten(list(hist_index)), "
                  "flatten(list(hist_count)), 0.5) FROM rollups WHERE rollup_name = 'endpoint' "
                  "AND endpoint_type_name = 'http' AND minute >= {} AND minute < {} GROUP BY ALL "
                  "ORDER BY ALL",
                  first, end),
      "text/plain");
  ASSERT_EQ(endpoints.status, 200) << endpoints.body;
  EXPECT_THAT(endpoints.body, HasSubstr("\"rows\":[" + want_endpoints + "]"));
  // The macro's edges: no counts, one bucket, q past 1.
  HttpAnswer edges = PostSql(
      "SELECT rollup_quantile([], [], 0.5), rollup_quantile([300], [4], 2.0), "
      "rollup_bucket_value(127), rollup_bucket_value(300)",
      "text/plain");
  ASSERT_EQ(edges.status, 200) << edges.body;
  EXPECT_THAT(edges.body,
              HasSubstr(fmt::format("\"rows\":[[null,{0},127,{0}]]", rollups::BucketValue(300))));
  // Every bucket's value as rollups::BucketValue gives it.
  std::string values;
  for (uint32_t i = 0; i < rollups::kDurationBuckets; ++i) {
    values += fmt::format("{}{}", i == 0 ? "" : ",", rollups::BucketValue(i));
  }
  HttpAnswer all =
      PostSql(fmt::format("SELECT string_agg(rollup_bucket_value(i)::VARCHAR, ',' ORDER BY i) FROM "
                          "range({}) t(i)",
                          rollups::kDurationBuckets),
              "text/plain");
  ASSERT_EQ(all.status, 200) << all.body;
  EXPECT_THAT(all.body, HasSubstr("[[\"" + values + "\"]]"));
}

TEST_F(ApiTest, TokensAreRequired) {
  HttpAnswer missing = Get("/api/v1/services", "");
  EXPECT_EQ(missing.status, 401);
  EXPECT_THAT(missing.Header("www-authenticate"), HasSubstr("Bearer"));
  EXPECT_THAT(missing.body, HasSubstr("send a token (Authorization: Bearer <token>)"));
  HttpAnswer unknown = Get("/api/v1/services", "nope");
  EXPECT_EQ(unknown.status, 401);
  EXPECT_THAT(unknown.Header("www-authenticate"), HasSubstr("Bearer"));
  HttpAnswer ingest = Get("/api/v1/traces/" + std::string(kEdgeTrace), kIngestToken);
  EXPECT_EQ(ingest.status, 403);
  EXPECT_EQ(
      ingest.body,
      R"({"error":"a token of scope ingest may not do this; it needs a read or admin token"})");
}

TEST_F(ApiTest, BadParametersAre400NamingTheParameter) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"/api/v1/traces?min_duration=fast", "min_duration: not a duration"},
      {"/api/v1/traces?start=yesterday",
       R"(start: not RFC 3339 or unix nanoseconds: \"yesterday\")"},
      {"/api/v1/traces?limit=1001", "limit: not an integer in 1..1000"},
      {"/api/v1/traces?status=failed", "status: not one of unset, ok, error"},
      {"/api/v1/traces?servce=x", "servce: unknown parameter"},
      {"/api/v1/traces?start=20&end=10", "start: must be before end"},
      {"/api/v1/logs?severity_min=loud", "severity_min: not a severity"},
      {"/api/v1/logs?trace_id=00000000000000000000000000000000", "trace_id: the all-zero"},
      {"/api/v1/logs?cursor=abc", "cursor: not a cursor from a previous page"},
      {"/api/v1/metrics/query?agg=sum", "name: required"},
      {"/api/v1/metrics/query?name=x&agg=median", "agg: not one of sum"},
      {"/api/v1/metrics/query?name=x&step=1ns", "step: the window would have more than"},
      {"/api/v1/services?limit=0", "limit: not an integer in 1..10000"},
      {"/api/v1/traces?q=%zz", "query: bad percent escape"},
  };
  for (const auto& [target, message] : cases) {
    HttpAnswer answer = Get(target);
    EXPECT_EQ(answer.status, 400) << target << " " << answer.body;
    EXPECT_THAT(answer.body, HasSubstr(message)) << target;
    EXPECT_EQ(answer.Header("content-type"), "application/json");
  }
}

// Another Api over the same pool: no storage yet, and a worker queue that
// holds nothing.
TEST(ApiCapacityTest, RecoveringAndFullQueueAre503) {
  for (const bool recovering : {true, false}) {
    ApiOptions options;
    options.storage = [] { return nullptr; };
    options.authenticate = AcceptOnlyToken("t");
    options.worker_threads = 1;
    options.queue_capacity = recovering ? 4 : 0;
    Api api(std::move(options));
    auto started = test_support::ServeOnLoopback(api);
    ASSERT_TRUE(started.ok()) << started.status();
    HttpAnswer answer =
        Curl({"-H", "Authorization: Bearer t",
              fmt::format("http://127.0.0.1:{}/api/v1/services", (*started)->port())});
    EXPECT_EQ(answer.status, 503);
    EXPECT_EQ(answer.Header("retry-after"), "1");
    EXPECT_EQ(answer.body, recovering
                               ? R"({"error":"recovering"})"
                               : R"({"error":"too many API requests in progress; retry later"})");
    (*started)->Shutdown(std::chrono::seconds(5));
  }
}

TEST_F(ApiTest, QueryPastItsDeadlineIs504) {
  ApiOptions options;
  options.storage = [] { return shared_->storage.get(); };
  options.pool = shared_->pool.get();
  options.fs = &shared_->fs;
  options.data_dir = shared_->data_dir;
  options.authenticate = AcceptOnlyToken("t");
  // Long enough for the `SELECT 1` below on a loaded machine under ASan
  // (200 ms was not, once), short for a query that never ends.
  options.query_deadline = std::chrono::milliseconds(1000);
  Api api(std::move(options));
  auto started = test_support::ServeOnLoopback(api);
  ASSERT_TRUE(started.ok()) << started.status();
  const auto began = std::chrono::steady_clock::now();
  HttpAnswer answer = Curl({"-X", "POST", "-H", "Authorization: Bearer t", "--data-binary",
                            "SELECT sum(hash(i)) FROM range(1000000000000) t(i)",
                            fmt::format("http://127.0.0.1:{}/api/v1/sql", (*started)->port())});
  EXPECT_EQ(answer.status, 504) << answer.body;
  EXPECT_LT(std::chrono::steady_clock::now() - began, std::chrono::seconds(20));
  // The pool is still usable.
  HttpAnswer after =
      Curl({"-X", "POST", "-H", "Authorization: Bearer t", "--data-binary", "SELECT 1 AS one",
            fmt::format("http://127.0.0.1:{}/api/v1/sql", (*started)->port())});
  EXPECT_EQ(after.status, 200) << after.body;
  (*started)->Shutdown(std::chrono::seconds(5));
}

TEST_F(ApiTest, EveryQueryConnectionBusyPastTheQueueTimeoutIs429) {
  // A pool of one connection that the test holds: the API's query waits the
  // queue timeout for it and gives up, whatever the machine's speed.
  auto opened_pool = query::QueryPool::Open({.data_dir = shared_->data_dir,
                                             .max_concurrent = 1,
                                             .threads = 1,
                                             .queue_timeout = std::chrono::milliseconds(50)});
  ASSERT_TRUE(opened_pool.ok()) << opened_pool.status();
  std::unique_ptr<query::QueryPool> pool = *std::move(opened_pool);
  ApiOptions options;
  options.storage = [] { return shared_->storage.get(); };
  options.pool = pool.get();
  options.fs = &shared_->fs;
  options.data_dir = shared_->data_dir;
  options.authenticate = AcceptOnlyToken("t");
  Api api(std::move(options));
  auto started = test_support::ServeOnLoopback(api);
  ASSERT_TRUE(started.ok()) << started.status();
  const std::string url = fmt::format("http://127.0.0.1:{}/api/v1/sql", (*started)->port());
  const std::vector<std::string> sql = {
      "-X", "POST", "-H", "Authorization: Bearer t", "--data-binary", "SELECT 42 AS answer", url};

  ASSERT_TRUE(pool->TEST_HoldConnection());
  HttpAnswer busy = Curl(sql);
  EXPECT_EQ(busy.status, 429) << busy.body;
  EXPECT_EQ(busy.Header("retry-after"), "1");
  EXPECT_EQ(busy.body,
            R"({"error":"query pool: all 1 query connections stayed busy for 50 ms (queue )"
            R"(timeout); retry later"})");
  // A search endpoint runs on the same pool and is refused the same way.
  HttpAnswer search =
      Curl({"-H", "Authorization: Bearer t",
            fmt::format("http://127.0.0.1:{}/api/v1/logs?{}", (*started)->port(), Window())});
  EXPECT_EQ(search.status, 429) << search.body;
  EXPECT_EQ(search.Header("retry-after"), "1");

  pool->TEST_ReleaseHeldConnection();
  HttpAnswer answered = Curl(sql);
  EXPECT_EQ(answered.status, 200) << answered.body;
  EXPECT_THAT(answered.body, HasSubstr("42"));
  EXPECT_EQ(answered.Header("retry-after"), "");
  (*started)->Shutdown(std::chrono::seconds(5));
}

// Jaeger's search over the generated traffic (messaging links, late
// parents, many batches) finds what GET /api/v1/traces finds with the same
// filters, in the same order, and each trace comes back whole: its spans,
// CHILD_OF and FOLLOWS_FROM references counted against DuckDB.
TEST_F(ApiTest, JaegerSearchAndTracesMatchTheTraceSearchAndDuckDb) {
  const std::string service = Truth(
      "SELECT service_name FROM spans WHERE service_name <> 'edge' GROUP BY 1 ORDER BY count(*) "
      "DESC LIMIT 1")[0][0];
  // Whole microseconds, the Jaeger API's unit.
  const int64_t start_us = shared_->start / 1000 + 1;
  const int64_t end_us = shared_->end / 1000;
  struct Case {
    std::string jaeger;  // parameters of /jaeger/api/traces
    std::string v1;      // the same filters for /api/v1/traces
  };
  const std::vector<Case> cases = {
      {"service=" + service, "service=" + service},
      {"service=" + service + "&tags=%7B%22error%22%3A%22true%22%7D",
       "service=" + service + "&status=error"},
      {"minDuration=20ms&maxDuration=2s", "min_duration=20ms&max_duration=2s"},
      {"service=" + service + "&spanKind=server", ""},
  };
  simdjson::dom::parser parser;
  size_t traces_checked = 0;
  for (const Case& c : cases) {
    HttpAnswer jaeger = Get(
        fmt::format("/jaeger/api/traces?{}&start={}&end={}&limit=50", c.jaeger, start_us, end_us));
    ASSERT_EQ(jaeger.status, 200) << c.jaeger << " " << jaeger.body;
    simdjson::dom::element doc;
    ASSERT_FALSE(parser.parse(jaeger.body).get(doc)) << jaeger.body.substr(0, 200);
    std::vector<std::string> ids;
    for (simdjson::dom::element trace : simdjson::dom::array(doc["data"].get_array().value())) {
      std::string id(std::string_view(trace["traceID"].get_string().value()));
      id.insert(0, 32 - id.size(), '0');
      ids.push_back(id);
      int64_t spans = 0, children = 0, follows = 0;
      for (simdjson::dom::element span : simdjson::dom::array(trace["spans"].get_array().value())) {
        ++spans;
        for (simdjson::dom::element ref :
             simdjson::dom::array(span["references"].get_array().value())) {
          (std::string_view(ref["refType"].get_string().value()) == "CHILD_OF" ? children
                                                                               : follows)++;
        }
      }
      const auto truth = Truth(fmt::format(
          "SELECT count(*), count(parent_span_id), coalesce(sum(len(link_trace_id)), 0) "
          "FROM spans WHERE trace_id = unhex('{}')",
          id));
      EXPECT_EQ(std::to_string(spans), truth[0][0]) << id;
      EXPECT_EQ(std::to_string(children), truth[0][1]) << id;
      EXPECT_EQ(std::to_string(follows), truth[0][2]) << id;
      ++traces_checked;
    }
    EXPECT_FALSE(ids.empty()) << c.jaeger;
    if (c.v1.empty()) {
      // No v1 filter for the kind: DuckDB says which traces have a
      // SERVER span of the service in the window.
      const std::vector<std::string> truth = TruthTraceIds(
          fmt::format("service_name = '{}' AND kind = 2 AND start_time_unix_nano >= {}", service,
                      start_us * 1000));
      for (const std::string& id : ids) {
        EXPECT_TRUE(std::binary_search(truth.begin(), truth.end(), id)) << id;
      }
      EXPECT_EQ(ids.size(), std::min<size_t>(50, truth.size()));
      continue;
    }
    HttpAnswer v1 = Get(fmt::format("/api/v1/traces?{}&start={}&end={}&limit=50", c.v1,
                                    start_us * 1000, end_us * 1000));
    ASSERT_EQ(v1.status, 200) << c.v1 << " " << v1.body;
    EXPECT_EQ(ids, TraceIds(v1.body)) << c.jaeger;
  }
  EXPECT_GE(traces_checked, 100u);
}

TEST(ApiStatusTest, StatusesMapToHttp) {
  EXPECT_EQ(HttpStatusForApi(absl::InvalidArgumentError("")), 400);
  EXPECT_EQ(HttpStatusForApi(absl::UnauthenticatedError("")), 401);
  EXPECT_EQ(HttpStatusForApi(absl::PermissionDeniedError("")), 403);
  EXPECT_EQ(HttpStatusForApi(absl::NotFoundError("")), 404);
  EXPECT_EQ(HttpStatusForApi(absl::ResourceExhaustedError("")), 429);
  EXPECT_EQ(HttpStatusForApi(absl::UnavailableError("")), 503);
  EXPECT_EQ(HttpStatusForApi(absl::DeadlineExceededError("")), 504);
  EXPECT_EQ(HttpStatusForApi(absl::InternalError("")), 500);
  EXPECT_EQ(HttpStatusForApi(absl::DataLossError("")), 500);
}

}  // namespace
}  // namespace strata::api
