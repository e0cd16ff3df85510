// A careless operator (or a tool, or a bug) leaves entries strata never
// writes inside telemetry/: the next `strata serve` must start anyway,
// setting them aside into quarantine/ with nothing deleted, and `strata
// verify` must call them stray, not corruption.

#include <filesystem>
#include <fstream>
#include <string>

#include "e2e/server_process.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace strata::testing {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

std::string ReadWhole(const std::string& path) {
  std::ifstream in(path);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

TEST(StrayEntriesTest, BootSetsStrayEntriesAsideAndServes) {
  TempDir dir("stray");
  const std::string data = dir.path() + "/data";
  {
    ServerProcess first(data);
    ASSERT_TRUE(first.ready()) << first.output();
    ASSERT_EQ(first.Stop(), 0) << first.output();
  }
  // What `EXPORT DATABASE '<data>/telemetry/days/junk'` once left, and a
  // note a person dropped at the top of telemetry/.
  const std::string telemetry = data + "/telemetry";
  std::filesystem::create_directories(telemetry + "/days/junk");
  std::ofstream(telemetry + "/days/junk/schema.sql") << "CREATE TABLE t(x INT);\n";
  std::ofstream(telemetry + "/notes.txt") << "mine\n";

  auto [verify_code, verify_output] = RunStrata({"verify", "--data-dir", data});
  EXPECT_EQ(verify_code, 0) << verify_output;
  EXPECT_THAT(verify_output, HasSubstr("telemetry/days/junk"));
  EXPECT_THAT(verify_output, HasSubstr("telemetry/notes.txt"));
  EXPECT_THAT(verify_output, HasSubstr("2 stray entries"));
  EXPECT_THAT(verify_output, Not(HasSubstr("strata quarantine")));
  EXPECT_THAT(verify_output, Not(HasSubstr("CORRUPTION")));

  ServerProcess second(data);
  ASSERT_TRUE(second.ready()) << second.output();
  EXPECT_THAT(second.output(), HasSubstr("set a stray entry aside"));
  EXPECT_THAT(second.output(), HasSubstr("docs/operations.md#stray-entry-set-aside"));
  EXPECT_FALSE(std::filesystem::exists(telemetry + "/days/junk"));
  EXPECT_FALSE(std::filesystem::exists(telemetry + "/notes.txt"));
  // Moved whole, under their paths relative to telemetry/.
  std::string folder;
  for (const auto& entry : std::filesystem::directory_iterator(telemetry + "/quarantine")) {
    if (entry.path().filename().string().starts_with("stray-")) folder = entry.path().string();
  }
  ASSERT_FALSE(folder.empty());
  EXPECT_EQ(ReadWhole(folder + "/days/junk/schema.sql"), "CREATE TABLE t(x INT);\n");
  EXPECT_EQ(ReadWhole(folder + "/notes.txt"), "mine\n");
  ASSERT_EQ(second.Stop(), 0) << second.output();

  auto [after_code, after_output] = RunStrata({"verify", "--data-dir", data});
  EXPECT_EQ(after_code, 0) << after_output;
  EXPECT_THAT(after_output, HasSubstr("0 stray entries"));
}

}  // namespace
}  // namespace strata::testing
