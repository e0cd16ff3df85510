#pragma once

// Test helpers of the several-server suites (cluster_catalog_test.cc,
// cluster_crash_test.cc, cluster_restore_kill_test.cc): a server's own
// batches on its disk, the shared catalog's batches of one node with their
// span rows, traces sent with `strata loadgen`, and the wait until a
// server's batches are all registered.

#include <chrono>
#include <filesystem>
#include <map>
#include <set>
#include <string>
#include <thread>

#include "cluster/postgres_batch_catalog.h"
#include "e2e/metrics_page.h"
#include "e2e/server_process.h"
#include "gtest/gtest.h"
#include "storage/format/batch_id.h"
#include "storage/format/batch_meta.h"

namespace strata::testing {

// The batch directories of node `node` under `data`'s days (the server's
// own live batches once it is idle).
inline std::set<std::string> OwnBatches(const std::string& data, int node) {
  std::set<std::string> ids;
  for (const auto& day : std::filesystem::directory_iterator(data + "/telemetry/days")) {
    for (const auto& entry : std::filesystem::directory_iterator(day.path())) {
      const std::string id = entry.path().stem().string();
      if (entry.path().extension() == ".batch" && storage::BatchId::Parse(id)->node() == node) {
        ids.insert(id);
      }
    }
  }
  return ids;
}

// The catalog's live batches of node `node` and their span rows (a test
// failure when the listing or a meta.json fails).
inline std::map<std::string, uint64_t> CatalogBatches(cluster::PostgresBatchCatalog& catalog,
                                                      int node) {
  std::map<std::string, uint64_t> rows;
  absl::StatusOr<cluster::CatalogListing> listing = catalog.List();
  EXPECT_TRUE(listing.ok()) << listing.status();
  if (!listing.ok()) return rows;
  for (const cluster::CatalogBatch& batch : listing->batches) {
    if (storage::BatchId::Parse(batch.id)->node() != node) continue;
    absl::StatusOr<storage::BatchMeta> meta = storage::ParseBatchMeta(batch.meta_json, batch.id);
    EXPECT_TRUE(meta.ok()) << meta.status();
    rows[batch.id] = meta.ok() ? meta->spans.rows : 0;
  }
  return rows;
}

// The ids of CatalogBatches().
inline std::set<std::string> ListedBatches(cluster::PostgresBatchCatalog& catalog, int node) {
  std::set<std::string> ids;
  for (const auto& [id, rows] : CatalogBatches(catalog, node)) ids.insert(id);
  return ids;
}

// Sends `requests` OTLP/HTTP trace requests of `spans` spans each to
// `server` with `strata loadgen` (`concurrency` at a time, seed `seed`) and
// waits for it (a test failure when it fails or takes over a minute).
inline void SendTraces(const ServerProcess& server, const std::string& token,
                       const std::string& seed, int requests, int spans, int concurrency) {
  Subprocess loadgen({STRATA_BINARY,     "loadgen",
                      "--protocol",      "http/protobuf",
                      "--target",        server.http_address(),
                      "--token",         token,
                      "--seed",          seed,
                      "--signals",       "traces",
                      "--request-spans", std::to_string(spans),
                      "--concurrency",   std::to_string(concurrency),
                      "--max-requests",  std::to_string(requests),
                      "--duration",      "30",
                      "--quiet"},
                     ChildEnvironment());
  EXPECT_EQ(loadgen.Wait(std::chrono::seconds(60)), 0) << loadgen.output();
}

// Waits (up to `timeout`) until `server` (node `node`, data directory
// `data`) has uploaded every batch and the catalog lists exactly its own
// batches, some of them; whether it did.
inline bool WaitRegistered(const ServerProcess& server, const std::string& data, int node,
                           cluster::PostgresBatchCatalog& catalog,
                           std::chrono::seconds timeout = std::chrono::seconds(90)) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  for (;;) {
    const std::set<std::string> listed = ListedBatches(catalog, node);
    if (MetricSample(MetricsPage(server), "strata_upload_pending_batches") == 0 &&
        !listed.empty() && OwnBatches(data, node) == listed) {
      return true;
    }
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
}

}  // namespace strata::testing
