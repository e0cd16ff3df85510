#include "api/params.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace strata::api {
namespace {

using ::testing::HasSubstr;

constexpr int64_t kSecond = 1'000'000'000;

void ExpectError(const absl::Status& status, std::string_view message) {
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << status;
  EXPECT_EQ(std::string(status.message()), std::string(message));
}

TEST(ParamsTest, QueryStringIsSplitAndPercentDecoded) {
  auto params = QueryParams::Parse("service=check%20out&q=a+b&attr.http.route=%2Fapi&empty=&&x");
  ASSERT_TRUE(params.ok()) << params.status();
  EXPECT_EQ(params->Take("service")->value(), "check out");
  EXPECT_EQ(params->Take("q")->value(), "a b");
  EXPECT_EQ(params->Take("empty")->value(), "");
  EXPECT_EQ(params->Take("x")->value(), "");
  EXPECT_FALSE(params->Take("absent")->has_value());
  auto attributes = params->TakeAttributes();
  ASSERT_TRUE(attributes.ok());
  ASSERT_EQ(attributes->size(), 1u);
  EXPECT_EQ((*attributes)[0].first, "http.route");
  EXPECT_EQ((*attributes)[0].second, "/api");
  EXPECT_TRUE(params->Finish().ok());
}

TEST(ParamsTest, BadEscapesAreRefused) {
  ExpectError(QueryParams::Parse("q=%zz").status(), "query: bad percent escape in \"%zz\"");
  ExpectError(QueryParams::Parse("q=%2").status(), "query: truncated percent escape in \"%2\"");
  ExpectError(QueryParams::Parse("=x").status(), "query: parameter with an empty name: \"=x\"");
}

TEST(ParamsTest, UnknownAndRepeatedParametersAreRefused) {
  auto params = QueryParams::Parse("service=a&servcie=b&limit=1&limit=2");
  ASSERT_TRUE(params.ok());
  EXPECT_TRUE(params->Take("service").ok());
  ExpectError(params->Take("limit").status(), "limit: given more than once");
  ExpectError(params->Finish(), "servcie: unknown parameter");
  auto empty_key = QueryParams::Parse("attr.=x");
  ASSERT_TRUE(empty_key.ok());
  ExpectError(empty_key->TakeAttributes().status(), "attr.: empty attribute key");
}

TEST(ParamsTest, TimesAcceptRfc3339AndUnixNanos) {
  EXPECT_EQ(*ParseTime("start", "0"), 0);
  EXPECT_EQ(*ParseTime("start", "1750000000000000000"), 1750000000000000000);
  EXPECT_EQ(*ParseTime("start", "1970-01-01T00:00:00Z"), 0);
  EXPECT_EQ(*ParseTime("start", "2026-11-30T06:00:00Z"), 1796018400 * kSecond);
  EXPECT_EQ(*ParseTime("start", "2026-11-30T07:00:00+01:00"), 1796018400 * kSecond);
  EXPECT_EQ(*ParseTime("start", "2026-11-30t05:30:00-00:30"), 1796018400 * kSecond);
  EXPECT_EQ(*ParseTime("start", "2026-11-30T06:00:00.25Z"), 1796018400 * kSecond + 250'000'000);
  EXPECT_EQ(*ParseTime("start", "2026-11-30T06:00:00.123456789123z"),
            1796018400 * kSecond + 123'456'789);
  EXPECT_EQ(*ParseTime("start", "2024-02-29T00:00:00Z"), 1709164800 * kSecond);
  ExpectError(ParseTime("start", "yesterday").status(),
              "start: not RFC 3339 or unix nanoseconds: \"yesterday\"");
  ExpectError(ParseTime("end", "2026-11-30T06:00:00").status(),
              "end: not RFC 3339 or unix nanoseconds: \"2026-11-30T06:00:00\"");
  ExpectError(ParseTime("end", "2026-02-29T06:00:00Z").status(),
              "end: not RFC 3339 or unix nanoseconds: \"2026-02-29T06:00:00Z\"");
  ExpectError(ParseTime("end", "2026-11-30T06:00:00.Z").status(),
              "end: not RFC 3339 or unix nanoseconds: \"2026-11-30T06:00:00.Z\"");
  ExpectError(ParseTime("end", "-5").status(), "end: not RFC 3339 or unix nanoseconds: \"-5\"");
  ExpectError(ParseTime("end", "99999999999999999999").status(),
              "end: unix nanoseconds out of range: \"99999999999999999999\"");
  ExpectError(ParseTime("end", "1969-12-31T23:59:59Z").status(),
              "end: outside 1970..2262: \"1969-12-31T23:59:59Z\"");
}

TEST(ParamsTest, DurationsTakeUnits) {
  EXPECT_EQ(*ParseDuration("d", "250ms"), 250'000'000);
  EXPECT_EQ(*ParseDuration("d", "1.5s"), 1'500'000'000);
  EXPECT_EQ(*ParseDuration("d", "2m"), 120 * kSecond);
  EXPECT_EQ(*ParseDuration("d", "1h"), 3600 * kSecond);
  EXPECT_EQ(*ParseDuration("d", "500us"), 500'000);
  EXPECT_EQ(*ParseDuration("d", "500\xC2\xB5s"), 500'000);
  EXPECT_EQ(*ParseDuration("d", "100ns"), 100);
  EXPECT_EQ(*ParseDuration("d", "12345"), 12345);
  EXPECT_EQ(*ParseDuration("d", ".5s"), 500'000'000);
  EXPECT_EQ(*ParseDuration("d", "0"), 0);
  const std::string why = "not a duration (like 250ms, 1.5s, 2m, 1h, or integer nanoseconds): ";
  ExpectError(ParseDuration("min_duration", "fast").status(), "min_duration: " + why + "\"fast\"");
  ExpectError(ParseDuration("min_duration", "5d").status(), "min_duration: " + why + "\"5d\"");
  ExpectError(ParseDuration("min_duration", "-5s").status(), "min_duration: " + why + "\"-5s\"");
  ExpectError(ParseDuration("min_duration", "1.5").status(), "min_duration: " + why + "\"1.5\"");
  ExpectError(ParseDuration("min_duration", "").status(), "min_duration: " + why + "\"\"");
  ExpectError(ParseDuration("step", "9999999999h").status(),
              "step: duration out of range: \"9999999999h\"");
}

TEST(ParamsTest, IntegersLimitsAndWindows) {
  EXPECT_EQ(*ParseInteger("limit", "7", 1, 10), 7);
  ExpectError(ParseInteger("limit", "0", 1, 10).status(), "limit: not an integer in 1..10: \"0\"");
  ExpectError(ParseInteger("limit", "7x", 1, 10).status(),
              "limit: not an integer in 1..10: \"7x\"");

  auto params = QueryParams::Parse("limit=1001");
  ASSERT_TRUE(params.ok());
  ExpectError(TakeLimit(*params, Limit{20, 1000}).status(),
              "limit: not an integer in 1..1000: \"1001\"");
  auto none = QueryParams::Parse("");
  ASSERT_TRUE(none.ok());
  EXPECT_EQ(*TakeLimit(*none, Limit{20, 1000}), 20);

  const NowFunction now = [] { return int64_t{10'000} * kSecond; };
  auto defaults = TakeWindow(*none, now);
  ASSERT_TRUE(defaults.ok());
  EXPECT_EQ(defaults->end, 10'000 * kSecond);
  EXPECT_EQ(defaults->start, 6'400 * kSecond);

  auto explicit_window = QueryParams::Parse("start=1970-01-01T00:00:01Z&end=5000000000");
  ASSERT_TRUE(explicit_window.ok());
  auto window = TakeWindow(*explicit_window, now);
  ASSERT_TRUE(window.ok()) << window.status();
  EXPECT_EQ(window->start, kSecond);
  EXPECT_EQ(window->end, 5 * kSecond);

  auto only_end = QueryParams::Parse("end=7200000000000");
  ASSERT_TRUE(only_end.ok());
  EXPECT_EQ(TakeWindow(*only_end, now)->start, 3600 * kSecond);

  auto reversed = QueryParams::Parse("start=10&end=5");
  ASSERT_TRUE(reversed.ok());
  ExpectError(TakeWindow(*reversed, now).status(), "start: must be before end");
  auto bad_start = QueryParams::Parse("start=yesterday");
  ASSERT_TRUE(bad_start.ok());
  ExpectError(TakeWindow(*bad_start, now).status(),
              "start: not RFC 3339 or unix nanoseconds: \"yesterday\"");
}

TEST(ParamsTest, TraceIdsSeveritiesAndStatuses) {
  auto id = ParseTraceId("trace_id", "0123456789ABCDEF0123456789abcdef");
  ASSERT_TRUE(id.ok());
  EXPECT_EQ(TraceIdHex(*id), "0123456789abcdef0123456789abcdef");
  ExpectError(ParseTraceId("trace_id", "xyz").status(), "trace_id: not 32 hex digits: \"xyz\"");
  ExpectError(ParseTraceId("trace_id", "0123456789abcdef0123456789abcdeg").status(),
              "trace_id: not 32 hex digits: \"0123456789abcdef0123456789abcdeg\"");
  ExpectError(ParseTraceId("trace_id", std::string(32, '0')).status(),
              "trace_id: the all-zero trace id is invalid");

  EXPECT_EQ(*ParseSeverity("severity_min", "warn"), 13);
  EXPECT_EQ(*ParseSeverity("severity_min", "ERROR"), 17);
  EXPECT_EQ(*ParseSeverity("severity_min", "24"), 24);
  EXPECT_THAT(std::string(ParseSeverity("severity_min", "25").status().message()),
              HasSubstr("severity_min: not a severity"));
  EXPECT_THAT(std::string(ParseSeverity("severity_min", "loud").status().message()),
              HasSubstr("\"loud\""));

  EXPECT_EQ(*ParseStatus("status", "error"), 2);
  EXPECT_EQ(*ParseStatus("status", "ok"), 1);
  EXPECT_EQ(*ParseStatus("status", "unset"), 0);
  ExpectError(ParseStatus("status", "failed").status(),
              "status: not one of unset, ok, error: \"failed\"");
}

TEST(ParamsTest, LongValuesAreCutInMessages) {
  const std::string long_value(100, 'x');
  EXPECT_EQ(QuoteForError(long_value), "\"" + std::string(64, 'x') + "...\"");
}

}  // namespace
}  // namespace strata::api

namespace strata::api {
namespace {

TEST(PromParamsTest, TimesAsPrometheusReadsThem) {
  EXPECT_EQ(*ParsePromTime("time", "1700000000"), 1'700'000'000'000);
  EXPECT_EQ(*ParsePromTime("time", "1700000000.1234"), 1'700'000'000'123);
  EXPECT_EQ(*ParsePromTime("time", "2023-11-14T22:13:20.5Z"), 1'700'000'000'500);
  EXPECT_EQ(*ParsePromTime("time", ".5"), 500);
  for (const char* bad : {"", "-1", "abc", "1e3", "1700000000x", "99999999999999999"}) {
    EXPECT_EQ(ParsePromTime("time", bad).status().code(), absl::StatusCode::kInvalidArgument)
        << bad;
  }
}

TEST(PromParamsTest, DurationsAsPrometheusReadsThem) {
  EXPECT_EQ(*ParsePromDuration("step", "15"), 15'000);
  EXPECT_EQ(*ParsePromDuration("step", "0.5"), 500);
  EXPECT_EQ(*ParsePromDuration("step", "1h30m"), 5'400'000);
  EXPECT_EQ(*ParsePromDuration("step", "1d2h3m4s5ms"), 93'784'005);
  EXPECT_EQ(*ParsePromDuration("step", "1y"), 365LL * 86'400'000);
  for (const char* bad : {"", "0", "-5", "5x", "1m1h", "1h1h", "m", "1.5m", "0s"}) {
    EXPECT_EQ(ParsePromDuration("step", bad).status().code(), absl::StatusCode::kInvalidArgument)
        << bad;
  }
}

}  // namespace
}  // namespace strata::api
