// A cluster member over a real storage engine, a file store and the
// PostgreSQL catalog (LocalOfStorage): restoring a node's batches into an
// empty data directory when the store does not hold one of them, or does
// not answer. The start fails naming the batch, the directory is left
// holding none of the node's batches, the catalog still lists them all,
// and the next start restores them. A restore cut short (the restore
// marker left) is finished by the next start before anything is removed.

#include "cluster/storage_local.h"

#include <atomic>
#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "cluster/cluster_testing.h"
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
using ::testing::ElementsAre;
using ::testing::HasSubstr;

// A local file store that stops answering (every call Unavailable) while
// `answers` is false: a store that is down or out of reach.
class SwitchedStore : public objectstore::BatchStore {
 public:
  explicit SwitchedStore(std::unique_ptr<objectstore::BatchStore> store)
      : store_(std::move(store)) {}
  std::atomic<bool> answers{true};

  absl::Status PutIfAbsent(std::string_view key, std::string_view data) override {
    if (!answers) return Down();
    return store_->PutIfAbsent(key, data);
  }
  absl::Status PutStreamIfAbsent(std::string_view key, uint64_t size,
                                 const objectstore::PartReader& read) override {
    if (!answers) return Down();
    return store_->PutStreamIfAbsent(key, size, read);
  }
  absl::StatusOr<std::string> Get(std::string_view key, uint64_t offset, uint64_t length) override {
    if (!answers) return Down();
    return store_->Get(key, offset, length);
  }
  absl::StatusOr<objectstore::ObjectInfo> Head(std::string_view key) override {
    if (!answers) return Down();
    return store_->Head(key);
  }
  absl::StatusOr<objectstore::ListPage> List(std::string_view prefix, std::string_view continuation,
                                             int max_keys) override {
    if (!answers) return Down();
    return store_->List(prefix, continuation, max_keys);
  }
  absl::Status DeleteMany(const std::vector<std::string>& keys) override {
    if (!answers) return Down();
    return store_->DeleteMany(keys);
  }
  std::string Describe() const override { return store_->Describe(); }

 private:
  static absl::Status Down() { return absl::UnavailableError("the store does not answer"); }
  const std::unique_ptr<objectstore::BatchStore> store_;
};

class StorageLocalTest : public testing::SharedCatalogTest {
 protected:
  void SetUp() override {
    testing::SharedCatalogTest::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    auto store = objectstore::LocalBatchStore::Open(fs_, tmp_.path() + "/store");
    ASSERT_TRUE(store.ok()) << store.status();
    store_ = std::make_unique<SwitchedStore>(*std::move(store));
  }
  // Node 01's storage engine on data directory `name`.
  absl::StatusOr<std::unique_ptr<storage::Storage>> OpenNode(const std::string& name) {
    storage::StorageOptions options;
    options.node = 1;
    options.object_store = store_.get();
    options.shared_catalog = true;
    options.upload.poll_interval = std::chrono::milliseconds(10);
    // No maintenance: a retired batch's directory stays where the storage
    // engine left it until the next boot, so a boot shows what is durable.
    options.start_maintenance = false;
    return storage::Storage::Open(fs_, tmp_.path() + "/" + name, options);
  }
  // Joins as node 01 over `storage`.
  std::unique_ptr<ClusterMember> Join(storage::Storage& storage, const std::string& instance) {
    absl::StatusOr<ClusterMember::Local> local = LocalOfStorage(storage);
    EXPECT_TRUE(local.ok()) << local.status();
    if (!local.ok()) return nullptr;
    ClusterMemberOptions options;
    options.node = "01";
    options.instance = instance;
    absl::StatusOr<std::unique_ptr<ClusterMember>> member =
        ClusterMember::Join(*shared_, *std::move(local), options);
    EXPECT_TRUE(member.ok()) << member.status();
    return member.ok() ? *std::move(member) : nullptr;
  }
  // Node 01 writes two batches on data directory "one", uploads them and
  // registers them in the catalog, then stops; returns their ids.
  std::vector<storage::BatchId> TwoBatchesInTheCatalog() {
    auto one = OpenNode("one");
    EXPECT_TRUE(one.ok()) << one.status();
    if (!one.ok()) return {};
    for (int n = 0; n < 2; ++n) EXPECT_TRUE(testing::WriteOneSpan(**one).ok());
    std::vector<storage::BatchId> ids;
    for (const auto& batch : (*one)->Pin()->batches()) {
      ids.push_back(batch->id());
      EXPECT_TRUE((*one)->uploader()->WaitUploaded(batch->id(), std::chrono::seconds(30)).ok());
    }
    EXPECT_EQ(ids.size(), 2u);
    std::unique_ptr<ClusterMember> member = Join(**one, "first");
    EXPECT_NE(member, nullptr);
    if (member == nullptr) return {};
    EXPECT_TRUE(member->Sync().ok());
    EXPECT_TRUE(member->Leave().ok());
    EXPECT_THAT(CatalogIds(), ElementsAre(ids[0].ToString(), ids[1].ToString()));
    return ids;
  }
  std::vector<std::string> CatalogIds() { return IdsOf(*shared_->List()); }
  void LeaveARestoreCutShort(const std::string& name);
  std::string MetaKey(const storage::BatchId& id) {
    return storage::BatchObjectKey(id.Day(), id, storage::kBatchMetaFileName);
  }
  size_t StoredObjects() {
    absl::StatusOr<objectstore::ListPage> page = store_->List("", "", 1000);
    EXPECT_TRUE(page.ok()) << page.status();
    return page.ok() ? page->objects.size() : 0;
  }
  // The batches of the data directory `name` as a boot finds them.
  size_t BatchesAtBoot(const std::string& name) {
    auto again = OpenNode(name);
    EXPECT_TRUE(again.ok()) << again.status();
    return again.ok() ? (*again)->Pin()->size() : 0;
  }

  PosixFileSystem fs_;
  storage::testing::ScopedTempDir tmp_{"storage_local"};
  std::unique_ptr<SwitchedStore> store_;
};

// The second batch's meta.json is gone from the store: the first, restored
// already, is forgotten again, durably, so that a restart still finds the
// directory empty (rather than taking it for the node's own and removing
// the second batch from the catalog).
TEST_F(StorageLocalTest, ABatchMissingFromTheStoreFailsTheRestoreAndKeepsNone) {
  const std::vector<storage::BatchId> ids = TwoBatchesInTheCatalog();
  ASSERT_EQ(ids.size(), 2u);
  const absl::StatusOr<std::string> meta_json = store_->Get(MetaKey(ids[1]), 0, 1 << 20);
  ASSERT_TRUE(meta_json.ok()) << meta_json.status();
  ASSERT_TRUE(store_->DeleteMany({MetaKey(ids[1])}).ok());
  const size_t objects = StoredObjects();
  {
    auto again = OpenNode("one-again");
    ASSERT_TRUE(again.ok()) << again.status();
    std::unique_ptr<ClusterMember> member = Join(**again, "second");
    ASSERT_NE(member, nullptr);
    absl::StatusOr<size_t> restored = member->RestoreOwnBatches();
    ASSERT_FALSE(restored.ok());
    EXPECT_EQ(restored.status().code(), absl::StatusCode::kNotFound);
    EXPECT_THAT(std::string(restored.status().message()),
                HasSubstr("restoring batch " + ids[1].ToString() + " (day " + ids[1].Day() +
                          ") of node id 01 from the object store: the store "));
    EXPECT_THAT(std::string(restored.status().message()),
                HasSubstr(" does not hold the batch: no " + MetaKey(ids[1]) + ";"));
    EXPECT_THAT(std::string(restored.status().message()),
                HasSubstr("the batch catalog still lists the node's 2 batches and none is kept "
                          "here, so the next start restores them all again"));
    EXPECT_EQ((*again)->Pin()->size(), 0u);
    EXPECT_EQ(member->Stats().batches_restored, 0u);
    ASSERT_TRUE(member->Leave().ok());
  }
  EXPECT_THAT(CatalogIds(), ElementsAre(ids[0].ToString(), ids[1].ToString()));
  EXPECT_EQ(StoredObjects(), objects);  // the first batch's objects stay
  EXPECT_EQ(BatchesAtBoot("one-again"), 0u);
  // The object is back: the next start restores both and removes nothing.
  ASSERT_TRUE(store_->PutIfAbsent(MetaKey(ids[1]), *meta_json).ok());
  auto again = OpenNode("one-again");
  ASSERT_TRUE(again.ok()) << again.status();
  std::unique_ptr<ClusterMember> member = Join(**again, "third");
  ASSERT_NE(member, nullptr);
  absl::StatusOr<size_t> restored = member->RestoreOwnBatches();
  ASSERT_TRUE(restored.ok()) << restored.status();
  EXPECT_EQ(*restored, 2u);
  ASSERT_TRUE(member->Sync().ok());
  EXPECT_THAT(CatalogIds(), ElementsAre(ids[0].ToString(), ids[1].ToString()));
  EXPECT_EQ(member->Stats().batches_removed, 0u);
  EXPECT_EQ((*again)->Pin()->size(), 2u);
}

// The store does not answer at the restore: the start fails naming the
// first batch, with the store's error; nothing is kept or removed.
TEST_F(StorageLocalTest, AStoreThatDoesNotAnswerFailsTheRestore) {
  const std::vector<storage::BatchId> ids = TwoBatchesInTheCatalog();
  ASSERT_EQ(ids.size(), 2u);
  {
    auto again = OpenNode("one-again");
    ASSERT_TRUE(again.ok()) << again.status();
    std::unique_ptr<ClusterMember> member = Join(**again, "second");
    ASSERT_NE(member, nullptr);
    store_->answers = false;
    absl::StatusOr<size_t> restored = member->RestoreOwnBatches();
    store_->answers = true;
    ASSERT_FALSE(restored.ok());
    EXPECT_EQ(restored.status().code(), absl::StatusCode::kUnavailable);
    EXPECT_THAT(std::string(restored.status().message()),
                HasSubstr("restoring batch " + ids[0].ToString() + " (day " + ids[0].Day() +
                          ") of node id 01 from the object store: the store does not answer"));
    EXPECT_EQ((*again)->Pin()->size(), 0u);
    ASSERT_TRUE(member->Leave().ok());
  }
  EXPECT_THAT(CatalogIds(), ElementsAre(ids[0].ToString(), ids[1].ToString()));
  EXPECT_EQ(BatchesAtBoot("one-again"), 0u);
}

// What a process killed in the middle of a restore leaves in data
// directory `name`: the restore marker, and the first of this node's
// batches the catalog lists restored, not the others.
void StorageLocalTest::LeaveARestoreCutShort(const std::string& name) {
  auto node = OpenNode(name);
  ASSERT_TRUE(node.ok()) << node.status();
  absl::StatusOr<CatalogListing> listing = shared_->List();
  ASSERT_TRUE(listing.ok()) << listing.status();
  ASSERT_GE(listing->batches.size(), 2u);
  ASSERT_TRUE((*node)->SetRestoreMarked(true).ok());
  ASSERT_TRUE((*node)->RestoreOwnBatch(listing->batches[0].meta_json).ok());
}

// A start finds the marker and a directory holding one of the node's two
// batches: it does not take the directory for the node's own (Sync()
// refuses to run), restores the other batch, removes the marker, and the
// catalog keeps both.
TEST_F(StorageLocalTest, ARestoreCutShortIsFinishedAtTheNextStartAndRemovesNothing) {
  const std::vector<storage::BatchId> ids = TwoBatchesInTheCatalog();
  ASSERT_EQ(ids.size(), 2u);
  LeaveARestoreCutShort("one-again");
  const std::string marker = storage::DataDirPaths(tmp_.path() + "/one-again").RestoreMarker();
  // Boot keeps the marker (not a stray entry) and the restored batch.
  EXPECT_EQ(BatchesAtBoot("one-again"), 1u);
  ASSERT_TRUE(*fs_.Exists(marker));
  auto again = OpenNode("one-again");
  ASSERT_TRUE(again.ok()) << again.status();
  std::unique_ptr<ClusterMember> member = Join(**again, "second");
  ASSERT_NE(member, nullptr);
  const absl::Status early = member->Sync();
  EXPECT_EQ(early.code(), absl::StatusCode::kFailedPrecondition) << early;
  EXPECT_THAT(std::string(early.message()), HasSubstr("restore marker"));
  EXPECT_THAT(CatalogIds(), ElementsAre(ids[0].ToString(), ids[1].ToString()));
  absl::StatusOr<size_t> restored = member->RestoreOwnBatches();
  ASSERT_TRUE(restored.ok()) << restored.status();
  EXPECT_EQ(*restored, 1u);
  EXPECT_FALSE(*fs_.Exists(marker));
  for (int round = 0; round < 2; ++round) ASSERT_TRUE(member->Sync().ok());
  EXPECT_THAT(CatalogIds(), ElementsAre(ids[0].ToString(), ids[1].ToString()));
  EXPECT_EQ(member->Stats().batches_removed, 0u);
  EXPECT_EQ((*again)->Pin()->size(), 2u);
  ASSERT_TRUE(member->Leave().ok());
  member.reset();
  again->reset();
  EXPECT_EQ(BatchesAtBoot("one-again"), 2u);
}

// A start finds the marker while the store does not answer: it fails
// naming the batch and the marker, and changes nothing (the batch
// restored before stays, so does the marker); the next start finishes.
TEST_F(StorageLocalTest, ARestoreCutShortThatCannotBeFinishedChangesNothing) {
  const std::vector<storage::BatchId> ids = TwoBatchesInTheCatalog();
  ASSERT_EQ(ids.size(), 2u);
  LeaveARestoreCutShort("one-again");
  const std::string marker = storage::DataDirPaths(tmp_.path() + "/one-again").RestoreMarker();
  {
    auto again = OpenNode("one-again");
    ASSERT_TRUE(again.ok()) << again.status();
    std::unique_ptr<ClusterMember> member = Join(**again, "second");
    ASSERT_NE(member, nullptr);
    store_->answers = false;
    absl::StatusOr<size_t> restored = member->RestoreOwnBatches();
    store_->answers = true;
    ASSERT_FALSE(restored.ok());
    EXPECT_EQ(restored.status().code(), absl::StatusCode::kUnavailable);
    EXPECT_THAT(std::string(restored.status().message()),
                HasSubstr("restoring batch " + ids[1].ToString()));
    EXPECT_THAT(std::string(restored.status().message()),
                HasSubstr("keeps the restore marker, so the next start finishes the restore"));
    EXPECT_EQ((*again)->Pin()->size(), 1u);
    EXPECT_TRUE(*fs_.Exists(marker));
    ASSERT_TRUE(member->Leave().ok());
  }
  EXPECT_THAT(CatalogIds(), ElementsAre(ids[0].ToString(), ids[1].ToString()));
  EXPECT_EQ(BatchesAtBoot("one-again"), 1u);
  EXPECT_TRUE(*fs_.Exists(marker));
  auto again = OpenNode("one-again");
  ASSERT_TRUE(again.ok()) << again.status();
  std::unique_ptr<ClusterMember> member = Join(**again, "third");
  ASSERT_NE(member, nullptr);
  absl::StatusOr<size_t> restored = member->RestoreOwnBatches();
  ASSERT_TRUE(restored.ok()) << restored.status();
  EXPECT_EQ(*restored, 1u);
  ASSERT_TRUE(member->Sync().ok());
  EXPECT_THAT(CatalogIds(), ElementsAre(ids[0].ToString(), ids[1].ToString()));
  EXPECT_EQ((*again)->Pin()->size(), 2u);
}

// A restore that fails in the start that began it takes out the marker
// with its batches: the directory holds none of the node's, as before.
TEST_F(StorageLocalTest, AFailedRestoreRemovesTheMarkerItWrote) {
  const std::vector<storage::BatchId> ids = TwoBatchesInTheCatalog();
  ASSERT_EQ(ids.size(), 2u);
  ASSERT_TRUE(store_->DeleteMany({MetaKey(ids[1])}).ok());
  auto again = OpenNode("one-again");
  ASSERT_TRUE(again.ok()) << again.status();
  std::unique_ptr<ClusterMember> member = Join(**again, "second");
  ASSERT_NE(member, nullptr);
  EXPECT_FALSE(member->RestoreOwnBatches().ok());
  EXPECT_FALSE(*fs_.Exists(storage::DataDirPaths(tmp_.path() + "/one-again").RestoreMarker()));
  EXPECT_EQ((*again)->Pin()->size(), 0u);
}

}  // namespace
}  // namespace strata::cluster
