#include "control/accounts.h"

#include <sodium.h>

#include <filesystem>
#include <string>

#include "control/control_db.h"
#include "control/control_testing.h"
#include "control/migrations.h"
#include "control/sqlite_account_store.h"
#include "control/sqlite_token_store.h"
#include "fmt/format.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace strata::control {
namespace {

using ::testing::HasSubstr;

// The cheapest Argon2id parameters libsodium allows, so tests hash fast.
constexpr PasswordHashParams kFastHash{.passes = 1, .memory_bytes = 8192};
constexpr char kPassword[] = "correct horse battery";
const RequestOrigin kOrigin{"192.0.2.7", "test-agent/1"};

class AccountsTest : public testing::TempDirTest {
 protected:
  void SetUp() override {
    TempDirTest::SetUp();
    auto store = SqliteAccountStore::Open(dir() + "/control/strata.sqlite", clock_.Now());
    ASSERT_TRUE(store.ok()) << store.status();
    store_ = *std::move(store);
    accounts_ = MakeAccounts(kFastHash);
  }

  std::unique_ptr<Accounts> MakeAccounts(PasswordHashParams params) {
    AccountsOptions options;
    options.clock = [this] { return clock_.Now(); };
    options.hash_params = params;
    options.on_audit_error = [](const absl::Status& status) { ADD_FAILURE() << status; };
    return std::make_unique<Accounts>(store_.get(), std::move(options));
  }

  // Completes setup with a fresh link; the first admin.
  SignedIn SetUpAdmin(std::string email = "admin@example.com") {
    auto token = accounts_->OpenSetup();
    EXPECT_TRUE(token.ok() && token->has_value());
    auto signed_in = accounts_->CompleteSetup(**token, email, "Admin", kPassword, kOrigin);
    EXPECT_TRUE(signed_in.ok()) << signed_in.status();
    return *std::move(signed_in);
  }

  // Creates a user and sets their password through the link.
  SignedIn AddUser(std::string email, Role role) {
    auto created = accounts_->CreateUser("cli", email, "Someone", role, kOrigin);
    EXPECT_TRUE(created.ok()) << created.status();
    auto signed_in = accounts_->UsePasswordLink(created->link.token, kPassword, kOrigin);
    EXPECT_TRUE(signed_in.ok()) << signed_in.status();
    return *std::move(signed_in);
  }

  bool Live(const std::string& session_token) {
    auto session = accounts_->ResolveSession(session_token);
    EXPECT_TRUE(session.ok()) << session.status();
    return session.ok() && session->has_value();
  }

  testing::ManualClock clock_{absl::FromUnixSeconds(1750000000)};
  std::unique_ptr<SqliteAccountStore> store_;
  std::unique_ptr<Accounts> accounts_;
};

TEST_F(AccountsTest, PasswordHashesAreArgon2idThatLibsodiumItselfVerifies) {
  auto hash = HashPassword(kPassword);
  ASSERT_TRUE(hash.ok()) << hash.status();
  EXPECT_THAT(*hash, ::testing::StartsWith("$argon2id$v=19$m=65536,t=2,p=1$"));
  EXPECT_EQ(crypto_pwhash_str_verify(hash->c_str(), kPassword, sizeof(kPassword) - 1), 0);
  EXPECT_NE(crypto_pwhash_str_verify(hash->c_str(), "correct horse battery!", 22), 0);
  EXPECT_TRUE(VerifyPassword(*hash, kPassword));
  EXPECT_FALSE(VerifyPassword(*hash, "correct horse batterY"));
  EXPECT_FALSE(VerifyPassword("not a hash", kPassword));
  EXPECT_FALSE(PasswordNeedsRehash(*hash));
  EXPECT_TRUE(PasswordNeedsRehash(*hash, kFastHash));

  EXPECT_TRUE(ValidatePassword("twelve chars").ok());
  EXPECT_FALSE(ValidatePassword("eleven char").ok());
  // Twelve code points of three bytes each count as twelve characters.
  EXPECT_TRUE(ValidatePassword("密码密码密码密码密码密码").ok());
  EXPECT_FALSE(ValidatePassword(std::string("twelve chars\xff")).ok());
  EXPECT_FALSE(ValidatePassword(std::string(kMaxPasswordBytes + 1, 'a')).ok());
}

TEST_F(AccountsTest, SetupLinkWorksOnceThenSetupIsClosed) {
  auto token = accounts_->OpenSetup();
  ASSERT_TRUE(token.ok() && token->has_value());
  EXPECT_EQ((*token)->size(), kSecretLength);

  auto wrong = accounts_->CompleteSetup(std::string(kSecretLength, 'a'), "a@example.com", "A",
                                        kPassword, kOrigin);
  EXPECT_EQ(wrong.status().code(), absl::StatusCode::kPermissionDenied);
  // A bad password is refused before the link is used.
  auto weak = accounts_->CompleteSetup(**token, "a@example.com", "A", "short", kOrigin);
  EXPECT_EQ(weak.status().code(), absl::StatusCode::kInvalidArgument);

  auto admin = accounts_->CompleteSetup(**token, "  Admin@Example.COM ", "Ada", kPassword, kOrigin);
  ASSERT_TRUE(admin.ok()) << admin.status();
  EXPECT_EQ(admin->user.email, "admin@example.com");
  EXPECT_EQ(admin->user.role, Role::kAdmin);
  EXPECT_TRUE(Live(admin->session_token));

  auto again = accounts_->CompleteSetup(**token, "b@example.com", "B", kPassword, kOrigin);
  EXPECT_EQ(again.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(std::string(again.status().message()), HasSubstr("setup is closed"));
  auto reopened = accounts_->OpenSetup();
  ASSERT_TRUE(reopened.ok());
  EXPECT_FALSE(reopened->has_value());
}

TEST_F(AccountsTest, SetupLinkExpiresAfterAnHourAndANewOneReplacesIt) {
  auto first = accounts_->OpenSetup();
  ASSERT_TRUE(first.ok() && first->has_value());
  clock_.Advance(absl::Hours(1));
  auto expired = accounts_->CompleteSetup(**first, "a@example.com", "A", kPassword, kOrigin);
  EXPECT_EQ(expired.status().code(), absl::StatusCode::kPermissionDenied);

  auto second = accounts_->OpenSetup();
  ASSERT_TRUE(second.ok() && second->has_value());
  EXPECT_NE(**first, **second);
  clock_.Advance(absl::Minutes(59));
  EXPECT_TRUE(accounts_->CompleteSetup(**second, "a@example.com", "A", kPassword, kOrigin).ok());
}

TEST_F(AccountsTest, UnknownUsersAndWrongPasswordsGetTheSameAnswer) {
  SetUpAdmin();
  const auto inactive = AddUser("gone@example.com", Role::kViewer);
  ASSERT_TRUE(accounts_->ChangeUser("cli", inactive.user.id, {.active = false}, kOrigin).ok());
  auto created =
      accounts_->CreateUser("cli", "nopassword@example.com", "N", Role::kViewer, kOrigin);
  ASSERT_TRUE(created.ok());

  std::vector<absl::Status> answers = {
      accounts_->SignIn("admin@example.com", "wrong password!", kOrigin).status(),
      accounts_->SignIn("nobody@example.com", kPassword, kOrigin).status(),
      accounts_->SignIn("gone@example.com", kPassword, kOrigin).status(),
      accounts_->SignIn("nopassword@example.com", kPassword, kOrigin).status(),
      accounts_->SignIn("not an email", kPassword, kOrigin).status(),
  };
  for (const absl::Status& answer : answers) EXPECT_EQ(answer, answers[0]);
  EXPECT_EQ(answers[0].code(), absl::StatusCode::kUnauthenticated);

  auto good = accounts_->SignIn("ADMIN@example.com", kPassword, kOrigin);
  ASSERT_TRUE(good.ok()) << good.status();
  EXPECT_TRUE(good->user.last_sign_in_at.has_value());
}

TEST_F(AccountsTest, FailedSignInsPerAccountBackOffAndSuccessResetsTheAccount) {
  SetUpAdmin();
  const RequestOrigin other{"198.51.100.1", "x"};
  for (int i = 0; i < 5; ++i) {
    // Each from its own address, so only the account's count grows.
    const RequestOrigin from{"203.0.113." + std::to_string(i), "x"};
    EXPECT_EQ(accounts_->SignIn("admin@example.com", "wrong password!", from).status().code(),
              absl::StatusCode::kUnauthenticated);
  }
  clock_.Advance(absl::Milliseconds(10));
  // The sixth failure makes the next attempt wait 1 s, the seventh 2 s.
  EXPECT_EQ(accounts_->SignIn("admin@example.com", "wrong password!", other).status().code(),
            absl::StatusCode::kUnauthenticated);
  auto limited = accounts_->SignIn("admin@example.com", kPassword, other);
  EXPECT_EQ(limited.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_EQ(RetryAfterOf(limited.status()), absl::Seconds(1));
  clock_.Advance(absl::Seconds(1));
  EXPECT_EQ(accounts_->SignIn("admin@example.com", "wrong password!", other).status().code(),
            absl::StatusCode::kUnauthenticated);
  clock_.Advance(absl::Seconds(1));
  EXPECT_EQ(accounts_->SignIn("admin@example.com", kPassword, other).status().code(),
            absl::StatusCode::kResourceExhausted);
  clock_.Advance(absl::Seconds(1));
  ASSERT_TRUE(accounts_->SignIn("admin@example.com", kPassword, other).ok());
  // The account's count is reset: a wrong password is an ordinary failure.
  EXPECT_EQ(accounts_->SignIn("admin@example.com", "wrong password!", other).status().code(),
            absl::StatusCode::kUnauthenticated);
}

TEST_F(AccountsTest, FailedSignInsPerAddressBackOffAcrossAccounts) {
  SetUpAdmin();
  for (int i = 0; i < 6; ++i) {
    EXPECT_EQ(
        accounts_->SignIn(fmt::format("user{}@example.com", i), kPassword, kOrigin).status().code(),
        absl::StatusCode::kUnauthenticated);
  }
  auto limited = accounts_->SignIn("admin@example.com", kPassword, kOrigin);
  EXPECT_EQ(limited.status().code(), absl::StatusCode::kResourceExhausted);
  // Another address is not held back.
  EXPECT_TRUE(accounts_->SignIn("admin@example.com", kPassword, {"192.0.2.99", "x"}).ok());
}

TEST_F(AccountsTest, SignInRehashesAPasswordHashedWithOlderParameters) {
  const SignedIn admin = SetUpAdmin();
  auto before = store_->FindUserByEmail("admin@example.com");
  ASSERT_TRUE(before.ok() && before->has_value());
  EXPECT_THAT(*(*before)->password_hash, HasSubstr("m=8,t=1"));

  const PasswordHashParams newer{.passes = 2, .memory_bytes = 16384};
  accounts_ = MakeAccounts(newer);
  ASSERT_TRUE(accounts_->SignIn("admin@example.com", kPassword, kOrigin).ok());
  auto after = store_->FindUserByEmail("admin@example.com");
  ASSERT_TRUE(after.ok() && after->has_value());
  EXPECT_THAT(*(*after)->password_hash, HasSubstr("m=16,t=2"));
  EXPECT_TRUE(VerifyPassword(*(*after)->password_hash, kPassword));
  // A rehash is not a password change: the first session lives on.
  EXPECT_TRUE(Live(admin.session_token));
}

TEST_F(AccountsTest, SessionsExpireWhenIdleAndAfterTheirLifetime) {
  const SignedIn idle = SetUpAdmin();
  clock_.Advance(absl::Hours(12) - absl::Seconds(1));
  EXPECT_TRUE(Live(idle.session_token));
  clock_.Advance(absl::Hours(12) - absl::Seconds(1));
  EXPECT_TRUE(Live(idle.session_token));  // seen 12 h - 1 s ago
  clock_.Advance(absl::Hours(12));
  EXPECT_FALSE(Live(idle.session_token));
  // Gone for good, even if it were seen again in time.
  EXPECT_FALSE(Live(idle.session_token));

  auto busy = accounts_->SignIn("admin@example.com", kPassword, kOrigin);
  ASSERT_TRUE(busy.ok());
  for (int hour = 1; hour < 24 * 7; ++hour) {
    clock_.Advance(absl::Hours(1));
    ASSERT_TRUE(Live(busy->session_token)) << "hour " << hour;
  }
  clock_.Advance(absl::Hours(1));
  EXPECT_FALSE(Live(busy->session_token));

  EXPECT_FALSE(Live("short"));
  EXPECT_FALSE(Live(std::string(kSecretLength, 'z')));
}

TEST_F(AccountsTest, RoleChangesDeactivationAndPasswordLinksEndSessions) {
  SetUpAdmin();
  const SignedIn viewer = AddUser("v@example.com", Role::kViewer);
  auto second = accounts_->SignIn("v@example.com", kPassword, kOrigin);
  ASSERT_TRUE(second.ok());
  // A rename keeps sessions.
  ASSERT_TRUE(accounts_->ChangeUser("cli", viewer.user.id, {.name = "Vera"}, kOrigin).ok());
  EXPECT_TRUE(Live(viewer.session_token));
  // A role change ends every session of that user.
  ASSERT_TRUE(
      accounts_->ChangeUser("cli", viewer.user.id, {.role = Role::kOperator}, kOrigin).ok());
  EXPECT_FALSE(Live(viewer.session_token));
  EXPECT_FALSE(Live(second->session_token));

  auto third = accounts_->SignIn("v@example.com", kPassword, kOrigin);
  ASSERT_TRUE(third.ok());
  auto link = accounts_->ResetLink("cli", "v@example.com", kOrigin);
  ASSERT_TRUE(link.ok()) << link.status();
  auto reset = accounts_->UsePasswordLink(link->token, "a brand new password", kOrigin);
  ASSERT_TRUE(reset.ok()) << reset.status();
  EXPECT_FALSE(Live(third->session_token));
  EXPECT_TRUE(Live(reset->session_token));
  EXPECT_EQ(accounts_->SignIn("v@example.com", kPassword, kOrigin).status().code(),
            absl::StatusCode::kUnauthenticated);

  ASSERT_TRUE(accounts_->ChangeUser("cli", viewer.user.id, {.active = false}, kOrigin).ok());
  EXPECT_FALSE(Live(reset->session_token));
}

TEST_F(AccountsTest, ChangingOwnPasswordNeedsTheCurrentOneAndEndsOtherSessions) {
  const SignedIn first = SetUpAdmin();
  auto second = accounts_->SignIn("admin@example.com", kPassword, kOrigin);
  ASSERT_TRUE(second.ok());
  auto session = accounts_->ResolveSession(first.session_token);
  ASSERT_TRUE(session.ok() && session->has_value());
  EXPECT_EQ(
      accounts_->ChangeOwnPassword(**session, "not the password", "a new long password", kOrigin)
          .status()
          .code(),
      absl::StatusCode::kUnauthenticated);
  EXPECT_EQ(accounts_->ChangeOwnPassword(**session, kPassword, "short", kOrigin).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(Live(second->session_token));  // failures change nothing
  auto changed = accounts_->ChangeOwnPassword(**session, kPassword, "a new long password", kOrigin);
  ASSERT_TRUE(changed.ok()) << changed.status();
  EXPECT_FALSE(Live(first.session_token));
  EXPECT_FALSE(Live(second->session_token));
  EXPECT_TRUE(Live(changed->session_token));
  EXPECT_FALSE(accounts_->SignIn("admin@example.com", kPassword, kOrigin).ok());
  EXPECT_TRUE(accounts_->SignIn("admin@example.com", "a new long password", kOrigin).ok());
}

TEST_F(AccountsTest, PasswordLinksWorkOnceAndExpireAfterFifteenMinutes) {
  SetUpAdmin();
  auto created = accounts_->CreateUser("cli", "u@example.com", "U", Role::kViewer, kOrigin);
  ASSERT_TRUE(created.ok()) << created.status();
  EXPECT_EQ(created->link.expires_at, clock_.Now() + absl::Minutes(15));
  // A weak password does not use up the link.
  EXPECT_EQ(accounts_->UsePasswordLink(created->link.token, "weak", kOrigin).status().code(),
            absl::StatusCode::kInvalidArgument);
  ASSERT_TRUE(accounts_->UsePasswordLink(created->link.token, kPassword, kOrigin).ok());
  EXPECT_EQ(accounts_->UsePasswordLink(created->link.token, kPassword, kOrigin).status().code(),
            absl::StatusCode::kUnauthenticated);

  auto late = accounts_->ResetLink("cli", "u@example.com", kOrigin);
  ASSERT_TRUE(late.ok());
  clock_.Advance(absl::Minutes(15));
  EXPECT_EQ(accounts_->UsePasswordLink(late->token, kPassword, kOrigin).status().code(),
            absl::StatusCode::kUnauthenticated);
  EXPECT_EQ(accounts_->ResetLink("cli", "nobody@example.com", kOrigin).status().code(),
            absl::StatusCode::kNotFound);
}

TEST_F(AccountsTest, TheLastActiveAdminCannotBeDemotedDeactivatedOrDeleted) {
  const SignedIn admin = SetUpAdmin();
  const int64_t id = admin.user.id;
  EXPECT_EQ(accounts_->ChangeUser("cli", id, {.role = Role::kOperator}, kOrigin).status().code(),
            absl::StatusCode::kAborted);
  EXPECT_EQ(accounts_->ChangeUser("cli", id, {.active = false}, kOrigin).status().code(),
            absl::StatusCode::kAborted);
  EXPECT_EQ(accounts_->DeleteUser("cli", id, kOrigin).code(), absl::StatusCode::kAborted);
  // An inactive admin does not count.
  const SignedIn other = AddUser("other@example.com", Role::kAdmin);
  ASSERT_TRUE(accounts_->ChangeUser("cli", other.user.id, {.active = false}, kOrigin).ok());
  EXPECT_EQ(accounts_->DeleteUser("cli", id, kOrigin).code(), absl::StatusCode::kAborted);
  // With another active admin, the first may go.
  ASSERT_TRUE(accounts_->ChangeUser("cli", other.user.id, {.active = true}, kOrigin).ok());
  ASSERT_TRUE(accounts_->ChangeUser("cli", id, {.role = Role::kViewer}, kOrigin).ok());
  EXPECT_EQ(accounts_->DeleteUser("cli", other.user.id, kOrigin).code(),
            absl::StatusCode::kAborted);
  EXPECT_TRUE(accounts_->DeleteUser("cli", id, kOrigin).ok());
  EXPECT_EQ(accounts_->GetUser(id).status().code(), absl::StatusCode::kNotFound);
}

TEST_F(AccountsTest, TheAuditLogRecordsWhoDidWhatAndForgetsOldEvents) {
  const SignedIn admin = SetUpAdmin();
  ASSERT_FALSE(accounts_->SignIn("admin@example.com", "wrong password!", kOrigin).ok());
  ASSERT_TRUE(
      accounts_
          ->CreateUser("user:admin@example.com", "x@example.com", "X", Role::kOperator, kOrigin)
          .ok());
  ASSERT_TRUE(accounts_->SignOut(SessionUser{0, admin.user}, kOrigin).ok());
  auto events = accounts_->ListAudit(std::nullopt, 100);
  ASSERT_TRUE(events.ok()) << events.status();
  std::vector<std::string> seen;
  for (const AuditEvent& event : *events) {
    seen.push_back(fmt::format("{} {} {} {}", event.actor, event.action, event.target,
                               AuditOutcomeName(event.outcome)));
    EXPECT_EQ(event.address, kOrigin.address);
    EXPECT_EQ(event.user_agent, kOrigin.user_agent);
  }
  EXPECT_THAT(
      seen, ::testing::ElementsAre("user:admin@example.com auth.logout user:admin@example.com ok",
                                   "user:admin@example.com user.create user:x@example.com ok",
                                   "anonymous auth.login admin@example.com failed",
                                   "user:admin@example.com auth.setup user:admin@example.com ok"));
  auto page = accounts_->ListAudit((*events)[1].id, 1);
  ASSERT_TRUE(page.ok());
  ASSERT_EQ(page->size(), 1u);
  EXPECT_EQ((*page)[0].id, (*events)[2].id);

  clock_.Advance(absl::Hours(24 * 90) + absl::Hours(1));
  accounts_->Audit("cli", "test.event", "", AuditOutcome::kOk, kOrigin);
  auto kept = accounts_->ListAudit(std::nullopt, 100);
  ASSERT_TRUE(kept.ok());
  ASSERT_EQ(kept->size(), 1u);
  EXPECT_EQ((*kept)[0].action, "test.event");
}

TEST(AttemptLimiterTest, DelaysDoubleUpToTheCapAndAreForgotten) {
  AttemptLimiter limiter({.free_failures = 2,
                          .first_delay = absl::Seconds(1),
                          .max_delay = absl::Seconds(4),
                          .forget_after = absl::Minutes(1),
                          .max_keys = 2});
  const absl::Time t0 = absl::FromUnixSeconds(1000);
  limiter.RecordFailure("k", t0);
  limiter.RecordFailure("k", t0);
  EXPECT_EQ(limiter.WaitFor("k", t0), absl::ZeroDuration());
  std::vector<absl::Duration> waits;
  for (int i = 0; i < 5; ++i) {
    limiter.RecordFailure("k", t0);
    waits.push_back(limiter.WaitFor("k", t0));
  }
  EXPECT_THAT(waits, ::testing::ElementsAre(absl::Seconds(1), absl::Seconds(2), absl::Seconds(4),
                                            absl::Seconds(4), absl::Seconds(4)));
  EXPECT_EQ(limiter.WaitFor("k", t0 + absl::Seconds(3)), absl::Seconds(1));
  EXPECT_EQ(limiter.WaitFor("k", t0 + absl::Minutes(1)), absl::ZeroDuration());
  EXPECT_EQ(limiter.keys(), 0u);

  limiter.RecordFailure("a", t0);
  limiter.RecordFailure("b", t0 + absl::Seconds(1));
  limiter.RecordFailure("c", t0 + absl::Seconds(2));  // full: "a" (oldest) goes
  EXPECT_EQ(limiter.keys(), 2u);
  limiter.Reset("b");
  EXPECT_EQ(limiter.keys(), 1u);
}

TEST(EmailTest, NormalizedToLowerCaseAndShapeChecked) {
  EXPECT_EQ(*NormalizeEmail(" Ada@Example.ORG\t"), "ada@example.org");
  for (const char* bad : {"", "ada", "@example.org", "ada@", "a@b@c", "a b@c", "a\x01@b"}) {
    EXPECT_EQ(NormalizeEmail(bad).status().code(), absl::StatusCode::kInvalidArgument) << bad;
  }
}

}  // namespace
}  // namespace strata::control

namespace strata::control {
namespace {

class AccountsMigrationTest : public testing::TempDirTest {};

TEST_F(AccountsMigrationTest, ADatabaseAtVersionOneKeepsItsTokensWhenAccountsArrive) {
  const std::string path = dir() + "/control/strata.sqlite";
  const absl::Time now = absl::FromUnixSeconds(1750000000);
  std::string token;
  {
    std::filesystem::create_directories(dir() + "/control");
    auto db = SqliteDb::Open(path);
    ASSERT_TRUE(db.ok()) << db.status();
    ASSERT_TRUE(ApplyMigrations(**db, ControlMigrations().first(1), now).ok());
    ASSERT_TRUE((*db)
                    ->Exec("INSERT INTO tokens(name, scope, token_hash, created_at) VALUES "
                           "('old', 'read', ?, 1)",
                           {HashBlob(HashToken("strata_old"))})
                    .ok());
  }
  auto store = SqliteAccountStore::Open(path, now);
  ASSERT_TRUE(store.ok()) << store.status();
  auto version = SchemaVersion((*store)->db());
  ASSERT_TRUE(version.ok());
  EXPECT_EQ(*version, static_cast<int>(ControlMigrations().size()));
  auto tokens = SqliteTokenStore::Open(path);
  ASSERT_TRUE(tokens.ok());
  auto live = (*tokens)->LoadLive();
  ASSERT_TRUE(live.ok());
  ASSERT_EQ(live->size(), 1u);
  EXPECT_TRUE(SameHash((*live)[0].hash, HashToken("strata_old")));
  auto users = (*store)->CountUsers();
  ASSERT_TRUE(users.ok());
  EXPECT_EQ(*users, 0);
}

}  // namespace
}  // namespace strata::control
