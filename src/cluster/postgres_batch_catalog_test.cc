// The batch catalog's live list: adds, swaps, removal records and the
// generation, against a real PostgreSQL (one throwaway server per test
// binary, a fresh database per test).

#include "cluster/postgres_batch_catalog.h"

#include <atomic>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "cluster/cluster_testing.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "postgres/pg_connection.h"

namespace strata::cluster {
namespace {

using ::strata::cluster::testing::BatchIdOf;
using ::strata::cluster::testing::IdsOf;
using ::strata::cluster::testing::kDay;
using ::strata::cluster::testing::RecordOf;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

const absl::Time kNow = absl::FromUnixSeconds(1796450000);
constexpr absl::Duration kTtl = absl::Seconds(30);

class BatchCatalogTest : public testing::CatalogTest {
 protected:
  // A lease of kDay for node `node`.
  DayLease Lease(PostgresBatchCatalog& catalog, const std::string& node = "00") {
    absl::StatusOr<std::optional<DayLease>> lease =
        catalog.AcquireLease(kDay, node + "/a1", kNow, kTtl);
    EXPECT_TRUE(lease.ok()) << lease.status();
    EXPECT_TRUE(lease.ok() && lease->has_value());
    return lease.ok() && lease->has_value() ? **lease : DayLease{};
  }
};

TEST_F(BatchCatalogTest, AddedBatchesAreListedInIdOrderWithTheirRecordsAndTheGeneration) {
  std::unique_ptr<PostgresBatchCatalog> catalog = Open();
  ASSERT_NE(catalog, nullptr);
  EXPECT_EQ(*catalog->Generation(), 0);
  for (int n : {3, 1, 2}) {
    ASSERT_TRUE(catalog->AddBatch(RecordOf(BatchIdOf(n)), "00", kNow).ok());
  }
  absl::StatusOr<CatalogListing> listing = catalog->List();
  ASSERT_TRUE(listing.ok()) << listing.status();
  EXPECT_EQ(listing->generation, 3);
  EXPECT_THAT(IdsOf(*listing), ElementsAre(BatchIdOf(1), BatchIdOf(2), BatchIdOf(3)));
  EXPECT_EQ(listing->batches[0], RecordOf(BatchIdOf(1)));
  EXPECT_EQ(*catalog->StateOf(BatchIdOf(2)), PostgresBatchCatalog::BatchState::kLive);
  EXPECT_EQ(*catalog->StateOf(BatchIdOf(9)), PostgresBatchCatalog::BatchState::kUnknown);
}

TEST_F(BatchCatalogTest, AnotherNodeSeesTheSameListAndAddingTwiceIsRefused) {
  std::unique_ptr<PostgresBatchCatalog> one = Open();
  std::unique_ptr<PostgresBatchCatalog> two = Open();
  ASSERT_TRUE(one->AddBatch(RecordOf(BatchIdOf(1, 0, 1)), "01", kNow).ok());
  EXPECT_THAT(IdsOf(*two->List()), ElementsAre(BatchIdOf(1, 0, 1)));
  const absl::Status again = two->AddBatch(RecordOf(BatchIdOf(1, 0, 1)), "02", kNow);
  EXPECT_EQ(again.code(), absl::StatusCode::kAlreadyExists) << again;
  // A refused add changes nothing, the generation included.
  EXPECT_EQ(*one->Generation(), 1);
}

TEST_F(BatchCatalogTest, RecordsThatStrataCouldNotReadAreRefusedBeforeTheDatabase) {
  std::unique_ptr<PostgresBatchCatalog> catalog = Open();
  CatalogBatch other_id = RecordOf(BatchIdOf(1));
  other_id.id = BatchIdOf(2);
  CatalogBatch negative = RecordOf(BatchIdOf(1));
  negative.bytes = -1;
  CatalogBatch broken = RecordOf(BatchIdOf(1));
  broken.meta_json = "{\"format\":3";
  CatalogBatch bad_id = RecordOf(BatchIdOf(1));
  bad_id.id = "2026'; DROP TABLE x; --";
  for (const CatalogBatch& batch : {other_id, negative, broken, bad_id}) {
    const absl::Status status = catalog->AddBatch(batch, "00", kNow);
    EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << status;
  }
  EXPECT_EQ(catalog->AddBatch(RecordOf(BatchIdOf(1)), "0!", kNow).code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(*catalog->Generation(), 0);
  EXPECT_TRUE(catalog->List()->batches.empty());
}

TEST_F(BatchCatalogTest, SwapReplacesInputsWithOutputsAndARemovedBatchNeverReturns) {
  std::unique_ptr<PostgresBatchCatalog> catalog = Open();
  for (int n : {1, 2, 3}) ASSERT_TRUE(catalog->AddBatch(RecordOf(BatchIdOf(n)), "00", kNow).ok());
  const std::string output = BatchIdOf(4, 1);
  const absl::Status swapped =
      catalog->Swap(Lease(*catalog), {BatchIdOf(1), BatchIdOf(2)},
                    {RecordOf(output, {BatchIdOf(1), BatchIdOf(2)})}, "00", kNow);
  ASSERT_TRUE(swapped.ok()) << swapped;
  absl::StatusOr<CatalogListing> listing = catalog->List();
  EXPECT_THAT(IdsOf(*listing), ElementsAre(BatchIdOf(3), output));
  EXPECT_EQ(listing->generation, 4);
  EXPECT_EQ(*catalog->StateOf(BatchIdOf(1)), PostgresBatchCatalog::BatchState::kRemoved);
  // A node that still holds a copy of an input cannot bring it back.
  const absl::Status back = catalog->AddBatch(RecordOf(BatchIdOf(1)), "00", kNow);
  EXPECT_EQ(back.code(), absl::StatusCode::kFailedPrecondition) << back;
  EXPECT_THAT(std::string(back.message()), HasSubstr("removed"));
}

TEST_F(BatchCatalogTest, ASwapThatCannotBeMadeWholeChangesNothing) {
  std::unique_ptr<PostgresBatchCatalog> catalog = Open();
  ASSERT_TRUE(catalog->AddBatch(RecordOf(BatchIdOf(1)), "00", kNow).ok());
  const DayLease lease = Lease(*catalog);
  const std::string output = BatchIdOf(4, 1);
  // One input is not live: the other is not removed, the output not added.
  absl::Status status = catalog->Swap(lease, {BatchIdOf(1), BatchIdOf(2)},
                                      {RecordOf(output, {BatchIdOf(1), BatchIdOf(2)})}, "00", kNow);
  EXPECT_EQ(status.code(), absl::StatusCode::kNotFound) << status;
  EXPECT_THAT(std::string(status.message()), HasSubstr(BatchIdOf(2)));
  // An output already live: the input stays.
  ASSERT_TRUE(catalog->AddBatch(RecordOf(BatchIdOf(5)), "00", kNow).ok());
  status = catalog->Swap(lease, {BatchIdOf(1)}, {RecordOf(BatchIdOf(5))}, "00", kNow);
  EXPECT_EQ(status.code(), absl::StatusCode::kAlreadyExists) << status;
  // An output of another day.
  const std::string next_day =
      storage::BatchId::Make(testing::kDayStartMicros + 86400000000, 1)->ToString();
  status = catalog->Swap(lease, {BatchIdOf(1)}, {RecordOf(next_day, {BatchIdOf(1)})}, "00", kNow);
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << status;
  EXPECT_THAT(IdsOf(*catalog->List()), ElementsAre(BatchIdOf(1), BatchIdOf(5)));
  EXPECT_EQ(*catalog->Generation(), 2);
  EXPECT_EQ(*catalog->StateOf(BatchIdOf(1)), PostgresBatchCatalog::BatchState::kLive);
}

TEST_F(BatchCatalogTest, AHolderWhoseLeaseWasTakenOverCannotSwap) {
  std::unique_ptr<PostgresBatchCatalog> first = Open();
  std::unique_ptr<PostgresBatchCatalog> second = Open();
  for (int n : {1, 2}) ASSERT_TRUE(first->AddBatch(RecordOf(BatchIdOf(n)), "00", kNow).ok());
  const DayLease stale = *first->AcquireLease(kDay, "01/a1", kNow, kTtl).value();
  // The first holder pauses past its lease; the second takes the day over.
  const DayLease current =
      *second->AcquireLease(kDay, "02/b2", kNow + kTtl + absl::Seconds(1), kTtl).value();
  EXPECT_EQ(current.epoch, stale.epoch + 1);
  const absl::Status late = first->Swap(stale, {BatchIdOf(1), BatchIdOf(2)},
                                        {RecordOf(BatchIdOf(7, 1), {BatchIdOf(1), BatchIdOf(2)})},
                                        "01", kNow + kTtl + absl::Seconds(2));
  EXPECT_EQ(late.code(), absl::StatusCode::kFailedPrecondition) << late;
  EXPECT_THAT(std::string(late.message()), HasSubstr("02/b2"));
  EXPECT_THAT(IdsOf(*first->List()), ElementsAre(BatchIdOf(1), BatchIdOf(2)));
  // The holder of the current epoch swaps.
  const absl::Status swapped =
      second->Swap(current, {BatchIdOf(1), BatchIdOf(2)},
                   {RecordOf(BatchIdOf(8, 1), {BatchIdOf(1), BatchIdOf(2)})}, "02",
                   kNow + kTtl + absl::Seconds(2));
  EXPECT_TRUE(swapped.ok()) << swapped;
  EXPECT_THAT(IdsOf(*first->List()), ElementsAre(BatchIdOf(8, 1)));
}

// Invariant 2 seen from another node: while one node swaps a chain of
// batches (each swap replaces the live one by the next), every listing
// holds exactly one of them, and generations never go back.
TEST_F(BatchCatalogTest, EveryListingShowsAWholeSwap) {
  std::unique_ptr<PostgresBatchCatalog> writer = Open();
  std::unique_ptr<PostgresBatchCatalog> reader = Open();
  ASSERT_TRUE(writer->AddBatch(RecordOf(BatchIdOf(0)), "00", kNow).ok());
  const DayLease lease = Lease(*writer);
  constexpr int kSwaps = 60;
  std::atomic<bool> done{false};
  std::thread swapper([&] {
    std::string live = BatchIdOf(0);
    for (int n = 1; n <= kSwaps; ++n) {
      const std::string next = BatchIdOf(n, 1);
      const absl::Status status = writer->Swap(lease, {live}, {RecordOf(next, {live})}, "00", kNow);
      EXPECT_TRUE(status.ok()) << status;
      live = next;
    }
    done = true;
  });
  int64_t last_generation = 0;
  int listings = 0;
  while (!done || listings == 0) {
    absl::StatusOr<CatalogListing> listing = reader->List();
    ASSERT_TRUE(listing.ok()) << listing.status();
    EXPECT_EQ(listing->batches.size(), 1u) << "at generation " << listing->generation;
    EXPECT_GE(listing->generation, last_generation);
    last_generation = listing->generation;
    ++listings;
  }
  swapper.join();
  EXPECT_THAT(IdsOf(*reader->List()), ElementsAre(BatchIdOf(kSwaps, 1)));
  EXPECT_EQ(*reader->Generation(), 1 + kSwaps);
}

TEST_F(BatchCatalogTest, RemovedBatchesAreListedForDeletionUntilTheirObjectsAreDeleted) {
  std::unique_ptr<PostgresBatchCatalog> catalog = Open();
  for (int n : {1, 2, 3}) ASSERT_TRUE(catalog->AddBatch(RecordOf(BatchIdOf(n)), "00", kNow).ok());
  const DayLease lease = Lease(*catalog);
  ASSERT_TRUE(catalog->Swap(lease, {BatchIdOf(1)}, {}, "00", kNow).ok());
  ASSERT_TRUE(catalog->Swap(lease, {BatchIdOf(2)}, {}, "00", kNow + absl::Seconds(10)).ok());
  // Only the records older than the bound, oldest first.
  absl::StatusOr<std::vector<RemovedBatch>> old =
      catalog->RemovedBefore("00", kNow + absl::Seconds(5), kNow, 10);
  ASSERT_TRUE(old.ok()) << old.status();
  ASSERT_EQ(old->size(), 1u);
  EXPECT_EQ((*old)[0].id, BatchIdOf(1));
  EXPECT_EQ((*old)[0].removed_by, "00");
  EXPECT_EQ((*old)[0].removed_at, kNow);
  old = catalog->RemovedBefore("00", kNow + absl::Minutes(1), kNow, 10);
  ASSERT_EQ(old->size(), 2u);
  ASSERT_TRUE(catalog->ObjectsDeleted({BatchIdOf(1)}, kNow + absl::Minutes(1)).ok());
  old = catalog->RemovedBefore("00", kNow + absl::Minutes(1), kNow, 10);
  ASSERT_EQ(old->size(), 1u);
  EXPECT_EQ((*old)[0].id, BatchIdOf(2));
  // Another node's removals are its own to delete.
  EXPECT_THAT(*catalog->RemovedBefore("01", kNow + absl::Minutes(1), kNow, 10), IsEmpty());
  // The record stays: the batch is still never live again.
  EXPECT_EQ(*catalog->StateOf(BatchIdOf(1)), PostgresBatchCatalog::BatchState::kRemoved);
  EXPECT_EQ(catalog->AddBatch(RecordOf(BatchIdOf(1)), "00", kNow).code(),
            absl::StatusCode::kFailedPrecondition);
  // Pruned once its day is past retention, only with its objects deleted.
  EXPECT_EQ(*catalog->PruneRemovals(kDay), 0);
  EXPECT_EQ(*catalog->PruneRemovals("2026-12-06"), 1);
  EXPECT_EQ(*catalog->StateOf(BatchIdOf(1)), PostgresBatchCatalog::BatchState::kUnknown);
  EXPECT_EQ(*catalog->StateOf(BatchIdOf(2)), PostgresBatchCatalog::BatchState::kRemoved);
  EXPECT_EQ(catalog->PruneRemovals("2026-13-01").status().code(),
            absl::StatusCode::kInvalidArgument);
}

// A removal's objects wait for every live node to apply a listing made at
// or after it; a node whose heartbeat is older than `alive_after` does not
// count, and a new claim of a node id starts with no listing applied.
TEST_F(BatchCatalogTest, RemovalsWaitForEveryLiveNodeToApplyAListingAfterThem) {
  std::unique_ptr<PostgresBatchCatalog> catalog = Open();
  auto claim = [&](const std::string& node, const std::string& instance, absl::Time at) {
    return catalog->ClaimNode(
        NodeRecord{.node = node, .instance = instance, .started_at = at, .heartbeat_at = at},
        absl::Seconds(30));
  };
  ASSERT_TRUE(claim("00", "a", kNow).ok());
  ASSERT_TRUE(claim("01", "b", kNow).ok());
  for (int n : {1, 2}) ASSERT_TRUE(catalog->AddBatch(RecordOf(BatchIdOf(n)), "00", kNow).ok());
  ASSERT_TRUE(catalog->Swap(Lease(*catalog), {BatchIdOf(1)}, {}, "00", kNow).ok());
  const int64_t removal = *catalog->Generation();
  const absl::Time later = kNow + absl::Minutes(1);
  auto deletable = [&](absl::Time alive_after) {
    std::vector<std::string> ids;
    absl::StatusOr<std::vector<RemovedBatch>> removed =
        catalog->RemovedBefore("00", later, alive_after, 10);
    EXPECT_TRUE(removed.ok()) << removed.status();
    if (removed.ok()) {
      for (const RemovedBatch& batch : *removed) ids.push_back(batch.id);
    }
    return ids;
  };
  EXPECT_THAT(deletable(kNow - absl::Seconds(1)), IsEmpty()) << "no node applied it";
  ASSERT_TRUE(catalog->ReportSynced("00", "a", removal).ok());
  ASSERT_TRUE(catalog->ReportSynced("01", "b", removal - 1).ok());
  EXPECT_THAT(deletable(kNow - absl::Seconds(1)), IsEmpty()) << "node 01 lags";
  // An older report never lowers it; another instance's report counts not.
  ASSERT_TRUE(catalog->ReportSynced("00", "a", removal - 1).ok());
  ASSERT_TRUE(catalog->ReportSynced("01", "other", removal).ok());
  EXPECT_THAT(deletable(kNow - absl::Seconds(1)), IsEmpty());
  // Node 01 silent past the bound: only node 00 counts.
  ASSERT_TRUE(catalog->Heartbeat("00", "a", kNow + absl::Seconds(1)).ok());
  EXPECT_THAT(deletable(kNow), ElementsAre(BatchIdOf(1)));
  ASSERT_TRUE(catalog->ReportSynced("01", "b", removal).ok());
  EXPECT_THAT(deletable(kNow - absl::Seconds(1)), ElementsAre(BatchIdOf(1)));
  // Node 00 restarts: its new claim has applied nothing yet.
  ASSERT_TRUE(catalog->ReleaseNode("00", "a").ok());
  ASSERT_TRUE(claim("00", "c", kNow).ok());
  EXPECT_THAT(deletable(kNow - absl::Seconds(1)), IsEmpty());
}

TEST_F(BatchCatalogTest, ADatabaseMigratedByANewerStrataIsRefusedByName) {
  ASSERT_NE(Open(), nullptr);
  absl::StatusOr<std::unique_ptr<postgres::PgConnection>> db =
      postgres::PgConnection::Connect(url());
  ASSERT_TRUE(db.ok()) << db.status();
  ASSERT_TRUE((*db)->Exec("INSERT INTO strata_catalog_migrations VALUES (99, 0)").ok());
  absl::StatusOr<std::unique_ptr<PostgresBatchCatalog>> newer = PostgresBatchCatalog::Open(url());
  ASSERT_FALSE(newer.ok());
  EXPECT_EQ(newer.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(std::string(newer.status().message()), HasSubstr("batch catalog"));
  EXPECT_THAT(std::string(newer.status().message()), HasSubstr("99"));
}

}  // namespace
}  // namespace strata::cluster
