// PlanCompaction and DaysToDrop on hand-made Snapshots: which batches are
// merged next, and which days retention drops.

#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "storage/commit/catalog.h"
#include "storage/maintenance/compaction.h"
#include "storage/maintenance/retention.h"

namespace strata::storage {
namespace {

constexpr int64_t kDayMicros = int64_t{86'400} * 1'000'000;
constexpr int64_t kNov30 = int64_t{1'796'032'800} * 1'000'000;  // 2026-11-30 10:00 UTC

struct Spec {
  int64_t stamp;  // micros
  int generation = 0;
  uint64_t rows = 100;
  uint64_t bytes = 1000;
};

std::shared_ptr<const Snapshot> SnapshotOf(const std::vector<Spec>& specs) {
  std::vector<BatchRecord> records;
  for (const Spec& s : specs) {
    absl::StatusOr<BatchId> id = BatchId::Make(s.stamp, s.generation);
    EXPECT_TRUE(id.ok()) << id.status();
    BatchRecord r{.id = *id, .day = id->Day(), .dir = "/x", .meta = {}, .attachment = nullptr};
    r.meta.id = id->ToString();
    r.meta.generation = static_cast<uint64_t>(s.generation);
    r.meta.day = r.day;
    r.meta.spans.file_rows = s.rows;
    r.meta.spans_parquet = FileMeta{.bytes = s.bytes, .xxh3_64 = 0};
    records.push_back(std::move(r));
  }
  auto catalog = Catalog::Create(std::move(records), nullptr);
  EXPECT_TRUE(catalog.ok()) << catalog.status();
  return (*catalog)->Pin();
}

std::vector<std::string> Ids(const CompactionGroup& group) {
  std::vector<std::string> out;
  for (const auto& b : group.inputs) out.push_back(b->meta().id);
  return out;
}

TEST(PlanCompactionTest, TodayWaitsForMinInputsThenTakesTheOldestUpToMaxInputs) {
  CompactionPolicy policy{.min_inputs = 4, .max_inputs = 5};
  std::vector<Spec> specs;
  for (int i = 0; i < 3; ++i) specs.push_back({kNov30 + i});
  EXPECT_FALSE(PlanCompaction(*SnapshotOf(specs), policy, "2026-11-30").has_value());
  for (int i = 3; i < 7; ++i) specs.push_back({kNov30 + i});
  const auto snapshot = SnapshotOf(specs);
  const auto group = PlanCompaction(*snapshot, policy, "2026-11-30");
  ASSERT_TRUE(group.has_value());
  EXPECT_EQ(group->day, "2026-11-30");
  EXPECT_EQ(group->generation, 0);
  ASSERT_EQ(group->inputs.size(), 5u);
  EXPECT_EQ(group->inputs.front()->id(), snapshot->batches()[0]->id());
}

TEST(PlanCompactionTest, EnoughBytesMakeTwoBatchesEligible) {
  CompactionPolicy policy{.min_inputs = 8, .min_bytes = 5000};
  EXPECT_FALSE(PlanCompaction(*SnapshotOf({{kNov30, 0, 100, 2000}, {kNov30 + 1, 0, 100, 2000}}),
                              policy, "2026-11-30")
                   .has_value());
  EXPECT_TRUE(PlanCompaction(*SnapshotOf({{kNov30, 0, 100, 3000}, {kNov30 + 1, 0, 100, 3000}}),
                             policy, "2026-11-30")
                  .has_value());
}

TEST(PlanCompactionTest, ClosedDaysMergeAnyTwoAndNeverAcrossDaysOrLevels) {
  CompactionPolicy policy{.min_inputs = 8};
  // One batch of each level on Nov 28, two of level 1 on Nov 29.
  const auto snapshot = SnapshotOf({{kNov30 - 2 * kDayMicros, 0},
                                    {kNov30 - 2 * kDayMicros + 1, 1},
                                    {kNov30 - kDayMicros, 1},
                                    {kNov30 - kDayMicros + 1, 1},
                                    {kNov30, 0}});
  const auto group = PlanCompaction(*snapshot, policy, "2026-11-30");
  ASSERT_TRUE(group.has_value());
  EXPECT_EQ(group->day, "2026-11-29");
  EXPECT_EQ(group->generation, 1);
  EXPECT_EQ(group->inputs.size(), 2u);
}

TEST(PlanCompactionTest, CapsBoundAGroupAndABatchTooBigToPairIsSkipped) {
  CompactionPolicy policy{.min_inputs = 2, .max_rows = 1000};
  // The first batch alone fills the row cap; the next three fit in pairs.
  const auto snapshot = SnapshotOf(
      {{kNov30, 0, 1000}, {kNov30 + 1, 0, 400}, {kNov30 + 2, 0, 400}, {kNov30 + 3, 0, 400}});
  const auto group = PlanCompaction(*snapshot, policy, "2026-11-30");
  ASSERT_TRUE(group.has_value());
  EXPECT_EQ(Ids(*group), (std::vector<std::string>{snapshot->batches()[1]->meta().id,
                                                   snapshot->batches()[2]->meta().id}));
}

TEST(PlanCompactionTest, TheLastGenerationIsNeverAnInput) {
  CompactionPolicy policy{.min_inputs = 2};
  EXPECT_FALSE(PlanCompaction(*SnapshotOf({{kNov30, kMaxGeneration}, {kNov30 + 1, kMaxGeneration}}),
                              policy, "2026-11-30")
                   .has_value());
}

TEST(RetentionTest, DaysGoOnlyWhenWhollyOlderThanTheWindow) {
  const auto snapshot = SnapshotOf(
      {{kNov30 - 3 * kDayMicros}, {kNov30 - 2 * kDayMicros}, {kNov30 - kDayMicros}, {kNov30}});
  // Nov 30 10:00; one day kept: Nov 27 and 28 ended more than a day ago.
  const uint64_t now = static_cast<uint64_t>(kNov30) * 1000;
  EXPECT_EQ(DaysToDrop(*snapshot, {.days = 1}, now),
            (std::vector<std::string>{"2026-11-27", "2026-11-28"}));
  EXPECT_TRUE(DaysToDrop(*snapshot, {.days = 0}, now).empty());
  EXPECT_TRUE(DaysToDrop(*snapshot, {.days = 30}, now).empty());
}

TEST(RetentionTest, SizeCapDropsOldestFirstAndKeepsToday) {
  const auto snapshot = SnapshotOf({{kNov30 - 2 * kDayMicros, 0, 1, 100},
                                    {kNov30 - kDayMicros, 0, 1, 100},
                                    {kNov30, 0, 1, 100}});
  const uint64_t now = static_cast<uint64_t>(kNov30) * 1000;
  EXPECT_EQ(DaysToDrop(*snapshot, {.days = 0, .max_disk_bytes = 250}, now),
            (std::vector<std::string>{"2026-11-28"}));
  EXPECT_EQ(DaysToDrop(*snapshot, {.days = 0, .max_disk_bytes = 1}, now),
            (std::vector<std::string>{"2026-11-28", "2026-11-29"}));
  EXPECT_TRUE(DaysToDrop(*snapshot, {.days = 0, .max_disk_bytes = 300}, now).empty());
}

}  // namespace
}  // namespace strata::storage
