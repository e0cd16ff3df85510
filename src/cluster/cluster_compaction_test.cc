// One compactor per day over real storage engines: two nodes share a file
// store and the PostgreSQL catalog. The node holding the day merges both
// nodes' batches (the other's read back from the store), its output takes
// them all out of the catalog, and the other node drops its own copies and
// adopts the output: every span is listed once, on both nodes.

#include <chrono>
#include <fstream>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "cluster/cluster_member.h"
#include "cluster/cluster_testing.h"
#include "cluster/compaction_gate.h"
#include "cluster/storage_local.h"
#include "common/mutex.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "io/posix_file_system.h"
#include "objectstore/local_batch_store.h"
#include "otlp/decode.h"
#include "storage/format/layout.h"
#include "storage/format/object_layout.h"
#include "storage/storage.h"
#include "storage/testing/commit_testing.h"

namespace strata::cluster {
namespace {

using ::strata::cluster::testing::IdsOf;
using ::testing::Each;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Not;

// One server: its storage engine (maintenance driven by the test), the
// gate compaction asks, and its membership.
struct Node {
  // What maintenance reported.
  std::vector<std::string> Errors() {
    MutexLock lock(&mu);
    return errors;
  }
  int number = 0;
  std::shared_ptr<ClusterCompactionGate> gate = std::make_shared<ClusterCompactionGate>();
  std::unique_ptr<storage::Storage> storage;
  std::unique_ptr<ClusterMember> member;
  Mutex mu;
  std::vector<std::string> errors ABSL_GUARDED_BY(mu);
  ~Node() {
    gate->Detach();
    member.reset();
    storage.reset();
  }
};

class ClusterCompactionTest : public testing::SharedCatalogTest {
 protected:
  void SetUp() override {
    testing::SharedCatalogTest::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    auto store = objectstore::LocalBatchStore::Open(fs_, tmp_.path() + "/store");
    ASSERT_TRUE(store.ok()) << store.status();
    store_ = *std::move(store);
  }
  // Node `node` ("01", "02") on its own data directory; `wrap` may change
  // what its membership calls.
  std::unique_ptr<Node> Start(const std::string& node,
                              const std::function<void(ClusterMember::Local&)>& wrap = {}) {
    auto started = std::make_unique<Node>();
    storage::StorageOptions options;
    options.node = *storage::ParseBatchIdNode(node);
    started->number = options.node;
    options.object_store = store_.get();
    options.shared_catalog = true;
    options.upload.poll_interval = std::chrono::milliseconds(10);
    options.start_maintenance = false;
    options.maintenance.policy.min_inputs = 2;
    options.maintenance.gate = started->gate;
    options.maintenance.on_error = [node = started.get()](const absl::Status& status) {
      MutexLock lock(&node->mu);
      node->errors.push_back(status.ToString());
    };
    absl::StatusOr<std::unique_ptr<storage::Storage>> storage =
        storage::Storage::Open(fs_, tmp_.path() + "/" + node, options);
    EXPECT_TRUE(storage.ok()) << storage.status();
    if (!storage.ok()) return nullptr;
    started->storage = *std::move(storage);
    absl::StatusOr<ClusterMember::Local> local = LocalOfStorage(*started->storage);
    EXPECT_TRUE(local.ok()) << local.status();
    if (!local.ok()) return nullptr;
    if (wrap) wrap(*local);
    ClusterMemberOptions member;
    member.node = node;
    member.instance = "i" + node;
    absl::StatusOr<std::unique_ptr<ClusterMember>> joined =
        ClusterMember::Join(*shared_, *std::move(local), member);
    EXPECT_TRUE(joined.ok()) << joined.status();
    if (!joined.ok()) return nullptr;
    started->member = *std::move(joined);
    started->gate->Attach(started->member.get());
    return started;
  }
  // Writes `n` batches of one span each and waits until they are uploaded.
  static void WriteBatches(Node& node, int n) {
    for (int i = 0; i < n; ++i) ASSERT_TRUE(testing::WriteOneSpan(*node.storage).ok());
    WaitUploaded(node);
  }
  // Writes `each` batches on both nodes; each registers its own, then
  // adopts the other's.
  static void WriteAndShare(Node& one, Node& two, int each) {
    ASSERT_NO_FATAL_FAILURE(WriteBatches(one, each));
    ASSERT_NO_FATAL_FAILURE(WriteBatches(two, each));
    for (int round = 0; round < 2; ++round) {
      ASSERT_TRUE(one.member->Sync().ok());
      ASSERT_TRUE(two.member->Sync().ok());
    }
  }
  // Waits until the node's own batches are in the store.
  static void WaitUploaded(Node& node) {
    for (const auto& batch : node.storage->Pin()->batches()) {
      if (batch->id().node() != node.number) continue;  // adopted
      ASSERT_TRUE(
          node.storage->uploader()->WaitUploaded(batch->id(), std::chrono::seconds(30)).ok());
    }
  }
  // Spans in the node's live batches, and how many batches hold them.
  static uint64_t SpansOf(const Node& node) {
    uint64_t spans = 0;
    for (const auto& batch : node.storage->Pin()->batches()) spans += batch->meta().spans.rows;
    return spans;
  }
  std::vector<std::string> CatalogIds() { return IdsOf(*shared_->List()); }

  PosixFileSystem fs_;
  storage::testing::ScopedTempDir tmp_{"cluster_compaction"};
  std::unique_ptr<objectstore::BatchStore> store_;
};

TEST_F(ClusterCompactionTest, TheDaysHolderMergesEveryNodesBatchesAndTheOtherFollows) {
  std::unique_ptr<Node> one = Start("01");
  std::unique_ptr<Node> two = Start("02");
  ASSERT_NE(one, nullptr);
  ASSERT_NE(two, nullptr);
  ASSERT_NO_FATAL_FAILURE(WriteAndShare(*one, *two, 2));
  ASSERT_EQ(CatalogIds().size(), 4u);
  ASSERT_THAT(one->Errors(), IsEmpty());
  ASSERT_EQ(SpansOf(*one), 4u);
  ASSERT_EQ(SpansOf(*two), 4u);

  // Node 01 takes the day and merges all four; node 02 is refused the day.
  ASSERT_TRUE(one->storage->maintenance().RunStep());
  EXPECT_EQ(one->storage->GetMaintenanceStats().compactions, 1u);
  EXPECT_EQ(one->storage->GetMaintenanceStats().compacted_input_batches, 4u);
  (void)two->storage->maintenance().RunStep();
  EXPECT_EQ(two->storage->GetMaintenanceStats().compactions, 0u);
  EXPECT_EQ(two->member->Stats().claims_refused, 1u);
  ASSERT_EQ(one->storage->Pin()->size(), 1u);
  const storage::BatchId output = one->storage->Pin()->batches().front()->id();
  EXPECT_EQ(output.node(), 1);
  EXPECT_EQ(SpansOf(*one), 4u) << "the merge read node 02's batches back from the store";

  // Registered with the removal of all four inputs, node 02's among them.
  ASSERT_TRUE(one->storage->uploader()->WaitUploaded(output, std::chrono::seconds(30)).ok());
  ASSERT_TRUE(one->member->Sync().ok());
  EXPECT_THAT(CatalogIds(), ElementsAre(output.ToString()));
  // Node 02 drops its own copies and adopts the output in one sync.
  ASSERT_TRUE(two->member->Sync().ok());
  EXPECT_EQ(two->member->Stats().batches_replaced_elsewhere, 2u);
  ASSERT_EQ(two->storage->Pin()->size(), 1u);
  EXPECT_EQ(two->storage->Pin()->batches().front()->id(), output);
  EXPECT_EQ(SpansOf(*two), 4u);
  // Nothing registers twice afterwards.
  ASSERT_TRUE(one->member->Sync().ok());
  ASSERT_TRUE(two->member->Sync().ok());
  EXPECT_THAT(CatalogIds(), ElementsAre(output.ToString()));
  // The day was given back once the output was registered: node 02 may
  // take it now.
  EXPECT_TRUE(two->member->ClaimDay(output.Day()));
  EXPECT_THAT(one->Errors(), IsEmpty());
  EXPECT_THAT(two->Errors(), IsEmpty());
}

// Every change node 02 makes to its local catalog while it follows node
// 01's compaction (its own inputs dropped, node 01's dropped, the output
// adopted) leaves a reader of node 02 every span exactly once: no
// Snapshot lacks the rows of the inputs dropped, or holds them twice.
TEST_F(ClusterCompactionTest, TheFollowingNodesReadersSeeEverySpanOnceAtEveryStep) {
  std::unique_ptr<Node> one = Start("01");
  Mutex mu;
  std::vector<uint64_t> seen;  // node 02's spans after each change
  Node* two_node = nullptr;
  auto record = [&] {
    MutexLock lock(&mu);
    seen.push_back(SpansOf(*two_node));
  };
  std::unique_ptr<Node> two = Start("02", [&](ClusterMember::Local& local) {
    local.adopt = [adopt = local.adopt, &record](const std::string& meta_json) {
      absl::Status status = adopt(meta_json);
      record();
      return status;
    };
    local.drop = [drop = local.drop, &record](const storage::BatchId& id) {
      absl::Status status = drop(id);
      record();
      return status;
    };
    local.replace = [replace = local.replace, &record](const std::vector<std::string>& stored,
                                                       const std::vector<storage::BatchId>& drop) {
      absl::Status status = replace(stored, drop);
      record();
      return status;
    };
  });
  ASSERT_NE(one, nullptr);
  ASSERT_NE(two, nullptr);
  two_node = two.get();
  ASSERT_NO_FATAL_FAILURE(WriteAndShare(*one, *two, 2));
  ASSERT_EQ(SpansOf(*two), 4u);
  ASSERT_TRUE(one->storage->maintenance().RunStep());
  ASSERT_EQ(one->storage->GetMaintenanceStats().compactions, 1u);
  const storage::BatchId output = one->storage->Pin()->batches().front()->id();
  ASSERT_TRUE(one->storage->uploader()->WaitUploaded(output, std::chrono::seconds(30)).ok());
  ASSERT_TRUE(one->member->Sync().ok());
  {
    MutexLock lock(&mu);
    seen.clear();
  }
  ASSERT_TRUE(two->member->Sync().ok());
  EXPECT_EQ(two->member->Stats().batches_replaced_elsewhere, 2u);
  EXPECT_EQ(two->storage->Pin()->size(), 1u);
  MutexLock lock(&mu);
  EXPECT_THAT(seen, Not(IsEmpty()));
  EXPECT_THAT(seen, Each(4u));
}

// Node 02's spans.parquet in the store no longer matches its meta.json
// (same length, one byte changed): node 01's merge fails naming the batch,
// and its inputs stay live here and in the catalog.
TEST_F(ClusterCompactionTest, ARemoteInputUnlikeItsMetaJsonFailsTheMergeAndChangesNothing) {
  std::unique_ptr<Node> one = Start("01");
  std::unique_ptr<Node> two = Start("02");
  ASSERT_NE(one, nullptr);
  ASSERT_NE(two, nullptr);
  ASSERT_NO_FATAL_FAILURE(WriteAndShare(*one, *two, 1));
  const std::vector<std::string> listed = CatalogIds();
  ASSERT_EQ(listed.size(), 2u);
  const storage::BatchId theirs = two->storage->Pin()->batches().front()->id().node() == 2
                                      ? two->storage->Pin()->batches().front()->id()
                                      : two->storage->Pin()->batches().back()->id();
  ASSERT_EQ(theirs.node(), 2);
  const std::string object = tmp_.path() + "/store/" +
                             storage::BatchObjectKey(theirs.Day(), theirs, storage::kSpansFileName);
  {
    std::fstream file(object, std::ios::in | std::ios::out | std::ios::binary);
    ASSERT_TRUE(file.good()) << object;
    file.seekg(0, std::ios::end);
    const std::streamoff size = file.tellg();
    ASSERT_GT(size, 16);
    file.seekg(size / 2);
    char byte = 0;
    file.read(&byte, 1);
    file.seekp(size / 2);
    byte = static_cast<char>(byte ^ 0x5a);
    file.write(&byte, 1);
  }
  EXPECT_FALSE(one->storage->maintenance().RunStep());
  EXPECT_EQ(one->storage->GetMaintenanceStats().compactions, 0u);
  EXPECT_EQ(one->storage->GetMaintenanceStats().compaction_failures, 1u);
  const std::vector<std::string> errors = one->Errors();
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_THAT(errors[0], HasSubstr("DATA_LOSS: compaction input " + theirs.ToString() +
                                   " (spans.parquet, read from the object store)"));
  EXPECT_THAT(errors[0], HasSubstr("but its meta.json declares"));
  EXPECT_EQ(one->storage->Pin()->size(), 2u);
  ASSERT_TRUE(one->member->Sync().ok());
  EXPECT_EQ(CatalogIds(), listed);
}

// Node 01 lost the day's lease while it merged (another node took the day
// and compacted one input) and a reader still holds the inputs: the output
// is dropped and the other input put back from the store on the directory
// the reader holds, which stays once the reader lets go and after a
// restart.
TEST_F(ClusterCompactionTest, AnInputPutBackWhileAReaderHoldsItKeepsItsDirectory) {
  std::unique_ptr<Node> one = Start("01");
  ASSERT_NE(one, nullptr);
  ASSERT_NO_FATAL_FAILURE(WriteBatches(*one, 2));
  ASSERT_TRUE(one->member->Sync().ok());
  ASSERT_EQ(CatalogIds().size(), 2u);
  std::shared_ptr<const storage::Snapshot> reader = one->storage->Pin();
  const storage::BatchId a = reader->batches()[0]->id(), b = reader->batches()[1]->id();
  const std::string b_dir = reader->batches()[1]->dir();
  ASSERT_TRUE(one->storage->maintenance().RunStep());
  ASSERT_EQ(one->storage->GetMaintenanceStats().compactions, 1u);
  // Another node takes the day after node 01's lease ran out and compacts a.
  const absl::Time later = absl::Now() + absl::Hours(1);
  const std::optional<DayLease> lease =
      *shared_->AcquireLease(a.Day(), "02/z", later, absl::Seconds(30));
  ASSERT_TRUE(lease.has_value());
  const std::string theirs = storage::BatchId::Make(a.stamp_micros() + 1, 1, 2)->ToString();
  ASSERT_TRUE(
      shared_
          ->Swap(*lease, {a.ToString()}, {testing::RecordOf(theirs, {a.ToString()})}, "02", later)
          .ok());
  ASSERT_TRUE(shared_->ReleaseLease(*lease).ok());
  const absl::Status synced = one->member->Sync();
  ASSERT_TRUE(synced.ok()) << synced;
  EXPECT_EQ(one->member->Stats().outputs_discarded, 1u);
  std::vector<std::string> here;
  for (const auto& batch : one->storage->Pin()->batches()) here.push_back(batch->id().ToString());
  EXPECT_THAT(here, ElementsAre(theirs, b.ToString()));
  reader.reset();
  for (int step = 0; step < 3; ++step) (void)one->storage->maintenance().Reclaim();
  EXPECT_TRUE(*fs_.Exists(b_dir + "/" + storage::kSpansFileName));
  EXPECT_EQ(SpansOf(*one), 1u);
  EXPECT_THAT(one->Errors(), IsEmpty());
  one.reset();
  one = Start("01");
  ASSERT_NE(one, nullptr);
  EXPECT_NE(one->storage->Pin()->Find(b), nullptr);
  EXPECT_EQ(SpansOf(*one), 1u);
}

}  // namespace
}  // namespace strata::cluster
