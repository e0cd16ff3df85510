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
