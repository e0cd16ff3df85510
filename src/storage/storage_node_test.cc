// The storage engine stamps the node it is given into every batch id it
// issues (StorageOptions::node, `strata serve --node-id`).

#include <memory>
#include <string>

#include "gtest/gtest.h"
#include "io/posix_file_system.h"
#include "otlp/decode.h"
#include "storage/commit/catalog.h"
#include "storage/storage.h"
#include "storage/testing/commit_testing.h"

namespace strata::storage {
namespace {

TEST(StorageNodeTest, EveryBatchIdCarriesTheNodeAcrossARestartAsAnotherNode) {
  PosixFileSystem fs;
  testing::ScopedTempDir tmp("storage_node");
  const std::string data = tmp.path() + "/data";
  const std::string json =
      R"({"resourceLogs":[{"scopeLogs":[{"logRecords":[{"timeUnixNano":"1750000000000000000",)"
      R"("body":{"stringValue":"one"}}]}]}]})";
  for (int node : {kMaxNode, 5}) {
    StorageOptions options;
    options.node = node;
    auto storage = Storage::Open(fs, data, options);
    ASSERT_TRUE(storage.ok()) << storage.status();
    WriteRequest request;
    request.logs = std::make_unique<otlp::LogBatch>();
    ASSERT_TRUE(otlp::DecodeLogsJson(json, request.logs.get()).ok());
    request.rows = 1;
    request.bytes = json.size();
    ASSERT_TRUE((*storage)->Write(std::move(request)).ok());
    // The newest batch is this node's; the earlier run's keeps its own.
    std::shared_ptr<const Snapshot> snapshot = (*storage)->Pin();
    ASSERT_FALSE(snapshot->batches().empty());
    EXPECT_EQ(snapshot->batches().back()->id().node(), node);
    EXPECT_EQ(snapshot->batches().front()->id().node(), kMaxNode);
  }
}

}  // namespace
}  // namespace strata::storage
