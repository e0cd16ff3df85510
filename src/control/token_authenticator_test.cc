#include "control/token_authenticator.h"

#include <atomic>
#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "control/control_testing.h"
#include "control/sqlite_token_store.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace strata::control {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

class TokenAuthenticatorTest : public testing::TempDirTest {
 protected:
  void SetUp() override {
    TempDirTest::SetUp();
    store_ = OpenStore();
    ASSERT_NE(store_, nullptr);
  }
  std::unique_ptr<SqliteTokenStore> OpenStore() {
    auto store = SqliteTokenStore::Open(dir() + "/control/strata.sqlite",
                                        {.clock = [this] { return clock_.Now(); }});
    EXPECT_TRUE(store.ok()) << store.status();
    return store.ok() ? *std::move(store) : nullptr;
  }
  std::unique_ptr<TokenAuthenticator> MakeAuthenticator(TokenAuthenticatorOptions options = {}) {
    options.clock = [this] { return clock_.Now(); };
    auto authenticator = TokenAuthenticator::Create(store_.get(), std::move(options));
    EXPECT_TRUE(authenticator.ok()) << authenticator.status();
    return authenticator.ok() ? *std::move(authenticator) : nullptr;
  }
  std::string CreateToken(const std::string& name, TokenScope scope) {
    auto created = store_->Create(name, scope);
    EXPECT_TRUE(created.ok()) << created.status();
    return created.ok() ? created->token : "";
  }
  static auto Deadline() { return std::chrono::steady_clock::now() + std::chrono::seconds(20); }

  testing::ManualClock clock_{absl::FromUnixSeconds(1750000000)};
  std::unique_ptr<SqliteTokenStore> store_;
};

TEST_F(TokenAuthenticatorTest, LiveTokenAuthenticatesWithItsScope) {
  const std::string ingest = CreateToken("i", TokenScope::kIngest);
  const std::string read = CreateToken("r", TokenScope::kRead);
  const std::string admin = CreateToken("a", TokenScope::kAdmin);
  auto authenticator = MakeAuthenticator();
  ASSERT_NE(authenticator, nullptr);
  EXPECT_EQ(authenticator->live_tokens(), 3u);
  EXPECT_EQ(authenticator->Authenticate(ingest).value(), TokenScope::kIngest);
  EXPECT_EQ(authenticator->Authenticate(read).value(), TokenScope::kRead);
  EXPECT_EQ(authenticator->Authenticate(admin).value(), TokenScope::kAdmin);
  EXPECT_EQ(authenticator->failures(), 0u);
}

TEST_F(TokenAuthenticatorTest, WrongTokensAreUnauthenticatedCountedAndNeverEchoed) {
  const std::string good = CreateToken("good", TokenScope::kIngest);
  auto authenticator = MakeAuthenticator();
  ASSERT_NE(authenticator, nullptr);
  std::string wrong = good;
  wrong.back() = wrong.back() == 'a' ? 'b' : 'a';
  const std::vector<std::string> bad = {wrong,     good.substr(0, good.size() - 1), good + "x", "",
                                        "strata_", std::string(100000, 'a')};
  for (const std::string& token : bad) {
    auto result = authenticator->Authenticate(token);
    ASSERT_FALSE(result.ok());
    EXPECT_EQ(result.status().code(), absl::StatusCode::kUnauthenticated);
    EXPECT_EQ(result.status().message(), "unknown or revoked token");
  }
  EXPECT_THAT(authenticator->Authenticate(wrong).status().ToString(), Not(HasSubstr(wrong)));
  EXPECT_EQ(authenticator->failures(), bad.size() + 1);
  EXPECT_TRUE(authenticator->Authenticate(good).ok());
  EXPECT_EQ(authenticator->failures(), bad.size() + 1);
}

TEST_F(TokenAuthenticatorTest, AuthorizeChecksTheScope) {
  const std::string ingest = CreateToken("i", TokenScope::kIngest);
  const std::string read = CreateToken("r", TokenScope::kRead);
  const std::string admin = CreateToken("a", TokenScope::kAdmin);
  auto authenticator = MakeAuthenticator();
  ASSERT_NE(authenticator, nullptr);
  EXPECT_TRUE(authenticator->Authorize(ingest, TokenScope::kIngest).ok());
  EXPECT_TRUE(authenticator->Authorize(admin, TokenScope::kIngest).ok());
  absl::Status denied = authenticator->Authorize(read, TokenScope::kIngest);
  EXPECT_EQ(denied.code(), absl::StatusCode::kPermissionDenied);
  EXPECT_THAT(std::string(denied.message()), HasSubstr("scope read"));
  EXPECT_EQ(authenticator->Authorize("nope", TokenScope::kIngest).code(),
            absl::StatusCode::kUnauthenticated);
}

TEST_F(TokenAuthenticatorTest, RevokedTokenIsRefusedAfterTheNextRefresh) {
  const std::string token = CreateToken("doomed", TokenScope::kIngest);
  auto authenticator = MakeAuthenticator();
  ASSERT_NE(authenticator, nullptr);
  ASSERT_TRUE(authenticator->Authenticate(token).ok());
  // Revoked from another connection, as `strata token revoke` does.
  auto cli = OpenStore();
  ASSERT_NE(cli, nullptr);
  ASSERT_TRUE(cli->Revoke("doomed").ok());
  // The snapshot is what decides, so SQLite is not on the request path.
  EXPECT_TRUE(authenticator->Authenticate(token).ok());
  ASSERT_TRUE(authenticator->Refresh().ok());
  EXPECT_EQ(authenticator->Authenticate(token).status().code(), absl::StatusCode::kUnauthenticated);
  EXPECT_EQ(authenticator->live_tokens(), 0u);
}

TEST_F(TokenAuthenticatorTest, RefreshWritesLastUseTimes) {
  const std::string used = CreateToken("used", TokenScope::kIngest);
  CreateToken("idle", TokenScope::kIngest);
  auto authenticator = MakeAuthenticator();
  ASSERT_NE(authenticator, nullptr);
  clock_.Advance(absl::Minutes(1));
  const absl::Time first_use = clock_.Now();
  ASSERT_TRUE(authenticator->Authenticate(used).ok());
  clock_.Advance(absl::Milliseconds(200));  // within a second: not recorded again
  ASSERT_TRUE(authenticator->Authenticate(used).ok());

  auto before = store_->List();
  ASSERT_TRUE(before.ok()) << before.status();
  EXPECT_FALSE((*before)[0].last_used_at.has_value());  // nothing written until a refresh

  ASSERT_TRUE(authenticator->Refresh().ok());
  auto after = store_->List();
  ASSERT_TRUE(after.ok()) << after.status();
  EXPECT_EQ((*after)[0].last_used_at, first_use);
  EXPECT_FALSE((*after)[1].last_used_at.has_value());

  clock_.Advance(absl::Minutes(1));
  ASSERT_TRUE(authenticator->Authenticate(used).ok());
  ASSERT_TRUE(authenticator->Refresh().ok());
  after = store_->List();
  ASSERT_TRUE(after.ok()) << after.status();
  EXPECT_EQ((*after)[0].last_used_at, clock_.Now());
}

TEST_F(TokenAuthenticatorTest, FailedRefreshKeepsThePreviousTokens) {
  const std::string token = CreateToken("t", TokenScope::kIngest);
  auto authenticator = MakeAuthenticator();
  ASSERT_NE(authenticator, nullptr);
  auto db = SqliteDb::Open(store_->path());
  ASSERT_TRUE(db.ok()) << db.status();
  ASSERT_TRUE((*db)->Exec("ALTER TABLE tokens RENAME TO tokens_elsewhere").ok());
  absl::Status refreshed = authenticator->Refresh();
  EXPECT_FALSE(refreshed.ok());
  EXPECT_THAT(std::string(refreshed.message()), HasSubstr("control database"));
  EXPECT_EQ(authenticator->Authenticate(token).value(), TokenScope::kIngest);
}

TEST_F(TokenAuthenticatorTest, BackgroundRefreshPicksUpATokenCreatedElsewhere) {
  auto authenticator = MakeAuthenticator();
  ASSERT_NE(authenticator, nullptr);
  authenticator->Start(absl::Milliseconds(20));
  auto cli = OpenStore();
  ASSERT_NE(cli, nullptr);
  auto created = cli->Create("late", TokenScope::kIngest);
  ASSERT_TRUE(created.ok()) << created.status();
  // A refresh that began after the create finished has completed once two
  // more have completed (one may have been under way already).
  const uint64_t seen = authenticator->refreshes();
  ASSERT_TRUE(authenticator->TEST_WaitForRefreshes(seen + 2, Deadline()));
  EXPECT_EQ(authenticator->Authenticate(created->token).value(), TokenScope::kIngest);
  authenticator->Stop();
}

TEST_F(TokenAuthenticatorTest, BackgroundRefreshReportsErrors) {
  Mutex mu;
  CondVar cv;
  std::vector<std::string> errors;
  TokenAuthenticatorOptions options;
  options.on_refresh_error = [&](const absl::Status& status) {
    MutexLock lock(&mu);
    errors.push_back(status.ToString());
    cv.SignalAll();
  };
  auto authenticator = MakeAuthenticator(std::move(options));
  ASSERT_NE(authenticator, nullptr);
  auto db = SqliteDb::Open(store_->path());
  ASSERT_TRUE(db.ok()) << db.status();
  ASSERT_TRUE((*db)->Exec("ALTER TABLE tokens RENAME TO tokens_elsewhere").ok());
  authenticator->Start(absl::Milliseconds(10));
  {
    const auto deadline = Deadline();
    MutexLock lock(&mu);
    while (errors.empty() && std::chrono::steady_clock::now() < deadline) {
      cv.WaitUntil(&mu, deadline);
    }
    ASSERT_FALSE(errors.empty());
    EXPECT_THAT(errors[0], HasSubstr("tokens"));
  }
  authenticator->Stop();
}

TEST_F(TokenAuthenticatorTest, StopIsPromptEvenWithALongInterval) {
  auto authenticator = MakeAuthenticator();
  ASSERT_NE(authenticator, nullptr);
  authenticator->Start(absl::Hours(1));
  const auto start = std::chrono::steady_clock::now();
  authenticator->Stop();
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5));
  authenticator->Stop();  // idempotent
}

TEST_F(TokenAuthenticatorTest, ConcurrentChecksDuringRefreshesAllSucceed) {
  const std::string token = CreateToken("busy", TokenScope::kIngest);
  auto authenticator = MakeAuthenticator();
  ASSERT_NE(authenticator, nullptr);
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < 2000; ++i) {
        if (!authenticator->Authenticate(token).ok()) failures.fetch_add(1);
      }
    });
  }
  for (int i = 0; i < 20; ++i) {
    clock_.Advance(absl::Seconds(2));
    EXPECT_TRUE(authenticator->Refresh().ok());
  }
  for (std::thread& thread : threads) thread.join();
  EXPECT_EQ(failures.load(), 0);
  EXPECT_EQ(authenticator->failures(), 0u);
}

}  // namespace
}  // namespace strata::control
