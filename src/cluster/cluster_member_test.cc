// ClusterMember: a node's batches in the shared catalog follow its local
// catalog, as far as the object store holds them.

#include "cluster/cluster_member.h"

#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "cluster/cluster_testing.h"
#include "common/mutex.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "storage/commit/catalog.h"

namespace strata::cluster {
namespace {

using ::strata::cluster::testing::BatchIdOf;
using ::strata::cluster::testing::IdsOf;
using ::strata::cluster::testing::kDay;
using ::strata::cluster::testing::RecordOf;
using ::testing::ElementsAre;
using ::testing::IsEmpty;

const absl::Time kStart = absl::FromUnixSeconds(1796450000);

// The local record of batch `id`, as the storage engine would publish it.
storage::BatchRecord LocalRecord(const std::string& id, std::vector<std::string> sources = {}) {
  const CatalogBatch record = RecordOf(id, std::move(sources));
  absl::StatusOr<storage::BatchMeta> meta = storage::ParseBatchMeta(record.meta_json, id);
  EXPECT_TRUE(meta.ok()) << meta.status();
  return storage::BatchRecord{.id = *storage::BatchId::Parse(id),
                              .day = record.day,
                              .dir = "/nowhere/" + id + ".batch",
                              .meta = *meta};
}

class ClusterMemberTest : public testing::SharedCatalogTest {
 protected:
  void SetUp() override {
    testing::SharedCatalogTest::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    local_ = *storage::Catalog::Create({}, nullptr);
  }
  // Joins as node 01 (instance `instance`, keeping `keep_days` days) on
  // the test's clock; `adjust`, when given, changes the options last.
  std::unique_ptr<ClusterMember> Join(
      const std::string& instance = "i1", int keep_days = 0,
      const std::function<void(ClusterMemberOptions&)>& adjust = nullptr) {
    ClusterMemberOptions options;
    options.keep_days = keep_days;
    options.node = "01";
    options.instance = instance;
    options.address = "127.0.0.1:7520";
    options.clock = [this] { return absl::FromUnixNanos(now_nanos_.load()); };
    options.poll_interval = std::chrono::milliseconds(10);
    options.on_claim_lost = [this](const absl::Status&) { claim_lost_ = true; };
    options.delete_after = absl::Minutes(10);
    options.on_error = [this](const absl::Status& status) {
      MutexLock lock(&mu_);
      errors_.push_back(status);
    };
    if (adjust) adjust(options);
    absl::StatusOr<std::unique_ptr<ClusterMember>> member =
        ClusterMember::Join(*shared_, LocalNode(), options);
    EXPECT_TRUE(member.ok()) << member.status();
    return member.ok() ? *std::move(member) : nullptr;
  }
  // The member's view of this test's local catalog: adopting publishes
  // the record, dropping removes it, deleting objects is recorded.
  ClusterMember::Local LocalNode() {
    auto publish_record = [this](const std::string& meta_json) {
      if (absl::Status down = StoreStatus(); !down.ok()) return down;
      absl::StatusOr<storage::BatchMeta> meta = storage::ParseBatchMeta(meta_json, "x");
      if (!meta.ok()) return meta.status();
      absl::Status published = local_->Publish({LocalRecord(meta->id, meta->sources)}, {}).status();
      Changed();
      return published;
    };
    return ClusterMember::Local{
        .pin = [this] { return local_->Pin(); },
        .uploaded =
            [this](const storage::BatchId& id) {
              MutexLock lock(&mu_);
              return uploaded_.contains(id.ToString());
            },
        .adopt = publish_record,
        .restore =
            [this, publish_record](const std::string& meta_json) {
              if (!restore_marked_) ++restored_unmarked_;
              absl::StatusOr<storage::BatchMeta> meta = storage::ParseBatchMeta(meta_json, "x");
              if (meta.ok()) Uploaded(meta->id);
              return publish_record(meta_json);
            },
        .forget = [this](const storage::BatchId& id) { return local_->Publish({}, {id}).status(); },
        .restore_marked = [this]() -> absl::StatusOr<bool> { return restore_marked_.load(); },
        .set_restore_marked =
            [this](bool marked) {
              restore_marked_ = marked;
              return absl::OkStatus();
            },
        .drop =
            [this](const storage::BatchId& id) {
              absl::Status dropped = local_->Publish({}, {id}).status();
              Changed();
              return dropped;
            },
        .replace = [this](const std::vector<std::string>& stored,
                          const std::vector<storage::BatchId>& drop) -> absl::Status {
          if (absl::Status down = StoreStatus(); !down.ok()) return down;
          if (replace_refused_ && !stored.empty()) {
            return absl::UnavailableError("replace refused by the test");
          }
          std::vector<storage::BatchRecord> records;
          for (const std::string& meta_json : stored) {
            absl::StatusOr<storage::BatchMeta> meta = storage::ParseBatchMeta(meta_json, "x");
            if (!meta.ok()) return meta.status();
            records.push_back(LocalRecord(meta->id, meta->sources));
          }
          std::vector<storage::BatchId> live;
          for (const storage::BatchId& id : drop) {
            if (local_->Pin()->Find(id) != nullptr) live.push_back(id);
          }
          absl::Status replaced = local_->Publish(std::move(records), live).status();
          Changed();
          return replaced;
        },
        .stored_batches = [this]() -> absl::StatusOr<std::map<storage::BatchId, std::string>> {
          MutexLock lock(&mu_);
          return stored_;
        },
        .delete_objects =
            [this](const storage::BatchId& id, const std::string& day) {
              MutexLock lock(&mu_);
              if (undeletable_.contains(id.ToString())) {
                return absl::UnavailableError("the store refused the delete");
              }
              deleted_.insert(id.ToString());
              stored_.erase(id);
              return absl::OkStatus();
            },
    };
  }
  // The store's answer to reads (adopting, restoring): OK, or the error
  // of a store that does not answer.
  absl::Status StoreStatus() {
    MutexLock lock(&mu_);
    return store_status_;
  }
  void SetStoreStatus(absl::Status status) {
    MutexLock lock(&mu_);
    store_status_ = std::move(status);
  }
  // Deleting the objects of batch `id` fails while `fails`.
  void SetUndeletable(const std::string& id, bool fails) {
    MutexLock lock(&mu_);
    if (fails) {
      undeletable_.insert(id);
    } else {
      undeletable_.erase(id);
    }
  }
  // The local catalog's batch ids after each change the member made
  // (adopt, drop, replace), since the last call.
  std::vector<std::set<std::string>> TakeChanges() {
    MutexLock lock(&mu_);
    return std::exchange(changes_, {});
  }
  void Changed() {
    std::set<std::string> ids;
    for (const auto& batch : local_->Pin()->batches()) ids.insert(batch->id().ToString());
    MutexLock lock(&mu_);
    changes_.push_back(std::move(ids));
  }
  // What on_error was given, in order.
  std::vector<absl::Status> Errors() {
    MutexLock lock(&mu_);
    return errors_;
  }
  // Waits (up to 20 s) until `done` holds; returns whether it does.
  static bool WaitFor(const std::function<bool()>& done) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
    while (!done()) {
      if (std::chrono::steady_clock::now() >= deadline) return false;
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    return true;
  }
  std::set<std::string> Deleted() {
    MutexLock lock(&mu_);
    return deleted_;
  }
  void Publish(std::vector<std::string> add, const std::vector<std::string>& remove,
               std::vector<std::string> sources = {}) {
    std::vector<storage::BatchRecord> records;
    for (const std::string& id : add) records.push_back(LocalRecord(id, sources));
    std::vector<storage::BatchId> removed;
    for (const std::string& id : remove) removed.push_back(*storage::BatchId::Parse(id));
    ASSERT_TRUE(local_->Publish(std::move(records), removed).ok());
  }
  // Publishes level-0 batches `ids` locally, uploads them and lets
  // `member` register them.
  void Registered(ClusterMember& member, const std::vector<std::string>& ids) {
    Publish(ids, {});
    for (const std::string& id : ids) Uploaded(id);
    ASSERT_TRUE(member.Sync().ok());
  }
  void Stored(const std::vector<std::string>& ids) {
    MutexLock lock(&mu_);
    for (const std::string& id : ids) stored_.emplace(*storage::BatchId::Parse(id), kDay);
  }
  void Uploaded(const std::string& id) {
    MutexLock lock(&mu_);
    uploaded_.insert(id);
  }
  std::vector<std::string> SharedIds() { return IdsOf(*shared_->List()); }
  // This node compacts `inputs` into `output` locally, uploads it and lets
  // `member` register it in the swap that removes the inputs.
  void CompactedAndRegistered(ClusterMember& member, const std::vector<std::string>& inputs,
                              const std::string& output) {
    Publish({output}, inputs, inputs);
    Uploaded(output);
    ASSERT_TRUE(member.Sync().ok());
    ASSERT_THAT(SharedIds(), ElementsAre(output));
  }
  // Another process claims node 02 (instance "other") at the start.
  void ClaimNode02() {
    ASSERT_TRUE(shared_
                    ->ClaimNode(NodeRecord{.node = "02",
                                           .instance = "other",
                                           .started_at = kStart,
                                           .heartbeat_at = kStart},
                                absl::Seconds(30))
                    .ok());
  }
  void Advance(absl::Duration by) { now_nanos_ += absl::ToInt64Nanoseconds(by); }

  std::unique_ptr<storage::Catalog> local_;
  std::atomic<int64_t> now_nanos_{absl::ToUnixNanos(kStart)};
  std::atomic<bool> claim_lost_{false};
  // The data directory's restore marker (Local::restore_marked).
  std::atomic<bool> restore_marked_{false};
  // Batches restored while the marker was absent.
  std::atomic<int> restored_unmarked_{0};
  // Local::replace fails while set, when it would publish batches read
  // from the store.
  std::atomic<bool> replace_refused_{false};
  Mutex mu_;
  std::set<std::string> uploaded_ ABSL_GUARDED_BY(mu_);
  std::set<std::string> deleted_ ABSL_GUARDED_BY(mu_);
  absl::Status store_status_ ABSL_GUARDED_BY(mu_);
  std::set<std::string> undeletable_ ABSL_GUARDED_BY(mu_);
  std::vector<absl::Status> errors_ ABSL_GUARDED_BY(mu_);
  std::vector<std::set<std::string>> changes_ ABSL_GUARDED_BY(mu_);
  // The batches with objects in the store, by id, with their day.
  std::map<storage::BatchId, std::string> stored_ ABSL_GUARDED_BY(mu_);
};

TEST_F(ClusterMemberTest, UploadedBatchesOfThisNodeAreAddedAndOtherNodesBatchesLeftToThem) {
  std::unique_ptr<ClusterMember> member = Join();
  const std::string a = BatchIdOf(1, 0, 1), b = BatchIdOf(2, 0, 1);
  // Node 02 registered a batch of its own.
  const std::string theirs = BatchIdOf(4, 0, 2);
  ASSERT_TRUE(shared_->AddBatch(RecordOf(theirs), "02", kStart).ok());
  Publish({a, b}, {});
  Uploaded(a);
  ASSERT_TRUE(member->Sync().ok());
  EXPECT_THAT(SharedIds(), ElementsAre(a, theirs));
  Uploaded(b);
  ASSERT_TRUE(member->Sync().ok());
  EXPECT_THAT(SharedIds(), ElementsAre(a, b, theirs));
  EXPECT_EQ(member->Stats().batches_added, 2u);
  // The record is the batch's meta.json; its files (none here) its bytes.
  const CatalogBatch listed = shared_->List()->batches[0];
  EXPECT_EQ(listed.meta_json, RecordOf(a).meta_json);
  EXPECT_EQ(listed.day, kDay);
  EXPECT_EQ(listed.bytes, 0);
  // Nothing changed: nothing to do.
  ASSERT_TRUE(member->Sync().ok());
  EXPECT_EQ(*shared_->Generation(), 3);
}

TEST_F(ClusterMemberTest, ACompactionOutputGoesInWithTheRemovalOfItsInputsOnceUploaded) {
  std::unique_ptr<ClusterMember> member = Join();
  const std::string a = BatchIdOf(1, 0, 1), b = BatchIdOf(2, 0, 1);
  ASSERT_NO_FATAL_FAILURE(Registered(*member, {a, b}));
  // Local compaction: a and b into c, then c into d, neither uploaded yet.
  const std::string c = BatchIdOf(5, 1, 1), d = BatchIdOf(6, 2, 1);
  Publish({c}, {a, b}, {a, b});
  ASSERT_TRUE(member->Sync().ok());
  Publish({d}, {c}, {c});
  ASSERT_TRUE(member->Sync().ok());
  // Until d is in the store, the shared list keeps a and b.
  EXPECT_THAT(SharedIds(), ElementsAre(a, b));
  EXPECT_EQ(member->Stats().days_waiting, 1u);
  Uploaded(d);
  ASSERT_TRUE(member->Sync().ok());
  EXPECT_THAT(SharedIds(), ElementsAre(d));
  EXPECT_EQ(member->Stats().swaps, 1u);
  EXPECT_EQ(member->Stats().days_waiting, 0u);
  EXPECT_EQ(*shared_->StateOf(a), PostgresBatchCatalog::BatchState::kRemoved);
  EXPECT_EQ(*shared_->StateOf(c), PostgresBatchCatalog::BatchState::kUnknown);
}

// One compactor per day: only batches the catalog lists are admitted, and
// the day's lease, taken at the claim, is kept until the output is
// registered; another node cannot take the day meanwhile.
TEST_F(ClusterMemberTest, AClaimedDayStaysLeasedUntilItsOutputIsRegistered) {
  std::unique_ptr<ClusterMember> member = Join();
  const std::string a = BatchIdOf(1, 0, 1), b = BatchIdOf(2, 0, 1), fresh = BatchIdOf(3, 0, 1);
  Publish({a, b, fresh}, {});
  Uploaded(a);
  Uploaded(b);
  ASSERT_TRUE(member->Sync().ok());
  const std::shared_ptr<const storage::Snapshot> snapshot = local_->Pin();
  EXPECT_TRUE(member->AdmitsForCompaction(*snapshot->Find(*storage::BatchId::Parse(a))));
  EXPECT_FALSE(member->AdmitsForCompaction(*snapshot->Find(*storage::BatchId::Parse(fresh))));
  ASSERT_TRUE(member->ClaimDay(kDay));
  EXPECT_FALSE(shared_->AcquireLease(kDay, "07/z", kStart, absl::Seconds(30))->has_value());
  // Compacted: a and b into c, not uploaded yet; the compaction ended.
  const std::string c = BatchIdOf(5, 1, 1);
  Publish({c}, {a, b}, {a, b});
  member->CompactionEnded(kDay, true);
  ASSERT_TRUE(member->Sync().ok());
  EXPECT_THAT(SharedIds(), ElementsAre(a, b));
  EXPECT_FALSE(shared_->AcquireLease(kDay, "07/z", kStart, absl::Seconds(30))->has_value());
  Uploaded(c);
  Uploaded(fresh);
  ASSERT_TRUE(member->Sync().ok());
  EXPECT_THAT(SharedIds(), ElementsAre(fresh, c));
  // Registered: the day is given back.
  EXPECT_TRUE(shared_->AcquireLease(kDay, "07/z", kStart, absl::Seconds(30))->has_value());
  EXPECT_FALSE(member->ClaimDay(kDay));
  EXPECT_EQ(member->Stats().days_claimed, 1u);
  EXPECT_EQ(member->Stats().claims_refused, 1u);
}

// A compactor that stops renewing (its process died) loses the day after
// the lease time; another node's claim then takes it with the next epoch,
// and the old holder's swap is refused.
TEST_F(ClusterMemberTest, ADaysCompactionPassesToAnotherNodeWhenItsHolderStops) {
  std::unique_ptr<ClusterMember> first = Join();
  std::unique_ptr<ClusterMember> second =
      Join("i2", 0, [](ClusterMemberOptions& options) { options.node = "02"; });
  ASSERT_NE(second, nullptr);
  const std::string a = BatchIdOf(1, 0, 1), b = BatchIdOf(2, 0, 1);
  Publish({a, b}, {});
  Uploaded(a);
  Uploaded(b);
  ASSERT_TRUE(first->Sync().ok());
  ASSERT_TRUE(first->ClaimDay(kDay));
  EXPECT_FALSE(second->ClaimDay(kDay));
  Advance(absl::Seconds(29));
  EXPECT_FALSE(second->ClaimDay(kDay));
  Advance(absl::Seconds(2));
  ASSERT_TRUE(second->ClaimDay(kDay));
  // The first node's output of the day can no longer be registered.
  const std::string output = BatchIdOf(5, 1, 1);
  Publish({output}, {a, b}, {a, b});
  first->CompactionEnded(kDay, true);
  Uploaded(output);
  const absl::Status refused = first->Sync();
  EXPECT_EQ(refused.code(), absl::StatusCode::kFailedPrecondition) << refused;
  EXPECT_THAT(SharedIds(), ElementsAre(a, b));
}

// The day's compactor merged another node's batch (adopted here) with its
// own: the output's registration removes both, the other node's batch is
// not adopted again while the output waits, and its objects are deleted by
// this node, which removed it, after the grace.
TEST_F(ClusterMemberTest, AnOutputTakesTheOtherNodesInputsOutOfTheCatalog) {
  std::unique_ptr<ClusterMember> member = Join();
  const std::string mine = BatchIdOf(1, 0, 1), theirs = BatchIdOf(2, 0, 2);
  ASSERT_TRUE(shared_->AddBatch(RecordOf(theirs), "02", kStart).ok());
  Publish({mine}, {});
  Uploaded(mine);
  ASSERT_TRUE(member->Sync().ok());
  ASSERT_NE(local_->Pin()->Find(*storage::BatchId::Parse(theirs)), nullptr);
  ASSERT_TRUE(member->ClaimDay(kDay));
  const std::string output = BatchIdOf(5, 1, 1);
  Publish({output}, {mine, theirs}, {mine, theirs});
  member->CompactionEnded(kDay, true);
  ASSERT_TRUE(member->Sync().ok());
  EXPECT_EQ(local_->Pin()->Find(*storage::BatchId::Parse(theirs)), nullptr)
      << "adopted again while the output holds its rows";
  EXPECT_THAT(SharedIds(), ElementsAre(mine, theirs));
  Uploaded(output);
  ASSERT_TRUE(member->Sync().ok());
  EXPECT_THAT(SharedIds(), ElementsAre(output));
  const std::vector<RemovedBatch> removed =
      *shared_->RemovedBefore("01", kStart + absl::Hours(1), kStart, /*limit=*/10);
  ASSERT_EQ(removed.size(), 2u);
  EXPECT_EQ(removed[0].removed_by, "01");
  EXPECT_EQ(removed[1].removed_by, "01");
  Advance(absl::Minutes(11));
  ASSERT_TRUE(member->Sync().ok());
  EXPECT_EQ(Deleted(), (std::set<std::string>{mine, theirs}));
}

// Another node held the day and compacted this node's batches: they are
// dropped here (their rows are in its output, adopted in the same sync),
// and never registered again.
TEST_F(ClusterMemberTest, BatchesAnotherNodeCompactedAreDroppedHere) {
  std::unique_ptr<ClusterMember> member = Join();
  const std::string a = BatchIdOf(1, 0, 1), b = BatchIdOf(2, 0, 1), c = BatchIdOf(3, 0, 1);
  ASSERT_NO_FATAL_FAILURE(Registered(*member, {a, b, c}));
  const std::optional<DayLease> lease =
      *shared_->AcquireLease(kDay, "02/z", kStart, absl::Seconds(30));
  ASSERT_TRUE(lease.has_value());
  const std::string theirs = BatchIdOf(9, 1, 2);
  ASSERT_TRUE(shared_->Swap(*lease, {a, b}, {RecordOf(theirs, {a, b})}, "02", kStart).ok());
  (void)TakeChanges();
  ASSERT_TRUE(member->Sync().ok());
  // Dropped with the adoption of the output that holds their rows, in one
  // Snapshot.
  EXPECT_THAT(TakeChanges(), ElementsAre(std::set<std::string>{c, theirs}));
  std::vector<std::string> here;
  for (const auto& batch : local_->Pin()->batches()) here.push_back(batch->id().ToString());
  EXPECT_THAT(here, ElementsAre(c, theirs));
  EXPECT_THAT(SharedIds(), ElementsAre(c, theirs));
  EXPECT_EQ(member->Stats().batches_replaced_elsewhere, 2u);
  EXPECT_EQ(member->Stats().batches_removed, 0u);
}

// When the output cannot be read from the store with them, the replaced
// batches are dropped alone, and the output adopted after (by itself, in
// the same Sync): the sync goes on.
TEST_F(ClusterMemberTest, ReplacedBatchesGoEvenWhenTheOutputCannotComeWithThem) {
  std::unique_ptr<ClusterMember> member = Join();
  const std::string a = BatchIdOf(1, 0, 1), b = BatchIdOf(2, 0, 1);
  ASSERT_NO_FATAL_FAILURE(Registered(*member, {a, b}));
  const DayLease lease = *shared_->AcquireLease(kDay, "02/z", kStart, absl::Seconds(30)).value();
  const std::string theirs = BatchIdOf(9, 1, 2);
  ASSERT_TRUE(shared_->Swap(lease, {a, b}, {RecordOf(theirs, {a, b})}, "02", kStart).ok());
  (void)TakeChanges();
  replace_refused_ = true;
  const absl::Status synced = member->Sync();
  ASSERT_TRUE(synced.ok()) << synced;
  EXPECT_THAT(TakeChanges(), ElementsAre(std::set<std::string>{}, std::set<std::string>{theirs}));
  EXPECT_EQ(member->Stats().batches_replaced_elsewhere, 2u);
}

// This node's lease was lost while it compacted (it paused past the lease),
// and another node compacted one of the same inputs: the output is never
// registered; it is dropped and its other input, still listed, put back
// from the store in the same local Snapshot.
TEST_F(ClusterMemberTest, AnOutputWhoseInputAnotherNodeCompactedIsDiscarded) {
  std::unique_ptr<ClusterMember> member = Join();
  const std::string a = BatchIdOf(1, 0, 1), b = BatchIdOf(2, 0, 1);
  ASSERT_NO_FATAL_FAILURE(Registered(*member, {a, b}));
  ASSERT_TRUE(member->ClaimDay(kDay));
  const std::string output = BatchIdOf(5, 1, 1);
  Publish({output}, {a, b}, {a, b});
  member->CompactionEnded(kDay, true);
  Advance(absl::Seconds(31));
  const std::optional<DayLease> lease =
      *shared_->AcquireLease(kDay, "02/z", kStart + absl::Seconds(31), absl::Seconds(30));
  ASSERT_TRUE(lease.has_value());
  const std::string theirs = BatchIdOf(9, 1, 2);
  ASSERT_TRUE(shared_->Swap(*lease, {a}, {RecordOf(theirs, {a})}, "02", kStart).ok());
  ASSERT_TRUE(shared_->ReleaseLease(*lease).ok());
  Uploaded(output);
  ASSERT_TRUE(member->Sync().ok());
  std::vector<std::string> here;
  for (const auto& batch : local_->Pin()->batches()) here.push_back(batch->id().ToString());
  EXPECT_THAT(here, ElementsAre(b, theirs));
  EXPECT_THAT(SharedIds(), ElementsAre(b, theirs));
  EXPECT_EQ(*shared_->StateOf(output), PostgresBatchCatalog::BatchState::kUnknown);
  EXPECT_EQ(member->Stats().outputs_discarded, 1u);
  // Nothing more to do.
  ASSERT_TRUE(member->Sync().ok());
  EXPECT_THAT(SharedIds(), ElementsAre(b, theirs));
}

TEST_F(ClusterMemberTest, RetentionDroppingADayRemovesItsBatches) {
  std::unique_ptr<ClusterMember> member = Join();
  const std::string a = BatchIdOf(1, 0, 1), b = BatchIdOf(2, 0, 1);
  ASSERT_NO_FATAL_FAILURE(Registered(*member, {a, b}));
  Publish({}, {a, b});
  ASSERT_TRUE(member->Sync().ok());
  EXPECT_THAT(SharedIds(), IsEmpty());
  EXPECT_EQ(member->Stats().batches_removed, 2u);
}

TEST_F(ClusterMemberTest, ARemovalWaitsWhileAnotherNodeHoldsTheDay) {
  std::unique_ptr<ClusterMember> member = Join();
  const std::string a = BatchIdOf(1, 0, 1);
  Publish({a}, {});
  Uploaded(a);
  ASSERT_TRUE(member->Sync().ok());
  ASSERT_TRUE(shared_->AcquireLease(kDay, "07/z", kStart, absl::Seconds(30))->has_value());
  Publish({}, {a});
  ASSERT_TRUE(member->Sync().ok());
  EXPECT_THAT(SharedIds(), ElementsAre(a));
  EXPECT_EQ(member->Stats().days_waiting, 1u);
  Advance(absl::Seconds(30));
  ASSERT_TRUE(member->Sync().ok());
  EXPECT_THAT(SharedIds(), IsEmpty());
}

TEST_F(ClusterMemberTest, ASecondProcessWithTheSameNodeIdIsRefused) {
  std::unique_ptr<ClusterMember> first = Join("i1");
  ASSERT_NE(first, nullptr);
  ClusterMemberOptions options;
  options.node = "01";
  options.instance = "i2";
  options.clock = [this] { return absl::FromUnixNanos(now_nanos_.load()); };
  absl::StatusOr<std::unique_ptr<ClusterMember>> second =
      ClusterMember::Join(*shared_, LocalNode(), options);
  ASSERT_FALSE(second.ok());
  EXPECT_EQ(second.status().code(), absl::StatusCode::kFailedPrecondition);
  // Once the first leaves (a clean stop), the id is free at once; the
  // first leaving again changes nothing for the second.
  ASSERT_TRUE(first->Leave().ok());
  second = ClusterMember::Join(*shared_, LocalNode(), options);
  ASSERT_TRUE(second.ok()) << second.status();
  ASSERT_TRUE(first->Leave().ok());
  EXPECT_EQ((*shared_->Nodes())[0].instance, "i2");
  EXPECT_TRUE((*second)->Sync().ok());
}

// The thread: it registers what is published and uploaded, heartbeats, and
// stops when another process took the node id over.
TEST_F(ClusterMemberTest, TheThreadRegistersHeartbeatsAndStopsWhenItsClaimIsLost) {
  std::unique_ptr<ClusterMember> member = Join();
  member->Start();
  const std::string a = BatchIdOf(1, 0, 1);
  Publish({a}, {});
  Uploaded(a);
  member->Notify();
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (SharedIds().empty() && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  EXPECT_THAT(SharedIds(), ElementsAre(a));
  // Heartbeats follow the clock.
  Advance(absl::Seconds(11));
  const absl::Time beat = absl::FromUnixNanos(now_nanos_.load());
  while ((*shared_->Nodes())[0].heartbeat_at != beat &&
         std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  EXPECT_EQ((*shared_->Nodes())[0].heartbeat_at, beat);
  // Another process takes node 01 over (as if this one had been silent).
  ASSERT_TRUE(shared_
                  ->ClaimNode(NodeRecord{.node = "01",
                                         .instance = "i9",
                                         .address = "elsewhere",
                                         .started_at = beat + absl::Seconds(31),
                                         .heartbeat_at = beat + absl::Seconds(31)},
                              absl::Seconds(30))
                  .ok());
  Advance(absl::Seconds(11));
  while (!claim_lost_ && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  EXPECT_TRUE(claim_lost_);
  member->Stop();
}

// Other nodes' batches: adopted while listed (not of days past
// retention), dropped once the catalog no longer lists them.
TEST_F(ClusterMemberTest, OtherNodesBatchesAreAdoptedWhileListedAndDroppedAfter) {
  std::unique_ptr<ClusterMember> member = Join();
  const std::string theirs = BatchIdOf(1, 0, 2),
                    old = storage::BatchId::Make(testing::kDayStartMicros - 86400000000 * 40, 0, 2)
                              ->ToString();
  ASSERT_TRUE(shared_->AddBatch(RecordOf(theirs), "02", kStart).ok());
  ASSERT_TRUE(shared_->AddBatch(RecordOf(old), "02", kStart).ok());
  ASSERT_TRUE(member->Sync().ok());
  std::vector<std::string> local;
  for (const auto& batch : local_->Pin()->batches()) local.push_back(batch->id().ToString());
  // The 40-day-old batch is adopted too: keep_days is 0 (everything).
  EXPECT_THAT(local, ElementsAre(old, theirs));
  EXPECT_EQ(member->Stats().batches_adopted, 2u);
  // Node 02 compacts its batch away: it is dropped here.
  const DayLease lease = *shared_->AcquireLease(kDay, "02/x", kStart, absl::Seconds(30)).value();
  const std::string output = BatchIdOf(9, 1, 2);
  ASSERT_TRUE(shared_->Swap(lease, {theirs}, {RecordOf(output, {theirs})}, "02", kStart).ok());
  ASSERT_TRUE(member->Sync().ok());
  local.clear();
  for (const auto& batch : local_->Pin()->batches()) local.push_back(batch->id().ToString());
  EXPECT_THAT(local, ElementsAre(old, output));
  EXPECT_EQ(member->Stats().batches_dropped, 1u);
  // This node never deletes another node's objects.
  Advance(absl::Hours(1));
  ASSERT_TRUE(member->Sync().ok());
  EXPECT_THAT(Deleted(), IsEmpty());
}

// Another node's output goes in here with the drop of the inputs it
// replaced, in one Snapshot: no reader sees their rows twice or misses
// them. When that fails, each goes on its own, the output first.
TEST_F(ClusterMemberTest, AnotherNodesOutputReplacesItsInputsHereInOneSnapshot) {
  std::unique_ptr<ClusterMember> member = Join();
  ASSERT_NE(member, nullptr);
  const std::string a = BatchIdOf(1, 0, 2), b = BatchIdOf(2, 0, 2), output = BatchIdOf(9, 1, 2),
                    next = BatchIdOf(10, 2, 2);
  for (const std::string& id : {a, b}) {
    ASSERT_TRUE(shared_->AddBatch(RecordOf(id), "02", kStart).ok());
  }
  ASSERT_TRUE(member->Sync().ok());
  (void)TakeChanges();
  const DayLease lease = *shared_->AcquireLease(kDay, "02/x", kStart, absl::Seconds(30)).value();
  ASSERT_TRUE(shared_->Swap(lease, {a, b}, {RecordOf(output, {a, b})}, "02", kStart).ok());
  ASSERT_TRUE(member->Sync().ok());
  EXPECT_THAT(TakeChanges(), ElementsAre(std::set<std::string>{output}));
  EXPECT_EQ(member->Stats().batches_adopted, 3u);
  EXPECT_EQ(member->Stats().batches_dropped, 2u);
  replace_refused_ = true;
  ASSERT_TRUE(shared_->Swap(lease, {output}, {RecordOf(next, {output})}, "02", kStart).ok());
  ASSERT_TRUE(member->Sync().ok());
  EXPECT_THAT(TakeChanges(),
              ElementsAre(std::set<std::string>{output, next}, std::set<std::string>{next}));
  EXPECT_EQ(member->Stats().batches_dropped, 3u);
}

TEST_F(ClusterMemberTest, BatchesOfDaysPastRetentionAreNotAdopted) {
  std::unique_ptr<ClusterMember> member = Join("k1", /*keep_days=*/7);
  ASSERT_NE(member, nullptr);
  const std::string old =
      storage::BatchId::Make(testing::kDayStartMicros - 86400000000 * 40, 0, 2)->ToString();
  ASSERT_TRUE(shared_->AddBatch(RecordOf(old), "02", kStart).ok());
  ASSERT_TRUE(member->Sync().ok());
  EXPECT_EQ(local_->Pin()->size(), 0u);
}

// Days past retention of a node that stopped heartbeating leave the
// shared catalog (a live node drops its own); the remover deletes their
// objects after the grace.
TEST_F(ClusterMemberTest, ASilentNodesBatchesOfDaysPastRetentionLeaveTheCatalog) {
  std::unique_ptr<ClusterMember> member = Join("k1", /*keep_days=*/7);
  ASSERT_NE(member, nullptr);
  ASSERT_NO_FATAL_FAILURE(ClaimNode02());
  const std::string old =
      storage::BatchId::Make(testing::kDayStartMicros - 86400000000 * 40, 0, 2)->ToString();
  const std::string recent = BatchIdOf(1, 0, 2);
  ASSERT_TRUE(shared_->AddBatch(RecordOf(old), "02", kStart).ok());
  ASSERT_TRUE(shared_->AddBatch(RecordOf(recent), "02", kStart).ok());
  ASSERT_TRUE(member->Sync().ok());
  EXPECT_THAT(SharedIds(), ElementsAre(old, recent)) << "node 02 heartbeats: its own to drop";
  Advance(absl::Seconds(31));
  ASSERT_TRUE(member->Sync().ok());
  EXPECT_THAT(SharedIds(), ElementsAre(recent));
  EXPECT_EQ(*shared_->StateOf(old), PostgresBatchCatalog::BatchState::kRemoved);
  EXPECT_EQ(member->Stats().batches_expired, 1u);
  Advance(absl::Minutes(11));
  ASSERT_TRUE(shared_->Heartbeat("01", "k1", absl::FromUnixNanos(now_nanos_.load())).ok());
  ASSERT_TRUE(member->Sync().ok());
  EXPECT_THAT(Deleted(), ElementsAre(old));
}

// Removal records of days past retention go once their objects are gone.
TEST_F(ClusterMemberTest, RemovalRecordsOfDaysPastRetentionArePruned) {
  std::unique_ptr<ClusterMember> member = Join("p1", /*keep_days=*/7);
  ASSERT_NE(member, nullptr);
  std::vector<std::string> old;
  for (int n : {0, 1}) {
    old.push_back(
        storage::BatchId::Make(testing::kDayStartMicros - 86400000000 * 40 + n, 0, 1)->ToString());
    ASSERT_TRUE(shared_->AddBatch(RecordOf(old.back()), "01", kStart).ok());
  }
  const std::string day = storage::BatchId::Parse(old[0])->Day();
  std::optional<DayLease> lease = *shared_->AcquireLease(day, "01/p1", kStart, absl::Seconds(30));
  ASSERT_TRUE(lease.has_value());
  ASSERT_TRUE(shared_->Swap(*lease, old, {}, "01", kStart).ok());
  ASSERT_TRUE(shared_->ObjectsDeleted({old[0]}, kStart).ok());
  ASSERT_TRUE(member->ReconcileStore().ok());
  EXPECT_EQ(*shared_->StateOf(old[0]), PostgresBatchCatalog::BatchState::kUnknown);
  EXPECT_EQ(*shared_->StateOf(old[1]), PostgresBatchCatalog::BatchState::kRemoved);
}

// The objects of a batch this node removed are deleted only after the
// grace period, once, and only by this node.
TEST_F(ClusterMemberTest, RemovedBatchesObjectsAreDeletedAfterTheGracePeriod) {
  std::unique_ptr<ClusterMember> member = Join();
  const std::string a = BatchIdOf(1, 0, 1), b = BatchIdOf(2, 0, 1);
  ASSERT_NO_FATAL_FAILURE(Registered(*member, {a, b}));
  const std::string c = BatchIdOf(5, 1, 1);
  ASSERT_NO_FATAL_FAILURE(CompactedAndRegistered(*member, {a, b}, c));
  Advance(absl::Minutes(10) - absl::Milliseconds(1));
  ASSERT_TRUE(member->Sync().ok());
  EXPECT_THAT(Deleted(), IsEmpty());
  Advance(absl::Milliseconds(2));
  ASSERT_TRUE(member->Sync().ok());
  EXPECT_THAT(Deleted(), ElementsAre(a, b));
  EXPECT_EQ(member->Stats().objects_deleted, 2u);
  EXPECT_THAT(*shared_->RemovedBefore("01", kStart + absl::Hours(1), kStart, 10), IsEmpty());
}

// Another live node that has not applied the listing without the removed
// batches may still read them: their objects wait for it, and go once it
// reports that listing (or stops heartbeating for the lease time).
TEST_F(ClusterMemberTest, RemovedBatchesObjectsWaitForEveryLiveNodeToSyncPastTheRemoval) {
  std::unique_ptr<ClusterMember> member = Join();
  ASSERT_NO_FATAL_FAILURE(ClaimNode02());
  const std::string a = BatchIdOf(1, 0, 1), b = BatchIdOf(2, 0, 1);
  ASSERT_NO_FATAL_FAILURE(Registered(*member, {a, b}));
  const std::string c = BatchIdOf(5, 1, 1);
  ASSERT_NO_FATAL_FAILURE(CompactedAndRegistered(*member, {a, b}, c));
  const int64_t removal = *shared_->Generation();
  auto beat = [&](const std::string& node, const std::string& instance) {
    ASSERT_TRUE(shared_->Heartbeat(node, instance, absl::FromUnixNanos(now_nanos_.load())).ok());
  };
  Advance(absl::Minutes(11));
  beat("01", "i1");
  beat("02", "other");
  ASSERT_TRUE(member->Sync().ok());
  EXPECT_THAT(Deleted(), IsEmpty()) << "node 02 has not applied the removal";
  ASSERT_TRUE(shared_->ReportSynced("02", "other", removal - 1).ok());
  ASSERT_TRUE(member->Sync().ok());
  EXPECT_THAT(Deleted(), IsEmpty()) << "node 02 applied an older listing only";
  ASSERT_TRUE(shared_->ReportSynced("02", "other", removal).ok());
  ASSERT_TRUE(member->Sync().ok());
  EXPECT_THAT(Deleted(), ElementsAre(a, b));
  // A node that dies holding back a removal stops counting after the
  // lease time.
  const std::string d = BatchIdOf(6, 0, 1);
  ASSERT_NO_FATAL_FAILURE(Registered(*member, {d}));
  const std::string e = BatchIdOf(7, 1, 1);
  ASSERT_NO_FATAL_FAILURE(CompactedAndRegistered(*member, {c, d}, e));
  Advance(absl::Minutes(11));
  beat("01", "i1");
  beat("02", "other");
  ASSERT_TRUE(member->Sync().ok());
  EXPECT_EQ(Deleted().count(c), 0u);
  Advance(absl::Seconds(31));
  beat("01", "i1");
  ASSERT_TRUE(member->Sync().ok());
  EXPECT_EQ(Deleted(), (std::set<std::string>{a, b, c, d}));
}

TEST_F(ClusterMemberTest, AnEmptyDataDirectoryGetsThisNodesBatchesBackInsteadOfRemovingThem) {
  const std::string a = BatchIdOf(1, 0, 1), b = BatchIdOf(2, 0, 1);
  const std::string theirs = BatchIdOf(4, 0, 2);
  for (const std::string& id : {a, b}) {
    ASSERT_TRUE(shared_->AddBatch(RecordOf(id), "01", kStart).ok());
  }
  ASSERT_TRUE(shared_->AddBatch(RecordOf(theirs), "02", kStart).ok());
  // Node 01 comes back on an empty data directory.
  std::unique_ptr<ClusterMember> member = Join();
  absl::StatusOr<size_t> restored = member->RestoreOwnBatches();
  ASSERT_TRUE(restored.ok()) << restored.status();
  EXPECT_EQ(*restored, 2u);
  EXPECT_EQ(member->Stats().batches_restored, 2u);
  for (int round = 0; round < 2; ++round) ASSERT_TRUE(member->Sync().ok());
  EXPECT_THAT(SharedIds(), ElementsAre(a, b, theirs));
  EXPECT_EQ(member->Stats().batches_removed, 0u);
  EXPECT_EQ(local_->Pin()->size(), 3u);  // its two, and node 02's adopted
  // Once the directory holds batches of this node, nothing is restored.
  restored = member->RestoreOwnBatches();
  ASSERT_TRUE(restored.ok()) << restored.status();
  EXPECT_EQ(*restored, 0u);
}

// The restore marker is written before the first batch is restored and
// removed after the last.
TEST_F(ClusterMemberTest, ARestoreHoldsTheMarkerFromItsFirstBatchToItsLast) {
  for (const std::string& id : {BatchIdOf(1, 0, 1), BatchIdOf(2, 0, 1)}) {
    ASSERT_TRUE(shared_->AddBatch(RecordOf(id), "01", kStart).ok());
  }
  std::unique_ptr<ClusterMember> member = Join();
  absl::StatusOr<size_t> restored = member->RestoreOwnBatches();
  ASSERT_TRUE(restored.ok()) << restored.status();
  EXPECT_EQ(*restored, 2u);
  EXPECT_EQ(restored_unmarked_, 0);
  EXPECT_FALSE(restore_marked_);
}

// A process killed in the middle of a restore left the marker and a
// directory holding one of the node's three batches: the directory is not
// taken for the node's own. Sync() refuses to run until RestoreOwnBatches()
// has restored the other two and removed the marker; nothing is removed.
TEST_F(ClusterMemberTest, ARestoreCutShortIsFinishedBeforeAnythingIsRemoved) {
  const std::string a = BatchIdOf(1, 0, 1), b = BatchIdOf(2, 0, 1), c = BatchIdOf(3, 0, 1);
  for (const std::string& id : {a, b, c}) {
    ASSERT_TRUE(shared_->AddBatch(RecordOf(id), "01", kStart).ok());
  }
  Publish({a}, {});
  Uploaded(a);
  restore_marked_ = true;
  std::unique_ptr<ClusterMember> member = Join();
  EXPECT_EQ(member->Sync().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(SharedIds(), ElementsAre(a, b, c));
  // The store does not answer: nothing changes, the marker stays.
  SetStoreStatus(absl::UnavailableError("the store does not answer"));
  absl::StatusOr<size_t> restored = member->RestoreOwnBatches();
  EXPECT_EQ(restored.status().code(), absl::StatusCode::kUnavailable);
  EXPECT_TRUE(restore_marked_);
  EXPECT_EQ(local_->Pin()->size(), 1u);
  SetStoreStatus(absl::OkStatus());
  restored = member->RestoreOwnBatches();
  ASSERT_TRUE(restored.ok()) << restored.status();
  EXPECT_EQ(*restored, 2u);
  EXPECT_FALSE(restore_marked_);
  for (int round = 0; round < 2; ++round) ASSERT_TRUE(member->Sync().ok());
  EXPECT_THAT(SharedIds(), ElementsAre(a, b, c));
  EXPECT_EQ(member->Stats().batches_removed, 0u);
  EXPECT_EQ(local_->Pin()->size(), 3u);
}

TEST_F(ClusterMemberTest, ADirectoryWithSomeOfThisNodesBatchesIsFollowedNotRestored) {
  const std::string a = BatchIdOf(1, 0, 1), b = BatchIdOf(2, 0, 1);
  for (const std::string& id : {a, b}) {
    ASSERT_TRUE(shared_->AddBatch(RecordOf(id), "01", kStart).ok());
  }
  // Compaction replaced a and b here before the crash; c is their output.
  const std::string c = BatchIdOf(3, 1, 1);
  Publish({c}, {}, {a, b});
  Uploaded(c);
  std::unique_ptr<ClusterMember> member = Join();
  absl::StatusOr<size_t> restored = member->RestoreOwnBatches();
  ASSERT_TRUE(restored.ok()) << restored.status();
  EXPECT_EQ(*restored, 0u);
  ASSERT_TRUE(member->Sync().ok());
  EXPECT_THAT(SharedIds(), ElementsAre(c));
}

// Objects of this node's batches that no catalog names go after the
// grace period; those a catalog names, or another node's, stay.
TEST_F(ClusterMemberTest, ObjectsNoCatalogNamesAreDeletedAfterTheGracePeriod) {
  std::unique_ptr<ClusterMember> member = Join();
  const std::string listed = BatchIdOf(1, 0, 1);  // in the shared catalog only
  const std::string local = BatchIdOf(2, 0, 1);   // published, not registered yet
  const std::string orphan = BatchIdOf(3, 0, 1);  // replaced before its registration
  const std::string late = BatchIdOf(5, 0, 1);    // uploaded before the listing saw it
  const std::string theirs = BatchIdOf(4, 0, 2);  // node 02's, in no catalog
  ASSERT_TRUE(shared_->AddBatch(RecordOf(listed), "01", kStart).ok());
  Publish({local}, {});
  Stored({listed, local, orphan, late, theirs});
  ASSERT_TRUE(member->ReconcileStore().ok());
  EXPECT_THAT(Deleted(), IsEmpty());
  EXPECT_EQ(member->Stats().orphans_waiting, 2u);
  Advance(absl::Minutes(10) - absl::Seconds(1));
  Publish({late}, {});
  ASSERT_TRUE(member->ReconcileStore().ok());
  EXPECT_THAT(Deleted(), IsEmpty());
  EXPECT_EQ(member->Stats().orphans_waiting, 1u);
  Advance(absl::Seconds(1));
  ASSERT_TRUE(member->ReconcileStore().ok());
  EXPECT_THAT(Deleted(), ElementsAre(orphan));
  EXPECT_EQ(member->Stats().orphans_deleted, 1u);
  EXPECT_EQ(member->Stats().orphans_waiting, 0u);
  // Gone from the store: nothing more to do.
  Advance(absl::Minutes(20));
  ASSERT_TRUE(member->ReconcileStore().ok());
  EXPECT_THAT(Deleted(), ElementsAre(orphan));
}

// The thread's first Sync after Start() fails (the store does not answer
// another node's batch): the error goes to on_error and counts as a
// failure, and a later round, once the store answers, adopts the batch.
TEST_F(ClusterMemberTest, AFirstSyncThatFailsIsReportedAndRetried) {
  const std::string theirs = BatchIdOf(4, 0, 2);
  ASSERT_TRUE(shared_->AddBatch(RecordOf(theirs), "02", kStart).ok());
  SetStoreStatus(absl::UnavailableError("the store does not answer"));
  std::unique_ptr<ClusterMember> member = Join();
  ASSERT_NE(member, nullptr);
  member->Start();
  ASSERT_TRUE(WaitFor([&] { return member->Stats().failures >= 2; }));
  const std::vector<absl::Status> errors = Errors();
  ASSERT_FALSE(errors.empty());
  EXPECT_EQ(errors[0].code(), absl::StatusCode::kUnavailable);
  EXPECT_THAT(std::string(errors[0].message()),
              ::testing::HasSubstr("adopting batch " + theirs + ": the store does not answer"));
  EXPECT_EQ(local_->Pin()->size(), 0u);
  // The store answers again: the thread adopts the batch.
  SetStoreStatus(absl::OkStatus());
  EXPECT_TRUE(WaitFor([&] { return member->Stats().batches_adopted == 1; }));
  member->Stop();
  ASSERT_EQ(local_->Pin()->size(), 1u);
  EXPECT_EQ(local_->Pin()->batches().front()->id().ToString(), theirs);
  EXPECT_THAT(SharedIds(), ElementsAre(theirs));
}

// The thread's listing of the store: an orphan whose delete fails is
// reported through on_error and deleted at a later listing; the other
// orphan goes at once, and what a catalog names stays.
TEST_F(ClusterMemberTest, AnOrphanWhoseDeleteFailsIsReportedAndDeletedLater) {
  // Listings every 20 s, orphans deleted after 20 s: the clock moves by
  // less than the lease time at a time, so the node keeps its claim.
  std::unique_ptr<ClusterMember> member =
      Join("i1", /*keep_days=*/0, [](ClusterMemberOptions& options) {
        options.reconcile_interval = absl::Seconds(20);
        options.delete_after = absl::Seconds(20);
      });
  ASSERT_NE(member, nullptr);
  const std::string listed = BatchIdOf(1, 0, 1);  // in the shared catalog only
  // Published, never uploaded: the thread's Sync() keeps `listed`, as the
  // removal of its day waits for this upload.
  const std::string local = BatchIdOf(2, 0, 1);
  const std::string stuck = BatchIdOf(3, 0, 1);   // an orphan the store will not delete
  const std::string orphan = BatchIdOf(5, 0, 1);  // an orphan
  const std::string theirs = BatchIdOf(4, 0, 2);  // node 02's, in no catalog
  ASSERT_TRUE(shared_->AddBatch(RecordOf(listed), "01", kStart).ok());
  Publish({local}, {});
  Stored({listed, local, stuck, orphan, theirs});
  SetUndeletable(stuck, true);
  member->Start();
  // The thread's first Sync() (the removal of `listed` waits) comes after
  // it read the clock: the first listing is 20 s after that.
  ASSERT_TRUE(WaitFor([&] { return member->Stats().days_waiting == 1; }));
  // The first listing finds the orphans; the next, delete_after later,
  // deletes them.
  Advance(absl::Seconds(20));
  ASSERT_TRUE(WaitFor([&] { return member->Stats().orphans_waiting == 2; }));
  EXPECT_THAT(Deleted(), IsEmpty());
  Advance(absl::Seconds(20));
  ASSERT_TRUE(WaitFor([&] { return member->Stats().orphans_deleted == 1; }));
  EXPECT_THAT(Deleted(), ElementsAre(orphan));
  EXPECT_EQ(member->Stats().orphans_waiting, 1u);
  ASSERT_TRUE(WaitFor([&] { return !Errors().empty(); }));
  const absl::Status error = Errors()[0];
  EXPECT_EQ(error.code(), absl::StatusCode::kUnavailable);
  EXPECT_THAT(std::string(error.message()),
              ::testing::HasSubstr("deleting the objects of batch " + stuck + ", in no catalog"));
  // The store deletes again: the next listing deletes the orphan, without
  // waiting out delete_after again.
  SetUndeletable(stuck, false);
  Advance(absl::Seconds(20));
  ASSERT_TRUE(WaitFor([&] { return member->Stats().orphans_deleted == 2; }));
  member->Stop();
  EXPECT_THAT(Deleted(), ElementsAre(stuck, orphan));
  EXPECT_EQ(member->Stats().orphans_waiting, 0u);
  EXPECT_EQ(Errors().size(), 1u);
  EXPECT_EQ(member->Stats().failures, 0u);
  // What a catalog names, and node 02's objects, stay.
  EXPECT_THAT(SharedIds(), ElementsAre(listed));
  EXPECT_EQ(local_->Pin()->size(), 1u);
  MutexLock lock(&mu_);
  EXPECT_EQ(stored_.size(), 3u);
  for (const std::string& id : {listed, local, theirs}) {
    EXPECT_TRUE(stored_.contains(*storage::BatchId::Parse(id))) << id;
  }
}

}  // namespace
}  // namespace strata::cluster
