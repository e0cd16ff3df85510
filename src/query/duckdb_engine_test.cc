#include "query/duckdb_engine.h"

#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
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
  auto wrote =
      engine->Query("COPY (SELECT i AS id, 'row-' || i AS name FROM range(1000) t(i)) TO '" + file +
                    "' (FORMAT parquet)");
  ASSERT_TRUE(wrote.ok()) << wrote.status();
  auto read =
      engine->Query("SELECT count(*), sum(id), max(name) FROM read_parquet('" + file + "')");
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
  std::vector<ColumnSpec> specs = {ColumnSpec::Integer("u8", 8, false),
                                   ColumnSpec::Integer("u32", 32, false, true),
                                   ColumnSpec::Int32("i32"),
                                   ColumnSpec::Integer("u64", 64, false),
                                   ColumnSpec::Int64("i64", true),
                                   ColumnSpec::Double("d"),
                                   ColumnSpec::Boolean("b", true),
                                   ColumnSpec::String("s", true),
                                   ColumnSpec::FixedBytes("id", 2),
                                   ColumnSpec::List(ColumnSpec::String("keys")),
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
      "200",    "4000000000", "-7",        "18000000000000000000",
      "-1",     "0.25",       "true",      "héllo",
      "01FF",   "[a, b]",     "[5, NULL]", "UTINYINT",
      "UBIGINT"};
  EXPECT_EQ(first->rows.at(0), expected);
  absl::StatusOr<QueryResult> rest = (*engine)->Query(
      "SELECT count(*), sum(i32), count(u32), count(s), count(ints), sum(len(keys)) FROM t");
  ASSERT_TRUE(rest.ok()) << rest.status();
  std::vector<std::optional<std::string>> totals = {
      "3000", std::to_string(-7 + 2999 * 3000 / 2), "1", "1", "1", "2"};
  EXPECT_EQ(rest->rows.at(0), totals);
}

}  // namespace
}  // namespace strata::query

namespace strata::query {
namespace {

// A data directory laid out as QueryPool's: telemetry/days/ (the allowed
// directory) and query/tmp/ (the spill directory), removed afterwards.
class UserSqlDir {
 public:
  UserSqlDir()
      : root_(std::filesystem::temp_directory_path() /
              ("strata-user-sql-" + std::to_string(getpid()) + "-" + std::to_string(++count_))) {
    std::filesystem::remove_all(root_);
    std::filesystem::create_directories(root_ / "telemetry/days");
    std::filesystem::create_directories(root_ / "query/tmp");
  }
  ~UserSqlDir() { std::filesystem::remove_all(root_); }
  std::string days() const { return (root_ / "telemetry/days").string(); }
  std::string tmp() const { return (root_ / "query/tmp").string(); }

  // Every path under the directory, with each file's size.
  std::vector<std::string> Tree() const {
    std::vector<std::string> out;
    for (const auto& entry : std::filesystem::recursive_directory_iterator(root_)) {
      out.push_back(entry.path().string() +
                    (entry.is_regular_file() ? " " + std::to_string(entry.file_size()) : "/"));
    }
    std::sort(out.begin(), out.end());
    return out;
  }

  std::unique_ptr<QueryDatabase> Open(uint64_t memory_limit_bytes = 256ULL << 20) const {
    auto database = QueryDatabase::Open({.allowed_directories = {days() + "/"},
                                         .temp_directory = tmp(),
                                         .memory_limit_bytes = memory_limit_bytes,
                                         .threads = 1});
    EXPECT_TRUE(database.ok()) << database.status();
    return database.ok() ? std::move(database).value() : nullptr;
  }

 private:
  static inline int count_ = 0;
  std::filesystem::path root_;
};

// Every kind of statement DuckDB has that is not a read, aimed at the
// directories a query may reach (the allowed directory and the spill
// directory).
std::vector<std::string> NotReads(const UserSqlDir& dir) {
  const std::string days = dir.days();
  const std::string tmp = dir.tmp();
  return {
      "EXPORT DATABASE '" + days + "/junk'",
      "EXPORT DATABASE '" + tmp + "/junk' (FORMAT parquet)",
      "IMPORT DATABASE '" + days + "/import'",
      "COPY (SELECT 1) TO '" + days + "/out.csv'",
      "COPY (SELECT 1) TO '" + tmp + "/out.parquet' (FORMAT parquet)",
      "CREATE TABLE t AS SELECT 1 AS v",
      "CREATE TEMP TABLE t (v INTEGER)",
      "CREATE VIEW v AS SELECT 1",
      "CREATE OR REPLACE TEMP VIEW spans AS SELECT 1",
      "CREATE MACRO m(x) AS x + 1",
      "CREATE SEQUENCE s",
      "CREATE TYPE mood AS ENUM ('a', 'b')",
      "CREATE SCHEMA s",
      "CREATE INDEX i ON t (v)",
      "DROP VIEW spans",
      "DROP TABLE IF EXISTS t",
      "ALTER TABLE t ADD COLUMN w INTEGER",
      "ALTER VIEW spans RENAME TO s",
      "INSERT INTO t VALUES (1)",
      "UPDATE t SET v = 2",
      "DELETE FROM t",
      "MERGE INTO t USING (SELECT 1 AS v) s ON t.v = s.v WHEN MATCHED THEN DELETE",
      "TRUNCATE t",
      "ATTACH '" + days + "/attached.db' AS a",
      "ATTACH '" + tmp + "/attached.db' AS a",
      "DETACH a",
      "USE memory",
      "INSTALL json",
      "LOAD json",
      "LOAD '" + days + "/x.duckdb_extension'",
      "UPDATE EXTENSIONS",
      "SET memory_limit = '100GB'",
      "SET GLOBAL temp_directory = '" + days + "'",
      "SET VARIABLE x = 1",
      "RESET memory_limit",
      "PRAGMA database_list",
      "PRAGMA threads = 1",
      "PRAGMA enable_profiling",
      "PRAGMA import_database('" + days + "/import')",
      "CHECKPOINT",
      "FORCE CHECKPOINT",
      "VACUUM",
      "ANALYZE",
      "CALL pragma_version()",
      "CALL checkpoint()",
      "BEGIN TRANSACTION",
      "COMMIT",
      "ROLLBACK",
      "PREPARE p AS SELECT 1",
      "EXECUTE p",
      "DEALLOCATE p",
      "COMMENT ON VIEW spans IS 'x'",
      "PIVOT (SELECT 1 AS a) ON a",
      "SELECT 1; SELECT 2",
      "SELECT 1; EXPORT DATABASE '" + days + "/junk'",
      "EXPORT DATABASE '" + days + "/junk'; SELECT 1",
      "EXPLAIN EXPORT DATABASE '" + days + "/junk'",
      "EXPLAIN ANALYZE COPY (SELECT 1) TO '" + days + "/out.csv'",
      "EXPLAIN ANALYZE CREATE TABLE t AS SELECT 1",
      "/* a comment */ EXPORT DATABASE '" + days + "/junk'",
  };
}

TEST(QueryConnectionTest, EveryStatementThatIsNotAReadIsRefusedBeforeAnyFileIsCreated) {
  UserSqlDir dir;
  // A database export IMPORT would run: its load.sql writes a file.
  std::filesystem::create_directories(dir.days() + "/import");
  std::ofstream(dir.days() + "/import/schema.sql") << "CREATE TABLE imported (v INTEGER);\n";
  std::ofstream(dir.days() + "/import/load.sql")
      << "COPY (SELECT 1) TO '" << dir.days() << "/imported.csv';\n";
  auto database = dir.Open();
  ASSERT_NE(database, nullptr);
  auto connection = database->Connect();
  ASSERT_TRUE(connection.ok()) << connection.status();
  const std::vector<std::string> before = dir.Tree();
  for (const std::string& sql : NotReads(dir)) {
    const std::vector<std::string> tree = dir.Tree();
    auto result = (*connection)->Run(sql, {}, 10, 0, /*read_only=*/true);
    ASSERT_FALSE(result.ok()) << sql;
    EXPECT_EQ(result.status().code(), absl::StatusCode::kInvalidArgument)
        << sql << ": " << result.status();
    EXPECT_EQ(dir.Tree(), tree) << "after " << sql;
  }
  EXPECT_EQ(dir.Tree(), before);
  // The connection still reads.
  auto one = (*connection)->Run("SELECT 1 AS one", {}, 10, 0, true);
  ASSERT_TRUE(one.ok()) << one.status();
  EXPECT_EQ(one->rows.at(0).at(0), "1");
}

TEST(QueryConnectionTest, RefusalsSayWhy) {
  UserSqlDir dir;
  auto database = dir.Open();
  ASSERT_NE(database, nullptr);
  auto connection = database->Connect();
  ASSERT_TRUE(connection.ok()) << connection.status();
  auto message = [&](const std::string& sql) {
    auto result = (*connection)->Run(sql, {}, 10, 0, true);
    return result.ok() ? std::string("ok") : std::string(result.status().message());
  };
  EXPECT_THAT(message("PRAGMA database_list"), HasSubstr("not read-only"));
  EXPECT_THAT(message("EXPORT DATABASE '" + dir.days() + "/junk'"), HasSubstr("not read-only"));
  EXPECT_THAT(message("SELECT 1; SELECT 2"), HasSubstr("exactly one statement"));
  EXPECT_THAT(message("SELEC 1"), HasSubstr("syntax error"));
}

TEST(QueryConnectionTest, ReadsOfEveryShapeStillRun) {
  UserSqlDir dir;
  auto database = dir.Open();
  ASSERT_NE(database, nullptr);
  auto connection = database->Connect();
  ASSERT_TRUE(connection.ok()) << connection.status();
  for (const char* sql :
       {"SELECT 1", "  select 1;", "SELECT 1; -- done", "SELECT ';' /* ; */;", "FROM range(3)",
        "WITH x AS (SELECT 1 AS v) SELECT v FROM x", "DESCRIBE SELECT 1 AS a",
        "SUMMARIZE SELECT 1 AS a", "SHOW TABLES", "EXPLAIN SELECT 1", "EXPLAIN ANALYZE SELECT 1",
        "VALUES (1), (2)", "SELECT 1 UNION ALL SELECT 2"}) {
    auto result = (*connection)->Run(sql, {}, 10, 0, true);
    EXPECT_TRUE(result.ok()) << sql << ": " << result.status();
  }
}

TEST(QueryConnectionTest, AnswerStopsBeforeTheByteCapAndSaysSo) {
  UserSqlDir dir;
  auto database = dir.Open();
  ASSERT_NE(database, nullptr);
  auto connection = database->Connect();
  ASSERT_TRUE(connection.ok()) << connection.status();
  // 100 rows of 1,000 bytes against a 10,500-byte cap: 10 rows fit.
  auto capped =
      (*connection)->Run("SELECT repeat('x', 1000) AS x FROM range(100)", {}, 1000, 10'500, true);
  ASSERT_TRUE(capped.ok()) << capped.status();
  EXPECT_EQ(capped->rows.size(), 10u);
  EXPECT_TRUE(capped->truncated);
  EXPECT_EQ(capped->truncated_by, QueryResult::TruncatedBy::kBytes);
  // The row cap still says it was the rows.
  auto rows = (*connection)->Run("SELECT 1 FROM range(100)", {}, 5, 10'500, true);
  ASSERT_TRUE(rows.ok()) << rows.status();
  EXPECT_EQ(rows->rows.size(), 5u);
  EXPECT_TRUE(rows->truncated);
  EXPECT_EQ(rows->truncated_by, QueryResult::TruncatedBy::kRows);
  // The caps keep the statement's order: the top rows of an ORDER BY.
  auto ordered =
      (*connection)->Run("SELECT i FROM range(100000) t(i) ORDER BY i DESC", {}, 3, 10'500, true);
  ASSERT_TRUE(ordered.ok()) << ordered.status();
  EXPECT_EQ(ordered->rows, (std::vector<std::vector<std::optional<std::string>>>{
                               {"99999"}, {"99998"}, {"99997"}}));
  auto ordered_bytes =
      (*connection)
          ->Run("SELECT repeat('x', 1000 + i::INTEGER) AS x FROM range(100) t(i) ORDER BY i DESC",
                {}, 1000, 3'300, true);
  ASSERT_TRUE(ordered_bytes.ok()) << ordered_bytes.status();
  ASSERT_EQ(ordered_bytes->rows.size(), 3u);
  EXPECT_EQ(ordered_bytes->rows[0][0]->size(), 1099u);
  EXPECT_EQ(ordered_bytes->rows[2][0]->size(), 1097u);
  EXPECT_EQ(ordered_bytes->truncated_by, QueryResult::TruncatedBy::kBytes);
  // Under both caps nothing is cut.
  auto whole = (*connection)->Run("SELECT repeat('x', 1000) FROM range(10)", {}, 10, 10'500, true);
  ASSERT_TRUE(whole.ok()) << whole.status();
  EXPECT_EQ(whole->rows.size(), 10u);
  EXPECT_FALSE(whole->truncated);
}

TEST(QueryConnectionTest, ValuesRenderAsDuckDbCastsThemAndBlobsAsHex) {
  UserSqlDir dir;
  auto database = dir.Open();
  ASSERT_NE(database, nullptr);
  auto connection = database->Connect();
  ASSERT_TRUE(connection.ok()) << connection.status();
  auto result =
      (*connection)
          ->Run(
              "SELECT 0.1::DOUBLE AS d, TIMESTAMPTZ '2024-01-02 03:04:05.5+00' AS ts, "
              "['a''b', NULL] AS l, {'x': 1} AS s, '\\x00\\xAB'::BLOB AS b, NULL::INTEGER AS n, "
              "12.345::DECIMAL(18,3) AS dec, 1 AS d",
              {}, 10, 0, true);
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_EQ(result->columns, (std::vector<std::string>{"d", "ts", "l", "s", "b", "n", "dec", "d"}));
  EXPECT_EQ(result->types, (std::vector<std::string>{"DOUBLE", "TIMESTAMP WITH TIME ZONE",
                                                     "VARCHAR[]", "STRUCT(x INTEGER)", "BLOB",
                                                     "INTEGER", "DECIMAL(18,3)", "INTEGER"}));
  EXPECT_EQ(result->rows.at(0), (std::vector<std::optional<std::string>>{
                                    "0.1", "2024-01-02 03:04:05.5+00", "['a\\'b', NULL]",
                                    "{'x': 1}", "00ab", std::nullopt, "12.345", "1"}));
}

TEST(QueryConnectionTest, OutOfMemoryIsMarkedAndSaysHowToNarrowTheQuery) {
  UserSqlDir dir;
  auto database = dir.Open(64ULL << 20);
  ASSERT_NE(database, nullptr);
  auto connection = database->Connect();
  ASSERT_TRUE(connection.ok()) << connection.status();
  auto result =
      (*connection)->Run("SELECT length(list(i)) FROM range(100000000) t(i)", {}, 10, 0, true);
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.status().code(), absl::StatusCode::kResourceExhausted) << result.status();
  EXPECT_TRUE(IsQueryOutOfMemory(result.status())) << result.status();
  const std::string message(result.status().message());
  EXPECT_THAT(message, HasSubstr("Out of Memory"));
  EXPECT_THAT(message, HasSubstr("narrow"));
  EXPECT_THAT(message, ::testing::Not(HasSubstr("SET memory_limit")));
  EXPECT_FALSE(IsQueryOutOfMemory(absl::ResourceExhaustedError("all connections busy")));
}

}  // namespace
}  // namespace strata::query
