// The same TokenStore claims, checked against every implementation: the
// single node's SqliteTokenStore and the several nodes' PostgresTokenStore
// (on a throwaway server that scripts/postgres.sh starts once per test
// binary; each test gets a fresh database).

#include <cstdio>
#include <memory>
#include <string>

#include "control/control_testing.h"
#include "control/postgres_token_store.h"
#include "control/sqlite_token_store.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "postgres/postgres_testing.h"

namespace strata::control {
namespace {

using ::testing::HasSubstr;

class TokenStoreConformanceTest : public testing::TempDirTest,
                                  public ::testing::WithParamInterface<std::string> {
 protected:
  void SetUp() override {
    testing::TempDirTest::SetUp();
    if (GetParam() == "postgres") {
      if (!postgres::testing::PostgresServer::BinariesPresent()) {
        GTEST_SKIP() << "PostgreSQL 15 is not installed (/usr/lib/postgresql/15/bin/initdb); "
                        "scripts/setup.sh --tests installs it";
      }
      std::string error;
      location_ = postgres::testing::PostgresServer::Get().NewDatabase(&error);
      ASSERT_FALSE(location_.empty()) << error;
    } else {
      location_ = dir() + "/control/strata.sqlite";
    }
  }
  // A new store object on this test's database.
  std::unique_ptr<TokenStore> OpenStore() {
    TokenStoreOptions options{.clock = [this] { return clock_.Now(); }};
    absl::StatusOr<std::unique_ptr<TokenStore>> store;
    if (GetParam() == "postgres") {
      store = PostgresTokenStore::Open(location_, options);
    } else {
      store = SqliteTokenStore::Open(location_, options);
    }
    EXPECT_TRUE(store.ok()) << store.status();
    return store.ok() ? *std::move(store) : nullptr;
  }
  testing::ManualClock clock_{absl::FromUnixSeconds(1750000000)};
  std::string location_;
};

TEST_P(TokenStoreConformanceTest, CreateReturnsTheTokenOnceAndStoresOnlyItsHash) {
  auto store = OpenStore();
  ASSERT_NE(store, nullptr);
  auto created = store->Create("collector", TokenScope::kIngest);
  ASSERT_TRUE(created.ok()) << created.status();
  EXPECT_EQ(created->id, 1);
  EXPECT_EQ(created->token.size(), kTokenLength);
  auto list = store->List();
  ASSERT_TRUE(list.ok()) << list.status();
  ASSERT_EQ(list->size(), 1u);
  EXPECT_EQ((*list)[0].id, created->id);
  EXPECT_EQ((*list)[0].name, "collector");
  EXPECT_EQ((*list)[0].scope, TokenScope::kIngest);
  EXPECT_EQ((*list)[0].created_at, clock_.Now());
  EXPECT_FALSE((*list)[0].last_used_at.has_value());
  EXPECT_FALSE((*list)[0].revoked_at.has_value());
  auto live = store->LoadLive();
  ASSERT_TRUE(live.ok()) << live.status();
  ASSERT_EQ(live->size(), 1u);
  EXPECT_EQ((*live)[0].id, created->id);
  EXPECT_TRUE(SameHash((*live)[0].hash, HashToken(created->token)));
  auto count = store->Count();
  ASSERT_TRUE(count.ok()) << count.status();
  EXPECT_EQ(*count, 1);
}

TEST_P(TokenStoreConformanceTest, BadNamesAreRejectedAndTakenNamesStayTakenAfterRevoke) {
  auto store = OpenStore();
  ASSERT_NE(store, nullptr);
  EXPECT_TRUE(absl::IsInvalidArgument(store->Create("", TokenScope::kRead).status()));
  ASSERT_TRUE(store->Create("ci", TokenScope::kRead).ok());
  auto again = store->Create("ci", TokenScope::kAdmin);
  EXPECT_TRUE(absl::IsAlreadyExists(again.status())) << again.status();
  ASSERT_TRUE(store->Revoke("ci").ok());
  again = store->Create("ci", TokenScope::kAdmin);
  EXPECT_TRUE(absl::IsAlreadyExists(again.status())) << again.status();
}

TEST_P(TokenStoreConformanceTest, RevokeByIdOrNameKeepsTheTokenAndSaysWhenAlreadyRevoked) {
  auto store = OpenStore();
  ASSERT_NE(store, nullptr);
  auto first = store->Create("first", TokenScope::kIngest);
  auto second = store->Create("second", TokenScope::kAdmin);
  ASSERT_TRUE(first.ok() && second.ok());
  clock_.Advance(absl::Seconds(5));
  auto revoked = store->Revoke(std::to_string(first->id));
  ASSERT_TRUE(revoked.ok()) << revoked.status();
  EXPECT_FALSE(revoked->already_revoked);
  EXPECT_EQ(revoked->token.revoked_at, clock_.Now());
  revoked = store->Revoke("first");
  ASSERT_TRUE(revoked.ok()) << revoked.status();
  EXPECT_TRUE(revoked->already_revoked);
  EXPECT_TRUE(absl::IsNotFound(store->Revoke("nobody").status()));
  EXPECT_TRUE(absl::IsNotFound(store->Revoke("99").status()));
  auto live = store->LoadLive();
  ASSERT_TRUE(live.ok()) << live.status();
  ASSERT_EQ(live->size(), 1u);
  EXPECT_EQ((*live)[0].id, second->id);
  EXPECT_EQ((*live)[0].scope, TokenScope::kAdmin);
  auto list = store->List();
  ASSERT_TRUE(list.ok()) << list.status();
  ASSERT_EQ(list->size(), 2u);
  EXPECT_EQ((*list)[0].revoked_at, clock_.Now());
}

TEST_P(TokenStoreConformanceTest, CreateIfNoneCreatesOnlyInAnEmptyStore) {
  auto store = OpenStore();
  ASSERT_NE(store, nullptr);
  auto made = EnsureIngestToken(*store);
  ASSERT_TRUE(made.ok()) << made.status();
  ASSERT_TRUE(made->has_value());
  ASSERT_TRUE(store->Revoke(kDefaultIngestTokenName).ok());
  made = EnsureIngestToken(*store);
  ASSERT_TRUE(made.ok()) << made.status();
  EXPECT_FALSE(made->has_value());
}

TEST_P(TokenStoreConformanceTest, RecordLastUsedKeepsTheLaterTimeAndSkipsUnknownIds) {
  auto store = OpenStore();
  ASSERT_NE(store, nullptr);
  auto created = store->Create("agent", TokenScope::kIngest);
  ASSERT_TRUE(created.ok());
  const absl::Time later = clock_.Now() + absl::Minutes(2);
  ASSERT_TRUE(store->RecordLastUsed({{created->id, later}, {12345, later}}).ok());
  ASSERT_TRUE(store->RecordLastUsed({{created->id, later - absl::Minutes(1)}}).ok());
  auto list = store->List();
  ASSERT_TRUE(list.ok()) << list.status();
  ASSERT_EQ(list->size(), 1u);
  EXPECT_EQ((*list)[0].last_used_at, later);
}

// What several nodes need: a token made through one store object
// authenticates through another on the same database, and a revocation
// through the second is seen by the first.
TEST_P(TokenStoreConformanceTest, TwoStoresOnOneDatabaseSeeEachOthersTokens) {
  auto node_a = OpenStore();
  auto node_b = OpenStore();
  ASSERT_NE(node_a, nullptr);
  ASSERT_NE(node_b, nullptr);
  auto created = node_a->Create("shared", TokenScope::kRead);
  ASSERT_TRUE(created.ok()) << created.status();
  auto live = node_b->LoadLive();
  ASSERT_TRUE(live.ok()) << live.status();
  ASSERT_EQ(live->size(), 1u);
  EXPECT_TRUE(SameHash((*live)[0].hash, HashToken(created->token)));
  EXPECT_TRUE(absl::IsAlreadyExists(node_b->Create("shared", TokenScope::kRead).status()));
  ASSERT_TRUE(node_b->Revoke("shared").ok());
  live = node_a->LoadLive();
  ASSERT_TRUE(live.ok()) << live.status();
  EXPECT_TRUE(live->empty());
}

TEST(PostgresTokenStoreTest, AnUnreachableServerIsUnavailableAndNamed) {
  // Port 1 on loopback: nothing listens there.
  auto store = PostgresTokenStore::Open("postgres://strata@127.0.0.1:1/strata");
  ASSERT_FALSE(store.ok());
  EXPECT_TRUE(absl::IsUnavailable(store.status())) << store.status();
  EXPECT_THAT(store.status().message(), HasSubstr("127.0.0.1:1/strata"));
  EXPECT_THAT(store.status().message(), HasSubstr("check that the server runs"));
}

INSTANTIATE_TEST_SUITE_P(Stores, TokenStoreConformanceTest,
                         ::testing::Values(std::string("sqlite"), std::string("postgres")),
                         [](const auto& info) { return info.param; });

}  // namespace
}  // namespace strata::control
