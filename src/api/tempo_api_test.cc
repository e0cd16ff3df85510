// The Tempo API end to end: generated traffic written through the real
// storage engine, the Api's routes behind a real HttpServer, the requests
// Grafana's Tempo data source sends through curl, and TraceQL answers
// compared with ground truth from hand-written DuckDB queries over all the
// Parquet files.

#include <set>
#include <string>
#include <vector>

#include "api/api_test_server.h"
#include "api/tempo_answers.h"
#include "fmt/format.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "io/posix_file_system.h"
#include "otlp/decode.h"
#include "otlp/encode.h"
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
// A trace whose id has leading zeros, as Tempo prints it trimmed.
constexpr char kZeroTrace[] = "000000000000000000000000abcdef12";

class TempoApiTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { shared_ = new Shared(); }
  static void TearDownTestSuite() {
    delete shared_;
    shared_ = nullptr;
  }

  struct Shared {
    Shared() {
      now = api::SystemNowUnixNano();
      data_dir = tmp.path() + "/data";
      auto opened = storage::Storage::Open(fs, data_dir);
      EXPECT_TRUE(opened.ok()) << opened.status();
      storage = *std::move(opened);
      workload::TrafficOptions traffic;
      traffic.seed = 23;
      traffic.start_time_unix_nano = static_cast<uint64_t>(now - 20 * 60 * kSecond);
      traffic.messaging_percent = 20;
      traffic.trace_spacing_nanos = 2 * kSecond;
      workload::TrafficGenerator generator(traffic);
      for (int i = 0; i < 4; ++i) {
        storage::WriteRequest request;
        request.traces = generator.Traces(400);
        request.rows = 400;
        request.bytes = 1 << 20;
        EXPECT_TRUE(storage->Write(std::move(request)).ok());
      }
      const std::string zero = fmt::format(
          R"({{"resourceSpans":[{{"resource":{{"attributes":[{{"key":"service.name","value":)"
          R"({{"stringValue":"zero-svc"}}}}]}},"scopeSpans":[{{"scope":{{"name":"t"}},"spans":[)"
          R"({{"traceId":"{}","spanId":"0000000000000001","name":"zero-root","kind":2,)"
          R"("startTimeUnixNano":"{}","endTimeUnixNano":"{}",)"
          R"("attributes":[{{"key":"tenant","value":{{"intValue":"7"}}}}]}}]}}]}}]}})",
          kZeroTrace, now - 60 * kSecond, now - 59 * kSecond);
      auto batch = std::make_unique<otlp::TraceBatch>();
      EXPECT_TRUE(otlp::DecodeTracesJson(zero, batch.get()).ok());
      storage::WriteRequest request;
      request.traces = std::move(batch);
      request.rows = 1;
      request.bytes = 4096;
      EXPECT_TRUE(storage->Write(std::move(request)).ok());
      served = test_support::StartLoopbackApi(storage.get(), &fs, data_dir, kToken);
      auto engine = query::DuckDbEngine::Open({});
      EXPECT_TRUE(engine.ok()) << engine.status();
      truth = *std::move(engine);
      test_support::CreateTruthViews(*truth, data_dir);
    }
    int64_t now = 0;
    storage::testing::ScopedTempDir tmp{"tempo_api"};
    PosixFileSystem fs;
    std::string data_dir;
    std::unique_ptr<storage::Storage> storage;
    test_support::LoopbackApi served;
    std::unique_ptr<query::DuckDbEngine> truth;
  };

  static std::string Base() {
    return fmt::format("http://{}/tempo", shared_->served.http_server->address());
  }

  // GET with the token, as Grafana sends it (a custom Authorization
  // header), and `extra` headers ("Name: value").
  static HttpAnswer Get(const std::string& path_and_query,
                        const std::vector<std::string>& extra = {}) {
    std::vector<std::string> headers = {std::string("Authorization: Bearer ") + kToken};
    headers.insert(headers.end(), extra.begin(), extra.end());
    return server::testing::Fetch("GET", Base() + path_and_query, headers);
  }

  static std::string Window() {
    return fmt::format("start={}&end={}", (shared_->now - 3600 * kSecond) / kSecond,
                       shared_->now / kSecond);
  }

  static std::set<std::string> TruthTraces(const std::string& where) {
    auto result =
        shared_->truth->Query("SELECT DISTINCT lower(hex(trace_id)) FROM spans WHERE " + where);
    EXPECT_TRUE(result.ok()) << result.status() << " for " << where;
    std::set<std::string> ids;
    if (result.ok()) {
      for (const auto& row : result->rows) ids.insert(row[0].value_or(""));
    }
    return ids;
  }

  static std::string TruthValue(const std::string& sql) {
    auto result = shared_->truth->Query(sql);
    EXPECT_TRUE(result.ok()) << result.status();
    if (!result.ok() || result->rows.empty()) return "";
    return result->rows[0][0].value_or("");
  }

  // The trace ids of a search (every match: the limit is above them).
  static std::set<std::string> Searched(const std::string& traceql) {
    std::string encoded;
    for (unsigned char c : traceql) encoded += fmt::format("%{:02X}", c);
    const HttpAnswer answer = Get("/api/search?limit=1000&" + Window() + "&q=" + encoded);
    EXPECT_EQ(answer.status, 200) << traceql << ": " << answer.body;
    simdjson::dom::parser parser;
    simdjson::dom::element doc;
    std::set<std::string> ids;
    if (parser.parse(answer.body).get(doc) != simdjson::SUCCESS) {
      ADD_FAILURE() << answer.body;
      return ids;
    }
    for (simdjson::dom::element trace : doc["traces"].get_array()) {
      ids.insert(std::string(trace["traceID"].get_string().value()));
    }
    return ids;
  }

  static Shared* shared_;
};

TempoApiTest::Shared* TempoApiTest::shared_ = nullptr;

TEST_F(TempoApiTest, EchoAndBuildInfoAnswerGrafanasSaveAndTest) {
  const HttpAnswer echo = Get("/api/echo");
  EXPECT_EQ(echo.status, 200);
  EXPECT_EQ(echo.body, "echo");
  const HttpAnswer info = Get("/api/status/buildinfo");
  EXPECT_EQ(info.status, 200);
  EXPECT_THAT(info.body, HasSubstr("\"version\""));
  // No token: refused, as every read route.
  EXPECT_EQ(Curl({Base() + "/api/echo"}).status, 401);
}

TEST_F(TempoApiTest, TraceQLSearchesMatchDuckDbGroundTruth) {
  const std::string service = TruthValue(
      "SELECT service_name FROM spans WHERE status_code = 2 GROUP BY 1 ORDER BY count(*) DESC "
      "LIMIT 1");
  ASSERT_FALSE(service.empty());
  const std::string route = TruthValue(
      "SELECT http_route FROM spans WHERE http_route IS NOT NULL GROUP BY 1 ORDER BY count(*) "
      "DESC LIMIT 1");
  ASSERT_FALSE(route.empty());
  const std::string root_service = TruthValue(
      "SELECT service_name FROM spans WHERE parent_span_id IS NULL GROUP BY 1 ORDER BY count(*) "
      "LIMIT 1");
  struct Case {
    std::string traceql;
    std::string truth_where;
  };
  const std::vector<Case> cases = {
      {fmt::format(R"({{ resource.service.name = "{}" && status = error }})", service),
       fmt::format("service_name = '{}' AND status_code = 2", service)},
      {"{ duration > 200ms }", "duration_nano > 200000000"},
      {fmt::format(R"({{ span.http.route = "{}" }})", route),
       fmt::format("attr_str[list_position(attr_keys, 'http.route')] = '{}'", route)},
      {fmt::format(R"({{ .http.route =~ "{}.*" && kind = server }})", route.substr(0, 2)),
       fmt::format("regexp_full_match(attr_str[list_position(attr_keys, 'http.route')], '{}.*') "
                   "AND kind = 2",
                   route.substr(0, 2))},
      {"{ span.http.response.status_code >= 500 }",
       "attr_int[list_position(attr_keys, 'http.response.status_code')] >= 500"},
      {"{ .tenant = 7 }",
       "attr_int[list_position(attr_keys, 'tenant')] = 7 OR "
       "resource_attr_int[list_position(resource_attr_keys, 'tenant')] = 7"},
      {"{ event:name = \"exception\" }", "list_contains(event_name, 'exception')"},
      {"{ span.db.system.name != nil && !(status = error) }",
       "list_position(attr_keys, 'db.system.name') > 0 AND status_code <> 2"},
  };
  for (const Case& c : cases) {
    const std::set<std::string> truth = TruthTraces(c.truth_where);
    EXPECT_FALSE(truth.empty()) << c.traceql << ": the traffic has no match to compare";
    EXPECT_EQ(Searched(c.traceql), truth) << c.traceql;
  }
  // Two spansets: a trace needs a span matching each (&&) or either (||).
  const std::set<std::string> clients = TruthTraces("kind = 3");
  const std::set<std::string> errors = TruthTraces("status_code = 2");
  std::set<std::string> both, either = clients;
  for (const std::string& id : errors) {
    if (clients.contains(id)) both.insert(id);
    either.insert(id);
  }
  ASSERT_FALSE(both.empty());
  EXPECT_EQ(Searched("{ kind = client } && { status = error }"), both);
  EXPECT_EQ(Searched("{ kind = client } || { status = error }"), either);
  // A trace-level intrinsic: the root span's service.
  EXPECT_EQ(Searched(fmt::format(R"({{ rootServiceName = "{}" }})", root_service)),
            TruthTraces(fmt::format(
                "trace_id IN (SELECT trace_id FROM spans WHERE parent_span_id IS NULL AND "
                "service_name = '{}')",
                root_service)));
}

TEST_F(TempoApiTest, SearchAnswersInTempoSchemaWithMatchedSpans) {
  const HttpAnswer answer =
      Get("/api/search?limit=5&spss=2&" + Window() + "&q=%7B%20status%20%3D%20error%20%7D");
  ASSERT_EQ(answer.status, 200) << answer.body;
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  ASSERT_EQ(parser.parse(answer.body).get(doc), simdjson::SUCCESS);
  auto keys = [](simdjson::dom::object object) {
    std::set<std::string> out;
    for (auto field : object) out.insert(std::string(field.key));
    return out;
  };
  const std::set<std::string> top = {"traces", "metrics"};
  const std::set<std::string> trace_keys = {"traceID",           "rootServiceName", "rootTraceName",
                                            "startTimeUnixNano", "durationMs",      "spanSet",
                                            "spanSets",          "serviceStats"};
  const std::set<std::string> span_keys = {"spanID", "name", "startTimeUnixNano", "durationNanos",
                                           "attributes"};
  for (const std::string& key : keys(doc.get_object())) EXPECT_TRUE(top.contains(key)) << key;
  simdjson::dom::array traces = doc["traces"].get_array();
  ASSERT_EQ(traces.size(), 5u);
  for (simdjson::dom::element trace : traces) {
    for (const std::string& key : keys(trace.get_object())) {
      EXPECT_TRUE(trace_keys.contains(key)) << key;
    }
    EXPECT_TRUE(trace["startTimeUnixNano"].is_string());
    const std::string id(trace["traceID"].get_string().value());
    simdjson::dom::element set = trace["spanSets"].get_array().at(0);
    const int64_t matched = set["matched"].get_int64().value();
    EXPECT_EQ(std::to_string(matched),
              TruthValue(fmt::format("SELECT count(*) FROM spans WHERE status_code = 2 AND "
                                     "lower(hex(trace_id)) = '{}'",
                                     id)));
    simdjson::dom::array spans = set["spans"].get_array();
    EXPECT_EQ(spans.size(), static_cast<size_t>(std::min<int64_t>(matched, 2)));
    for (simdjson::dom::element span : spans) {
      for (const std::string& key : keys(span.get_object())) {
        EXPECT_TRUE(span_keys.contains(key)) << key;
      }
      EXPECT_EQ(TruthValue(fmt::format("SELECT status_code FROM spans WHERE lower(hex(span_id)) = "
                                       "'{}' AND lower(hex(trace_id)) = '{}'",
                                       std::string(span["spanID"].get_string().value()), id)),
                "2");
    }
  }
}

TEST_F(TempoApiTest, TraceByIdInProtobufAndJsonWithTrimmedIds) {
  const std::string trimmed = "abcdef12";
  const HttpAnswer v2 = Get("/api/v2/traces/" + trimmed, {"Accept: application/protobuf"});
  ASSERT_EQ(v2.status, 200) << v2.body;
  EXPECT_EQ(v2.Header("content-type"), "application/protobuf");
  const HttpAnswer v1 =
      Get("/api/traces/" + std::string(kZeroTrace), {"Accept: application/protobuf"});
  ASSERT_EQ(v1.status, 200);
  // v2 wraps v1's Trace as TraceByIDResponse.trace (field 1).
  EXPECT_EQ(v2.body, TempoTraceProto(v1.body, true));
  // The Trace's field 1 holds OTLP ResourceSpans: it decodes as an OTLP
  // request with the one span sent.
  otlp::TraceBatch batch;
  ASSERT_TRUE(otlp::DecodeTracesProto(v1.body, &batch).ok());
  EXPECT_EQ(batch.spans.span_id.size(), 1u);
  const HttpAnswer json = Get("/api/v2/traces/" + trimmed);
  ASSERT_EQ(json.status, 200);
  EXPECT_THAT(json.body, HasSubstr(R"({"trace":{"resourceSpans":)"));
  EXPECT_THAT(json.body, HasSubstr("zero-root"));
  EXPECT_THAT(Get("/api/traces/" + trimmed).body, HasSubstr(R"({"batches":[)"));
  EXPECT_EQ(Get("/api/v2/traces/0123456789abcdef0123456789abcdef").status, 404);
  EXPECT_EQ(Get("/api/v2/traces/xyz").status, 400);
}

TEST_F(TempoApiTest, TagsAndTagValuesForAutocomplete) {
  const HttpAnswer tags = Get("/api/v2/search/tags?" + Window());
  ASSERT_EQ(tags.status, 200) << tags.body;
  EXPECT_THAT(tags.body, HasSubstr(R"("name":"resource")"));
  EXPECT_THAT(tags.body, HasSubstr(R"("service.name")"));
  EXPECT_THAT(tags.body, HasSubstr(R"("name":"intrinsic")"));
  EXPECT_THAT(Get("/api/v2/search/tags?scope=span&" + Window()).body,
              ::testing::Not(HasSubstr(R"("name":"resource")")));
  const HttpAnswer services = Get("/api/v2/search/tag/resource.service.name/values?" + Window());
  ASSERT_EQ(services.status, 200);
  auto truth = shared_->truth->Query("SELECT DISTINCT service_name FROM spans");
  ASSERT_TRUE(truth.ok());
  for (const auto& row : truth->rows) {
    EXPECT_THAT(services.body,
                HasSubstr(fmt::format(R"({{"type":"string","value":"{}"}})", row[0].value_or(""))));
  }
  EXPECT_THAT(Get("/api/v2/search/tag/status/values").body,
              HasSubstr(R"({"type":"keyword","value":"error"})"));
  EXPECT_THAT(Get("/api/search/tag/tenant/values?" + Window()).body, HasSubstr(R"("7")"));
}

TEST_F(TempoApiTest, BadAndUnsupportedQueriesAreNamedBadRequests) {
  const HttpAnswer syntax = Get("/api/search?q=%7B%20.a%20%3D%20%7D");
  EXPECT_EQ(syntax.status, 400);
  EXPECT_THAT(syntax.body, HasSubstr("at column"));
  const HttpAnswer structural =
      Get("/api/search?q=%7B%20.a%20%3D%201%20%7D%20%3E%3E%20%7B%20.b%20%3D%202%20%7D");
  EXPECT_EQ(structural.status, 400);
  EXPECT_THAT(structural.body, HasSubstr("structural operator >>"));
  const HttpAnswer mismatch = Get("/api/search?q=%7B%20status%20%3D%205%20%7D");
  EXPECT_EQ(mismatch.status, 400);
  EXPECT_THAT(mismatch.body, HasSubstr("status takes"));
}

TEST_F(TempoApiTest, BadTagsTimesAndIdsAreNamedBadRequests) {
  EXPECT_THAT(TagsToTraceQL(R"(a="unterminated)").status().message(),
              HasSubstr("a quoted value that does not end"));
  EXPECT_THAT(TagsToTraceQL("novalue").status().message(), HasSubstr("expected key=value"));
  std::string many;
  for (int i = 0; i < 51; ++i) many += fmt::format("k{}=v ", i);
  EXPECT_THAT(TagsToTraceQL(many).status().message(), HasSubstr("more than 50 tags"));
  EXPECT_EQ(*TagsToTraceQL("  "), "{}");
  const HttpAnswer start = Get("/api/search?start=yesterday");
  EXPECT_EQ(start.status, 400);
  EXPECT_THAT(start.body, HasSubstr("start"));
  EXPECT_EQ(Get("/api/search?start=200&end=100").status, 400);
  EXPECT_EQ(Get("/api/search?tags=a%3D%22x").status, 400);
  EXPECT_EQ(Get("/api/v2/traces/" + std::string(33, 'a')).status, 400);
  EXPECT_EQ(Get("/api/v2/search/tag//values").status, 400);
}

TEST_F(TempoApiTest, LogfmtTagsSearchLikeTheirTraceQL) {
  EXPECT_EQ(Searched(*TagsToTraceQL("tenant=7")), Searched("{ .tenant = 7 }"));
  const HttpAnswer answer = Get("/api/search?tags=tenant%3D7&" + Window());
  ASSERT_EQ(answer.status, 200);
  EXPECT_THAT(answer.body, HasSubstr(std::string(kZeroTrace)));
}

}  // namespace
}  // namespace strata::api
