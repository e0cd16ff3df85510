// Crash safety of compaction in the real server. `strata serve` runs with
// a level merging at two batches and a 50 ms maintenance interval, so
// merges, publications, reclamation and marker removal happen all the
// time, while `strata loadgen --record` sends traces, logs and metrics and
// records every acknowledged request. The server is SIGKILLed at varied
// moments and restarted each time:
//
//   * after a random delay once acknowledgements flow;
//   * as soon as telemetry/COMPACTION.json exists (a compaction being
//     published or reclaimed);
//   * as soon as staging/ holds a compaction output (a merge in progress).
//
// Afterwards (a last boot with compaction off, so days/ holds exactly the
// live batches):
//
//   1. for every trace of every acknowledged request, the stored span
//      count is exactly the acknowledged count (the loadgen never retries,
//      so no loss and no duplication);
//   2. no span, log record or data point is stored twice, acknowledged or
//      not (a whole-row comparison for logs and metrics);
//   3. every acknowledged log record and data point is stored;
//   4. every boot came up, and a boot that found COMPACTION.json resolved
//      it ("rolled forward" / "rolled back" in its log);
//   5. compaction really ran under the load (a marker was seen, and
//      compaction outputs are among the stored batches).
//
// STRATA_E2E_COMPACTION_KILLS sets the number of kill rounds (default 6: each
// moment twice).

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <map>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "e2e/loadgen_record.h"
#include "e2e/server_process.h"
#include "fmt/format.h"
#include "gtest/gtest.h"
#include "storage/format/batch_id.h"

namespace strata::testing {
namespace {

namespace fs = std::filesystem;

const std::vector<std::string> kAggressiveCompaction = {"--compaction-min-inputs", "2",
                                                        "--maintenance-interval-sec", "0.05"};
// How long a kill round waits for the moment it kills at.
constexpr auto kMomentDeadline = std::chrono::seconds(30);

enum class KillMoment { kRandomDelay, kMarkerPresent, kMergeInProgress };

const char* Name(KillMoment moment) {
  switch (moment) {
    case KillMoment::kRandomDelay:
      return "after a random delay";
    case KillMoment::kMarkerPresent:
      return "with COMPACTION.json present";
    case KillMoment::kMergeInProgress:
      return "with a compaction output in staging";
  }
  return "";
}

bool MarkerExists(const std::string& data_dir) {
  std::error_code ec;
  return fs::exists(fs::path(data_dir) / "telemetry" / "COMPACTION.json", ec);
}

// Whether staging/ holds a batch of generation 1 or more: a compaction
// output being written (ingest writes generation 0 only).
bool MergeInProgress(const std::string& data_dir) {
  std::error_code ec;
  for (auto it = fs::directory_iterator(fs::path(data_dir) / "telemetry" / "staging", ec);
       !ec && it != fs::directory_iterator(); it.increment(ec)) {
    absl::StatusOr<storage::BatchId> id = storage::BatchId::Parse(it->path().filename().string());
    if (id.ok() && id->generation() > 0) return true;
  }
  return false;
}

// Polls `condition` every millisecond until it holds or kMomentDeadline.
template <typename Condition>
bool WaitFor(Condition condition) {
  const auto deadline = std::chrono::steady_clock::now() + kMomentDeadline;
  while (std::chrono::steady_clock::now() < deadline) {
    if (condition()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return false;
}

// The value of a Prometheus sample line, or -1.
double Sample(const std::string& page, const std::string& series) {
  const std::string line_start = "\n" + series + " ";
  const size_t at = page.find(line_start);
  if (at == std::string::npos) return -1;
  return std::stod(page.substr(at + line_start.size()));
}

long long MillisSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() -
                                                               start)
      .count();
}

int Count(const std::string& text, const std::string& needle) {
  int n = 0;
  for (size_t at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1)) ++n;
  return n;
}

std::unique_ptr<Subprocess> StartLoadgen(const ServerProcess& server, const std::string& token,
                                         const std::string& record, uint64_t seed,
                                         const std::string& protocol) {
  const std::string target = protocol == "grpc" ? server.grpc_address() : server.http_address();
  return std::make_unique<Subprocess>(
      std::vector<std::string>{STRATA_BINARY,     "loadgen",
                               "--protocol",      protocol,
                               "--target",        target,
                               "--token",         token,
                               "--signals",       "traces,logs,metrics",
                               "--request-spans", "60",
                               "--concurrency",   "8",
                               "--duration",      "20",
                               "--max-requests",  "2000",
                               "--record",        record,
                               "--seed",          std::to_string(seed),
                               "--quiet"},
      ChildEnvironment());
}

// Runs `sql` and returns its single integer, or -1 (after a test failure).
int64_t QueryCount(query::DuckDbEngine& engine, const std::string& sql) {
  auto result = engine.Query(sql);
  EXPECT_TRUE(result.ok()) << sql << ": " << result.status();
  if (!result.ok() || result->rows.size() != 1 || !result->rows[0][0]) return -1;
  return std::stoll(*result->rows[0][0]);
}

// Checks 1-3 of the top of this file against the batches in days/.
void ExpectExactlyAcknowledged(const std::string& data_dir, const AckedRows& acked) {
  auto engine = query::DuckDbEngine::Open({});
  ASSERT_TRUE(engine.ok()) << engine.status();
  ASSERT_TRUE(CreateTableView(**engine, data_dir, "spans"));
  ASSERT_TRUE(CreateTableView(**engine, data_dir, "logs"));
  ASSERT_TRUE(CreateTableView(**engine, data_dir, "metrics"));

  auto traces = (*engine)->Query(
      "SELECT lower(hex(trace_id)), count(*) FROM spans WHERE row_kind = 0 GROUP BY 1");
  ASSERT_TRUE(traces.ok()) << traces.status();
  std::map<std::string, int64_t> stored;
  for (const auto& row : traces->rows) stored[*row[0]] = std::stoll(*row[1]);
  size_t wrong = 0;
  std::string examples;
  for (const auto& [trace, count] : acked.traces) {
    const auto it = stored.find(trace);
    const int64_t got = it == stored.end() ? 0 : it->second;
    if (got == count) continue;
    if (++wrong <= 5)
      examples += fmt::format(" {}: {} stored, {} acknowledged;", trace, got, count);
  }
  EXPECT_EQ(wrong, 0u) << "of " << acked.traces.size() << " acknowledged traces:" << examples;

  EXPECT_EQ(QueryCount(**engine,
                       "SELECT count(*) FROM (SELECT trace_id, span_id FROM spans "
                       "WHERE row_kind = 0 GROUP BY ALL HAVING count(*) > 1)"),
            0)
      << "spans stored twice";
  // Whole rows but the per-file numbering: two distinct generated records
  // never agree on every column.
  EXPECT_EQ(QueryCount(**engine,
                       "SELECT count(*) FROM (SELECT * EXCLUDE (resource_index, scope_index) "
                       "FROM logs WHERE row_kind = 0 GROUP BY ALL HAVING count(*) > 1)"),
            0)
      << "log records stored twice";
  EXPECT_EQ(QueryCount(**engine,
                       "SELECT count(*) FROM (SELECT * EXCLUDE (resource_index, scope_index, "
                       "metric_index) FROM metrics WHERE row_kind = 0 GROUP BY ALL "
                       "HAVING count(*) > 1)"),
            0)
      << "data points stored twice";

  ExpectAckedStored(**engine, kStoredLogKeysSql, acked.logs, "log records");
  const int64_t points = QueryCount(**engine, "SELECT count(*) FROM metrics WHERE row_kind = 0");
  EXPECT_GE(points, static_cast<int64_t>(acked.metric_points)) << "data points lost";

  std::printf(
      "checked %llu acknowledged requests: %zu traces (%zu spans), %zu log records, %llu data "
      "points; stored: %zu traces, %lld data points\n",
      static_cast<unsigned long long>(acked.requests), acked.traces.size(), acked.spans.size(),
      acked.logs.size(), static_cast<unsigned long long>(acked.metric_points), stored.size(),
      static_cast<long long>(points));
}

// Batches in days/ whose id says they are compaction outputs.
int CompactedBatches(const std::string& data_dir) {
  int n = 0;
  std::error_code ec;
  for (auto it = fs::recursive_directory_iterator(fs::path(data_dir) / "telemetry" / "days", ec);
       !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (!name.ends_with(".batch")) continue;
    absl::StatusOr<storage::BatchId> id =
        storage::BatchId::Parse(name.substr(0, name.size() - std::string(".batch").size()));
    if (id.ok() && id->generation() > 0) ++n;
  }
  return n;
}

TEST(CompactionCrashTest, SigkillDuringCompactionKeepsEveryAcknowledgedRowExactlyOnce) {
  int kills = 6;
  if (const char* env = std::getenv("STRATA_E2E_COMPACTION_KILLS"); env != nullptr) {
    kills = std::atoi(env);
  }
  std::mt19937 random(std::random_device{}());
  const unsigned seed = random();
  SCOPED_TRACE(fmt::format("seed {}", seed));
  random.seed(seed);
  TempDir dir("e2e-compaction-kill");
  const std::string data = dir.path() + "/data";
  std::string token;
  std::vector<std::string> records;
  int markers_seen = 0, merges_seen = 0, markers_left = 0;
  int rolled_forward = 0, rolled_back = 0;
  double compactions_seen = 0;
  bool marker_at_kill = false;

  for (int round = 0; round < kills; ++round) {
    const auto moment = static_cast<KillMoment>(round % 3);
    SCOPED_TRACE(fmt::format("round {}: kill {}", round, Name(moment)));
    const auto round_start = std::chrono::steady_clock::now();
    ServerProcess server(data, kAggressiveCompaction);
    ASSERT_TRUE(server.ready()) << server.output();
    // Boot resolves a marker the last kill left (commit.md, "Compaction").
    const int forward = Count(server.output(), "rolled forward compaction");
    const int back = Count(server.output(), "rolled back compaction");
    rolled_forward += forward;
    rolled_back += back;
    if (marker_at_kill) EXPECT_EQ(forward + back, 1) << server.output();
    if (round == 0) token = server.first_token();
    ASSERT_FALSE(token.empty());

    records.push_back(fmt::format("{}/acked-{}.rec", dir.path(), round));
    auto loadgen = StartLoadgen(server, token, records.back(), seed + round,
                                round % 2 == 0 ? "grpc" : "http/protobuf");
    const long long boot_ms = MillisSince(round_start);
    // Let data pile up (a varied amount) so later merges are bigger.
    const uintmax_t acked_bytes = (128 << 10) + random() % (1 << 20);
    ASSERT_TRUE(WaitForRecordBytes(records.back(), acked_bytes)) << loadgen->output();
    const long long acked_ms = MillisSince(round_start);
    bool hit = true;
    switch (moment) {
      case KillMoment::kRandomDelay: {
        std::this_thread::sleep_for(std::chrono::milliseconds(random() % 1500));
        auto [status, page] = Curl({"http://" + server.api_address() + "/metrics"});
        if (status == 200) {
          compactions_seen = std::max(compactions_seen, Sample(page, "strata_compactions_total"));
        }
        break;
      }
      case KillMoment::kMarkerPresent:
        hit = WaitFor([&] { return MarkerExists(data); });
        markers_seen += hit;
        break;
      case KillMoment::kMergeInProgress:
        hit = WaitFor([&] { return MergeInProgress(data); });
        merges_seen += hit;
        break;
    }
    server.Kill();
    const long long kill_ms = MillisSince(round_start);
    marker_at_kill = MarkerExists(data);
    markers_left += marker_at_kill;
    // The generator sees the server gone and finishes the rest at once.
    EXPECT_GE(loadgen->Wait(std::chrono::seconds(60)), 0) << loadgen->output();
    std::printf(
        "round %d: ready at %lld ms, %ju bytes acknowledged at %lld ms, killed %s at %lld ms%s, "
        "loadgen done at %lld ms\n",
        round, boot_ms, acked_bytes, acked_ms, Name(moment), kill_ms, hit ? "" : " (its deadline)",
        MillisSince(round_start));
  }

  // A last boot resolves what the last kill left, so days/ then holds
  // exactly the live batches; it runs with compaction off. If no round let
  // a merge finish (on a loaded machine every one can be killed midway), a
  // boot before it compacts, unkilled, until an output is stored, so the
  // rows checked below always include a compaction's outputs. That boot
  // may stop with its last compaction's marker still pending (its inputs
  // not reclaimed yet, or a next merge begun), which the last boot then
  // resolves too.
  {
    const bool compact_now = CompactedBatches(data) == 0;
    int boot = 0;
    for (const bool compacting : {true, false}) {
      if (compacting && !compact_now) continue;
      ServerProcess last(data, compacting
                                   ? kAggressiveCompaction
                                   : std::vector<std::string>{"--compaction-min-inputs", "0"});
      ASSERT_TRUE(last.ready()) << last.output();
      const int forward = Count(last.output(), "rolled forward compaction");
      const int back = Count(last.output(), "rolled back compaction");
      rolled_forward += forward;
      rolled_back += back;
      if (boot++ == 0 && marker_at_kill) EXPECT_EQ(forward + back, 1) << last.output();
      if (compacting) {
        EXPECT_TRUE(WaitFor([&] { return CompactedBatches(data) > 0; })) << last.output();
      }
      ASSERT_EQ(last.Stop(), 0) << last.output();
    }
  }
  EXPECT_FALSE(MarkerExists(data));
  std::printf(
      "%d kills: COMPACTION.json seen %d times, a merge in staging %d times, left by a kill %d "
      "times; boots rolled forward %d, rolled back %d; strata_compactions_total up to %.0f; "
      "%d compaction outputs stored\n",
      kills, markers_seen, merges_seen, markers_left, rolled_forward, rolled_back, compactions_seen,
      CompactedBatches(data));
  // Compaction ran under the load, and its outputs are what is stored.
  EXPECT_GT(markers_seen + merges_seen + markers_left, 0);
  EXPECT_GT(CompactedBatches(data), 0);

  AckedRows acked;
  for (const std::string& record : records) ReadLoadgenRecord(record, &acked);
  ASSERT_GT(acked.traces.size(), 0u);
  ExpectExactlyAcknowledged(data, acked);
}

}  // namespace
}  // namespace strata::testing
