// Service health over windows across UTC midnight: traffic from four
// minutes before to four minutes after midnight (one request crossing it,
// so one batch holds rows of two UTC days); services and the per-minute
// RED series
// equal DuckDB's counts over the raw spans for windows before, across and
// after midnight.

#include "api/service_health.h"

#include <chrono>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "api/api_test_server.h"
#include "fmt/format.h"
#include "gtest/gtest.h"
#include "io/posix_file_system.h"
#include "query/duckdb_engine.h"
#include "rollups/rollup_rows.h"
#include "storage/storage.h"
#include "storage/testing/commit_testing.h"
#include "workload/traffic_generator.h"

namespace strata::api {
namespace {

constexpr uint64_t kMinute = rollups::kMinuteNanos;
constexpr uint64_t kMidnight = 1'796'256'000'000'000'000;  // 2026-12-03T00:00:00Z
static_assert(kMidnight % (1440 * kMinute) == 0);

TEST(ServiceHealthTest, WindowsAcrossUtcMidnightMatchDuckDb) {
  PosixFileSystem fs;
  storage::testing::ScopedTempDir tmp("midnight");
  const std::string data_dir = tmp.path() + "/data";
  auto opened = storage::Storage::Open(fs, data_dir);
  ASSERT_TRUE(opened.ok()) << opened.status();
  std::unique_ptr<storage::Storage> storage = *std::move(opened);
  for (uint64_t i = 0; i < 8; ++i) {
    // One request a minute from 23:56; the fifth starts 40 ms before
    // midnight and runs past it.
    const uint64_t start = i == 4 ? kMidnight - 40'000'000 : kMidnight - 4 * kMinute + i * kMinute;
    workload::TrafficGenerator generator(
        workload::TrafficOptions{.seed = 40 + i, .start_time_unix_nano = start});
    storage::WriteRequest request;
    request.traces = generator.Traces(3000);
    request.rows = request.traces->spans.size();
    request.bytes = request.rows * 400;
    ASSERT_TRUE(storage->Write(std::move(request)).ok());
  }
  std::shared_ptr<const storage::Snapshot> snapshot = storage->Pin();

  auto engine = query::DuckDbEngine::Open({});
  ASSERT_TRUE(engine.ok());
  test_support::CreateTruthViews(**engine, data_dir);
  auto truth = [&](const std::string& sql) {
    auto result = (*engine)->Query(sql);
    EXPECT_TRUE(result.ok()) << result.status() << "\n" << sql;
    std::map<std::string, std::string> out;
    if (result.ok()) {
      for (const auto& row : result->rows) out[*row[0]] = *row[1] + "/" + *row[2];
    }
    return out;
  };
  RollupCache cache;
  for (const MinuteWindow window : {MinuteWindow{kMidnight - 4 * kMinute, kMidnight},
                                    MinuteWindow{kMidnight - 2 * kMinute, kMidnight + 2 * kMinute},
                                    MinuteWindow{kMidnight, kMidnight + 4 * kMinute}}) {
    SCOPED_TRACE(fmt::format("window {} .. {}", window.first, window.end));
    const std::string in_window = fmt::format(
        "start_time_unix_nano >= {} AND "
        "start_time_unix_nano < {}",
        window.first, window.end);
    auto rows = cache.ForWindow(fs, *snapshot, window);
    ASSERT_TRUE(rows.ok()) << rows.status();
    // Services: requests and spans.
    std::map<std::string, std::string> got;
    for (const ServiceRed& s : ServicesRed(*rows, window)) {
      got[s.name] = fmt::format("{}/{}", s.requests.count(), s.spans.count());
    }
    EXPECT_EQ(got, truth(fmt::format("SELECT service_name, count(*) FILTER (WHERE kind IN (2, "
                                     "5)), count(*) FROM spans WHERE {} GROUP BY 1",
                                     in_window)));
    // The requests per minute, with errors.
    got.clear();
    const std::vector<Red> series = RedSeries(*rows, window, kMinute, {});
    ASSERT_EQ(series.size(), 4u);
    for (size_t i = 0; i < series.size(); ++i) {
      if (series[i].count() == 0) continue;
      got[std::to_string(window.first + i * kMinute)] =
          fmt::format("{}/{}", series[i].count(), series[i].errors());
    }
    const auto want = truth(fmt::format(
        "SELECT (start_time_unix_nano // {0} * {0})::VARCHAR, count(*), count(*) FILTER (WHERE "
        "status_code = 2) FROM spans WHERE kind IN (2, 5) AND {1} GROUP BY 1",
        kMinute, in_window));
    EXPECT_EQ(got, want);
    EXPECT_EQ(want.size(), 4u);
  }
  storage->Shutdown(std::chrono::seconds(5));
}

}  // namespace
}  // namespace strata::api
