// The query side of a running `strata serve`, as a user reaches it: the REST
// API through curl and `strata sql`, with a read token created from the
// shell, while strata loadgen is ingesting. Answers are checked against
// DuckDB reading the data directory's Parquet files directly.

#include <chrono>
#include <cstdlib>
#include <regex>
#include <thread>

#include "cli/subprocess.h"
#include "e2e/server_process.h"
#include "fmt/format.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace strata::testing {
namespace {

using ::testing::HasSubstr;

std::vector<std::string> Get(const std::string& url, const std::string& token) {
  std::vector<std::string> args = {url};
  if (!token.empty()) args.insert(args.begin(), {"-H", "Authorization: Bearer " + token});
  return args;
}

// The number in the single-value answer of POST /api/v1/sql, or -1.
int64_t SqlCount(const std::string& api, const std::string& token, const std::string& sql) {
  auto [status, body] =
      Curl({"-X", "POST", "-H", "Authorization: Bearer " + token, "-H", "Content-Type: text/plain",
            "--data-binary", sql, "http://" + api + "/api/v1/sql"});
  std::smatch match;
  if (status != 200 || !std::regex_search(body, match, std::regex(R"("rows":\[\[(\d+)\]\])"))) {
    ADD_FAILURE() << status << " " << body;
    return -1;
  }
  return std::stoll(match[1].str());
}

size_t Occurrences(const std::string& text, const std::string& needle) {
  size_t n = 0;
  for (size_t at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1)) {
    ++n;
  }
  return n;
}

TEST(QueryApiTest, TracesSqlAndAuthAgreeWithDuckDbWhileIngesting) {
  TempDir dir("e2e-query");
  const std::string data = dir.path() + "/data";
  // The ground truth below reads the data directory's files directly while
  // the server runs; compaction would retire and delete batches under it
  // (the server's own queries pin a Snapshot, the test's glob cannot).
  ServerProcess server(data, {"--compaction-min-inputs", "0"});
  ASSERT_TRUE(server.ready()) << server.output();
  const std::string api = server.api_address();
  const std::string reader = CreateToken(data, "reader", "read");
  ASSERT_FALSE(reader.empty());

  // The running server loads new tokens within its refresh interval (1 s);
  // wait up to 20 s for the read token to be accepted.
  const std::string services = "http://" + api + "/api/v1/services";
  int status = 401;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (status == 401 && std::chrono::steady_clock::now() < deadline) {
    status = Curl(Get(services, reader)).first;
    if (status == 401) std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  ASSERT_EQ(status, 200);
  EXPECT_EQ(Curl(Get(services, "")).first, 401);
  EXPECT_EQ(Curl(Get(services, server.first_token())).first, 403);  // ingest scope only

  // Queries while loadgen ingests: every answer is 200 and the span count
  // never goes down (each query pins one Snapshot).
  Subprocess loadgen(
      {STRATA_BINARY, "loadgen", "--protocol", "http/protobuf", "--target", server.http_address(),
       "--token", server.first_token(), "--signals", "traces,logs", "--request-spans", "200",
       "--concurrency", "8", "--duration", "4", "--quiet"},
      ChildEnvironment());
  int64_t last = 0;
  int queries = 0;
  // loadgen runs 4 s and then prints its JSON report; query until then (at
  // most 30 s, in case it failed without a report).
  const auto load_deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (!loadgen.WaitForOutput("}", std::chrono::milliseconds(20)) &&
         std::chrono::steady_clock::now() < load_deadline) {
    const int64_t count = SqlCount(api, reader, "SELECT count(*) FROM spans");
    ASSERT_GE(count, last);
    last = count;
    ++queries;
  }
  ASSERT_EQ(loadgen.Wait(std::chrono::seconds(30)), 0) << loadgen.output();
  EXPECT_GT(queries, 3);

  // Ground truth straight from the files.
  auto engine = query::DuckDbEngine::Open({});
  ASSERT_TRUE(engine.ok());
  ASSERT_TRUE(CreateTableView(**engine, data, "spans"));
  auto total = (*engine)->Query("SELECT count(*) FROM spans WHERE row_kind = 0");
  ASSERT_TRUE(total.ok()) << total.status();
  const int64_t spans = std::stoll(*total->rows[0][0]);
  ASSERT_GT(spans, 0);
  EXPECT_EQ(SqlCount(api, reader, "SELECT count(*) FROM spans"), spans);

  // Trace by id: every span of sampled traces, and 404 for an absent id.
  auto traces = (*engine)->Query(
      "SELECT lower(hex(trace_id)), count(*) FROM spans WHERE row_kind = 0 GROUP BY 1 "
      "ORDER BY 1 LIMIT 8");
  ASSERT_TRUE(traces.ok()) << traces.status();
  ASSERT_EQ(traces->rows.size(), 8u);
  for (const auto& row : traces->rows) {
    auto [code, body] = Curl(Get("http://" + api + "/api/v1/traces/" + *row[0], reader));
    ASSERT_EQ(code, 200) << body;
    EXPECT_THAT(body, HasSubstr("\"resourceSpans\""));
    // One startTimeUnixNano per span (links and events carry spanId or
    // timeUnixNano, never this member).
    EXPECT_EQ(Occurrences(body, "\"startTimeUnixNano\""), std::stoul(*row[1])) << *row[0];
  }
  auto [absent, absent_body] =
      Curl(Get("http://" + api + "/api/v1/traces/0123456789abcdef0123456789abcdef", reader));
  EXPECT_EQ(absent, 404) << absent_body;
  auto [bad, bad_body] = Curl(Get("http://" + api + "/api/v1/traces/xyz", reader));
  EXPECT_EQ(bad, 400);
  EXPECT_THAT(bad_body, HasSubstr("trace"));

  // Jaeger's query API through the real binary (serve forwards /jaeger/ to
  // the API): every service with spans, and the same traces in Jaeger's
  // model, one operationName per span, with the token as a basic-auth
  // password as well as a bearer token.
  auto names =
      (*engine)->Query("SELECT DISTINCT service_name FROM spans WHERE row_kind = 0 ORDER BY 1");
  ASSERT_TRUE(names.ok()) << names.status();
  std::string expected_services;
  for (const auto& row : names->rows) {
    expected_services += fmt::format("{}\"{}\"", expected_services.empty() ? "" : ",", *row[0]);
  }
  auto [jaeger_code, jaeger_services] = Curl(Get("http://" + api + "/jaeger/api/services", reader));
  EXPECT_EQ(jaeger_code, 200) << jaeger_services;
  EXPECT_EQ(jaeger_services,
            fmt::format(R"({{"data":[{}],"total":{},"limit":0,"offset":0,"errors":null}})",
                        expected_services, names->rows.size()));
  auto [v3_code, v3_services] =
      Curl({"-u", "grafana:" + reader, "http://" + api + "/jaeger/api/v3/services"});
  EXPECT_EQ(v3_code, 200) << v3_services;
  EXPECT_EQ(v3_services, fmt::format(R"({{"services":[{}]}})", expected_services));
  for (const auto& row : traces->rows) {
    auto [code, body] =
        Curl({"-u", "grafana:" + reader, "http://" + api + "/jaeger/api/traces/" + *row[0]});
    ASSERT_EQ(code, 200) << body;
    EXPECT_THAT(body, HasSubstr("\"processes\""));
    EXPECT_EQ(Occurrences(body, "\"operationName\""), std::stoul(*row[1])) << *row[0];
  }
  EXPECT_EQ(Curl({"-u", "grafana:wrong", "http://" + api + "/jaeger/api/services"}).first, 401);

  // strata sql from the shell: a table with the same count; writes refused.
  auto [sql_code, sql_out] = RunStrata(
      {"sql", "--api-address", api, "--token", reader, "-c", "SELECT count(*) AS n FROM spans"});
  EXPECT_EQ(sql_code, 0) << sql_out;
  EXPECT_THAT(sql_out, HasSubstr(fmt::format("\n{}\n", spans)));
  EXPECT_THAT(sql_out, HasSubstr("(1 row)"));
  auto [insert_code, insert_out] = RunStrata(
      {"sql", "--api-address", api, "--token", reader, "-c", "CREATE TABLE t AS SELECT 1"});
  EXPECT_EQ(insert_code, 1) << insert_out;
  EXPECT_THAT(insert_out, HasSubstr("HTTP 400"));

  EXPECT_EQ(server.Stop(), 0) << server.output();
}

// The query side's startup refusal names its runbook section, and strata
// sql reports a server it cannot reach.
TEST(QueryApiTest, QueryEngineThatCannotStartAndUnreachableServerAreReported) {
  TempDir dir("e2e-query-refusal");
  const std::string data = dir.path() + "/data";
  // `token create` initialises the data directory as a first boot would;
  // then query/ is made a file, so DuckDB's spill directory cannot exist.
  ASSERT_FALSE(CreateToken(data, "reader", "read").empty());
  ASSERT_EQ(std::system(("rm -rf '" + data + "/query' && touch '" + data + "/query'").c_str()), 0);
  auto [code, output] =
      RunStrata({"serve", "--data-dir", data, "--otlp-grpc-address", "127.0.0.1:0",
                 "--otlp-http-address", "127.0.0.1:0", "--api-address", "127.0.0.1:0"});
  EXPECT_EQ(code, 1) << output;
  EXPECT_THAT(output, HasSubstr("cannot start the query engine"));
  EXPECT_THAT(output, HasSubstr("docs/operations.md#query-engine-cannot-start"));

  auto [sql_code, sql_out] =
      RunStrata({"sql", "--api-address", "127.0.0.1:1", "--token", "strata_x", "-c", "SELECT 1"});
  EXPECT_EQ(sql_code, 1) << sql_out;
  EXPECT_THAT(sql_out, HasSubstr("strata sql: POST 127.0.0.1:1:"));
}

}  // namespace
}  // namespace strata::testing
