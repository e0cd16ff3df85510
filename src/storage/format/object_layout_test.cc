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

TEST(ObjectLayoutTest, ObjectKeysParseBackToTheirDayAndBatch) {
  absl::StatusOr<BatchId> id = BatchId::Parse("20250614093015123456000");
  ASSERT_TRUE(id.ok()) << id.status();
  for (const char* file : {kBatchMetaFileName, kSpansFileName, "parts/7"}) {
    std::optional<BatchObjectName> name = ParseBatchObjectKey(BatchObjectKey(id->Day(), *id, file));
    ASSERT_TRUE(name.has_value()) << file;
    EXPECT_EQ(name->day, "2025-06-14");
    EXPECT_EQ(name->id, *id);
  }
  for (const char* key :
       {"telemetry/days/day=2025-06-14/20250614093015123456000.batch",            // no file
        "telemetry/days/day=2025-06-15/20250614093015123456000.batch/meta.json",  // other day
        "telemetry/days/day=2025-06-14/2025061409301512345600.batch/meta.json",   // short id
        "telemetry/days/day=2025-06-14/20250614093015123456000/meta.json",        // no suffix
        "telemetry/days/2025-06-14/20250614093015123456000.batch/meta.json",      // no day=
        "other/days/day=2025-06-14/20250614093015123456000.batch/meta.json", ""}) {
    EXPECT_FALSE(ParseBatchObjectKey(key).has_value()) << key;
  }
}

}  // namespace
}  // namespace strata::storage
