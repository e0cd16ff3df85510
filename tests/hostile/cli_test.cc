// What a careless operator types at the `strata` command line: a first boot
// at log level error, negative and out-of-range numbers in flags and
// STRATA_* variables, mistyped commands, options after the subcommand and
// URLs where host:port belongs. Each test runs the real binary.

#include <signal.h>

#include <chrono>
#include <regex>
#include <string>
#include <vector>

#include "e2e/server_process.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace strata {
namespace {

using ::strata::testing::ChildEnvironment;
using ::strata::testing::RunStrata;
using ::strata::testing::RunToCompletion;
using ::strata::testing::Subprocess;
using ::strata::testing::TempDir;
using ::testing::HasSubstr;
using ::testing::Not;

constexpr int kExitUsage = 2;  // src/cli/exit_codes.h

// `strata serve` on `dir` with every listener on a free loopback port, after
// `before` (global options) and with `after` (serve's flags).
std::vector<std::string> ServeArgv(const std::string& dir, const std::vector<std::string>& before,
                                   const std::vector<std::string>& after) {
  std::vector<std::string> argv = {STRATA_BINARY};
  argv.insert(argv.end(), before.begin(), before.end());
  for (const char* arg : {"serve", "--otlp-grpc-address", "127.0.0.1:0", "--otlp-http-address",
                          "127.0.0.1:0", "--api-address", "127.0.0.1:0", "--data-dir"}) {
    argv.push_back(arg);
  }
  argv.push_back(dir);
  argv.insert(argv.end(), after.begin(), after.end());
  return argv;
}

// Runs `argv` (a server that creates its first token) until it has printed
// the token's lines, then stops it with SIGTERM. Returns its output.
std::string OutputOfFirstBoot(const std::vector<std::string>& argv) {
  Subprocess server(argv, ChildEnvironment());
  EXPECT_TRUE(server.WaitForOutput("--scope read", std::chrono::seconds(30))) << server.output();
  server.Signal(SIGTERM);
  EXPECT_EQ(server.Wait(std::chrono::seconds(30)), 0) << server.output();
  return server.output();
}

const std::regex kTokenLine(R"(\n +strata_[0-9a-z]{52}\n)");

TEST(HostileCliTest, FirstBootTokenIsPrintedAtLogLevelError) {
  TempDir dir("first-token");
  const std::string out =
      OutputOfFirstBoot(ServeArgv(dir.path() + "/data", {"--log-level", "error"}, {}));
  EXPECT_TRUE(std::regex_search(out, kTokenLine)) << out;
  EXPECT_THAT(out, HasSubstr("Authorization: Bearer <token>"));
  EXPECT_THAT(out, HasSubstr("strata token create --data-dir " + dir.path() +
                             "/data --name <name> --scope read"));
  EXPECT_THAT(out, Not(HasSubstr("effective configuration")));  // the level held
}

TEST(HostileCliTest, LogLevelAfterTheSubcommandApplies) {
  TempDir dir("log-level-after");
  const std::string out =
      OutputOfFirstBoot(ServeArgv(dir.path() + "/data", {}, {"--log-level", "error"}));
  EXPECT_TRUE(std::regex_search(out, kTokenLine)) << out;
  EXPECT_THAT(out, Not(HasSubstr("effective configuration")));
}

TEST(HostileCliTest, ServerProcessHelperStillReadsTheFirstToken) {
  TempDir dir("helper-token");
  testing::ServerProcess server(dir.path() + "/data");
  ASSERT_TRUE(server.ready()) << server.output();
  EXPECT_THAT(server.first_token(), ::testing::MatchesRegex("strata_[0-9a-z]{52}"));
  EXPECT_EQ(server.Stop(), 0);
}

// The child environment with every listener of a `strata serve` on a free
// loopback port, so a probe that regresses into starting a server collides
// with nothing.
std::vector<std::string> LoopbackEnvironment() {
  std::vector<std::string> env = ChildEnvironment();
  for (const char* name :
       {"STRATA_OTLP_GRPC_ADDRESS", "STRATA_OTLP_HTTP_ADDRESS", "STRATA_API_ADDRESS"}) {
    env.push_back(std::string(name) + "=127.0.0.1:0");
  }
  return env;
}

// Runs `args` and expects a usage error whose output has every one of
// `needles` and never reaches the server's effective configuration.
void ExpectUsageError(const std::vector<std::string>& args, const std::vector<std::string>& needles,
                      const std::vector<std::string>& env = LoopbackEnvironment()) {
  std::vector<std::string> argv = {STRATA_BINARY};
  argv.insert(argv.end(), args.begin(), args.end());
  auto [code, out] = RunToCompletion(argv, env);
  EXPECT_EQ(code, kExitUsage) << out;
  for (const std::string& needle : needles) EXPECT_THAT(out, HasSubstr(needle));
  EXPECT_THAT(out, Not(HasSubstr("effective configuration")));
}

TEST(HostileCliTest, NegativeInflightBytesLimitIsRefusedNamingTheFlag) {
  TempDir dir("negative-inflight");
  ExpectUsageError({"serve", "--data-dir", dir.path(), "--inflight-bytes-limit", "-1"},
                   {"--inflight-bytes-limit", "must not be negative"});
}

TEST(HostileCliTest, NegativeMaxBodyBytesIsRefusedNamingItselfNotAnotherFlag) {
  TempDir dir("negative-body");
  auto [code, out] = RunToCompletion({STRATA_BINARY, "serve", "--data-dir", dir.path(),
                                      "--max-body-bytes", "-1", "--grpc-memory-quota-bytes", "-1"},
                                     LoopbackEnvironment());
  EXPECT_EQ(code, kExitUsage) << out;
  EXPECT_THAT(out, HasSubstr("--max-body-bytes"));
  EXPECT_THAT(out, HasSubstr("must not be negative"));
  EXPECT_THAT(out, Not(HasSubstr("at least --max-body-bytes")));
  EXPECT_THAT(out, Not(HasSubstr("listening")));
}

TEST(HostileCliTest, ValueBeyondTheFlagsTypeIsRefused) {
  TempDir dir("too-big");
  ExpectUsageError({"serve", "--data-dir", dir.path(), "--retention-days", "4294967296"},
                   {"--retention-days", "out of range"});
  ExpectUsageError({"serve", "--data-dir", dir.path(), "--api-workers", "99999999999"},
                   {"--api-workers", "out of range"});
}

TEST(HostileCliTest, NegativeValueInEnvironmentIsRefusedNamingTheVariable) {
  TempDir dir("negative-env");
  std::vector<std::string> env = LoopbackEnvironment();
  env.push_back("STRATA_INFLIGHT_BYTES_LIMIT=-1");
  ExpectUsageError({"serve", "--data-dir", dir.path()},
                   {"STRATA_INFLIGHT_BYTES_LIMIT=-1", "from the environment",
                    "--inflight-bytes-limit", "must not be negative"},
                   env);
}

TEST(HostileCliTest, BenchAndLoadgenNumbersAreRangeChecked) {
  TempDir dir("bench-numbers");
  ExpectUsageError({"bench", "writer", "--dir", dir.path() + "/bench", "--spans", "-1"},
                   {"--spans", "must not be negative"});
  // A port nothing listens on, should a regression start sending.
  ExpectUsageError({"loadgen", "--target", "127.0.0.1:1", "--max-requests", "-1"},
                   {"--max-requests", "must not be negative"});
  ExpectUsageError({"loadgen", "--target", "127.0.0.1:1", "--concurrency", "99999999999"},
                   {"--concurrency", "out of range"});
}

TEST(HostileCliTest, MistypedCommandIsNamedWithTheNearestOne) {
  ExpectUsageError({"serv"}, {"unknown command 'serv'", "did you mean 'serve'?"});
  ExpectUsageError({"token", "crate", "--name", "x"},
                   {"unknown command 'crate'", "did you mean 'create'?"});
}

TEST(HostileCliTest, BareStrataPrintsItsHelp) {
  auto [code, out] = RunStrata({});
  EXPECT_EQ(code, kExitUsage) << out;
  EXPECT_THAT(out, HasSubstr("Subcommands:"));
  EXPECT_THAT(out, HasSubstr("Run the server"));
  EXPECT_THAT(out, Not(HasSubstr("A subcommand is required")));
}

TEST(HostileCliTest, UrlAsListenAddressSaysGiveHostPort) {
  TempDir dir("url-address");
  ExpectUsageError({"serve", "--data-dir", dir.path(), "--otlp-http-address", "http://127.0.0.1:1"},
                   {"--otlp-http-address", "give host:port, not a URL"});
}

TEST(HostileCliTest, UrlAsSqlApiAddressSaysGiveHostPort) {
  auto [code, out] = RunStrata({"sql", "--api-address", "http://127.0.0.1:1", "-c", "SELECT 1"});
  EXPECT_NE(code, 0) << out;
  EXPECT_THAT(out, HasSubstr("give host:port, not a URL"));
  EXPECT_THAT(out, Not(HasSubstr("IPv6")));
}

}  // namespace
}  // namespace strata
