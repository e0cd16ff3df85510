// Whole-binary tests of `strata token create|list|revoke`: run the real
// executable against a fresh data directory and check exit codes and
// output.

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "subprocess.h"

namespace strata {
namespace {

using ::strata::testing::RunToCompletion;
using ::testing::ContainsRegex;
using ::testing::HasSubstr;
using ::testing::Not;

const std::string kBinary = STRATA_BINARY;
const std::vector<std::string> kBaseEnv = {"PATH=/usr/bin:/bin"};

class TokenCliTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = ::testing::TempDir() + "strata-token-cli-" +
           ::testing::UnitTest::GetInstance()->current_test_info()->name() + "-" +
           std::to_string(::getpid());
    std::filesystem::remove_all(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  std::pair<int, std::string> Token(std::vector<std::string> args) {
    std::vector<std::string> argv = {kBinary, "token"};
    argv.insert(argv.end(), args.begin(), args.end());
    argv.insert(argv.end(), {"--data-dir", dir_});
    return RunToCompletion(argv, kBaseEnv);
  }

  // The token `create` printed: its last line.
  static std::string PrintedToken(const std::string& output) {
    std::smatch match;
    static const std::regex kToken("(strata_[0-9a-z]{52})\n?$");
    return std::regex_search(output, match, kToken) ? match[1].str() : "";
  }

  // The line of `list` output for the token with this name.
  static std::string ListLine(const std::string& output, const std::string& name) {
    std::istringstream lines(output);
    std::string line;
    while (std::getline(lines, line)) {
      if (line.find(" " + name + " ") != std::string::npos) return line;
    }
    return "";
  }

  std::string dir_;
};

TEST_F(TokenCliTest, CreatePrintsTheTokenOnceAndListNeverShowsIt) {
  auto [code, out] = Token({"create", "--name", "collector", "--scope", "ingest"});
  ASSERT_EQ(code, 0) << out;
  const std::string token = PrintedToken(out);
  ASSERT_FALSE(token.empty()) << out;
  EXPECT_THAT(out, HasSubstr("only time it is shown"));
  EXPECT_TRUE(std::filesystem::exists(dir_ + "/FORMAT"));  // initialised as serve would
  EXPECT_TRUE(std::filesystem::exists(dir_ + "/control/strata.sqlite"));

  auto [list_code, list] = Token({"list"});
  ASSERT_EQ(list_code, 0) << list;
  EXPECT_THAT(list, ContainsRegex("ID +NAME +SCOPE +CREATED +LAST USED +REVOKED"));
  const std::string line = ListLine(list, "collector");
  EXPECT_THAT(line, ContainsRegex("^1 +collector +ingest +[0-9-]+T[0-9:]+Z +- +-$")) << list;
  EXPECT_THAT(list, Not(HasSubstr(token)));
  EXPECT_THAT(list, Not(HasSubstr(token.substr(7))));
  EXPECT_THAT(list, Not(ContainsRegex("[0-9a-f]{32}")));  // no hash, in hex or otherwise
}

TEST_F(TokenCliTest, RevokeByNameOrIdShowsInTheList) {
  ASSERT_EQ(Token({"create", "--name", "a", "--scope", "ingest"}).first, 0);
  ASSERT_EQ(Token({"create", "--name", "team's \"b\"", "--scope", "read"}).first, 0);

  auto [code, out] = Token({"revoke", "team's \"b\""});
  EXPECT_EQ(code, 0) << out;
  EXPECT_THAT(out, HasSubstr("Revoked token 2"));
  auto [id_code, id_out] = Token({"revoke", "1"});
  EXPECT_EQ(id_code, 0) << id_out;
  EXPECT_THAT(id_out, HasSubstr("Revoked token 1 \"a\""));

  auto [list_code, list] = Token({"list"});
  ASSERT_EQ(list_code, 0) << list;
  EXPECT_THAT(ListLine(list, "a"), ContainsRegex("ingest +\\S+ +- +[0-9-]+T[0-9:]+Z$")) << list;
  EXPECT_THAT(ListLine(list, "team's \"b\""), ContainsRegex("read +\\S+ +- +[0-9-]+T[0-9:]+Z$"))
      << list;

  auto [again_code, again] = Token({"revoke", "a"});
  EXPECT_EQ(again_code, 0) << again;
  EXPECT_THAT(again, HasSubstr("already revoked"));
}

TEST_F(TokenCliTest, UsageErrorsExitTwo) {
  auto [scope_code, scope_out] = Token({"create", "--name", "x", "--scope", "superuser"});
  EXPECT_EQ(scope_code, 2) << scope_out;
  EXPECT_THAT(scope_out, HasSubstr("superuser"));
  auto [name_code, name_out] = Token({"create", "--name", "42", "--scope", "read"});
  EXPECT_EQ(name_code, 2) << name_out;
  EXPECT_THAT(name_out, HasSubstr("all digits"));
  auto [missing_code, missing_out] = Token({"create", "--scope", "read"});
  EXPECT_EQ(missing_code, 2) << missing_out;
  auto [bare_code, bare_out] = RunToCompletion({kBinary, "token"}, kBaseEnv);
  EXPECT_EQ(bare_code, 2) << bare_out;
  EXPECT_FALSE(std::filesystem::exists(dir_));  // nothing was written
}

TEST_F(TokenCliTest, OperationalErrorsExitOne) {
  auto [list_code, list_out] = Token({"list"});
  EXPECT_EQ(list_code, 1) << list_out;
  EXPECT_THAT(list_out, HasSubstr("not initialised"));
  EXPECT_FALSE(std::filesystem::exists(dir_));  // list does not create a data directory

  ASSERT_EQ(Token({"create", "--name", "dup", "--scope", "ingest"}).first, 0);
  auto [dup_code, dup_out] = Token({"create", "--name", "dup", "--scope", "read"});
  EXPECT_EQ(dup_code, 1) << dup_out;
  EXPECT_THAT(dup_out, HasSubstr("already exists"));
  auto [revoke_code, revoke_out] = Token({"revoke", "ghost"});
  EXPECT_EQ(revoke_code, 1) << revoke_out;
  EXPECT_THAT(revoke_out, HasSubstr("no token is named \"ghost\""));
}

TEST_F(TokenCliTest, DataDirectoryComesFromTheEnvironment) {
  std::vector<std::string> env = kBaseEnv;
  env.push_back("STRATA_DATA_DIR=" + dir_);
  auto [code, out] =
      RunToCompletion({kBinary, "token", "create", "--name", "env", "--scope", "admin"}, env);
  ASSERT_EQ(code, 0) << out;
  auto [list_code, list] = RunToCompletion({kBinary, "token", "list"}, env);
  ASSERT_EQ(list_code, 0) << list;
  EXPECT_THAT(ListLine(list, "env"), HasSubstr("admin"));
}

TEST_F(TokenCliTest, ForeignDirectoryIsRefusedAndLeftAlone) {
  std::filesystem::create_directories(dir_);
  { std::ofstream(dir_ + "/notes.txt") << "mine\n"; }
  auto [code, out] = Token({"create", "--name", "x", "--scope", "ingest"});
  EXPECT_EQ(code, 1) << out;
  EXPECT_THAT(out, HasSubstr("not a strata data directory"));
  EXPECT_FALSE(std::filesystem::exists(dir_ + "/control"));
}

}  // namespace
}  // namespace strata
