// Other nodes' batches in a data directory (StorageOptions::shared_catalog):
// adopted as evicted batches from their meta.json, found by trace id and
// read back through the store, kept across a restart, dropped again; the
// uploader neither copies nor deletes them. And a compaction input put
// back from the store (ReplaceWithStoredBatches) while a reader still
// holds its retired record: it takes that record's directory over, which
// is deleted only after the last record of the id.

#include <chrono>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <thread>

#include "gtest/gtest.h"
#include "io/posix_file_system.h"
#include "objectstore/local_batch_store.h"
#include "otlp/decode.h"
#include "storage/format/batch_meta.h"
#include "storage/format/evicted_marker.h"
#include "storage/format/layout.h"
#include "storage/storage.h"
#include "storage/testing/commit_testing.h"
#include "storage/trace_lookup.h"

namespace strata::storage {
namespace {

constexpr char kTrace[] =
    R"({"resourceSpans":[{"resource":{"attributes":[{"key":"service.name","value":)"
    R"({"stringValue":"checkout"}}]},"scopeSpans":[{"spans":[{"traceId":)"
    R"("5b8efff798038103d269b633813fc60c","spanId":"eee19b7ec3c1b174","name":"GET /cart",)"
    R"("startTimeUnixNano":"1750000000000000000","endTimeUnixNano":"1750000000100000000"}]}]}]})";

// What RemoteBatchesTest::RetireWhileRead leaves.
struct RetiredWhileRead {
  absl::StatusOr<std::unique_ptr<Storage>> one;
  std::string meta_json;  // the input's, as uploaded
  std::shared_ptr<const Snapshot> reader;
  std::optional<BatchId> id;  // the input's
  std::string dir;
  std::optional<BatchId> output;
};

class RemoteBatchesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto store = objectstore::LocalBatchStore::Open(fs_, tmp_.path() + "/store");
    ASSERT_TRUE(store.ok()) << store.status();
    store_ = *std::move(store);
  }
  absl::StatusOr<std::unique_ptr<Storage>> OpenNode(const std::string& name, int node,
                                                    bool maintenance_thread = true) {
    StorageOptions options;
    options.node = node;
    options.object_store = store_.get();
    options.shared_catalog = true;
    options.upload.poll_interval = std::chrono::milliseconds(10);
    // Maintenance deletes retired batches' directories.
    options.start_maintenance = maintenance_thread;
    options.maintenance.idle_interval = std::chrono::milliseconds(10);
    return Storage::Open(fs_, tmp_.path() + "/" + name, options);
  }
  // The meta.json of node 1's one batch with the trace, once uploaded.
  std::string WriteOnNodeOne(Storage& one) {
    WriteRequest request;
    request.traces = std::make_unique<otlp::TraceBatch>();
    EXPECT_TRUE(otlp::DecodeTracesJson(kTrace, request.traces.get()).ok());
    request.rows = 1;
    request.bytes = sizeof(kTrace);
    EXPECT_TRUE(one.Write(std::move(request)).ok());
    const std::shared_ptr<const Snapshot> snapshot = one.Pin();
    EXPECT_EQ(snapshot->size(), 1u);
    const LiveBatch& batch = *snapshot->batches().front();
    EXPECT_TRUE(one.uploader()->WaitUploaded(batch.id(), std::chrono::seconds(30)).ok());
    return SerializeBatchMeta(batch.meta());
  }
  size_t StoredObjects() {
    absl::StatusOr<objectstore::ListPage> page = store_->List("", "", 1000);
    EXPECT_TRUE(page.ok()) << page.status();
    return page.ok() ? page->objects.size() : 0;
  }

  // Whether node `name`'s snapshot finds kTrace's one span.
  bool FindsTheSpan(const std::string& name, const Snapshot& snapshot) {
    // 5b8efff798038103d269b633813fc60c, the trace kTrace holds.
    const otlp::TraceId trace_id = {0x5b, 0x8e, 0xff, 0xf7, 0x98, 0x03, 0x81, 0x03,
                                    0xd2, 0x69, 0xb6, 0x33, 0x81, 0x3f, 0xc6, 0x0c};
    absl::StatusOr<std::optional<otlp::TraceBatch>> found =
        LookupTrace(fs_, tmp_.path() + "/" + name, snapshot, trace_id, nullptr,
                    TraceLookupDetail::kFull, store_.get());
    EXPECT_TRUE(found.ok()) << found.status();
    return found.ok() && found->has_value() && (*found)->spans.size() == 1;
  }
  // Reclaim steps until no compaction marker is pending (readers the
  // uploader holds let go on their own).
  void ReclaimUntilNoMarker(Storage& storage) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    do {
      storage.maintenance().Reclaim();
      if (!storage.GetMaintenanceStats().marker_pending) return;
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    } while (std::chrono::steady_clock::now() < deadline);
    ADD_FAILURE() << "the compaction marker is still pending";
  }

  // Node one's batch compacted (rewritten) while `r->reader` still holds
  // the Snapshot naming it: the input retired but not yet let go.
  void RetireWhileRead(RetiredWhileRead* r) {
    r->one = OpenNode("one", 1, /*maintenance_thread=*/false);
    ASSERT_TRUE(r->one.ok()) << r->one.status();
    r->meta_json = WriteOnNodeOne(**r->one);
    r->reader = (*r->one)->Pin();
    std::shared_ptr<const LiveBatch> input = r->reader->batches().front();
    r->id = input->id();
    r->dir = input->dir();
    absl::StatusOr<BatchId> output = (*r->one)->maintenance().RewriteWithFreshRollups(input);
    input.reset();
    ASSERT_TRUE(output.ok()) << output.status();
    r->output = *output;
  }

  PosixFileSystem fs_;
  testing::ScopedTempDir tmp_{"remote_batches"};
  std::unique_ptr<objectstore::LocalBatchStore> store_;
};

TEST_F(RemoteBatchesTest, AnAdoptedBatchIsFoundByTraceIdAndKeptAcrossARestart) {
  auto one = OpenNode("one", 1);
  ASSERT_TRUE(one.ok()) << one.status();
  const std::string meta_json = WriteOnNodeOne(**one);
  const size_t objects = StoredObjects();
  // The store's batches, as the cluster member's reconciler lists them.
  absl::StatusOr<std::map<BatchId, std::string>> stored = ListStoredBatches(*store_);
  ASSERT_TRUE(stored.ok()) << stored.status();
  ASSERT_EQ(stored->size(), 1u);
  EXPECT_EQ(stored->begin()->first, (*one)->Pin()->batches().front()->id());
  EXPECT_EQ(stored->begin()->second, (*one)->Pin()->batches().front()->day());
  // 5b8efff798038103d269b633813fc60c, the trace kTrace holds.
  const otlp::TraceId trace_id = {0x5b, 0x8e, 0xff, 0xf7, 0x98, 0x03, 0x81, 0x03,
                                  0xd2, 0x69, 0xb6, 0x33, 0x81, 0x3f, 0xc6, 0x0c};
  for (int boot = 0; boot < 2; ++boot) {
    auto two = OpenNode("two", 2);
    ASSERT_TRUE(two.ok()) << two.status();
    if (boot == 0) ASSERT_TRUE((*two)->AdoptRemoteBatch(meta_json).ok());
    // Adopting again is a no-op.
    ASSERT_TRUE((*two)->AdoptRemoteBatch(meta_json).ok());
    const std::shared_ptr<const Snapshot> snapshot = (*two)->Pin();
    ASSERT_EQ(snapshot->size(), 1u) << "boot " << boot;
    const LiveBatch& batch = *snapshot->batches().front();
    EXPECT_EQ(batch.id().node(), 1);
    EXPECT_TRUE(*HasEvictedMarker(fs_, batch.dir()));
    EXPECT_FALSE(*fs_.Exists(JoinPath(batch.dir(), kSpansFileName)));
    absl::StatusOr<std::optional<otlp::TraceBatch>> found =
        LookupTrace(fs_, tmp_.path() + "/two", *snapshot, trace_id, nullptr,
                    TraceLookupDetail::kFull, store_.get());
    ASSERT_TRUE(found.ok()) << found.status();
    ASSERT_TRUE(found->has_value()) << "boot " << boot;
    EXPECT_EQ((*found)->spans.size(), 1u);
    // Node 2's uploader takes nothing of node 1's for its own: not as
    // found in the store at its start, not as pending.
    EXPECT_EQ((*two)->uploader()->Stats().found_at_start, 0u) << "boot " << boot;
    EXPECT_FALSE((*two)->uploader()->IsUploaded(batch.id()));
    EXPECT_EQ(StoredObjects(), objects);
  }
  auto two = OpenNode("two", 2);
  ASSERT_TRUE(two.ok()) << two.status();
  const std::string dir = (*two)->Pin()->batches().front()->dir();
  ASSERT_TRUE((*two)->DropRemoteBatch((*two)->Pin()->batches().front()->id()).ok());
  EXPECT_EQ((*two)->Pin()->size(), 0u);
  // The local directory goes (retired, then deleted by maintenance); the
  // objects stay.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (*fs_.Exists(dir) && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  EXPECT_FALSE(*fs_.Exists(dir));
  EXPECT_EQ(StoredObjects(), objects);
}

TEST_F(RemoteBatchesTest, ANodesOwnBatchIsRestoredIntoAnEmptyDirectoryAndNotUploadedAgain) {
  std::string meta_json;
  {
    auto one = OpenNode("one", 1);
    ASSERT_TRUE(one.ok()) << one.status();
    meta_json = WriteOnNodeOne(**one);
  }
  const size_t objects = StoredObjects();
  const otlp::TraceId trace_id = {0x5b, 0x8e, 0xff, 0xf7, 0x98, 0x03, 0x81, 0x03,
                                  0xd2, 0x69, 0xb6, 0x33, 0x81, 0x3f, 0xc6, 0x0c};
  // Node 1 again, on a new, empty directory; then restarted on it.
  for (int boot = 0; boot < 2; ++boot) {
    auto again = OpenNode("one-again", 1);
    ASSERT_TRUE(again.ok()) << again.status();
    if (boot == 0) {
      EXPECT_EQ((*again)->Pin()->size(), 0u);
      ASSERT_TRUE((*again)->RestoreOwnBatch(meta_json).ok());
      ASSERT_TRUE((*again)->RestoreOwnBatch(meta_json).ok());  // a no-op
    } else {
      EXPECT_EQ((*again)->uploader()->Stats().found_at_start, 1u);
    }
    const std::shared_ptr<const Snapshot> snapshot = (*again)->Pin();
    ASSERT_EQ(snapshot->size(), 1u) << "boot " << boot;
    const LiveBatch& batch = *snapshot->batches().front();
    EXPECT_EQ(batch.id().node(), 1);
    EXPECT_TRUE(*HasEvictedMarker(fs_, batch.dir()));
    EXPECT_TRUE((*again)->uploader()->IsUploaded(batch.id()));
    absl::StatusOr<std::optional<otlp::TraceBatch>> found =
        LookupTrace(fs_, tmp_.path() + "/one-again", *snapshot, trace_id, nullptr,
                    TraceLookupDetail::kFull, store_.get());
    ASSERT_TRUE(found.ok()) << found.status();
    ASSERT_TRUE(found->has_value()) << "boot " << boot;
    EXPECT_EQ((*found)->spans.size(), 1u);
    // The uploader takes the restored batch as in the store: nothing is
    // put again (its local directory has no data files to put).
    EXPECT_EQ((*again)->uploader()->Stats().failures, 0u) << "boot " << boot;
    EXPECT_EQ((*again)->uploader()->Stats().batches_uploaded, 0u) << "boot " << boot;
    EXPECT_EQ(StoredObjects(), objects);
  }
  // Only this node's batches are restored.
  auto two = OpenNode("two", 2);
  ASSERT_TRUE(two.ok()) << two.status();
  EXPECT_EQ((*two)->RestoreOwnBatch(meta_json).code(), absl::StatusCode::kInvalidArgument);
}

TEST_F(RemoteBatchesTest, OwnBatchesAndBrokenRecordsAreRefused) {
  auto one = OpenNode("one", 1);
  ASSERT_TRUE(one.ok()) << one.status();
  const std::string meta_json = WriteOnNodeOne(**one);
  EXPECT_EQ((*one)->AdoptRemoteBatch(meta_json).code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ((*one)->DropRemoteBatch((*one)->Pin()->batches().front()->id()).code(),
            absl::StatusCode::kInvalidArgument);
  // A batch whose files are on this disk is never forgotten: only one
  // restored from the store is.
  const BatchId own = (*one)->Pin()->batches().front()->id();
  EXPECT_EQ((*one)->ForgetRestoredBatch(own).code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ((*one)->Pin()->size(), 1u);
  auto two = OpenNode("two", 2);
  ASSERT_TRUE(two.ok()) << two.status();
  EXPECT_EQ((*two)->ForgetRestoredBatch(own).code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ((*two)->AdoptRemoteBatch("{\"format\":3}").code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ((*two)->Pin()->size(), 0u);
}

// A cluster node whose compaction output is dropped (its lease lost) puts
// the input back from the store while a reader still holds the retired
// input: the put-back record takes the input's directory over, and
// neither the old record's release nor reclaim deletes it.
TEST_F(RemoteBatchesTest, AnInputPutBackWhileStillReadTakesItsDirectoryOver) {
  RetiredWhileRead r;
  ASSERT_NO_FATAL_FAILURE(RetireWhileRead(&r));
  auto& [one, meta_json, reader, id_or, dir, output_or] = r;
  const BatchId id = *id_or;
  const BatchId output = *output_or;
  ASSERT_EQ((*one)->Pin()->Find(id), nullptr);
  ASSERT_TRUE(*fs_.Exists(dir));  // `reader` holds it
  // The output dropped, the input back, in one Snapshot.
  absl::Status replaced = (*one)->ReplaceWithStoredBatches({meta_json}, {output});
  ASSERT_TRUE(replaced.ok()) << replaced;
  {
    const std::shared_ptr<const Snapshot> now = (*one)->Pin();
    ASSERT_EQ(now->size(), 1u);
    ASSERT_NE(now->Find(id), nullptr);
    EXPECT_EQ(now->Find(id)->dir(), dir);
    EXPECT_TRUE(FindsTheSpan("one", *now));
    EXPECT_TRUE(FindsTheSpan("one", *reader));
  }
  // The old record let go, then reclaimed: the directory stays, the
  // output goes, and so does the marker.
  reader.reset();
  ReclaimUntilNoMarker(**one);
  EXPECT_TRUE(*fs_.Exists(JoinPath(dir, kBatchMetaFileName)));
  EXPECT_TRUE(*fs_.Exists(JoinPath(dir, kSpansFileName)));
  EXPECT_FALSE(*fs_.Exists(DataDirPaths(tmp_.path() + "/one").RetiredBatch(id)));
  EXPECT_TRUE(FindsTheSpan("one", *(*one)->Pin()));
  EXPECT_TRUE((*one)->uploader()->IsUploaded(id));
  // Boot reads it back: a whole local batch, uploaded.
  one->reset();
  auto again = OpenNode("one", 1, /*maintenance_thread=*/false);
  ASSERT_TRUE(again.ok()) << again.status();
  const std::shared_ptr<const Snapshot> booted = (*again)->Pin();
  ASSERT_EQ(booted->size(), 1u);
  ASSERT_NE(booted->Find(id), nullptr);
  EXPECT_FALSE(*HasEvictedMarker(fs_, dir));
  EXPECT_TRUE(FindsTheSpan("one", *booted));
  EXPECT_TRUE((*again)->uploader()->IsUploaded(id));
  (*again)->maintenance().Reclaim();
  EXPECT_TRUE(*fs_.Exists(dir));
}

// The other order: the put-back record is retired and let go while a
// reader still holds the input's first record. The directory stays until
// that reader lets go too, and only then is deleted.
TEST_F(RemoteBatchesTest, ASharedDirectoryIsDeletedOnlyAfterItsLastRecord) {
  RetiredWhileRead r;
  ASSERT_NO_FATAL_FAILURE(RetireWhileRead(&r));
  auto& [one, meta_json, reader, id_or, dir, output_or] = r;
  const BatchId id = *id_or;
  const BatchId output = *output_or;
  ASSERT_TRUE((*one)->ReplaceWithStoredBatches({meta_json}, {output}).ok());
  // Another node's compaction replaced it after all.
  ASSERT_TRUE((*one)->ReplaceWithStoredBatches({}, {id}).ok());
  ASSERT_EQ((*one)->Pin()->size(), 0u);
  for (int step = 0; step < 3; ++step) (*one)->maintenance().Reclaim();
  EXPECT_TRUE(*fs_.Exists(JoinPath(dir, kSpansFileName)));
  EXPECT_TRUE(FindsTheSpan("one", *reader));
  reader.reset();
  ReclaimUntilNoMarker(**one);
  EXPECT_FALSE(*fs_.Exists(dir));
  one->reset();
  auto again = OpenNode("one", 1, /*maintenance_thread=*/false);
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_EQ((*again)->Pin()->size(), 0u);
}

// A retired directory an earlier deletion of the same id left in
// staging/ (the id was then published again and retired once more) is
// debris once no record of the id is alive: it would block the rename
// out of days/, so reclaim removes it and deletes the directory.
TEST_F(RemoteBatchesTest, DebrisOfAnEarlierDeletionOfTheIdIsRemovedBeforeTheDirectory) {
  RetiredWhileRead r;
  ASSERT_NO_FATAL_FAILURE(RetireWhileRead(&r));
  const std::string debris = DataDirPaths(tmp_.path() + "/one").RetiredBatch(*r.id);
  ASSERT_TRUE(fs_.CreateDir(debris).ok());
  auto left = fs_.NewWritableFile(JoinPath(debris, kBatchMetaFileName));
  ASSERT_TRUE(left.ok()) << left.status();
  ASSERT_TRUE((*left)->Append("left over").ok());
  ASSERT_TRUE((*left)->Close().ok());
  r.reader.reset();
  ReclaimUntilNoMarker(**r.one);
  EXPECT_FALSE(*fs_.Exists(r.dir));
  EXPECT_FALSE(*fs_.Exists(debris));
}

}  // namespace
}  // namespace strata::storage
