// spans.parquet: hand-built batches covering every field through
// WriteSpansTable -> ReadSpansTable (compared as OTLP protobuf bytes after
// the file's sort), DuckDB reading every column exactly as strata's reader
// does, the meta.json member and trace runs, promotion, and corrupt files.

#include "storage/table/spans_table.h"

#include <algorithm>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "otlp/decode.h"
#include "otlp/encode.h"
#include "parquet/file_reader.h"
#include "storage/testing/table_test_batches.h"
#include "storage/testing/table_testing.h"

namespace strata::storage {
namespace {

using table_testing::BatchBuilder;
using table_testing::MakeSpanId;
using table_testing::MakeTraceId;
using table_testing::SortedCopy;

constexpr char kBatchId[] = "20250614093015123456000";

struct SpanSpec {
  uint32_t scope;
  otlp::TraceId trace;
  uint64_t span;
  uint64_t start;
  uint64_t end;
  int events = 0;
  int links = 0;
  bool parent = true;
};

// Appends a span with attributes, `events` events and `links` links.
void AddSpan(otlp::TraceBatch* b, BatchBuilder& build, const SpanSpec& spec,
             std::vector<otlp::AttributeRow> attributes) {
  otlp::SpanRow row;
  row.scope = spec.scope;
  row.trace_id = spec.trace;
  row.span_id = MakeSpanId(spec.span);
  row.trace_state = build.S(spec.span % 2 ? "congo=t61rcWkgMzE" : "");
  if (spec.parent) {
    row.parent_span_id = MakeSpanId(spec.span * 31 + 1);
    row.has_parent_span_id = 1;
  }
  row.flags = static_cast<uint32_t>(spec.span % 3 == 0 ? 0x301 : 1);
  row.name = build.S("GET /api/orders/" + std::to_string(spec.span % 5));
  row.kind = spec.span % 7 == 0 ? 99 : static_cast<int32_t>(spec.span % 6);
  row.start_time_unix_nano = spec.start;
  row.end_time_unix_nano = spec.end;
  row.attributes = BatchBuilder::Attributes(&b->span_attributes, attributes);
  row.dropped_attributes_count = static_cast<uint32_t>(spec.span % 4);
  row.events = {static_cast<uint32_t>(b->events.size()), static_cast<uint32_t>(spec.events)};
  for (int e = 0; e < spec.events; ++e) {
    std::vector<otlp::AttributeRow> ev;
    if (e == 1) {
      ev = {{build.S("exception.type"), BatchBuilder::Str(build.S("java.io.IOException"))},
            {build.S("exception.message"), BatchBuilder::Int(5)}};
    } else {
      ev = build.Many(e, "event.");
    }
    otlp::EventRow event;
    event.time_unix_nano = spec.start + 10 * static_cast<uint64_t>(e);
    event.name = build.S(e == 1 ? "exception" : "event-" + std::to_string(e));
    event.attributes = BatchBuilder::Attributes(&b->event_attributes, ev);
    event.dropped_attributes_count = static_cast<uint32_t>(e);
    b->events.Append(event);
  }
  row.dropped_events_count = spec.events > 0 ? 2 : 0;
  row.links = {static_cast<uint32_t>(b->links.size()), static_cast<uint32_t>(spec.links)};
  for (int l = 0; l < spec.links; ++l) {
    otlp::LinkRow link;
    link.trace_id = MakeTraceId(0xabc, static_cast<uint64_t>(l));
    link.span_id = MakeSpanId(static_cast<uint64_t>(l) + 77);
    link.trace_state = build.S(l == 0 ? "" : "k=v");
    link.attributes = BatchBuilder::Attributes(&b->link_attributes, build.Many(l + 1, "link."));
    link.dropped_attributes_count = static_cast<uint32_t>(l * 3);
    link.flags = static_cast<uint32_t>(l);
    b->links.Append(link);
  }
  row.dropped_links_count = static_cast<uint32_t>(spec.links);
  row.status_message = build.S(spec.span % 2 ? "deadline exceeded \xe2\x8f\xb0" : "");
  row.status_code = static_cast<int32_t>(spec.span % 3);
  b->spans.Append(row);
}

// A batch with every field: two resources with spans (one with entity refs
// and every attribute type), an empty resource, a scope without spans,
// events, links, spans of the same trace out of order, negative durations
// and extreme times.
otlp::TraceBatch FullBatch(const std::string& salt, uint64_t trace_base) {
  otlp::TraceBatch b;
  BatchBuilder build(&b);
  const uint32_t r0 = build.Resource(build.EveryValueType("r" + salt),
                                     "https://opentelemetry.io/schemas/1.21.0", 3, 3);
  const uint32_t r_empty = build.Resource({}, "", 0, 0);
  const uint32_t r1 =
      build.Resource({{build.S("service.name"), BatchBuilder::Int(7)},
                      {build.S("deployment.environment"), BatchBuilder::Str(build.S("prod"))},
                      {build.S("service.version"), BatchBuilder::Str(build.S("1.2.3"))}},
                     "", 0, 1);
  (void)r_empty;
  const uint32_t s0 = build.Scope(r0, "io.opentelemetry.http", "2.1.0",
                                  build.EveryValueType("s" + salt), 1, "https://scope/schema");
  const uint32_t s_empty = build.Scope(r0, "empty-scope", "", {}, 0, "");
  const uint32_t s1 = build.Scope(r1, "", "", {}, 0, "");
  (void)s_empty;
  const otlp::TraceId t1 = MakeTraceId(trace_base + 2, 5);
  const otlp::TraceId t2 = MakeTraceId(trace_base + 1, 9);
  AddSpan(&b, build, {s0, t1, 1, 3000, 5000, 2, 0}, build.EveryValueType("span" + salt));
  AddSpan(&b, build, {s0, t2, 2, 2000, 1000, 0, 2, false},
          {{build.S("http.request.method"), BatchBuilder::Str(build.S("GET"))},
           {build.S("http.status_code"), BatchBuilder::Str(build.S("200"))},
           {build.S("http.response.status_code"), BatchBuilder::Int(200)},
           {build.S("db.system"), BatchBuilder::Str(build.S("postgresql"))},
           {build.S("exception.type"), BatchBuilder::Str(build.S("span-level"))}});
  AddSpan(&b, build, {s0, t1, 3, 1000, std::numeric_limits<uint64_t>::max(), 3, 1},
          build.Many(40, "k."));
  AddSpan(&b, build, {s1, t1, 4, 3000, 0, 0, 0}, {});
  AddSpan(&b, build, {s1, t2, 5, 0, 0, 1, 3},
          {{build.S("http.method"), BatchBuilder::Str(build.S("POST"))},
           {build.S("http.route"), BatchBuilder::Str(build.S("/api/{id}"))},
           {build.S("rpc.service"), BatchBuilder::Int(1)}});
  // Same trace and start as span 1: ties stay in input order.
  AddSpan(&b, build, {s1, t1, 6, 3000, 3001, 0, 0}, {});
  return b;
}

otlp::TraceBatch ReadBack(const std::string& file) {
  parquet::StringSource source(file);
  absl::StatusOr<otlp::TraceBatch> batch = ReadSpansTable(&source, kBatchId, "spans.parquet");
  EXPECT_TRUE(batch.ok()) << batch.status();
  return batch.ok() ? std::move(*batch) : otlp::TraceBatch();
}

// What reading back must give: each input's encoding after the file's sort,
// concatenated (resources stay in input order; a scope's spans come from
// one input only).
std::string ExpectedProto(const std::vector<const otlp::TraceBatch*>& inputs) {
  std::string out;
  for (const otlp::TraceBatch* b : inputs) out += otlp::EncodeTracesProto(SortedCopy(*b));
  return out;
}

TEST(SpansTableTest, EveryFieldRoundTripsThroughStrataAndDuckDb) {
  const otlp::TraceBatch input = FullBatch("a", 100);
  ASSERT_TRUE(otlp::ValidateBatch(input).ok()) << otlp::ValidateBatch(input);
  const otlp::TraceBatch* inputs[] = {&input};
  absl::StatusOr<SpansTable> table = WriteSpansTable(inputs, kBatchId);
  ASSERT_TRUE(table.ok()) << table.status();
  const otlp::TraceBatch back = ReadBack(table->file);
  EXPECT_EQ(otlp::EncodeTracesProto(back), ExpectedProto({&input}));
  EXPECT_EQ(back.spans.size(), input.spans.size());
  EXPECT_EQ(back.resources.size(), 3u);
  EXPECT_EQ(back.scopes.size(), 3u);

  std::unique_ptr<query::DuckDbEngine> db = table_testing::OpenDuckDb();
  ASSERT_NE(db, nullptr);
  EXPECT_EQ(table_testing::ExpectDuckDbMatchesStrata(*db, table->file, "full batch"),
            static_cast<int64_t>(table->meta.file_rows));
}

TEST(SpansTableTest, MetaAndTraceRunsDescribeTheFile) {
  const otlp::TraceBatch input = FullBatch("a", 100);
  const otlp::TraceBatch* inputs[] = {&input};
  absl::StatusOr<SpansTable> table = WriteSpansTable(inputs, kBatchId);
  ASSERT_TRUE(table.ok()) << table.status();
  // Placeholders: one empty resource, one scope without spans.
  EXPECT_EQ(table->first_span_row, 2u);
  EXPECT_EQ(table->meta.rows, 6u);
  EXPECT_EQ(table->meta.file_rows, 8u);
  EXPECT_EQ(table->meta.traces, 2u);
  ASSERT_TRUE(table->meta.event_time.has_value());
  // Min over start and end (span 2 ends before it starts, span 5 at 0);
  // max includes span 3's end at 2^64-1.
  EXPECT_EQ(table->meta.event_time->min, 0u);
  EXPECT_EQ(table->meta.event_time->max, std::numeric_limits<uint64_t>::max());
  ASSERT_EQ(table->trace_runs.size(), 2u);
  // t2 (hi = 101) sorts before t1 (hi = 102).
  EXPECT_EQ(table->trace_runs[0].trace_id, MakeTraceId(101, 9));
  EXPECT_EQ(table->trace_runs[0].first_row, 2u);
  EXPECT_EQ(table->trace_runs[1].trace_id, MakeTraceId(102, 5));
  EXPECT_EQ(table->trace_runs[1].first_row, 4u);
  // Misses: resource r1's service.name is an int (once per span of r1: 3);
  // rpc.service as an int (span 5); exception.message as an int in the
  // exception events (spans 1 and 3). Span 2's http.status_code is a string
  // but http.response.status_code comes first and matches, so no miss.
  const std::map<std::string, uint64_t> want = {
      {"service.name", 3}, {"rpc.service", 1}, {"exception.message", 2}};
  EXPECT_EQ(table->meta.promotion_misses, want);
}

TEST(SpansTableTest, PromotedColumnsFollowTheRules) {
  const otlp::TraceBatch input = FullBatch("a", 100);
  const otlp::TraceBatch* inputs[] = {&input};
  absl::StatusOr<SpansTable> table = WriteSpansTable(inputs, kBatchId);
  ASSERT_TRUE(table.ok()) << table.status();
  std::unique_ptr<query::DuckDbEngine> db = table_testing::OpenDuckDb();
  ASSERT_NE(db, nullptr);
  parquet::parquet_testing::TempFile file(table->file);
  query::QueryResult r = parquet::parquet_testing::MustQuery(
      *db, fmt::format("SELECT row_kind, service_name, service_version, deployment_environment, "
                       "http_method, http_route, CAST(http_status_code AS VARCHAR), db_system, "
                       "rpc_service, exception_type, exception_message, "
                       "hex(span_id) "
                       "FROM read_parquet('{}', file_row_number = true) ORDER BY file_row_number",
                       file.path()));
  using Row = std::vector<std::optional<std::string>>;
  const std::optional<std::string> n;
  auto s = [](const char* v) { return std::optional<std::string>(v); };
  auto id = [](uint64_t v) {
    const otlp::SpanId span = MakeSpanId(v);
    return std::optional<std::string>(parquet::parquet_testing::Hex(
        std::string_view(reinterpret_cast<const char*>(span.data()), 8)));
  };
  ASSERT_EQ(r.rows.size(), 8u);
  // Placeholders: everything null.
  EXPECT_EQ(r.rows[0], (Row{s("2"), n, n, n, n, n, n, n, n, n, n, n}));
  EXPECT_EQ(r.rows[1], (Row{s("1"), n, n, n, n, n, n, n, n, n, n, n}));
  // Trace t2: span 5 (start 0, resource r1), then span 2 (start 2000, r0).
  EXPECT_EQ(r.rows[2], (Row{s("0"), n, s("1.2.3"), s("prod"), s("POST"), s("/api/{id}"), n, n, n, n,
                            n, id(5)}));
  EXPECT_EQ(r.rows[3], (Row{s("0"), s("checkout-ra"), n, n, s("GET"), n, s("200"), s("postgresql"),
                            n, s("span-level"), n, id(2)}));
  // Trace t1: span 3 (start 1000, an exception event whose message is an
  // int), then spans 1, 4, 6 at 3000 in input order.
  EXPECT_EQ(r.rows[4][9], s("java.io.IOException"));
  EXPECT_EQ(r.rows[4][10], n);
  EXPECT_EQ(r.rows[4][11], id(3));
  EXPECT_EQ(r.rows[5][11], id(1));
  EXPECT_EQ(r.rows[6][11], id(4));
  EXPECT_EQ(r.rows[7][11], id(6));
}

// Equal resources (and equal scopes of one resource) of different inputs
// share one index; every span keeps its owners' content.
TEST(SpansTableTest, SeveralBatchesShareEqualResourcesAndScopes) {
  const otlp::TraceBatch a = FullBatch("a", 100);
  const otlp::TraceBatch b = FullBatch("b", 100);  // the same trace ids: runs interleave
  const otlp::TraceBatch c = FullBatch("c", 50);
  const otlp::TraceBatch* inputs[] = {&a, &b, &c};
  absl::StatusOr<SpansTable> table = WriteSpansTable(inputs, kBatchId);
  ASSERT_TRUE(table.ok()) << table.status();
  EXPECT_EQ(table->meta.rows, 18u);
  // Placeholders: the empty resource once (equal in all three), the empty
  // scope three times (it belongs to r0, which differs by salt).
  EXPECT_EQ(table->meta.file_rows, 22u);
  EXPECT_EQ(table->meta.traces, 4u);
  EXPECT_EQ(table->first_span_row, 4u);
  const otlp::TraceBatch back = ReadBack(table->file);
  // r0 per input, then the empty resource and r1 once each.
  EXPECT_EQ(back.resources.size(), 5u);
  // s0 and the empty scope per input, s1 once.
  EXPECT_EQ(back.scopes.size(), 7u);
  std::vector<std::string> expected;
  for (const otlp::TraceBatch* in : inputs) {
    for (std::string& span : table_testing::SpansWithOwners(*in)) expected.push_back(span);
  }
  std::sort(expected.begin(), expected.end());
  EXPECT_EQ(table_testing::SpansWithOwners(back), expected);
  // Owners without spans are kept: each input's empty scope under its r0.
  const otlp::TraceBatch* alone[] = {&a};
  absl::StatusOr<SpansTable> a_table = WriteSpansTable(alone, kBatchId);
  ASSERT_TRUE(a_table.ok()) << a_table.status();
  EXPECT_EQ(a_table->meta.file_rows, 8u);
  std::unique_ptr<query::DuckDbEngine> db = table_testing::OpenDuckDb();
  ASSERT_NE(db, nullptr);
  EXPECT_EQ(table_testing::ExpectDuckDbMatchesStrata(*db, table->file, "three batches"), 22);
  // Indexes are dense over the file and the runs cover every span once.
  uint64_t covered = 0;
  for (size_t i = 0; i < table->trace_runs.size(); ++i) {
    const uint32_t end = i + 1 < table->trace_runs.size() ? table->trace_runs[i + 1].first_row
                                                          : static_cast<uint32_t>(22);
    covered += end - table->trace_runs[i].first_row;
    if (i > 0) EXPECT_LT(table->trace_runs[i - 1].trace_id, table->trace_runs[i].trace_id);
  }
  EXPECT_EQ(covered, 18u);
}

TEST(SpansTableTest, EmptyInputWritesNoFile) {
  otlp::TraceBatch empty;
  const otlp::TraceBatch* inputs[] = {&empty};
  absl::StatusOr<SpansTable> table = WriteSpansTable(inputs, kBatchId);
  ASSERT_TRUE(table.ok()) << table.status();
  EXPECT_TRUE(table->file.empty());
  EXPECT_EQ(table->meta.file_rows, 0u);
  EXPECT_EQ(table->meta.rows, 0u);
  EXPECT_FALSE(table->meta.event_time.has_value());
  EXPECT_EQ(table->meta.traces, 0u);
}

TEST(SpansTableTest, OnlyPlaceholdersKeepResourcesAndScopes) {
  otlp::TraceBatch b;
  BatchBuilder build(&b);
  const uint32_t r = build.Resource(build.Many(3, "res."), "url", 1, 2);
  build.Scope(r, "scope", "v", build.Many(2, "sc."), 0, "");
  build.Resource({}, "", 0, 0);
  const otlp::TraceBatch* inputs[] = {&b};
  absl::StatusOr<SpansTable> table = WriteSpansTable(inputs, kBatchId);
  ASSERT_TRUE(table.ok()) << table.status();
  EXPECT_EQ(table->meta.rows, 0u);
  EXPECT_EQ(table->meta.file_rows, 2u);
  EXPECT_EQ(table->meta.event_time, (NanosRange{0, 0}));
  EXPECT_TRUE(table->trace_runs.empty());
  const otlp::TraceBatch back = ReadBack(table->file);
  EXPECT_EQ(otlp::EncodeTracesProto(back), otlp::EncodeTracesProto(b));
}

// Span i of `count` in `scope`: trace (i % hi, i % lo), i % attributes
// attributes, start times scattered over 5000 ns.
struct ManySpansShape {
  uint64_t hi = 1;
  uint64_t lo = 1;
  int attributes = 1;
};
void AddManySpans(otlp::TraceBatch* b, BatchBuilder& build, uint32_t scope, uint64_t count,
                  ManySpansShape shape) {
  for (uint64_t i = 0; i < count; ++i) {
    AddSpan(b, build,
            {scope, MakeTraceId(i % shape.hi, i % shape.lo), i + 1, 1000 + (i * 7919) % 5000, 9000,
             static_cast<int>(i % 3), static_cast<int>(i % 2)},
            build.Many(static_cast<int>(i % static_cast<uint64_t>(shape.attributes)), "a."));
  }
}

TEST(SpansTableTest, ManySpansSpanSeveralPagesAndRowGroups) {
  otlp::TraceBatch b;
  BatchBuilder build(&b);
  const uint32_t r = build.Resource(build.Many(10, "res."), "", 0, 0);
  const uint32_t s = build.Scope(r, "scope", "1", {}, 0, "");
  AddManySpans(&b, build, s, 5000, {97, 89, 12});
  const otlp::TraceBatch* inputs[] = {&b};
  TableOptions options;
  options.page_bytes = 4096;
  options.row_group_bytes = 16 << 10;
  options.dictionary_bytes_limit = 2048;
  absl::StatusOr<SpansTable> table = WriteSpansTable(inputs, kBatchId, options);
  ASSERT_TRUE(table.ok()) << table.status();
  parquet::StringSource source(table->file);
  absl::StatusOr<std::unique_ptr<parquet::FileReader>> reader = parquet::FileReader::Open(&source);
  ASSERT_TRUE(reader.ok());
  EXPECT_GT((*reader)->metadata().row_groups.size(), 1u);
  for (const parquet::RowGroup& group : (*reader)->metadata().row_groups) {
    ASSERT_EQ(group.sorting_columns.size(), 2u);
    EXPECT_EQ(group.sorting_columns[0].column_idx, kSpansTraceId);
    EXPECT_EQ(group.sorting_columns[1].column_idx, kSpansStartTime);
  }
  const otlp::TraceBatch back = ReadBack(table->file);
  EXPECT_EQ(otlp::EncodeTracesProto(back), ExpectedProto({&b}));
  std::unique_ptr<query::DuckDbEngine> db = table_testing::OpenDuckDb();
  ASSERT_NE(db, nullptr);
  EXPECT_EQ(table_testing::ExpectDuckDbMatchesStrata(*db, table->file, "5000 spans"), 5000);
}

// The writer builds and writes a group's rows in chunks of
// FileWriter::kRowsPerSlice: placeholders filling a whole chunk, a chunk
// that mixes placeholders and spans, and spans of many inputs in later
// chunks all come back as written.
TEST(SpansTableTest, RowsOfManyChunksRoundTrip) {
  const otlp::TraceBatch full = FullBatch("a", 100);
  otlp::TraceBatch b;
  BatchBuilder build(&b);
  constexpr int kEmptyResources = 4200;  // a placeholder row each
  for (int i = 0; i < kEmptyResources; ++i) {
    build.Resource({{build.S("resource.number"), BatchBuilder::Int(i)}}, "", 0, 0);
  }
  const uint32_t r = build.Resource(build.Many(5, "res."), "", 0, 0);
  const uint32_t s = build.Scope(r, "scope", "1", {}, 0, "");
  AddManySpans(&b, build, s, 9000, {389, 61, 7});
  ASSERT_TRUE(otlp::ValidateBatch(b).ok()) << otlp::ValidateBatch(b);
  const otlp::TraceBatch* inputs[] = {&full, &b};
  absl::StatusOr<SpansTable> table = WriteSpansTable(inputs, kBatchId);
  ASSERT_TRUE(table.ok()) << table.status();
  EXPECT_GT(table->meta.file_rows, 3 * parquet::FileWriter::kRowsPerSlice);
  EXPECT_GT(table->meta.file_rows - table->meta.rows, parquet::FileWriter::kRowsPerSlice);
  const otlp::TraceBatch back = ReadBack(table->file);
  EXPECT_EQ(otlp::EncodeTracesProto(back), ExpectedProto({&full, &b}));
  std::unique_ptr<query::DuckDbEngine> db = table_testing::OpenDuckDb();
  ASSERT_NE(db, nullptr);
  EXPECT_EQ(table_testing::ExpectDuckDbMatchesStrata(*db, table->file, "many chunks"),
            static_cast<int64_t>(table->meta.file_rows));
}

// ------------------------------------------------------------ corruption

class SpansTableCorruptionTest : public ::testing::Test {
 protected:
  void SetUp() override {
    input_ = FullBatch("a", 100);
    const otlp::TraceBatch* inputs[] = {&input_};
    absl::StatusOr<SpansTable> table = WriteSpansTable(inputs, kBatchId);
    ASSERT_TRUE(table.ok()) << table.status();
    file_ = table->file;
  }

  // Reading `bytes` fails with DataLoss whose message contains `needle`.
  static void ExpectDataLoss(const std::string& bytes, const std::string& needle,
                             std::string_view batch_id = kBatchId) {
    parquet::StringSource source(bytes);
    absl::StatusOr<otlp::TraceBatch> batch = ReadSpansTable(&source, batch_id, "spans.parquet");
    ASSERT_FALSE(batch.ok()) << needle;
    EXPECT_TRUE(absl::IsDataLoss(batch.status())) << batch.status();
    EXPECT_NE(std::string(batch.status().message()).find(needle), std::string::npos)
        << batch.status();
    EXPECT_NE(std::string(batch.status().message()).find("spans.parquet"), std::string::npos);
  }

  static size_t FirstElementOfType(const parquet::ColumnVector& types, int32_t type) {
    for (size_t i = 0; i < types.int32s.size(); ++i) {
      if (types.int32s[i] == type) return i;
    }
    ADD_FAILURE() << "no element of type " << type;
    return 0;
  }
  // The slot in value list `values` of the first attribute of type `type`
  // on a row where that list is present (value lists of a row with no value
  // of theirs are null and hold no slots).
  static size_t FirstSlotOfType(const parquet::ColumnVector& types,
                                const parquet::ColumnVector& values, int32_t type) {
    for (size_t r = 0; r < types.lists.size(); ++r) {
      if (values.is_null_list(r)) continue;
      for (uint64_t k = 0; k < types.lists[r].count; ++k) {
        if (types.int32s[types.lists[r].begin + k] == type) return values.lists[r].begin + k;
      }
    }
    ADD_FAILURE() << "no element of type " << type << " in a row with the list present";
    return 0;
  }

  otlp::TraceBatch input_;
  std::string file_;
};

TEST_F(SpansTableCorruptionTest, FooterChecks) {
  parquet::StringSource source(file_);
  EXPECT_TRUE(CheckSpansTableFooter(&source, kBatchId, 8, "spans.parquet").ok());
  absl::Status rows = CheckSpansTableFooter(&source, kBatchId, 7, "spans.parquet");
  EXPECT_TRUE(absl::IsDataLoss(rows)) << rows;
  absl::Status id = CheckSpansTableFooter(&source, "20250614093015123456001", 8, "spans.parquet");
  EXPECT_TRUE(absl::IsDataLoss(id)) << id;
  ExpectDataLoss(file_, "strata.batch_id", "20250614093015123456001");
  ExpectDataLoss(file_.substr(0, file_.size() - 9), "spans.parquet");
  ExpectDataLoss(file_.substr(0, 3), "spans.parquet");
  ExpectDataLoss("", "spans.parquet");
}

TEST_F(SpansTableCorruptionTest, WrongSchemaIsDataLoss) {
  // The rewrite used by the other corruption tests is itself sound.
  const std::string same = table_testing::RewriteColumns(file_, [](auto&) {});
  parquet::StringSource same_source(same);
  EXPECT_TRUE(ReadSpansTable(&same_source, kBatchId, "spans.parquet").ok());
  parquet::WriterOptions options;
  options.key_value_metadata = {
      {"strata.format", "1"}, {"strata.schema", "spans"}, {"strata.batch_id", kBatchId}};
  std::vector<parquet::ColumnSpec> specs = SpansTableColumns();
  specs[kSpansName] = parquet::ColumnSpec::Bytes("name", true);  // BLOB, not STRING
  std::string other;
  parquet::StringSink sink(&other);
  auto writer = parquet::FileWriter::Open(specs, options, &sink);
  ASSERT_TRUE(writer.ok());
  ASSERT_TRUE((*writer)->Close().ok());
  ExpectDataLoss(other, "schema column");
  options.key_value_metadata[1].value = "logs";
  std::string wrong_kind;
  parquet::StringSink sink2(&wrong_kind);
  auto writer2 = parquet::FileWriter::Open(SpansTableColumns(), options, &sink2);
  ASSERT_TRUE(writer2.ok());
  ASSERT_TRUE((*writer2)->Close().ok());
  ExpectDataLoss(wrong_kind, "strata.schema");
}

TEST_F(SpansTableCorruptionTest, BrokenRulesAreDataLoss) {
  using C = std::vector<parquet::ColumnVector>;
  const int types = kSpansAttributes + 1;
  ExpectDataLoss(table_testing::RewriteColumns(
                     file_, [&](C& c) { c[types].int32s[FirstElementOfType(c[types], 1)] = 9; }),
                 "type code 9");
  // A string value moved to the int list: two values for one element.
  ExpectDataLoss(
      table_testing::RewriteColumns(file_,
                                    [&](C& c) {
                                      const size_t e = FirstSlotOfType(c[types], c[types + 2], 1);
                                      c[types + 2].validity.resize(c[types + 2].int64s.size(), 1);
                                      c[types + 2].validity[e] = 1;
                                    }),
      "one-value-per-element");
  // Nested bytes that are not an AnyValue of the declared type.
  ExpectDataLoss(table_testing::RewriteColumns(file_,
                                               [&](C& c) {
                                                 const size_t e =
                                                     FirstSlotOfType(c[types], c[types + 5], 5);
                                                 parquet::ColumnVector& bytes = c[types + 5];
                                                 bytes.bytes[bytes.offsets[e]] = '\x0a';
                                               }),
                 "valid encoded array");
  // A row's string list made null although the row holds a string.
  auto null_list_of_row_with = [&](C& c, int column, int32_t type) {
    parquet::ColumnVector& list = c[column];
    const size_t slot = FirstSlotOfType(c[types], list, type);
    size_t row = 0;
    while (row < list.lists.size() && !(list.lists[row].begin <= slot &&
                                        slot < list.lists[row].begin + list.lists[row].count)) {
      ++row;
    }
    ASSERT_LT(row, list.lists.size());
    if (list.list_validity.empty()) list.list_validity.assign(list.lists.size(), 1);
    list.list_validity[row] = 0;
  };
  ExpectDataLoss(
      table_testing::RewriteColumns(file_, [&](C& c) { null_list_of_row_with(c, types + 1, 1); }),
      "one-value-per-element");
  ExpectDataLoss(table_testing::RewriteColumns(file_, [](C& c) { c[kSpansRowKind].int32s[5] = 3; }),
                 "row kind 3");
  ExpectDataLoss(table_testing::RewriteColumns(file_, [](C& c) { c[kSpansRowKind].int32s[5] = 1; }),
                 "placeholder row after a span row");
  ExpectDataLoss(
      table_testing::RewriteColumns(file_, [](C& c) { c[kSpansResourceScope].int32s[0] = 7; }),
      "not dense");
  // Swap two rows' start times within trace t1: out of order.
  ExpectDataLoss(
      table_testing::RewriteColumns(
          file_,
          [](C& c) { std::swap(c[kSpansStartTime].int64s[4], c[kSpansStartTime].int64s[5]); }),
      "sort order");
  ExpectDataLoss(table_testing::RewriteColumns(file_,
                                               [](C& c) {
                                                 parquet::ColumnVector& counts =
                                                     c[kSpansEventAttributeCount];
                                                 for (int32_t& n : counts.int32s) {
                                                   if (n > 0) {
                                                     ++n;
                                                     break;
                                                   }
                                                 }
                                               }),
                 "counts sum to");
  ExpectDataLoss(table_testing::RewriteColumns(file_,
                                               [](C& c) {
                                                 parquet::ColumnVector& names = c[kSpansEventName];
                                                 for (parquet::ListRange& l : names.lists) {
                                                   if (l.count > 0) {
                                                     --l.count;
                                                     break;
                                                   }
                                                 }
                                               }),
                 "event_name");
  ExpectDataLoss(table_testing::RewriteColumns(file_,
                                               [](C& c) {
                                                 c[kSpansName].validity.assign(
                                                     c[kSpansName].offsets.size() - 1, 1);
                                                 c[kSpansName].validity[3] = 0;
                                               }),
                 "null on a span row");
  // A scope under two resources.
  ExpectDataLoss(table_testing::RewriteColumns(file_,
                                               [](C& c) {
                                                 c[kSpansResourceScope + 16].int32s[2] =
                                                     c[kSpansResourceScope + 16].int32s[3];
                                               }),
                 "appears under resources");
}

TEST_F(SpansTableCorruptionTest, FlippedBytesNeverCrash) {
  // Flip single bytes across the file; every read either fails with
  // DataLoss or succeeds (a flipped value byte can be a valid file).
  int data_loss = 0;
  for (size_t at = 0; at < file_.size(); at += std::max<size_t>(1, file_.size() / 400)) {
    std::string bytes = file_;
    bytes[at] = static_cast<char>(bytes[at] ^ 0x5a);
    parquet::StringSource source(bytes);
    absl::StatusOr<otlp::TraceBatch> batch = ReadSpansTable(&source, kBatchId, "spans.parquet");
    if (!batch.ok()) {
      EXPECT_TRUE(absl::IsDataLoss(batch.status())) << "byte " << at << ": " << batch.status();
      ++data_loss;
    }
  }
  EXPECT_GT(data_loss, 0);
}

}  // namespace
}  // namespace strata::storage
