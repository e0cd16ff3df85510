#pragma once

// Test helper shared by the API's test files that need people: a fixture
// holding a control database under the test's directory with accounts
// (a manual clock, cheap password hashing), an Api the test configures
// served on 127.0.0.1 (an ephemeral port), users added already signed in,
// and requests to the server with a user's session.
//
// Use: in SetUp, after SignedInApiTest::SetUp(), fill ApiOptions (with
// accounts_ and whatever else the test needs) and call
// ASSERT_NO_FATAL_FAILURE(StartApi(std::move(options))).

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "api/api_server.h"
#include "api/api_test_server.h"
#include "control/accounts.h"
#include "control/control_testing.h"
#include "control/sqlite_account_store.h"
#include "gtest/gtest.h"
#include "server/http_testing.h"

namespace strata::api::test_support {

// The password of every user SignedInApiTest::AddUser() adds.
inline constexpr char kUserPassword[] = "correct horse battery";

class SignedInApiTest : public control::testing::TempDirTest {
 protected:
  void SetUp() override {
    TempDirTest::SetUp();
    auto store = control::SqliteAccountStore::Open(db_path(), clock_.Now());
    ASSERT_TRUE(store.ok()) << store.status();
    store_ = *std::move(store);
    control::AccountsOptions account_options;
    account_options.clock = [this] { return clock_.Now(); };
    account_options.hash_params = {.passes = 1, .memory_bytes = 8192};
    accounts_ = std::make_unique<control::Accounts>(store_.get(), std::move(account_options));
  }

  void TearDown() override {
    http_.reset();
    api_.reset();
    TempDirTest::TearDown();
  }

  // The control database the accounts live in (other control tables may
  // be opened over it too).
  std::string db_path() const { return dir() + "/control/strata.sqlite"; }

  // (Re)starts the Api over `options` and its server; base_ is then the
  // server's http://127.0.0.1:<port>.
  void StartApi(ApiOptions options) {
    http_.reset();
    api_ = std::make_unique<Api>(std::move(options));
    auto started = ServeOnLoopback(*api_);
    ASSERT_TRUE(started.ok()) << started.status();
    http_ = *std::move(started);
    base_ = "http://127.0.0.1:" + std::to_string(http_->port());
  }

  // A new user with `role` who has set kUserPassword (and so is signed in
  // once: the result's session).
  control::SignedIn AddUser(const std::string& email, control::Role role = control::Role::kViewer) {
    auto created = accounts_->CreateUser("test", email, "Someone", role, {});
    EXPECT_TRUE(created.ok()) << created.status();
    if (!created.ok()) return {};
    auto signed_in = accounts_->UsePasswordLink(created->link.token, kUserPassword, {});
    EXPECT_TRUE(signed_in.ok()) << signed_in.status();
    if (!signed_in.ok()) return {};
    return *std::move(signed_in);
  }

  // `method` base_ + `path` with `headers` and, when not empty, `body`.
  server::testing::HttpAnswer Call(const std::string& method, const std::string& path,
                                   const std::vector<std::string>& headers,
                                   const std::string& body = "") {
    return CallApi(base_, method, path, headers, body);
  }

  // The headers of a browser request in `user`'s session: the session
  // cookie and the browser rules' X-Strata-Request.
  static std::vector<std::string> As(const control::SignedIn& user) {
    return {"Cookie: " + std::string(kSessionCookie) + "=" + user.session_token,
            "X-Strata-Request: 1"};
  }

  control::testing::ManualClock clock_{absl::FromUnixSeconds(1750000000)};
  std::unique_ptr<control::SqliteAccountStore> store_;
  std::unique_ptr<control::Accounts> accounts_;
  std::unique_ptr<Api> api_;
  std::unique_ptr<server::HttpServer> http_;
  std::string base_;
};

}  // namespace strata::api::test_support
