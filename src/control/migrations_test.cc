#include "control/migrations.h"

#include <string>

#include "control/control_testing.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace strata::control {
namespace {

using ::testing::EndsWith;
using ::testing::HasSubstr;

class MigrationsTest : public testing::TempDirTest {
 protected:
  std::unique_ptr<SqliteDb> OpenDb() {
    auto db = SqliteDb::Open(dir() + "/strata.sqlite");
    EXPECT_TRUE(db.ok()) << db.status();
    return db.ok() ? *std::move(db) : nullptr;
  }
  static int64_t CountRows(SqliteDb& db, const std::string& table) {
    auto rows = db.Query("SELECT COUNT(*) FROM " + table);
    EXPECT_TRUE(rows.ok()) << rows.status();
    return rows.ok() ? std::stoll(*(*rows)[0][0]) : -1;
  }
  static bool TableExists(SqliteDb& db, const std::string& table) {
    auto rows = db.Query("SELECT 1 FROM sqlite_schema WHERE type = 'table' AND name = ?", {table});
    EXPECT_TRUE(rows.ok()) << rows.status();
    return rows.ok() && !rows->empty();
  }
  const absl::Time now_ = absl::FromUnixSeconds(1750000000);
};

constexpr Migration kTwoMigrations[] = {
    {1, "first", "CREATE TABLE a(x INTEGER)"},
    {2, "second", "CREATE TABLE b(y INTEGER); INSERT INTO b(y) VALUES (42)"},
};

TEST_F(MigrationsTest, NewDatabaseIsAtVersionZero) {
  auto db = OpenDb();
  ASSERT_NE(db, nullptr);
  auto version = SchemaVersion(*db);
  ASSERT_TRUE(version.ok()) << version.status();
  EXPECT_EQ(*version, 0);
}

TEST_F(MigrationsTest, ControlMigrationsCreateTokensAndRecordTheirVersion) {
  auto db = OpenDb();
  ASSERT_NE(db, nullptr);
  auto version = ApplyMigrations(*db, ControlMigrations(), now_);
  ASSERT_TRUE(version.ok()) << version.status();
  EXPECT_EQ(*version, static_cast<int>(ControlMigrations().size()));
  EXPECT_TRUE(TableExists(*db, "tokens"));
  auto rows = db->Query("SELECT version, description, applied_at FROM schema_migrations");
  ASSERT_TRUE(rows.ok()) << rows.status();
  ASSERT_EQ(rows->size(), ControlMigrations().size());
  EXPECT_EQ((*rows)[0][0], "1");
  EXPECT_EQ((*rows)[0][1], std::string(ControlMigrations()[0].description));
  EXPECT_EQ((*rows)[0][2], std::to_string(absl::ToUnixMillis(now_)));
}

TEST_F(MigrationsTest, ApplyingAgainChangesNothing) {
  auto db = OpenDb();
  ASSERT_NE(db, nullptr);
  ASSERT_TRUE(ApplyMigrations(*db, kTwoMigrations, now_).ok());
  auto again = ApplyMigrations(*db, kTwoMigrations, now_ + absl::Hours(1));
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_EQ(*again, 2);
  EXPECT_EQ(CountRows(*db, "schema_migrations"), 2);
  EXPECT_EQ(CountRows(*db, "b"), 1);
}

TEST_F(MigrationsTest, OnlyMissingMigrationsAreApplied) {
  auto db = OpenDb();
  ASSERT_NE(db, nullptr);
  auto first = ApplyMigrations(*db, std::span(kTwoMigrations).first(1), now_);
  ASSERT_TRUE(first.ok()) << first.status();
  EXPECT_EQ(*first, 1);
  EXPECT_FALSE(TableExists(*db, "b"));
  ASSERT_TRUE(db->Exec("INSERT INTO a(x) VALUES (?)", {int64_t{7}}).ok());
  auto second = ApplyMigrations(*db, kTwoMigrations, now_);
  ASSERT_TRUE(second.ok()) << second.status();
  EXPECT_EQ(*second, 2);
  EXPECT_EQ(CountRows(*db, "a"), 1);  // migration 1 did not run again
  EXPECT_EQ(CountRows(*db, "b"), 1);
}

TEST_F(MigrationsTest, DatabaseFromANewerStrataIsRefusedWithTheRunbookSection) {
  {
    auto db = OpenDb();
    ASSERT_NE(db, nullptr);
    ASSERT_TRUE(ApplyMigrations(*db, kTwoMigrations, now_).ok());
  }
  auto db = OpenDb();
  ASSERT_NE(db, nullptr);
  auto version = ApplyMigrations(*db, std::span(kTwoMigrations).first(1), now_);
  ASSERT_FALSE(version.ok());
  EXPECT_EQ(version.status().code(), absl::StatusCode::kFailedPrecondition);
  const std::string message(version.status().message());
  EXPECT_THAT(message, HasSubstr("schema version 2"));
  EXPECT_THAT(message, HasSubstr("(version 1)"));
  EXPECT_THAT(message, HasSubstr(db->path()));
  EXPECT_THAT(message, EndsWith("see docs/operations.md#control-database-newer"));
}

TEST_F(MigrationsTest, FailedMigrationRollsBackWholeAndNamesItself) {
  constexpr Migration kBroken[] = {
      {1, "first", "CREATE TABLE a(x INTEGER)"},
      {2, "broken", "CREATE TABLE b(y INTEGER); INSERT INTO nowhere VALUES (1)"},
  };
  auto db = OpenDb();
  ASSERT_NE(db, nullptr);
  auto version = ApplyMigrations(*db, kBroken, now_);
  ASSERT_FALSE(version.ok());
  EXPECT_THAT(std::string(version.status().message()), HasSubstr("migration 2 (broken)"));
  EXPECT_THAT(std::string(version.status().message()), HasSubstr("nowhere"));
  auto current = SchemaVersion(*db);
  ASSERT_TRUE(current.ok()) << current.status();
  EXPECT_EQ(*current, 1);
  EXPECT_TRUE(TableExists(*db, "a"));
  EXPECT_FALSE(TableExists(*db, "b"));  // the first statement of migration 2 was undone
}

}  // namespace
}  // namespace strata::control
