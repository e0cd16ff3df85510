#include "storage/commit/catalog.h"

#include <atomic>
#include <map>
#include <memory>
#include <random>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "common/mutex.h"
#include "fmt/format.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace strata::storage {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;

constexpr int64_t kStampMicros = 1749893415123456;

BatchId IdAt(int i) { return *BatchId::Make(kStampMicros + i, 0); }

BatchRecord Record(int i, std::shared_ptr<const void> attachment = nullptr) {
  const BatchId id = IdAt(i);
  BatchMeta meta;
  meta.id = id.ToString();
  meta.day = id.Day();
  return BatchRecord{.id = id,
                     .day = id.Day(),
                     .dir = fmt::format("days/{}/{}.batch", id.Day(), id.ToString()),
                     .meta = meta,
                     .attachment = std::move(attachment)};
}

std::vector<int> Offsets(const Snapshot& snapshot) {
  std::vector<int> offsets;
  for (const auto& batch : snapshot.batches()) {
    offsets.push_back(static_cast<int>(batch->id().stamp_micros() - kStampMicros));
  }
  return offsets;
}

// Records every retire callback, by id offset.
class RetireLog {
 public:
  Catalog::RetireCallback Callback() {
    return [this](const LiveBatch& batch) {
      MutexLock lock(&mu_);
      retired_.push_back(static_cast<int>(batch.id().stamp_micros() - kStampMicros));
      EXPECT_EQ(batch.dir(), Record(retired_.back()).dir);
    };
  }
  std::vector<int> retired() const {
    MutexLock lock(&mu_);
    return retired_;
  }

 private:
  mutable Mutex mu_;
  std::vector<int> retired_ ABSL_GUARDED_BY(mu_);
};

// An id published again while a removed record of it is still held: some
// record of it is alive until both are gone, whichever goes last, and the
// callback sees that one no longer counted.
TEST(CatalogTest, HoldsRecordOfCountsLiveAndStillHeldRetiredRecords) {
  std::unique_ptr<Catalog> catalog;
  std::vector<bool> held_at_retire;
  absl::StatusOr<std::unique_ptr<Catalog>> created =
      Catalog::Create({Record(1)}, [&](const LiveBatch& batch) {
        held_at_retire.push_back(catalog->HoldsRecordOf(batch.id()));
      });
  ASSERT_TRUE(created.ok()) << created.status();
  catalog = *std::move(created);
  EXPECT_TRUE(catalog->HoldsRecordOf(IdAt(1)));
  EXPECT_FALSE(catalog->HoldsRecordOf(IdAt(2)));
  std::shared_ptr<const Snapshot> reader = catalog->Pin();
  ASSERT_TRUE(catalog->Publish({}, {IdAt(1)}).ok());
  EXPECT_TRUE(catalog->HoldsRecordOf(IdAt(1)));  // `reader` holds it
  ASSERT_TRUE(catalog->Publish({Record(1)}, {}).ok());
  ASSERT_TRUE(catalog->Publish({}, {IdAt(1)}).ok());  // the second record goes first
  EXPECT_THAT(held_at_retire, ElementsAre(true));
  EXPECT_TRUE(catalog->HoldsRecordOf(IdAt(1)));
  reader.reset();
  EXPECT_THAT(held_at_retire, ElementsAre(true, false));
  EXPECT_FALSE(catalog->HoldsRecordOf(IdAt(1)));
}

TEST(CatalogTest, FirstSnapshotHoldsTheInitialBatchesSorted) {
  absl::StatusOr<std::unique_ptr<Catalog>> catalog =
      Catalog::Create({Record(3), Record(1), Record(2)}, nullptr);
  ASSERT_TRUE(catalog.ok()) << catalog.status();
  std::shared_ptr<const Snapshot> snapshot = (*catalog)->Pin();
  EXPECT_EQ(snapshot->sequence(), 0u);
  EXPECT_THAT(Offsets(*snapshot), ElementsAre(1, 2, 3));
  ASSERT_NE(snapshot->Find(IdAt(2)), nullptr);
  EXPECT_EQ(snapshot->Find(IdAt(2))->dir(), Record(2).dir);
  EXPECT_EQ(snapshot->Find(IdAt(2))->meta().id, IdAt(2).ToString());
  EXPECT_EQ(snapshot->Find(IdAt(4)), nullptr);
  EXPECT_EQ((*catalog)->Pin(), snapshot);  // no publish, same snapshot
}

TEST(CatalogTest, CreateRefusesARepeatedId) {
  absl::StatusOr<std::unique_ptr<Catalog>> catalog =
      Catalog::Create({Record(1), Record(1)}, nullptr);
  EXPECT_EQ(catalog.status().code(), absl::StatusCode::kInvalidArgument) << catalog.status();
}

TEST(CatalogTest, PublishSwapsInANewSnapshotAndLeavesPinnedOnesAlone) {
  auto catalog = *Catalog::Create({Record(1), Record(3)}, nullptr);
  std::shared_ptr<const Snapshot> before = catalog->Pin();
  absl::StatusOr<std::shared_ptr<const Snapshot>> after =
      catalog->Publish({Record(4), Record(2)}, {IdAt(1)});
  ASSERT_TRUE(after.ok()) << after.status();
  EXPECT_EQ((*after)->sequence(), 1u);
  EXPECT_THAT(Offsets(**after), ElementsAre(2, 3, 4));
  EXPECT_EQ(catalog->Pin(), *after);
  EXPECT_THAT(Offsets(*before), ElementsAre(1, 3));
  // Unchanged batches are shared, not copied.
  EXPECT_EQ(before->Find(IdAt(3)), (*after)->Find(IdAt(3)));

  after = catalog->Publish({}, {IdAt(2), IdAt(3), IdAt(4)});
  ASSERT_TRUE(after.ok());
  EXPECT_EQ((*after)->sequence(), 2u);
  EXPECT_THAT(Offsets(**after), IsEmpty());
}

TEST(CatalogTest, RefusedPublishChangesNothing) {
  RetireLog log;
  auto catalog = *Catalog::Create({Record(1), Record(2)}, log.Callback());
  const std::shared_ptr<const Snapshot> current = catalog->Pin();
  struct Case {
    std::vector<int> add, remove;
    absl::StatusCode code;
  };
  for (const Case& c : std::vector<Case>{
           {{1}, {}, absl::StatusCode::kAlreadyExists},
           {{3}, {5}, absl::StatusCode::kNotFound},
           {{3, 3}, {}, absl::StatusCode::kInvalidArgument},
           {{}, {1, 1}, absl::StatusCode::kInvalidArgument},
           {{2}, {2}, absl::StatusCode::kAlreadyExists},  // an id is never reused
       }) {
    std::vector<BatchRecord> add;
    for (int i : c.add) add.push_back(Record(i));
    std::vector<BatchId> remove;
    for (int i : c.remove) remove.push_back(IdAt(i));
    absl::StatusOr<std::shared_ptr<const Snapshot>> result = catalog->Publish(add, remove);
    EXPECT_EQ(result.status().code(), c.code) << result.status();
    EXPECT_EQ(catalog->Pin(), current);
  }
  EXPECT_THAT(log.retired(), IsEmpty());
}

TEST(CatalogTest, RemovedBatchRetiresWhenTheLastSnapshotNamingItDies) {
  RetireLog log;
  auto catalog = *Catalog::Create({Record(1), Record(2)}, log.Callback());
  std::shared_ptr<const Snapshot> old_reader = catalog->Pin();
  ASSERT_TRUE(catalog->Publish({Record(3)}, {IdAt(1)}).ok());
  std::shared_ptr<const Snapshot> middle_reader = catalog->Pin();
  ASSERT_TRUE(catalog->Publish({}, {IdAt(2)}).ok());
  // Both removed batches are still pinned by old_reader.
  EXPECT_THAT(log.retired(), IsEmpty());
  // A batch pointer copied out of a snapshot pins the batch as well.
  std::shared_ptr<const LiveBatch> kept = old_reader->batches().front();
  old_reader.reset();
  EXPECT_THAT(log.retired(), IsEmpty());  // 1 by `kept`, 2 by middle_reader
  middle_reader.reset();
  EXPECT_THAT(log.retired(), ElementsAre(2));
  kept.reset();
  EXPECT_THAT(log.retired(), ElementsAre(2, 1));
  // Live batches never retire, not even when the catalog goes away.
  catalog.reset();
  EXPECT_THAT(log.retired(), ElementsAre(2, 1));
}

TEST(CatalogTest, UnpinnedRemovedBatchRetiresDuringPublishWithoutLocksHeld) {
  std::unique_ptr<Catalog> catalog;
  std::vector<uint64_t> seen_sequences;
  catalog = *Catalog::Create({Record(1)}, [&](const LiveBatch&) {
    // Calling back into the catalog from the hook must not deadlock.
    seen_sequences.push_back(catalog->Pin()->sequence());
  });
  ASSERT_TRUE(catalog->Publish({}, {IdAt(1)}).ok());
  EXPECT_THAT(seen_sequences, ElementsAre(1u));
}

TEST(CatalogTest, RetiredBatchOutlivingTheCatalogStillRetires) {
  RetireLog log;
  auto catalog = *Catalog::Create({Record(1)}, log.Callback());
  std::shared_ptr<const Snapshot> reader = catalog->Pin();
  ASSERT_TRUE(catalog->Publish({}, {IdAt(1)}).ok());
  catalog.reset();
  EXPECT_THAT(log.retired(), IsEmpty());
  reader.reset();
  EXPECT_THAT(log.retired(), ElementsAre(1));
}

TEST(CatalogTest, AttachmentTravelsWithTheBatch) {
  auto filter = std::make_shared<const std::string>("trace filter");
  auto catalog = *Catalog::Create({Record(1, filter)}, nullptr);
  ASSERT_TRUE(catalog->Publish({Record(2)}, {}).ok());
  std::shared_ptr<const Snapshot> snapshot = catalog->Pin();
  auto attached =
      std::static_pointer_cast<const std::string>(snapshot->Find(IdAt(1))->attachment());
  EXPECT_EQ(attached, filter);
  EXPECT_EQ(snapshot->Find(IdAt(2))->attachment(), nullptr);
}

TEST(CatalogTest, ReplacedRecordRunsTheReplaceCallbackWhenItsLastReaderLetsGo) {
  std::vector<std::string> events;
  Mutex mu;
  const auto note = [&](std::string what) {
    return [&, what](const LiveBatch& batch) {
      MutexLock lock(&mu);
      events.push_back(fmt::format("{} {} {}", what, batch.id().stamp_micros() - kStampMicros,
                                   batch.attachment() == nullptr ? "old" : "new"));
    };
  };
  auto catalog = *Catalog::Create({Record(1), Record(2)}, note("retire"), note("replace"));
  std::shared_ptr<const Snapshot> reader = catalog->Pin();
  auto replaced = catalog->Replace(Record(1, std::make_shared<const std::string>("evicted")));
  ASSERT_TRUE(replaced.ok()) << replaced.status();
  EXPECT_EQ((*replaced)->sequence(), 1u);
  EXPECT_THAT(Offsets(**replaced), ElementsAre(1, 2));
  EXPECT_NE(catalog->Pin()->Find(IdAt(1))->attachment(), nullptr);
  EXPECT_EQ(reader->Find(IdAt(1))->attachment(), nullptr);  // the pinned one is unchanged
  // Removing the new record while the old one is pinned retires nothing yet.
  ASSERT_TRUE(catalog->Publish({}, {IdAt(1)}).ok());
  replaced->reset();
  EXPECT_THAT(events, IsEmpty());
  reader.reset();
  // The old record first, then the new one it kept alive.
  EXPECT_THAT(events, ElementsAre("replace 1 old", "retire 1 new"));
  // A replaced record nobody pins is released at once, and a live record
  // never retires.
  ASSERT_TRUE(catalog->Replace(Record(2, std::make_shared<const std::string>("x"))).ok());
  EXPECT_THAT(events, ElementsAre("replace 1 old", "retire 1 new", "replace 2 old"));
  catalog.reset();
  EXPECT_EQ(events.size(), 3u);
}

TEST(CatalogTest, ReplaceRefusesAnIdNotLiveOrAMovedRecord) {
  auto catalog = *Catalog::Create({Record(1)}, nullptr);
  EXPECT_TRUE(absl::IsNotFound(catalog->Replace(Record(2)).status()));
  BatchRecord moved = Record(1);
  moved.dir = "elsewhere";
  EXPECT_TRUE(absl::IsInvalidArgument(catalog->Replace(moved).status()));
  EXPECT_EQ(catalog->Pin()->sequence(), 0u);
}

// Readers pin snapshots and mark each batch they see as in use while they
// hold the snapshot; publishers add and remove batches. The retire hook
// checks that no reader is using the batch it retires, and that each
// batch retires once.
TEST(CatalogTest, ConcurrentReadersNeverSeeARetiredBatchInUse) {
  constexpr int kBatches = 400;
  constexpr int kReaders = 3;
  struct State {
    std::atomic<int> in_use{0};
    std::atomic<int> retired{0};
  };
  std::vector<State> states(kBatches);
  std::atomic<int> violations{0};
  auto catalog = *Catalog::Create({}, [&](const LiveBatch& batch) {
    State& state = states[batch.id().stamp_micros() - kStampMicros];
    if (state.in_use.load() != 0) violations.fetch_add(1);
    state.retired.fetch_add(1);
  });
  std::atomic<bool> done{false};
  std::atomic<int> removed{0};

  std::vector<std::thread> readers;
  std::atomic<uint64_t> pins{0};
  for (int r = 0; r < kReaders; ++r) {
    readers.emplace_back([&] {
      uint64_t last_sequence = 0;
      while (!done.load()) {
        std::shared_ptr<const Snapshot> snapshot = catalog->Pin();
        if (snapshot->sequence() < last_sequence) violations.fetch_add(1);
        last_sequence = snapshot->sequence();
        for (const auto& batch : snapshot->batches()) {
          State& state = states[batch->id().stamp_micros() - kStampMicros];
          state.in_use.fetch_add(1);
          if (state.retired.load() != 0) violations.fetch_add(1);
        }
        if (!std::is_sorted(snapshot->batches().begin(), snapshot->batches().end(),
                            [](const auto& a, const auto& b) { return a->id() < b->id(); })) {
          violations.fetch_add(1);
        }
        std::this_thread::yield();
        for (const auto& batch : snapshot->batches()) {
          states[batch->id().stamp_micros() - kStampMicros].in_use.fetch_sub(1);
        }
        pins.fetch_add(1);
      }
    });
  }
  // Two publishers: one adds even ids and removes older ones, one odd.
  std::vector<std::thread> publishers;
  for (int parity = 0; parity < 2; ++parity) {
    publishers.emplace_back([&, parity] {
      std::vector<int> live;
      for (int i = parity; i < kBatches; i += 2) {
        std::vector<BatchId> remove;
        if (live.size() > 5) {
          remove.push_back(IdAt(live.front()));
          live.erase(live.begin());
        }
        if (!catalog->Publish({Record(i)}, remove).ok()) violations.fetch_add(1);
        removed.fetch_add(static_cast<int>(remove.size()));
        live.push_back(i);
      }
    });
  }
  for (auto& publisher : publishers) publisher.join();
  done.store(true);
  for (auto& reader : readers) reader.join();

  EXPECT_EQ(violations.load(), 0);
  EXPECT_GT(pins.load(), 0u);
  EXPECT_EQ(catalog->Pin()->sequence(), static_cast<uint64_t>(kBatches));
  EXPECT_EQ(catalog->Pin()->size(), 12u);  // 6 live per publisher
  int retired = 0;
  for (const State& state : states) {
    EXPECT_LE(state.retired.load(), 1);
    retired += state.retired.load();
  }
  EXPECT_EQ(retired, removed.load());
  EXPECT_EQ(removed.load(), kBatches - 12);
}

}  // namespace
}  // namespace strata::storage
