// `strata serve`'s option parsing: --evict-after, --cache-size, --node-id and
// --promql-cache-mb as the command line, CLI11 and ValidateServeOptions take
// them.

#include <algorithm>
#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include "CLI/CLI.hpp"
#include "cli/serve.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace strata::cli {
namespace {

using ::testing::HasSubstr;

constexpr int64_t kSecondMicros = 1'000'000;
constexpr int64_t kDayMicros = 86'400 * kSecondMicros;

TEST(ParseEvictAfterTest, EachUnitScalesToMicroseconds) {
  EXPECT_EQ(*ParseEvictAfter("90s"), 90 * kSecondMicros);
  EXPECT_EQ(*ParseEvictAfter("30m"), 30 * 60 * kSecondMicros);
  EXPECT_EQ(*ParseEvictAfter("6h"), 6 * 3600 * kSecondMicros);
  EXPECT_EQ(*ParseEvictAfter("7d"), 7 * kDayMicros);
  EXPECT_EQ(*ParseEvictAfter("007d"), 7 * kDayMicros);
}

TEST(ParseEvictAfterTest, MalformedValuesAreRefusedNamingTheFlag) {
  for (const char* bad :
       {"", "d", "7", "0d", "-1d", "+1d", "1.5h", "7 d", " 7d", "7D", "7w", "d7", "0x10s", "7dd"}) {
    absl::StatusOr<int64_t> parsed = ParseEvictAfter(bad);
    ASSERT_FALSE(parsed.ok()) << bad;
    EXPECT_EQ(parsed.status().code(), absl::StatusCode::kInvalidArgument) << bad;
    EXPECT_THAT(std::string(parsed.status().message()), HasSubstr("--evict-after")) << bad;
    EXPECT_THAT(std::string(parsed.status().message()), HasSubstr("expected a positive whole"))
        << bad;
  }
}

TEST(ParseEvictAfterTest, AtMost36500DaysInAnyUnit) {
  EXPECT_EQ(*ParseEvictAfter("36500d"), 36500 * kDayMicros);
  EXPECT_EQ(*ParseEvictAfter("876000h"), 36500 * kDayMicros);
  EXPECT_EQ(*ParseEvictAfter("3153600000s"), 36500 * kDayMicros);
  // One past the cap in each unit, and day counts whose product with the
  // unit would overflow int64 (10, 11 and 20+ digits).
  for (const char* too_long :
       {"36501d", "876001h", "52560001m", "3153600001s", "9999999999d", "99999999999d",
        "106751991d", "99999999999999999999999d", "9223372036854775807s"}) {
    absl::StatusOr<int64_t> parsed = ParseEvictAfter(too_long);
    ASSERT_FALSE(parsed.ok()) << too_long;
    EXPECT_EQ(parsed.status().code(), absl::StatusCode::kInvalidArgument) << too_long;
    EXPECT_THAT(std::string(parsed.status().message()), HasSubstr("at most 36500d")) << too_long;
    EXPECT_THAT(std::string(parsed.status().message()), HasSubstr(too_long));
  }
}

// serve's flags on a command of their own, as `strata serve` adds them.
struct ServeFlags {
  ServeFlags() { AddServeFlags(&app, &env_names, &options); }
  // CLI11's error ("" when it parsed), then ValidateServeOptions's.
  std::string Parse(std::vector<std::string> args) {
    std::reverse(args.begin(), args.end());  // CLI11 takes them last first
    try {
      app.parse(args);
    } catch (const CLI::ParseError& e) {
      return e.what();
    }
    return std::string(ValidateServeOptions(options).message());
  }
  CLI::App app{"serve", "serve"};
  std::set<std::string> env_names;
  ServeOptions options;
};

TEST(ServeOptionsTest, EvictionFlagsParseWithAnObjectStore) {
  ServeFlags flags;
  ASSERT_EQ(flags.Parse({"--object-store", "file:///tmp/store", "--evict-after", "7d",
                         "--cache-size", "1048576"}),
            "");
  EXPECT_EQ(flags.options.evict_after, "7d");
  EXPECT_EQ(flags.options.cache_size, 1048576u);
  EXPECT_TRUE(flags.env_names.contains("STRATA_EVICT_AFTER"));
  EXPECT_TRUE(flags.env_names.contains("STRATA_CACHE_SIZE"));
}

TEST(ServeOptionsTest, CacheSizeZeroMeansTheDefaultAndTheLargestValuePasses) {
  ServeFlags zero;
  EXPECT_EQ(zero.Parse({"--object-store", "file:///s", "--evict-after", "1h", "--cache-size", "0"}),
            "");
  EXPECT_EQ(zero.options.cache_size, 0u);
  ServeFlags largest;
  EXPECT_EQ(largest.Parse({"--object-store", "file:///s", "--evict-after", "1h", "--cache-size",
                           "18446744073709551615"}),
            "");
  EXPECT_EQ(largest.options.cache_size, UINT64_MAX);
}

TEST(ServeOptionsTest, BadCacheSizesAreRefusedNamingTheFlag) {
  for (const char* bad : {"-1", "1GiB", "1.5", "abc", "", "18446744073709551616", "0x10"}) {
    ServeFlags flags;
    const std::string error =
        flags.Parse({"--object-store", "file:///s", "--evict-after", "1h", "--cache-size", bad});
    EXPECT_THAT(error, HasSubstr("--cache-size")) << bad;
  }
}

TEST(ServeOptionsTest, BadEvictAfterIsRefusedByValidation) {
  ServeFlags malformed;
  EXPECT_THAT(malformed.Parse({"--object-store", "file:///s", "--evict-after", "5x"}),
              HasSubstr("--evict-after \"5x\": expected a positive whole number"));
  ServeFlags too_long;
  EXPECT_THAT(too_long.Parse({"--object-store", "file:///s", "--evict-after", "9999999999d"}),
              HasSubstr("--evict-after \"9999999999d\": at most 36500d"));
}

TEST(ServeOptionsTest, EvictionFlagsNeedAnObjectStore) {
  ServeFlags evict;
  EXPECT_THAT(evict.Parse({"--evict-after", "7d"}),
              HasSubstr("--evict-after and --cache-size need --object-store"));
  ServeFlags cache;
  EXPECT_THAT(cache.Parse({"--cache-size", "100"}),
              HasSubstr("--evict-after and --cache-size need --object-store"));
}

TEST(ServeOptionsTest, NoEvictionFlagsMeansNoEviction) {
  ServeFlags flags;
  ASSERT_EQ(flags.Parse({}), "");
  EXPECT_EQ(flags.options.evict_after, "");
  EXPECT_EQ(flags.options.cache_size, 0u);
}

TEST(ServeOptionsTest, NodeIdIsTwoCharactersOfAnIdAndDefaultsTo00) {
  ServeFlags none;
  ASSERT_EQ(none.Parse({}), "");
  EXPECT_EQ(none.options.node_id, "00");
  EXPECT_TRUE(none.env_names.contains("STRATA_NODE_ID"));
  ServeFlags set;
  ASSERT_EQ(set.Parse({"--node-id", "7k"}), "");
  EXPECT_EQ(set.options.node_id, "7k");
  for (const char* bad : {"", "7", "7K", "100", "-1"}) {
    ServeFlags flags;
    EXPECT_THAT(flags.Parse({"--node-id", bad}), HasSubstr("--node-id")) << bad;
  }
}

TEST(ServeOptionsTest, CatalogIsAPostgresUrlAndNeedsAnObjectStore) {
  ServeFlags none;
  ASSERT_EQ(none.Parse({}), "");
  EXPECT_EQ(none.options.catalog, "");
  EXPECT_TRUE(none.env_names.contains("STRATA_CATALOG"));
  ServeFlags set;
  ASSERT_EQ(set.Parse({"--catalog", "postgres://strata@127.0.0.1:5432/strata", "--object-store",
                       "file:///tmp/store"}),
            "");
  EXPECT_EQ(set.options.catalog, "postgres://strata@127.0.0.1:5432/strata");
  ServeFlags alone;
  EXPECT_THAT(alone.Parse({"--catalog", "postgresql://h/d"}),
              HasSubstr("--catalog needs --object-store"));
  ServeFlags other;
  EXPECT_THAT(other.Parse({"--catalog", "mysql://h/d", "--object-store", "file:///tmp/store"}),
              HasSubstr("--catalog must be a PostgreSQL URL"));
  // How long a removed batch's objects stay: 10 minutes unless set.
  EXPECT_EQ(set.options.catalog_delete_after_sec, 600);
  EXPECT_TRUE(set.env_names.contains("STRATA_CATALOG_DELETE_AFTER_SEC"));
  for (const char* bad : {"0", "-5", "604801", "soon"}) {
    ServeFlags flags;
    EXPECT_THAT(flags.Parse({"--catalog", "postgres://h/d", "--object-store", "file:///tmp/store",
                             "--catalog-delete-after-sec", bad}),
                HasSubstr("--catalog-delete-after-sec"))
        << bad;
  }
  ServeFlags grace;
  ASSERT_EQ(grace.Parse({"--catalog", "postgres://h/d", "--object-store", "file:///tmp/store",
                         "--catalog-delete-after-sec", "5"}),
            "");
  EXPECT_EQ(grace.options.catalog_delete_after_sec, 5);
}

TEST(ServeOptionsTest, PromqlCacheMbDefaultsTo256AndZeroTurnsTheCacheOff) {
  ServeFlags none;
  ASSERT_EQ(none.Parse({}), "");
  EXPECT_EQ(none.options.promql_cache_mb, 256u);
  EXPECT_TRUE(none.env_names.contains("STRATA_PROMQL_CACHE_MB"));
  ServeFlags off;
  ASSERT_EQ(off.Parse({"--promql-cache-mb", "0"}), "");
  EXPECT_EQ(off.options.promql_cache_mb, 0u);
  ServeFlags largest;
  ASSERT_EQ(largest.Parse({"--promql-cache-mb", std::to_string(kMaxPromqlCacheMb)}), "");
  EXPECT_EQ(largest.options.promql_cache_mb, kMaxPromqlCacheMb);
}

TEST(ServeOptionsTest, BadPromqlCacheMbIsRefusedNamingTheFlag) {
  for (const char* bad : {"-1", "256MiB", "1.5", "abc", "", "0x10", "4294967296"}) {
    ServeFlags flags;
    EXPECT_THAT(flags.Parse({"--promql-cache-mb", bad}), HasSubstr("--promql-cache-mb")) << bad;
  }
  ServeFlags too_large;
  EXPECT_THAT(too_large.Parse({"--promql-cache-mb", std::to_string(kMaxPromqlCacheMb + 1)}),
              HasSubstr("--promql-cache-mb must be at most 65536"));
}

}  // namespace
}  // namespace strata::cli
