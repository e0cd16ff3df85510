#pragma once

// Test helpers of the several-server suites (cluster_catalog_test.cc,
// cluster_crash_test.cc): a server's own batches on its disk, and the
// shared catalog's batches of one node with their span rows.

#include <filesystem>
#include <map>
#include <set>
#include <string>

#include "cluster/postgres_batch_catalog.h"
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

}  // namespace strata::testing
