// Whole-binary tests of the `strata` command line: run the real executable
// with a controlled environment and check exit codes and output.

#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "subprocess.h"

namespace strata {
namespace {

using ::strata::testing::RunToCompletion;
using ::strata::testing::Subprocess;
using ::testing::HasSubstr;
using ::testing::Not;

const std::string kBinary = STRATA_BINARY;
const std::vector<std::string> kBaseEnv = {"PATH=/usr/bin:/bin"};
// Servers started by these tests listen on ports the system picks, so they
// never collide with each other or with anything else on the machine.
const std::vector<std::string> kServeEnv = {
    "PATH=/usr/bin:/bin", "STRATA_OTLP_GRPC_ADDRESS=127.0.0.1:0",
    "STRATA_OTLP_HTTP_ADDRESS=127.0.0.1:0", "STRATA_API_ADDRESS=127.0.0.1:0"};

std::vector<std::string> Env(std::vector<std::string> extra) {
  extra.insert(extra.end(), kBaseEnv.begin(), kBaseEnv.end());
  return extra;
}

TEST(CliTest, VersionPrintsVersion) {
  auto [code, out] = RunToCompletion({kBinary, "--version"}, kBaseEnv);
  EXPECT_EQ(code, 0) << out;
  EXPECT_THAT(out, HasSubstr("strata 0."));
}

TEST(CliTest, HelpListsServeAndItsEnvironmentVariables) {
  auto [code, out] = RunToCompletion({kBinary, "serve", "--help"}, kBaseEnv);
  EXPECT_EQ(code, 0) << out;
  EXPECT_THAT(out, HasSubstr("--data-dir"));
  EXPECT_THAT(out, HasSubstr("STRATA_DATA_DIR"));
  EXPECT_THAT(out, HasSubstr("STRATA_OTLP_GRPC_ADDRESS"));
}

TEST(CliTest, MissingSubcommandIsAUsageError) {
  auto [code, out] = RunToCompletion({kBinary}, kBaseEnv);
  EXPECT_EQ(code, 2) << out;
}

TEST(CliTest, UnknownFlagIsAUsageError) {
  auto [code, out] = RunToCompletion({kBinary, "serve", "--no-such-flag"}, kBaseEnv);
  EXPECT_EQ(code, 2) << out;
  EXPECT_THAT(out, HasSubstr("no-such-flag"));
}

TEST(CliTest, UnknownStrataVariableIsAStartupErrorNamingIt) {
  auto [code, out] = RunToCompletion({kBinary, "serve"}, Env({"STRATA_DATADIR=/tmp/x"}));
  EXPECT_EQ(code, 2) << out;
  EXPECT_THAT(out, HasSubstr("STRATA_DATADIR"));
  EXPECT_THAT(out, HasSubstr("docs/operations.md#unknown-environment-variable"));
  EXPECT_THAT(out, Not(HasSubstr("effective configuration")));
}

TEST(CliTest, BadAddressIsAStartupErrorNamingTheFlag) {
  auto [code, out] =
      RunToCompletion({kBinary, "serve", "--otlp-http-address", "localhost"}, kBaseEnv);
  EXPECT_EQ(code, 2) << out;
  EXPECT_THAT(out, HasSubstr("--otlp-http-address"));
}

TEST(CliTest, LogTailLimitsOutOfRangeAreStartupErrorsNamingTheFlag) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"--log-tail-max-connections", "-1"}, {"--log-tail-max-queued-bytes", "4095"}};
  for (const auto& [flag, value] : cases) {
    auto [code, out] = RunToCompletion({kBinary, "serve", flag, value}, kBaseEnv);
    EXPECT_EQ(code, 2) << flag << "\n" << out;
    EXPECT_THAT(out, HasSubstr(flag));
  }
}

// Starts serve, waits until it logs that it is waiting, signals it and
// expects a clean exit. Returns the output.
std::string ServeUntilSignal(const std::vector<std::string>& args,
                             const std::vector<std::string>& env, int signal) {
  std::vector<std::string> argv = {kBinary, "serve"};
  argv.insert(argv.end(), args.begin(), args.end());
  Subprocess server(argv, env);
  EXPECT_TRUE(server.WaitForOutput("waiting for SIGINT or SIGTERM", std::chrono::seconds(20)))
      << server.output();
  server.Signal(signal);
  EXPECT_EQ(server.Wait(std::chrono::seconds(20)), 0) << server.output();
  return server.output();
}

// A fresh directory name under the test's temp dir (not created).
std::string FreshDataDir(const std::string& label) {
  const std::string dir =
      ::testing::TempDir() + "strata-cli-" + label + "-" + std::to_string(::getpid());
  std::filesystem::remove_all(dir);
  return dir;
}

TEST(CliTest, ServeLogsEffectiveConfigurationFromEnvironmentAndExitsOnSigterm) {
  const std::string dir = FreshDataDir("env");
  std::vector<std::string> env = kServeEnv;
  env.push_back("STRATA_DATA_DIR=" + dir);
  env.push_back("STRATA_MAX_REQUEST_ROWS=1234");
  std::string out = ServeUntilSignal({}, env, SIGTERM);
  EXPECT_THAT(out, HasSubstr("data_dir=" + dir));
  EXPECT_THAT(out, HasSubstr("storage ready: 0 batches"));
  EXPECT_TRUE(std::filesystem::exists(dir + "/FORMAT"));
  EXPECT_THAT(out, HasSubstr("api_address=127.0.0.1:0"));
  EXPECT_THAT(out, HasSubstr("max_request_rows=1234"));
  EXPECT_THAT(out, ::testing::ContainsRegex("OTLP/gRPC listening on 127.0.0.1:[1-9]"));
  EXPECT_THAT(out, HasSubstr("received SIGTERM"));
}

TEST(CliTest, FlagOverridesEnvironmentAndSigintExitsCleanly) {
  const std::string flag_dir = FreshDataDir("flag");
  std::vector<std::string> env = kServeEnv;
  env.push_back("STRATA_DATA_DIR=" + FreshDataDir("unused"));
  std::string out = ServeUntilSignal({"--data-dir", flag_dir}, env, SIGINT);
  EXPECT_THAT(out, HasSubstr("data_dir=" + flag_dir));
  EXPECT_THAT(out, HasSubstr("received SIGINT"));
  std::filesystem::remove_all(flag_dir);
}

TEST(CliTest, ServeRefusesADataDirectoryFromANewerFormatNamingTheRunbook) {
  const std::string dir = FreshDataDir("newer");
  std::filesystem::create_directories(dir);
  { std::ofstream(dir + "/FORMAT") << "{\"format\":2}\n"; }
  auto [code, out] = RunToCompletion({kBinary, "serve", "--data-dir", dir}, kServeEnv);
  EXPECT_EQ(code, 1) << out;
  EXPECT_THAT(out, HasSubstr("format 2"));
  EXPECT_THAT(out, HasSubstr("docs/operations.md#data-directory-from-a-newer-strata"));
  std::filesystem::remove_all(dir);
}

TEST(CliTest, SecondServerOnTheSameDataDirectoryIsRefused) {
  const std::string dir = FreshDataDir("locked");
  Subprocess first({kBinary, "serve", "--data-dir", dir}, kServeEnv);
  ASSERT_TRUE(first.WaitForOutput("waiting for SIGINT or SIGTERM", std::chrono::seconds(20)))
      << first.output();
  auto [code, out] = RunToCompletion({kBinary, "serve", "--data-dir", dir}, kServeEnv);
  EXPECT_EQ(code, 1) << out;
  EXPECT_THAT(out, HasSubstr("docs/operations.md#data-directory-in-use"));
  first.Signal(SIGTERM);
  EXPECT_EQ(first.Wait(std::chrono::seconds(20)), 0) << first.output();
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace strata
