// The Jaeger query API (/jaeger/api/*) end to end: known traces written
// through the real storage engine, the Api behind a real HttpServer, and
// the requests Grafana's Jaeger data source sends (its headers, times in
// microseconds, durations as "60ms", tags as a JSON object, limit=20,
// lookback=1h) replayed with curl. Every answer is read back as JSON and
// compared with what was sent: the services and operations, which traces a
// search finds, and each trace's spans, references, tags, logs and
// processes.

#include <algorithm>
#include <set>
#include <string>
#include <vector>

#include "api/api_test_server.h"
#include "api/jaeger_model.h"
#include "fmt/chrono.h"
#include "fmt/format.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "io/posix_file_system.h"
#include "otlp/decode.h"
#include "server/http_testing.h"
#include "simdjson.h"
#include "storage/storage.h"
#include "storage/testing/commit_testing.h"

namespace strata::api {
namespace {

using server::testing::Curl;
using server::testing::HttpAnswer;
using ::testing::ElementsAre;
using ::testing::ElementsAreArray;
using ::testing::HasSubstr;

constexpr char kToken[] = "grafana-read-token";
constexpr int64_t kMilli = 1'000'000;
constexpr int64_t kSecond = 1'000'000'000;
constexpr int kTraces = 12;
constexpr int kTracesPerRequest = 4;

// What trace `i` is (the test's ground truth): a frontend SERVER root
// "GET /cart" of (i + 1) * 10 ms, failed when i % 3 == 0, with an event;
// its CLIENT child "call backend"; and the backend's SERVER span "handle
// order" under that, with order.id = i and a link to the previous trace's
// root.
struct KnownTrace {
  int i = 0;
  int64_t start = 0;
  bool failed() const { return i % 3 == 0; }
  int64_t root_duration() const { return (i + 1) * 10 * kMilli; }
  // Trace 1's high half is zero: Jaeger prints its id in 16 digits.
  std::string id() const {
    return fmt::format("{:016x}{:016x}", i == 1 ? 0 : 0x1000 + i, 0xfeed0000 + i);
  }
  std::string jaeger_id() const { return i == 1 ? id().substr(16) : id(); }
  std::string span(int n) const { return fmt::format("{:016x}", i * 16 + n); }
};

std::string FrontendSpans(const KnownTrace& t) {
  return fmt::format(
      R"({{"traceId":"{0}","spanId":"{1}","name":"GET /cart","kind":2,)"
      R"("startTimeUnixNano":"{3}","endTimeUnixNano":"{4}",)"
      R"("attributes":[{{"key":"http.method","value":{{"stringValue":"GET"}}}},)"
      R"({{"key":"http.status_code","value":{{"intValue":"{5}"}}}}],)"
      R"("events":[{{"timeUnixNano":"{6}","name":"cache.miss","attributes":[)"
      R"({{"key":"cache.key","value":{{"stringValue":"cart-{7}"}}}}]}}],)"
      R"("status":{{"code":{8}{9}}}}},)"
      R"({{"traceId":"{0}","spanId":"{2}","parentSpanId":"{1}","name":"call backend","kind":3,)"
      R"("startTimeUnixNano":"{10}","endTimeUnixNano":"{11}"}})",
      t.id(), t.span(1), t.span(2), t.start, t.start + t.root_duration(), t.failed() ? 500 : 200,
      t.start + kMilli, t.i, t.failed() ? 2 : 0, t.failed() ? R"(,"message":"failed")" : "",
      t.start + 2 * kMilli, t.start + 7 * kMilli);
}

std::string BackendSpan(const KnownTrace& t, const KnownTrace* previous) {
  return fmt::format(
      R"({{"traceId":"{0}","spanId":"{1}","parentSpanId":"{2}","name":"handle order","kind":2,)"
      R"("startTimeUnixNano":"{3}","endTimeUnixNano":"{4}",)"
      R"("attributes":[{{"key":"order.id","value":{{"intValue":"{5}"}}}}]{6}}})",
      t.id(), t.span(3), t.span(2), t.start + 3 * kMilli, t.start + 7 * kMilli, t.i,
      previous == nullptr ? ""
                          : fmt::format(R"(,"links":[{{"traceId":"{}","spanId":"{}"}}])",
                                        previous->id(), previous->span(1)));
}

std::string Request(const std::string& frontend, const std::string& backend) {
  return fmt::format(
      R"({{"resourceSpans":[)"
      R"({{"resource":{{"attributes":[{{"key":"service.name","value":{{"stringValue":"frontend"}}}},)"
      R"({{"key":"host.name","value":{{"stringValue":"web-1"}}}}]}},)"
      R"("scopeSpans":[{{"scope":{{"name":"shop","version":"2.0"}},"spans":[{}]}}]}},)"
      R"({{"resource":{{"attributes":[{{"key":"service.name","value":{{"stringValue":"backend"}}}}]}},)"
      R"("scopeSpans":[{{"scope":{{"name":"orders"}},"spans":[{}]}}]}}]}})",
      frontend, backend);
}

std::string Str(simdjson::dom::element e) {
  return std::string(std::string_view(e.get_string().value()));
}

class JaegerApiTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { shared_ = new Shared(); }
  static void TearDownTestSuite() {
    delete shared_;
    shared_ = nullptr;
  }

  struct Shared {
    Shared() {
      now = SystemNowUnixNano();
      data_dir = tmp.path() + "/data";
      auto opened = storage::Storage::Open(fs, data_dir);
      EXPECT_TRUE(opened.ok()) << opened.status();
      storage = *std::move(opened);
      for (int i = 0; i < kTraces; ++i) {
        traces.push_back(KnownTrace{i, now - 20 * 60 * kSecond + i * 60 * kSecond});
      }
      // Several requests, so several batches.
      for (int first = 0; first < kTraces; first += kTracesPerRequest) {
        std::string frontend, backend;
        for (int i = first; i < first + kTracesPerRequest; ++i) {
          frontend += (frontend.empty() ? "" : ",") + FrontendSpans(traces[i]);
          backend += (backend.empty() ? "" : ",") +
                     BackendSpan(traces[i], i == 0 ? nullptr : &traces[i - 1]);
        }
        auto batch = std::make_unique<otlp::TraceBatch>();
        const absl::Status decoded =
            otlp::DecodeTracesJson(Request(frontend, backend), batch.get());
        EXPECT_TRUE(decoded.ok()) << decoded;
        storage::WriteRequest request;
        request.traces = std::move(batch);
        request.rows = 3 * kTracesPerRequest;
        request.bytes = 16384;
        EXPECT_TRUE(storage->Write(std::move(request)).ok());
      }
      loopback = test_support::StartLoopbackApi(storage.get(), &fs, data_dir, kToken);
    }
    ~Shared() {
      if (loopback.http_server != nullptr) loopback.http_server->Shutdown(std::chrono::seconds(5));
      loopback = {};
      if (storage != nullptr) storage->Shutdown(std::chrono::seconds(5));
    }
    PosixFileSystem fs;
    storage::testing::ScopedTempDir tmp{"jaeger_api"};
    std::string data_dir;
    int64_t now = 0;
    std::vector<KnownTrace> traces;
    std::unique_ptr<storage::Storage> storage;
    test_support::LoopbackApi loopback;
  };

  static std::string Url(const std::string& target) {
    return fmt::format("http://127.0.0.1:{}{}", shared_->loopback.http_server->port(), target);
  }

  // A request as Grafana's Jaeger data source sends it, with the token in
  // a custom Authorization header.
  static HttpAnswer Grafana(const std::string& target) {
    return server::testing::Fetch("GET", Url(target),
                                  {std::string("Authorization: Bearer ") + kToken,
                                   "Accept: application/json, text/plain, */*",
                                   "X-Grafana-Org-Id: 1", "User-Agent: Grafana/11.3.0"});
  }

  // The answer's JSON; a test failure when it does not parse.
  simdjson::dom::element Json(const HttpAnswer& answer) {
    simdjson::dom::element doc;
    const auto error = parser_.parse(answer.body).get(doc);
    EXPECT_FALSE(error) << simdjson::error_message(error) << "\n" << answer.body;
    return doc;
  }

  static std::vector<std::string> Strings(simdjson::dom::element array) {
    std::vector<std::string> out;
    for (simdjson::dom::element e : simdjson::dom::array(array.get_array().value()))
      out.push_back(Str(e));
    return out;
  }

  // The search window Grafana sends: start and end in microseconds.
  static std::string Window() {
    return fmt::format("start={}&end={}&lookback=1h", (shared_->now - 3600 * kSecond) / 1000,
                       (shared_->now + 60 * kSecond) / 1000);
  }

  // Trace ids of a search answer, in answer order, each checked whole.
  std::vector<std::string> SearchIds(const std::string& query) {
    HttpAnswer answer = Grafana("/jaeger/api/traces?" + query);
    EXPECT_EQ(answer.status, 200) << query << "\n" << answer.body;
    std::vector<std::string> ids;
    if (answer.status != 200) return ids;
    simdjson::dom::element doc = Json(answer);
    for (simdjson::dom::element trace : simdjson::dom::array(doc["data"].get_array().value())) {
      ids.push_back(Str(trace["traceID"].value()));
      EXPECT_EQ(trace["spans"].get_array().size(), 3u) << ids.back();
    }
    EXPECT_EQ(doc["total"].get_int64().value(), static_cast<int64_t>(ids.size()));
    return ids;
  }

  // Jaeger ids of the known traces for which `keep` holds, newest first.
  template <typename Keep>
  static std::vector<std::string> Expected(Keep keep) {
    std::vector<std::string> ids;
    for (auto it = shared_->traces.rbegin(); it != shared_->traces.rend(); ++it) {
      if (keep(*it)) ids.push_back(it->jaeger_id());
    }
    return ids;
  }

  static Shared* shared_;
  simdjson::dom::parser parser_;
};

JaegerApiTest::Shared* JaegerApiTest::shared_ = nullptr;

TEST_F(JaegerApiTest, ServicesAreTheServicesSent) {
  HttpAnswer answer = Grafana("/jaeger/api/services");
  ASSERT_EQ(answer.status, 200) << answer.body;
  EXPECT_EQ(answer.Header("content-type"), "application/json");
  simdjson::dom::element doc = Json(answer);
  EXPECT_THAT(Strings(doc["data"].value()), ElementsAre("backend", "frontend"));
  EXPECT_EQ(doc["total"].get_int64().value(), 2);
  EXPECT_TRUE(doc["errors"].is_null());
}

TEST_F(JaegerApiTest, OperationsPerServiceAndKind) {
  HttpAnswer names = Grafana("/jaeger/api/services/frontend/operations");
  ASSERT_EQ(names.status, 200) << names.body;
  EXPECT_THAT(Strings(Json(names)["data"].value()), ElementsAre("GET /cart", "call backend"));
  HttpAnswer backend = Grafana("/jaeger/api/services/backend/operations");
  ASSERT_EQ(backend.status, 200) << backend.body;
  EXPECT_THAT(Strings(Json(backend)["data"].value()), ElementsAre("handle order"));

  HttpAnswer all = Grafana("/jaeger/api/operations?service=frontend");
  ASSERT_EQ(all.status, 200) << all.body;
  EXPECT_EQ(all.body,
            R"({"data":[{"name":"GET /cart","spanKind":"server"},)"
            R"({"name":"call backend","spanKind":"client"}],"total":2,"limit":0,"offset":0,)"
            R"("errors":null})");
  HttpAnswer servers = Grafana("/jaeger/api/operations?service=frontend&spanKind=server");
  ASSERT_EQ(servers.status, 200) << servers.body;
  EXPECT_THAT(servers.body, HasSubstr(R"("data":[{"name":"GET /cart","spanKind":"server"}])"));
  HttpAnswer unknown = Grafana("/jaeger/api/services/nobody/operations");
  ASSERT_EQ(unknown.status, 200);
  EXPECT_THAT(unknown.body, HasSubstr(R"("data":[])"));
}

TEST_F(JaegerApiTest, TraceByIdIsTheTraceSent) {
  for (const KnownTrace& t : shared_->traces) {
    HttpAnswer answer = Grafana("/jaeger/api/traces/" + t.jaeger_id());
    ASSERT_EQ(answer.status, 200) << t.id() << "\n" << answer.body;
    simdjson::dom::element doc = Json(answer);
    ASSERT_EQ(doc["data"].get_array().size(), 1u);
    simdjson::dom::element trace = doc["data"].at(0).value();
    EXPECT_EQ(Str(trace["traceID"].value()), t.jaeger_id());
    simdjson::dom::object processes = trace["processes"].get_object().value();
    std::map<std::string, simdjson::dom::element> spans;
    for (simdjson::dom::element span : simdjson::dom::array(trace["spans"].get_array().value())) {
      spans[Str(span["spanID"].value())] = span;
      EXPECT_EQ(Str(span["traceID"].value()), t.jaeger_id());
    }
    ASSERT_EQ(spans.size(), 3u) << answer.body;
    simdjson::dom::element root = spans[t.span(1)];
    simdjson::dom::element client = spans[t.span(2)];
    simdjson::dom::element server = spans[t.span(3)];
    EXPECT_EQ(Str(root["operationName"].value()), "GET /cart");
    EXPECT_EQ(root["startTime"].get_int64().value(), t.start / 1000);
    EXPECT_EQ(root["duration"].get_int64().value(), t.root_duration() / 1000);
    EXPECT_EQ(root["references"].get_array().size(), 0u);
    EXPECT_EQ(Str(client["references"].at(0)["refType"].value()), "CHILD_OF");
    EXPECT_EQ(Str(client["references"].at(0)["spanID"].value()), t.span(1));
    EXPECT_EQ(Str(server["references"].at(0)["spanID"].value()), t.span(2));
    EXPECT_EQ(server["references"].get_array().size(), t.i == 0 ? 1u : 2u);
    if (t.i > 0) {
      const KnownTrace& previous = shared_->traces[t.i - 1];
      EXPECT_EQ(Str(server["references"].at(1)["refType"].value()), "FOLLOWS_FROM");
      EXPECT_EQ(Str(server["references"].at(1)["traceID"].value()), previous.jaeger_id());
      EXPECT_EQ(Str(server["references"].at(1)["spanID"].value()), previous.span(1));
    }
    // Tags: typed attributes, then scope, kind and status.
    std::map<std::string, std::string> tags;
    for (simdjson::dom::element tag : simdjson::dom::array(root["tags"].get_array().value())) {
      tags[Str(tag["key"].value())] =
          Str(tag["type"].value()) + ":" + simdjson::to_string(tag["value"].value());
    }
    EXPECT_EQ(tags["http.method"], R"(string:"GET")");
    EXPECT_EQ(tags["http.status_code"], fmt::format("int64:{}", t.failed() ? 500 : 200));
    EXPECT_EQ(tags["span.kind"], R"(string:"server")");
    EXPECT_EQ(tags["otel.scope.name"], R"(string:"shop")");
    EXPECT_EQ(tags["otel.scope.version"], R"(string:"2.0")");
    EXPECT_EQ(tags.count("error"), t.failed() ? 1u : 0u);
    if (t.failed()) {
      EXPECT_EQ(tags["error"], "bool:true");
      EXPECT_EQ(tags["otel.status_code"], R"(string:"ERROR")");
      EXPECT_EQ(tags["otel.status_description"], R"(string:"failed")");
    }
    simdjson::dom::element log = root["logs"].at(0).value();
    EXPECT_EQ(log["timestamp"].get_int64().value(), (t.start + kMilli) / 1000);
    EXPECT_EQ(simdjson::to_string(log["fields"].value()),
              fmt::format(R"([{{"key":"event","type":"string","value":"cache.miss"}},)"
                          R"({{"key":"cache.key","type":"string","value":"cart-{}"}}])",
                          t.i));
    // Processes: frontend with its host tag, backend without tags.
    const std::string frontend = Str(root["processID"].value());
    EXPECT_EQ(Str(client["processID"].value()), frontend);
    EXPECT_EQ(Str(processes[frontend]["serviceName"].value()), "frontend");
    EXPECT_EQ(simdjson::to_string(processes[frontend]["tags"].value()),
              R"([{"key":"host.name","type":"string","value":"web-1"}])");
    const std::string backend = Str(server["processID"].value());
    EXPECT_NE(backend, frontend);
    EXPECT_EQ(Str(processes[backend]["serviceName"].value()), "backend");
    EXPECT_EQ(processes[backend]["tags"].get_array().size(), 0u);
    EXPECT_EQ(processes.size(), 2u);
  }
  // The 32-digit form of a short id finds the same trace.
  HttpAnswer padded = Grafana("/jaeger/api/traces/" + shared_->traces[1].id());
  ASSERT_EQ(padded.status, 200);
  EXPECT_EQ(padded.body, Grafana("/jaeger/api/traces/" + shared_->traces[1].jaeger_id()).body);
}

TEST_F(JaegerApiTest, SearchFindsTheTracesTheFiltersDescribe) {
  // Grafana's default search: service, all operations, limit 20.
  EXPECT_EQ(SearchIds("service=frontend&limit=20&" + Window()),
            Expected([](const KnownTrace&) { return true; }));
  EXPECT_EQ(
      SearchIds("service=frontend&operation=GET%20%2Fcart&tags=%7B%22error%22%3A%22true%22%7D&"
                "limit=20&" +
                Window()),
      Expected([](const KnownTrace& t) { return t.failed(); }));
  // error=false: a span whose status is not ERROR.
  EXPECT_EQ(SearchIds("service=frontend&operation=GET%20%2Fcart&tags=%7B%22error%22%3Afalse%7D&"
                      "limit=20&" +
                      Window()),
            Expected([](const KnownTrace& t) { return !t.failed(); }));
  // The older repeated tag=key:value form, alone and beside tags.
  EXPECT_EQ(
      SearchIds("service=frontend&operation=GET%20%2Fcart&tag=error:true&limit=20&" + Window()),
      Expected([](const KnownTrace& t) { return t.failed(); }));
  EXPECT_EQ(SearchIds("service=backend&tag=order.id:7&" + Window()),
            Expected([](const KnownTrace& t) { return t.i == 7; }));
  EXPECT_EQ(SearchIds("service=frontend&tag=http.status_code:500&tags=%7B%22span.kind%22%3A%22"
                      "server%22%7D&" +
                      Window()),
            Expected([](const KnownTrace& t) { return t.failed(); }));
  EXPECT_EQ(SearchIds("service=frontend&minDuration=60ms&limit=20&" + Window()),
            Expected([](const KnownTrace& t) { return t.root_duration() >= 60 * kMilli; }));
  EXPECT_EQ(
      SearchIds("service=frontend&operation=GET%20%2Fcart&maxDuration=30ms&limit=20&" + Window()),
      Expected([](const KnownTrace& t) { return t.root_duration() <= 30 * kMilli; }));
  EXPECT_EQ(SearchIds("service=backend&tags=%7B%22order.id%22%3A%227%22%7D&" + Window()),
            Expected([](const KnownTrace& t) { return t.i == 7; }));
  EXPECT_EQ(
      SearchIds("service=frontend&tags=%7B%22http.status_code%22%3A%22500%22%2C%22span.kind%22"
                "%3A%22server%22%7D&" +
                Window()),
      Expected([](const KnownTrace& t) { return t.failed(); }));
  // All conditions hold on one span: the backend has no http.method.
  EXPECT_EQ(SearchIds("service=backend&tags=%7B%22http.method%22%3A%22GET%22%7D&" + Window()),
            std::vector<std::string>());
  std::vector<std::string> newest = Expected([](const KnownTrace&) { return true; });
  newest.resize(3);
  EXPECT_EQ(SearchIds("service=frontend&limit=3&" + Window()), newest);
  // Without start and end: the last `lookback`; 5m holds none of them.
  EXPECT_EQ(SearchIds("service=frontend&lookback=30m"),
            Expected([](const KnownTrace&) { return true; }));
  EXPECT_EQ(SearchIds("service=frontend&lookback=5m"), std::vector<std::string>());
}

TEST_F(JaegerApiTest, DependenciesAreTheCallsBetweenServices) {
  HttpAnswer answer = Grafana(fmt::format("/jaeger/api/dependencies?endTs={}&lookback={}",
                                          (shared_->now + 60 * kSecond) / kMilli, 3'600'000));
  ASSERT_EQ(answer.status, 200) << answer.body;
  EXPECT_EQ(answer.body,
            fmt::format(R"({{"data":[{{"parent":"frontend","child":"backend","callCount":{}}}],)"
                        R"("total":1,"limit":0,"offset":0,"errors":null}})",
                        kTraces));
  HttpAnswer before = Grafana(fmt::format("/jaeger/api/dependencies?endTs={}&lookback={}",
                                          (shared_->now - 3600 * kSecond) / kMilli, 60'000));
  ASSERT_EQ(before.status, 200) << before.body;
  EXPECT_THAT(before.body, HasSubstr(R"("data":[])"));
}

TEST_F(JaegerApiTest, ErrorsComeInJaegersEnvelope) {
  HttpAnswer absent = Grafana("/jaeger/api/traces/0123456789abcdef0123456789abcdef");
  EXPECT_EQ(absent.status, 404);
  EXPECT_EQ(absent.body, R"({"data":null,"total":0,"limit":0,"offset":0,)"
                         R"("errors":[{"code":404,"msg":"trace not found"}]})");
  HttpAnswer bad_id = Grafana("/jaeger/api/traces/xyz");
  EXPECT_EQ(bad_id.status, 400);
  EXPECT_THAT(bad_id.body, HasSubstr(R"("errors":[{"code":400,"msg":"trace_id: )"));
  HttpAnswer bad_limit = Grafana("/jaeger/api/traces?service=frontend&limit=0");
  EXPECT_EQ(bad_limit.status, 400);
  EXPECT_THAT(bad_limit.body, HasSubstr(R"("msg":"limit: )"));
  HttpAnswer bad_tags = Grafana("/jaeger/api/traces?tags=error%3Dtrue");
  EXPECT_EQ(bad_tags.status, 400);
  EXPECT_THAT(bad_tags.body, HasSubstr(R"("msg":"tags: not a JSON object)"));
  HttpAnswer bad_pair = Grafana("/jaeger/api/traces?service=frontend&tag=error");
  EXPECT_EQ(bad_pair.status, 400);
  EXPECT_THAT(bad_pair.body, HasSubstr(R"("msg":"tag: not key:value: )"));
  HttpAnswer bad_error = Grafana("/jaeger/api/traces?service=frontend&tag=error:maybe");
  EXPECT_EQ(bad_error.status, 400);
  EXPECT_THAT(bad_error.body, HasSubstr(R"("msg":"tag: error: not true or false)"));
  HttpAnswer no_service = Grafana("/jaeger/api/operations");
  EXPECT_EQ(no_service.status, 400);
  HttpAnswer not_operations = Grafana("/jaeger/api/services/frontend/endpoints");
  EXPECT_EQ(not_operations.status, 404);
}

TEST_F(JaegerApiTest, TokenAsBearerOrAsBasicAuthPassword) {
  const std::string url = Url("/jaeger/api/services");
  EXPECT_EQ(Curl({url}).status, 401);
  EXPECT_EQ(Curl({"-H", "Authorization: Bearer wrong", url}).status, 401);
  EXPECT_EQ(Curl({"-H", std::string("Authorization: Bearer ") + kToken, url}).status, 200);
  // Any user name; the token is the password.
  EXPECT_EQ(Curl({"-u", std::string("grafana:") + kToken, url}).status, 200);
  EXPECT_EQ(Curl({"-u", std::string("admin:") + kToken, url}).status, 200);
  EXPECT_EQ(Curl({"-u", "grafana:wrong", url}).status, 401);
  EXPECT_EQ(Curl({"-u", std::string(kToken) + ":", url}).status, 401);
  EXPECT_EQ(Curl({"-H", "Authorization: Basic !!notbase64", url}).status, 401);
  // Basic auth works on every API route, not only Jaeger's.
  EXPECT_EQ(Curl({"-u", std::string("x:") + kToken, Url("/api/v1/services")}).status, 200);
}

// RFC 3339 in UTC, whole seconds, as the v3 API's clients write times.
std::string Rfc3339(int64_t unix_nanos) {
  return fmt::format("{:%Y-%m-%dT%H:%M:%S}Z",
                     fmt::gmtime(static_cast<std::time_t>(unix_nanos / kSecond)));
}

TEST_F(JaegerApiTest, V3ServicesAndOperations) {
  HttpAnswer services = Grafana("/jaeger/api/v3/services");
  ASSERT_EQ(services.status, 200) << services.body;
  EXPECT_EQ(services.body, R"({"services":["backend","frontend"]})");
  HttpAnswer operations = Grafana("/jaeger/api/v3/operations?service=frontend");
  ASSERT_EQ(operations.status, 200) << operations.body;
  EXPECT_EQ(operations.body, R"({"operations":[{"name":"GET /cart","spanKind":"server"},)"
                             R"({"name":"call backend","spanKind":"client"}]})");
  HttpAnswer clients = Grafana("/jaeger/api/v3/operations?service=frontend&span_kind=client");
  ASSERT_EQ(clients.status, 200) << clients.body;
  EXPECT_EQ(clients.body, R"({"operations":[{"name":"call backend","spanKind":"client"}]})");
}

TEST_F(JaegerApiTest, V3TraceIsTheOtlpTraceInAResultEnvelope) {
  for (const KnownTrace& t : shared_->traces) {
    HttpAnswer v3 = Grafana("/jaeger/api/v3/traces/" + t.id());
    ASSERT_EQ(v3.status, 200) << v3.body;
    HttpAnswer otlp = Grafana("/api/v1/traces/" + t.id());
    ASSERT_EQ(otlp.status, 200) << otlp.body;
    EXPECT_EQ(v3.body, "{\"result\":" + otlp.body + "}");
    for (int n = 1; n <= 3; ++n) {
      EXPECT_THAT(v3.body, HasSubstr(fmt::format(R"("spanId":"{}")", t.span(n))));
    }
  }
  HttpAnswer absent = Grafana("/jaeger/api/v3/traces/0123456789abcdef0123456789abcdef");
  EXPECT_EQ(absent.status, 404);
  EXPECT_EQ(absent.body, R"({"error":{"grpcCode":5,"httpCode":404,"message":"trace not found",)"
                         R"("httpStatus":"Not Found"}})");
}

TEST_F(JaegerApiTest, V3SearchFindsTheTracesTheFiltersDescribe) {
  const std::string window =
      fmt::format("query.start_time_min={}&query.start_time_max={}",
                  Rfc3339(shared_->now - 3600 * kSecond), Rfc3339(shared_->now + 60 * kSecond));
  auto ids = [&](const std::string& query) {
    HttpAnswer answer = Grafana("/jaeger/api/v3/traces?" + query + "&" + window);
    EXPECT_EQ(answer.status, 200) << query << "\n" << answer.body;
    std::set<std::string> found;
    if (answer.status != 200) return found;
    simdjson::dom::element doc = Json(answer);
    size_t spans = 0;
    for (simdjson::dom::element resource :
         simdjson::dom::array(doc["result"]["resourceSpans"].get_array().value())) {
      for (simdjson::dom::element scope :
           simdjson::dom::array(resource["scopeSpans"].get_array().value())) {
        for (simdjson::dom::element span :
             simdjson::dom::array(scope["spans"].get_array().value())) {
          found.insert(Str(span["traceId"].value()));
          ++spans;
        }
      }
    }
    EXPECT_EQ(spans, 3 * found.size()) << query;
    return found;
  };
  auto expected = [](auto keep) {
    std::set<std::string> out;
    for (const KnownTrace& t : shared_->traces) {
      if (keep(t)) out.insert(t.id());
    }
    return out;
  };
  EXPECT_EQ(ids("query.service_name=frontend&query.attributes=%7B%22error%22%3A%22true%22%7D"),
            expected([](const KnownTrace& t) { return t.failed(); }));
  EXPECT_EQ(ids("query.service_name=frontend&query.operation_name=GET%20%2Fcart&"
                "query.duration_min=60ms&query.search_depth=100&query.raw_traces=true"),
            expected([](const KnownTrace& t) { return t.root_duration() >= 60 * kMilli; }));
  EXPECT_EQ(ids("query.service_name=backend&query.duration_max=1ms"), std::set<std::string>());

  HttpAnswer no_window = Grafana("/jaeger/api/v3/traces?query.service_name=frontend");
  EXPECT_EQ(no_window.status, 400);
  EXPECT_EQ(no_window.body, R"({"error":{"grpcCode":3,"httpCode":400,)"
                            R"("message":"query.start_time_min: required",)"
                            R"("httpStatus":"Bad Request"}})");
}

// A search's answer stops after the trace that reaches the span budget
// (ApiOptions::jaeger_max_search_spans); each known trace has 3 spans.
TEST_F(JaegerApiTest, SearchAnswerStopsAtTheSpanBudget) {
  ApiOptions options;
  options.storage = [] { return shared_->storage.get(); };
  options.pool = shared_->loopback.pool.get();
  options.fs = &shared_->fs;
  options.data_dir = shared_->data_dir;
  options.authenticate = AcceptOnlyToken(kToken);
  options.jaeger_max_search_spans = 5;
  Api api(std::move(options));
  server::HttpRouter router;
  api.AddRoutes(&router);
  server::HttpServerOptions http;
  http.address = "127.0.0.1:0";
  auto started = server::HttpServer::Start(http, std::move(router).ToHandler());
  ASSERT_TRUE(started.ok()) << started.status();
  HttpAnswer classic = Curl({"-H", std::string("Authorization: Bearer ") + kToken,
                             fmt::format("http://127.0.0.1:{}/jaeger/api/traces?service=frontend&"
                                         "limit=20&{}",
                                         (*started)->port(), Window())});
  ASSERT_EQ(classic.status, 200) << classic.body;
  simdjson::dom::element doc = Json(classic);
  std::vector<std::string> ids;
  for (simdjson::dom::element trace : simdjson::dom::array(doc["data"].get_array().value())) {
    ids.push_back(Str(trace["traceID"].value()));
  }
  // 3 spans, under 5: one more trace; 6 spans: no more.
  std::vector<std::string> newest = Expected([](const KnownTrace&) { return true; });
  newest.resize(2);
  EXPECT_EQ(ids, newest);
  EXPECT_EQ(doc["total"].get_int64().value(), 2);
  const std::string v3 = fmt::format(
      "http://127.0.0.1:{}/jaeger/api/v3/traces?query.service_name=frontend&"
      "query.start_time_min={}&query.start_time_max={}",
      (*started)->port(), shared_->now - 3600 * kSecond, shared_->now + 60 * kSecond);
  HttpAnswer answer = Curl({"-H", std::string("Authorization: Bearer ") + kToken, v3});
  ASSERT_EQ(answer.status, 200) << answer.body;
  size_t spans = 0;
  for (size_t at = answer.body.find("\"spanId\""); at != std::string::npos;
       at = answer.body.find("\"spanId\"", at + 1)) {
    ++spans;
  }
  // 6 spans of their own, and 2 links (each names a spanId).
  EXPECT_EQ(spans, 8u);
  (*started)->Shutdown(std::chrono::seconds(5));
}

}  // namespace
}  // namespace strata::api
