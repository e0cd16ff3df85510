// Writer -> DuckDB (the oracle) and writer -> strata's reader, on randomized
// tables of every supported type; corrupt files never crash the reader.

#include <cinttypes>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <optional>
#include <random>
#include <string>
#include <vector>

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
using parquet_testing::OpenDuckDb;
using parquet_testing::OptionsFor;
using parquet_testing::TempFile;
using parquet_testing::Variant;
using parquet_testing::WriteTable;

// A column of the test table: its spec, the SQL that renders it in DuckDB,
// and how strata renders the same value.
struct TestColumn {
  ColumnSpec spec;
  std::string sql;  // expression over the column name
};

// TIMESTAMP(NANOS, isAdjustedToUTC=false): DuckDB reads it as TIMESTAMP_NS.
ColumnSpec LocalTimestampNanos(std::string name) {
  ColumnSpec spec = ColumnSpec::TimestampNanos(std::move(name), true);
  spec.logical_type.is_adjusted_to_utc = false;
  return spec;
}

// DuckDB 1.4 reads TIMESTAMP(NANOS, isAdjustedToUTC=true) as TIMESTAMP WITH
// TIME ZONE, whose resolution is microseconds: it floors the nanoseconds.
int64_t FloorToMicros(int64_t nanos) {
  int64_t micros = nanos / 1000;
  if (nanos % 1000 < 0) --micros;
  return micros * 1000;
}

std::vector<TestColumn> TestSchema() {
  return {
      {ColumnSpec::Int64("row_id"), "row_id"},
      {ColumnSpec::Boolean("b", true), "b"},
      {ColumnSpec::Int32("i32", true), "i32"},
      {ColumnSpec::Int64("i64"), "i64"},
      {ColumnSpec::Double("d", true), "printf('%.17g', d)"},
      {ColumnSpec::String("s", true), "s"},
      {ColumnSpec::String("hs"), "hs"},
      {ColumnSpec::Bytes("blob", true), "hex(blob)"},
      {ColumnSpec::FixedBytes("fixed", 16, true), "hex(fixed)"},
      {ColumnSpec::TimestampNanos("ts", true), "epoch_ns(ts)"},
      {LocalTimestampNanos("ts_local"), "epoch_ns(ts_local)"},
      {ColumnSpec::Integer("u8", 8, false), "u8"},
      {ColumnSpec::Integer("i16", 16, true, true), "i16"},
      {ColumnSpec::Integer("u32", 32, false, true), "u32"},
      {ColumnSpec::Integer("u64", 64, false, true), "u64"},
  };
}

std::string RenderValue(const ColumnSpec& spec, const ColumnVector& v, size_t row) {
  switch (spec.type) {
    case PhysicalType::kBoolean:
      return v.bools[row] ? "true" : "false";
    case PhysicalType::kInt32:
      if (spec.logical_type.kind == LogicalType::Kind::kInteger && !spec.logical_type.is_signed) {
        return fmt::format("{}", static_cast<uint32_t>(v.int32s[row]));
      }
      return fmt::format("{}", v.int32s[row]);
    case PhysicalType::kInt64:
      if (spec.logical_type.kind == LogicalType::Kind::kInteger && !spec.logical_type.is_signed) {
        return fmt::format("{}", static_cast<uint64_t>(v.int64s[row]));
      }
      if (spec.logical_type.kind == LogicalType::Kind::kTimestamp &&
          spec.logical_type.is_adjusted_to_utc) {
        return fmt::format("{}", FloorToMicros(v.int64s[row]));
      }
      return fmt::format("{}", v.int64s[row]);
    case PhysicalType::kDouble:
      return fmt::format("{:.17g}", v.doubles[row]);
    default:
      if (spec.logical_type.kind == LogicalType::Kind::kString) return std::string(v.bytes_at(row));
      return Hex(v.bytes_at(row));
  }
}

std::string RandomUtf8(std::mt19937_64& rng, size_t chars) {
  static const char* const kPieces[] = {"a", "Z",  "0", " ",  "é",  "ß", "日本",
                                        "😀", "\t", "'", "\"", "\\", ",", "Ω"};
  std::string s;
  for (size_t i = 0; i < chars; ++i) s += kPieces[rng() % (sizeof(kPieces) / sizeof(kPieces[0]))];
  return s;
}

// A seeded random table following TestSchema().
std::vector<ColumnVector> RandomTable(const std::vector<TestColumn>& schema, size_t rows,
                                      uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<ColumnVector> table;
  for (const TestColumn& c : schema) table.emplace_back(c.spec.type);
  std::vector<std::string> vocabulary;
  for (int i = 0; i < 50; ++i) vocabulary.push_back(RandomUtf8(rng, rng() % 12));
  vocabulary.push_back("");
  for (size_t r = 0; r < rows; ++r) {
    for (size_t c = 0; c < schema.size(); ++c) {
      const ColumnSpec& spec = schema[c].spec;
      ColumnVector& v = table[c];
      if (spec.optional() && rng() % 7 == 0) {
        v.AppendNull();
        continue;
      }
      const std::string& name = spec.name;
      if (name == "row_id") {
        v.AppendInt64(static_cast<int64_t>(r));
      } else if (name == "b") {
        v.AppendBool(rng() % 2);
      } else if (name == "i32") {
        v.AppendInt32(rng() % 3 == 0 ? static_cast<int32_t>(rng())
                                     : static_cast<int32_t>(rng() % 100) - 50);
      } else if (name == "i64") {
        v.AppendInt64(rng() % 4 == 0 ? static_cast<int64_t>(rng()) : static_cast<int64_t>(r / 10));
      } else if (name == "d") {
        const uint64_t pick = rng() % 10;
        double d;
        if (pick == 0) {
          d = -0.0;
        } else if (pick == 1) {
          d = std::numeric_limits<double>::infinity();
        } else if (pick == 2) {
          d = 1e300 * static_cast<double>(rng() % 100);
        } else {
          d = static_cast<double>(static_cast<int64_t>(rng() % 2000000) - 1000000) / 1024.0;
        }
        v.AppendDouble(d);
      } else if (name == "s") {
        const uint64_t pick = rng() % 100;
        if (pick == 0) {
          v.AppendBytes(RandomUtf8(rng, 3000 + rng() % 3000));  // long strings
        } else {
          v.AppendBytes(vocabulary[rng() % vocabulary.size()]);
        }
      } else if (name == "hs") {
        v.AppendBytes(fmt::format("{:016x}-{}", rng(), RandomUtf8(rng, rng() % 8)));
      } else if (name == "blob") {
        std::string bytes(rng() % 40, '\0');
        for (char& ch : bytes) ch = static_cast<char>(rng() % 4 == 0 ? 0xFF : rng());
        v.AppendBytes(bytes);
      } else if (name == "fixed") {
        std::string bytes(16, '\0');
        for (char& ch : bytes) ch = static_cast<char>(rng());
        if (rng() % 3 == 0) bytes = std::string(16, '\x11');
        v.AppendBytes(bytes);
      } else if (name == "ts" || name == "ts_local") {
        v.AppendInt64(1700000000000000000 + static_cast<int64_t>(rng() % 1000000000000000));
      } else if (name == "u8") {
        v.AppendInt32(static_cast<int32_t>(rng() % 256));
      } else if (name == "i16") {
        v.AppendInt32(static_cast<int32_t>(rng() % 65536) - 32768);
      } else if (name == "u32") {
        v.AppendInt32(static_cast<int32_t>(static_cast<uint32_t>(rng())));
      } else if (name == "u64") {
        v.AppendInt64(static_cast<int64_t>(rng()));
      }
    }
  }
  return table;
}

std::vector<ColumnSpec> Specs(const std::vector<TestColumn>& schema) {
  std::vector<ColumnSpec> specs;
  for (const TestColumn& c : schema) specs.push_back(c.spec);
  return specs;
}

class WriterOracleTest : public testing::TestWithParam<Variant> {};

// Every value, every logical type, every column chunk's statistics and the
// sorting columns, as DuckDB sees them.
TEST_P(WriterOracleTest, DuckDbReadsEveryValue) {
  const Variant& variant = GetParam();
  const std::vector<TestColumn> schema = TestSchema();
  const std::vector<ColumnSpec> specs = Specs(schema);
  const std::vector<ColumnVector> table = RandomTable(schema, variant.rows, variant.seed);
  WriterOptions options;
  options.codec = variant.codec;
  options.column.dictionary_bytes_limit = variant.dictionary_limit;
  options.column.data_page_bytes = variant.page_bytes;
  options.column.data_page_max_rows = variant.page_rows;
  options.row_group_max_rows = variant.row_group_rows;
  options.sorting_columns = {{0, false, false}};
  options.key_value_metadata = {{"strata.schema", "test"}, {"empty", ""}};
  const std::string bytes = WriteTable(specs, table, options, variant.batch_rows);
  TempFile file(bytes);
  auto db = OpenDuckDb();
  const std::string source = fmt::format("read_parquet('{}')", file.path());

  // 1. A full ordered dump.
  std::string select;
  for (const TestColumn& c : schema) select += (select.empty() ? "" : ", ") + c.sql;
  query::QueryResult dump =
      MustQuery(*db, fmt::format("SELECT {} FROM {} ORDER BY row_id", select, source));
  ASSERT_EQ(dump.rows.size(), variant.rows);
  for (size_t r = 0; r < variant.rows; ++r) {
    for (size_t c = 0; c < schema.size(); ++c) {
      const Cell expected = table[c].is_null(r) ? Cell() : Cell(RenderValue(specs[c], table[c], r));
      ASSERT_EQ(dump.rows[r][c], expected) << "row " << r << " column " << specs[c].name;
    }
  }

  // 2. Logical types as DuckDB maps them.
  query::QueryResult types = MustQuery(
      *db, fmt::format("SELECT name, type, converted_type, logical_type FROM parquet_schema('{}') "
                       "ORDER BY name",
                       file.path()));
  std::map<std::string, std::vector<Cell>> type_of;
  for (auto& row : types.rows) type_of[*row[0]] = row;
  EXPECT_EQ(type_of["s"][2], Cell("UTF8"));
  EXPECT_NE(type_of["ts"][3].value_or("").find("NANOS"), std::string::npos)
      << type_of["ts"][3].value_or("null");
  EXPECT_NE(type_of["ts"][3].value_or("").find("isAdjustedToUTC=1"), std::string::npos)
      << type_of["ts"][3].value_or("null");
  EXPECT_EQ(type_of["u8"][2], Cell("UINT_8"));
  EXPECT_EQ(type_of["u64"][2], Cell("UINT_64"));
  EXPECT_EQ(type_of["fixed"][1], Cell("FIXED_LEN_BYTE_ARRAY"));
  query::QueryResult described = MustQuery(
      *db, fmt::format("SELECT column_name, column_type FROM (DESCRIBE SELECT * FROM {})", source));
  std::map<std::string, Cell> sql_type;
  for (auto& row : described.rows) sql_type[*row[0]] = row[1];
  EXPECT_EQ(sql_type["s"], Cell("VARCHAR"));
  EXPECT_EQ(sql_type["ts"], Cell("TIMESTAMP WITH TIME ZONE"));
  EXPECT_EQ(sql_type["ts_local"], Cell("TIMESTAMP_NS"));
  EXPECT_EQ(sql_type["u8"], Cell("UTINYINT"));
  EXPECT_EQ(sql_type["i16"], Cell("SMALLINT"));
  EXPECT_EQ(sql_type["u32"], Cell("UINTEGER"));
  EXPECT_EQ(sql_type["u64"], Cell("UBIGINT"));
  EXPECT_EQ(sql_type["blob"], Cell("BLOB"));
  EXPECT_EQ(sql_type["fixed"], Cell("BLOB"));
  EXPECT_EQ(sql_type["d"], Cell("DOUBLE"));
  EXPECT_EQ(sql_type["b"], Cell("BOOLEAN"));

  // 3. Statistics per row group and column, against values computed here.
  StringSource memory(bytes);
  absl::StatusOr<std::unique_ptr<FileReader>> reader = FileReader::Open(&memory);
  ASSERT_TRUE(reader.ok()) << reader.status();
  const FileMetaData& meta = (*reader)->metadata();
  if (variant.rows > static_cast<size_t>(variant.row_group_rows)) {
    EXPECT_GT(meta.row_groups.size(), 1u);
  }
  query::QueryResult stats = MustQuery(
      *db, fmt::format("SELECT row_group_id, path_in_schema, stats_min_value, stats_max_value, "
                       "stats_null_count, row_group_num_rows FROM parquet_metadata('{}') "
                       "ORDER BY row_group_id, column_id",
                       file.path()));
  ASSERT_EQ(stats.rows.size(), meta.row_groups.size() * specs.size());
  size_t first_row = 0;
  for (size_t g = 0; g < meta.row_groups.size(); ++g) {
    const size_t group_rows = static_cast<size_t>(meta.row_groups[g].num_rows);
    for (size_t c = 0; c < specs.size(); ++c) {
      const auto& row = stats.rows[g * specs.size() + c];
      ASSERT_EQ(row[1], Cell(specs[c].name));
      int64_t nulls = 0;
      for (size_t r = first_row; r < first_row + group_rows; ++r) nulls += table[c].is_null(r);
      EXPECT_EQ(row[4], Cell(fmt::format("{}", nulls))) << specs[c].name << " group " << g;
      EXPECT_EQ(row[5], Cell(fmt::format("{}", group_rows)));
      // Exact bounds for the integer and short-string columns.
      const std::string& name = specs[c].name;
      if (name == "row_id" || name == "i64" || name == "i32" || name == "u8" || name == "hs") {
        std::optional<std::string> lo, hi;
        for (size_t r = first_row; r < first_row + group_rows; ++r) {
          if (table[c].is_null(r)) continue;
          const std::string v = RenderValue(specs[c], table[c], r);
          auto less = [&](const std::string& a, const std::string& b) {
            if (specs[c].type == PhysicalType::kByteArray) return a < b;
            return std::stoll(a) < std::stoll(b);
          };
          if (!lo || less(v, *lo)) lo = v;
          if (!hi || less(*hi, v)) hi = v;
        }
        EXPECT_EQ(row[2], lo) << name << " group " << g;
        EXPECT_EQ(row[3], hi) << name << " group " << g;
      }
    }
    first_row += group_rows;
  }

  // 4. Key/value metadata, created_by and sorting columns.
  query::QueryResult kv =
      MustQuery(*db, fmt::format("SELECT decode(key), decode(value) FROM parquet_kv_metadata('{}') "
                                 "ORDER BY 1",
                                 file.path()));
  ASSERT_EQ(kv.rows.size(), 2u);
  EXPECT_EQ(kv.rows[1][0], Cell("strata.schema"));
  EXPECT_EQ(kv.rows[1][1], Cell("test"));
  query::QueryResult file_meta = MustQuery(
      *db,
      fmt::format("SELECT created_by, num_rows, num_row_groups FROM parquet_file_metadata('{}')",
                  file.path()));
  ASSERT_EQ(file_meta.rows.size(), 1u);
  EXPECT_EQ(file_meta.rows[0][0], Cell("strata"));
  EXPECT_EQ(file_meta.rows[0][1], Cell(fmt::format("{}", variant.rows)));
  for (const RowGroup& g : meta.row_groups) {
    EXPECT_EQ(g.sorting_columns, options.sorting_columns);
  }

  // 5. Aggregates DuckDB computes itself (filters exercise stats-based pruning).
  int64_t expected_nulls = 0, expected_true = 0;
  for (size_t r = 0; r < variant.rows; ++r) {
    expected_nulls += table[1].is_null(r);
    expected_true += !table[1].is_null(r) && table[1].bools[r];
  }
  query::QueryResult agg = MustQuery(
      *db,
      fmt::format("SELECT count(*), count(b), sum(b::INT), count(*) FILTER (WHERE row_id >= {}) "
                  "FROM {}",
                  variant.rows / 2, source));
  ASSERT_EQ(agg.rows.size(), 1u);
  EXPECT_EQ(agg.rows[0][0], Cell(fmt::format("{}", variant.rows)));
  EXPECT_EQ(agg.rows[0][1], Cell(fmt::format("{}", variant.rows - expected_nulls)));
  if (variant.rows > static_cast<size_t>(expected_nulls)) {
    EXPECT_EQ(agg.rows[0][2], Cell(fmt::format("{}", expected_true)));
  }
  EXPECT_EQ(agg.rows[0][3], Cell(fmt::format("{}", variant.rows - variant.rows / 2)));
}

// strata's own reader: identical values, projection and row ranges.
TEST_P(WriterOracleTest, StrataReaderReadsEveryValue) {
  const Variant& variant = GetParam();
  const std::vector<TestColumn> schema = TestSchema();
  const std::vector<ColumnSpec> specs = Specs(schema);
  const std::vector<ColumnVector> table = RandomTable(schema, variant.rows, variant.seed);
  const std::string bytes = WriteTable(specs, table, OptionsFor(variant), variant.batch_rows);
  ExpectReaderReturnsTable(bytes, specs, table, variant.seed + 1, 20, 30000);

  StringSource source(bytes);
  absl::StatusOr<std::unique_ptr<FileReader>> reader = FileReader::Open(&source);
  ASSERT_TRUE(reader.ok()) << reader.status();
  const std::vector<int> first_column = {0};
  EXPECT_FALSE((*reader)->Read(first_column, 1, 0).ok());
  EXPECT_FALSE((*reader)->ReadColumn(99, 0, 0).ok());
}

INSTANTIATE_TEST_SUITE_P(
    Variants, WriterOracleTest,
    testing::Values(
        // Many pages and row groups; a small dictionary limit forces fallback.
        Variant{"Zstd", CompressionCodec::kZstd, 60000, 16 << 10, 32 << 10, 5000, 25000, 7000, 1},
        Variant{"Uncompressed", CompressionCodec::kUncompressed, 30000, 1 << 20, 1 << 20, 20000,
                1 << 20, 30000, 2},
        Variant{"TinyPages", CompressionCodec::kZstd, 3000, 256, 512, 7, 1000, 333, 3},
        Variant{"OneRow", CompressionCodec::kZstd, 1, 1 << 20, 1 << 20, 20000, 1 << 20, 1, 4},
        Variant{"Empty", CompressionCodec::kZstd, 0, 1 << 20, 1 << 20, 20000, 1 << 20, 1, 5}),
    [](const testing::TestParamInfo<Variant>& info) { return std::string(info.param.name); });

TEST(WriterTest, DictionaryFallbackStaysPlainAndBoundsMemory) {
  std::vector<ColumnSpec> specs = {ColumnSpec::String("id")};
  ColumnVector ids(PhysicalType::kByteArray);
  for (int i = 0; i < 50000; ++i) ids.AppendBytes(fmt::format("value-{:08d}", i));
  WriterOptions options;
  options.column.dictionary_bytes_limit = 4096;
  options.row_group_max_rows = 20000;
  const std::string bytes = WriteTable(specs, {ids}, options, 50000);
  StringSource source(bytes);
  auto reader = FileReader::Open(&source);
  ASSERT_TRUE(reader.ok()) << reader.status();
  const FileMetaData& meta = (*reader)->metadata();
  ASSERT_EQ(meta.row_groups.size(), 3u);
  const ColumnMetaData& first = *meta.row_groups[0].columns[0].meta_data;
  EXPECT_TRUE(first.dictionary_page_offset.has_value());  // dictionary, then PLAIN pages
  for (size_t g = 1; g < 3; ++g) {
    EXPECT_FALSE(meta.row_groups[g].columns[0].meta_data->dictionary_page_offset.has_value());
  }
  auto all = (*reader)->ReadColumn(0, 0, 50000);
  ASSERT_TRUE(all.ok());
  EXPECT_TRUE(*all == ids);
}

// The column writer adds dictionary values a run of rows at a time (a
// flat slice, or a list row's elements), keeping the previous value in
// locals and falling back to PLAIN in the middle of a run. Whole-table
// batches (long runs) and one-row batches (runs of one value) must write
// the same bytes, and both must read back: every dictionary type, nulls,
// repeats, empty, short and long strings, small and large integer keys, and
// a dictionary limit that overflows partway through a row group.
TEST(WriterTest, DictionaryRunsWriteTheBytesOfOneRowBatches) {
  for (uint64_t seed = 0; seed < 6; ++seed) {
    std::mt19937_64 rng(seed);
    const std::vector<ColumnSpec> specs = {ColumnSpec::Int32("i32", true),
                                           ColumnSpec::Int64("i64", true),
                                           ColumnSpec::Double("f64", true),
                                           ColumnSpec::String("s", true),
                                           ColumnSpec::Bytes("b"),
                                           ColumnSpec::FixedBytes("fixed", 16, true),
                                           ColumnSpec::List(ColumnSpec::String("tags", true), true),
                                           ColumnSpec::List(ColumnSpec::Int64("codes"))};
    std::vector<ColumnVector> table = {ColumnVector(PhysicalType::kInt32),
                                       ColumnVector(PhysicalType::kInt64),
                                       ColumnVector(PhysicalType::kDouble),
                                       ColumnVector(PhysicalType::kByteArray),
                                       ColumnVector(PhysicalType::kByteArray),
                                       ColumnVector(PhysicalType::kFixedLenByteArray),
                                       ColumnVector::List(PhysicalType::kByteArray),
                                       ColumnVector::List(PhysicalType::kInt64)};
    // A string of 0..40 bytes that differs from its neighbours in one byte
    // only, drawn from a pool that widens along the table.
    auto text = [&](uint64_t limit) {
      const uint64_t k = rng() % limit;
      std::string v(k % 41, 'x');
      if (!v.empty()) v[k % v.size()] = static_cast<char>('a' + k % 7);
      return v + (k % 3 == 0 ? "" : std::to_string(k / 41));
    };
    const int rows = 4000;
    std::string previous = "start";
    for (int i = 0; i < rows; ++i) {
      const uint64_t limit = 2 + static_cast<uint64_t>(i) / (seed % 2 == 0 ? 4 : 40);
      const bool repeat = rng() % 3 != 0;  // sorted data: runs of one value
      if (!repeat) previous = text(limit);
      if (rng() % 6 == 0) {
        for (int c : {0, 1, 2, 3, 5}) table[c].AppendNull();
      } else {
        const uint64_t k = repeat ? previous.size() : rng() % limit;
        table[0].AppendInt32(k % 2 == 0 ? static_cast<int32_t>(k) : -static_cast<int32_t>(k) * 977);
        table[1].AppendInt64(k % 5 == 0 ? static_cast<int64_t>(k) << 40 : static_cast<int64_t>(k));
        table[2].AppendDouble(k % 7 == 0 ? -0.0 : static_cast<double>(k) / 3);
        table[3].AppendBytes(previous);
        std::string fixed(16, static_cast<char>(k % 256));
        fixed[15] = static_cast<char>(k / 256);
        table[5].AppendBytes(fixed);
      }
      table[4].AppendBytes(repeat ? previous : text(limit));
      if (rng() % 5 == 0) {
        table[6].AppendNullList();
      } else {
        const size_t count = rng() % 5;
        table[6].AppendList(table[6].offsets.size() - 1, count);
        for (size_t e = 0; e < count; ++e) {
          if (rng() % 4 == 0) {
            table[6].AppendNull();
          } else {
            table[6].AppendBytes(e % 2 == 0 ? previous : text(limit));
          }
        }
      }
      const size_t codes = rng() % 4;
      table[7].AppendList(table[7].int64s.size(), codes);
      for (size_t e = 0; e < codes; ++e) table[7].AppendInt64(static_cast<int64_t>(rng() % limit));
    }
    WriterOptions options;
    options.codec = CompressionCodec::kUncompressed;
    options.column.dictionary_bytes_limit = 300 + seed * 500;
    options.column.data_page_bytes = 512 << (seed % 3);
    options.row_group_max_rows = 1500;
    const std::string whole = WriteTable(specs, table, options, rows);
    const std::string one_row = WriteTable(specs, table, options, 1);
    EXPECT_TRUE(whole == one_row) << "seed " << seed;
    ExpectReaderReturnsTable(whole, specs, table, seed, 20, 500);
  }
}

TEST(WriterTest, LowCardinalityColumnsAreDictionaryEncoded) {
  std::vector<ColumnSpec> specs = {ColumnSpec::String("service"), ColumnSpec::Int64("code", true)};
  ColumnVector service(PhysicalType::kByteArray), code(PhysicalType::kInt64);
  for (int i = 0; i < 100000; ++i) {
    service.AppendBytes(i % 3 == 0 ? "checkout" : "frontend");
    if (i % 5 == 0) {
      code.AppendNull();
    } else {
      code.AppendInt64(200);
    }
  }
  WriterOptions options;
  const std::string bytes = WriteTable(specs, {service, code}, options, 100000);
  EXPECT_LT(bytes.size(), 2000u);
  StringSource source(bytes);
  auto reader = FileReader::Open(&source);
  ASSERT_TRUE(reader.ok());
  const ColumnMetaData& meta = *(*reader)->metadata().row_groups[0].columns[1].meta_data;
  EXPECT_EQ(meta.statistics->null_count, 20000);
  auto read = (*reader)->Read(std::vector<int>{1, 0}, 0, 100000);
  ASSERT_TRUE(read.ok());
  EXPECT_TRUE((*read)[0] == code);
  EXPECT_TRUE((*read)[1] == service);
  TempFile file(bytes);
  auto db = OpenDuckDb();
  query::QueryResult r = MustQuery(
      *db, fmt::format("SELECT service, count(*), count(code), min(code) FROM read_parquet('{}') "
                       "GROUP BY 1 ORDER BY 1",
                       file.path()));
  ASSERT_EQ(r.rows.size(), 2u);
  EXPECT_EQ(r.rows[0][0], Cell("checkout"));
  EXPECT_EQ(r.rows[0][1], Cell("33334"));
  EXPECT_EQ(r.rows[1][3], Cell("200"));
}

TEST(WriterTest, PerColumnOptionsChoosePlainAndZstdLevels) {
  std::vector<ColumnSpec> specs = {ColumnSpec::Int64("id"), ColumnSpec::String("service", true)};
  ColumnVector id(PhysicalType::kInt64), service(PhysicalType::kByteArray);
  for (int i = 0; i < 30000; ++i) {
    id.AppendInt64(int64_t{1} << 40 | i * 7919);
    if (i % 11 == 0) {
      service.AppendNull();
    } else {
      service.AppendBytes(i % 3 == 0 ? "checkout" : "frontend");
    }
  }
  WriterOptions options;
  options.column_options.assign(2, options.column);
  options.column_options[0].dictionary_enabled = false;  // PLAIN from the first value
  options.column_options[0].zstd_level = 1;
  options.column_options[1].zstd_level = 9;
  const std::string bytes = WriteTable(specs, {id, service}, options, 30000);
  StringSource source(bytes);
  auto reader = FileReader::Open(&source);
  ASSERT_TRUE(reader.ok()) << reader.status();
  const RowGroup& group = (*reader)->metadata().row_groups[0];
  const ColumnMetaData& id_meta = *group.columns[0].meta_data;
  EXPECT_FALSE(id_meta.dictionary_page_offset.has_value());
  EXPECT_EQ(id_meta.encodings, std::vector<Encoding>{Encoding::kPlain});
  EXPECT_TRUE(group.columns[1].meta_data->dictionary_page_offset.has_value());
  auto read = (*reader)->Read(std::vector<int>{0, 1}, 0, 30000);
  ASSERT_TRUE(read.ok()) << read.status();
  EXPECT_TRUE((*read)[0] == id);
  EXPECT_TRUE((*read)[1] == service);
  TempFile file(bytes);
  auto db = OpenDuckDb();
  query::QueryResult r = MustQuery(
      *db, fmt::format("SELECT count(*), sum(id % 1000003), count(service), "
                       "count(*) FILTER (WHERE service = 'checkout') FROM read_parquet('{}')",
                       file.path()));
  int64_t sum = 0, checkout = 0;
  for (int i = 0; i < 30000; ++i) {
    sum += (int64_t{1} << 40 | i * 7919) % 1000003;
    if (i % 11 != 0 && i % 3 == 0) ++checkout;
  }
  ASSERT_EQ(r.rows.size(), 1u);
  EXPECT_EQ(r.rows[0][0], Cell("30000"));
  EXPECT_EQ(r.rows[0][1], Cell(std::to_string(sum)));
  EXPECT_EQ(r.rows[0][2], Cell(std::to_string(30000 - (30000 + 10) / 11)));
  EXPECT_EQ(r.rows[0][3], Cell(std::to_string(checkout)));

  options.column_options.resize(1);
  std::string ignored;
  StringSink sink(&ignored);
  EXPECT_FALSE(FileWriter::Open(specs, options, &sink).ok());
}

// Rows that name the same elements (a resource's attributes on every span
// of that resource) are remembered and repeated; rows sharing only a
// first element, null elements, slices over several WriteBatch calls and a
// dictionary overflow midway must all still come back exactly.
TEST(WriterTest, SharedListRowsRoundTrip) {
  std::vector<ColumnSpec> specs = {
      ColumnSpec::List(ColumnSpec::String("keys", true), true),
      ColumnSpec::List(ColumnSpec::Int64("values")),
  };
  ColumnVector keys = ColumnVector::List(PhysicalType::kByteArray);
  ColumnVector values = ColumnVector::List(PhysicalType::kInt64);
  // 40 "resources" of 0..7 elements each, shared by the rows.
  std::vector<std::pair<uint64_t, uint64_t>> groups;
  for (int g = 0; g < 40; ++g) {
    const uint64_t begin = keys.element_count();
    const int n = g % 8;
    for (int k = 0; k < n; ++k) {
      if ((g + k) % 5 == 0) {
        keys.AppendNull();
      } else {
        keys.AppendBytes(fmt::format("key-{}-{}", g % 9, k));
      }
      values.AppendInt64(g * 100 + k);
    }
    groups.emplace_back(begin, n);
  }
  for (int row = 0; row < 20000; ++row) {
    const auto [begin, count] = groups[(row * 7) % groups.size()];
    if (row % 97 == 0) {
      keys.AppendNullList();
    } else if (row % 13 == 0 && count > 1) {
      keys.AppendList(begin, count - 1);  // same first element, shorter
    } else {
      keys.AppendList(begin, count);
    }
    values.AppendList(begin, count);
  }
  for (size_t dictionary_limit : {size_t{1} << 20, size_t{200}}) {
    WriterOptions options;
    options.column.dictionary_bytes_limit = dictionary_limit;
    options.column.data_page_max_rows = 3000;
    for (size_t batch_rows : {size_t{20000}, size_t{4500}}) {
      const std::string bytes = WriteTable(specs, {keys, values}, options, batch_rows);
      parquet_testing::ExpectReaderReturnsTable(bytes, specs, {keys, values}, 5, 10, 5000);
    }
  }
  const std::string bytes = WriteTable(specs, {keys, values}, WriterOptions(), 20000);
  TempFile file(bytes);
  auto db = OpenDuckDb();
  query::QueryResult r = MustQuery(
      *db, fmt::format("SELECT count(*), count(keys), sum(len(keys)), sum(list_sum(\"values\")) "
                       "FROM read_parquet('{}')",
                       file.path()));
  int64_t present = 0, elements = 0, sum = 0;
  for (int row = 0; row < 20000; ++row) {
    for (uint64_t k = 0; k < values.lists[row].count; ++k) {
      sum += values.int64s[values.lists[row].begin + k];
    }
    if (keys.is_null_list(row)) continue;
    ++present;
    elements += static_cast<int64_t>(keys.lists[row].count);
  }
  ASSERT_EQ(r.rows.size(), 1u);
  EXPECT_EQ(r.rows[0][0], Cell("20000"));
  EXPECT_EQ(r.rows[0][1], Cell(std::to_string(present)));
  EXPECT_EQ(r.rows[0][2], Cell(std::to_string(elements)));
  EXPECT_EQ(r.rows[0][3], Cell(std::to_string(sum)));
}

TEST(WriterTest, LongStringStatisticsAreTruncatedBounds) {
  std::vector<ColumnSpec> specs = {ColumnSpec::String("s")};
  ColumnVector s(PhysicalType::kByteArray);
  s.AppendBytes(std::string(100, 'b') + "é");
  s.AppendBytes(std::string(100, 'y') + "z");
  const std::string bytes = WriteTable(specs, {s}, WriterOptions{}, 10);
  StringSource source(bytes);
  auto reader = FileReader::Open(&source);
  ASSERT_TRUE(reader.ok());
  const Statistics& stats = *(*reader)->metadata().row_groups[0].columns[0].meta_data->statistics;
  EXPECT_EQ(stats.min_value, std::string(64, 'b'));
  EXPECT_EQ(stats.max_value, std::string(63, 'y') + "z");
  EXPECT_EQ(stats.is_min_value_exact, false);
  EXPECT_EQ(stats.is_max_value_exact, false);
  TempFile file(bytes);
  auto db = OpenDuckDb();
  query::QueryResult r =
      MustQuery(*db, fmt::format("SELECT count(*) FROM read_parquet('{}') WHERE s > '{}'",
                                 file.path(), std::string(100, 'y')));
  ASSERT_EQ(r.rows.size(), 1u);
  EXPECT_EQ(r.rows[0][0], Cell("1"));
}

TEST(WriterTest, RejectsBatchesThatDoNotFitTheSchema) {
  std::string bytes;
  StringSink sink(&bytes);
  auto writer = FileWriter::Open({ColumnSpec::Int64("a"), ColumnSpec::FixedBytes("f", 4)},
                                 WriterOptions{}, &sink);
  ASSERT_TRUE(writer.ok());
  ColumnVector a(PhysicalType::kInt64), f(PhysicalType::kFixedLenByteArray);
  a.AppendNull();
  f.AppendBytes("abcd");
  std::vector<ColumnVector> batch = {a, f};
  EXPECT_EQ((*writer)->WriteBatch(batch).code(), absl::StatusCode::kInvalidArgument);
  ColumnVector a2(PhysicalType::kInt64), f2(PhysicalType::kFixedLenByteArray);
  a2.AppendInt64(1);
  f2.AppendBytes("abc");
  batch = {a2, f2};
  EXPECT_EQ((*writer)->WriteBatch(batch).code(), absl::StatusCode::kInvalidArgument);
  EXPECT_FALSE(
      FileWriter::Open({ColumnSpec::Int64("a"), ColumnSpec::Int64("a")}, WriterOptions{}, &sink)
          .ok());
  ColumnSpec bad = ColumnSpec::String("x");
  bad.type = PhysicalType::kInt64;
  EXPECT_FALSE(FileWriter::Open({bad}, WriterOptions{}, &sink).ok());
}

TEST(WriterTest, SinkErrorsFailTheWriter) {
  int calls = 0;
  CallbackSink sink([&](std::string_view) {
    return ++calls > 2 ? absl::UnavailableError("disk full") : absl::OkStatus();
  });
  auto writer = FileWriter::Open({ColumnSpec::Int64("a")}, WriterOptions{}, &sink);
  ASSERT_TRUE(writer.ok());
  ColumnVector a(PhysicalType::kInt64);
  for (int i = 0; i < 100; ++i) a.AppendInt64(i);
  std::vector<ColumnVector> batch = {a};
  ASSERT_TRUE((*writer)->WriteBatch(batch).ok());
  EXPECT_EQ((*writer)->Close().code(), absl::StatusCode::kUnavailable);
  EXPECT_EQ((*writer)->WriteBatch(batch).code(), absl::StatusCode::kUnavailable);
}

// ---- Corrupt files ----

std::string SmallFile() {
  const std::vector<TestColumn> schema = TestSchema();
  WriterOptions options;
  options.column.data_page_max_rows = 20;
  options.row_group_max_rows = 50;
  return WriteTable(Specs(schema), RandomTable(schema, 120, 9), options, 120);
}

// Opens and reads everything; returns the first error.
absl::Status ReadAll(const std::string& bytes) {
  StringSource source(bytes);
  absl::StatusOr<std::unique_ptr<FileReader>> reader = FileReader::Open(&source);
  if (!reader.ok()) return reader.status();
  std::vector<int> all;
  for (size_t c = 0; c < (*reader)->columns().size(); ++c) all.push_back(static_cast<int>(c));
  return (*reader)->Read(all, 0, (*reader)->num_rows()).status();
}

TEST(CorruptFileTest, EveryTruncationIsAnError) {
  const std::string bytes = SmallFile();
  ASSERT_TRUE(ReadAll(bytes).ok());
  for (size_t n = 0; n < bytes.size(); n += (n < 64 || n > bytes.size() - 600) ? 1 : 97) {
    absl::Status s = ReadAll(bytes.substr(0, n));
    ASSERT_FALSE(s.ok()) << n;
    EXPECT_EQ(s.code(), absl::StatusCode::kDataLoss) << s;
  }
}

TEST(CorruptFileTest, FooterByteFlipsNeverCrash) {
  const std::string bytes = SmallFile();
  uint32_t footer_length;
  std::memcpy(&footer_length, bytes.data() + bytes.size() - 8, 4);
  const size_t footer_start = bytes.size() - 8 - footer_length;
  int errors = 0;
  for (size_t i = footer_start; i < bytes.size(); ++i) {
    std::string corrupt = bytes;
    corrupt[i] = static_cast<char>(corrupt[i] ^ (i % 2 ? 0x01 : 0xFF));
    errors += !ReadAll(corrupt).ok();
  }
  EXPECT_GT(errors, 0);
}

TEST(CorruptFileTest, DataByteFlipsNeverCrash) {
  const std::string bytes = SmallFile();
  std::mt19937_64 rng(11);
  for (int trial = 0; trial < 1500; ++trial) {
    std::string corrupt = bytes;
    const size_t i = 4 + rng() % (bytes.size() - 12);
    corrupt[i] = static_cast<char>(corrupt[i] ^ (1 << (rng() % 8)));
    (void)ReadAll(corrupt);
  }
}

TEST(CorruptFileTest, BadPageHeaderIsDataLossNamingTheOffset) {
  std::string bytes = SmallFile();
  StringSource source(bytes);
  auto reader = FileReader::Open(&source);
  ASSERT_TRUE(reader.ok());
  const ColumnMetaData& meta = *(*reader)->metadata().row_groups[0].columns[0].meta_data;
  const int64_t page = meta.dictionary_page_offset.value_or(meta.data_page_offset);
  std::string corrupt = bytes;
  corrupt[page] = '\x0f';  // wire type 15 does not exist
  absl::Status s = ReadAll(corrupt);
  ASSERT_EQ(s.code(), absl::StatusCode::kDataLoss) << s;
  EXPECT_NE(s.message().find(fmt::format("offset {}", page)), absl::string_view::npos) << s;
  corrupt = bytes;
  corrupt.replace(0, 4, "PAR2");
  EXPECT_EQ(ReadAll(corrupt).code(), absl::StatusCode::kDataLoss);
}

// ---- Page index (OffsetIndex) ----

// Rewrites `bytes` with every chunk's OffsetIndex passed through `mutate`
// (which may clear page_locations to drop the index), re-serializing the
// indexes and the footer.
std::string RewriteOffsetIndexes(
    const std::string& bytes,
    const std::function<void(size_t group, size_t column, std::optional<OffsetIndex>*)>& mutate) {
  StringSource source(bytes);
  auto reader = FileReader::Open(&source);
  EXPECT_TRUE(reader.ok());
  FileMetaData metadata = (*reader)->metadata();
  int64_t indexes_start = INT64_MAX;
  for (const RowGroup& group : metadata.row_groups) {
    for (const ColumnChunk& chunk : group.columns) {
      EXPECT_TRUE(chunk.offset_index_offset.has_value());
      indexes_start = std::min(indexes_start, *chunk.offset_index_offset);
    }
  }
  std::string out = bytes.substr(0, static_cast<size_t>(indexes_start));
  for (size_t g = 0; g < metadata.row_groups.size(); ++g) {
    for (size_t c = 0; c < metadata.row_groups[g].columns.size(); ++c) {
      ColumnChunk& chunk = metadata.row_groups[g].columns[c];
      absl::StatusOr<OffsetIndex> parsed = ParseOffsetIndex(
          std::string_view(bytes).substr(static_cast<size_t>(*chunk.offset_index_offset),
                                         static_cast<size_t>(*chunk.offset_index_length)));
      EXPECT_TRUE(parsed.ok()) << parsed.status();
      std::optional<OffsetIndex> index = *parsed;
      mutate(g, c, &index);
      chunk.offset_index_offset.reset();
      chunk.offset_index_length.reset();
      if (!index) continue;
      std::string serialized;
      SerializeOffsetIndex(*index, &serialized);
      chunk.offset_index_offset = static_cast<int64_t>(out.size());
      chunk.offset_index_length = static_cast<int32_t>(serialized.size());
      out += serialized;
    }
  }
  std::string footer;
  SerializeFileMetaData(metadata, &footer);
  const uint32_t length = static_cast<uint32_t>(footer.size());
  out += footer;
  out.append(reinterpret_cast<const char*>(&length), 4);
  out += "PAR1";
  return out;
}

TEST(OffsetIndexTest, EveryChunkListsItsDataPagesAndFirstRows) {
  const std::string bytes = SmallFile();
  StringSource source(bytes);
  auto reader = FileReader::Open(&source);
  ASSERT_TRUE(reader.ok());
  for (const RowGroup& group : (*reader)->metadata().row_groups) {
    for (size_t c = 0; c < group.columns.size(); ++c) {
      const ColumnChunk& chunk = group.columns[c];
      ASSERT_TRUE(chunk.offset_index_offset && chunk.offset_index_length);
      absl::StatusOr<OffsetIndex> index = ParseOffsetIndex(
          std::string_view(bytes).substr(static_cast<size_t>(*chunk.offset_index_offset),
                                         static_cast<size_t>(*chunk.offset_index_length)));
      ASSERT_TRUE(index.ok()) << index.status();
      // Walk the chunk's pages and compare.
      const ColumnMetaData& meta = *chunk.meta_data;
      int64_t offset = meta.dictionary_page_offset.value_or(meta.data_page_offset);
      const int64_t end = offset + meta.total_compressed_size;
      std::vector<PageLocation> walked;
      int64_t row = 0;
      while (offset < end) {
        size_t consumed = 0;
        absl::StatusOr<PageHeader> header =
            ParsePageHeader(std::string_view(bytes).substr(static_cast<size_t>(offset)), &consumed);
        ASSERT_TRUE(header.ok());
        const int64_t size = static_cast<int64_t>(consumed) + header->compressed_page_size;
        if (header->type == PageType::kDataPage) {
          walked.push_back({offset, static_cast<int32_t>(size), row});
          row += header->data_page_header->num_values;  // flat schema: values are rows
        }
        offset += size;
      }
      EXPECT_EQ(index->page_locations, walked) << "column " << c;
      if (group.num_rows > 20) EXPECT_GT(walked.size(), 1u);
    }
  }
}

TEST(OffsetIndexTest, FilesWithoutOneReadTheSame) {
  const std::string bytes = SmallFile();
  const std::string stripped = RewriteOffsetIndexes(
      bytes, [](size_t, size_t, std::optional<OffsetIndex>* index) { index->reset(); });
  const std::vector<TestColumn> schema = TestSchema();
  const std::vector<ColumnVector> table = RandomTable(schema, 120, 9);
  ExpectReaderReturnsTable(bytes, Specs(schema), table, 3, 200, 40);
  ExpectReaderReturnsTable(stripped, Specs(schema), table, 3, 200, 40);
}

TEST(OffsetIndexTest, CorruptIndexIsDataLossNamingFileAndProblem) {
  const std::string bytes = SmallFile();
  struct Case {
    const char* what;
    std::function<void(OffsetIndex*)> mutate;
  };
  const std::vector<Case> cases = {
      {"is not 0", [](OffsetIndex* i) { i->page_locations[0].first_row_index = 1; }},
      {"is not increasing", [](OffsetIndex* i) { i->page_locations[1].first_row_index = 0; }},
      {"past the row group",
       [](OffsetIndex* i) { i->page_locations.back().first_row_index = 1000; }},
      {"before the end of the previous page",
       [](OffsetIndex* i) { i->page_locations[1].offset = i->page_locations[0].offset; }},
      {"do not fit the column chunk",
       [](OffsetIndex* i) { i->page_locations.back().compressed_page_size = 1 << 30; }},
      {"do not fit the column chunk",
       [](OffsetIndex* i) { i->page_locations[0].compressed_page_size = 0; }},
      {"no pages", [](OffsetIndex* i) { i->page_locations.clear(); }},
      {"do not fit the column chunk",
       [](OffsetIndex* i) { i->page_locations[0].compressed_page_size -= 1; }},
      {"before the end of the previous page",
       [](OffsetIndex* i) { i->page_locations[0].compressed_page_size += 1; }},
      {"where the offset index says",
       [](OffsetIndex* i) { i->page_locations[1].first_row_index += 1; }},
  };
  for (const Case& c : cases) {
    const std::string corrupt =
        RewriteOffsetIndexes(bytes, [&](size_t g, size_t column, std::optional<OffsetIndex>* i) {
          if (g == 1 && column == 2) c.mutate(&**i);
        });
    StringSource source(corrupt);
    ReaderOptions options;
    options.file_name = "bad.parquet";
    auto reader = FileReader::Open(&source, options);
    ASSERT_TRUE(reader.ok()) << reader.status();
    absl::Status s = (*reader)->ReadColumn(2, 0, (*reader)->num_rows()).status();
    ASSERT_EQ(s.code(), absl::StatusCode::kDataLoss) << c.what << ": " << s;
    EXPECT_NE(s.message().find("bad.parquet"), absl::string_view::npos) << s;
    EXPECT_NE(s.message().find(c.what), absl::string_view::npos) << s;
  }
  // An index range outside the file's data is caught when opening.
  const std::string outside =
      RewriteOffsetIndexes(bytes, [](size_t, size_t, std::optional<OffsetIndex>*) {});
  StringSource source(outside);
  auto reader = FileReader::Open(&source);
  ASSERT_TRUE(reader.ok());
  FileMetaData metadata = (*reader)->metadata();
  metadata.row_groups[0].columns[0].offset_index_offset = static_cast<int64_t>(outside.size());
  std::string footer;
  SerializeFileMetaData(metadata, &footer);
  std::string bad = outside.substr(
      0, static_cast<size_t>(*metadata.row_groups.back().columns.back().offset_index_offset +
                             *metadata.row_groups.back().columns.back().offset_index_length));
  const uint32_t length = static_cast<uint32_t>(footer.size());
  bad += footer;
  bad.append(reinterpret_cast<const char*>(&length), 4);
  bad += "PAR1";
  StringSource bad_source(bad);
  EXPECT_EQ(FileReader::Open(&bad_source).status().code(), absl::StatusCode::kDataLoss);
}

// ---- Shared layouts (FileReader::ReadLayout) ----

// Every column of rows [begin, end), or the error.
absl::StatusOr<std::vector<ColumnVector>> ReadAll(FileReader& reader, int64_t begin, int64_t end) {
  std::vector<int> all;
  for (size_t c = 0; c < reader.columns().size(); ++c) all.push_back(static_cast<int>(c));
  return reader.Read(all, begin, end);
}

TEST(FileLayoutTest, ReadersSharingALayoutReadLikeAFreshReader) {
  const std::string bytes = SmallFile();
  StringSource source(bytes);
  absl::StatusOr<std::shared_ptr<const FileLayout>> layout = FileReader::ReadLayout(&source);
  ASSERT_TRUE(layout.ok()) << layout.status();
  const FileLayout& l = **layout;
  EXPECT_EQ(l.file_size, bytes.size());
  ASSERT_EQ(l.offset_indexes.size(), l.metadata.row_groups.size() * l.columns.size());
  for (const std::optional<OffsetIndex>& index : l.offset_indexes) {
    ASSERT_TRUE(index.has_value());
    EXPECT_FALSE(index->page_locations.empty());
  }
  // The footer alone is bigger than nothing; the estimate counts it and the
  // page locations.
  EXPECT_GT(l.MemoryBytes(), l.offset_indexes.size() * sizeof(PageLocation));

  auto fresh = FileReader::Open(&source);
  ASSERT_TRUE(fresh.ok());
  const int64_t rows = (*fresh)->num_rows();
  for (auto [begin, end] : std::vector<std::pair<int64_t, int64_t>>{
           {0, rows}, {3, 41}, {49, 51}, {rows - 1, rows}, {7, 7}}) {
    auto shared = FileReader::Open(&source, *layout);
    ASSERT_TRUE(shared.ok()) << shared.status();
    EXPECT_EQ((*shared)->layout(), *layout);
    auto want = ReadAll(**fresh, begin, end);
    auto got = ReadAll(**shared, begin, end);
    ASSERT_TRUE(want.ok()) << want.status();
    ASSERT_TRUE(got.ok()) << got.status();
    ASSERT_EQ(got->size(), want->size());
    for (size_t c = 0; c < want->size(); ++c) {
      EXPECT_TRUE((*got)[c] == (*want)[c]) << "rows [" << begin << ", " << end << ") column " << c;
    }
  }
}

TEST(FileReaderTest, KeptPagesReadLikeAFreshReader) {
  // 120 rows, 20-row pages, 50-row row groups: single rows and short
  // ranges in any order, pages shared or not, across row groups.
  const std::string bytes = SmallFile();
  StringSource source(bytes);
  auto fresh = FileReader::Open(&source);
  auto keeping = FileReader::Open(&source);
  ASSERT_TRUE(fresh.ok() && keeping.ok());
  (*keeping)->KeepLastPages(true);
  const int64_t rows = (*fresh)->num_rows();
  std::vector<std::pair<int64_t, int64_t>> ranges = {{0, 1}, {1, 2},           {19, 21}, {5, 6},
                                                     {5, 6}, {49, 51},         {50, 51}, {3, 41},
                                                     {0, 1}, {rows - 1, rows}, {7, 7}};
  for (int64_t r = 0; r < rows; r += 7) ranges.emplace_back(r, r + 1);
  for (int round = 0; round < 2; ++round) {
    for (auto [begin, end] : ranges) {
      auto want = ReadAll(**fresh, begin, end);
      auto got = ReadAll(**keeping, begin, end);
      ASSERT_TRUE(want.ok()) << want.status();
      ASSERT_TRUE(got.ok()) << got.status();
      ASSERT_EQ(got->size(), want->size());
      for (size_t c = 0; c < want->size(); ++c) {
        EXPECT_TRUE((*got)[c] == (*want)[c])
            << "round " << round << " rows [" << begin << ", " << end << ") column " << c;
      }
    }
    // Off, then on again: nothing kept from before is used.
    (*keeping)->KeepLastPages(false);
    (*keeping)->KeepLastPages(true);
  }
}

TEST(FileLayoutTest, FileWithoutOffsetIndexesSharesItsFooter) {
  const std::string stripped = RewriteOffsetIndexes(
      SmallFile(), [](size_t, size_t, std::optional<OffsetIndex>* index) { index->reset(); });
  StringSource source(stripped);
  auto layout = FileReader::ReadLayout(&source);
  ASSERT_TRUE(layout.ok()) << layout.status();
  for (const std::optional<OffsetIndex>& index : (*layout)->offset_indexes) {
    EXPECT_FALSE(index.has_value());
  }
  auto fresh = FileReader::Open(&source);
  auto shared = FileReader::Open(&source, *layout);
  ASSERT_TRUE(fresh.ok() && shared.ok());
  auto want = ReadAll(**fresh, 10, 90);
  auto got = ReadAll(**shared, 10, 90);
  ASSERT_TRUE(want.ok() && got.ok());
  for (size_t c = 0; c < want->size(); ++c) EXPECT_TRUE((*got)[c] == (*want)[c]) << c;
}

TEST(FileLayoutTest, ReadLayoutChecksEveryOffsetIndex) {
  // Only the last chunk's index is bad: a lazy reader would not notice it
  // before reading that chunk, ReadLayout must.
  const std::string corrupt =
      RewriteOffsetIndexes(SmallFile(), [](size_t g, size_t column, std::optional<OffsetIndex>* i) {
        if (g == 2 && column + 1 == TestSchema().size())
          (*i)->page_locations[0].first_row_index = 1;
      });
  StringSource source(corrupt);
  ReaderOptions options;
  options.file_name = "bad.parquet";
  ASSERT_TRUE(FileReader::Open(&source, options).ok());
  absl::Status s = FileReader::ReadLayout(&source, options).status();
  ASSERT_EQ(s.code(), absl::StatusCode::kDataLoss) << s;
  EXPECT_NE(s.message().find("bad.parquet"), absl::string_view::npos) << s;
  EXPECT_NE(s.message().find("is not 0"), absl::string_view::npos) << s;
}

TEST(FileLayoutTest, LayoutOfAnotherSizeIsDataLoss) {
  const std::string bytes = SmallFile();
  StringSource source(bytes);
  auto layout = FileReader::ReadLayout(&source);
  ASSERT_TRUE(layout.ok());
  const std::string longer = bytes + "x";
  StringSource other(longer);
  ReaderOptions options;
  options.file_name = "grown.parquet";
  absl::Status s = FileReader::Open(&other, *layout, options).status();
  ASSERT_EQ(s.code(), absl::StatusCode::kDataLoss) << s;
  EXPECT_NE(s.message().find("grown.parquet"), absl::string_view::npos) << s;
  EXPECT_EQ(FileReader::Open(&source, nullptr).status().code(), absl::StatusCode::kInvalidArgument);
}

// A small file with LIST columns (nullable elements, dictionary and PLAIN)
// and several pages per chunk.
std::string SmallListFile() {
  const std::vector<ColumnSpec> specs = {ColumnSpec::List(ColumnSpec::String("tags", true)),
                                         ColumnSpec::List(ColumnSpec::Int64("times")),
                                         ColumnSpec::Int64("id", true)};
  ColumnVector tags = ColumnVector::List(PhysicalType::kByteArray);
  ColumnVector times = ColumnVector::List(PhysicalType::kInt64);
  ColumnVector ids(PhysicalType::kInt64);
  for (int row = 0; row < 90; ++row) {
    tags.AppendList(tags.element_count(), static_cast<uint64_t>(row % 4));
    for (int e = 0; e < row % 4; ++e) {
      if ((row + e) % 5 == 0) {
        tags.AppendNull();
      } else {
        tags.AppendBytes(fmt::format("t{}", (row + e) % 7));
      }
    }
    times.AppendList(times.element_count(), static_cast<uint64_t>(row % 3));
    for (int e = 0; e < row % 3; ++e) times.AppendInt64(int64_t{row} * 1000 + e);
    if (row % 6 == 0) {
      ids.AppendNull();
    } else {
      ids.AppendInt64(row);
    }
  }
  WriterOptions options;
  options.column.data_page_max_rows = 16;
  options.row_group_max_rows = 40;
  std::vector<ColumnVector> table = {tags, times, ids};
  return WriteTable(specs, table, options, 90);
}

TEST(OffsetIndexTest, ListFileReadsEveryRangeWithAndWithoutIndex) {
  const std::string bytes = SmallListFile();
  const std::string stripped = RewriteOffsetIndexes(
      bytes, [](size_t, size_t, std::optional<OffsetIndex>* index) { index->reset(); });
  StringSource source(bytes), stripped_source(stripped);
  auto reader = FileReader::Open(&source);
  auto stripped_reader = FileReader::Open(&stripped_source);
  ASSERT_TRUE(reader.ok() && stripped_reader.ok());
  const std::vector<int> all = {0, 1, 2};
  for (int64_t a = 0; a <= 90; a += 7) {
    for (int64_t b = a; b <= 90; b += 11) {
      auto with = (*reader)->Read(all, a, b);
      auto without = (*stripped_reader)->Read(all, a, b);
      ASSERT_TRUE(with.ok()) << with.status().ToString() << " [" << a << ", " << b << ")";
      ASSERT_TRUE(without.ok()) << without.status();
      for (size_t c = 0; c < all.size(); ++c) {
        EXPECT_TRUE((*with)[c] == (*without)[c]) << c << " [" << a << ", " << b << ")";
        EXPECT_EQ((*with)[c].size(), static_cast<size_t>(b - a));
      }
    }
  }
}

// ---- Dictionary page caches (ReaderOptions::dictionary_cache) ----

// A DictionaryPageCache that keeps every page offered (the test's own
// bound is the file).
class MapDictionaryCache final : public DictionaryPageCache {
 public:
  std::shared_ptr<const DictionaryPage> FindDictionary(size_t chunk) const override {
    ++finds_;
    auto it = pages_.find(chunk);
    return it == pages_.end() ? nullptr : it->second;
  }
  void OfferDictionary(size_t chunk, std::shared_ptr<const DictionaryPage> page) const override {
    ++offers_;
    pages_.emplace(chunk, std::move(page));
  }
  mutable std::map<size_t, std::shared_ptr<const DictionaryPage>> pages_;
  mutable int finds_ = 0;
  // Pages read and decompressed by a reader (it offers only those).
  mutable int offers_ = 0;
};

// Counts the bytes read through it.
class CountingSource final : public RandomAccessSource {
 public:
  explicit CountingSource(std::string_view bytes) : inner_(bytes) {}
  uint64_t size() const override { return inner_.size(); }
  absl::Status ReadAt(uint64_t offset, size_t length, std::string* out) override {
    bytes_read_ += length;
    return inner_.ReadAt(offset, length, out);
  }
  StringSource inner_;
  size_t bytes_read_ = 0;
};

TEST(DictionaryCacheTest, CachedDictionariesReadTheSameRowsWithFewerBytes) {
  for (const std::string& bytes : {SmallFile(), SmallListFile()}) {
    CountingSource source(bytes);
    auto layout = FileReader::ReadLayout(&source);
    ASSERT_TRUE(layout.ok()) << layout.status();
    auto fresh = FileReader::Open(&source);
    ASSERT_TRUE(fresh.ok());
    const int64_t rows = (*fresh)->num_rows();
    MapDictionaryCache cache;
    ReaderOptions options;
    options.dictionary_cache = &cache;
    size_t dictionary_chunks = 0;
    for (const RowGroup& group : (*layout)->metadata.row_groups) {
      for (const ColumnChunk& chunk : group.columns) {
        dictionary_chunks += chunk.meta_data->dictionary_page_offset.has_value();
      }
    }
    ASSERT_GT(dictionary_chunks, 0u);
    for (auto [begin, end] : std::vector<std::pair<int64_t, int64_t>>{
             {3, 5}, {3, 5}, {0, rows}, {rows - 2, rows}, {rows / 2, rows / 2 + 1}, {0, rows}}) {
      auto want = ReadAll(**fresh, begin, end);
      ASSERT_TRUE(want.ok()) << want.status();
      // A cold reader and a warm one: same rows, and the warm one neither
      // reads nor decompresses a dictionary page it read before.
      size_t cold_bytes = 0;
      for (int pass = 0; pass < 2; ++pass) {
        auto reader = FileReader::Open(&source, *layout, options);
        ASSERT_TRUE(reader.ok()) << reader.status();
        const size_t before = source.bytes_read_;
        const int offers = cache.offers_;
        auto got = ReadAll(**reader, begin, end);
        ASSERT_TRUE(got.ok()) << got.status();
        ASSERT_EQ(got->size(), want->size());
        for (size_t c = 0; c < want->size(); ++c) {
          EXPECT_TRUE((*got)[c] == (*want)[c])
              << "rows [" << begin << ", " << end << ") column " << c << " pass " << pass;
        }
        if (pass == 0) {
          cold_bytes = source.bytes_read_ - before;
        } else {
          EXPECT_EQ(cache.offers_, offers) << "rows [" << begin << ", " << end << ")";
          EXPECT_LE(source.bytes_read_ - before, cold_bytes);
        }
        if (begin == 0 && end == rows) {
          // Every chunk has been read whole: every dictionary is cached.
          EXPECT_EQ(cache.pages_.size(), dictionary_chunks);
        }
      }
    }
    EXPECT_GT(cache.finds_, 0);
  }
}

TEST(DictionaryCacheTest, CachedPageIsCheckedLikeARead) {
  const std::string bytes = SmallFile();
  StringSource source(bytes);
  auto layout = FileReader::ReadLayout(&source);
  ASSERT_TRUE(layout.ok());
  MapDictionaryCache cache;
  ReaderOptions options;
  options.file_name = "cached.parquet";
  options.dictionary_cache = &cache;
  auto reader = FileReader::Open(&source, *layout, options);
  ASSERT_TRUE(reader.ok());
  const int64_t rows = (*reader)->num_rows();
  ASSERT_TRUE(ReadAll(**reader, 0, rows).ok());
  ASSERT_FALSE(cache.pages_.empty());
  // Every cached page claims more values than its body holds, or loses
  // the second half of its body (entries located past it), or has an
  // unsupported encoding: reads fail with an error, never a crash or a read
  // past the body.
  for (int damage = 0; damage < 3; ++damage) {
    for (auto& [chunk, page] : cache.pages_) {
      auto bad = std::make_shared<DictionaryPage>(*page);
      if (damage == 0) {
        bad->body.resize(bad->body.size() / 2);
        bad->header.num_values = 1 << 20;
      } else if (damage == 1) {
        bad->body.resize(bad->body.size() / 2);
      } else {
        bad->header.encoding = Encoding::kRle;
      }
      page = std::move(bad);
    }
    auto damaged = FileReader::Open(&source, *layout, options);
    ASSERT_TRUE(damaged.ok());
    absl::Status s = ReadAll(**damaged, 0, rows).status();
    ASSERT_FALSE(s.ok());
    EXPECT_NE(s.message().find("cached.parquet"), absl::string_view::npos) << s;
  }
}

// STRATA_WRITE_FUZZ_SEEDS=<dir> writes the fuzz corpus seeds that carry an
// OffsetIndex (fuzz/corpus/parquet_reader/*_offset_index.parquet).
TEST(OffsetIndexTest, WritesFuzzSeedsWhenAsked) {
  const char* dir = std::getenv("STRATA_WRITE_FUZZ_SEEDS");
  if (dir == nullptr) GTEST_SKIP() << "set STRATA_WRITE_FUZZ_SEEDS";
  for (const auto& [name, bytes] : std::vector<std::pair<std::string, std::string>>{
           {"flat_120_rows_offset_index.parquet", SmallFile()},
           {"lists_90_rows_offset_index.parquet", SmallListFile()}}) {
    std::ofstream out(std::string(dir) + "/" + name, std::ios::binary);
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    ASSERT_TRUE(out.good()) << name;
  }
}

}  // namespace
}  // namespace strata::parquet
