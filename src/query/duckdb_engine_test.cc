#include "query/duckdb_engine.h"

#include <unistd.h>

#include <filesystem>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace strata::query {
namespace {

using ::testing::HasSubstr;

std::unique_ptr<DuckDbEngine> OpenInMemory() {
  auto engine = DuckDbEngine::Open({});
  EXPECT_TRUE(engine.ok()) << engine.status();
  return std::move(engine).value();
}

TEST(DuckDbEngineTest, LinkedLibraryIsDuckDb144) {
  EXPECT_EQ(DuckDbEngine::LibraryVersion(), "v1.4.4");
  auto engine = OpenInMemory();
  auto result = engine->Query("SELECT version()");
  ASSERT_TRUE(result.ok()) << result.status();
  ASSERT_EQ(result->rows.size(), 1u);
  EXPECT_EQ(result->rows[0][0], "v1.4.4");
}

TEST(DuckDbEngineTest, WritesAndReadsBackAParquetFile) {
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / ("strata-duckdb-" + std::to_string(getpid()));
  std::filesystem::create_directories(dir);
  const std::string file = (dir / "points.parquet").string();
  auto engine = OpenInMemory();
  auto wrote = engine->Query("COPY (SELECT i AS id, 'row-' || i AS name FROM range(1000) t(i)) TO '" +
                             file + "' (FORMAT parquet)");
  ASSERT_TRUE(wrote.ok()) << wrote.status();
  auto read = engine->Query("SELECT count(*), sum(id), max(name) FROM read_parquet('" + file + "')");
  ASSERT_TRUE(read.ok()) << read.status();
  ASSERT_EQ(read->rows.size(), 1u);
  EXPECT_EQ(read->rows[0][0], "1000");
  EXPECT_EQ(read->rows[0][1], "499500");
  EXPECT_EQ(read->rows[0][2], "row-999");
  std::filesystem::remove_all(dir);
}

TEST(DuckDbEngineTest, NullsComeBackAsNullopt) {
  auto engine = OpenInMemory();
  auto result = engine->Query("SELECT NULL::INTEGER AS a, 7 AS b");
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_EQ(result->columns, (std::vector<std::string>{"a", "b"}));
  EXPECT_FALSE(result->rows[0][0].has_value());
  EXPECT_EQ(result->rows[0][1], "7");
}

TEST(DuckDbEngineTest, RejectedQueryIsInvalidArgumentWithDuckDbMessage) {
  auto engine = OpenInMemory();
  auto result = engine->Query("SELECT * FROM no_such_table");
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(result.status().message()), HasSubstr("no_such_table"));
}

TEST(DuckDbEngineTest, BadSettingFailsOpen) {
  EngineOptions options;
  options.memory_limit = "not-a-size";
  auto engine = DuckDbEngine::Open(options);
  EXPECT_FALSE(engine.ok());
}

}  // namespace
}  // namespace strata::query

namespace strata::query {
namespace {

TEST(DuckDbEngineAppendTest, CreateTableFromColumnsKeepsEveryTypeNullAndList) {
  absl::StatusOr<std::unique_ptr<DuckDbEngine>> engine = DuckDbEngine::Open({});
  ASSERT_TRUE(engine.ok()) << engine.status();
  using parquet::ColumnSpec;
  using parquet::ColumnVector;
  using parquet::PhysicalType;
  std::vector<ColumnSpec> specs = {
      ColumnSpec::Integer("u8", 8, false),       ColumnSpec::Integer("u32", 32, false, true),
      ColumnSpec::Int32("i32"),                  ColumnSpec::Integer("u64", 64, false),
      ColumnSpec::Int64("i64", true),            ColumnSpec::Double("d"),
      ColumnSpec::Boolean("b", true),            ColumnSpec::String("s", true),
      ColumnSpec::FixedBytes("id", 2),           ColumnSpec::List(ColumnSpec::String("keys")),
      ColumnSpec::List(ColumnSpec::Int64("ints", true), true)};
  std::vector<ColumnVector> columns;
  for (const ColumnSpec& spec : specs) {
    columns.push_back(spec.list ? ColumnVector::List(spec.type) : ColumnVector(spec.type));
  }
  // Row 0.
  columns[0].AppendInt32(200);
  columns[1].AppendInt32(static_cast<int32_t>(4000000000u));
  columns[2].AppendInt32(-7);
  columns[3].AppendInt64(static_cast<int64_t>(18000000000000000000ull));
  columns[4].AppendInt64(-1);
  columns[5].AppendDouble(0.25);
  columns[6].AppendBool(true);
  columns[7].AppendBytes("héllo");
  columns[8].AppendBytes(std::string("\x01\xff", 2));
  columns[9].AppendBytes("a");
  columns[9].AppendBytes("b");
  columns[9].AppendList(0, 2);
  columns[10].AppendInt64(5);
  columns[10].AppendNull();
  columns[10].AppendList(0, 2);
  // Rows 1..2999: nulls where optional, empty and null lists, enough rows to
  // need two data chunks.
  for (int r = 1; r < 3000; ++r) {
    columns[0].AppendInt32(r % 256);
    columns[1].AppendNull();
    columns[2].AppendInt32(r);
    columns[3].AppendInt64(r);
    columns[4].AppendNull();
    columns[5].AppendDouble(r / 2.0);
    columns[6].AppendNull();
    columns[7].AppendNull();
    columns[8].AppendBytes("zz");
    columns[9].AppendList(0, 0);
    columns[10].AppendNullList();
  }
  ASSERT_TRUE((*engine)->CreateTableFromColumns("t", specs, columns).ok());
  absl::StatusOr<QueryResult> first = (*engine)->Query(
      "SELECT u8, u32, i32, u64, i64, d, b, s, hex(id), keys::VARCHAR, ints::VARCHAR, typeof(u8), "
      "typeof(u64) "
      "FROM t LIMIT 1");
  ASSERT_TRUE(first.ok()) << first.status();
  std::vector<std::optional<std::string>> expected = {
      "200", "4000000000", "-7", "18000000000000000000", "-1", "0.25", "true", "héllo", "01FF",
      "[a, b]", "[5, NULL]", "UTINYINT", "UBIGINT"};
  EXPECT_EQ(first->rows.at(0), expected);
  absl::StatusOr<QueryResult> rest = (*engine)->Query(
      "SELECT count(*), sum(i32), count(u32), count(s), count(ints), sum(len(keys)) FROM t");
  ASSERT_TRUE(rest.ok()) << rest.status();
  std::vector<std::optional<std::string>> totals = {"3000", std::to_string(-7 + 2999 * 3000 / 2),
                                                    "1", "1", "1", "2"};
  EXPECT_EQ(rest->rows.at(0), totals);
}

}  // namespace
}  // namespace strata::query
