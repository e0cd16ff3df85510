#include "control/saved_queries.h"

#include "control/control_testing.h"
#include "control/sqlite_account_store.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace strata::control {
namespace {

class SavedQueriesTest : public testing::TempDirTest {
 protected:
  void SetUp() override {
    TempDirTest::SetUp();
    auto store = SqliteAccountStore::Open(dir() + "/control/strata.sqlite", clock_.Now());
    ASSERT_TRUE(store.ok()) << store.status();
    store_ = *std::move(store);
    saved_ = std::make_unique<SavedQueries>(store_.get(), [this] { return clock_.Now(); });
    viewer_ = Add("viewer@example.com", Role::kViewer);
    other_ = Add("other@example.com", Role::kViewer);
    operator_ = Add("operator@example.com", Role::kOperator);
  }

  User Add(const std::string& email, Role role) {
    auto user = store_->CreateUser({.email = email, .name = email, .role = role}, clock_.Now());
    EXPECT_TRUE(user.ok()) << user.status();
    return *user;
  }

  static SavedQuery Query(std::string name, bool shared = false) {
    return SavedQuery{.name = std::move(name),
                      .kind = SavedQueryKind::kLogs,
                      .parameters = R"({"q":"payment failed"})",
                      .time_range = "now-1h",
                      .shared = shared};
  }

  testing::ManualClock clock_{absl::FromUnixSeconds(1750000000)};
  std::unique_ptr<SqliteAccountStore> store_;
  std::unique_ptr<SavedQueries> saved_;
  User viewer_, other_, operator_;
};

TEST_F(SavedQueriesTest, ViewersKeepPrivateQueriesAndOperatorsShare) {
  auto mine = saved_->Create(viewer_, Query("errors"));
  ASSERT_TRUE(mine.ok()) << mine.status();
  EXPECT_EQ(mine->owner_email, "viewer@example.com");
  EXPECT_EQ(mine->created_at, clock_.Now());
  EXPECT_EQ(saved_->Create(viewer_, Query("errors")).status().code(),
            absl::StatusCode::kAlreadyExists);
  EXPECT_TRUE(saved_->Create(other_, Query("errors")).ok());  // names are per owner
  EXPECT_EQ(saved_->Create(viewer_, Query("team", true)).status().code(),
            absl::StatusCode::kPermissionDenied);
  auto team = saved_->Create(operator_, Query("team", true));
  ASSERT_TRUE(team.ok()) << team.status();

  // Others see shared queries, never private ones (not even that they exist).
  auto listed = saved_->List(other_);
  ASSERT_TRUE(listed.ok());
  std::vector<std::string> names;
  for (const SavedQuery& q : *listed) names.push_back(q.owner_email + "/" + q.name);
  EXPECT_THAT(names,
              ::testing::ElementsAre("other@example.com/errors", "operator@example.com/team"));
  EXPECT_EQ(saved_->Get(other_, mine->id).status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(saved_->Delete(other_, mine->id).code(), absl::StatusCode::kNotFound);
  EXPECT_TRUE(saved_->Get(other_, team->id).ok());

  // A viewer may not change or delete a shared query, nor share their own.
  EXPECT_EQ(saved_->Change(viewer_, team->id, {.name = "mine now"}).status().code(),
            absl::StatusCode::kPermissionDenied);
  EXPECT_EQ(saved_->Delete(viewer_, team->id).code(), absl::StatusCode::kPermissionDenied);
  EXPECT_EQ(saved_->Change(viewer_, mine->id, {.shared = true}).status().code(),
            absl::StatusCode::kPermissionDenied);
  // An operator may change any shared query, not another's private one.
  clock_.Advance(absl::Minutes(1));
  auto renamed =
      saved_->Change(operator_, team->id, {.name = "team errors", .time_range = "now-7d"});
  ASSERT_TRUE(renamed.ok()) << renamed.status();
  EXPECT_EQ(renamed->name, "team errors");
  EXPECT_EQ(renamed->time_range, "now-7d");
  EXPECT_EQ(renamed->updated_at, clock_.Now());
  EXPECT_EQ(saved_->Change(operator_, mine->id, {.name = "x"}).status().code(),
            absl::StatusCode::kNotFound);
  EXPECT_TRUE(saved_->Delete(viewer_, mine->id).ok());
  EXPECT_EQ(saved_->Get(viewer_, mine->id).status().code(), absl::StatusCode::kNotFound);

  // Deleting a user deletes their queries.
  ASSERT_TRUE(store_->DeleteUser(operator_.id).ok());
  EXPECT_EQ(saved_->Get(other_, team->id).status().code(), absl::StatusCode::kNotFound);
}

TEST_F(SavedQueriesTest, TimeRangesAreRelativeOrAbsolute) {
  for (const char* good : {"now-1h", "now-15m", "now-30s", "now-7d", "now-2w", "now-99999d",
                           "2026-12-01T00:00:00Z/2026-12-02T00:00:00Z",
                           "2026-12-01T05:45:00+05:45/2026-12-01T00:00:01Z"}) {
    EXPECT_TRUE(ValidateTimeRange(good).ok()) << good;
  }
  for (const char* bad : {"", "now", "now-", "now-h", "now-1y", "now-0m", "now--1h", "now-1000000d",
                          "1h", "2026-12-02T00:00:00Z/2026-12-01T00:00:00Z",
                          "2026-12-01/2026-12-02", "2026-12-01T00:00:00Z"}) {
    EXPECT_FALSE(ValidateTimeRange(bad).ok()) << bad;
  }
  SavedQuery bad = Query("x");
  bad.time_range = "yesterday";
  EXPECT_EQ(saved_->Create(viewer_, bad).status().code(), absl::StatusCode::kInvalidArgument);
  bad = Query("");
  EXPECT_EQ(saved_->Create(viewer_, bad).status().code(), absl::StatusCode::kInvalidArgument);
  bad = Query("big");
  bad.parameters = std::string(kMaxSavedQueryParameterBytes + 1, ' ');
  EXPECT_EQ(saved_->Create(viewer_, bad).status().code(), absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace strata::control
