#include "storage/format/batch_meta.h"

#include <xxhash.h>

#include <cstdlib>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "fmt/format.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "io/fault_injection_file_system.h"
#include "io/posix_file_system.h"

namespace strata::storage {
namespace {

using ::testing::HasSubstr;

// The example of docs/format/meta-json.md as format 1 wrote it (before
// rollups.parquet), on one line: still read.
constexpr char kDocExample[] =
    R"({"format":1,"id":"20250614093015123456000","generation":0,"day":"2025-06-14",)"
    R"("ingest_time":{"min":1749893415123456000,"max":1749893415123456000},)"
    R"("sources":[],)"
    R"("signals":{)"
    R"("spans":{"rows":48210,"file_rows":48210,)"
    R"("event_time":{"min":1749893409001000000,"max":1749893415100200300},)"
    R"("traces":6022,"promotion_misses":{"http.status_code":3}},)"
    R"("logs":{"rows":1200,"file_rows":1201,)"
    R"("event_time":{"min":1749893410000000000,"max":1749893415000000000},)"
    R"("promotion_misses":{}},)"
    R"("metrics":{"rows":0,"file_rows":0,"event_time":null,"promotion_misses":{}}},)"
    R"("files":{)"
    R"("spans.parquet":{"bytes":1873402,"xxh3_64":"9c1e07b2d54a3f10"},)"
    R"("spans.tidx":{"bytes":199832,"xxh3_64":"04aa5d1bc0e37791"},)"
    R"("logs.parquet":{"bytes":40211,"xxh3_64":"e2b06c99a1f04d5e"},)"
    R"("metrics.parquet":null}})"
    "\n";

constexpr char kId[] = "20250614093015123456000";
constexpr uint64_t kStampNanos = 1749893415123456000;

// The example of docs/format/meta-json.md (format 2), on one line: the
// format 1 example with format 2 and rollups.parquet.
constexpr char kRollupsMember[] =
    R"(,"rollups.parquet":{"bytes":21544,"xxh3_64":"51f0a2c7d9e8b613"})";
std::string DocExampleFormat2() {
  std::string json = kDocExample;
  json.replace(json.find(R"("format":1)"), 10, R"("format":2)");
  json.insert(json.find(R"("metrics.parquet":null)") + 22, kRollupsMember);
  return json;
}

BatchMeta ExampleMeta() {
  absl::StatusOr<BatchMeta> meta = ParseBatchMeta(kDocExample, kId);
  EXPECT_TRUE(meta.ok()) << meta.status();
  return *meta;
}

// A compaction output of the same day.
BatchMeta CompactedMeta() {
  BatchMeta meta = ExampleMeta();
  meta.id = "20250615021500000001100";
  meta.generation = 1;
  meta.ingest_time = {kStampNanos - 1000, kStampNanos + 1000};
  meta.sources = {"20250614093015123455000", kId};
  return meta;
}

void ExpectRule(const BatchMeta& meta, int rule, std::string_view member) {
  const absl::Status status = ValidateBatchMeta(meta);
  ASSERT_FALSE(status.ok()) << "rule " << rule << " " << member << " not enforced";
  EXPECT_EQ(status.code(), absl::StatusCode::kDataLoss);
  EXPECT_THAT(std::string(status.message()),
              HasSubstr(fmt::format("meta.json rule {} ({}", rule, member)));
  // The same meta.json, serialised and parsed, fails the same way.
  const absl::StatusOr<BatchMeta> parsed = ParseBatchMeta(SerializeBatchMeta(meta), "dir");
  ASSERT_FALSE(parsed.ok());
  EXPECT_EQ(parsed.status().message(), status.message());
}

TEST(BatchMetaTest, DocExampleParsesAndSerializesByteForByte) {
  const BatchMeta meta = ExampleMeta();
  EXPECT_EQ(meta.id, kId);
  EXPECT_EQ(meta.spans.traces, std::optional<uint64_t>(6022));
  EXPECT_FALSE(meta.logs.traces.has_value());
  EXPECT_EQ(meta.spans.promotion_misses.at("http.status_code"), 3u);
  EXPECT_EQ(meta.spans_parquet->xxh3_64, 0x9c1e07b2d54a3f10u);
  EXPECT_FALSE(meta.metrics_parquet.has_value());
  EXPECT_EQ(SerializeBatchMeta(meta), kDocExample);
}

TEST(BatchMetaTest, RoundTripsAndToleratesWhitespace) {
  for (const BatchMeta& meta : {ExampleMeta(), CompactedMeta()}) {
    ASSERT_TRUE(ValidateBatchMeta(meta).ok()) << ValidateBatchMeta(meta);
    const std::string json = SerializeBatchMeta(meta);
    absl::StatusOr<BatchMeta> parsed = ParseBatchMeta(json, "x");
    ASSERT_TRUE(parsed.ok()) << parsed.status();
    EXPECT_EQ(*parsed, meta);
  }
  std::string spaced;
  for (char c : std::string(kDocExample)) {
    spaced += c;
    if (c == ',' || c == ':' || c == '{') spaced += " \n\t";
  }
  absl::StatusOr<BatchMeta> parsed = ParseBatchMeta(spaced, "x");
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_EQ(*parsed, ExampleMeta());
}

TEST(BatchMetaTest, EscapedPromotionKeysRoundTrip) {
  BatchMeta meta = ExampleMeta();
  meta.spans.promotion_misses = {{"a\"b\\c\n\x01", 1}, {"\xc3\xa9t\xc3\xa9", 2}};
  absl::StatusOr<BatchMeta> parsed = ParseBatchMeta(SerializeBatchMeta(meta), "x");
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_EQ(*parsed, meta);
}

// Rule 1: each malformation of the document, with the member it names.
TEST(BatchMetaTest, Rule1MalformedDocuments) {
  const std::string example = kDocExample;
  auto replace = [&](std::string_view from, std::string_view to) {
    std::string out = example;
    const size_t at = out.find(from);
    EXPECT_NE(at, std::string::npos) << from;
    return out.replace(at, from.size(), to);
  };
  struct Case {
    std::string json;
    std::string member;
  };
  const std::vector<Case> cases = {
      {"", "(document)"},
      {"{", "(document)"},
      {example + "{}", "(document)"},
      {"[]", "(document)"},  // not an object: the root has no members
      {"\"x\"", "(document)"},
      {replace("\"2025-06-14\"", "\"2025-06-14\xff\""), "(document)"},  // invalid UTF-8
      {replace("\"format\":1,", ""), "format"},
      {replace("\"format\":1,", "\"format\":1,\"format\":1,"), "\"format\""},
      {replace("\"format\":1,", "\"format\":1,\"extra\":0,"), "\"extra\""},
      {replace("\"format\":1", "\"format\":1.0"), "format"},
      {replace("\"format\":1", "\"format\":\"1\""), "format"},
      {replace("\"format\":1", "\"format\":-1"), "format"},
      {replace("\"id\":\"20250614093015123456000\"", "\"id\":1"), "id"},
      {replace("\"generation\":0", "\"generation\":true"), "generation"},
      {replace("\"day\":\"2025-06-14\"", "\"day\":null"), "day"},
      {replace("\"sources\":[]", "\"sources\":{}"), "sources"},
      {replace("\"sources\":[]", "\"sources\":[1]"), "sources[]"},
      {replace("\"ingest_time\":{\"min\":1749893415123456000,", "\"ingest_time\":{"),
       "ingest_time.min"},
      {replace("\"max\":1749893415123456000}", "\"max\":1749893415123456000,\"avg\":1}"),
       "\"ingest_time.avg\""},
      {replace("\"rows\":48210,", "\"rows\":48210.5,"), "signals.spans.rows"},
      {replace("\"rows\":48210,", "\"rows\":18446744073709551616,"), "(document)"},
      {replace(
           ",\"metrics\":{\"rows\":0,\"file_rows\":0,\"event_time\":null,\"promotion_misses\":{}}",
           ""),
       "signals.metrics"},
      {replace("\"event_time\":null", "\"event_time\":0"), "signals.metrics.event_time"},
      {replace("\"promotion_misses\":{\"http.status_code\":3}",
               "\"promotion_misses\":{\"http.status_code\":3,\"http.status_code\":4}"),
       "\"signals.spans.promotion_misses.http.status_code\""},
      {replace("\"http.status_code\":3", "\"http.status_code\":\"3\""),
       "\"signals.spans.promotion_misses.http.status_code\""},
      {replace("\"metrics.parquet\":null", "\"metrics.parquet\":null,\"x.parquet\":null"),
       "\"files.x.parquet\""},
      {replace("\"metrics.parquet\":null", "\"metrics.parquet\":{}"),
       "files.metrics.parquet.bytes"},
      {replace("9c1e07b2d54a3f10", "9C1E07B2D54A3F10"), "files.spans.parquet.xxh3_64"},
      {replace("9c1e07b2d54a3f10", "9c1e07b2d54a3f1"), "files.spans.parquet.xxh3_64"},
      {replace("9c1e07b2d54a3f10", "0x1e07b2d54a3f10"), "files.spans.parquet.xxh3_64"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.json);
    const absl::StatusOr<BatchMeta> meta = ParseBatchMeta(c.json, "20250614093015123456000");
    ASSERT_FALSE(meta.ok());
    EXPECT_EQ(meta.status().code(), absl::StatusCode::kDataLoss);
    EXPECT_THAT(std::string(meta.status().message()),
                HasSubstr(fmt::format("batch {}: meta.json rule 1 ({}", kId, c.member)));
  }
}

TEST(BatchMetaTest, ErrorsNameTheDirectoryUntilTheIdParses) {
  const absl::StatusOr<BatchMeta> meta = ParseBatchMeta("{", "the-dir");
  EXPECT_THAT(std::string(meta.status().message()), HasSubstr("batch the-dir: meta.json rule 1"));
}

TEST(BatchMetaTest, Rule2Format) {
  BatchMeta meta = ExampleMeta();
  meta.format = kBatchMetaFormat + 1;
  ExpectRule(meta, 2, "format");
  meta.format = 0;
  ExpectRule(meta, 2, "format");
}

// Format 2: rollups.parquet, present exactly when a signal has data rows.
TEST(BatchMetaTest, Format2ListsRollupsWhenThereAreRows) {
  const std::string example = DocExampleFormat2();
  absl::StatusOr<BatchMeta> meta = ParseBatchMeta(example, kId);
  ASSERT_TRUE(meta.ok()) << meta.status();
  EXPECT_EQ(meta->format, 2u);
  ASSERT_TRUE(meta->rollups_parquet.has_value());
  EXPECT_EQ(meta->rollups_parquet->bytes, 21544u);
  EXPECT_EQ(SerializeBatchMeta(*meta), example);
  // The doc's example as format 1 is the same batch without the file.
  BatchMeta format1 = *meta;
  format1.format = 1;
  format1.rollups_parquet.reset();
  EXPECT_EQ(format1, ExampleMeta());

  BatchMeta missing = *meta;
  missing.rollups_parquet.reset();
  ExpectRule(missing, 8, "files.rollups.parquet");
  // (Format 1 serialises without the member, so only the struct can hold
  // it; the parser's side is below.)
  BatchMeta in_format1 = ExampleMeta();
  in_format1.rollups_parquet = FileMeta{.bytes = 1, .xxh3_64 = 2};
  EXPECT_THAT(std::string(ValidateBatchMeta(in_format1).message()),
              HasSubstr("rule 8 (files.rollups.parquet): present in a format 1 meta.json"));
  // No data rows (placeholders only): no rollups.
  BatchMeta empty = *meta;
  empty.spans.rows = 0;
  empty.spans.traces = 0;
  empty.spans.promotion_misses.clear();
  empty.logs.rows = 0;
  ExpectRule(empty, 8, "files.rollups.parquet");
  empty.rollups_parquet.reset();
  EXPECT_TRUE(ValidateBatchMeta(empty).ok());

  // The member itself: required in format 2, unknown in format 1.
  std::string json = example;
  const std::string member = kRollupsMember;
  json.erase(json.find(member), member.size());
  absl::StatusOr<BatchMeta> parsed = ParseBatchMeta(json, kId);
  EXPECT_THAT(std::string(parsed.status().message()),
              HasSubstr("rule 1 (files.rollups.parquet): member missing"));
  json = kDocExample;
  json.insert(json.find(R"("metrics.parquet":null)") + 22, member);
  parsed = ParseBatchMeta(json, kId);
  EXPECT_THAT(std::string(parsed.status().message()),
              HasSubstr("rule 1 (files.rollups.parquet): member not defined by format 1"));
}

TEST(BatchMetaTest, Rule3Id) {
  BatchMeta meta = ExampleMeta();
  meta.id = "20250614093015123456A00";
  ExpectRule(meta, 3, "id");
  meta.id = "../../x";
  ExpectRule(meta, 3, "id");
  meta = ExampleMeta();
  meta.generation = 1;
  ExpectRule(meta, 3, "generation");
  meta = CompactedMeta();
  meta.generation = 2;
  ExpectRule(meta, 3, "generation");
}

TEST(BatchMetaTest, Rule4Day) {
  BatchMeta meta = ExampleMeta();
  meta.day = "2025-06-31";
  ExpectRule(meta, 4, "day");
  meta.day = "20250614";
  ExpectRule(meta, 4, "day");
}

TEST(BatchMetaTest, Rule5IngestTime) {
  BatchMeta meta = CompactedMeta();
  meta.ingest_time = {kStampNanos + 1, kStampNanos};
  ExpectRule(meta, 5, "ingest_time");
  meta.ingest_time = {1749859200000000000 - 1, kStampNanos};  // before the day
  ExpectRule(meta, 5, "ingest_time");
  meta.ingest_time = {kStampNanos, 1749945600000000000};  // first instant of the next day
  ExpectRule(meta, 5, "ingest_time");
  meta.ingest_time = {1749859200000000000, 1749945600000000000 - 1};  // the whole day: fine
  EXPECT_TRUE(ValidateBatchMeta(meta).ok());
  meta = ExampleMeta();
  meta.ingest_time.min = kStampNanos - 1;
  ExpectRule(meta, 5, "ingest_time");
  meta = ExampleMeta();
  meta.ingest_time.max = kStampNanos + 1;
  ExpectRule(meta, 5, "ingest_time");
}

TEST(BatchMetaTest, Rule6Sources) {
  BatchMeta meta = ExampleMeta();
  meta.sources = {kId};
  ExpectRule(meta, 6, "sources");
  meta = CompactedMeta();
  meta.sources.clear();
  ExpectRule(meta, 6, "sources");
  meta = CompactedMeta();
  std::swap(meta.sources[0], meta.sources[1]);
  ExpectRule(meta, 6, "sources");
  meta = CompactedMeta();
  meta.sources[0] = meta.sources[1];
  ExpectRule(meta, 6, "sources");
  meta = CompactedMeta();
  meta.sources[0] = "2025061409301512345500/";
  ExpectRule(meta, 6, "sources");
}

TEST(BatchMetaTest, Rule7Signals) {
  std::vector<std::pair<std::function<void(BatchMeta&)>, std::string>> cases = {
      {[](BatchMeta& m) { m.logs.rows = m.logs.file_rows + 1; }, "signals.logs.rows"},
      {[](BatchMeta& m) { m.spans.event_time.reset(); }, "signals.spans.event_time"},
      {[](BatchMeta& m) {
         m.metrics.event_time = NanosRange{1, 2};
       },
       "signals.metrics.event_time"},
      {[](BatchMeta& m) {
         m.logs.event_time = NanosRange{3, 2};
       },
       "signals.logs.event_time"},
      {[](BatchMeta& m) { m.spans.traces.reset(); }, "signals.spans.traces"},
      {[](BatchMeta& m) { m.logs.traces = 0; }, "signals.logs.traces"},
      {[](BatchMeta& m) { m.metrics.traces = 0; }, "signals.metrics.traces"},
      {[](BatchMeta& m) { m.spans.traces = m.spans.rows + 1; }, "signals.spans.traces"},
      {[](BatchMeta& m) { m.spans.traces = 0; }, "signals.spans.traces"},
      {[](BatchMeta& m) { m.spans.promotion_misses["http.route"] = m.spans.rows + 1; },
       "signals.spans.promotion_misses"},
      {[](BatchMeta& m) { m.logs.promotion_misses["x"] = 0; }, "signals.logs.promotion_misses"},
      {[](BatchMeta& m) { m.metrics.promotion_misses["x"] = 1; },
       "signals.metrics.promotion_misses"},
  };
  for (const auto& [mutate, member] : cases) {
    SCOPED_TRACE(member);
    BatchMeta meta = ExampleMeta();
    mutate(meta);
    ExpectRule(meta, 7, member);
  }
  // The boundaries themselves are fine.
  BatchMeta meta = ExampleMeta();
  meta.spans.traces = meta.spans.rows;
  meta.spans.promotion_misses["http.route"] = meta.spans.rows;
  meta.logs.rows = meta.logs.file_rows;
  meta.logs.event_time = NanosRange{5, 5};
  EXPECT_TRUE(ValidateBatchMeta(meta).ok()) << ValidateBatchMeta(meta);
}

TEST(BatchMetaTest, Rule8FilePresence) {
  BatchMeta meta = ExampleMeta();
  meta.logs_parquet.reset();
  ExpectRule(meta, 8, "files.logs.parquet");
  meta = ExampleMeta();
  meta.metrics_parquet = FileMeta{10, 1};
  ExpectRule(meta, 8, "files.metrics.parquet");
  meta = ExampleMeta();
  meta.spans_tidx.reset();
  ExpectRule(meta, 8, "files.spans.tidx");
  // Spans with no rows: both spans files must be absent.
  meta = ExampleMeta();
  meta.spans = SignalMeta{0, 0, std::nullopt, 0, {}};
  meta.spans_parquet.reset();
  ExpectRule(meta, 8, "files.spans.tidx");
  meta.spans_tidx.reset();
  EXPECT_TRUE(ValidateBatchMeta(meta).ok()) << ValidateBatchMeta(meta);
}

TEST(BatchMetaTest, LocationRules3And4) {
  const BatchMeta meta = ExampleMeta();
  EXPECT_TRUE(CheckBatchMetaLocation(meta, kId, "2025-06-14").ok());
  absl::Status status = CheckBatchMetaLocation(meta, "20250614093015123456001", "2025-06-14");
  EXPECT_EQ(status.code(), absl::StatusCode::kDataLoss);
  EXPECT_THAT(std::string(status.message()), HasSubstr("meta.json rule 3 (id)"));
  status = CheckBatchMetaLocation(meta, kId, "2025-06-15");
  EXPECT_EQ(status.code(), absl::StatusCode::kDataLoss);
  EXPECT_THAT(std::string(status.message()), HasSubstr("meta.json rule 4 (day)"));
}

TEST(BatchMetaTest, Xxh3HexRoundTrips) {
  for (uint64_t v : {uint64_t{0}, uint64_t{1}, uint64_t{0x9c1e07b2d54a3f10}, ~uint64_t{0}}) {
    EXPECT_EQ(ParseXxh3_64(FormatXxh3_64(v)), v);
    EXPECT_EQ(FormatXxh3_64(v).size(), 16u);
  }
  EXPECT_EQ(FormatXxh3_64(0x04aa5d1bc0e37791), "04aa5d1bc0e37791");
  EXPECT_FALSE(ParseXxh3_64("04aa5d1bc0e3779").has_value());
  EXPECT_FALSE(ParseXxh3_64("04aa5d1bc0e37791 ").has_value());
  EXPECT_FALSE(ParseXxh3_64("04aa5d1bc0e3779g").has_value());
}

// The fuzz seeds are valid meta.json files, so fuzzing starts from inputs
// that reach every rule.
TEST(BatchMetaTest, FuzzSeedsAreAccepted) {
  const char* root = std::getenv("TEST_SOURCE_DIR");
  const std::string dir =
      fmt::format("{}/fuzz/corpus/batch_meta", root != nullptr ? root : STRATA_SOURCE_ROOT);
  PosixFileSystem fs;
  absl::StatusOr<std::vector<std::string>> names = fs.ListDir(dir);
  ASSERT_TRUE(names.ok()) << names.status();
  ASSERT_FALSE(names->empty());
  for (const std::string& name : *names) {
    absl::StatusOr<std::string> json = fs.ReadFile(fmt::format("{}/{}", dir, name));
    ASSERT_TRUE(json.ok()) << json.status();
    absl::StatusOr<BatchMeta> meta = ParseBatchMeta(*json, name);
    ASSERT_TRUE(meta.ok()) << name << ": " << meta.status();
    absl::StatusOr<BatchMeta> again = ParseBatchMeta(SerializeBatchMeta(*meta), name);
    ASSERT_TRUE(again.ok()) << again.status();
    EXPECT_EQ(*again, *meta) << name;
  }
}

class BatchFilesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    std::random_device random;
    dir_ = fmt::format("{}strata_storage_{}_{:x}", ::testing::TempDir(), info->name(), random());
    ASSERT_TRUE(fs_.CreateDir(dir_).ok());
  }
  void TearDown() override { EXPECT_TRUE(fs_.RemoveAll(dir_).ok()); }

  // Writes `content` as `name` and declares it in `file`.
  void Put(std::string_view name, const std::string& content, std::optional<FileMeta>& file) {
    ASSERT_TRUE(WriteFile(fs_, fmt::format("{}/{}", dir_, name), content).ok());
    file = FileMeta{content.size(), XXH3_64bits(content.data(), content.size())};
  }

  PosixFileSystem fs_;
  std::string dir_;
};

TEST_F(BatchFilesTest, ChecksumIsStreamedXxh3OfTheWholeFile) {
  std::mt19937_64 rng(7);
  std::string content(200 * 1024 + 17, '\0');
  for (char& c : content) c = static_cast<char>(rng());
  const std::string path = dir_ + "/big";
  ASSERT_TRUE(WriteFile(fs_, path, content).ok());
  absl::StatusOr<FileChecksum> sum = ChecksumFile(fs_, path);
  ASSERT_TRUE(sum.ok()) << sum.status();
  EXPECT_EQ(sum->bytes, content.size());
  EXPECT_EQ(sum->xxh3_64, XXH3_64bits(content.data(), content.size()));

  ASSERT_TRUE(WriteFile(fs_, path, "").ok());
  sum = ChecksumFile(fs_, path);
  ASSERT_TRUE(sum.ok());
  EXPECT_EQ(sum->bytes, 0u);
  EXPECT_EQ(sum->xxh3_64, XXH3_64bits(nullptr, 0));
  EXPECT_TRUE(absl::IsNotFound(ChecksumFile(fs_, dir_ + "/none").status()));
}

TEST_F(BatchFilesTest, Rule9Files) {
  BatchMeta meta = ExampleMeta();
  Put("spans.parquet", "spans bytes", meta.spans_parquet);
  Put("spans.tidx", "index", meta.spans_tidx);
  Put("logs.parquet", "logs", meta.logs_parquet);
  ASSERT_TRUE(WriteFile(fs_, dir_ + "/meta.json", SerializeBatchMeta(meta)).ok());
  ASSERT_TRUE(ValidateBatchMeta(meta).ok());
  EXPECT_TRUE(CheckBatchFiles(fs_, dir_, meta).ok()) << CheckBatchFiles(fs_, dir_, meta);

  auto expect_rule9 = [&](const BatchMeta& m, std::string_view member, std::string_view what) {
    const absl::Status status = CheckBatchFiles(fs_, dir_, m);
    EXPECT_EQ(status.code(), absl::StatusCode::kDataLoss) << status;
    EXPECT_THAT(std::string(status.message()),
                HasSubstr(fmt::format("batch {}: meta.json rule 9 ({})", kId, member)));
    EXPECT_THAT(std::string(status.message()), HasSubstr(what));
  };
  BatchMeta wrong = meta;
  wrong.logs_parquet->bytes += 1;
  expect_rule9(wrong, "files.logs.parquet", "is 4 bytes, meta.json says 5");
  wrong = meta;
  wrong.spans_tidx->xxh3_64 ^= 1;
  expect_rule9(
      wrong, "files.spans.tidx",
      fmt::format("xxh3-64 is {}, meta.json says {}", FormatXxh3_64(meta.spans_tidx->xxh3_64),
                  FormatXxh3_64(wrong.spans_tidx->xxh3_64)));
  // Same size, different bytes.
  ASSERT_TRUE(WriteFile(fs_, dir_ + "/logs.parquet", "LOGS").ok());
  expect_rule9(meta, "files.logs.parquet", "xxh3-64 is");
  ASSERT_TRUE(WriteFile(fs_, dir_ + "/logs.parquet", "logs").ok());
  // A declared file missing.
  ASSERT_TRUE(fs_.RemoveFile(dir_ + "/spans.tidx").ok());
  expect_rule9(meta, "files.spans.tidx", "is missing");
  Put("spans.tidx", "index", meta.spans_tidx);
  // An undeclared file: unknown name, or a known one declared null.
  ASSERT_TRUE(WriteFile(fs_, dir_ + "/metrics.parquet", "m").ok());
  expect_rule9(meta, "files", "\"metrics.parquet\"");
  ASSERT_TRUE(fs_.RemoveFile(dir_ + "/metrics.parquet").ok());
  ASSERT_TRUE(WriteFile(fs_, dir_ + "/spans.parquet.tmp", "m").ok());
  expect_rule9(meta, "files", "\"spans.parquet.tmp\"");
  ASSERT_TRUE(fs_.RemoveFile(dir_ + "/spans.parquet.tmp").ok());
  EXPECT_TRUE(CheckBatchFiles(fs_, dir_, meta).ok());
}

TEST_F(BatchFilesTest, IoErrorsKeepTheirCodeAndNameTheBatch) {
  BatchMeta meta = ExampleMeta();
  Put("spans.parquet", "spans bytes", meta.spans_parquet);
  Put("spans.tidx", "index", meta.spans_tidx);
  Put("logs.parquet", "logs", meta.logs_parquet);
  FaultInjectionFileSystem faulty(&fs_, 3);
  faulty.InjectFaults(IoOperation::kRead, 1, EIO);
  const absl::Status status = CheckBatchFiles(faulty, dir_, meta);
  EXPECT_EQ(status.code(), absl::StatusCode::kUnavailable) << status;
  EXPECT_THAT(std::string(status.message()), HasSubstr(kId));
}

}  // namespace
}  // namespace strata::storage
