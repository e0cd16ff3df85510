// LIST columns of every primitive type: writer -> DuckDB (the oracle) and
// writer -> strata's reader, on seeded random tables with empty lists, null
// lists, null elements and lists spanning many pages, mixed with flat
// columns; corrupt list data never crashes the reader.

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "common/status_macros.h"
#include "fmt/format.h"
#include "gtest/gtest.h"
#include "parquet/file_reader.h"
#include "parquet/file_writer.h"
#include "parquet/testing/parquet_testing.h"
#include "query/duckdb_engine.h"

namespace strata::parquet {
namespace {

using Cell = std::optional<std::string>;
using parquet_testing::ExpectReaderReturnsTable;
using parquet_testing::Hex;
using parquet_testing::MustQuery;
using parquet_testing::OptionsFor;
using parquet_testing::TempFile;
using parquet_testing::WriteTable;
using ListVariant = parquet_testing::Variant;

// A column, the DuckDB type it reads as, and the SQL rendering one element x.
struct ListTestColumn {
  ColumnSpec spec;
  std::string duckdb_type;
  std::string element_sql;
};

std::vector<ListTestColumn> ListSchema() {
  return {
      {ColumnSpec::Int64("row_id"), "BIGINT", ""},
      {ColumnSpec::List(ColumnSpec::String("keys")), "VARCHAR[]", "hex(x)"},
      {ColumnSpec::List(ColumnSpec::Integer("types", 8, false)), "UTINYINT[]", "x::VARCHAR"},
      {ColumnSpec::List(ColumnSpec::String("str", true)), "VARCHAR[]", "hex(x)"},
      {ColumnSpec::String("flat_s", true), "VARCHAR", ""},
      {ColumnSpec::List(ColumnSpec::Int64("ints", true), true), "BIGINT[]", "x::VARCHAR"},
      {ColumnSpec::List(ColumnSpec::Double("dbl", true)), "DOUBLE[]", "printf('%.17g', x)"},
      {ColumnSpec::List(ColumnSpec::Boolean("bools", true), true), "BOOLEAN[]", "x::VARCHAR"},
      {ColumnSpec::List(ColumnSpec::Bytes("blob", true)), "BLOB[]", "hex(x)"},
      {ColumnSpec::List(ColumnSpec::FixedBytes("fixed", 8, true), true), "BLOB[]", "hex(x)"},
      {ColumnSpec::List(ColumnSpec::Int32("i32"), true), "INTEGER[]", "x::VARCHAR"},
      {ColumnSpec::List(ColumnSpec::Integer("u64", 64, false, true)), "UBIGINT[]", "x::VARCHAR"},
      {ColumnSpec::Int32("flat_i32"), "INTEGER", ""},
  };
}

std::string RenderElement(const ColumnSpec& spec, const ColumnVector& v, size_t i) {
  if (v.is_null(i)) return "N";
  switch (spec.type) {
    case PhysicalType::kBoolean:
      return v.bools[i] ? "true" : "false";
    case PhysicalType::kInt32:
      if (spec.logical_type.kind == LogicalType::Kind::kInteger && !spec.logical_type.is_signed) {
        return fmt::format("{}", static_cast<uint32_t>(v.int32s[i]));
      }
      return fmt::format("{}", v.int32s[i]);
    case PhysicalType::kInt64:
      if (spec.logical_type.kind == LogicalType::Kind::kInteger && !spec.logical_type.is_signed) {
        return fmt::format("{}", static_cast<uint64_t>(v.int64s[i]));
      }
      return fmt::format("{}", v.int64s[i]);
    case PhysicalType::kDouble:
      return fmt::format("{:.17g}", v.doubles[i]);
    default:
      return Hex(v.bytes_at(i));
  }
}

// Row `row` as the DuckDB expression from Render() shows it.
Cell RenderRow(const ColumnSpec& spec, const ColumnVector& v, size_t row) {
  if (!spec.list) {
    if (v.is_null(row)) return Cell();
    return RenderElement(spec, v, row);
  }
  if (v.is_null_list(row)) return Cell();
  const ListRange range = v.lists[row];
  std::string out = fmt::format("{}:", range.count);
  for (uint64_t k = 0; k < range.count; ++k) {
    if (k > 0) out += "|";
    out += RenderElement(spec, v, range.begin + k);
  }
  return out;
}

std::string Render(const ListTestColumn& c) {
  const std::string& name = c.spec.name;
  if (!c.spec.list)
    return c.spec.type == PhysicalType::kByteArray ? fmt::format("hex({})", name) : name;
  return fmt::format(
      "len({0}) || ':' || coalesce(array_to_string(list_transform({0}, x -> coalesce({1}, 'N')), "
      "'|'), '')",
      name, c.element_sql);
}

void AppendRandomElement(const ColumnSpec& spec, std::mt19937_64& rng,
                         const std::vector<std::string>& vocabulary, ColumnVector* v) {
  if (spec.optional() && rng() % 5 == 0) {
    v->AppendNull();
    return;
  }
  switch (spec.type) {
    case PhysicalType::kBoolean:
      v->AppendBool(rng() % 2);
      break;
    case PhysicalType::kInt32:
      if (spec.logical_type.kind == LogicalType::Kind::kInteger) {
        v->AppendInt32(static_cast<int32_t>(rng() % 8));
      } else {
        v->AppendInt32(static_cast<int32_t>(rng() % 200) - 100);
      }
      break;
    case PhysicalType::kInt64:
      v->AppendInt64(rng() % 3 == 0 ? static_cast<int64_t>(rng())
                                    : static_cast<int64_t>(rng() % 50) - 10);
      break;
    case PhysicalType::kDouble:
      v->AppendDouble(
          rng() % 9 == 0 ? -0.0
                         : static_cast<double>(static_cast<int64_t>(rng() % 20000) - 10000) / 64.0);
      break;
    case PhysicalType::kFixedLenByteArray: {
      std::string bytes(static_cast<size_t>(spec.type_length), '\0');
      for (char& ch : bytes) ch = static_cast<char>(rng() % 3 == 0 ? 0 : rng());
      v->AppendBytes(bytes);
      break;
    }
    default:
      if (rng() % 50 == 0) {
        v->AppendBytes(std::string(500 + rng() % 1500, static_cast<char>('a' + rng() % 26)));
      } else {
        v->AppendBytes(vocabulary[rng() % vocabulary.size()]);
      }
      break;
  }
}

// A seeded random table following ListSchema(). The "keys" column places a
// junk element before every list, so its ranges are not contiguous.
std::vector<ColumnVector> RandomListTable(const std::vector<ListTestColumn>& schema, size_t rows,
                                          uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<ColumnVector> table;
  for (const ListTestColumn& c : schema) {
    table.push_back(c.spec.list ? ColumnVector::List(c.spec.type) : ColumnVector(c.spec.type));
  }
  std::vector<std::string> vocabulary;
  for (int i = 0; i < 40; ++i) vocabulary.push_back(fmt::format("k{}-{}", i, rng() % 1000));
  vocabulary.push_back("");
  vocabulary.push_back("日本 é");
  for (size_t r = 0; r < rows; ++r) {
    for (size_t c = 0; c < schema.size(); ++c) {
      const ColumnSpec& spec = schema[c].spec;
      ColumnVector& v = table[c];
      if (spec.name == "row_id") {
        v.AppendInt64(static_cast<int64_t>(r));
        continue;
      }
      if (!spec.list) {
        if (spec.optional() && rng() % 6 == 0) {
          v.AppendNull();
        } else {
          AppendRandomElement(spec, rng, vocabulary, &v);
        }
        continue;
      }
      if (spec.list_optional() && rng() % 8 == 0) {
        v.AppendNullList();
        continue;
      }
      const uint64_t pick = rng() % 400;
      const uint64_t count = pick == 0 ? 3000 + rng() % 3000 : pick < 60 ? 0 : rng() % 7;
      if (spec.name == "keys") v.AppendBytes("junk");
      const uint64_t begin = v.element_count();
      for (uint64_t k = 0; k < count; ++k) AppendRandomElement(spec, rng, vocabulary, &v);
      v.AppendList(begin, count);
    }
  }
  return table;
}

std::vector<ColumnSpec> Specs(const std::vector<ListTestColumn>& schema) {
  std::vector<ColumnSpec> specs;
  for (const ListTestColumn& c : schema) specs.push_back(c.spec);
  return specs;
}

class ListOracleTest : public testing::TestWithParam<ListVariant> {};

TEST_P(ListOracleTest, DuckDbReadsEveryList) {
  const ListVariant& variant = GetParam();
  const std::vector<ListTestColumn> schema = ListSchema();
  const std::vector<ColumnSpec> specs = Specs(schema);
  const std::vector<ColumnVector> table = RandomListTable(schema, variant.rows, variant.seed);
  const std::string bytes = WriteTable(specs, table, OptionsFor(variant), variant.batch_rows);
  TempFile file(bytes);
  query::EngineOptions engine_options;
  engine_options.threads = 2;
  absl::StatusOr<std::unique_ptr<query::DuckDbEngine>> db =
      query::DuckDbEngine::Open(engine_options);
  ASSERT_TRUE(db.ok()) << db.status();
  const std::string source = fmt::format("read_parquet('{}')", file.path());

  // 1. Types.
  query::QueryResult described = MustQuery(
      **db,
      fmt::format("SELECT column_name, column_type FROM (DESCRIBE SELECT * FROM {})", source));
  ASSERT_EQ(described.rows.size(), schema.size());
  for (size_t c = 0; c < schema.size(); ++c) {
    EXPECT_EQ(described.rows[c][0], Cell(schema[c].spec.name));
    EXPECT_EQ(described.rows[c][1], Cell(schema[c].duckdb_type)) << schema[c].spec.name;
  }

  // 2. A full ordered dump.
  std::string select;
  for (const ListTestColumn& c : schema) select += (select.empty() ? "" : ", ") + Render(c);
  query::QueryResult dump =
      MustQuery(**db, fmt::format("SELECT {} FROM {} ORDER BY row_id", select, source));
  ASSERT_EQ(dump.rows.size(), variant.rows);
  for (size_t r = 0; r < variant.rows; ++r) {
    for (size_t c = 0; c < schema.size(); ++c) {
      ASSERT_EQ(dump.rows[r][c], RenderRow(specs[c], table[c], r))
          << "row " << r << " column " << specs[c].name;
    }
  }

  // 3. List functions DuckDB evaluates itself.
  const size_t ints = 5, i32 = 10;
  int64_t contains = 0, positive = 0, rows_with_null_list = 0;
  for (size_t r = 0; r < variant.rows; ++r) {
    const ColumnVector& v = table[ints];
    if (v.is_null_list(r)) {
      ++rows_with_null_list;
    } else {
      bool found = false;
      for (uint64_t k = 0; k < v.lists[r].count; ++k) {
        const size_t e = v.lists[r].begin + k;
        found |= !v.is_null(e) && v.int64s[e] == 7;
      }
      contains += found;
    }
    const ColumnVector& w = table[i32];
    if (w.is_null_list(r)) continue;
    for (uint64_t k = 0; k < w.lists[r].count; ++k) {
      positive += w.int32s[w.lists[r].begin + k] > 0;
    }
  }
  query::QueryResult agg =
      MustQuery(**db, fmt::format("SELECT count(*) FILTER (WHERE list_contains(ints, 7)), "
                                  "coalesce(sum(len(list_filter(i32, x -> x > 0))), 0), "
                                  "count(*) FILTER (WHERE ints IS NULL) FROM {}",
                                  source));
  ASSERT_EQ(agg.rows.size(), 1u);
  EXPECT_EQ(agg.rows[0][0], Cell(fmt::format("{}", contains)));
  EXPECT_EQ(agg.rows[0][1], Cell(fmt::format("{}", positive)));
  EXPECT_EQ(agg.rows[0][2], Cell(fmt::format("{}", rows_with_null_list)));

  // 4. Statistics of the i32 lists: bounds over present elements.
  query::QueryResult stats = MustQuery(
      **db, fmt::format("SELECT stats_min_value, stats_max_value, row_group_num_rows FROM "
                        "parquet_metadata('{}') WHERE path_in_schema = 'i32, list, element' "
                        "ORDER BY row_group_id",
                        file.path()));
  size_t first = 0;
  for (const auto& row : stats.rows) {
    const size_t n = std::stoull(row[2].value_or("0"));
    std::optional<int32_t> lo, hi;
    for (size_t r = first; r < first + n; ++r) {
      const ColumnVector& w = table[i32];
      if (w.is_null_list(r)) continue;
      for (uint64_t k = 0; k < w.lists[r].count; ++k) {
        const int32_t x = w.int32s[w.lists[r].begin + k];
        if (!lo || x < *lo) lo = x;
        if (!hi || x > *hi) hi = x;
      }
    }
    if (lo) {
      EXPECT_EQ(row[0], Cell(fmt::format("{}", *lo)));
      EXPECT_EQ(row[1], Cell(fmt::format("{}", *hi)));
    }
    first += n;
  }
  EXPECT_EQ(first, variant.rows);
}

TEST_P(ListOracleTest, StrataReaderReadsEveryList) {
  const ListVariant& variant = GetParam();
  const std::vector<ListTestColumn> schema = ListSchema();
  const std::vector<ColumnSpec> specs = Specs(schema);
  const std::vector<ColumnVector> table = RandomListTable(schema, variant.rows, variant.seed);
  const std::string bytes = WriteTable(specs, table, OptionsFor(variant), variant.batch_rows);
  ExpectReaderReturnsTable(bytes, specs, table, variant.seed + 1, 25, 3000);
}

INSTANTIATE_TEST_SUITE_P(
    Variants, ListOracleTest,
    testing::Values(
        // Many pages and row groups; a small dictionary limit forces fallback
        // (also in the middle of a row).
        ListVariant{"Zstd", CompressionCodec::kZstd, 20000, 4 << 10, 16 << 10, 3000, 7000, 2500, 1},
        ListVariant{"Uncompressed", CompressionCodec::kUncompressed, 8000, 1 << 20, 1 << 20, 20000,
                    1 << 20, 8000, 2},
        ListVariant{"TinyPages", CompressionCodec::kZstd, 2000, 256, 300, 5, 700, 333, 3},
        ListVariant{"OneRow", CompressionCodec::kZstd, 1, 1 << 20, 1 << 20, 20000, 1 << 20, 1, 4}),
    [](const testing::TestParamInfo<ListVariant>& info) { return std::string(info.param.name); });

TEST(ListWriterTest, RejectsBadLists) {
  const std::vector<ColumnSpec> specs = {ColumnSpec::List(ColumnSpec::Int64("v"))};
  std::string bytes;
  StringSink sink(&bytes);
  auto writer = FileWriter::Open(specs, {}, &sink);
  ASSERT_TRUE(writer.ok());
  ColumnVector outside = ColumnVector::List(PhysicalType::kInt64);
  outside.AppendInt64(1);
  outside.AppendList(0, 2);
  EXPECT_EQ((*writer)->WriteBatch({&outside, 1}).code(), absl::StatusCode::kInvalidArgument);
  auto writer2 = FileWriter::Open(specs, {}, &sink);
  ColumnVector null_list = ColumnVector::List(PhysicalType::kInt64);
  null_list.AppendNullList();
  EXPECT_EQ((*writer2)->WriteBatch({&null_list, 1}).code(), absl::StatusCode::kInvalidArgument);
  auto writer3 = FileWriter::Open(specs, {}, &sink);
  ColumnVector flat(PhysicalType::kInt64);
  flat.AppendInt64(1);
  EXPECT_EQ((*writer3)->WriteBatch({&flat, 1}).code(), absl::StatusCode::kInvalidArgument);
}

// Columns sharing one ListRanges buffer (as an attribute family's do) are
// each checked against their own elements and list repetition.
TEST(ListWriterTest, ColumnsSharingRangesAreCheckedEach) {
  const std::vector<ColumnSpec> specs = {ColumnSpec::List(ColumnSpec::Int64("a")),
                                         ColumnSpec::List(ColumnSpec::Int64("b")),
                                         ColumnSpec::List(ColumnSpec::Int64("c"), true)};
  auto make = [] {
    std::vector<ColumnVector> columns(3, ColumnVector::List(PhysicalType::kInt64));
    for (ColumnVector& c : columns) {
      c.AppendInt64(1);
      c.AppendInt64(2);
    }
    columns[0].AppendList(0, 2);
    columns[0].AppendList(1, 1);
    columns[1].lists = columns[0].lists;
    columns[2].lists = columns[0].lists;
    columns[2].list_validity = {1, 0};
    EXPECT_TRUE(columns[1].lists.SharesWith(columns[0].lists));
    return columns;
  };
  auto write = [&](const std::vector<ColumnVector>& columns) {
    std::string bytes;
    StringSink sink(&bytes);
    auto writer = FileWriter::Open(specs, {}, &sink);
    EXPECT_TRUE(writer.ok());
    return (*writer)->WriteBatch(columns);
  };
  EXPECT_TRUE(write(make()).ok());
  // The second column has fewer elements than the shared ranges name.
  std::vector<ColumnVector> short_elements = make();
  short_elements[1].int64s.pop_back();
  absl::Status s = write(short_elements);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("'b'"), std::string::npos) << s;
  // A null list in a required list column that shares valid ranges.
  std::vector<ColumnVector> null_in_required = make();
  null_in_required[1].list_validity = {1, 0};
  s = write(null_in_required);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("null in a required list"), std::string::npos) << s;
}

// Rows streamed in chunks over element arrays that stay (FileWriter::
// WriteChunk, as the spans writer does) give the file one batch gives; an
// element added after a chunk is still checked.
TEST(ListWriterTest, ChunksOverLastingElementsWriteTheSameFile) {
  const std::vector<ListTestColumn> schema = ListSchema();
  const std::vector<ColumnSpec> specs = Specs(schema);
  constexpr size_t kRows = 700;
  const std::vector<ColumnVector> table = RandomListTable(schema, kRows, 77);
  WriterOptions options;
  options.column.data_page_max_rows = 50;
  const std::string whole = WriteTable(specs, table, options, kRows);

  std::string bytes;
  StringSink sink(&bytes);
  absl::StatusOr<std::unique_ptr<FileWriter>> writer = FileWriter::Open(specs, options, &sink);
  ASSERT_TRUE(writer.ok()) << writer.status();
  // One vector per column for the whole stream: a LIST column keeps every
  // element and gets each chunk's rows; a flat column gets each chunk.
  std::vector<ColumnVector> stream = table;
  std::vector<const ColumnVector*> pointers;
  for (const ColumnVector& c : stream) pointers.push_back(&c);
  for (size_t begin = 0; begin < kRows;) {
    const size_t end = std::min(kRows, begin + 97 + begin % 5);
    for (size_t c = 0; c < stream.size(); ++c) {
      if (!stream[c].is_list) {
        stream[c] = parquet_testing::Slice(table[c], begin, end);
        continue;
      }
      std::vector<ListRange> ranges(table[c].lists.begin() + begin, table[c].lists.begin() + end);
      stream[c].lists = ListRanges(std::move(ranges));
      stream[c].list_validity.clear();
      if (!table[c].list_validity.empty()) {
        stream[c].list_validity.assign(table[c].list_validity.begin() + begin,
                                       table[c].list_validity.begin() + end);
      }
    }
    ASSERT_TRUE((*writer)->WriteChunk(pointers, /*first=*/begin == 0).ok()) << begin;
    begin = end;
  }
  ASSERT_TRUE((*writer)->Close().ok());
  EXPECT_EQ(Hex(bytes), Hex(whole));

  // A value of the wrong width added to a FIXED_LEN_BYTE_ARRAY column's
  // elements after its first chunk fails the next chunk.
  std::string bytes2;
  StringSink sink2(&bytes2);
  writer = FileWriter::Open(specs, options, &sink2);
  ASSERT_TRUE(writer.ok());
  std::vector<ColumnVector> chunk;
  for (const ColumnVector& c : table) chunk.push_back(parquet_testing::Slice(c, 0, 10));
  std::vector<const ColumnVector*> chunk_pointers;
  for (const ColumnVector& c : chunk) chunk_pointers.push_back(&c);
  ASSERT_TRUE((*writer)->WriteChunk(chunk_pointers, /*first=*/true).ok());
  size_t fixed = 0;
  while (specs[fixed].name != "fixed") ++fixed;
  ColumnVector& column = chunk[fixed];
  const uint64_t at = column.element_count();
  column.AppendBytes("abc");
  column.lists[0] = ListRange{at, 1};
  column.list_validity.clear();
  const absl::Status s = (*writer)->WriteChunk(chunk_pointers, /*first=*/false);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
  EXPECT_NE(s.message().find("'fixed'"), std::string::npos) << s;

  // A new stream checks every element again, though its vectors are the
  // same objects: element 0 of 'fixed', checked by the first stream, made
  // a byte short here, fails the second stream's first chunk.
  std::string bytes3;
  StringSink sink3(&bytes3);
  writer = FileWriter::Open(specs, options, &sink3);
  ASSERT_TRUE(writer.ok());
  for (size_t c = 0; c < table.size(); ++c) chunk[c] = parquet_testing::Slice(table[c], 0, 10);
  ASSERT_TRUE((*writer)->WriteChunk(chunk_pointers, /*first=*/true).ok());
  ASSERT_GE(chunk[fixed].element_count(), 2u);
  chunk[fixed].offsets[1] -= 1;
  const absl::Status again = (*writer)->WriteChunk(chunk_pointers, /*first=*/true);
  EXPECT_EQ(again.code(), absl::StatusCode::kInvalidArgument) << again;
}

std::string SmallListFile() {
  const std::vector<ListTestColumn> schema = ListSchema();
  WriterOptions options;
  options.column.data_page_max_rows = 9;
  options.row_group_max_rows = 40;
  return WriteTable(Specs(schema), RandomListTable(schema, 90, 21), options, 90);
}

absl::Status ReadAll(const std::string& bytes) {
  StringSource source(bytes);
  absl::StatusOr<std::unique_ptr<FileReader>> reader = FileReader::Open(&source);
  if (!reader.ok()) return reader.status();
  std::vector<int> all;
  for (size_t c = 0; c < (*reader)->columns().size(); ++c) all.push_back(static_cast<int>(c));
  STRATA_RETURN_IF_ERROR((*reader)->Read(all, 0, (*reader)->num_rows()).status());
  return (*reader)->Read(all, (*reader)->num_rows() / 2, (*reader)->num_rows()).status();
}

TEST(ListCorruptFileTest, TruncationsAndByteFlipsNeverCrash) {
  const std::string bytes = SmallListFile();
  ASSERT_TRUE(ReadAll(bytes).ok()) << ReadAll(bytes);
  // STRATA_TEST_LIST_SEED_OUT=path saves this file as a fuzz corpus seed.
  if (const char* out = std::getenv("STRATA_TEST_LIST_SEED_OUT"); out != nullptr) {
    std::ofstream(out, std::ios::binary) << bytes;
  }
  for (size_t n = 0; n < bytes.size(); n += 151) {
    absl::Status s = ReadAll(bytes.substr(0, n));
    EXPECT_EQ(s.code(), absl::StatusCode::kDataLoss) << n << " " << s;
  }
  std::mt19937_64 rng(12);
  for (int trial = 0; trial < 500; ++trial) {
    std::string corrupt = bytes;
    const size_t i = 4 + rng() % (bytes.size() - 12);
    corrupt[i] = static_cast<char>(corrupt[i] ^ (1 << (rng() % 8)));
    (void)ReadAll(corrupt);
  }
}

}  // namespace
}  // namespace strata::parquet
