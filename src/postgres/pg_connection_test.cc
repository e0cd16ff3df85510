#include "postgres/pg_connection.h"

#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "postgres/postgres_testing.h"

namespace strata::postgres {
namespace {

using ::testing::HasSubstr;

class PgConnectionTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!testing::PostgresServer::BinariesPresent()) {
      GTEST_SKIP() << "PostgreSQL 15 is not installed (/usr/lib/postgresql/15/bin/initdb); "
                      "scripts/setup.sh --tests installs it";
    }
    std::string error;
    const std::string url = testing::PostgresServer::Get().NewDatabase(&error);
    ASSERT_FALSE(url.empty()) << error;
    auto connection = PgConnection::Connect(url);
    ASSERT_TRUE(connection.ok()) << connection.status();
    db_ = *std::move(connection);
  }
  std::unique_ptr<PgConnection> db_;
};

TEST_F(PgConnectionTest, ParametersRoundTripBytesNullsAndQuotesUnchanged) {
  ASSERT_TRUE(db_->Exec("CREATE TABLE t (n BIGINT, s TEXT, b BYTEA)").ok());
  const std::string bytes("\0\x01\xff'\\", 5);
  const std::string text = "it's \"quoted\"; DROP TABLE t; --";
  ASSERT_TRUE(
      db_->Exec("INSERT INTO t VALUES ($1, $2, $3)", {int64_t{-7}, text, PgBytes{bytes}}).ok());
  ASSERT_TRUE(db_->Exec("INSERT INTO t VALUES ($1, $2, $3)", {nullptr, nullptr, nullptr}).ok());
  auto rows = db_->Query("SELECT n, s, b FROM t ORDER BY n NULLS LAST");
  ASSERT_TRUE(rows.ok()) << rows.status();
  ASSERT_EQ(rows->size(), 2u);
  EXPECT_EQ((*rows)[0][0], "-7");
  EXPECT_EQ((*rows)[0][1], text);
  EXPECT_EQ((*rows)[0][2], bytes);
  EXPECT_FALSE((*rows)[1][0].has_value());
  EXPECT_FALSE((*rows)[1][2].has_value());
}

TEST_F(PgConnectionTest, AFailedTransactionRollsBackAndUniqueViolationIsAlreadyExists) {
  ASSERT_TRUE(db_->Exec("CREATE TABLE u (name TEXT UNIQUE)").ok());
  ASSERT_TRUE(db_->Exec("INSERT INTO u VALUES ($1)", {std::string("a")}).ok());
  absl::Status status = db_->InTransaction([](PgConnection::Transaction& txn) -> absl::Status {
    absl::Status inserted = txn.Exec("INSERT INTO u VALUES ($1)", {std::string("b")});
    if (!inserted.ok()) return inserted;
    return txn.Exec("INSERT INTO u VALUES ($1)", {std::string("a")});
  });
  EXPECT_TRUE(absl::IsAlreadyExists(status)) << status;
  auto rows = db_->Query("SELECT COUNT(*) FROM u");
  ASSERT_TRUE(rows.ok()) << rows.status();
  EXPECT_EQ((*rows)[0][0], "1");  // "b" was rolled back with the failed transaction
  // The connection is usable again.
  EXPECT_TRUE(db_->Exec("SELECT 1").ok());
}

TEST_F(PgConnectionTest, StatementErrorsNameTheServer) {
  absl::Status status = db_->Exec("SELECT no_such_column FROM pg_class");
  EXPECT_TRUE(absl::IsInternal(status)) << status;
  EXPECT_THAT(status.message(), HasSubstr(db_->server()));
  EXPECT_THAT(status.message(), HasSubstr("no_such_column"));
}

TEST(PgConnectionUrlTest, AMalformedUrlIsInvalidArgument) {
  auto connection = PgConnection::Connect("postgres://[::1");
  EXPECT_TRUE(absl::IsInvalidArgument(connection.status())) << connection.status();
}

}  // namespace
}  // namespace strata::postgres
