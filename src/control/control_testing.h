#pragma once

// Test helpers for src/control: a fresh temporary directory per test, and a
// clock the test moves by hand.

#include <unistd.h>

#include <filesystem>
#include <string>

#include "absl/time/time.h"
#include "common/mutex.h"
#include "gtest/gtest.h"

namespace strata::control::testing {

// A directory unique to the running test, empty at the start and removed at
// the end.
class TempDirTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    dir_ = std::filesystem::path(::testing::TempDir()) /
           ("strata-control-" + std::to_string(getpid()) + "-" + info->test_suite_name() + "-" +
            info->name());
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  std::string dir() const { return dir_.string(); }

  std::filesystem::path dir_;
};

// A clock that moves only when told to. Safe for concurrent use.
class ManualClock {
 public:
  explicit ManualClock(absl::Time start) : now_(start) {}
  absl::Time Now() const {
    MutexLock lock(&mu_);
    return now_;
  }
  void Advance(absl::Duration by) {
    MutexLock lock(&mu_);
    now_ += by;
  }

 private:
  mutable Mutex mu_;
  absl::Time now_ ABSL_GUARDED_BY(mu_);
};

}  // namespace strata::control::testing
