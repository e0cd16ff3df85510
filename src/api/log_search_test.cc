// SearchLogs (search.h) over batches hours apart: the newest matches are
// found in slices that grow from the window's end, so pages whose matches
// lie in several slices, a page boundary inside a run of equal times or of
// identical records, and records without a time (a window from 0) must
// still page through exactly what one plain DuckDB query over every file
// orders the same way.

#include <algorithm>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "api/api_test_server.h"
#include "api/log_cursor.h"
#include "api/log_records.h"
#include "api/params.h"
#include "api/search.h"
#include "fmt/format.h"
#include "gtest/gtest.h"
#include "io/posix_file_system.h"
#include "otlp/decode.h"
#include "query/duckdb_engine.h"
#include "query/query_pool.h"
#include "storage/storage.h"
#include "storage/testing/commit_testing.h"

namespace strata::api {
namespace {

constexpr int64_t kSecond = 1'000'000'000;
constexpr int64_t kMinute = 60 * kSecond;

struct Record {
  int64_t time = 0;  // 0: no time (observed_time only)
  int64_t observed_time = 0;
  std::string body;
};

std::string LogsJson(const std::vector<Record>& records) {
  std::string list;
  for (const Record& r : records) {
    list += fmt::format(R"({}{{"timeUnixNano":"{}","observedTimeUnixNano":"{}",)"
                        R"("body":{{"stringValue":"{}"}}}})",
                        list.empty() ? "" : ",", r.time, r.observed_time, r.body);
  }
  return fmt::format(
      R"({{"resourceLogs":[{{"resource":{{"attributes":[{{"key":"service.name","value":)"
      R"({{"stringValue":"slices"}}}}]}},"scopeLogs":[{{"scope":{{"name":"t"}},)"
      R"("logRecords":[{}]}}]}}]}})",
      list);
}

class LogSearchTest : public ::testing::Test {
 protected:
  void SetUp() override {
    now_ = SystemNowUnixNano();
    data_dir_ = tmp_.path() + "/data";
    auto opened = storage::Storage::Open(fs_, data_dir_);
    ASSERT_TRUE(opened.ok()) << opened.status();
    storage_ = *std::move(opened);
    // One batch per age: each holds a few "Needle" records among others,
    // so a page of 3 needs the newest minute, then eight, then the rest.
    int serial = 0;
    for (const int64_t age :
         {170 * kMinute, 90 * kMinute, 20 * kMinute, 5 * kMinute, 30 * kSecond}) {
      std::vector<Record> records;
      for (int i = 0; i < 6; ++i) {
        const int64_t t = now_ - age + i * kSecond;
        records.push_back(
            {t, t + 1000, fmt::format("{} {}", i % 3 == 0 ? "Needle" : "hay", ++serial)});
      }
      if (age == 20 * kMinute) {
        // Equal times, so a page can end inside them (the row key orders
        // them).
        for (int i = 0; i < 4; ++i) {
          records.push_back({now_ - age + 30 * kSecond, now_, fmt::format("needle tie {}", i)});
        }
      }
      if (age == 5 * kMinute) {
        // Identical records: one key, so a page that ends among them must
        // count how many it showed.
        for (int i = 0; i < 3; ++i) {
          records.push_back({now_ - age + 40 * kSecond, now_ - age, "needle twin"});
        }
      }
      if (age == 90 * kMinute) {
        // No time: meta.json counts it at its observed time, 90 minutes
        // ago; only a window from 0 holds time 0.
        records.push_back({0, now_ - age, "NEEDLE untimed"});
      }
      auto batch = std::make_unique<otlp::LogBatch>();
      ASSERT_TRUE(otlp::DecodeLogsJson(LogsJson(records), batch.get()).ok());
      storage::WriteRequest request;
      request.logs = std::move(batch);
      request.rows = records.size();
      request.bytes = 4096;
      ASSERT_TRUE(storage_->Write(std::move(request)).ok());
    }
    pool_ = test_support::OpenTestPool(data_dir_, 1, 1);
    ASSERT_NE(pool_, nullptr);
  }

  void TearDown() override {
    pool_.reset();
    if (storage_ != nullptr) storage_->Shutdown(std::chrono::seconds(5));
  }

  // (time, body) of every record matching "needle" in [start, end),
  // newest first, from plain DuckDB over every logs file.
  std::vector<std::pair<int64_t, std::string>> Truth(int64_t start, int64_t end) {
    auto engine = query::DuckDbEngine::Open({});
    EXPECT_TRUE(engine.ok());
    std::string files;
    for (const auto& entry : std::filesystem::recursive_directory_iterator(data_dir_)) {
      if (entry.path().filename() == "logs.parquet") {
        files += (files.empty() ? "'" : ",'") + entry.path().string() + "'";
      }
    }
    auto result = (*engine)->Query(fmt::format(
        "SELECT time_unix_nano, body_str FROM read_parquet([{}]) WHERE row_kind = 0 AND "
        "time_unix_nano >= {} AND time_unix_nano < {} AND contains(lower(body_str), 'needle') "
        "ORDER BY time_unix_nano DESC",
        files, start, end));
    EXPECT_TRUE(result.ok()) << result.status();
    std::vector<std::pair<int64_t, std::string>> out;
    if (!result.ok()) return out;
    for (const auto& row : result->rows) out.emplace_back(std::stoll(*row[0]), *row[1]);
    return out;
  }

  // Every page of `search`, concatenated.
  std::vector<std::pair<int64_t, std::string>> AllPages(LogSearch search, int* pages) {
    std::vector<std::pair<int64_t, std::string>> out;
    *pages = 0;
    const std::shared_ptr<const storage::Snapshot> snapshot = storage_->Pin();
    for (;;) {
      absl::StatusOr<LogPage> page = SearchLogs(*pool_, fs_, *snapshot, data_dir_, search);
      EXPECT_TRUE(page.ok()) << page.status();
      if (!page.ok() || ++*pages > 50) break;
      for (const LogEntry& entry : page->logs) {
        out.emplace_back(entry.time, std::string(page->values.bodies.str[entry.body]));
      }
      if (page->next_cursor.empty()) break;
      search.cursor = page->next_cursor;
    }
    return out;
  }

  PosixFileSystem fs_;
  storage::testing::ScopedTempDir tmp_{"log_search"};
  std::string data_dir_;
  int64_t now_ = 0;
  std::unique_ptr<storage::Storage> storage_;
  std::unique_ptr<query::QueryPool> pool_;
};

TEST_F(LogSearchTest, PagesAcrossGrowingSlicesGiveWhatOneQueryGives) {
  for (const int64_t limit : {1, 2, 3, 4, 100}) {
    LogSearch search;
    search.start = now_ - 3 * 60 * kMinute;
    search.end = now_ + kMinute;
    search.text = "needle";
    search.limit = limit;
    int pages = 0;
    const auto got = AllPages(search, &pages);
    const auto truth = Truth(search.start, search.end);
    ASSERT_EQ(truth.size(), 17u);  // 2 per batch, 4 ties, 3 twins; not the untimed one
    // Equal times may come in either order; the rest must match in order.
    ASSERT_EQ(got.size(), truth.size()) << "limit " << limit;
    for (size_t i = 0; i < got.size(); ++i) {
      EXPECT_EQ(got[i].first, truth[i].first) << "limit " << limit << " row " << i;
    }
    auto sorted = [](auto rows) {
      std::sort(rows.begin(), rows.end());
      return rows;
    };
    EXPECT_EQ(sorted(got), sorted(truth)) << "limit " << limit;
    EXPECT_EQ(pages, (static_cast<int64_t>(truth.size()) + limit - 1) / limit) << limit;
  }
}

TEST_F(LogSearchTest, AWindowFromZeroFindsARecordWithoutATime) {
  LogSearch search;
  search.start = 0;
  search.end = now_ - 100 * kMinute;  // before the untimed record's observed time
  search.text = "needle";
  search.limit = 2;
  int pages = 0;
  const auto got = AllPages(search, &pages);
  const auto truth = Truth(search.start, search.end);
  ASSERT_EQ(truth.size(), 3u);  // the oldest batch's two, and the untimed one
  EXPECT_EQ(got, truth);
  EXPECT_EQ(got.back().first, 0);
}

TEST_F(LogSearchTest, AWindowOfOneOldBatchFindsOnlyIt) {
  LogSearch search;
  search.start = now_ - 91 * kMinute;
  search.end = now_ - 89 * kMinute;
  search.text = "NEEDLE";
  int pages = 0;
  const auto got = AllPages(search, &pages);
  EXPECT_EQ(got, Truth(search.start, search.end));
  EXPECT_EQ(got.size(), 2u);
  EXPECT_EQ(pages, 1);
}

TEST_F(LogSearchTest, TooManyMatchesAtThePagesLastTimeAreRefused) {
  // The 20-minute batch: two needles, then four at one time, newest; a
  // page of 1 ends among those four.
  LogSearch search;
  search.start = now_ - 21 * kMinute;
  search.end = now_ - 19 * kMinute;
  search.text = "needle";
  search.limit = 1;
  const std::shared_ptr<const storage::Snapshot> snapshot = storage_->Pin();
  search.max_tie_rows = 4;
  absl::StatusOr<LogPage> page = SearchLogs(*pool_, fs_, *snapshot, data_dir_, search);
  ASSERT_TRUE(page.ok()) << page.status();
  EXPECT_EQ(page->logs.size(), 1u);
  search.max_tie_rows = 3;
  page = SearchLogs(*pool_, fs_, *snapshot, data_dir_, search);
  EXPECT_TRUE(absl::IsFailedPrecondition(page.status())) << page.status();
  EXPECT_NE(std::string(page.status().message()).find("more than 3 matching records share one"),
            std::string::npos)
      << page.status();
}

TEST_F(LogSearchTest, RecordPositionsOutsideTheSnapshotAreErrors) {
  const std::shared_ptr<const storage::Snapshot> snapshot = storage_->Pin();
  const auto ids = internal::LogsFileBatchIds(*snapshot, data_dir_);
  ASSERT_FALSE(ids.empty());
  LogValues values;
  absl::StatusOr<std::vector<internal::KeyedLogEntry>> read =
      internal::ReadLogRecords(fs_, ids, {{data_dir_ + "/elsewhere/logs.parquet", 0, 0}}, &values);
  EXPECT_TRUE(absl::IsInternal(read.status())) << read.status();
  read = internal::ReadLogRecords(fs_, ids, {{ids.begin()->first, 1'000'000, 0}}, &values);
  EXPECT_TRUE(absl::IsInvalidArgument(read.status())) << read.status();
  read = internal::ReadLogRecords(fs_, ids, {{ids.begin()->first, 0, 0}}, &values);
  ASSERT_TRUE(read.ok()) << read.status();
  EXPECT_EQ(read->size(), 1u);
}

TEST(LogCursorTest, RoundTripsAndRefusesEverythingElse) {
  const internal::LogCursor cursor{1796018400000000000, 18446744073709551615u, 3};
  const std::string text = internal::EncodeLogCursor(cursor);
  EXPECT_EQ(text, "v2.1796018400000000000.18446744073709551615.3");
  absl::StatusOr<internal::LogCursor> back = internal::DecodeLogCursor(text);
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(back->time, cursor.time);
  EXPECT_EQ(back->key, cursor.key);
  EXPECT_EQ(back->shown, cursor.shown);
  for (const char* bad : {"", "v1.5.6", "v2.5.6", "v2.5.6.0", "v2.5.6.1.", "v2.5..1", "v2.-5.6.1",
                          "v2.5.6.1x", "v2.5.18446744073709551616.1", "v3.5.6.1", "v2. 5.6.1"}) {
    absl::StatusOr<internal::LogCursor> refused = internal::DecodeLogCursor(bad);
    EXPECT_TRUE(absl::IsInvalidArgument(refused.status())) << bad;
  }
}

}  // namespace
}  // namespace strata::api
