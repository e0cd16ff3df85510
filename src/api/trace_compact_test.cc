// The trace views a UI needs, end to end: the compact form of a trace
// (GET /api/v1/traces/{id}?format=columns), one span on demand
// (GET /api/v1/traces/{id}/spans/{span_id}) and the search summaries' spans
// per service and root status. Generated traffic (src/workload: five
// services, so spans of one trace differ in resource) plus a trace of
// 2,000 generated spans and a hand-written trace split over three requests
// (every AnyValue type, unicode, a resource without service.name, the same
// resource in two batches, a span stored twice, an orphan, a negative and
// a 2^60 ns duration) are written through the real storage engine; every
// answer is compared with the full OTLP/JSON answer of the same trace and
// with a plain DuckDB query over the Parquet files.

#include <algorithm>
#include <filesystem>
#include <map>
#include <set>
#include <tuple>

#include "absl/strings/ascii.h"
#include "absl/strings/str_replace.h"
#include "api/api_server.h"
#include "api/api_test_server.h"
#include "api/params.h"
#include "fmt/format.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "io/posix_file_system.h"
#include "otlp/decode.h"
#include "query/duckdb_engine.h"
#include "query/query_pool.h"
#include "server/gzip.h"
#include "server/http_testing.h"
#include "simdjson.h"
#include "storage/storage.h"
#include "storage/testing/commit_testing.h"
#include "workload/traffic_generator.h"

namespace strata::api {
namespace {

using server::testing::Curl;
using server::testing::HttpAnswer;

constexpr char kReadToken[] = "read-token";
constexpr uint64_t kT0 = 1'750'000'000'000'000'000ULL;
constexpr int kBigTraceSpans = 2000;
constexpr char kMixedTrace[] = "5eed00005eed00005eed00005eed0001";
constexpr char kDuplicateSpan[] = "00000000000000dd";
constexpr char kAbsentTrace[] = "0123456789abcdef0123456789abcdef";

// Attributes with every AnyValue type, unicode and escapes.
constexpr char kTypedAttributes[] =
    R"({"key":"s","value":{"stringValue":"Grüße ✓ \"q\" 日本"}},)"
    R"({"key":"i","value":{"intValue":"-9223372036854775808"}},)"
    R"({"key":"d","value":{"doubleValue":2.5}},{"key":"b","value":{"boolValue":true}},)"
    R"({"key":"bytes","value":{"bytesValue":"AAEC/w=="}},{"key":"none","value":{}},)"
    R"({"key":"arr","value":{"arrayValue":{"values":[{"stringValue":"a"},{"intValue":"1"},)"
    R"({"arrayValue":{"values":[{"doubleValue":0.5}]}}]}}},)"
    R"({"key":"map","value":{"kvlistValue":{"values":[{"key":"inner","value":)"
    R"({"kvlistValue":{"values":[{"key":"ключ","value":{"stringValue":"значение"}}]}}}]}}})";

// `service` "" has no service.name; "name/pod" is service "name" on
// another pod (a second resource of the same service).
std::string ResourceJson(std::string_view service) {
  std::string_view pod = "pod-1";
  if (const size_t slash = service.find('/'); slash != std::string_view::npos) {
    pod = service.substr(slash + 1);
    service = service.substr(0, slash);
  }
  const std::string service_attribute =
      service.empty()
          ? std::string()
          : fmt::format(R"({{"key":"service.name","value":{{"stringValue":"{}"}}}},)", service);
  return fmt::format(R"({{"attributes":[{}{{"key":"k8s.pod.name","value":{{"stringValue":"{}"}}}},)"
                     R"({{"key":"host.cpus","value":{{"intValue":"64"}}}},{}],)"
                     R"("droppedAttributesCount":2}})",
                     service_attribute, pod, kTypedAttributes);
}

struct SpanSpec {
  std::string span_id;
  std::string parent;  // "" for none
  std::string name;
  int kind = 1;
  int status = 0;
  uint64_t start = 0;
  std::string end;  // decimal, may precede start
};

std::string SpanJson(const SpanSpec& s) {
  return fmt::format(
      R"({{"traceId":"{}","spanId":"{}",{}"name":"{}","kind":{},"startTimeUnixNano":"{}",)"
      R"("endTimeUnixNano":"{}","status":{{"code":{},"message":"m ✓"}},"attributes":[{}],)"
      R"("events":[{{"timeUnixNano":"{}","name":"ev","attributes":[{}]}}],)"
      R"("links":[{{"traceId":"{}","spanId":"00000000000000ff","attributes":[{}]}}]}})",
      kMixedTrace, s.span_id,
      s.parent.empty() ? std::string() : fmt::format(R"("parentSpanId":"{}",)", s.parent), s.name,
      s.kind, s.start, s.end, s.status, kTypedAttributes, s.start + 1, kTypedAttributes,
      kAbsentTrace, kTypedAttributes);
}

// One ResourceSpans per (service, spans); "" is a resource without
// service.name.
std::string RequestJson(const std::vector<std::pair<std::string, std::vector<SpanSpec>>>& parts) {
  std::string resources;
  for (const auto& [service, spans] : parts) {
    std::string joined;
    for (const SpanSpec& s : spans) joined += (joined.empty() ? "" : ",") + SpanJson(s);
    resources +=
        fmt::format(R"({}{{"resource":{},"scopeSpans":[{{"scope":{{"name":"sc ✓","version":"1",)"
                    R"("attributes":[{}]}},"spans":[{}],"schemaUrl":"https://scope"}}],)"
                    R"("schemaUrl":"https://resource"}})",
                    resources.empty() ? "" : ",", ResourceJson(service), kTypedAttributes, joined);
  }
  return fmt::format(R"({{"resourceSpans":[{}]}})", resources);
}

std::string SpanIdText(int n) { return fmt::format("{:016x}", n); }

// The mixed trace: three requests (so three batches).
std::vector<std::string> MixedTraceRequests() {
  const uint64_t t = kT0 + 600 * 1'000'000'000ULL;
  auto span = [&](int id, int parent, std::string name, int status, uint64_t start,
                  int64_t duration) {
    return SpanSpec{SpanIdText(id),
                    parent == 0 ? "" : SpanIdText(parent),
                    std::move(name),
                    1 + id % 5,
                    status,
                    start,
                    std::to_string(static_cast<int64_t>(start) + duration)};
  };
  std::vector<SpanSpec> alpha_a = {span(1, 0, "root ✓", 2, t, 5'000'000)};
  for (int i = 2; i < 40; ++i) alpha_a.push_back(span(i, 1, "alpha work", i % 3, t + i, 1000 + i));
  std::vector<SpanSpec> beta;
  for (int i = 40; i < 60; ++i) beta.push_back(span(i, 2, "béta call", 0, t + i * 100, 50));
  std::vector<SpanSpec> alpha_b;
  for (int i = 60; i < 80; ++i) alpha_b.push_back(span(i, 40, "alpha work", 1, t + i * 10, 7));
  SpanSpec duplicate = span(0xdd, 1, "sent twice", 0, t + 5, 99);
  alpha_b.push_back(duplicate);
  std::vector<SpanSpec> anonymous = {
      span(80, 0x77, "orphan", 0, t + 42, 10),                // its parent was never sent
      span(81, 1, "ends before it starts", 0, t + 50, -20),   // negative duration
      span(82, 1, "very long", 0, t + 60, int64_t{1} << 60),  // past 2^53 ns
      span(83, 1, "same start", 0, t + 60, 3), span(84, 1, "same start", 0, t + 60, 3)};
  const std::vector<SpanSpec> other_pod = {span(85, 1, "alpha work", 0, t + 70, 11),
                                           span(86, 85, "alpha work", 2, t + 71, 5)};
  return {RequestJson({{"alpha", alpha_a}, {"béta ✓", beta}}), RequestJson({{"alpha", alpha_b}}),
          RequestJson({{"", anonymous}, {"alpha", {duplicate}}, {"alpha/pod-2", other_pod}})};
}

// What the full OTLP/JSON answer says of one span row.
struct FullSpan {
  std::string span_id;
  std::string parent_span_id;
  std::string service;
  std::string name;
  int64_t kind = 0;
  int64_t status_code = 0;
  uint64_t start = 0;
  int64_t duration = 0;
  // Minified by simdjson; "{}" for an absent resource or scope.
  std::string resource;
  std::string scope;
  std::string span;
  std::string resource_schema_url;
  std::string scope_schema_url;
};

std::string MinifiedOr(simdjson::dom::element parent, std::string_view key,
                       std::string_view absent) {
  simdjson::dom::element value;
  if (parent[key].get(value) != simdjson::SUCCESS) return std::string(absent);
  return simdjson::minify(value);
}
std::string StringOr(simdjson::dom::element parent, std::string_view key) {
  std::string_view value;
  if (parent[key].get_string().get(value) != simdjson::SUCCESS) return "";
  return std::string(value);
}
int64_t IntOr(simdjson::dom::element parent, std::string_view key) {
  int64_t value = 0;
  if (parent[key].get_int64().get(value) != simdjson::SUCCESS) return 0;
  return value;
}
// A nanosecond value of the compact form: a number, or a decimal string
// past 2^53.
int64_t Nanos(simdjson::dom::element value) {
  int64_t number = 0;
  if (value.get_int64().get(number) == simdjson::SUCCESS) {
    EXPECT_LE(std::abs(number), (int64_t{1} << 53) - 1);
    return number;
  }
  const std::string text(value.get_string().value());
  const int64_t parsed = std::stoll(text);
  EXPECT_GT(std::abs(parsed), (int64_t{1} << 53) - 1) << text;
  return parsed;
}

std::string ServiceOf(simdjson::dom::element resource) {
  simdjson::dom::array attributes;
  if (resource["attributes"].get_array().get(attributes) != simdjson::SUCCESS) return "";
  for (simdjson::dom::element kv : attributes) {
    if (StringOr(kv, "key") != "service.name") continue;
    return StringOr(kv["value"].value(), "stringValue");
  }
  return "";
}

// Every span row of a full answer, ordered as the compact form orders them
// (start time, then span id).
std::vector<FullSpan> ParseFull(const std::string& body) {
  std::vector<FullSpan> out;
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  EXPECT_EQ(parser.parse(body).get(doc), simdjson::SUCCESS);
  simdjson::dom::array resource_spans;
  if (doc["resourceSpans"].get_array().get(resource_spans) != simdjson::SUCCESS) return out;
  for (simdjson::dom::element rs : resource_spans) {
    simdjson::dom::element resource;
    const bool has_resource = rs["resource"].get(resource) == simdjson::SUCCESS;
    for (simdjson::dom::element ss : simdjson::dom::array(rs["scopeSpans"].get_array().value())) {
      for (simdjson::dom::element s : simdjson::dom::array(ss["spans"].get_array().value())) {
        FullSpan f;
        f.span_id = StringOr(s, "spanId");
        f.parent_span_id = StringOr(s, "parentSpanId");
        f.service = has_resource ? ServiceOf(resource) : "";
        f.name = StringOr(s, "name");
        f.kind = IntOr(s, "kind");
        simdjson::dom::element status;
        if (s["status"].get(status) == simdjson::SUCCESS) f.status_code = IntOr(status, "code");
        f.start = std::stoull("0" + StringOr(s, "startTimeUnixNano"));
        f.duration =
            static_cast<int64_t>(std::stoull("0" + StringOr(s, "endTimeUnixNano")) - f.start);
        f.resource = MinifiedOr(rs, "resource", "{}");
        f.scope = MinifiedOr(ss, "scope", "{}");
        f.span = simdjson::minify(s);
        f.resource_schema_url = StringOr(rs, "schemaUrl");
        f.scope_schema_url = StringOr(ss, "schemaUrl");
        out.push_back(std::move(f));
      }
    }
  }
  std::stable_sort(out.begin(), out.end(), [](const FullSpan& a, const FullSpan& b) {
    return std::tie(a.start, a.span_id) < std::tie(b.start, b.span_id);
  });
  return out;
}

// One span row of the compact form, resolved through its tables.
struct CompactSpan {
  std::string span_id;
  std::string parent_span_id;
  std::string service;
  std::string name;
  int64_t kind = 0;
  int64_t status_code = 0;
  uint64_t start = 0;
  int64_t duration = 0;
  std::string resource;  // minified
  bool operator==(const CompactSpan&) const = default;
};

std::ostream& operator<<(std::ostream& os, const CompactSpan& s) {
  return os << fmt::format("{{{} parent={} service={} name={} kind={} status={} start={} dur={}}}",
                           s.span_id, s.parent_span_id, s.service, s.name, s.kind, s.status_code,
                           s.start, s.duration);
}

struct Compact {
  std::string trace_id;
  uint64_t start = 0;
  int64_t span_count = 0;
  size_t resources = 0;
  std::vector<CompactSpan> spans;
};

Compact ParseCompact(const std::string& body) {
  Compact out;
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  EXPECT_EQ(parser.parse(body).get(doc), simdjson::SUCCESS) << body.substr(0, 200);
  out.trace_id = StringOr(doc, "trace_id");
  out.start = std::stoull(StringOr(doc, "start_time_unix_nano"));
  out.span_count = IntOr(doc, "span_count");
  std::vector<std::string> resources, services, names;
  for (simdjson::dom::element r : simdjson::dom::array(doc["resources"].get_array().value())) {
    resources.push_back(simdjson::minify(r));
  }
  for (simdjson::dom::element s : simdjson::dom::array(doc["services"].get_array().value())) {
    services.emplace_back(s.get_string().value());
  }
  for (simdjson::dom::element n : simdjson::dom::array(doc["names"].get_array().value())) {
    names.emplace_back(n.get_string().value());
  }
  out.resources = resources.size();
  simdjson::dom::element spans = doc["spans"].value();
  auto column = [&](const char* key) {
    std::vector<simdjson::dom::element> values;
    for (simdjson::dom::element v : simdjson::dom::array(spans[key].get_array().value()))
      values.push_back(v);
    EXPECT_EQ(values.size(), static_cast<size_t>(out.span_count)) << key;
    return values;
  };
  const auto span_id = column("span_id"), parent = column("parent_span_id"),
             resource = column("resource"), service = column("service"), name = column("name"),
             kind = column("kind"), status = column("status_code"),
             start = column("start_offset_nano"), duration = column("duration_nano");
  if (::testing::Test::HasFailure()) return out;
  for (int64_t i = 0; i < out.span_count; ++i) {
    CompactSpan s;
    s.span_id = std::string(span_id[i].get_string().value());
    s.parent_span_id = std::string(parent[i].get_string().value());
    s.resource = resources.at(resource[i].get_uint64().value());
    s.service = services.at(service[i].get_uint64().value());
    s.name = names.at(name[i].get_uint64().value());
    s.kind = kind[i].get_int64().value();
    s.status_code = status[i].get_int64().value();
    s.start = out.start + static_cast<uint64_t>(Nanos(start[i]));
    s.duration = Nanos(duration[i]);
    out.spans.push_back(std::move(s));
  }
  return out;
}

CompactSpan AsCompact(const FullSpan& f) {
  return CompactSpan{f.span_id,     f.parent_span_id, f.service,  f.name,    f.kind,
                     f.status_code, f.start,          f.duration, f.resource};
}

class TraceCompactTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { shared_ = new Shared(); }
  static void TearDownTestSuite() {
    delete shared_;
    shared_ = nullptr;
  }

  struct Shared {
    Shared() {
      data_dir = tmp.path() + "/data";
      auto opened = storage::Storage::Open(fs, data_dir);
      EXPECT_TRUE(opened.ok()) << opened.status();
      storage = *std::move(opened);

      workload::TrafficOptions traffic;
      traffic.seed = 23;
      traffic.start_time_unix_nano = kT0;
      workload::TrafficGenerator generator(traffic);
      for (int i = 0; i < 3; ++i) Write(generator.Traces(400));
      workload::TrafficOptions big = traffic;
      big.seed = 29;
      big.start_time_unix_nano = kT0 + 300 * 1'000'000'000ULL;
      big.min_spans_per_trace = kBigTraceSpans;
      big.max_spans_per_trace = kBigTraceSpans;
      workload::TrafficGenerator big_generator(big);
      Write(big_generator.Traces(1));
      for (const std::string& request : MixedTraceRequests()) {
        auto batch = std::make_unique<otlp::TraceBatch>();
        const absl::Status decoded = otlp::DecodeTracesJson(request, batch.get());
        EXPECT_TRUE(decoded.ok()) << decoded;
        EXPECT_TRUE(batch->rejected.empty()) << batch->rejected.first_message;
        Write(std::move(batch));
      }

      test_support::LoopbackApi loopback =
          test_support::StartLoopbackApi(storage.get(), &fs, data_dir, std::string(kReadToken));
      pool = std::move(loopback.pool);
      api = std::move(loopback.api);
      http_server = std::move(loopback.http_server);

      auto opened_engine = query::DuckDbEngine::Open({});
      EXPECT_TRUE(opened_engine.ok());
      engine = *std::move(opened_engine);
      std::string files;
      for (const auto& entry : std::filesystem::recursive_directory_iterator(data_dir)) {
        if (entry.path().filename() == "spans.parquet") {
          files += (files.empty() ? "'" : ",'") + entry.path().string() + "'";
        }
      }
      auto created = engine->Query(fmt::format(
          "CREATE VIEW spans AS SELECT * FROM read_parquet([{}]) WHERE row_kind = 0", files));
      EXPECT_TRUE(created.ok()) << created.status();
    }
    ~Shared() {
      if (http_server != nullptr) http_server->Shutdown(std::chrono::seconds(5));
      http_server.reset();
      api.reset();
      pool.reset();
      if (storage != nullptr) storage->Shutdown(std::chrono::seconds(5));
      storage.reset();
    }

    void Write(std::unique_ptr<otlp::TraceBatch> batch) {
      storage::WriteRequest request;
      request.rows = batch->spans.size();
      request.bytes = 1 << 20;
      request.traces = std::move(batch);
      const absl::Status written = storage->Write(std::move(request));
      EXPECT_TRUE(written.ok()) << written;
    }

    PosixFileSystem fs;
    storage::testing::ScopedTempDir tmp{"trace_compact"};
    std::string data_dir;
    std::unique_ptr<storage::Storage> storage;
    std::unique_ptr<query::QueryPool> pool;
    std::unique_ptr<Api> api;
    std::unique_ptr<server::HttpServer> http_server;
    std::unique_ptr<query::DuckDbEngine> engine;
  };

  static HttpAnswer Get(const std::string& target, std::vector<std::string> headers = {}) {
    headers.insert(headers.begin(), std::string("Authorization: Bearer ") + kReadToken);
    return server::testing::Fetch(
        "GET", fmt::format("http://127.0.0.1:{}{}", shared_->http_server->port(), target), headers);
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

  // The traces the tests compare: the mixed one, the big one, and the
  // first generated ones by id.
  static std::vector<std::string> SampleTraces() {
    std::vector<std::string> ids = {kMixedTrace};
    for (const auto& row : Truth(fmt::format(
             "SELECT lower(hex(trace_id)) FROM spans GROUP BY 1 ORDER BY count(*) = {} DESC, 1 "
             "LIMIT 25",
             kBigTraceSpans))) {
      ids.push_back(row[0]);
    }
    return ids;
  }

  static Shared* shared_;
};

TraceCompactTest::Shared* TraceCompactTest::shared_ = nullptr;

TEST_F(TraceCompactTest, DataHasTheTracesTheTestsNeed) {
  const auto big = Truth(fmt::format(
      "SELECT count(DISTINCT service_name) FROM spans GROUP BY trace_id HAVING count(*) = {}",
      kBigTraceSpans));
  ASSERT_EQ(big.size(), 1u);
  EXPECT_GE(std::stoi(big[0][0]), 3);  // spans of several resources
  EXPECT_EQ(Truth(fmt::format("SELECT count(*), count(DISTINCT filename) FROM read_parquet("
                              "'{}/telemetry/days/*/*.batch/spans.parquet', filename = true) "
                              "WHERE row_kind = 0 AND trace_id = from_hex('{}')",
                              shared_->data_dir, kMixedTrace))[0],
            (std::vector<std::string>{"88", "3"}));
}

// The compact form holds exactly the full answer's spans, in (start, span
// id) order, with each one's resource, service, name, kind, status, start
// and duration.
TEST_F(TraceCompactTest, CompactFormMatchesTheFullAnswer) {
  for (const std::string& id : SampleTraces()) {
    HttpAnswer full = Get("/api/v1/traces/" + id);
    ASSERT_EQ(full.status, 200) << full.body;
    HttpAnswer compact = Get("/api/v1/traces/" + id + "?format=columns");
    ASSERT_EQ(compact.status, 200) << compact.body;
    EXPECT_EQ(compact.Header("content-type"), "application/json");
    const std::vector<FullSpan> expected = ParseFull(full.body);
    const Compact got = ParseCompact(compact.body);
    EXPECT_EQ(got.trace_id, id);
    ASSERT_EQ(got.spans.size(), expected.size()) << id;
    uint64_t earliest = UINT64_MAX;
    std::set<std::string> distinct_resources;
    for (size_t i = 0; i < expected.size(); ++i) {
      EXPECT_EQ(got.spans[i], AsCompact(expected[i])) << id << " row " << i;
      earliest = std::min(earliest, expected[i].start);
      distinct_resources.insert(expected[i].resource);
    }
    EXPECT_EQ(got.start, earliest);
    // Each distinct resource once, every one of them used.
    EXPECT_EQ(got.resources, distinct_resources.size()) << id;
  }
}

// Against the stored rows: a plain DuckDB query over every spans.parquet.
TEST_F(TraceCompactTest, CompactFormMatchesDuckDb) {
  for (const std::string& id : SampleTraces()) {
    HttpAnswer compact = Get("/api/v1/traces/" + id + "?format=columns");
    ASSERT_EQ(compact.status, 200) << compact.body;
    const Compact got = ParseCompact(compact.body);
    const auto truth = Truth(
        fmt::format("SELECT lower(hex(span_id)), coalesce(lower(hex(parent_span_id)), ''),"
                    " coalesce(service_name, ''), name, kind, status_code, start_time_unix_nano,"
                    " duration_nano FROM spans WHERE trace_id = from_hex('{}')"
                    " ORDER BY start_time_unix_nano, span_id",
                    id));
    ASSERT_EQ(got.spans.size(), truth.size()) << id;
    for (size_t i = 0; i < truth.size(); ++i) {
      const CompactSpan& s = got.spans[i];
      EXPECT_EQ((std::vector<std::string>{s.span_id, s.parent_span_id, s.service, s.name,
                                          std::to_string(s.kind), std::to_string(s.status_code),
                                          std::to_string(s.start), std::to_string(s.duration)}),
                truth[i])
          << id << " row " << i;
    }
  }
}

// The mixed trace as it was sent: every span id (the one sent twice,
// twice), four distinct resources although six resource rows were stored
// (alpha's on pod-1 in all three batches), three services (alpha on two
// resources), the unnamed service as "", and the 2^60 ns duration as a
// string.
TEST_F(TraceCompactTest, MixedTraceAsSent) {
  HttpAnswer compact = Get(std::string("/api/v1/traces/") + kMixedTrace + "?format=columns");
  ASSERT_EQ(compact.status, 200) << compact.body;
  const Compact got = ParseCompact(compact.body);
  std::multiset<std::string> sent;
  for (const std::string& request : MixedTraceRequests()) {
    otlp::TraceBatch batch;
    ASSERT_TRUE(otlp::DecodeTracesJson(request, &batch).ok());
    for (const otlp::SpanId& span_id : batch.spans.span_id) {
      sent.insert(fmt::format("{:02x}", fmt::join(span_id, "")));
    }
  }
  std::multiset<std::string> answered;
  std::set<std::string> services;
  for (const CompactSpan& s : got.spans) {
    answered.insert(s.span_id);
    services.insert(s.service);
  }
  EXPECT_EQ(answered, sent);
  EXPECT_EQ(answered.count(kDuplicateSpan), 2u);
  EXPECT_EQ(got.resources, 4u);
  EXPECT_EQ(services, (std::set<std::string>{"", "alpha", "béta ✓"}));
  EXPECT_THAT(compact.body, ::testing::HasSubstr("\"1152921504606846976\""));
  EXPECT_THAT(compact.body, ::testing::HasSubstr(",-20,"));
}

// Each span's detail equals that span in the full answer: the span object
// with its attributes, events and links, its scope and its resource (and
// both schema URLs).
TEST_F(TraceCompactTest, SpanDetailMatchesTheFullAnswer) {
  std::vector<std::string> ids = SampleTraces();
  ids.resize(std::min<size_t>(ids.size(), 10));  // one request per span: a few traces suffice
  for (const std::string& id : ids) {
    HttpAnswer full = Get("/api/v1/traces/" + id);
    ASSERT_EQ(full.status, 200) << full.body;
    std::multimap<std::string, const FullSpan*> by_id;
    const std::vector<FullSpan> spans = ParseFull(full.body);
    for (const FullSpan& f : spans) by_id.emplace(f.span_id, &f);
    // Every span of the small traces, every 197th of the big one.
    const size_t step = spans.size() > 500 ? 197 : 1;
    for (size_t i = 0; i < spans.size(); i += step) {
      const std::string& span_id = spans[i].span_id;
      HttpAnswer detail = Get("/api/v1/traces/" + id + "/spans/" + span_id);
      ASSERT_EQ(detail.status, 200) << detail.body;
      const std::vector<FullSpan> got = ParseFull(detail.body);
      std::multiset<std::string> got_rows, expected_rows;
      for (const FullSpan& g : got) {
        got_rows.insert(g.resource + g.resource_schema_url + g.scope + g.scope_schema_url + g.span);
      }
      auto [begin, end] = by_id.equal_range(span_id);
      for (auto it = begin; it != end; ++it) {
        const FullSpan& e = *it->second;
        expected_rows.insert(e.resource + e.resource_schema_url + e.scope + e.scope_schema_url +
                             e.span);
      }
      EXPECT_EQ(got_rows, expected_rows) << id << "/" << span_id;
    }
  }
}

TEST_F(TraceCompactTest, SpanDetailOfTheSpanSentTwiceHasBoth) {
  HttpAnswer detail =
      Get(std::string("/api/v1/traces/") + kMixedTrace + "/spans/" + kDuplicateSpan);
  ASSERT_EQ(detail.status, 200) << detail.body;
  EXPECT_EQ(ParseFull(detail.body).size(), 2u);
}

// The texts span search looks in (span_text_search.h), read from a span
// of the OTLP/JSON answer: name, status message, attribute keys and values
// (strings, ints, bools; arrays and kvlists, keys too) of the span, its
// events (and their names) and its links. Doubles are left out: the
// needles below never look like one.
void CollectValueTexts(simdjson::dom::element value, std::vector<std::string>* out) {
  std::string_view text;
  bool flag = false;
  simdjson::dom::element inner;
  if (value["stringValue"].get_string().get(text) == simdjson::SUCCESS ||
      value["intValue"].get_string().get(text) == simdjson::SUCCESS) {
    out->emplace_back(text);
  } else if (value["boolValue"].get_bool().get(flag) == simdjson::SUCCESS) {
    out->emplace_back(flag ? "true" : "false");
  } else if (value["arrayValue"].get(inner) == simdjson::SUCCESS) {
    simdjson::dom::array values;
    if (inner["values"].get_array().get(values) != simdjson::SUCCESS) return;
    for (simdjson::dom::element v : values) CollectValueTexts(v, out);
  } else if (value["kvlistValue"].get(inner) == simdjson::SUCCESS) {
    simdjson::dom::array values;
    if (inner["values"].get_array().get(values) != simdjson::SUCCESS) return;
    for (simdjson::dom::element kv : values) {
      out->push_back(StringOr(kv, "key"));
      simdjson::dom::element v;
      if (kv["value"].get(v) == simdjson::SUCCESS) CollectValueTexts(v, out);
    }
  }
}
void CollectAttributeTexts(simdjson::dom::element holder, std::vector<std::string>* out) {
  simdjson::dom::array attributes;
  if (holder["attributes"].get_array().get(attributes) != simdjson::SUCCESS) return;
  for (simdjson::dom::element kv : attributes) {
    out->push_back(StringOr(kv, "key"));
    simdjson::dom::element v;
    if (kv["value"].get(v) == simdjson::SUCCESS) CollectValueTexts(v, out);
  }
}
std::vector<std::string> SpanTexts(const std::string& span_json) {
  simdjson::dom::parser parser;
  simdjson::dom::element span;
  EXPECT_EQ(parser.parse(span_json).get(span), simdjson::SUCCESS);
  std::vector<std::string> out = {StringOr(span, "name")};
  simdjson::dom::element status;
  if (span["status"].get(status) == simdjson::SUCCESS) out.push_back(StringOr(status, "message"));
  CollectAttributeTexts(span, &out);
  for (const char* list : {"events", "links"}) {
    simdjson::dom::array items;
    if (span[list].get_array().get(items) != simdjson::SUCCESS) continue;
    for (simdjson::dom::element item : items) {
      if (std::string_view(list) == "events") out.push_back(StringOr(item, "name"));
      CollectAttributeTexts(item, &out);
    }
  }
  return out;
}

// GET /api/v1/traces/{id}/spans?q= names exactly the spans whose texts in
// the full answer hold the needle, ignoring ASCII case; needles are cut
// from those texts (in upper case) so most match some spans and not
// others.
TEST_F(TraceCompactTest, SpanSearchNamesTheSpansWhoseTextsHoldIt) {
  std::vector<std::string> ids = SampleTraces();
  ids.resize(std::min<size_t>(ids.size(), 8));
  int matched = 0;
  for (const std::string& id : ids) {
    HttpAnswer full = Get("/api/v1/traces/" + id);
    ASSERT_EQ(full.status, 200) << full.body;
    const std::vector<FullSpan> spans = ParseFull(full.body);
    std::vector<std::vector<std::string>> texts;
    for (const FullSpan& f : spans) {
      texts.push_back(SpanTexts(f.span));
      for (std::string& t : texts.back()) t = absl::AsciiStrToLower(t);
    }
    // Needles: four bytes from the middle of some span's texts, with a
    // letter other than 'e' (no double's text holds such a needle).
    std::set<std::string> needles = {"no such text anywhere"};
    for (size_t i = 0; i < texts.size() && needles.size() < 6; i += 1 + texts.size() / 5) {
      for (const std::string& t : texts[i]) {
        if (t.size() < 6) continue;
        const std::string cut = t.substr(t.size() / 2 - 2, 4);
        if (std::any_of(cut.begin(), cut.end(),
                        [](char c) { return absl::ascii_isalpha(c) && c != 'e'; })) {
          needles.insert(cut);
          break;
        }
      }
    }
    for (const std::string& needle : needles) {
      std::set<std::string> expected;
      for (size_t i = 0; i < spans.size(); ++i) {
        for (const std::string& t : texts[i]) {
          if (t.find(needle) != std::string::npos) expected.insert(spans[i].span_id);
        }
      }
      const std::string upper = absl::AsciiStrToUpper(needle);
      HttpAnswer answer =
          Get("/api/v1/traces/" + id + "/spans?q=" +
              absl::StrReplaceAll(
                  upper, {{" ", "%20"}, {"&", "%26"}, {"+", "%2B"}, {"#", "%23"}, {"%", "%25"}}));
      ASSERT_EQ(answer.status, 200) << answer.body;
      simdjson::dom::parser parser;
      simdjson::dom::element doc;
      ASSERT_EQ(parser.parse(answer.body).get(doc), simdjson::SUCCESS) << answer.body;
      std::set<std::string> got;
      std::vector<std::string> listed;
      for (simdjson::dom::element e : simdjson::dom::array(doc["span_ids"].get_array().value())) {
        listed.emplace_back(e.get_string().value());
        got.insert(listed.back());
      }
      EXPECT_EQ(listed.size(), got.size()) << "each id once";
      EXPECT_EQ(got, expected) << id << " q=" << upper;
      if (!expected.empty() && expected.size() < spans.size()) ++matched;
    }
  }
  EXPECT_GE(matched, 5);
  // No text, or one too long, is a 400.
  const std::string trace = std::string("/api/v1/traces/") + kMixedTrace + "/spans";
  EXPECT_EQ(Get(trace).status, 400);
  EXPECT_EQ(Get(trace + "?q=").status, 400);
  EXPECT_EQ(Get(trace + "?q=" + std::string(257, 'x')).status, 400);
  EXPECT_EQ(Get(trace + "?q=x&other=1").status, 400);
  EXPECT_EQ(Get(std::string("/api/v1/traces/") + kAbsentTrace + "/spans?q=x").status, 404);
}

TEST_F(TraceCompactTest, BadAndAbsentIdsAndPaths) {
  const std::string trace = std::string("/api/v1/traces/") + kMixedTrace;
  struct Case {
    std::string target;
    int status;
    std::string body;  // "" to check the status only
  };
  const std::vector<Case> cases = {
      {trace + "/spans/0000000000000abc", 404,
       fmt::format(R"({{"error":"span 0000000000000abc not found in trace {}"}})", kMixedTrace)},
      {std::string("/api/v1/traces/") + kAbsentTrace + "/spans/0000000000000001", 404,
       fmt::format(R"({{"error":"trace {} not found"}})", kAbsentTrace)},
      {std::string("/api/v1/traces/") + kAbsentTrace + "?format=columns", 404,
       fmt::format(R"({{"error":"trace {} not found"}})", kAbsentTrace)},
      {trace + "/spans/xyz", 400, R"({"error":"span_id: not 16 hex digits: \"xyz\""})"},
      {trace + "/spans/0000000000000000", 400,
       R"({"error":"span_id: the all-zero span id is invalid"})"},
      {"/api/v1/traces/xyz/spans/0000000000000001", 400,
       R"({"error":"trace_id: not 32 hex digits: \"xyz\""})"},
      {trace + "?format=proto", 400, R"({"error":"format: not otlp or columns: \"proto\""})"},
      {trace + "/spans/0000000000000001?format=columns", 400,
       R"({"error":"format: unknown parameter"})"},
      {trace + "/spans/0000000000000001/more", 404, ""},
      {trace + "/events/0000000000000001", 404, ""},
  };
  for (const Case& c : cases) {
    HttpAnswer answer = Get(c.target);
    EXPECT_EQ(answer.status, c.status) << c.target << " " << answer.body;
    if (!c.body.empty()) EXPECT_EQ(answer.body, c.body) << c.target;
  }
  // The default form is the OTLP one, and format=otlp names it.
  EXPECT_EQ(Get(trace + "?format=otlp").body, Get(trace).body);
}

// A client that accepts gzip gets large answers compressed; the bytes
// inflate to the answer it would get without asking.
TEST_F(TraceCompactTest, LargeAnswersAreGzippedWhenAccepted) {
  const std::string target = std::string("/api/v1/traces/") + kMixedTrace + "?format=columns";
  HttpAnswer plain = Get(target);
  ASSERT_EQ(plain.status, 200);
  EXPECT_EQ(plain.Header("content-encoding"), "");
  EXPECT_EQ(plain.Header("vary"), "Accept-Encoding");
  HttpAnswer gzipped = Get(target, {"Accept-Encoding: br;q=1.0, gzip;q=0.5"});
  ASSERT_EQ(gzipped.status, 200);
  EXPECT_EQ(gzipped.Header("content-encoding"), "gzip");
  EXPECT_LT(gzipped.body.size(), plain.body.size());
  auto inflated = server::GunzipLimited(gzipped.body, 64 << 20);
  ASSERT_TRUE(inflated.ok()) << inflated.status();
  EXPECT_EQ(*inflated, plain.body);
  HttpAnswer refused = Get(target, {"Accept-Encoding: gzip;q=0, *"});
  EXPECT_EQ(refused.Header("content-encoding"), "");
  EXPECT_EQ(refused.body, plain.body);
  // Small answers go out as they are.
  HttpAnswer small = Get(std::string("/api/v1/traces/") + kAbsentTrace, {"Accept-Encoding: gzip"});
  EXPECT_EQ(small.status, 404);
  EXPECT_EQ(small.Header("content-encoding"), "");
}

// The summaries' spans per service and root status code equal a plain
// query over the files, also for a window that cuts the mixed trace.
TEST_F(TraceCompactTest, SummariesServiceSpansAndRootStatusMatchDuckDb) {
  const uint64_t mixed = kT0 + 600 * 1'000'000'000ULL;
  const std::vector<std::pair<uint64_t, uint64_t>> windows = {
      {kT0 - 3'600'000'000'000ULL, kT0 + 3'600'000'000'000ULL}, {mixed + 40, mixed + 5000}};
  for (const auto& [start, end] : windows) {
    HttpAnswer answer = Get(fmt::format("/api/v1/traces?limit=1000&start={}&end={}", start, end));
    ASSERT_EQ(answer.status, 200) << answer.body;
    const std::string where =
        fmt::format("start_time_unix_nano >= {} AND start_time_unix_nano < {}", start, end);
    std::map<std::string, std::string> expected_services, expected_root;
    for (const auto& row : Truth(fmt::format(
             "SELECT lower(hex(trace_id)), string_agg(s || '=' || n, ';' ORDER BY s) FROM ("
             "SELECT trace_id, coalesce(service_name, '') AS s, count(*) AS n FROM spans"
             " WHERE {} GROUP BY ALL) GROUP BY 1",
             where))) {
      expected_services[row[0]] = row[1];
    }
    for (const auto& row : Truth(fmt::format(
             "SELECT lower(hex(trace_id)), arg_min(status_code, (parent_span_id IS NOT NULL,"
             " start_time_unix_nano, span_id)) FROM spans WHERE {} GROUP BY 1",
             where))) {
      expected_root[row[0]] = row[1];
    }
    simdjson::dom::parser parser;
    simdjson::dom::element doc = parser.parse(answer.body).value();
    size_t seen = 0;
    for (simdjson::dom::element t : simdjson::dom::array(doc["traces"].get_array().value())) {
      const std::string id = StringOr(t, "trace_id");
      std::string services;
      int64_t total = 0;
      for (simdjson::dom::element s :
           simdjson::dom::array(t["service_spans"].get_array().value())) {
        const int64_t spans = IntOr(s, "spans");
        services +=
            fmt::format("{}{}={}", services.empty() ? "" : ";", StringOr(s, "service"), spans);
        total += spans;
      }
      EXPECT_EQ(services, expected_services[id]) << id;
      EXPECT_EQ(total, IntOr(t, "span_count")) << id;
      EXPECT_EQ(std::to_string(IntOr(t, "root_status_code")), expected_root[id]) << id;
      ++seen;
    }
    EXPECT_EQ(seen, expected_services.size());
    EXPECT_GT(seen, 0u);
  }
}

}  // namespace
}  // namespace strata::api
