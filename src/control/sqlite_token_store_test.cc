#include "control/sqlite_token_store.h"

#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

#include "control/control_testing.h"
#include "control/migrations.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace strata::control {
namespace {

using ::testing::EndsWith;
using ::testing::HasSubstr;
using ::testing::Not;

class TokenStoreTest : public testing::TempDirTest {
 protected:
  std::unique_ptr<SqliteTokenStore> OpenStore() {
    auto store = SqliteTokenStore::Open(dir() + "/control/strata.sqlite",
                                        {.clock = [this] { return clock_.Now(); }});
    EXPECT_TRUE(store.ok()) << store.status();
    return store.ok() ? *std::move(store) : nullptr;
  }
  testing::ManualClock clock_{absl::FromUnixSeconds(1750000000)};
};

TEST_F(TokenStoreTest, OpenCreatesTheControlDatabaseUnderTheDataDirectory) {
  auto store = OpenStore();
  ASSERT_NE(store, nullptr);
  EXPECT_EQ(store->path(), dir() + "/control/strata.sqlite");
  EXPECT_TRUE(std::filesystem::exists(store->path()));
  auto count = store->Count();
  ASSERT_TRUE(count.ok()) << count.status();
  EXPECT_EQ(*count, 0);
}

TEST_F(TokenStoreTest, CreateReturnsTheTokenOnceAndStoresOnlyItsHash) {
  auto store = OpenStore();
  ASSERT_NE(store, nullptr);
  auto created = store->Create("collector", TokenScope::kIngest);
  ASSERT_TRUE(created.ok()) << created.status();
  EXPECT_EQ(created->id, 1);
  EXPECT_EQ(created->token.size(), kTokenLength);

  auto list = store->List();
  ASSERT_TRUE(list.ok()) << list.status();
  ASSERT_EQ(list->size(), 1u);
  const TokenInfo& info = (*list)[0];
  EXPECT_EQ(info.id, created->id);
  EXPECT_EQ(info.name, "collector");
  EXPECT_EQ(info.scope, TokenScope::kIngest);
  EXPECT_EQ(info.created_at, clock_.Now());
  EXPECT_FALSE(info.last_used_at.has_value());
  EXPECT_FALSE(info.revoked_at.has_value());

  auto live = store->LoadLive();
  ASSERT_TRUE(live.ok()) << live.status();
  ASSERT_EQ(live->size(), 1u);
  EXPECT_EQ((*live)[0].hash, HashToken(created->token));

  // The token text is nowhere in the database files.
  store.reset();
  for (const auto& entry : std::filesystem::directory_iterator(dir() + "/control")) {
    std::ifstream in(entry.path(), std::ios::binary);
    const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    EXPECT_THAT(bytes, Not(HasSubstr(created->token))) << entry.path();
    EXPECT_THAT(bytes, Not(HasSubstr(created->token.substr(kTokenPrefix.size())))) << entry.path();
  }
}

TEST_F(TokenStoreTest, NamesWithQuotesAndSqlAreStoredVerbatim) {
  auto store = OpenStore();
  ASSERT_NE(store, nullptr);
  const std::string hostile = "o'brien\"; DROP TABLE tokens; --";
  auto created = store->Create(hostile, TokenScope::kRead);
  ASSERT_TRUE(created.ok()) << created.status();
  ASSERT_TRUE(store->Create("plain", TokenScope::kAdmin).ok());
  auto list = store->List();
  ASSERT_TRUE(list.ok()) << list.status();
  ASSERT_EQ(list->size(), 2u);
  EXPECT_EQ((*list)[0].name, hostile);
  EXPECT_EQ((*list)[0].scope, TokenScope::kRead);
  EXPECT_EQ((*list)[1].scope, TokenScope::kAdmin);
  auto revoked = store->Revoke(hostile);
  ASSERT_TRUE(revoked.ok()) << revoked.status();
  EXPECT_EQ(revoked->token.id, created->id);
}

TEST_F(TokenStoreTest, DuplicateNameIsAlreadyExistsEvenWhenRevoked) {
  auto store = OpenStore();
  ASSERT_NE(store, nullptr);
  ASSERT_TRUE(store->Create("dup", TokenScope::kIngest).ok());
  auto again = store->Create("dup", TokenScope::kRead);
  EXPECT_EQ(again.status().code(), absl::StatusCode::kAlreadyExists);
  EXPECT_THAT(std::string(again.status().message()), HasSubstr("\"dup\" already exists (id 1)"));
  ASSERT_TRUE(store->Revoke("dup").ok());
  EXPECT_EQ(store->Create("dup", TokenScope::kIngest).status().code(),
            absl::StatusCode::kAlreadyExists);
}

TEST_F(TokenStoreTest, InvalidNamesAreRefusedBeforeTouchingTheDatabase) {
  auto store = OpenStore();
  ASSERT_NE(store, nullptr);
  for (const std::string& bad :
       {std::string(), std::string(129, 'n'), std::string("a\nb"), std::string("42")}) {
    EXPECT_EQ(store->Create(bad, TokenScope::kIngest).status().code(),
              absl::StatusCode::kInvalidArgument)
        << bad;
  }
  auto count = store->Count();
  ASSERT_TRUE(count.ok()) << count.status();
  EXPECT_EQ(*count, 0);
}

TEST_F(TokenStoreTest, RevokeByIdOrNameKeepsTheTokenListed) {
  auto store = OpenStore();
  ASSERT_NE(store, nullptr);
  auto a = store->Create("a", TokenScope::kIngest);
  auto b = store->Create("b", TokenScope::kIngest);
  ASSERT_TRUE(a.ok() && b.ok());
  clock_.Advance(absl::Minutes(5));
  auto by_id = store->Revoke(std::to_string(a->id));
  ASSERT_TRUE(by_id.ok()) << by_id.status();
  EXPECT_EQ(by_id->token.name, "a");
  EXPECT_FALSE(by_id->already_revoked);
  EXPECT_EQ(by_id->token.revoked_at, clock_.Now());
  auto by_name = store->Revoke("b");
  ASSERT_TRUE(by_name.ok()) << by_name.status();
  EXPECT_EQ(by_name->token.id, b->id);

  clock_.Advance(absl::Minutes(5));
  auto again = store->Revoke("a");
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_TRUE(again->already_revoked);
  EXPECT_EQ(again->token.revoked_at, clock_.Now() - absl::Minutes(5));  // unchanged

  auto list = store->List();
  ASSERT_TRUE(list.ok()) << list.status();
  ASSERT_EQ(list->size(), 2u);
  EXPECT_TRUE((*list)[0].revoked_at.has_value());
  EXPECT_TRUE((*list)[1].revoked_at.has_value());
  auto live = store->LoadLive();
  ASSERT_TRUE(live.ok()) << live.status();
  EXPECT_TRUE(live->empty());
}

TEST_F(TokenStoreTest, RevokingWhatDoesNotExistIsNotFound) {
  auto store = OpenStore();
  ASSERT_NE(store, nullptr);
  ASSERT_TRUE(store->Create("real", TokenScope::kIngest).ok());
  for (const char* missing : {"7", "ghost", "99999999999999999999999", "' OR 1=1 --"}) {
    auto revoked = store->Revoke(missing);
    EXPECT_EQ(revoked.status().code(), absl::StatusCode::kNotFound) << missing;
  }
  auto live = store->LoadLive();
  ASSERT_TRUE(live.ok()) << live.status();
  EXPECT_EQ(live->size(), 1u);
}

TEST_F(TokenStoreTest, RecordLastUsedOnlyMovesForward) {
  auto store = OpenStore();
  ASSERT_NE(store, nullptr);
  auto a = store->Create("a", TokenScope::kIngest);
  ASSERT_TRUE(a.ok()) << a.status();
  const absl::Time t1 = clock_.Now() + absl::Seconds(10);
  ASSERT_TRUE(store->RecordLastUsed({{a->id, t1}, {12345, t1}}).ok());
  ASSERT_TRUE(store->RecordLastUsed({{a->id, t1 - absl::Seconds(5)}}).ok());
  auto list = store->List();
  ASSERT_TRUE(list.ok()) << list.status();
  EXPECT_EQ((*list)[0].last_used_at, t1);
  ASSERT_TRUE(store->RecordLastUsed({{a->id, t1 + absl::Seconds(5)}}).ok());
  list = store->List();
  ASSERT_TRUE(list.ok()) << list.status();
  EXPECT_EQ((*list)[0].last_used_at, t1 + absl::Seconds(5));
}

TEST_F(TokenStoreTest, EnsureIngestTokenCreatesOneOnlyWhenThereIsNone) {
  auto store = OpenStore();
  ASSERT_NE(store, nullptr);
  auto first = EnsureIngestToken(*store);
  ASSERT_TRUE(first.ok()) << first.status();
  ASSERT_TRUE(first->has_value());
  auto list = store->List();
  ASSERT_TRUE(list.ok()) << list.status();
  ASSERT_EQ(list->size(), 1u);
  EXPECT_EQ((*list)[0].name, kDefaultIngestTokenName);
  EXPECT_EQ((*list)[0].scope, TokenScope::kIngest);

  auto second = EnsureIngestToken(*store);
  ASSERT_TRUE(second.ok()) << second.status();
  EXPECT_FALSE(second->has_value());
  // Revoking every token does not bring the default back.
  ASSERT_TRUE(store->Revoke(kDefaultIngestTokenName).ok());
  auto third = EnsureIngestToken(*store);
  ASSERT_TRUE(third.ok()) << third.status();
  EXPECT_FALSE(third->has_value());
}

TEST_F(TokenStoreTest, TwoStoresOnOneDirectorySeeEachOthersWrites) {
  auto server = OpenStore();
  auto cli = OpenStore();
  ASSERT_NE(server, nullptr);
  ASSERT_NE(cli, nullptr);
  auto created = cli->Create("from-cli", TokenScope::kIngest);
  ASSERT_TRUE(created.ok()) << created.status();
  auto live = server->LoadLive();
  ASSERT_TRUE(live.ok()) << live.status();
  ASSERT_EQ(live->size(), 1u);
  EXPECT_EQ((*live)[0].id, created->id);
}

TEST_F(TokenStoreTest, DatabaseFromANewerStrataIsRefused) {
  {
    auto store = OpenStore();
    ASSERT_NE(store, nullptr);
    auto db = SqliteDb::Open(store->path());
    ASSERT_TRUE(db.ok()) << db.status();
    ASSERT_TRUE((*db)
                    ->Exec("INSERT INTO schema_migrations(version, description, applied_at) "
                           "VALUES (?, 'from the future', 0)",
                           {int64_t{1000}})
                    .ok());
  }
  auto store = SqliteTokenStore::Open(dir() + "/control/strata.sqlite");
  ASSERT_FALSE(store.ok());
  EXPECT_EQ(store.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(std::string(store.status().message()),
              EndsWith("see docs/operations.md#control-database-newer"));
}

TEST_F(TokenStoreTest, UnreadableDatabaseNamesTheFileAndTheRunbook) {
  std::filesystem::create_directories(dir() + "/control");
  { std::ofstream(dir() + "/control/strata.sqlite") << std::string(4096, 'x'); }
  auto store = SqliteTokenStore::Open(dir() + "/control/strata.sqlite");
  ASSERT_FALSE(store.ok());
  EXPECT_EQ(store.status().code(), absl::StatusCode::kDataLoss) << store.status();
  EXPECT_THAT(std::string(store.status().message()), HasSubstr("control/strata.sqlite"));
  EXPECT_THAT(std::string(store.status().message()),
              EndsWith("see docs/operations.md#control-database-cannot-be-opened"));
}

}  // namespace
}  // namespace strata::control
