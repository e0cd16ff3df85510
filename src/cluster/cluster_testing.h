#pragma once

// Test support for the batch catalog: a catalog on a fresh database of the
// throwaway PostgreSQL server (postgres/postgres_testing.h), and valid
// catalog records.

#include <memory>
#include <string>
#include <vector>

#include "cluster/postgres_batch_catalog.h"
#include "gtest/gtest.h"
#include "otlp/decode.h"
#include "postgres/postgres_testing.h"
#include "storage/format/batch_id.h"
#include "storage/format/batch_meta.h"
#include "storage/storage.h"

namespace strata::cluster::testing {

// Skips the test when PostgreSQL 15 is not installed; otherwise a fresh
// database's URL.
class CatalogTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!postgres::testing::PostgresServer::BinariesPresent()) {
      GTEST_SKIP() << "PostgreSQL 15 is not installed (/usr/lib/postgresql/15/bin/initdb); "
                      "scripts/setup.sh --tests installs it";
    }
    std::string error;
    url_ = postgres::testing::PostgresServer::Get().NewDatabase(&error);
    ASSERT_FALSE(url_.empty()) << error;
  }
  // A new catalog (its own connection) on this test's database.
  std::unique_ptr<PostgresBatchCatalog> Open() {
    absl::StatusOr<std::unique_ptr<PostgresBatchCatalog>> catalog =
        PostgresBatchCatalog::Open(url_);
    EXPECT_TRUE(catalog.ok()) << catalog.status();
    return catalog.ok() ? *std::move(catalog) : nullptr;
  }
  const std::string& url() const { return url_; }

 private:
  std::string url_;
};

// A CatalogTest with one catalog open on its database (`shared_`).
class SharedCatalogTest : public CatalogTest {
 protected:
  void SetUp() override {
    CatalogTest::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    shared_ = Open();
    ASSERT_NE(shared_, nullptr);
  }
  std::unique_ptr<PostgresBatchCatalog> shared_;
};

// 2026-12-05 00:00:00 UTC in microseconds, and the id of level-0 batch
// `n` (n microseconds later) of node `node`.
inline constexpr int64_t kDayStartMicros = 1796428800000000;
inline constexpr char kDay[] = "2026-12-05";
inline std::string BatchIdOf(int n, int generation = 0, int node = 0) {
  return storage::BatchId::Make(kDayStartMicros + n, generation, node)->ToString();
}

// A valid record of batch `id` (no rows; a compaction output names
// `sources`).
inline CatalogBatch RecordOf(const std::string& id, std::vector<std::string> sources = {}) {
  const storage::BatchId parsed = *storage::BatchId::Parse(id);
  storage::BatchMeta meta;
  meta.id = id;
  meta.generation = static_cast<uint64_t>(parsed.generation());
  meta.day = parsed.Day();
  meta.ingest_time = {parsed.stamp_nanos(), parsed.stamp_nanos()};
  meta.sources = std::move(sources);
  meta.spans.traces = 0;
  EXPECT_TRUE(storage::ValidateBatchMeta(meta).ok()) << storage::ValidateBatchMeta(meta);
  return CatalogBatch{.id = id,
                      .day = meta.day,
                      .meta_json = storage::SerializeBatchMeta(meta),
                      .bytes = 1000 + static_cast<int64_t>(id.back())};
}

// Writes one request of one span to `storage`: one batch once it commits.
inline absl::Status WriteOneSpan(storage::Storage& storage) {
  static constexpr char kTrace[] =
      R"({"resourceSpans":[{"resource":{"attributes":[{"key":"service.name","value":)"
      R"({"stringValue":"checkout"}}]},"scopeSpans":[{"spans":[{"traceId":)"
      R"("5b8efff798038103d269b633813fc60c","spanId":"eee19b7ec3c1b174","name":"GET /cart",)"
      R"("startTimeUnixNano":"1750000000000000000","endTimeUnixNano":"1750000000100000000"}]}]}]})";
  storage::WriteRequest request;
  request.traces = std::make_unique<otlp::TraceBatch>();
  if (absl::Status decoded = otlp::DecodeTracesJson(kTrace, request.traces.get()); !decoded.ok()) {
    return decoded;
  }
  request.rows = 1;
  request.bytes = sizeof(kTrace);
  return storage.Write(std::move(request));
}

inline std::vector<std::string> IdsOf(const CatalogListing& listing) {
  std::vector<std::string> ids;
  for (const CatalogBatch& batch : listing.batches) ids.push_back(batch.id);
  return ids;
}

}  // namespace strata::cluster::testing
