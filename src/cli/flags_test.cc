#include "cli/flags.h"

#include <algorithm>
#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace strata::cli {
namespace {

using ::testing::HasSubstr;

constexpr int64_t kUnsignedMin = 0;
constexpr uint64_t kUint64Max = UINT64_MAX;

// CheckIntegerText on a copy of `text`: {error, rewritten text}.
std::pair<std::string, std::string> CheckInteger(std::string text, int64_t min, uint64_t max) {
  std::string error = CheckIntegerText(text, min, max);
  return {error, text};
}

TEST(FlagsTest, NegativeValueOfUnsignedFlagIsRefused) {
  auto [error, text] = CheckInteger("-1", kUnsignedMin, kUint64Max);
  EXPECT_THAT(error, HasSubstr("must not be negative"));
  EXPECT_THAT(error, HasSubstr("from 0 to 18446744073709551615"));
}

TEST(FlagsTest, ValueBeyondTheTypeIsRefused) {
  EXPECT_THAT(CheckInteger("18446744073709551616", kUnsignedMin, kUint64Max).first,
              HasSubstr("from 0 to 18446744073709551615"));
  EXPECT_THAT(CheckInteger("4294967296", kUnsignedMin, UINT32_MAX).first,
              HasSubstr("out of range"));
  EXPECT_THAT(CheckInteger("2147483648", INT32_MIN, INT32_MAX).first, HasSubstr("out of range"));
  EXPECT_THAT(CheckInteger("-2147483649", INT32_MIN, INT32_MAX).first, HasSubstr("out of range"));
}

TEST(FlagsTest, OnlyPlainDecimalIntegersPass) {
  for (const char* bad : {"", "abc", "0x10", "1e3", "+5", " 5", "5 ", "1.5", "-", "--1"}) {
    EXPECT_FALSE(CheckInteger(bad, INT32_MIN, INT32_MAX).first.empty()) << bad;
  }
}

TEST(FlagsTest, ValuesInRangeAreRewrittenInPlainDecimal) {
  EXPECT_EQ(CheckInteger("010", kUnsignedMin, kUint64Max),
            std::make_pair(std::string(), std::string("10")));
  EXPECT_EQ(CheckInteger("18446744073709551615", kUnsignedMin, kUint64Max).first, "");
  EXPECT_EQ(CheckInteger("-2147483648", INT32_MIN, INT32_MAX),
            std::make_pair(std::string(), std::string("-2147483648")));
  EXPECT_EQ(CheckInteger("-9223372036854775808", INT64_MIN, INT64_MAX).first, "");
}

TEST(FlagsTest, OnlyFiniteDecimalFloatsPass) {
  for (const char* good : {"0", "1.5", "2e3", "-0.25"}) EXPECT_EQ(CheckFloatText(good), "") << good;
  for (const char* bad : {"", "nan", "inf", "1e999", "0x10", "1.5s", "abc"}) {
    EXPECT_THAT(CheckFloatText(bad), HasSubstr("not a finite decimal number")) << bad;
  }
}

// An app with one flag of each numeric kind, as strata's commands add them.
struct TestApp {
  TestApp() {
    AddFlag(&app, &env_names, "limit-bytes", &limit_bytes, "");
    AddFlag(&app, &env_names, "threads", &threads, "");
    AddFlag(&app, &env_names, "timeout-sec", &timeout_sec, "");
    AddOption(&app, "--rows", &rows, "");
  }
  CLI::App app{"test", "test"};
  std::set<std::string> env_names;
  uint64_t limit_bytes = 1;
  int threads = 1;
  double timeout_sec = 1;
  uint32_t rows = 1;
};

// Parses `args` and returns CLI11's error message ("" when it parsed).
std::string ParseError(TestApp& test, std::vector<std::string> args) {
  std::reverse(args.begin(), args.end());  // CLI11 takes them last first
  try {
    test.app.parse(args);
  } catch (const CLI::ParseError& e) {
    return e.what();
  }
  return "";
}

TEST(FlagsTest, NegativeUnsignedFlagOnCommandLineIsRefusedNamingTheFlag) {
  TestApp test;
  const std::string error = ParseError(test, {"--limit-bytes", "-1"});
  EXPECT_THAT(error, HasSubstr("--limit-bytes"));
  EXPECT_THAT(error, HasSubstr("must not be negative"));
  EXPECT_EQ(test.limit_bytes, 1u);
}

TEST(FlagsTest, CommandLineOnlyOptionIsRangeCheckedToo) {
  TestApp test;
  EXPECT_THAT(ParseError(test, {"--rows", "4294967296"}), HasSubstr("--rows"));
}

TEST(FlagsTest, InRangeValuesParse) {
  TestApp test;
  ASSERT_EQ(ParseError(test, {"--limit-bytes", "010", "--threads", "-3", "--timeout-sec", "2.5"}),
            "");
  EXPECT_EQ(test.limit_bytes, 10u);  // decimal, not octal
  EXPECT_EQ(test.threads, -3);
  EXPECT_EQ(test.timeout_sec, 2.5);
}

TEST(FlagsTest, BadEnvironmentValueIsRefusedNamingTheVariable) {
  TestApp test;
  const char* envp[] = {"PATH=/bin", "STRATA_LIMIT_BYTES=-1", nullptr};
  absl::Status status = CheckEnvironmentValues(test.app, envp);
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(status.message()), HasSubstr("STRATA_LIMIT_BYTES=-1"));
  EXPECT_THAT(std::string(status.message()), HasSubstr("from the environment"));
  EXPECT_THAT(std::string(status.message()), HasSubstr("--limit-bytes"));
}

TEST(FlagsTest, GoodEnvironmentValuesPass) {
  TestApp test;
  const char* envp[] = {"STRATA_LIMIT_BYTES=5", "STRATA_TIMEOUT_SEC=0.5", "STRATA_OTHER=x",
                        nullptr};
  EXPECT_TRUE(CheckEnvironmentValues(test.app, envp).ok());
}

TEST(FlagsTest, EnvironmentValuesOfSubcommandFlagsAreChecked) {
  CLI::App app{"test", "test"};
  std::set<std::string> env_names;
  int workers = 1;
  AddFlag(app.add_subcommand("serve"), &env_names, "api-workers", &workers, "");
  const char* envp[] = {"STRATA_API_WORKERS=99999999999", nullptr};
  EXPECT_THAT(std::string(CheckEnvironmentValues(app, envp).message()),
              HasSubstr("STRATA_API_WORKERS"));
}

}  // namespace
}  // namespace strata::cli
