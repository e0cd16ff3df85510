#include "storage/format/object_layout.h"

#include "gtest/gtest.h"
#include "storage/format/layout.h"

namespace strata::storage {
namespace {

TEST(ObjectLayoutTest, BatchObjectKeysAreHivePartitionedByDay) {
  absl::StatusOr<BatchId> id = BatchId::Parse("20250614093015123456000");
  ASSERT_TRUE(id.ok()) << id.status();
  EXPECT_EQ(BatchObjectPrefix(id->Day(), *id),
            "telemetry/days/day=2025-06-14/20250614093015123456000.batch/");
  EXPECT_EQ(BatchObjectKey(id->Day(), *id, kBatchMetaFileName),
            "telemetry/days/day=2025-06-14/20250614093015123456000.batch/meta.json");
  EXPECT_EQ(BatchObjectKey("2025-06-14", *id, kSpansFileName),
            "telemetry/days/day=2025-06-14/20250614093015123456000.batch/spans.parquet");
}

}  // namespace
}  // namespace strata::storage
