#include "control/sqlite_db.h"

#include <unistd.h>

#include <filesystem>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace strata::control {
namespace {

class SqliteDbTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("strata-sqlite-" + std::to_string(getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::filesystem::path dir_;
};

TEST_F(SqliteDbTest, OpensInWalModeAndKeepsRowsAcrossReopen) {
  const std::string path = (dir_ / "strata.sqlite").string();
  {
    auto db = SqliteDb::Open(path);
    ASSERT_TRUE(db.ok()) << db.status();
    auto mode = (*db)->Query("PRAGMA journal_mode");
    ASSERT_TRUE(mode.ok()) << mode.status();
    EXPECT_EQ((*mode)[0][0], "wal");
    ASSERT_TRUE((*db)->Exec("CREATE TABLE t(id INTEGER PRIMARY KEY, name TEXT)").ok());
    ASSERT_TRUE((*db)->Exec("INSERT INTO t(name) VALUES ('a'), (NULL)").ok());
  }
  auto db = SqliteDb::Open(path);
  ASSERT_TRUE(db.ok()) << db.status();
  auto rows = (*db)->Query("SELECT id, name FROM t ORDER BY id");
  ASSERT_TRUE(rows.ok()) << rows.status();
  ASSERT_EQ(rows->size(), 2u);
  EXPECT_EQ((*rows)[0][1], "a");
  EXPECT_FALSE((*rows)[1][1].has_value());
}

TEST_F(SqliteDbTest, BadSqlIsInvalidArgument) {
  auto db = SqliteDb::Open((dir_ / "strata.sqlite").string());
  ASSERT_TRUE(db.ok()) << db.status();
  absl::Status status = (*db)->Exec("CREATE TABL oops");
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(status.message()), ::testing::HasSubstr("syntax error"));
}

TEST_F(SqliteDbTest, UnopenablePathIsUnavailable) {
  auto db = SqliteDb::Open((dir_ / "missing-dir" / "strata.sqlite").string());
  ASSERT_FALSE(db.ok());
  EXPECT_EQ(db.status().code(), absl::StatusCode::kUnavailable);
}

}  // namespace
}  // namespace strata::control
