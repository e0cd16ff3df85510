// Several servers and the batch catalog they share
// (docs/format/postgres-catalog.md): two `strata serve` processes with
// their own data directories, one object store (file://) and one
// PostgreSQL catalog (scripts/postgres.sh). Each ingests with strata
// loadgen and compacts; the test waits (polling, never sleeping for luck)
// until the catalog lists exactly each server's own live batches, uploaded,
// and until each server's SQL count of spans equals the span rows the
// catalog's meta.json hold for both (each answers from the other's batches
// too; compaction swapped in whole: nothing twice, nothing missing). A
// third server with a node id in use, and a catalog without an object
// store, are refused by name; so is a restore into an empty directory of
// a batch whose meta.json the store lost.

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <map>
#include <regex>
#include <set>
#include <string>
#include <thread>

#include "absl/strings/str_join.h"
#include "cluster/postgres_batch_catalog.h"
#include "e2e/cluster_testing.h"
#include "e2e/metrics_page.h"
#include "e2e/server_process.h"
#include "fmt/format.h"
#include "gtest/gtest.h"
#include "postgres/postgres_testing.h"
#include "simdjson.h"
#include "storage/format/batch_id.h"
#include "storage/format/batch_meta.h"
#include "storage/format/object_layout.h"

namespace strata::testing {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

std::string SpanCount(const ServerProcess& server, const std::string& reader) {
  auto [status, body] =
      Curl({"-X", "POST", "-H", "Authorization: Bearer " + reader, "-H", "Content-Type: text/plain",
            "--data-binary", "SELECT count(*) FROM spans",
            "http://" + server.api_address() + "/api/v1/sql"});
  EXPECT_EQ(status, 200) << body;
  const size_t open = body.find("\"rows\":[[");
  return open == std::string::npos ? body : body.substr(open + 9, body.find(']', open) - open - 9);
}

// The span ids a trace answer holds, sorted.
std::vector<std::string> SpanIdsOf(const std::string& body) {
  std::vector<std::string> ids;
  const std::regex span_id(R"re("spanId":"([0-9a-f]{16})")re");
  for (std::sregex_iterator it(body.begin(), body.end(), span_id), end; it != end; ++it) {
    ids.push_back((*it)[1].str());
  }
  std::sort(ids.begin(), ids.end());
  return ids;
}

// A trace answer's spans, each as its resource, scope and span JSON
// (minified), sorted: equal for two answers that hold the same spans under
// the same resources and scopes, however they group and order them (one
// server reads a batch compacted, another its inputs). "" when the answer
// is not OTLP/JSON.
std::vector<std::string> SpansWithResourcesOf(const std::string& body) {
  simdjson::dom::parser parser;
  simdjson::dom::element root;
  if (parser.parse(body).get(root) != simdjson::SUCCESS) return {""};
  std::vector<std::string> spans;
  simdjson::dom::array resources;
  if (root["resourceSpans"].get_array().get(resources) != simdjson::SUCCESS) return {""};
  for (simdjson::dom::element group : resources) {
    const std::string resource = simdjson::minify(group["resource"]);
    simdjson::dom::array scopes;
    if (group["scopeSpans"].get_array().get(scopes) != simdjson::SUCCESS) return {""};
    for (simdjson::dom::element scope_group : scopes) {
      const std::string scope = simdjson::minify(scope_group["scope"]);
      simdjson::dom::array list;
      if (scope_group["spans"].get_array().get(list) != simdjson::SUCCESS) return {""};
      for (simdjson::dom::element span : list) {
        spans.push_back(resource + "\n" + scope + "\n" + simdjson::minify(span));
      }
    }
  }
  std::sort(spans.begin(), spans.end());
  return spans;
}

TEST(ClusterCatalogTest, TwoServersKeepTheSharedCatalogEqualToTheirOwnBatches) {
  if (!postgres::testing::PostgresServer::BinariesPresent()) {
    GTEST_SKIP() << "PostgreSQL 15 is not installed; scripts/setup.sh --tests installs it";
  }
  std::string error;
  const std::string url = postgres::testing::PostgresServer::Get().NewDatabase(&error);
  ASSERT_FALSE(url.empty()) << error;
  TempDir dir("e2e-cluster");
  const std::string store = dir.path() + "/store";
  fs::create_directories(store);
  // `min_inputs` "0" turns compaction off.
  auto flags = [&](const std::string& node, const std::string& min_inputs = "3") {
    return std::vector<std::string>{"--object-store",
                                    "file://" + store,
                                    "--catalog",
                                    url,
                                    "--node-id",
                                    node,
                                    "--compaction-min-inputs",
                                    min_inputs,
                                    "--maintenance-interval-sec",
                                    "0.2"};
  };
  const std::string data1 = dir.path() + "/one", data2 = dir.path() + "/two";
  // Tokens live in the PostgreSQL store the servers share: one made with
  // `strata token create --catalog` is valid on both.
  const std::vector<std::string> shared = {"--catalog", url};
  const std::string ingest = CreateToken(data1, "ingest", "ingest", shared);
  const std::string reader = CreateToken(data1, "reader", "read", shared);
  const std::string &ingest1 = ingest, &ingest2 = ingest, &reader1 = reader, &reader2 = reader;
  ServerProcess one(data1, flags("01"));
  ASSERT_TRUE(one.ready()) << one.output();
  ServerProcess two(data2, flags("02"));
  ASSERT_TRUE(two.ready()) << two.output();
  // Different seeds: the two servers hold different traces, so a trace
  // asked of the other server is read from the store.
  for (const auto& [server, token, seed] :
       {std::tuple{&one, ingest1, "1"}, std::tuple{&two, ingest2, "2"}}) {
    SendTraces(*server, token, seed, /*requests=*/40, /*spans=*/50, /*concurrency=*/2);
  }

  absl::StatusOr<std::unique_ptr<cluster::PostgresBatchCatalog>> catalog =
      cluster::PostgresBatchCatalog::Open(url);
  ASSERT_TRUE(catalog.ok()) << catalog.status();
  // Converged: compaction ran (one server at a time merges a day's
  // batches, both servers' among them), and each server's own local
  // batches are uploaded and listed, nothing else listed.
  auto compaction_listed = [&] {
    for (int node : {1, 2}) {
      for (const std::string& id : ListedBatches(**catalog, node)) {
        if (storage::BatchId::Parse(id)->generation() > 0) return true;
      }
    }
    return false;
  };
  {
    // Compaction may go on after that moment (an output is here before
    // it is listed), so it is that moment the test waits for, not a state
    // read again afterwards.
    const Clock::time_point deadline = Clock::now() + std::chrono::seconds(90);
    bool settled = false;
    std::string last;
    while (!settled && Clock::now() <= deadline) {
      settled = compaction_listed();
      last = settled ? "" : "no compaction output listed\n";
      for (const auto& [server, data, node] :
           {std::tuple{&one, data1, 1}, std::tuple{&two, data2, 2}}) {
        const double pending = MetricSample(MetricsPage(*server), "strata_upload_pending_batches");
        const std::set<std::string> own = OwnBatches(data, node);
        const std::set<std::string> listed = ListedBatches(**catalog, node);
        if (pending != 0 || own != listed) {
          settled = false;
          last += fmt::format("node {}: {} uploads pending; own {}; listed {}\n", node, pending,
                              absl::StrJoin(own, ","), absl::StrJoin(listed, ","));
        }
      }
      if (!settled) std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    EXPECT_TRUE(settled) << last << one.output() << two.output();
  }
  // Compaction ran and was swapped in whole, and every server answers
  // from every server's batches: each one's SQL count is the span rows the
  // catalog's meta.json hold for both nodes (polled until the adoptions of
  // the last swaps are in).
  uint64_t catalog_spans = 0;
  int compacted = 0;
  for (int node : {1, 2}) {
    for (const auto& [id, rows] : CatalogBatches(**catalog, node)) {
      catalog_spans += rows;
      compacted += storage::BatchId::Parse(id)->generation() > 0 ? 1 : 0;
    }
  }
  EXPECT_GT(catalog_spans, 0u);
  EXPECT_GT(compacted, 0) << one.output();
  for (const auto& [server, reader] : {std::pair{&one, reader1}, std::pair{&two, reader2}}) {
    const Clock::time_point deadline = Clock::now() + std::chrono::seconds(60);
    std::string count;
    while ((count = SpanCount(*server, reader)) != std::to_string(catalog_spans) &&
           Clock::now() < deadline) {
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    EXPECT_EQ(count, std::to_string(catalog_spans)) << server->output();
  }
  // Trace by id answers the same on both servers, whichever node wrote
  // the trace (each reads the other's spans.tidx locally and its Parquet
  // from the store).
  auto [status, ids] = Curl({"-X", "POST", "-H", "Authorization: Bearer " + reader1, "-H",
                             "Content-Type: text/plain", "--data-binary",
                             "SELECT DISTINCT lower(hex(trace_id)) AS t FROM spans ORDER BY t",
                             "http://" + one.api_address() + "/api/v1/sql"});
  ASSERT_EQ(status, 200) << ids;
  const std::regex trace_id(R"(\["([0-9a-f]{32})\"\])");
  std::vector<std::string> all;
  for (std::sregex_iterator it(ids.begin(), ids.end(), trace_id), end; it != end; ++it) {
    all.push_back((*it)[1].str());
  }
  EXPECT_GT(all.size(), 10u) << ids;
  // 30 of them, spread over the list (both servers' traces).
  int traces = 0;
  for (size_t i = 0; i < all.size(); i += std::max<size_t>(1, all.size() / 30)) {
    const std::string path = "/api/v1/traces/" + all[i];
    auto [code1, body1] =
        Curl({"-H", "Authorization: Bearer " + reader1, "http://" + one.api_address() + path});
    auto [code2, body2] =
        Curl({"-H", "Authorization: Bearer " + reader2, "http://" + two.api_address() + path});
    EXPECT_EQ(code1, 200) << path << ": " << body1;
    EXPECT_EQ(code2, 200) << path << ": " << body2;
    // The same spans, resources and scopes; how a trace's spans are
    // grouped and ordered is not part of the answer's contract (the two
    // servers may read a compaction's output or its inputs, from the disk
    // or from the store).
    EXPECT_EQ(SpanIdsOf(body1), SpanIdsOf(body2)) << path;
    EXPECT_EQ(SpansWithResourcesOf(body1), SpansWithResourcesOf(body2)) << path;
    ++traces;
  }
  EXPECT_GE(traces, 10);
  absl::StatusOr<std::vector<cluster::NodeRecord>> nodes = (*catalog)->Nodes();
  ASSERT_TRUE(nodes.ok()) << nodes.status();
  ASSERT_EQ(nodes->size(), 2u);
  EXPECT_EQ((*nodes)[0].node, "01");
  EXPECT_EQ((*nodes)[1].node, "02");

  // A third server given node 01 is refused while the first heartbeats.
  auto [code, out] = RunStrata([&] {
    std::vector<std::string> args = {"serve",         "--data-dir",          dir.path() + "/three",
                                     "--api-address", "127.0.0.1:0",         "--otlp-grpc-address",
                                     "127.0.0.1:0",   "--otlp-http-address", "127.0.0.1:0"};
    for (const std::string& flag : flags("01")) args.push_back(flag);
    return args;
  }());
  EXPECT_EQ(code, 1) << out;
  EXPECT_NE(out.find("node id 01 is in use"), std::string::npos) << out;
  EXPECT_NE(out.find("node-id-in-use"), std::string::npos) << out;
  EXPECT_EQ(one.Stop(), 0) << one.output();
  EXPECT_EQ(two.Stop(), 0) << two.output();

  // Each node alone, compaction off, takes more spans: the catalog then
  // lists batches of node 02's own for the restores below, and node 01's
  // directory holds batches of its own for the node id check (the day's
  // compactor may have merged all of a node's earlier ones into the other
  // node's outputs).
  for (const auto& [data, node, token, seed] :
       {std::tuple{data1, 1, ingest1, "4"}, std::tuple{data2, 2, ingest2, "3"}}) {
    ServerProcess alone(data, flags(fmt::format("{:02}", node), "0"));
    ASSERT_TRUE(alone.ready()) << alone.output();
    SendTraces(alone, token, seed, /*requests=*/12, /*spans=*/50, /*concurrency=*/2);
    ASSERT_TRUE(WaitRegistered(alone, data, node, **catalog)) << alone.output();
    EXPECT_EQ(alone.Stop(), 0) << alone.output();
  }
  catalog_spans = 0;
  for (int node : {1, 2}) {
    for (const auto& [id, rows] : CatalogBatches(**catalog, node)) catalog_spans += rows;
  }

  // Node 02 comes back on an empty data directory (its disk lost): it
  // restores its batches from the catalog and the store rather than take
  // them for replaced and remove them, and answers with every span again.
  // (The member removes before it adopts, in one round: the count reaches
  // both nodes' total only after a round that removed nothing.)
  {
    const std::set<std::string> listed_before = ListedBatches(**catalog, 2);
    const std::string again_dir = dir.path() + "/two-again";
    fs::create_directories(again_dir);
    ServerProcess again(again_dir, flags("02", "0"));
    ASSERT_TRUE(again.ready()) << again.output();
    const Clock::time_point deadline = Clock::now() + std::chrono::seconds(60);
    std::string count;
    while ((count = SpanCount(again, reader2)) != std::to_string(catalog_spans) &&
           Clock::now() < deadline) {
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    EXPECT_EQ(count, std::to_string(catalog_spans)) << again.output();
    EXPECT_EQ(ListedBatches(**catalog, 2), listed_before);
    EXPECT_NE(again.output().find("the data directory held no batch of node id 02"),
              std::string::npos)
        << again.output();
    EXPECT_EQ(again.Stop(), 0) << again.output();
  }

  // The store lost the meta.json of node 02's newest batch: a start on an
  // empty directory fails naming the batch and the runbook's section,
  // removes nothing from the catalog and keeps none of the batches it
  // restored before; with the object back, a start right after (the node
  // id was given up) on the same directory restores them all.
  {
    const std::set<std::string> listed_before = ListedBatches(**catalog, 2);
    ASSERT_FALSE(listed_before.empty());
    const std::string lost = *listed_before.rbegin();
    const storage::BatchId lost_id = *storage::BatchId::Parse(lost);
    const fs::path meta =
        fs::path(store) / storage::BatchObjectKey(lost_id.Day(), lost_id, "meta.json");
    fs::rename(meta, meta.string() + ".aside");
    const std::string lost_dir = dir.path() + "/two-lost";
    std::vector<std::string> args = {"serve",         "--data-dir",          lost_dir,
                                     "--api-address", "127.0.0.1:0",         "--otlp-grpc-address",
                                     "127.0.0.1:0",   "--otlp-http-address", "127.0.0.1:0"};
    for (const std::string& flag : flags("02", "0")) args.push_back(flag);
    auto [failed, said] = RunStrata(args);
    EXPECT_EQ(failed, 1) << said;
    EXPECT_NE(said.find("restoring batch " + lost), std::string::npos) << said;
    EXPECT_NE(said.find("restoring-this-nodes-batches-failed"), std::string::npos) << said;
    EXPECT_EQ(ListedBatches(**catalog, 2), listed_before);
    fs::rename(meta.string() + ".aside", meta);
    ServerProcess again(lost_dir, flags("02", "0"));
    ASSERT_TRUE(again.ready()) << again.output();
    EXPECT_NE(again.output().find(
                  fmt::format("restored {} from the batch catalog", listed_before.size())),
              std::string::npos)
        << again.output();
    EXPECT_EQ(again.Stop(), 0) << again.output();
    EXPECT_EQ(ListedBatches(**catalog, 2), listed_before);
  }
  // A data directory keeps its node id: node 01's directory as node 05.
  {
    std::vector<std::string> args = {"serve",         "--data-dir",          data1,
                                     "--api-address", "127.0.0.1:0",         "--otlp-grpc-address",
                                     "127.0.0.1:0",   "--otlp-http-address", "127.0.0.1:0"};
    for (const std::string& flag : flags("05")) args.push_back(flag);
    auto [other, said] = RunStrata(args);
    EXPECT_EQ(other, 1) << said;
    EXPECT_NE(said.find("serve it with --node-id 01"), std::string::npos) << said;
    EXPECT_NE(said.find("batches-of-another-node-id"), std::string::npos) << said;
  }
  // A catalog that does not answer stops the start, naming the runbook's
  // section (port 1 of loopback: nothing listens there).
  {
    std::vector<std::string> args = {"serve",
                                     "--data-dir",
                                     dir.path() + "/five",
                                     "--api-address",
                                     "127.0.0.1:0",
                                     "--otlp-grpc-address",
                                     "127.0.0.1:0",
                                     "--otlp-http-address",
                                     "127.0.0.1:0",
                                     "--object-store",
                                     "file://" + store,
                                     "--node-id",
                                     "06",
                                     "--catalog",
                                     "postgres://strata@127.0.0.1:1/strata"};
    auto [down, said] = RunStrata(args);
    EXPECT_EQ(down, 1) << said;
    EXPECT_NE(said.find("catalog-unusable"), std::string::npos) << said;
  }
  // The catalog needs an object store.
  auto [refused, why] = RunStrata({"serve", "--data-dir", dir.path() + "/four", "--catalog", url});
  EXPECT_EQ(refused, 2) << why;
  EXPECT_NE(why.find("--catalog needs --object-store"), std::string::npos) << why;
}

}  // namespace
}  // namespace strata::testing
