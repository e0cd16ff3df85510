#include "storage/format/batch_id.h"

#include <algorithm>
#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace strata::storage {
namespace {

TEST(BatchIdTest, LayoutExamplesParse) {
  absl::StatusOr<BatchId> id = BatchId::Parse("20250614093015123456000");
  ASSERT_TRUE(id.ok()) << id.status();
  EXPECT_EQ(id->stamp_micros(), int64_t{1749893415123456});
  EXPECT_EQ(id->stamp_nanos(), uint64_t{1749893415123456000});
  EXPECT_EQ(id->generation(), 0);
  EXPECT_EQ(id->node(), 0);
  EXPECT_EQ(id->Day(), "2025-06-14");

  absl::StatusOr<BatchId> compacted = BatchId::Parse("20250615021500000001100");
  ASSERT_TRUE(compacted.ok()) << compacted.status();
  EXPECT_EQ(compacted->generation(), 1);
  EXPECT_EQ(compacted->node(), 0);
  EXPECT_EQ(compacted->Day(), "2025-06-15");
}

TEST(BatchIdTest, NodeFieldsParseAsInIds) {
  EXPECT_EQ(*ParseBatchIdNode("00"), 0);
  EXPECT_EQ(*ParseBatchIdNode("0z"), 35);
  EXPECT_EQ(*ParseBatchIdNode("10"), 36);
  EXPECT_EQ(*ParseBatchIdNode("zz"), kMaxNode);
  for (int node : {1, 71, 700, kMaxNode}) {
    const std::string id = BatchId::Make(1'750'000'000'000'000, 0, node)->ToString();
    EXPECT_EQ(*ParseBatchIdNode(id.substr(21)), node) << id;
  }
  for (const char* bad : {"", "0", "000", "A0", "-1", "0 ", "z!"}) {
    absl::StatusOr<int> parsed = ParseBatchIdNode(bad);
    EXPECT_TRUE(absl::IsInvalidArgument(parsed.status())) << bad;
  }
}

TEST(BatchIdTest, ValidIdsRoundTrip) {
  for (const char* text :
       {"19700101000000000000000", "22611231235959999999zzz", "20240229120000000001a3k",
        "20000229000000000000z00", "20251231235959999999009", "20250614093015123456100"}) {
    absl::StatusOr<BatchId> id = BatchId::Parse(text);
    ASSERT_TRUE(id.ok()) << text << ": " << id.status();
    EXPECT_EQ(id->ToString(), text);
    EXPECT_TRUE(ValidateBatchId(text).ok());
    absl::StatusOr<BatchId> again = BatchId::Make(id->stamp_micros(), id->generation(), id->node());
    ASSERT_TRUE(again.ok());
    EXPECT_EQ(*again, *id);
  }
  absl::StatusOr<BatchId> last = BatchId::Parse("22611231235959999999zzz");
  ASSERT_TRUE(last.ok());
  EXPECT_EQ(last->stamp_micros(), kMaxStampMicros);
  EXPECT_EQ(last->generation(), kMaxGeneration);
  EXPECT_EQ(last->node(), kMaxNode);
}

TEST(BatchIdTest, MalformedIdsAreRejectedNamingTheId) {
  const std::vector<std::string> bad = {
      "",                          // empty
      "2025061409301512345600",    // 22 characters
      "202506140930151234560000",  // 24 characters
      "20250614093015123456A00",   // upper-case generation
      "2025061409301512345600Z",   // upper-case node
      "20250614093015123456-00",   // separator
      "2025061409301512345a000",   // letter in the stamp
      "20250614093015123456.00",   // dot
      "..",                        // path tricks
      "../../../../../../etc/pa",
      "2025061409301512345/000",
      "20250614093015123456/..",
      "2025061409301512345\\000",
      std::string("20250614093015123456\0"
                  "00",
                  23),            // NUL
      "20250614 93015123456000",  // space
      "20251314093015123456000",  // month 13
      "20250014093015123456000",  // month 00
      "20250600093015123456000",  // day 00
      "20250631093015123456000",  // June 31
      "20250229093015123456000",  // Feb 29 in a common year
      "21000229000000000000000",  // 2100 is not a leap year
      "20250614243015123456000",  // hour 24
      "20250614096015123456000",  // minute 60
      "20250614093060123456000",  // leap second
      "19691231235959999999000",  // before 1970
      "22620101000000000000000",  // after 2261
      "\xc3\xa9"
      "250614093015123456000",  // non-ASCII
  };
  for (const std::string& text : bad) {
    const absl::Status status = ValidateBatchId(text);
    EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << QuoteForError(text);
    EXPECT_NE(std::string(status.message()).find(QuoteForError(text)), std::string::npos) << status;
    EXPECT_FALSE(BatchId::Parse(text).ok());
  }
}

TEST(BatchIdTest, ErrorQuotingEscapesAndTruncates) {
  EXPECT_EQ(QuoteForError("a\nb\"c"), "\"a\\x0ab\\x22c\"");
  const std::string long_text(100, 'x');
  EXPECT_EQ(QuoteForError(long_text), "\"" + std::string(64, 'x') + "\" (first 64 of 100 bytes)");
}

TEST(BatchIdTest, MakeRejectsOutOfRangeParts) {
  EXPECT_FALSE(BatchId::Make(-1, 0).ok());
  EXPECT_FALSE(BatchId::Make(kMaxStampMicros + 1, 0).ok());
  EXPECT_FALSE(BatchId::Make(0, -1).ok());
  EXPECT_FALSE(BatchId::Make(0, kMaxGeneration + 1).ok());
  EXPECT_FALSE(BatchId::Make(0, 0, kMaxNode + 1).ok());
  EXPECT_FALSE(BatchId::Make(0, 0, -1).ok());
}

TEST(BatchIdTest, OrderingMatchesStringOrder) {
  const std::vector<std::string> texts = {
      "20250614093015123456000", "20250614093015123456001", "2025061409301512345600a",
      "20250614093015123456010", "20250614093015123456100", "20250614093015123456a00",
      "20250614093015123457000", "20250615000000000000000", "20260101000000000000000",
      "19700101000000000000000", "20250614093015123455zzz"};
  std::vector<BatchId> ids;
  for (const std::string& text : texts) ids.push_back(*BatchId::Parse(text));
  for (size_t i = 0; i < ids.size(); ++i) {
    for (size_t j = 0; j < ids.size(); ++j) {
      EXPECT_EQ(ids[i] < ids[j], texts[i] < texts[j]) << texts[i] << " vs " << texts[j];
      EXPECT_EQ(ids[i] == ids[j], texts[i] == texts[j]);
    }
  }
}

TEST(BatchIdTest, DaysValidateAndBound) {
  absl::StatusOr<DayBoundsNanos> day = DayBounds("2025-06-14");
  ASSERT_TRUE(day.ok()) << day.status();
  EXPECT_EQ(day->first, uint64_t{1749859200} * 1000000000);
  EXPECT_EQ(day->end, uint64_t{1749945600} * 1000000000);
  EXPECT_EQ(DayOfNanos(day->first), "2025-06-14");
  EXPECT_EQ(DayOfNanos(day->end - 1), "2025-06-14");
  EXPECT_EQ(DayOfNanos(day->end), "2025-06-15");
  EXPECT_TRUE(ValidateDay("2024-02-29").ok());
  EXPECT_TRUE(ValidateDay("1970-01-01").ok());
  EXPECT_TRUE(ValidateDay("2261-12-31").ok());
  for (const char* bad :
       {"", "2025-6-14", "2025-06-14 ", "2025/06/14", "2025-06-31", "2025-02-29", "1969-12-31",
        "2262-01-01", "2025-13-01", "..", "2025-06-1a", "+025-06-14"}) {
    const absl::Status status = ValidateDay(bad);
    EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << bad;
    EXPECT_NE(std::string(status.message()).find(QuoteForError(bad)), std::string::npos);
  }
}

TEST(BatchIdIssuerTest, IssuesStrictlyIncreasingIdsWhenTheClockStepsBack) {
  std::vector<int64_t> readings = {1749893415123456, 1749893415123456, 1749893415000000, 1000,
                                   1749893415123460, 1749893415123459, 1749893500000000};
  size_t next = 0;
  BatchIdIssuer issuer([&] { return readings[next++]; });
  std::vector<std::string> issued;
  for (size_t i = 0; i < readings.size(); ++i) {
    absl::StatusOr<BatchId> id = issuer.Issue(0);
    ASSERT_TRUE(id.ok()) << id.status();
    issued.push_back(id->ToString());
  }
  EXPECT_EQ(issued[0], "20250614093015123456000");
  EXPECT_EQ(issued[1], "20250614093015123457000");  // same reading: +1 µs
  EXPECT_EQ(issued[2], "20250614093015123458000");  // clock went back
  EXPECT_EQ(issued[3], "20250614093015123459000");  // clock went far back
  EXPECT_EQ(issued[4], "20250614093015123460000");  // clock caught up
  EXPECT_EQ(issued[5], "20250614093015123461000");
  EXPECT_EQ(issued[6], "20250614093140000000000");  // clock ahead: its reading
  EXPECT_TRUE(std::is_sorted(issued.begin(), issued.end()));
  EXPECT_EQ(std::adjacent_find(issued.begin(), issued.end()), issued.end());
}

TEST(BatchIdIssuerTest, StartsAfterObservedIds) {
  BatchIdIssuer issuer([] { return int64_t{1749893415000000}; }, 37);
  issuer.Observe(*BatchId::Parse("20250614093015123456300"));
  issuer.Observe(*BatchId::Parse("20250614093014000000000"));  // older: no effect
  absl::StatusOr<BatchId> id = issuer.Issue(2);
  ASSERT_TRUE(id.ok()) << id.status();
  EXPECT_EQ(id->ToString(), "20250614093015123457211");
}

TEST(BatchIdIssuerTest, RefusesStampsOutsideTheGrammarAndBadGenerations) {
  int64_t now = kMaxStampMicros;
  BatchIdIssuer issuer([&] { return now; });
  ASSERT_TRUE(issuer.Issue(0).ok());
  EXPECT_EQ(issuer.Issue(0).status().code(), absl::StatusCode::kFailedPrecondition);
  now = 0;
  EXPECT_EQ(issuer.Issue(0).status().code(), absl::StatusCode::kFailedPrecondition);

  BatchIdIssuer fresh([] { return int64_t{-5}; });  // clock before 1970
  absl::StatusOr<BatchId> first = fresh.Issue(0);
  ASSERT_TRUE(first.ok());
  EXPECT_EQ(first->stamp_micros(), 0);
  EXPECT_EQ(fresh.Issue(kMaxGeneration + 1).status().code(), absl::StatusCode::kInvalidArgument);
  absl::StatusOr<BatchId> after_bad = fresh.Issue(0);
  ASSERT_TRUE(after_bad.ok());
  EXPECT_EQ(after_bad->stamp_micros(), 1);
}

}  // namespace
}  // namespace strata::storage
