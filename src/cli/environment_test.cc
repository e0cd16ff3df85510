#include "cli/environment.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace strata::cli {
namespace {

TEST(EnvironmentTest, KnownAndForeignVariablesPass) {
  const char* envp[] = {"PATH=/bin", "STRATA_DATA_DIR=/x", "HOME=/root", "STRATAX=1", nullptr};
  EXPECT_TRUE(CheckStrataEnvironment(envp, {"STRATA_DATA_DIR"}).ok());
}

TEST(EnvironmentTest, UnknownStrataVariableIsNamed) {
  const char* envp[] = {"STRATA_DATA_DIR=/x", "STRATA_DATADIR=/y", nullptr};
  absl::Status status = CheckStrataEnvironment(envp, {"STRATA_DATA_DIR"});
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(status.message()), ::testing::HasSubstr("STRATA_DATADIR"));
}

TEST(EnvironmentTest, VariableWithoutValueIsStillChecked) {
  const char* envp[] = {"STRATA_TYPO", nullptr};
  EXPECT_FALSE(CheckStrataEnvironment(envp, {"STRATA_DATA_DIR"}).ok());
}

}  // namespace
}  // namespace strata::cli
