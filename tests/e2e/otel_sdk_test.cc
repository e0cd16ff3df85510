// strata serve against real clients: the OpenTelemetry JS SDK's OTLP
// exporters (gRPC, HTTP/protobuf, HTTP/JSON, with and without gzip), curl,
// and strata loadgen; what they were told was stored is read back from the
// Parquet files with DuckDB, and structured logs through GET /api/v1/logs.

#include <regex>
#include <set>

#include "e2e/server_process.h"
#include "fmt/format.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace strata::testing {
namespace {

using ::testing::HasSubstr;

struct SentSpan {
  std::string trace_id, span_id, name;
  friend auto operator<=>(const SentSpan&, const SentSpan&) = default;
};

struct Sent {
  std::set<SentSpan> spans;
  std::vector<std::string> log_bodies;
  std::vector<std::string> metric_names;
};

// Parses the JSON line otel_send.mjs prints.
Sent ParseSent(const std::string& output) {
  Sent sent;
  const std::regex span_re(
      R"re(\{"traceId":"([0-9a-f]{32})","spanId":"([0-9a-f]{16})","name":"([^"]*)"\})re");
  for (auto it = std::sregex_iterator(output.begin(), output.end(), span_re);
       it != std::sregex_iterator(); ++it) {
    sent.spans.insert({(*it)[1].str(), (*it)[2].str(), (*it)[3].str()});
  }
  const std::regex list_re(R"re("(logBodies|metricNames)":\[([^\]]*)\])re");
  for (auto it = std::sregex_iterator(output.begin(), output.end(), list_re);
       it != std::sregex_iterator(); ++it) {
    std::vector<std::string>& into =
        (*it)[1].str() == "logBodies" ? sent.log_bodies : sent.metric_names;
    const std::string items = (*it)[2].str();
    const std::regex item_re(R"re("([^"]*)")re");
    for (auto i = std::sregex_iterator(items.begin(), items.end(), item_re);
         i != std::sregex_iterator(); ++i) {
      into.push_back((*i)[1].str());
    }
  }
  return sent;
}

std::pair<int, std::string> RunSdk(const std::string& protocol, const std::string& target,
                                   const std::string& token, const std::string& run_id, bool gzip) {
  std::vector<std::string> argv = {
      STRATA_NODE, std::string(STRATA_E2E_DIR) + "/otel_send.mjs", protocol, target, token, run_id};
  if (gzip) argv.push_back("gzip");
  return RunToCompletion(argv, ChildEnvironment());
}

std::unique_ptr<query::DuckDbEngine> OpenDuckDb() {
  auto engine = query::DuckDbEngine::Open({});
  EXPECT_TRUE(engine.ok()) << engine.status();
  return engine.ok() ? std::move(*engine) : nullptr;
}

int64_t CountOf(query::DuckDbEngine& engine, const std::string& sql) {
  auto result = engine.Query(sql);
  EXPECT_TRUE(result.ok()) << result.status() << "\n" << sql;
  if (!result.ok() || result->rows.empty() || !result->rows[0][0]) return -1;
  return std::stoll(*result->rows[0][0]);
}

TEST(OtelSdkTest, EveryExporterProtocolStoresWhatTheSdkSent) {
  TempDir dir("e2e-sdk");
  const std::string data = dir.path() + "/data";
  ServerProcess server(data);
  ASSERT_TRUE(server.ready()) << server.output();
  ASSERT_FALSE(server.first_token().empty()) << server.output();

  struct Case {
    std::string protocol;
    bool gzip;
  };
  const std::vector<Case> cases = {{"grpc", false},          {"grpc", true},
                                   {"http/protobuf", false}, {"http/protobuf", true},
                                   {"http/json", false},     {"http/json", true}};
  std::vector<std::pair<std::string, Sent>> runs;
  for (size_t i = 0; i < cases.size(); ++i) {
    const Case& c = cases[i];
    const std::string run_id = fmt::format("run{}", i);
    const std::string target = c.protocol == "grpc" ? server.grpc_address() : server.http_address();
    auto [code, output] = RunSdk(c.protocol, target, server.first_token(), run_id, c.gzip);
    ASSERT_EQ(code, 0) << c.protocol << (c.gzip ? " gzip" : "") << ":\n" << output;
    Sent sent = ParseSent(output);
    ASSERT_EQ(sent.spans.size(), 9u) << output;
    ASSERT_EQ(sent.log_bodies.size(), 5u) << output;
    ASSERT_EQ(sent.metric_names.size(), 3u) << output;
    runs.emplace_back(run_id, std::move(sent));
  }
  // A wrong token is refused and nothing of it is stored.
  auto [bad_code, bad_output] =
      RunSdk("http/protobuf", server.http_address(), "strata_wrong", "denied", false);
  EXPECT_NE(bad_code, 0) << bad_output;
  EXPECT_THAT(bad_output, HasSubstr("401"));
  auto [bad_grpc, bad_grpc_output] =
      RunSdk("grpc", server.grpc_address(), "strata_wrong", "denied", false);
  EXPECT_NE(bad_grpc, 0);
  EXPECT_THAT(bad_grpc_output, HasSubstr("UNAUTHENTICATED"));
  ASSERT_EQ(server.Stop(), 0) << server.output();

  auto engine = OpenDuckDb();
  ASSERT_NE(engine, nullptr);
  ASSERT_TRUE(CreateTableView(*engine, data, "spans"));
  ASSERT_TRUE(CreateTableView(*engine, data, "logs"));
  ASSERT_TRUE(CreateTableView(*engine, data, "metrics"));
  for (const auto& [run_id, sent] : runs) {
    SCOPED_TRACE(run_id);
    auto stored = engine->Query(fmt::format(
        "SELECT lower(hex(trace_id)), lower(hex(span_id)), name FROM spans "
        "WHERE row_kind = 0 AND list_contains(resource_attr_keys, 'strata.run_id') "
        "AND resource_attr_str[list_position(resource_attr_keys, 'strata.run_id')] = '{}'",
        run_id));
    ASSERT_TRUE(stored.ok()) << stored.status();
    std::set<SentSpan> got;
    for (const auto& row : stored->rows) got.insert({*row[0], *row[1], *row[2]});
    EXPECT_EQ(got, sent.spans);
    for (const std::string& body : sent.log_bodies) {
      EXPECT_EQ(CountOf(*engine, fmt::format("SELECT count(*) FROM logs WHERE row_kind = 0 AND "
                                             "body_str = '{}'",
                                             body)),
                1)
          << body;
    }
    for (const std::string& name : sent.metric_names) {
      EXPECT_GE(CountOf(*engine, fmt::format("SELECT count(*) FROM metrics WHERE metric_name = "
                                             "'{}'",
                                             name)),
                1)
          << name;
    }
  }
  EXPECT_EQ(CountOf(*engine,
                    "SELECT count(*) FROM spans WHERE name LIKE '%denied%' OR "
                    "list_contains(resource_attr_str, 'denied')"),
            0);
}

// Structured log records (kvlist and array bodies, every AnyValue type in
// bodies and attributes, unicode) sent by the SDK over each transport come
// back from GET /api/v1/logs exactly as the SDK's own OTLP/JSON serializer
// encodes them, and q= finds strings inside map and array bodies
// (otel_logs_readback.mjs does the sending and the comparison).
TEST(OtelSdkTest, StructuredLogsReadBackTypedThroughTheApiOverEveryTransport) {
  TempDir dir("e2e-sdk-logs");
  const std::string data = dir.path() + "/data";
  // Tokens made before the first boot are loaded at startup, so the read
  // token works at once.
  const std::string ingest = CreateToken(data, "sdk", "ingest");
  const std::string reader = CreateToken(data, "reader", "read");
  ASSERT_FALSE(ingest.empty());
  ASSERT_FALSE(reader.empty());
  ServerProcess server(data);
  ASSERT_TRUE(server.ready()) << server.output();
  for (const std::string protocol : {"grpc", "http/protobuf", "http/json"}) {
    SCOPED_TRACE(protocol);
    const std::string target = protocol == "grpc" ? server.grpc_address() : server.http_address();
    auto [code, output] = RunToCompletion(
        {STRATA_NODE, std::string(STRATA_E2E_DIR) + "/otel_logs_readback.mjs", protocol, target,
         server.api_address(), ingest, reader, "logs-" + protocol},
        ChildEnvironment());
    EXPECT_EQ(code, 0) << output;
    EXPECT_THAT(output, HasSubstr(R"("sent":3,"matched":3)")) << output;
  }
  EXPECT_EQ(server.Stop(), 0) << server.output();
}

}  // namespace
}  // namespace strata::testing
