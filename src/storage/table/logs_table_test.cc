// logs.parquet: hand-built batches covering every field and every body type
// through WriteLogsTable -> ReadLogsTable (compared as OTLP protobuf bytes:
// the round trip is exact, order included), DuckDB reading every column as
// strata's reader does, the meta.json member, promotion, and corrupt files.

#include "storage/table/logs_table.h"

#include <limits>
#include <string>
#include <vector>

#include "fmt/format.h"
#include "gtest/gtest.h"
#include "otlp/decode.h"
#include "otlp/encode.h"
#include "storage/testing/table_test_batches.h"
#include "storage/testing/table_testing.h"

namespace strata::storage {
namespace {

using table_testing::BatchBuilder;
using table_testing::MakeSpanId;
using table_testing::MakeTraceId;

constexpr char kBatchId[] = "20250614093015123456000";

void AddRecord(otlp::LogBatch* b, BatchBuilder& build, uint32_t scope, uint64_t n,
               otlp::ValueRow body, std::vector<otlp::AttributeRow> attributes) {
  otlp::LogRecordRow row;
  row.scope = scope;
  row.time_unix_nano = n % 4 == 0 ? 0 : 1'700'000'000'000'000'000ULL + n * 1000;
  row.observed_time_unix_nano = n % 3 == 0 ? 0 : 1'700'000'000'500'000'000ULL + n;
  row.severity_number = static_cast<int32_t>(n % 25) - (n % 7 == 0 ? 40 : 0);
  row.severity_text = build.S(n % 2 ? "ERROR" : "");
  row.body = body;
  row.attributes = BatchBuilder::Attributes(&b->log_attributes, attributes);
  row.dropped_attributes_count = static_cast<uint32_t>(n % 5);
  row.flags = static_cast<uint32_t>(n % 2);
  if (n % 3 != 1) {
    row.trace_id = MakeTraceId(n, n * 3);
    row.has_trace_id = 1;
  }
  if (n % 3 == 0) {
    row.span_id = MakeSpanId(n + 9);
    row.has_span_id = 1;
  }
  row.event_name = build.S(n % 5 == 0 ? "browser.click" : "");
  b->logs.Append(row);
}

otlp::LogBatch FullBatch(const std::string& salt) {
  otlp::LogBatch b;
  BatchBuilder build(&b);
  const uint32_t r0 = build.Resource(build.EveryValueType("r" + salt), "https://schema/1", 2, 2);
  build.Resource({}, "", 0, 0);
  const uint32_t r1 = build.Resource(
      {{build.S("service.name"), BatchBuilder::Str(build.S("api"))},
       {build.S("deployment.environment.name"), BatchBuilder::Str(build.S("staging"))},
       {build.S("deployment.environment"), BatchBuilder::Str(build.S("ignored"))}},
      "", 0, 0);
  const uint32_t s0 = build.Scope(r0, "logger", "1.0", build.Many(3, "sc."), 4, "url");
  build.Scope(r0, "unused", "", {}, 0, "");
  const uint32_t s1 = build.Scope(r1, "", "", {}, 0, "");
  const otlp::ValueRow array_body =
      build.Array({BatchBuilder::Str(build.S("x")), BatchBuilder::Int(3), BatchBuilder::Empty()});
  const otlp::ValueRow kv_body =
      build.KvList({{build.S("msg"), BatchBuilder::Str(build.S("structured"))},
                    {build.S("n"), BatchBuilder::DoubleBits(0x7ff4000000000042ULL)}});
  const std::vector<otlp::ValueRow> bodies = {
      BatchBuilder::Str(build.S("GET /api/orders 200 \xe2\x9c\x93 " + salt)),
      BatchBuilder::Str(build.S("")),
      BatchBuilder::Str(build.S(std::string(100000, 'x'))),
      BatchBuilder::Int(std::numeric_limits<int64_t>::min()),
      BatchBuilder::DoubleBits(0xfff8000000000007ULL),
      BatchBuilder::Double(-0.0),
      BatchBuilder::Bool(true),
      BatchBuilder::Bool(false),
      BatchBuilder::Bytes(build.S(std::string("\0\x01\xfe", 3))),
      BatchBuilder::Empty(),
      array_body,
      kv_body,
  };
  for (uint64_t n = 0; n < bodies.size(); ++n) {
    std::vector<otlp::AttributeRow> attributes;
    if (n == 0) attributes = build.EveryValueType("log" + salt);
    if (n == 1) {
      attributes = {{build.S("exception.type"), BatchBuilder::Str(build.S("ValueError"))},
                    {build.S("exception.message"), BatchBuilder::Bool(true)}};
    }
    if (n == 2) attributes = build.Many(60, "m.");
    AddRecord(&b, build, n % 2 ? s1 : s0, n, bodies[n], attributes);
  }
  return b;
}

otlp::LogBatch ReadBack(const std::string& file) {
  parquet::StringSource source(file);
  absl::StatusOr<otlp::LogBatch> batch = ReadLogsTable(&source, kBatchId, "logs.parquet");
  EXPECT_TRUE(batch.ok()) << batch.status();
  return batch.ok() ? std::move(*batch) : otlp::LogBatch();
}

TEST(LogsTableTest, EveryFieldRoundTripsExactly) {
  const otlp::LogBatch input = FullBatch("a");
  ASSERT_TRUE(otlp::ValidateBatch(input).ok()) << otlp::ValidateBatch(input);
  const otlp::LogBatch* inputs[] = {&input};
  absl::StatusOr<LogsTable> table = WriteLogsTable(inputs, kBatchId);
  ASSERT_TRUE(table.ok()) << table.status();
  const otlp::LogBatch back = ReadBack(table->file);
  EXPECT_EQ(otlp::EncodeLogsProto(back), otlp::EncodeLogsProto(input));
  EXPECT_EQ(back.logs.size(), 12u);

  std::unique_ptr<query::DuckDbEngine> db = table_testing::OpenDuckDb();
  ASSERT_NE(db, nullptr);
  EXPECT_EQ(table_testing::ExpectDuckDbMatchesStrata(*db, table->file, "logs"), 14);
}

TEST(LogsTableTest, MetaAndPromotion) {
  const otlp::LogBatch input = FullBatch("a");
  const otlp::LogBatch* inputs[] = {&input};
  absl::StatusOr<LogsTable> table = WriteLogsTable(inputs, kBatchId);
  ASSERT_TRUE(table.ok()) << table.status();
  EXPECT_EQ(table->first_record_row, 2u);
  EXPECT_EQ(table->meta.rows, 12u);
  EXPECT_EQ(table->meta.file_rows, 14u);
  EXPECT_FALSE(table->meta.traces.has_value());
  // Event time: time_unix_nano, or observed when it is 0 (n % 4 == 0): n = 0
  // has both 0, n = 8 the largest observed time.
  ASSERT_TRUE(table->meta.event_time.has_value());
  EXPECT_EQ(table->meta.event_time->min, 0u);
  EXPECT_EQ(table->meta.event_time->max, 1'700'000'000'500'000'008ULL);
  const std::map<std::string, uint64_t> misses = {{"exception.message", 1}};
  EXPECT_EQ(table->meta.promotion_misses, misses);

  std::unique_ptr<query::DuckDbEngine> db = table_testing::OpenDuckDb();
  ASSERT_NE(db, nullptr);
  parquet::parquet_testing::TempFile file(table->file);
  query::QueryResult r = parquet::parquet_testing::MustQuery(
      *db, fmt::format("SELECT row_kind, service_name, deployment_environment, exception_type, "
                       "exception_message, body_type FROM read_parquet('{}', file_row_number = "
                       "true) ORDER BY file_row_number",
                       file.path()));
  using Row = std::vector<std::optional<std::string>>;
  const std::optional<std::string> n;
  auto s = [](const char* v) { return std::optional<std::string>(v); };
  ASSERT_EQ(r.rows.size(), 14u);
  EXPECT_EQ(r.rows[0], (Row{s("2"), n, n, n, n, n}));
  EXPECT_EQ(r.rows[1], (Row{s("1"), n, n, n, n, n}));
  EXPECT_EQ(r.rows[2], (Row{s("0"), s("checkout-ra"), n, n, n, s("1")}));
  EXPECT_EQ(r.rows[3], (Row{s("0"), s("api"), s("staging"), s("ValueError"), n, s("1")}));
  EXPECT_EQ(r.rows[11], (Row{s("0"), s("api"), s("staging"), n, n, s("0")}));
  EXPECT_EQ(r.rows[12], (Row{s("0"), s("checkout-ra"), n, n, n, s("5")}));
  EXPECT_EQ(r.rows[13], (Row{s("0"), s("api"), s("staging"), n, n, s("6")}));
}

TEST(LogsTableTest, SeveralBatchesConcatenate) {
  const otlp::LogBatch a = FullBatch("a");
  const otlp::LogBatch b = FullBatch("b");
  otlp::LogBatch empty;
  const otlp::LogBatch* inputs[] = {&a, &empty, &b};
  absl::StatusOr<LogsTable> table = WriteLogsTable(inputs, kBatchId);
  ASSERT_TRUE(table.ok()) << table.status();
  EXPECT_EQ(table->meta.rows, 24u);
  EXPECT_EQ(table->meta.file_rows, 28u);
  const otlp::LogBatch back = ReadBack(table->file);
  EXPECT_EQ(otlp::EncodeLogsProto(back), otlp::EncodeLogsProto(a) + otlp::EncodeLogsProto(b));
  std::unique_ptr<query::DuckDbEngine> db = table_testing::OpenDuckDb();
  ASSERT_NE(db, nullptr);
  EXPECT_EQ(table_testing::ExpectDuckDbMatchesStrata(*db, table->file, "two batches"), 28);
}

TEST(LogsTableTest, EmptyInputWritesNoFile) {
  otlp::LogBatch empty;
  const otlp::LogBatch* inputs[] = {&empty};
  absl::StatusOr<LogsTable> table = WriteLogsTable(inputs, kBatchId);
  ASSERT_TRUE(table.ok()) << table.status();
  EXPECT_TRUE(table->file.empty());
  EXPECT_EQ(table->meta.file_rows, 0u);
  EXPECT_FALSE(table->meta.event_time.has_value());
}

// One record of `batch` as text: every field ReadLogsRowsAt fills, with
// its scope's and resource's content.
std::string RecordText(const otlp::LogBatch& b, size_t i) {
  auto value = [&](const otlp::ValueColumns& v, size_t row) {
    return fmt::format("{}:{}:{}", static_cast<int>(v.type[row]), v.str[row], v.bits[row]);
  };
  auto attributes = [&](const otlp::AttributeColumns& t, otlp::Range r) {
    std::string out;
    for (uint32_t k = r.begin; k < r.end(); ++k) {
      out += fmt::format("{}={};", t.key[k], value(t.value, k));
    }
    return out;
  };
  const uint32_t scope = b.logs.scope[i];
  const uint32_t resource = b.scopes.resource[scope];
  return fmt::format("{} {} {} {} {} [{}] {} {} {}{} {}{} {} | {} {} [{}] | [{}] {}",
                     b.logs.time_unix_nano[i], b.logs.observed_time_unix_nano[i],
                     b.logs.severity_number[i], b.logs.severity_text[i], value(b.logs.body, i),
                     attributes(b.log_attributes, b.logs.attributes[i]),
                     b.logs.dropped_attributes_count[i], b.logs.flags[i], b.logs.has_trace_id[i],
                     b.logs.trace_id[i][0], b.logs.has_span_id[i], b.logs.span_id[i][0],
                     b.logs.event_name[i], b.scopes.name[scope], b.scopes.version[scope],
                     attributes(b.scope_attributes, b.scopes.attributes[scope]),
                     attributes(b.resource_attributes, b.resources.attributes[resource]),
                     b.resources.schema_url[resource]);
}

// 9,000 records over three resources and their scopes (one scope without
// records, a placeholder row), written with 300-row pages.
std::string ManyRecordsFile(otlp::LogBatch* b) {
  BatchBuilder build(b);
  std::vector<uint32_t> scopes;
  for (int r = 0; r < 3; ++r) {
    const uint32_t resource = build.Resource(
        {{build.S("service.name"), BatchBuilder::Str(build.S(fmt::format("svc{}", r)))},
         {build.S("host.cpu"), BatchBuilder::Int(r * 4)}},
        fmt::format("https://schema/{}", r), 0, 0);
    scopes.push_back(
        build.Scope(resource, fmt::format("logger{}", r), "1.0", build.Many(r + 1, "sc."), 0, ""));
    scopes.push_back(build.Scope(resource, "second", "2", {}, 0, ""));
  }
  build.Scope(0, "unused", "", {}, 0, "");
  for (uint64_t n = 0; n < 9000; ++n) {
    AddRecord(b, build, scopes[(n * 7 + n / 100) % scopes.size()], n + 1,
              n % 3 == 0 ? BatchBuilder::Int(static_cast<int64_t>(n))
                         : BatchBuilder::Str(build.S(fmt::format("line {}", n))),
              {{build.S("n"), BatchBuilder::Int(static_cast<int64_t>(n))}});
  }
  const otlp::LogBatch* inputs[] = {b};
  TableOptions options;
  options.page_rows = 300;
  absl::StatusOr<LogsTable> table = WriteLogsTable(inputs, kBatchId, options);
  EXPECT_TRUE(table.ok()) << table.status();
  return table.ok() ? table->file : "";
}

TEST(LogsTableTest, ChosenRowsReadAsTheWholeFileHoldsThem) {
  otlp::LogBatch input;
  const std::string file = ManyRecordsFile(&input);
  ASSERT_FALSE(file.empty());
  parquet::StringSource source(file);
  absl::StatusOr<std::unique_ptr<parquet::FileReader>> reader =
      OpenTable(&source, LogsTableColumns(), kLogsSchema, kBatchId, "logs.parquet");
  ASSERT_TRUE(reader.ok()) << reader.status();
  const otlp::LogBatch whole = ReadBack(file);
  ASSERT_EQ(whole.logs.size(), 9000u);
  const uint64_t first = static_cast<uint64_t>((*reader)->num_rows()) - 9000;  // placeholders
  ASSERT_EQ(first, 1u);

  // A contiguous run reads back exactly as the range does.
  std::vector<uint64_t> run;
  for (uint64_t r = first + 250; r < first + 700; ++r) run.push_back(r);
  absl::StatusOr<LogRows> at = ReadLogsRowsAt(**reader, "logs.parquet", run);
  ASSERT_TRUE(at.ok()) << at.status();
  absl::StatusOr<LogRows> range =
      ReadLogsRows(**reader, "logs.parquet", run.front(), run.back() + 1);
  ASSERT_TRUE(range.ok()) << range.status();
  EXPECT_EQ(otlp::EncodeLogsProto(at->batch), otlp::EncodeLogsProto(range->batch));
  EXPECT_EQ(at->resource_index, range->resource_index);
  EXPECT_EQ(at->scope_index, range->scope_index);

  // Scattered rows, with gaps longer than kLogsGatherGapRows, neighbours,
  // the first and last record and the placeholder row.
  std::vector<uint64_t> rows = {0, first, first + 1, first + 299, first + 300};
  for (uint64_t r = first + 301; r < first + 9000; r += 37 + (r % 11) * 500) rows.push_back(r);
  rows.push_back(first + 8999);
  at = ReadLogsRowsAt(**reader, "logs.parquet", rows);
  ASSERT_TRUE(at.ok()) << at.status();
  ASSERT_EQ(at->placeholders.size(), 1u);
  ASSERT_EQ(at->batch.logs.size(), rows.size() - 1);
  for (size_t i = 1; i < rows.size(); ++i) {
    EXPECT_EQ(RecordText(at->batch, i - 1), RecordText(whole, rows[i] - first))
        << "row " << rows[i];
  }
  bool long_gap = false;
  for (size_t i = 1; i < rows.size(); ++i) long_gap |= rows[i] - rows[i - 1] > kLogsGatherGapRows;
  EXPECT_TRUE(long_gap);

  // Rows that do not increase, lie past the file, or are none.
  for (const std::vector<uint64_t>& bad :
       {std::vector<uint64_t>{}, std::vector<uint64_t>{5, 5}, std::vector<uint64_t>{9, 4},
        std::vector<uint64_t>{first + 9000}}) {
    absl::StatusOr<LogRows> refused = ReadLogsRowsAt(**reader, "logs.parquet", bad);
    EXPECT_TRUE(absl::IsInvalidArgument(refused.status())) << refused.status();
  }
}

class LogsTableCorruptionTest : public ::testing::Test {
 protected:
  void SetUp() override {
    input_ = FullBatch("a");
    const otlp::LogBatch* inputs[] = {&input_};
    absl::StatusOr<LogsTable> table = WriteLogsTable(inputs, kBatchId);
    ASSERT_TRUE(table.ok()) << table.status();
    file_ = table->file;
  }

  static void ExpectDataLoss(const std::string& bytes, const std::string& needle) {
    parquet::StringSource source(bytes);
    absl::StatusOr<otlp::LogBatch> batch = ReadLogsTable(&source, kBatchId, "logs.parquet");
    ASSERT_FALSE(batch.ok()) << needle;
    EXPECT_TRUE(absl::IsDataLoss(batch.status())) << batch.status();
    EXPECT_NE(std::string(batch.status().message()).find(needle), std::string::npos)
        << batch.status();
  }

  otlp::LogBatch input_;
  std::string file_;
};

TEST_F(LogsTableCorruptionTest, FooterChecks) {
  parquet::StringSource source(file_);
  EXPECT_TRUE(CheckLogsTableFooter(&source, kBatchId, 14, "logs.parquet").ok());
  EXPECT_TRUE(absl::IsDataLoss(CheckLogsTableFooter(&source, kBatchId, 13, "logs.parquet")));
  // A spans.parquet is not a logs.parquet.
  EXPECT_TRUE(absl::IsDataLoss(
      CheckLogsTableFooter(&source, "20250614093015123456001", 14, "logs.parquet")));
  ExpectDataLoss(file_.substr(0, file_.size() / 2), "logs.parquet");
}

TEST_F(LogsTableCorruptionTest, BrokenRulesAreDataLoss) {
  using C = std::vector<parquet::ColumnVector>;
  // Row 2 is record 0, a string body.
  ExpectDataLoss(table_testing::RewriteColumns(file_, [](C& c) { c[kLogsBodyType].int32s[2] = 8; }),
                 "type code 8");
  ExpectDataLoss(table_testing::RewriteColumns(file_, [](C& c) { c[kLogsBodyType].int32s[2] = 3; }),
                 "one-value rule");
  // Record 10 (row 12) has an array body: make its bytes a string value.
  ExpectDataLoss(table_testing::RewriteColumns(file_,
                                               [](C& c) {
                                                 parquet::ColumnVector& bytes = c[kLogsBodyBytes];
                                                 bytes.bytes[bytes.offsets[12]] = '\x0a';
                                               }),
                 "not a valid encoded value");
  ExpectDataLoss(table_testing::RewriteColumns(file_, [](C& c) { c[kLogsRowKind].int32s[9] = 1; }),
                 "placeholder row after a record row");
  ExpectDataLoss(table_testing::RewriteColumns(file_,
                                               [](C& c) {
                                                 c[kLogsEventName].validity.assign(14, 1);
                                                 c[kLogsEventName].validity[5] = 0;
                                               }),
                 "null on a log record row");
  ExpectDataLoss(table_testing::RewriteColumns(file_, [](C& c) { c[kLogsRowKind].int32s[1] = 2; }),
                 "not null on a resource placeholder");
}

TEST_F(LogsTableCorruptionTest, FlippedBytesNeverCrash) {
  int data_loss = 0;
  for (size_t at = 0; at < file_.size(); at += std::max<size_t>(1, file_.size() / 300)) {
    std::string bytes = file_;
    bytes[at] = static_cast<char>(bytes[at] ^ 0xa5);
    parquet::StringSource source(bytes);
    absl::StatusOr<otlp::LogBatch> batch = ReadLogsTable(&source, kBatchId, "logs.parquet");
    if (!batch.ok()) {
      EXPECT_TRUE(absl::IsDataLoss(batch.status())) << "byte " << at << ": " << batch.status();
      ++data_loss;
    }
  }
  EXPECT_GT(data_loss, 0);
}

}  // namespace
}  // namespace strata::storage
