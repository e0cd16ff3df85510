// Whole-binary tests of the `strata` command line: run the real executable
// with a controlled environment and check exit codes and output.

#include <signal.h>

#include <chrono>
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

TEST(CliTest, ServeLogsEffectiveConfigurationFromEnvironmentAndExitsOnSigterm) {
  std::string out = ServeUntilSignal({}, Env({"STRATA_DATA_DIR=/tmp/strata-env-dir",
                                              "STRATA_API_ADDRESS=127.0.0.1:17520"}),
                                     SIGTERM);
  EXPECT_THAT(out, HasSubstr("data_dir=/tmp/strata-env-dir"));
  EXPECT_THAT(out, HasSubstr("api_address=127.0.0.1:17520"));
  EXPECT_THAT(out, HasSubstr("otlp_grpc_address=0.0.0.0:4317"));
  EXPECT_THAT(out, HasSubstr("received SIGTERM"));
}

TEST(CliTest, FlagOverridesEnvironmentAndSigintExitsCleanly) {
  std::string out = ServeUntilSignal({"--data-dir", "/tmp/strata-flag-dir"},
                                     Env({"STRATA_DATA_DIR=/tmp/strata-env-dir"}), SIGINT);
  EXPECT_THAT(out, HasSubstr("data_dir=/tmp/strata-flag-dir"));
  EXPECT_THAT(out, HasSubstr("received SIGINT"));
}

}  // namespace
}  // namespace strata
