// Eviction end to end (docs/operations.md, "Evicting local copies"):
// `strata serve --object-store file://... --evict-after 1s`. The test
// ingests with strata loadgen into a server without eviction, records
// every trace by id and SQL counts, restarts with eviction, waits (polling
// /metrics, never sleeping for luck) until every live batch is evicted,
// checks that no Parquet file is left in the data directory and that every
// answer is the same, then restarts once more (boot honours the EVICTED
// markers) and checks again. Against a RADOS gateway (scripts/radosgw.sh),
// the service map, service health and `strata rollups rebuild --check`
// answer the same after eviction (read back from the store) as before, and
// rollups rebuild without the store names the flag it needs.

#include <chrono>
#include <filesystem>
#include <functional>
#include <map>
#include <regex>
#include <sstream>
#include <string>
#include <thread>

#include "e2e/metrics_page.h"
#include "e2e/rados_gateway.h"
#include "e2e/server_process.h"
#include "fmt/format.h"
#include "gtest/gtest.h"

namespace strata::testing {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

std::string Sql(const std::string& api, const std::string& token, const std::string& sql) {
  auto [status, body] =
      Curl({"-X", "POST", "-H", "Authorization: Bearer " + token, "-H", "Content-Type: text/plain",
            "--data-binary", sql, "http://" + api + "/api/v1/sql"});
  EXPECT_EQ(status, 200) << body;
  const size_t rows = body.find("\"rows\":");
  return rows == std::string::npos ? body : body.substr(rows);
}

// What the test compares across evictions and restarts.
struct Answers {
  std::string span_count, log_count, per_trace;
  std::map<std::string, std::string> traces;  // id -> body of GET /api/v1/traces/<id>
};

Answers Read(const ServerProcess& server, const std::string& reader) {
  Answers a;
  const std::string api = server.api_address();
  a.span_count = Sql(api, reader, "SELECT count(*) FROM spans");
  a.log_count = Sql(api, reader, "SELECT count(*) FROM logs");
  a.per_trace = Sql(api, reader,
                    "SELECT lower(hex(trace_id)), count(*) FROM spans "
                    "GROUP BY 1 ORDER BY 1");
  const std::regex id(R"(\["([0-9a-f]{32})\")");
  for (std::sregex_iterator it(a.per_trace.begin(), a.per_trace.end(), id), end; it != end; ++it) {
    const std::string trace = (*it)[1].str();
    auto [code, body] = Curl(
        {"-H", "Authorization: Bearer " + reader, "http://" + api + "/api/v1/traces/" + trace});
    EXPECT_EQ(code, 200) << trace << ": " << body;
    a.traces[trace] = body;
  }
  return a;
}

void ExpectSame(const Answers& want, const Answers& got, const std::string& when) {
  EXPECT_EQ(got.span_count, want.span_count) << when;
  EXPECT_EQ(got.log_count, want.log_count) << when;
  EXPECT_EQ(got.per_trace, want.per_trace) << when;
  ASSERT_EQ(got.traces.size(), want.traces.size()) << when;
  for (const auto& [id, body] : want.traces) {
    EXPECT_EQ(got.traces.at(id), body) << when << ": trace " << id;
  }
}

// Parquet files and EVICTED markers under the data directory's days.
std::pair<int, int> CountLocal(const std::string& data) {
  int parquet = 0, markers = 0;
  for (const auto& entry : fs::recursive_directory_iterator(data + "/telemetry/days")) {
    if (entry.path().extension() == ".parquet") ++parquet;
    if (entry.path().filename() == "EVICTED") ++markers;
  }
  return {parquet, markers};
}

// Sends `requests` loadgen requests of 100 rows of `signals` with the
// ingest token, then waits until every batch is uploaded and no request is
// in flight; `live` is then the live batch count (at least 1).
void SendAndWaitUploaded(const ServerProcess& server, const std::string& ingest,
                         const std::string& signals, int requests, double* live) {
  Subprocess loadgen(
      {STRATA_BINARY, "loadgen", "--protocol", "http/protobuf", "--target", server.http_address(),
       "--token", ingest, "--signals", signals, "--request-spans", "100", "--concurrency", "4",
       "--max-requests", std::to_string(requests), "--duration", "30", "--quiet"},
      ChildEnvironment());
  ASSERT_EQ(loadgen.Wait(std::chrono::seconds(60)), 0) << loadgen.output();
  ASSERT_TRUE(WaitForMetrics(server, [&](const std::string& page) {
    *live = MetricSample(page, "strata_live_batches");
    return MetricSample(page, "strata_upload_pending_batches") == 0 && *live > 0 &&
           MetricSample(page, "strata_inflight_requests") == 0;
  })) << MetricsPage(server);
}

TEST(EvictTest, EvictedBatchesAnswerAsBeforeAndAfterRestart) {
  TempDir dir("e2e-evict");
  const std::string data = dir.path() + "/data";
  const std::string root = dir.path() + "/store";
  fs::create_directories(root);
  const std::string ingest = CreateToken(data, "ingest", "ingest");
  const std::string reader = CreateToken(data, "reader", "read");
  ASSERT_FALSE(ingest.empty());
  ASSERT_FALSE(reader.empty());
  const std::vector<std::string> offload = {"--object-store", "file://" + root,
                                            "--compaction-min-inputs", "0"};
  std::vector<std::string> evicting = offload;
  evicting.insert(evicting.end(), {"--evict-after", "1s"});

  Answers before;
  double live = 0;
  {
    ServerProcess server(data, offload);
    ASSERT_TRUE(server.ready()) << server.output();
    ASSERT_NO_FATAL_FAILURE(SendAndWaitUploaded(server, ingest, "traces,logs", 30, &live));
    // No eviction without the flag.
    EXPECT_EQ(MetricSample(MetricsPage(server), "strata_evicted_batches_total"), -1);
    before = Read(server, reader);
    ASSERT_GT(before.traces.size(), 10u);
    EXPECT_EQ(server.Stop(), 0) << server.output();
  }
  EXPECT_EQ(CountLocal(data).second, 0);
  {
    ServerProcess server(data, evicting);
    ASSERT_TRUE(server.ready()) << server.output();
    ASSERT_TRUE(WaitForMetrics(server, [&](const std::string& page) {
      return MetricSample(page, "strata_evicted_batches_total") == live;
    })) << MetricsPage(server);
    const auto [parquet, markers] = CountLocal(data);
    EXPECT_EQ(parquet, 0);
    EXPECT_EQ(markers, live);
    ExpectSame(before, Read(server, reader), "after eviction");
    const std::string page = MetricsPage(server);
    EXPECT_GT(MetricSample(page, "strata_read_cache_misses_total"), 0) << page;
    EXPECT_GT(MetricSample(page, "strata_evicted_bytes_total"), 0) << page;
    // The cache answers the second time.
    ExpectSame(before, Read(server, reader), "from the cache");
    EXPECT_GT(MetricSample(MetricsPage(server), "strata_read_cache_hits_total"), 0);
    EXPECT_EQ(server.Stop(), 0) << server.output();
  }
  {
    ServerProcess server(data, evicting);
    ASSERT_TRUE(server.ready()) << server.output();
    EXPECT_EQ(MetricSample(MetricsPage(server), "strata_evicted_batches"), live);
    ExpectSame(before, Read(server, reader), "after a restart");
    EXPECT_EQ(server.Stop(), 0) << server.output();
  }
  // Eviction needs an object store: a clear refusal naming the runbook.
  auto [code, out] = RunStrata({"serve", "--data-dir", data, "--evict-after", "1s"});
  EXPECT_EQ(code, 2) << out;
  EXPECT_NE(out.find("--evict-after and --cache-size need --object-store"), std::string::npos)
      << out;
  EXPECT_NE(out.find("eviction-needs-an-object-store"), std::string::npos) << out;
}

// GET `path` of the API as `token`, answered 200.
std::string Get(const ServerProcess& server, const std::string& token, const std::string& path) {
  auto [code, body] =
      Curl({"-H", "Authorization: Bearer " + token, "http://" + server.api_address() + path});
  EXPECT_EQ(code, 200) << path << ": " << body;
  return body;
}

// `strata rollups rebuild --check` of `data` with `flags`: {exit code,
// output}.
std::pair<int, std::string> RollupsCheck(const std::string& data,
                                         const std::vector<std::string>& flags) {
  std::vector<std::string> args = {"rollups", "rebuild", "--check", "--data-dir", data};
  args.insert(args.end(), flags.begin(), flags.end());
  return RunStrata(args);
}

// The lines of a rollups rebuild's output that judge batches, and its
// summary (not what the storage engine logs).
std::string Verdicts(const std::string& output) {
  std::istringstream lines(output);
  std::string out, line;
  while (std::getline(lines, line)) {
    for (const char* start : {"equal ", "empty ", "missing ", "differed ", "rollups of "}) {
      if (line.starts_with(start)) out += line + "\n";
    }
  }
  return out;
}

TEST(EvictTest, ServiceMapHealthAndRollupsRebuildAnswerAsBeforeFromARadosGateway) {
  TempDir dir("e2e-evict-s3");
  RadosGateway gateway(dir.path() + "/rgw");
  ASSERT_TRUE(gateway.started()) << gateway.output();
  const std::string data = dir.path() + "/data";
  const std::string ingest = CreateToken(data, "ingest", "ingest");
  const std::string reader = CreateToken(data, "reader", "read");
  ASSERT_FALSE(ingest.empty());
  ASSERT_FALSE(reader.empty());
  const std::vector<std::string> store = RadosGatewayFlags(gateway, "e2e-evict");
  std::vector<std::string> offload = store;
  offload.insert(offload.end(), {"--compaction-min-inputs", "0"});
  std::vector<std::string> evicting = offload;
  evicting.insert(evicting.end(), {"--evict-after", "1s"});
  // One window for every answer, around the load.
  const int64_t now_sec = std::chrono::duration_cast<std::chrono::seconds>(
                              std::chrono::system_clock::now().time_since_epoch())
                              .count();
  const std::string window =
      fmt::format("start={}000000000&end={}000000000", now_sec - 3600, now_sec + 3600);
  const std::string map_path = "/api/v1/service-map?" + window;
  const std::string services_path = "/api/v1/services?" + window;

  std::string map_before, services_before;
  double live = 0;
  {
    ServerProcess server(data, offload);
    ASSERT_TRUE(server.ready()) << server.output();
    ASSERT_NO_FATAL_FAILURE(SendAndWaitUploaded(server, ingest, "traces", 20, &live));
    map_before = Get(server, reader, map_path);
    services_before = Get(server, reader, services_path);
    EXPECT_EQ(server.Stop(), 0) << server.output();
  }
  ASSERT_NE(map_before.find("\"complete\":true"), std::string::npos) << map_before;
  ASSERT_NE(map_before.find("\"source\""), std::string::npos) << "no edges: " << map_before;
  auto [check_code, check_before] = RollupsCheck(data, {});
  ASSERT_EQ(check_code, 0) << check_before;
  ASSERT_NE(Verdicts(check_before).find("equal "), std::string::npos) << check_before;
  {
    ServerProcess server(data, evicting);
    ASSERT_TRUE(server.ready()) << server.output();
    ASSERT_TRUE(WaitForMetrics(server, [&](const std::string& page) {
      return MetricSample(page, "strata_evicted_batches_total") == live;
    })) << MetricsPage(server);
    EXPECT_EQ(CountLocal(data).first, 0);
    EXPECT_EQ(server.Stop(), 0) << server.output();
  }
  {
    // A new process: the service map's pass and service health read every
    // batch now, each from the store through the cache.
    ServerProcess server(data, evicting);
    ASSERT_TRUE(server.ready()) << server.output();
    EXPECT_EQ(Get(server, reader, map_path), map_before);
    EXPECT_EQ(Get(server, reader, services_path), services_before);
    const std::string page = MetricsPage(server);
    EXPECT_GT(MetricSample(page, "strata_read_cache_misses_total"), 0) << page;
    EXPECT_EQ(server.Stop(), 0) << server.output();
  }
  // rollups rebuild reads the evicted batches from the store and judges
  // them as before; with nothing to rewrite, a rebuild changes nothing.
  auto [after_code, check_after] = RollupsCheck(data, store);
  EXPECT_EQ(after_code, 0) << check_after;
  EXPECT_EQ(Verdicts(check_after), Verdicts(check_before)) << check_after;
  std::vector<std::string> rebuild = {"rollups", "rebuild", "--data-dir", data};
  rebuild.insert(rebuild.end(), store.begin(), store.end());
  auto [rebuild_code, rebuilt] = RunStrata(rebuild);
  EXPECT_EQ(rebuild_code, 0) << rebuilt;
  EXPECT_NE(rebuilt.find("0 rewritten"), std::string::npos) << rebuilt;
  EXPECT_EQ(CountLocal(data), std::make_pair(0, static_cast<int>(live)));
  // Without the store: refused, naming the flag.
  auto [bare_code, bare] = RollupsCheck(data, {});
  EXPECT_EQ(bare_code, 1) << bare;
  EXPECT_NE(bare.find("evicted"), std::string::npos) << bare;
  EXPECT_NE(bare.find("--object-store"), std::string::npos) << bare;
}

}  // namespace
}  // namespace strata::testing
