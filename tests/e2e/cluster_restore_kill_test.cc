// A restore killed in the middle (docs/format/layout.md, "RESTORING";
// docs/operations.md, "A restore was cut short"): node 02 registers its
// batches in the shared catalog (PostgreSQL, scripts/postgres.sh) and the
// store (file://), then comes back on an empty data directory and is
// SIGKILLed while it restores them (the test-only
// --test-restore-step-delay-ms slows each batch; the test polls the data
// directory, with a bound, until it holds the restore marker and some but
// not all of the batches). A start that cannot reach the catalog then
// fails naming the runbook section and changes nothing; the next start
// finishes the restore: the catalog still lists every batch, the
// directory holds them all, and SQL reads every span of them.

#include <chrono>
#include <csignal>
#include <filesystem>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "cli/subprocess.h"
#include "cluster/postgres_batch_catalog.h"
#include "e2e/cluster_testing.h"
#include "e2e/metrics_page.h"
#include "e2e/server_process.h"
#include "fmt/format.h"
#include "gtest/gtest.h"
#include "postgres/postgres_testing.h"

namespace strata::testing {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;
constexpr double kLeaseSeconds = 2;

// OwnBatches(), or none before boot made the days folder.
std::set<std::string> OwnBatchesIfAny(const std::string& data, int node) {
  std::error_code error;
  if (!fs::is_directory(data + "/telemetry/days", error)) return {};
  return OwnBatches(data, node);
}

std::string SpanCount(const ServerProcess& server, const std::string& reader) {
  auto [status, body] =
      Curl({"-X", "POST", "-H", "Authorization: Bearer " + reader, "-H", "Content-Type: text/plain",
            "--data-binary", "SELECT count(*) FROM spans",
            "http://" + server.api_address() + "/api/v1/sql"});
  EXPECT_EQ(status, 200) << body;
  const size_t open = body.find("\"rows\":[[");
  return open == std::string::npos ? body : body.substr(open + 9, body.find(']', open) - open - 9);
}

// Waits (30 s at most) until no process heartbeats for node id `node`.
void WaitUntilNodeIdIsFree(cluster::PostgresBatchCatalog& catalog, const std::string& node) {
  const Clock::time_point deadline = Clock::now() + std::chrono::seconds(30);
  for (;;) {
    absl::StatusOr<std::vector<cluster::NodeRecord>> nodes = catalog.Nodes();
    ASSERT_TRUE(nodes.ok()) << nodes.status();
    bool free = true;
    for (const cluster::NodeRecord& record : *nodes) {
      if (record.node == node && record.heartbeat_at + absl::Seconds(kLeaseSeconds) > absl::Now()) {
        free = false;
      }
    }
    if (free) return;
    ASSERT_LT(Clock::now(), deadline) << "node id " << node << " still claimed";
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
}

std::vector<std::string> ServeArgs(const std::string& data, const std::vector<std::string>& flags) {
  std::vector<std::string> args = {
      STRATA_BINARY,         "serve",       "--data-dir",          data,
      "--api-address",       "127.0.0.1:0", "--otlp-grpc-address", "127.0.0.1:0",
      "--otlp-http-address", "127.0.0.1:0"};
  args.insert(args.end(), flags.begin(), flags.end());
  return args;
}

TEST(ClusterRestoreKillTest, ARestoreKilledInTheMiddleIsFinishedAndLosesNoBatch) {
  if (!postgres::testing::PostgresServer::BinariesPresent()) {
    GTEST_SKIP() << "PostgreSQL 15 is not installed; scripts/setup.sh --tests installs it";
  }
  std::string error;
  const std::string url = postgres::testing::PostgresServer::Get().NewDatabase(&error);
  ASSERT_FALSE(url.empty()) << error;
  TempDir dir("e2e-restore-kill");
  const std::string store = dir.path() + "/store";
  fs::create_directories(store);
  // No compaction: every request's batch stays a batch to restore.
  const std::vector<std::string> flags = {"--object-store",
                                          "file://" + store,
                                          "--catalog",
                                          url,
                                          "--node-id",
                                          "02",
                                          "--catalog-lease-sec",
                                          fmt::format("{}", kLeaseSeconds),
                                          "--compaction-min-inputs",
                                          "0"};
  const std::string first_dir = dir.path() + "/two";
  const std::vector<std::string> shared = {"--catalog", url};
  const std::string ingest = CreateToken(first_dir, "ingest", "ingest", shared);
  const std::string reader = CreateToken(first_dir, "reader", "read", shared);
  absl::StatusOr<std::unique_ptr<cluster::PostgresBatchCatalog>> catalog =
      cluster::PostgresBatchCatalog::Open(url);
  ASSERT_TRUE(catalog.ok()) << catalog.status();

  // Node 02 ingests one request at a time (a batch each) and registers
  // every batch.
  {
    ServerProcess first(first_dir, flags);
    ASSERT_TRUE(first.ready()) << first.output();
    SendTraces(first, ingest, "7", /*requests=*/12, /*spans=*/20, /*concurrency=*/1);
    ASSERT_TRUE(WaitRegistered(first, first_dir, 2, **catalog)) << first.output();
    ASSERT_EQ(first.Stop(), 0) << first.output();
  }
  const std::set<std::string> listed = ListedBatches(**catalog, 2);
  ASSERT_GE(listed.size(), 4u);
  uint64_t spans = 0;
  for (const auto& [id, rows] : CatalogBatches(**catalog, 2)) spans += rows;

  // Its disk is lost: it starts on an empty directory, and is killed once
  // the restore marker is down and some, not all, of the batches are back.
  const std::string again_dir = dir.path() + "/two-again";
  fs::create_directories(again_dir);
  const std::string marker = again_dir + "/telemetry/RESTORING";
  std::set<std::string> partial;
  {
    std::vector<std::string> slow = flags;
    slow.insert(slow.end(), {"--test-restore-step-delay-ms", "250"});
    Subprocess restoring(ServeArgs(again_dir, slow), ChildEnvironment());
    const Clock::time_point deadline = Clock::now() + std::chrono::seconds(60);
    for (;;) {
      partial = OwnBatchesIfAny(again_dir, 2);
      if (fs::exists(marker) && !partial.empty() && partial.size() < listed.size() / 2) break;
      ASSERT_LT(Clock::now(), deadline)
          << "no restore seen under way: " << partial.size() << " batches\n"
          << restoring.output();
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    restoring.Signal(SIGKILL);
    EXPECT_EQ(restoring.Wait(std::chrono::seconds(30)), 128 + SIGKILL) << restoring.output();
    EXPECT_EQ(restoring.output().find("ready; waiting"), std::string::npos) << restoring.output();
  }
  partial = OwnBatchesIfAny(again_dir, 2);
  ASSERT_FALSE(partial.empty());
  ASSERT_LT(partial.size(), listed.size());
  ASSERT_TRUE(fs::exists(marker));
  EXPECT_EQ(ListedBatches(**catalog, 2), listed);
  WaitUntilNodeIdIsFree(**catalog, "02");

  // A start that cannot reach the catalog (port 1 of loopback: nothing
  // listens there) fails naming the runbook section, and changes nothing.
  {
    std::vector<std::string> unreachable = flags;
    unreachable[3] = "postgres://strata@127.0.0.1:1/strata";
    std::vector<std::string> args = ServeArgs(again_dir, unreachable);
    args.erase(args.begin());
    auto [code, said] = RunStrata(args);
    EXPECT_EQ(code, 1) << said;
    EXPECT_NE(said.find("holds a restore of node id 02's batches cut short"), std::string::npos)
        << said;
    EXPECT_NE(said.find("docs/operations.md#a-restore-was-cut-short"), std::string::npos) << said;
    EXPECT_EQ(OwnBatchesIfAny(again_dir, 2), partial);
    EXPECT_TRUE(fs::exists(marker));
  }

  // The next start finishes the restore before it syncs: the catalog
  // still lists every batch, and every span is read.
  ServerProcess again(again_dir, flags);
  ASSERT_TRUE(again.ready()) << again.output();
  EXPECT_NE(again.output().find(fmt::format(
                "finished the restore of node id 02's batches cut short before: restored {} more",
                listed.size() - partial.size())),
            std::string::npos)
      << again.output();
  EXPECT_FALSE(fs::exists(marker));
  EXPECT_EQ(ListedBatches(**catalog, 2), listed);
  EXPECT_EQ(OwnBatches(again_dir, 2), listed);
  EXPECT_EQ(SpanCount(again, reader), std::to_string(spans));
  EXPECT_EQ(again.Stop(), 0) << again.output();
  // Its stop synced again: nothing removed since.
  EXPECT_EQ(ListedBatches(**catalog, 2), listed);
}

}  // namespace
}  // namespace strata::testing
