// The same AccountStore claims, checked against every implementation: the
// single node's SqliteAccountStore and the several nodes'
// PostgresAccountStore (on a throwaway server that scripts/postgres.sh
// starts once per test binary; each test gets a fresh database), including
// two stores on one database and two racing to demote the last two admins.

#include <atomic>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "control/control_testing.h"
#include "control/postgres_account_store.h"
#include "control/sqlite_account_store.h"
#include "control/token.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "postgres/postgres_testing.h"

namespace strata::control {
namespace {

using ::testing::ElementsAre;

const absl::Time kNow = absl::FromUnixSeconds(1750000000);

class AccountStoreConformanceTest : public testing::TempDirTest,
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
  // A new store object (its own connection) on this test's database.
  std::unique_ptr<AccountStore> OpenStore() {
    absl::StatusOr<std::unique_ptr<AccountStore>> store;
    if (GetParam() == "postgres") {
      store = PostgresAccountStore::Open(location_);
    } else {
      store = SqliteAccountStore::Open(location_, kNow);
    }
    EXPECT_TRUE(store.ok()) << store.status();
    return store.ok() ? *std::move(store) : nullptr;
  }
  static NewUser Person(const std::string& email, Role role = Role::kViewer) {
    return NewUser{.email = email,
                   .name = email.substr(0, email.find('@')),
                   .role = role,
                   .password_hash = "hash-of-" + email};
  }
  static TokenHash HashOf(const std::string& text) { return HashToken(text); }
  std::string location_;
};

TEST_P(AccountStoreConformanceTest, UsersAreCreatedFoundListedAndUniqueByEmail) {
  auto store = OpenStore();
  ASSERT_NE(store, nullptr);
  EXPECT_EQ(*store->CountUsers(), 0);
  absl::StatusOr<User> ada = store->CreateFirstUser(Person("ada@example.com", Role::kAdmin), kNow);
  ASSERT_TRUE(ada.ok()) << ada.status();
  EXPECT_EQ(ada->email, "ada@example.com");
  EXPECT_EQ(ada->role, Role::kAdmin);
  EXPECT_TRUE(ada->active);
  EXPECT_TRUE(ada->has_password);
  EXPECT_EQ(ada->created_at, kNow);
  EXPECT_EQ(store->CreateFirstUser(Person("bob@example.com"), kNow).status().code(),
            absl::StatusCode::kFailedPrecondition);
  NewUser no_password = Person("bob@example.com");
  no_password.password_hash.reset();
  absl::StatusOr<User> bob = store->CreateUser(no_password, kNow);
  ASSERT_TRUE(bob.ok()) << bob.status();
  EXPECT_FALSE(bob->has_password);
  EXPECT_EQ(store->CreateUser(Person("bob@example.com"), kNow).status().code(),
            absl::StatusCode::kAlreadyExists);
  EXPECT_EQ(*store->CountUsers(), 2);
  absl::StatusOr<std::optional<UserRecord>> found = store->FindUserByEmail("ada@example.com");
  ASSERT_TRUE(found.ok() && found->has_value());
  EXPECT_EQ((*found)->user.id, ada->id);
  EXPECT_EQ((*found)->password_hash, "hash-of-ada@example.com");
  EXPECT_FALSE(store->FindUserByEmail("eve@example.com")->has_value());
  EXPECT_EQ(store->GetUser(bob->id)->email, "bob@example.com");
  EXPECT_EQ(store->GetUser(9999).status().code(), absl::StatusCode::kNotFound);
  std::vector<std::string> emails;
  const absl::StatusOr<std::vector<User>> users = store->ListUsers();
  ASSERT_TRUE(users.ok()) << users.status();
  for (const User& user : *users) emails.push_back(user.email);
  EXPECT_THAT(emails, ElementsAre("ada@example.com", "bob@example.com"));
  ASSERT_TRUE(store->RecordSignIn(bob->id, kNow + absl::Seconds(5)).ok());
  EXPECT_EQ(store->GetUser(bob->id)->last_sign_in_at, kNow + absl::Seconds(5));
}

TEST_P(AccountStoreConformanceTest, TheLastActiveAdminCannotBeDemotedDeactivatedOrDeleted) {
  auto store = OpenStore();
  const User ada = *store->CreateUser(Person("ada@example.com", Role::kAdmin), kNow);
  const User bob = *store->CreateUser(Person("bob@example.com"), kNow);
  EXPECT_EQ(store->ChangeUser(ada.id, UserChange{.role = Role::kViewer}, kNow).status().code(),
            absl::StatusCode::kAborted);
  EXPECT_EQ(store->ChangeUser(ada.id, UserChange{.active = false}, kNow).status().code(),
            absl::StatusCode::kAborted);
  EXPECT_EQ(store->DeleteUser(ada.id).code(), absl::StatusCode::kAborted);
  EXPECT_EQ(store->GetUser(ada.id)->role, Role::kAdmin);
  // With another admin, the first may go.
  ASSERT_TRUE(store->ChangeUser(bob.id, UserChange{.role = Role::kAdmin}, kNow).ok());
  absl::StatusOr<User> renamed =
      store->ChangeUser(ada.id, UserChange{.name = "Ada L.", .role = Role::kOperator}, kNow);
  ASSERT_TRUE(renamed.ok()) << renamed.status();
  EXPECT_EQ(renamed->name, "Ada L.");
  EXPECT_EQ(renamed->role, Role::kOperator);
  ASSERT_TRUE(store->DeleteUser(ada.id).ok());
  EXPECT_EQ(store->GetUser(ada.id).status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(store->DeleteUser(ada.id).code(), absl::StatusCode::kNotFound);
}

TEST_P(AccountStoreConformanceTest, RoleActiveAndPasswordChangesEndTheUsersSessions) {
  auto store = OpenStore();
  const User ada = *store->CreateUser(Person("ada@example.com", Role::kAdmin), kNow);
  const User bob = *store->CreateUser(Person("bob@example.com"), kNow);
  auto session = [&](const std::string& token) {
    return store->CreateSession(bob.id, HashOf(token), kNow, "10.0.0.1", "test").value();
  };
  auto live = [&](const std::string& token) {
    return store->FindSession(HashOf(token))->has_value();
  };
  session("s1");
  absl::StatusOr<std::optional<StoredSession>> found = store->FindSession(HashOf("s1"));
  ASSERT_TRUE(found.ok() && found->has_value());
  EXPECT_EQ((*found)->user.id, bob.id);
  EXPECT_EQ((*found)->created_at, kNow);
  // A name change keeps it; a role change ends it.
  ASSERT_TRUE(store->ChangeUser(bob.id, UserChange{.name = "Robert"}, kNow).ok());
  EXPECT_TRUE(live("s1"));
  ASSERT_TRUE(store->ChangeUser(bob.id, UserChange{.role = Role::kOperator}, kNow).ok());
  EXPECT_FALSE(live("s1"));
  session("s2");
  ASSERT_TRUE(store->ChangeUser(bob.id, UserChange{.active = false}, kNow).ok());
  EXPECT_FALSE(live("s2"));
  ASSERT_TRUE(store->ChangeUser(bob.id, UserChange{.active = true}, kNow).ok());
  session("s3");
  ASSERT_TRUE(store->SetPasswordHash(bob.id, "rehash", /*end_sessions=*/false, kNow).ok());
  EXPECT_TRUE(live("s3"));
  ASSERT_TRUE(store->SetPasswordHash(bob.id, "new", /*end_sessions=*/true, kNow).ok());
  EXPECT_FALSE(live("s3"));
  EXPECT_EQ((*store->FindUserByEmail("bob@example.com"))->password_hash, "new");
  EXPECT_EQ(store->SetPasswordHash(9999, "x", true, kNow).code(), absl::StatusCode::kNotFound);
  (void)ada;
}

TEST_P(AccountStoreConformanceTest, SessionsAreTouchedForwardOnlyAndExpire) {
  auto store = OpenStore();
  const User bob = *store->CreateUser(Person("bob@example.com"), kNow);
  const int64_t old_id = *store->CreateSession(bob.id, HashOf("old"), kNow, "a", "ua");
  const int64_t new_id =
      *store->CreateSession(bob.id, HashOf("new"), kNow + absl::Hours(1), "b", "ub");
  ASSERT_TRUE(store->TouchSession(old_id, kNow + absl::Minutes(30)).ok());
  ASSERT_TRUE(store->TouchSession(old_id, kNow + absl::Minutes(10)).ok());
  EXPECT_EQ((*store->FindSession(HashOf("old")))->last_seen_at, kNow + absl::Minutes(30));
  // Idle since before kNow + 45 min: only the old one.
  EXPECT_EQ(*store->DeleteExpiredSessions(kNow + absl::Minutes(45), kNow - absl::Hours(1)), 1);
  EXPECT_FALSE(store->FindSession(HashOf("old"))->has_value());
  ASSERT_TRUE(store->DeleteSession(new_id).ok());
  EXPECT_FALSE(store->FindSession(HashOf("new"))->has_value());
}

TEST_P(AccountStoreConformanceTest, APasswordLinkWorksOnceBeforeItExpires) {
  auto store = OpenStore();
  const User bob = *store->CreateUser(Person("bob@example.com"), kNow);
  ASSERT_TRUE(store->CreatePasswordLink(bob.id, HashOf("link"), kNow, kNow + absl::Hours(24)).ok());
  ASSERT_TRUE(store->CreatePasswordLink(bob.id, HashOf("late"), kNow, kNow + absl::Hours(1)).ok());
  EXPECT_EQ(*store->UsePasswordLink(HashOf("link"), kNow + absl::Minutes(1)), bob.id);
  EXPECT_FALSE(store->UsePasswordLink(HashOf("link"), kNow + absl::Minutes(2))->has_value());
  EXPECT_FALSE(store->UsePasswordLink(HashOf("late"), kNow + absl::Hours(1))->has_value());
  EXPECT_FALSE(store->UsePasswordLink(HashOf("unknown"), kNow)->has_value());
}

TEST_P(AccountStoreConformanceTest, SavedQueriesAreOwnedSharedRenamedAndGoWithTheirOwner) {
  auto store = OpenStore();
  const User ada = *store->CreateUser(Person("ada@example.com", Role::kAdmin), kNow);
  const User bob = *store->CreateUser(Person("bob@example.com"), kNow);
  SavedQuery query{.owner_id = bob.id,
                   .name = "slow checkouts",
                   .kind = SavedQueryKind::kTraces,
                   .parameters = R"({"service":"checkout"})",
                   .time_range = "now-1h"};
  absl::StatusOr<SavedQuery> created = store->CreateSavedQuery(query, kNow);
  ASSERT_TRUE(created.ok()) << created.status();
  EXPECT_EQ(created->owner_email, "bob@example.com");
  EXPECT_EQ(created->created_at, kNow);
  EXPECT_EQ(store->CreateSavedQuery(query, kNow).status().code(), absl::StatusCode::kAlreadyExists);
  query.name = "errors";
  query.kind = SavedQueryKind::kLogs;
  const SavedQuery errors = *store->CreateSavedQuery(query, kNow);
  EXPECT_EQ(*store->CountSavedQueries(bob.id), 2);
  // Another user sees only the shared ones.
  EXPECT_TRUE(store->ListSavedQueries(ada.id)->empty());
  absl::StatusOr<SavedQuery> shared =
      store->ChangeSavedQuery(errors.id, SavedQueryChange{.shared = true}, kNow + absl::Seconds(1));
  ASSERT_TRUE(shared.ok()) << shared.status();
  EXPECT_TRUE(shared->shared);
  EXPECT_EQ(shared->updated_at, kNow + absl::Seconds(1));
  ASSERT_EQ(store->ListSavedQueries(ada.id)->size(), 1u);
  EXPECT_EQ(store->ListSavedQueries(bob.id)->size(), 2u);
  EXPECT_EQ(store->ChangeSavedQuery(errors.id, SavedQueryChange{.name = "slow checkouts"}, kNow)
                .status()
                .code(),
            absl::StatusCode::kAlreadyExists);
  EXPECT_EQ(store->GetSavedQuery(errors.id)->name, "errors");
  ASSERT_TRUE(store->DeleteSavedQuery(created->id).ok());
  EXPECT_EQ(store->DeleteSavedQuery(created->id).code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(store->GetSavedQuery(created->id).status().code(), absl::StatusCode::kNotFound);
  ASSERT_TRUE(store->DeleteUser(bob.id).ok());
  EXPECT_EQ(store->GetSavedQuery(errors.id).status().code(), absl::StatusCode::kNotFound);
}

TEST_P(AccountStoreConformanceTest, TheAuditLogPagesNewestFirstAndPrunes) {
  auto store = OpenStore();
  for (int i = 0; i < 5; ++i) {
    ASSERT_TRUE(
        store
            ->AppendAudit(AuditEvent{.at = kNow + absl::Seconds(i),
                                     .actor = "cli",
                                     .action = "user.create",
                                     .target = "user:" + std::to_string(i),
                                     .outcome = i == 4 ? AuditOutcome::kDenied : AuditOutcome::kOk})
            .ok());
  }
  absl::StatusOr<std::vector<AuditEvent>> page = store->ListAudit(std::nullopt, 2);
  ASSERT_TRUE(page.ok()) << page.status();
  ASSERT_EQ(page->size(), 2u);
  EXPECT_EQ((*page)[0].target, "user:4");
  EXPECT_EQ((*page)[0].outcome, AuditOutcome::kDenied);
  EXPECT_EQ((*page)[0].at, kNow + absl::Seconds(4));
  page = store->ListAudit((*page)[1].id, 10);
  ASSERT_EQ(page->size(), 3u);
  EXPECT_EQ((*page)[0].target, "user:2");
  EXPECT_EQ(*store->PruneAudit(kNow + absl::Seconds(3)), 3);
  EXPECT_EQ(store->ListAudit(std::nullopt, 10)->size(), 2u);
}

TEST_P(AccountStoreConformanceTest, TwoStoresOnOneDatabaseSeeEachOthersUsersAndSessions) {
  auto one = OpenStore();
  auto two = OpenStore();
  const User bob = *one->CreateUser(Person("bob@example.com"), kNow);
  EXPECT_EQ(two->GetUser(bob.id)->email, "bob@example.com");
  ASSERT_TRUE(two->CreateSession(bob.id, HashOf("s"), kNow, "a", "ua").ok());
  EXPECT_TRUE(one->FindSession(HashOf("s"))->has_value());
  EXPECT_EQ(two->CreateUser(Person("bob@example.com"), kNow).status().code(),
            absl::StatusCode::kAlreadyExists);
}

// Two nodes demoting the last two admins at once: exactly one succeeds,
// every round.
TEST_P(AccountStoreConformanceTest, TwoStoresDemotingTheLastTwoAdminsAtOnceLeaveOne) {
  auto one = OpenStore();
  auto two = OpenStore();
  const User ada = *one->CreateUser(Person("ada@example.com", Role::kAdmin), kNow);
  const User bob = *one->CreateUser(Person("bob@example.com", Role::kAdmin), kNow);
  for (int round = 0; round < 20; ++round) {
    std::atomic<int> done{0}, refused{0};
    std::thread first([&] {
      absl::Status s = one->ChangeUser(ada.id, UserChange{.role = Role::kViewer}, kNow).status();
      (s.ok() ? done : refused)++;
      EXPECT_TRUE(s.ok() || absl::IsAborted(s)) << s;
    });
    std::thread second([&] {
      absl::Status s = two->ChangeUser(bob.id, UserChange{.role = Role::kViewer}, kNow).status();
      (s.ok() ? done : refused)++;
      EXPECT_TRUE(s.ok() || absl::IsAborted(s)) << s;
    });
    first.join();
    second.join();
    ASSERT_EQ(done, 1) << "round " << round;
    ASSERT_EQ(refused, 1) << "round " << round;
    // Both admins again for the next round.
    for (const User& user : {ada, bob}) {
      ASSERT_TRUE(one->ChangeUser(user.id, UserChange{.role = Role::kAdmin}, kNow).ok());
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Stores, AccountStoreConformanceTest,
                         ::testing::Values(std::string("sqlite"), std::string("postgres")),
                         [](const auto& info) { return info.param; });

}  // namespace
}  // namespace strata::control
