#include "control/sqlite_db.h"

#include <unistd.h>

#include <chrono>
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

TEST_F(SqliteDbTest, ParametersAreBoundNotSpliced) {
  auto db = SqliteDb::Open((dir_ / "strata.sqlite").string());
  ASSERT_TRUE(db.ok()) << db.status();
  ASSERT_TRUE(
      (*db)->Exec("CREATE TABLE t(id INTEGER PRIMARY KEY, name TEXT, n INTEGER, b BLOB)").ok());
  const std::string hostile = "x'); DROP TABLE t; --";
  const std::string bytes("\0\x01\xff'", 4);
  ASSERT_TRUE((*db)
                  ->Exec("INSERT INTO t(name, n, b) VALUES (?, ?, ?)",
                         {hostile, int64_t{-7}, SqlBlob{bytes}})
                  .ok());
  ASSERT_TRUE(
      (*db)
          ->Exec("INSERT INTO t(name, n, b) VALUES (?, ?, ?)", {nullptr, int64_t{1} << 40, nullptr})
          .ok());
  auto rows = (*db)->Query("SELECT name, n, b FROM t WHERE name = ?", {hostile});
  ASSERT_TRUE(rows.ok()) << rows.status();
  ASSERT_EQ(rows->size(), 1u);
  EXPECT_EQ((*rows)[0][0], hostile);
  EXPECT_EQ((*rows)[0][1], "-7");
  EXPECT_EQ((*rows)[0][2], bytes);
  rows = (*db)->Query("SELECT name, n, b FROM t WHERE n > ?", {int64_t{0}});
  ASSERT_TRUE(rows.ok()) << rows.status();
  ASSERT_EQ(rows->size(), 1u);
  EXPECT_FALSE((*rows)[0][0].has_value());
  EXPECT_EQ((*rows)[0][1], "1099511627776");
  EXPECT_FALSE((*rows)[0][2].has_value());
}

TEST_F(SqliteDbTest, WrongParameterCountAndExtraStatementsAreInvalidArgument) {
  auto db = SqliteDb::Open((dir_ / "strata.sqlite").string());
  ASSERT_TRUE(db.ok()) << db.status();
  ASSERT_TRUE((*db)->Exec("CREATE TABLE t(a TEXT)").ok());
  absl::Status status = (*db)->Exec("INSERT INTO t(a) VALUES (?)", {});
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << status;
  status = (*db)->Exec("INSERT INTO t(a) VALUES (?)", {std::string("a"), std::string("b")});
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << status;
  status = (*db)->Exec("INSERT INTO t(a) VALUES (?); DELETE FROM t", {std::string("a")});
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << status;
  auto rows = (*db)->Query("SELECT COUNT(*) FROM t");
  ASSERT_TRUE(rows.ok()) << rows.status();
  EXPECT_EQ((*rows)[0][0], "0");
}

TEST_F(SqliteDbTest, UniqueViolationIsAlreadyExistsAndCheckViolationIsInvalidArgument) {
  auto db = SqliteDb::Open((dir_ / "strata.sqlite").string());
  ASSERT_TRUE(db.ok()) << db.status();
  ASSERT_TRUE((*db)->Exec("CREATE TABLE t(a TEXT UNIQUE CHECK (a <> 'bad'))").ok());
  ASSERT_TRUE((*db)->Exec("INSERT INTO t(a) VALUES (?)", {std::string("a")}).ok());
  absl::Status status = (*db)->Exec("INSERT INTO t(a) VALUES (?)", {std::string("a")});
  EXPECT_EQ(status.code(), absl::StatusCode::kAlreadyExists) << status;
  status = (*db)->Exec("INSERT INTO t(a) VALUES (?)", {std::string("bad")});
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << status;
}

TEST_F(SqliteDbTest, FailedTransactionRollsBackEveryStatement) {
  auto db = SqliteDb::Open((dir_ / "strata.sqlite").string());
  ASSERT_TRUE(db.ok()) << db.status();
  ASSERT_TRUE((*db)->Exec("CREATE TABLE t(a TEXT)").ok());
  absl::Status status = (*db)->InTransaction([](SqliteDb::Transaction& txn) {
    EXPECT_TRUE(txn.Exec("INSERT INTO t(a) VALUES (?)", {std::string("first")}).ok());
    return absl::AbortedError("changed my mind");
  });
  EXPECT_EQ(status.code(), absl::StatusCode::kAborted);
  status = (*db)->InTransaction([](SqliteDb::Transaction& txn) {
    EXPECT_TRUE(txn.Exec("INSERT INTO t(a) VALUES (?)", {std::string("second")}).ok());
    return txn.ExecScript("INSERT INTO nowhere VALUES (1)");
  });
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << status;
  ASSERT_TRUE((*db)
                  ->InTransaction([](SqliteDb::Transaction& txn) {
                    return txn.Exec("INSERT INTO t(a) VALUES (?)", {std::string("kept")});
                  })
                  .ok());
  auto rows = (*db)->Query("SELECT a FROM t");
  ASSERT_TRUE(rows.ok()) << rows.status();
  ASSERT_EQ(rows->size(), 1u);
  EXPECT_EQ((*rows)[0][0], "kept");
}

TEST_F(SqliteDbTest, DefaultBusyTimeoutLetsProcessesShareTheDatabase) {
  auto db = SqliteDb::Open((dir_ / "strata.sqlite").string());
  ASSERT_TRUE(db.ok()) << db.status();
  auto rows = (*db)->Query("PRAGMA busy_timeout");
  ASSERT_TRUE(rows.ok()) << rows.status();
  EXPECT_EQ((*rows)[0][0], std::to_string(SqliteDb::kBusyTimeoutMs));
}

TEST_F(SqliteDbTest, WriterWaitsOutTheBusyTimeoutThenIsUnavailable) {
  const std::string path = (dir_ / "strata.sqlite").string();
  auto holder = SqliteDb::Open(path);
  ASSERT_TRUE(holder.ok()) << holder.status();
  auto waiter = SqliteDb::Open(path, {.busy_timeout_ms = 300});
  ASSERT_TRUE(waiter.ok()) << waiter.status();
  ASSERT_TRUE((*holder)->Exec("CREATE TABLE t(a INTEGER)").ok());
  absl::Status waiter_status;
  std::chrono::steady_clock::duration waited{};
  ASSERT_TRUE((*holder)
                  ->InTransaction([&](SqliteDb::Transaction& txn) {
                    EXPECT_TRUE(txn.Exec("INSERT INTO t(a) VALUES (?)", {int64_t{1}}).ok());
                    const auto start = std::chrono::steady_clock::now();
                    waiter_status = (*waiter)->Exec("INSERT INTO t(a) VALUES (?)", {int64_t{2}});
                    waited = std::chrono::steady_clock::now() - start;
                    return absl::OkStatus();
                  })
                  .ok());
  EXPECT_EQ(waiter_status.code(), absl::StatusCode::kUnavailable) << waiter_status;
  EXPECT_GE(waited, std::chrono::milliseconds(250));
  // Once the lock is free the same write goes through.
  EXPECT_TRUE((*waiter)->Exec("INSERT INTO t(a) VALUES (?)", {int64_t{2}}).ok());
  auto rows = (*holder)->Query("SELECT COUNT(*) FROM t");
  ASSERT_TRUE(rows.ok()) << rows.status();
  EXPECT_EQ((*rows)[0][0], "2");
}

TEST_F(SqliteDbTest, UnopenablePathIsUnavailable) {
  auto db = SqliteDb::Open((dir_ / "missing-dir" / "strata.sqlite").string());
  ASSERT_FALSE(db.ok());
  EXPECT_EQ(db.status().code(), absl::StatusCode::kUnavailable);
}

}  // namespace
}  // namespace strata::control
