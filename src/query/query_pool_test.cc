#include "query/query_pool.h"

#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <thread>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "query/duckdb_engine.h"
#include "storage/table/logs_table.h"
#include "storage/table/metrics_table.h"
#include "storage/table/spans_table.h"
#include "workload/traffic_generator.h"

namespace strata::query {
namespace {

using ::testing::HasSubstr;
using Clock = std::chrono::steady_clock;

constexpr char kBatchId[] = "20250614093015123456000";

// A data directory under /tmp with a few batches' Parquet files written by
// strata's own table writers from generated traffic.
class DataDir {
 public:
  DataDir() {
    static std::atomic<int> counter{0};
    root_ = std::filesystem::temp_directory_path() /
            ("strata-query-pool-" + std::to_string(getpid()) + "-" + std::to_string(counter++));
    std::filesystem::remove_all(root_);
    std::filesystem::create_directories(root_);
  }
  ~DataDir() { std::filesystem::remove_all(root_); }

  std::string path() const { return root_.string(); }

  // Writes batch `index`'s spans, logs and metrics (seeded by `index`);
  // returns the three paths and records the meta row counts.
  struct Batch {
    std::string spans, logs, metrics;
    uint64_t span_rows = 0, span_file_rows = 0, log_rows = 0, metric_rows = 0;
  };
  Batch WriteBatch(int index, int spans = 300) {
    workload::TrafficOptions options;
    options.seed = static_cast<uint64_t>(index) + 1;
    workload::TrafficGenerator generator(options);
    std::unique_ptr<otlp::TraceBatch> traces = generator.Traces(spans);
    std::unique_ptr<otlp::LogBatch> logs = generator.Logs(spans / 2);
    std::unique_ptr<otlp::MetricBatch> metrics = generator.Metrics(spans / 2);
    const std::filesystem::path dir =
        root_ / "telemetry/days/2025-06-14" / (std::to_string(index) + ".batch");
    std::filesystem::create_directories(dir);
    Batch batch;
    const otlp::TraceBatch* trace_inputs[] = {traces.get()};
    auto span_table = storage::WriteSpansTable(trace_inputs, kBatchId);
    EXPECT_TRUE(span_table.ok()) << span_table.status();
    batch.spans = Write(dir / "spans.parquet", span_table->file);
    batch.span_rows = span_table->meta.rows;
    batch.span_file_rows = span_table->meta.file_rows;
    const otlp::LogBatch* log_inputs[] = {logs.get()};
    auto log_table = storage::WriteLogsTable(log_inputs, kBatchId);
    EXPECT_TRUE(log_table.ok()) << log_table.status();
    batch.logs = Write(dir / "logs.parquet", log_table->file);
    batch.log_rows = log_table->meta.rows;
    const otlp::MetricBatch* metric_inputs[] = {metrics.get()};
    auto metric_table = storage::WriteMetricsTable(metric_inputs, kBatchId);
    EXPECT_TRUE(metric_table.ok()) << metric_table.status();
    batch.metrics = Write(dir / "metrics.parquet", metric_table->file);
    batch.metric_rows = metric_table->meta.rows;
    return batch;
  }

  std::string Write(const std::filesystem::path& file, const std::string& bytes) {
    std::filesystem::create_directories(file.parent_path());
    std::ofstream out(file, std::ios::binary);
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    EXPECT_TRUE(out.good()) << file;
    return file.string();
  }

 private:
  std::filesystem::path root_;
};

std::unique_ptr<QueryPool> OpenPool(const DataDir& dir, QueryPoolOptions options = {}) {
  options.data_dir = dir.path();
  if (options.threads == 0) options.threads = 2;
  if (options.memory_limit_bytes == 0) options.memory_limit_bytes = 1ULL << 30;
  auto pool = QueryPool::Open(options);
  EXPECT_TRUE(pool.ok()) << pool.status();
  return pool.ok() ? std::move(pool).value() : nullptr;
}

// The single value of a one-row, one-column result.
std::string Scalar(QueryPool* pool, const ViewFiles& files, std::string_view sql,
                   const QueryOptions& options = {}) {
  absl::StatusOr<QueryResult> result = pool->Run(files, sql, options);
  EXPECT_TRUE(result.ok()) << sql << ": " << result.status();
  if (!result.ok() || result->rows.size() != 1 || result->rows[0].size() != 1 ||
      !result->rows[0][0].has_value()) {
    ADD_FAILURE() << sql << ": not one non-null value";
    return "";
  }
  return *result->rows[0][0];
}

TEST(QueryPoolTest, ViewsSeeExactlyTheListedFilesWithoutPlaceholderRows) {
  DataDir dir;
  const DataDir::Batch a = dir.WriteBatch(1);
  const DataDir::Batch b = dir.WriteBatch(2);
  const DataDir::Batch c = dir.WriteBatch(3);
  auto pool = OpenPool(dir);
  ASSERT_NE(pool, nullptr);

  const ViewFiles two{.sequence = 7,
                      .spans = {a.spans, b.spans},
                      .logs = {a.logs},
                      .metrics = {b.metrics, c.metrics}};
  EXPECT_EQ(Scalar(pool.get(), two, "SELECT count(*) FROM spans"),
            std::to_string(a.span_rows + b.span_rows));
  EXPECT_EQ(Scalar(pool.get(), two, "SELECT count(*) FROM logs"), std::to_string(a.log_rows));
  EXPECT_EQ(Scalar(pool.get(), two, "SELECT count(*) FROM metrics"),
            std::to_string(b.metric_rows + c.metric_rows));
  EXPECT_EQ(Scalar(pool.get(), two,
                   "SELECT count(*) FROM read_parquet(" + std::string("['") + a.spans + "', '" +
                       b.spans + "'])"),
            std::to_string(a.span_file_rows + b.span_file_rows));

  // Placeholder rows (row_kind != 0) stay out of the views. Generated
  // traffic has none, so a copy of a's file gains 7 (written by a plain
  // DuckDB, outside the pool).
  const std::string with_placeholders =
      std::filesystem::path(a.spans).parent_path().string() + "/placeholders.parquet";
  {
    auto engine = DuckDbEngine::Open({});
    ASSERT_TRUE(engine.ok()) << engine.status();
    auto copied = (*engine)->Query(
        "COPY ((SELECT * REPLACE (CAST(1 AS UTINYINT) AS row_kind) FROM read_parquet('" + a.spans +
        "') LIMIT 7) UNION ALL (SELECT * FROM read_parquet('" + a.spans + "'))) TO '" +
        with_placeholders + "' (FORMAT parquet)");
    ASSERT_TRUE(copied.ok()) << copied.status();
  }
  const ViewFiles placeholders{.sequence = 9, .spans = {with_placeholders}};
  EXPECT_EQ(Scalar(pool.get(), placeholders,
                   "SELECT count(*) FROM read_parquet('" + with_placeholders + "')"),
            std::to_string(a.span_rows + 7));
  EXPECT_EQ(Scalar(pool.get(), placeholders, "SELECT count(*) FROM spans"),
            std::to_string(a.span_rows));

  // A new sequence rebuilds the views.
  const ViewFiles three{.sequence = 8, .spans = {a.spans, b.spans, c.spans}};
  EXPECT_EQ(Scalar(pool.get(), three, "SELECT count(*) FROM spans"),
            std::to_string(a.span_rows + b.span_rows + c.span_rows));
  EXPECT_EQ(Scalar(pool.get(), three, "SELECT count(*) FROM logs"), "0");
  // Other files under the same sequence (a window of the same Snapshot)
  // rebuild them too: the views always cover exactly the files given.
  const ViewFiles fewer{.sequence = 8, .spans = {a.spans}};
  EXPECT_EQ(Scalar(pool.get(), fewer, "SELECT count(*) FROM spans"), std::to_string(a.span_rows));
  // A file the views cannot read fails the query, and the next snapshot
  // rebuilds them.
  for (const std::string& bad :
       {dir.path() + "/telemetry/days/missing.parquet", std::string("/etc/hostname")}) {
    const ViewFiles broken{.sequence = 10, .spans = {bad}};
    auto result = pool->Run(broken, "SELECT count(*) FROM spans");
    ASSERT_FALSE(result.ok()) << bad;
    EXPECT_EQ(result.status().code(), absl::StatusCode::kInternal) << result.status();
  }
  EXPECT_EQ(Scalar(pool.get(), {.sequence = 11, .spans = {a.spans}}, "SELECT count(*) FROM spans"),
            std::to_string(a.span_rows));
  // row_kind is not a view column.
  auto columns = pool->Run(three, "SELECT * FROM spans LIMIT 1");
  ASSERT_TRUE(columns.ok()) << columns.status();
  EXPECT_THAT(columns->columns, ::testing::Not(::testing::Contains("row_kind")));
  EXPECT_THAT(columns->columns, ::testing::Contains("trace_id"));
}

TEST(QueryPoolTest, EmptyViewsHaveTheColumnsAndTypesOfRealOnes) {
  DataDir dir;
  const DataDir::Batch a = dir.WriteBatch(1);
  auto pool = OpenPool(dir);
  ASSERT_NE(pool, nullptr);
  const ViewFiles full{.sequence = 1, .spans = {a.spans}, .logs = {a.logs}, .metrics = {a.metrics}};
  const ViewFiles empty{.sequence = 2};
  for (const char* table : {"spans", "logs", "metrics"}) {
    const std::string sql =
        std::string("SELECT column_name, column_type FROM (DESCRIBE ") + table + ")";
    auto real = pool->Run(full, sql);
    ASSERT_TRUE(real.ok()) << real.status();
    auto none = pool->Run(empty, sql);
    ASSERT_TRUE(none.ok()) << none.status();
    EXPECT_GT(real->rows.size(), 10u) << table;
    EXPECT_EQ(real->rows, none->rows) << table;
    EXPECT_EQ(Scalar(pool.get(), empty, std::string("SELECT count(*) FROM ") + table), "0");
  }
}

TEST(QueryPoolTest, TimestampsAreUtcWhateverTheProcessTimeZone) {
  DataDir dir;
  const DataDir::Batch a = dir.WriteBatch(1);
  const ViewFiles files{.sequence = 1, .spans = {a.spans}};
  const std::string sql =
      "SELECT string_agg(to_timestamp(start_time_unix_nano / 1e9)::VARCHAR, ',' ORDER BY "
      "start_time_unix_nano) FROM (SELECT * FROM spans ORDER BY start_time_unix_nano LIMIT 5)";
  const char* saved = getenv("TZ");
  const std::string saved_tz = saved != nullptr ? saved : "";
  setenv("TZ", "America/New_York", 1);
  tzset();
  std::string new_york, fixed;
  {
    auto pool = OpenPool(dir);
    ASSERT_NE(pool, nullptr);
    new_york = Scalar(pool.get(), files, sql);
    fixed = Scalar(pool.get(), files, "SELECT to_timestamp(1750000000)::VARCHAR");
  }
  setenv("TZ", "UTC", 1);
  tzset();
  std::string utc;
  {
    auto pool = OpenPool(dir);
    ASSERT_NE(pool, nullptr);
    utc = Scalar(pool.get(), files, sql);
  }
  if (saved != nullptr) {
    setenv("TZ", saved_tz.c_str(), 1);
  } else {
    unsetenv("TZ");
  }
  tzset();
  EXPECT_EQ(new_york, utc);
  EXPECT_THAT(utc, HasSubstr("+00"));
  EXPECT_EQ(fixed, "2025-06-15 15:06:40+00");
}

// A query that runs far longer than any test deadline.
constexpr char kEndlessQuery[] =
    "SELECT count(*) FROM range(100000000) a(i), range(100000) b(j) WHERE a.i + b.j = -1";

TEST(QueryPoolTest, DeadlineInterruptsTheQueryAndThePoolStaysUsable) {
  DataDir dir;
  auto pool = OpenPool(dir, {.max_concurrent = 1});
  ASSERT_NE(pool, nullptr);
  const Clock::time_point start = Clock::now();
  auto result = pool->Run({}, kEndlessQuery, {.deadline = std::chrono::milliseconds(100)});
  const auto elapsed = Clock::now() - start;
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.status().code(), absl::StatusCode::kDeadlineExceeded) << result.status();
  EXPECT_THAT(std::string(result.status().message()), HasSubstr("interrupted after 100 ms"));
  EXPECT_LT(elapsed, std::chrono::seconds(3));
  EXPECT_EQ(Scalar(pool.get(), {}, "SELECT 40 + 2"), "42");
}

TEST(QueryPoolTest, QueryOverTheMemoryLimitIsResourceExhaustedAndThePoolStaysUsable) {
  DataDir dir;
  auto pool = OpenPool(dir, {.memory_limit_bytes = 64ULL << 20});
  ASSERT_NE(pool, nullptr);
  // list() keeps every value in memory and cannot spill.
  auto result = pool->Run({}, "SELECT length(list(i)) FROM range(100000000) t(i)");
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.status().code(), absl::StatusCode::kResourceExhausted) << result.status();
  EXPECT_THAT(std::string(result.status().message()), HasSubstr("Out of Memory"));
  EXPECT_EQ(Scalar(pool.get(), {}, "SELECT 40 + 2"), "42");
  EXPECT_EQ(Scalar(pool.get(), {}, "SELECT current_setting('memory_limit')"), "64.0 MiB");
  // A sort several times the limit spills to <data>/query/tmp instead (the
  // spill directory works with external access off).
  EXPECT_EQ(Scalar(pool.get(), {},
                   "SELECT count(*) FROM (SELECT i, row_number() OVER (ORDER BY md5(i::VARCHAR)) "
                   "FROM range(2000000) t(i))"),
            "2000000");
}

TEST(QueryPoolTest, UserSqlMustBeOneReadOnlyStatement) {
  DataDir dir;
  const DataDir::Batch a = dir.WriteBatch(1);
  std::filesystem::create_directories(dir.path() + "/control");
  std::ofstream(dir.path() + "/control/strata.sqlite") << "secret";
  auto pool = OpenPool(dir);
  ASSERT_NE(pool, nullptr);
  const ViewFiles files{.sequence = 1, .spans = {a.spans}};
  const QueryOptions user{.user_sql = true};
  const std::string refused[] = {
      "INSERT INTO t VALUES (1)",
      "CREATE TABLE t AS SELECT 1",
      "CREATE OR REPLACE TEMP VIEW spans AS SELECT 1",
      "SET memory_limit = '100GB'",
      "SET TimeZone = 'America/New_York'",
      "PRAGMA threads = 1",
      "COPY (SELECT 1) TO '" + dir.path() + "/telemetry/days/out.csv'",
      "ATTACH '" + dir.path() + "/telemetry/days/x.db' AS x",
      "SELECT 1; SELECT 2",
      "SELECT 1; DROP VIEW spans",
      "EXPLAIN ANALYZE CREATE TABLE t AS SELECT 1",
      "CALL pragma_version()",
      "SELECT * FROM query('CREATE TABLE t AS SELECT 1')",
      "SELECT Interrupted FROM spans",
      "SELECT error('Out of Memory Error: not really')",
      "SELECT * FROM read_csv('/etc/passwd')",
      "SELECT * FROM read_text('/etc/hostname')",
      "SELECT content FROM read_blob('" + dir.path() + "/control/strata.sqlite')",
      "SELECT content FROM read_blob('" + dir.path() +
          "/telemetry/days/../../control/strata.sqlite')",
      "SELECT * FROM read_parquet('" + dir.path() + "/query/tmp/x.parquet')",
  };
  for (const std::string& sql : refused) {
    auto result = pool->Run(files, sql, user);
    EXPECT_FALSE(result.ok()) << sql;
    EXPECT_EQ(result.status().code(), absl::StatusCode::kInvalidArgument)
        << sql << ": " << result.status();
  }
  // The reason is said.
  auto two = pool->Run(files, "SELECT 1; SELECT 2", user);
  EXPECT_THAT(std::string(two.status().message()), HasSubstr("exactly one statement"));
  auto create = pool->Run(files, "CREATE TABLE t AS SELECT 1", user);
  EXPECT_THAT(std::string(create.status().message()), HasSubstr("not read-only"));
  // The settings are locked for internal SQL as well.
  auto set = pool->Run(files, "SET memory_limit = '100GB'");
  ASSERT_FALSE(set.ok());
  EXPECT_THAT(std::string(set.status().message()), HasSubstr("locked"));
  // Reading the files under the data directory's batches works, by view or
  // by path.
  EXPECT_EQ(Scalar(pool.get(), files, "SELECT count(*) > 0 FROM spans", user), "true");
  EXPECT_EQ(
      Scalar(pool.get(), files, "SELECT count(*) > 0 FROM read_parquet('" + a.spans + "')", user),
      "true");
  for (const char* sql :
       {"EXPLAIN SELECT count(*) FROM spans", "EXPLAIN ANALYZE SELECT count(*) FROM spans",
        "DESCRIBE spans", "  select 1;", "WITH x AS (SELECT 1 AS v) SELECT v FROM x"}) {
    auto result = pool->Run(files, sql, user);
    EXPECT_TRUE(result.ok()) << sql << ": " << result.status();
  }
}

TEST(QueryPoolTest, SecondQueryGivesUpAfterQueueTimeoutWhileTheOnlyConnectionIsBusy) {
  DataDir dir;
  auto pool = OpenPool(dir, {.max_concurrent = 1, .queue_timeout = std::chrono::milliseconds(150)});
  ASSERT_NE(pool, nullptr);
  absl::StatusOr<QueryResult> first;
  std::thread busy(
      [&] { first = pool->Run({}, kEndlessQuery, {.deadline = std::chrono::milliseconds(2000)}); });
  // Wait (bounded) until the first query holds the connection.
  const Clock::time_point give_up = Clock::now() + std::chrono::seconds(10);
  while (pool->RunningQueries() == 0 && Clock::now() < give_up) std::this_thread::yield();
  ASSERT_EQ(pool->RunningQueries(), 1);

  const Clock::time_point start = Clock::now();
  auto second = pool->Run({}, "SELECT 1");
  const auto waited = Clock::now() - start;
  ASSERT_FALSE(second.ok());
  EXPECT_EQ(second.status().code(), absl::StatusCode::kResourceExhausted) << second.status();
  EXPECT_THAT(std::string(second.status().message()), HasSubstr("queue timeout"));
  EXPECT_GE(waited, std::chrono::milliseconds(150));
  EXPECT_LT(waited, std::chrono::milliseconds(1500));  // well before the first one ends
  busy.join();
  EXPECT_EQ(first.status().code(), absl::StatusCode::kDeadlineExceeded) << first.status();
  EXPECT_EQ(Scalar(pool.get(), {}, "SELECT 1"), "1");
}

TEST(QueryPoolTest, QueuedQueryRunsWhenAConnectionFreesUp) {
  DataDir dir;
  auto pool = OpenPool(dir, {.max_concurrent = 1, .queue_timeout = std::chrono::seconds(20)});
  ASSERT_NE(pool, nullptr);
  absl::StatusOr<QueryResult> first;
  std::thread busy(
      [&] { first = pool->Run({}, kEndlessQuery, {.deadline = std::chrono::milliseconds(300)}); });
  const Clock::time_point give_up = Clock::now() + std::chrono::seconds(10);
  while (pool->RunningQueries() == 0 && Clock::now() < give_up) std::this_thread::yield();
  EXPECT_EQ(Scalar(pool.get(), {}, "SELECT 1"), "1");
  busy.join();
  EXPECT_EQ(first.status().code(), absl::StatusCode::kDeadlineExceeded) << first.status();
}

TEST(QueryPoolTest, CloseRefusesNewQueriesAtOnceAndInterruptsRunningOnesAtItsDeadline) {
  DataDir dir;
  auto pool = OpenPool(dir, {.max_concurrent = 1, .queue_timeout = std::chrono::seconds(20)});
  ASSERT_NE(pool, nullptr);
  absl::StatusOr<QueryResult> running;
  std::thread busy(
      [&] { running = pool->Run({}, kEndlessQuery, {.deadline = std::chrono::seconds(60)}); });
  const Clock::time_point give_up = Clock::now() + std::chrono::seconds(10);
  while (pool->RunningQueries() == 0 && Clock::now() < give_up) std::this_thread::yield();
  ASSERT_EQ(pool->RunningQueries(), 1);
  // Waits for the only connection (or is refused by Close() first).
  absl::StatusOr<QueryResult> waiting;
  std::thread queued([&] { waiting = pool->Run({}, "SELECT 1"); });

  const Clock::time_point interrupt_at = Clock::now() + std::chrono::milliseconds(300);
  pool->Close(interrupt_at);
  const Clock::time_point start = Clock::now();
  auto refused = pool->Run({}, "SELECT 1");
  EXPECT_LT(Clock::now() - start, std::chrono::milliseconds(200)) << "refused without waiting";
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().code(), absl::StatusCode::kUnavailable) << refused.status();
  EXPECT_THAT(std::string(refused.status().message()), HasSubstr("shutting down"));
  // Shutdown's wait for the running query: it ends only after the query
  // was interrupted at the close deadline.
  EXPECT_FALSE(pool->WaitUntilNoneRuns(Clock::now())) << "the endless query still runs";
  EXPECT_TRUE(pool->WaitUntilNoneRuns(interrupt_at + std::chrono::seconds(10)));
  EXPECT_GE(Clock::now(), interrupt_at);

  busy.join();
  const Clock::time_point ended = Clock::now();
  EXPECT_GE(ended, interrupt_at) << "a running query may finish until the close deadline";
  EXPECT_LT(ended, interrupt_at + std::chrono::seconds(2)) << "not its own 60 s deadline";
  ASSERT_FALSE(running.ok());
  EXPECT_EQ(running.status().code(), absl::StatusCode::kUnavailable) << running.status();
  EXPECT_THAT(std::string(running.status().message()), HasSubstr("shutting down"));
  queued.join();
  ASSERT_FALSE(waiting.ok());
  EXPECT_EQ(waiting.status().code(), absl::StatusCode::kUnavailable) << waiting.status();
  EXPECT_EQ(pool->RunningQueries(), 0);
}

TEST(QueryPoolTest, AQueryWhoseOwnDeadlineComesFirstStillEndsDeadlineExceededAfterClose) {
  DataDir dir;
  auto pool = OpenPool(dir, {.max_concurrent = 1});
  ASSERT_NE(pool, nullptr);
  absl::StatusOr<QueryResult> running;
  std::thread busy([&] {
    running = pool->Run({}, kEndlessQuery, {.deadline = std::chrono::milliseconds(200)});
  });
  const Clock::time_point give_up = Clock::now() + std::chrono::seconds(10);
  while (pool->RunningQueries() == 0 && Clock::now() < give_up) std::this_thread::yield();
  pool->Close(Clock::now() + std::chrono::seconds(30));
  busy.join();
  EXPECT_EQ(running.status().code(), absl::StatusCode::kDeadlineExceeded) << running.status();
}

// Lowercase hex to bytes.
std::string Unhex(std::string_view hex) {
  std::string out;
  for (size_t i = 0; i + 1 < hex.size(); i += 2) {
    out += static_cast<char>(std::stoi(std::string(hex.substr(i, 2)), nullptr, 16));
  }
  return out;
}

TEST(QueryPoolTest, ParametersBindByTypeIncludingABlobTraceId) {
  DataDir dir;
  const DataDir::Batch a = dir.WriteBatch(1);
  auto pool = OpenPool(dir);
  ASSERT_NE(pool, nullptr);
  const ViewFiles files{.sequence = 1, .spans = {a.spans}};

  QueryOptions typed;
  typed.params = {std::string("it's"),
                  int64_t{-5},
                  uint64_t{18446744073709551615ULL},
                  2.5,
                  true,
                  Blob{std::string("\x00\xff\x10", 3)}};
  auto result =
      pool->Run(files, "SELECT $1 AS s, $2 AS i, $3 AS u, $4 AS d, $5 AS b, $6 AS x", typed);
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_EQ(result->types, (std::vector<std::string>{"VARCHAR", "BIGINT", "UBIGINT", "DOUBLE",
                                                     "BOOLEAN", "BLOB"}));
  ASSERT_EQ(result->rows.size(), 1u);
  EXPECT_EQ(result->rows[0], (std::vector<std::optional<std::string>>{
                                 "it's", "-5", "18446744073709551615", "2.5", "true", "00ff10"}));

  // A trace id read back as hex finds its spans when bound as a BLOB.
  const std::string trace_hex = Scalar(pool.get(), files, "SELECT min(trace_id) FROM spans");
  ASSERT_EQ(trace_hex.size(), 32u) << trace_hex;
  QueryOptions by_trace;
  by_trace.params = {Blob{Unhex(trace_hex)}};
  const std::string bound =
      Scalar(pool.get(), files, "SELECT count(*) FROM spans WHERE trace_id = $1", by_trace);
  EXPECT_EQ(bound,
            Scalar(pool.get(), files,
                   "SELECT count(*) FROM spans WHERE lower(hex(trace_id)) = '" + trace_hex + "'"));
  EXPECT_NE(bound, "0");
  // As VARCHAR the same bytes match nothing: the type matters.
  QueryOptions as_text;
  as_text.params = {trace_hex};
  EXPECT_EQ(
      Scalar(pool.get(), files, "SELECT count(*) FROM spans WHERE hex(trace_id) = $1", as_text),
      "0");

  // Too few or too many parameters.
  auto missing = pool->Run(files, "SELECT $1, $2", {.params = {int64_t{1}}});
  EXPECT_EQ(missing.status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(QueryPoolTest, RowsAreCappedAndTruncationIsReported) {
  DataDir dir;
  auto pool = OpenPool(dir, {.default_max_rows = 4});
  ASSERT_NE(pool, nullptr);
  auto capped = pool->Run({}, "SELECT i FROM range(10) t(i) ORDER BY i", {.max_rows = 3});
  ASSERT_TRUE(capped.ok()) << capped.status();
  EXPECT_EQ(capped->rows.size(), 3u);
  EXPECT_TRUE(capped->truncated);
  EXPECT_EQ(capped->rows[2][0], "2");
  auto exact = pool->Run({}, "SELECT i FROM range(3) t(i)", {.max_rows = 3});
  ASSERT_TRUE(exact.ok());
  EXPECT_EQ(exact->rows.size(), 3u);
  EXPECT_FALSE(exact->truncated);
  auto defaulted = pool->Run({}, "SELECT i FROM range(10) t(i)");
  ASSERT_TRUE(defaulted.ok());
  EXPECT_EQ(defaulted->rows.size(), 4u);
  EXPECT_TRUE(defaulted->truncated);
  // The cap keeps ORDER BY's order and stops the query early: rows past
  // the first chunks are never produced (they would raise an error).
  auto ordered = pool->Run({}, "SELECT i FROM range(1000000) t(i) ORDER BY i DESC",
                           {.max_rows = 3, .user_sql = true});
  ASSERT_TRUE(ordered.ok()) << ordered.status();
  EXPECT_EQ(ordered->rows, (std::vector<std::vector<std::optional<std::string>>>{
                               {"999999"}, {"999998"}, {"999997"}}));
  EXPECT_TRUE(ordered->truncated);
  auto early =
      pool->Run({},
                "SELECT CASE WHEN i < 5000000 THEN i ELSE error('materialized too far') END AS v "
                "FROM range(100000000) t(i);  -- trailing comment",
                {.max_rows = 10, .user_sql = true});
  ASSERT_TRUE(early.ok()) << early.status();
  EXPECT_EQ(early->rows.size(), 10u);
  EXPECT_TRUE(early->truncated);
  for (const char* sql : {"SELECT 1 -- c;", "SELECT ';' AS s; /* x; */ ; -- y", "SELECT 1 /* ; */",
                          "SELECT '--;' -- z", "SELECT ';--'", "SELECT ';' -- z\n;"}) {
    auto result = pool->Run({}, sql, {.user_sql = true});
    EXPECT_TRUE(result.ok()) << sql << ": " << result.status();
  }
  auto same_names = pool->Run({}, "SELECT 1 AS a, 2 AS a;", {.user_sql = true});
  ASSERT_TRUE(same_names.ok()) << same_names.status();
  EXPECT_EQ(same_names->columns, (std::vector<std::string>{"a", "a"}));
  EXPECT_FALSE(same_names->truncated);

  auto types =
      pool->Run({}, "SELECT now() AS t, [1, 2] AS l, NULL::VARCHAR AS n, 1.5::DECIMAL(4,1) AS d");
  ASSERT_TRUE(types.ok()) << types.status();
  EXPECT_EQ(types->types, (std::vector<std::string>{"TIMESTAMP WITH TIME ZONE", "INTEGER[]",
                                                    "VARCHAR", "DECIMAL(4,1)"}));
  EXPECT_FALSE(types->rows[0][2].has_value());
}

TEST(QueryPoolTest, ConcurrentQueriesOnDifferentSnapshotsSeeTheirOwnFiles) {
  DataDir dir;
  std::vector<DataDir::Batch> batches;
  for (int i = 0; i < 4; ++i) batches.push_back(dir.WriteBatch(i, 100));
  auto pool = OpenPool(dir, {.max_concurrent = 2, .queue_timeout = std::chrono::seconds(30)});
  ASSERT_NE(pool, nullptr);
  std::vector<std::thread> threads;
  std::atomic<int> failures{0};
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int round = 0; round < 5; ++round) {
        const int n = (t + round) % 4 + 1;
        ViewFiles files{.sequence = static_cast<uint64_t>(n)};
        uint64_t expected = 0;
        for (int i = 0; i < n; ++i) {
          files.spans.push_back(batches[i].spans);
          expected += batches[i].span_rows;
        }
        auto result = pool->Run(files, "SELECT count(*) FROM spans");
        if (!result.ok() || result->rows[0][0] != std::to_string(expected)) ++failures;
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  EXPECT_EQ(failures.load(), 0);
}

// A fake cgroup mount: files written under a temporary root.
class FakeCgroupTree {
 public:
  FakeCgroupTree() {
    static std::atomic<int> counter{0};
    root_ = std::filesystem::temp_directory_path() /
            ("strata-cgroup-" + std::to_string(getpid()) + "-" + std::to_string(counter++));
    std::filesystem::remove_all(root_);
    std::filesystem::create_directories(root_);
  }
  ~FakeCgroupTree() { std::filesystem::remove_all(root_); }

  std::string root() const { return root_.string(); }
  // Writes `text` to <root>/<relative>, creating the directories.
  void Write(const std::string& relative, const std::string& text) {
    const std::filesystem::path path = root_ / relative;
    std::filesystem::create_directories(path.parent_path());
    std::ofstream(path) << text;
  }

 private:
  std::filesystem::path root_;
};

constexpr uint64_t kMiB = uint64_t{1} << 20;

TEST(CgroupMemoryLimitTest, V2TakesTheSmallestLimitOfTheCgroupAndItsAncestors) {
  FakeCgroupTree tree;
  tree.Write("memory.max", "max\n");  // the root has no limit
  tree.Write("system.slice/memory.max", "max\n");
  tree.Write("system.slice/strata.service/memory.max", "4294967296\n");
  tree.Write("system.slice/strata.service/worker/memory.max", "max\n");
  // A limit on a parent binds the process even if its own cgroup has none.
  tree.Write("system.slice/memory.max", std::to_string(512 * kMiB) + "\n");
  EXPECT_EQ(CgroupMemoryLimit("0::/system.slice/strata.service/worker\n", tree.root()), 512 * kMiB);
  // A smaller limit further down wins.
  tree.Write("system.slice/strata.service/worker/memory.max", std::to_string(64 * kMiB));
  EXPECT_EQ(CgroupMemoryLimit("0::/system.slice/strata.service/worker\n", tree.root()), 64 * kMiB);
  // Only the ancestors count, not a sibling.
  tree.Write("system.slice/other/memory.max", std::to_string(1 * kMiB));
  EXPECT_EQ(CgroupMemoryLimit("0::/system.slice/strata.service\n", tree.root()), 512 * kMiB);
  // Inside a cgroup namespace the process's cgroup is the mount's root.
  tree.Write("memory.max", std::to_string(256 * kMiB));
  EXPECT_EQ(CgroupMemoryLimit("0::/\n", tree.root()), 256 * kMiB);
}

TEST(CgroupMemoryLimitTest, V2WithoutLimitsIsZero) {
  FakeCgroupTree tree;
  tree.Write("user.slice/session/memory.max", "max\n");
  tree.Write("user.slice/memory.max", "max\n");
  EXPECT_EQ(CgroupMemoryLimit("0::/user.slice/session\n", tree.root()), 0u);
  // A cgroup whose directories are missing (not mounted here) has no limit.
  EXPECT_EQ(CgroupMemoryLimit("0::/not/mounted\n", tree.root()), 0u);
}

TEST(CgroupMemoryLimitTest, V1ReadsTheMemoryHierarchyAndIgnoresUnlimited) {
  FakeCgroupTree tree;
  const std::string unlimited = "9223372036854771712\n";
  tree.Write("memory/memory.limit_in_bytes", unlimited);
  tree.Write("memory/docker/memory.limit_in_bytes", unlimited);
  tree.Write("memory/docker/abc/memory.limit_in_bytes", std::to_string(300 * kMiB) + "\n");
  // A v2 file in the same tree is not read for a v1-only process.
  tree.Write("docker/abc/memory.max", std::to_string(1 * kMiB));
  const std::string self =
      "12:cpuset:/docker/abc\n"
      "11:memory,hugetlb:/docker/abc\n"
      "1:name=systemd:/docker/abc\n";
  EXPECT_EQ(CgroupMemoryLimit(self, tree.root()), 300 * kMiB);
  tree.Write("memory/docker/abc/memory.limit_in_bytes", unlimited);
  EXPECT_EQ(CgroupMemoryLimit(self, tree.root()), 0u);
  // Hybrid mode: with a v1 and a v2 line, the smaller limit wins.
  tree.Write("memory/docker/memory.limit_in_bytes", std::to_string(200 * kMiB));
  tree.Write("docker/abc/memory.max", "max\n");
  tree.Write("docker/memory.max", std::to_string(100 * kMiB));
  EXPECT_EQ(CgroupMemoryLimit(self + "0::/docker/abc\n", tree.root()), 100 * kMiB);
}

TEST(CgroupMemoryLimitTest, MalformedInputCountsAsNoLimit) {
  FakeCgroupTree tree;
  tree.Write("memory.max", std::to_string(128 * kMiB));
  tree.Write("a/memory.max", "lots\n");
  tree.Write("b/memory.max", "-5\n");
  tree.Write("c/memory.max", "99999999999999999999999\n");
  EXPECT_EQ(CgroupMemoryLimit("", tree.root()), 0u);
  EXPECT_EQ(CgroupMemoryLimit("garbage\nno colons here", tree.root()), 0u);
  EXPECT_EQ(CgroupMemoryLimit("0:/only-one-colon\n", tree.root()), 0u);
  EXPECT_EQ(CgroupMemoryLimit("0::relative/path\n", tree.root()), 0u);
  EXPECT_EQ(CgroupMemoryLimit("0::/a/../..\n", tree.root()), 0u);
  // Unreadable values are skipped; the ancestors' limits still count.
  EXPECT_EQ(CgroupMemoryLimit("0::/a\n", tree.root()), 128 * kMiB);
  EXPECT_EQ(CgroupMemoryLimit("0::/b\n", tree.root()), 128 * kMiB);
  EXPECT_EQ(CgroupMemoryLimit("0::/c\n", tree.root()), 128 * kMiB);
  // No trailing newline, a trailing slash, and junk lines around a good one.
  EXPECT_EQ(CgroupMemoryLimit("x\n0::/a/", tree.root()), 128 * kMiB);
}

TEST(QueryPoolTest, OpenChecksOptionsAndAppliesDefaults) {
  EXPECT_EQ(QueryPool::Open({.data_dir = "relative/dir"}).status().code(),
            absl::StatusCode::kInvalidArgument);
  DataDir dir;
  EXPECT_EQ(QueryPool::Open({.data_dir = dir.path(), .max_concurrent = 0}).status().code(),
            absl::StatusCode::kInvalidArgument);
  auto pool = QueryPool::Open({.data_dir = dir.path()});
  ASSERT_TRUE(pool.ok()) << pool.status();
  EXPECT_EQ((*pool)->options().memory_limit_bytes, DefaultQueryMemoryLimit());
  EXPECT_GT((*pool)->options().threads, 0);
  EXPECT_TRUE(std::filesystem::is_directory(dir.path() + "/query/tmp"));
  const uint64_t physical = static_cast<uint64_t>(sysconf(_SC_PHYS_PAGES)) *
                            static_cast<uint64_t>(sysconf(_SC_PAGE_SIZE));
  EXPECT_GT(DefaultQueryMemoryLimit(), 0u);
  EXPECT_LE(DefaultQueryMemoryLimit(), physical / 2);
}

}  // namespace
}  // namespace strata::query

namespace strata::query {
namespace {

// Views over many files: correct counts, and the cost of a rebuild versus
// a query on built views (printed, for the record; not asserted).
TEST(QueryPoolTest, ViewsOverTwoHundredFiles) {
  DataDir dir;
  const DataDir::Batch a = dir.WriteBatch(1, 100);
  std::ifstream in(a.spans, std::ios::binary);
  const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  ViewFiles files{.sequence = 1};
  for (int i = 0; i < 200; ++i) {
    files.spans.push_back(dir.Write(
        dir.path() + "/telemetry/days/2025-06-15/" + std::to_string(i) + ".batch/spans.parquet",
        bytes));
  }
  auto pool = OpenPool(dir, {.max_concurrent = 1});
  ASSERT_NE(pool, nullptr);
  using std::chrono::duration_cast;
  using std::chrono::microseconds;
  Clock::time_point start = Clock::now();
  EXPECT_EQ(Scalar(pool.get(), files, "SELECT 1"), "1");
  const auto rebuild = duration_cast<microseconds>(Clock::now() - start);
  start = Clock::now();
  constexpr int kQueries = 50;
  for (int i = 0; i < kQueries; ++i) EXPECT_EQ(Scalar(pool.get(), files, "SELECT 1"), "1");
  const auto trivial = duration_cast<microseconds>(Clock::now() - start) / kQueries;
  start = Clock::now();
  for (int i = 0; i < 5; ++i) {
    EXPECT_EQ(Scalar(pool.get(), files, "SELECT count(*) FROM spans"),
              std::to_string(200 * a.span_rows));
  }
  const auto count = duration_cast<microseconds>(Clock::now() - start) / 5;
  std::printf(
      "200 span files: view rebuild + SELECT 1 %lld us; SELECT 1 on built views %lld us; "
      "count(*) over the view %lld us\n",
      static_cast<long long>(rebuild.count()), static_cast<long long>(trivial.count()),
      static_cast<long long>(count.count()));
}

// Typed reads (RunTyped) against the text answer of the same query: every
// kind, NULLs (values and list elements), and both caps.
TEST(QueryPoolTest, TypedReadsAgreeWithTheTextAnswer) {
  DataDir dir;
  const DataDir::Batch batch = dir.WriteBatch(1);
  auto pool = OpenPool(dir);
  ASSERT_NE(pool, nullptr);
  ViewFiles files;
  files.metrics = {batch.metrics};
  const std::string sql =
      "SELECT metric_name, metric_type, time_unix_nano, is_monotonic, value_double, \"count\","
      " bucket_counts, explicit_bounds, CAST(value_int AS BIGINT) AS i FROM metrics_stored"
      " ORDER BY time_unix_nano, metric_name, value_double, \"count\"";
  auto text = pool->Run(files, sql, {.max_rows = 100'000});
  auto typed = pool->RunTyped(files, sql, {.max_rows = 100'000});
  ASSERT_TRUE(text.ok()) << text.status();
  ASSERT_TRUE(typed.ok()) << typed.status();
  ASSERT_EQ(typed->rows, text->rows.size());
  ASSERT_GT(typed->rows, 10u);
  EXPECT_FALSE(typed->truncated);
  const std::vector<TypedKind> kinds = {
      TypedKind::kString,     TypedKind::kInt64,      TypedKind::kUInt64,
      TypedKind::kBool,       TypedKind::kDouble,     TypedKind::kUInt64,
      TypedKind::kUInt64List, TypedKind::kDoubleList, TypedKind::kInt64};
  ASSERT_EQ(typed->columns.size(), kinds.size());
  int lists = 0;
  for (size_t c = 0; c < kinds.size(); ++c) {
    const TypedColumn& column = typed->columns[c];
    EXPECT_EQ(column.kind, kinds[c]) << c;
    EXPECT_EQ(column.name, text->columns[c]);
    for (size_t r = 0; r < typed->rows; ++r) {
      const std::optional<std::string>& cell = text->rows[r][c];
      ASSERT_EQ(column.is_valid(r), cell.has_value()) << c << " " << r;
      if (!cell.has_value()) continue;
      std::string rendered;
      switch (column.kind) {
        case TypedKind::kString:
          rendered = column.strings[r];
          break;
        case TypedKind::kBool:
          rendered = column.int64s[r] != 0 ? "true" : "false";
          break;
        case TypedKind::kInt64:
          rendered = std::to_string(column.int64s[r]);
          break;
        case TypedKind::kUInt64:
          rendered = std::to_string(column.uint64s[r]);
          break;
        case TypedKind::kDouble:
          EXPECT_EQ(column.doubles[r], std::stod(*cell)) << *cell;
          continue;
        case TypedKind::kUInt64List:
        case TypedKind::kDoubleList: {
          ++lists;
          rendered = "[";
          for (size_t i = 0; i < column.list_size(r); ++i) {
            if (i > 0) rendered += ", ";
            if (column.kind == TypedKind::kUInt64List) {
              rendered += std::to_string(column.uint64_list(r)[i]);
            }
          }
          rendered += "]";
          if (column.kind == TypedKind::kDoubleList) {
            // Compare element by element as numbers.
            std::vector<double> expected;
            std::string inner = cell->substr(1, cell->size() - 2);
            for (size_t at = 0; !inner.empty() && at <= inner.size();) {
              size_t comma = inner.find(", ", at);
              if (comma == std::string::npos) comma = inner.size();
              expected.push_back(std::stod(inner.substr(at, comma - at)));
              at = comma + 2;
            }
            EXPECT_EQ(std::vector<double>(column.double_list(r),
                                          column.double_list(r) + column.list_size(r)),
                      expected)
                << *cell;
            continue;
          }
          break;
        }
      }
      EXPECT_EQ(rendered, *cell) << c << " " << r;
    }
  }
  EXPECT_GT(lists, 0);

  // NULL values and NULL list elements, and the caps.
  auto nulls =
      pool->RunTyped({},
                     "SELECT CASE WHEN i % 2 = 0 THEN i END AS v, [1.5, NULL]::DOUBLE[] AS d,"
                     " CASE WHEN i = 1 THEN NULL ELSE [CAST(i AS UBIGINT), NULL] END AS u"
                     " FROM range(3) t(i) ORDER BY i",
                     {});
  ASSERT_TRUE(nulls.ok()) << nulls.status();
  ASSERT_EQ(nulls->rows, 3u);
  EXPECT_EQ(nulls->columns[0].valid, (std::vector<uint8_t>{1, 0, 1}));
  EXPECT_EQ(nulls->columns[0].int64s, (std::vector<int64_t>{0, 0, 2}));
  EXPECT_EQ(nulls->columns[1].doubles[0], 1.5);
  EXPECT_TRUE(std::isnan(nulls->columns[1].doubles[1]));
  EXPECT_EQ(nulls->columns[2].valid, (std::vector<uint8_t>{1, 0, 1}));
  EXPECT_EQ(nulls->columns[2].offsets, (std::vector<size_t>{0, 2, 2, 4}));
  EXPECT_EQ(nulls->columns[2].uint64s, (std::vector<uint64_t>{0, 0, 2, 0}));
  auto rows = pool->RunTyped({}, "SELECT i FROM range(10000) t(i) ORDER BY i", {.max_rows = 5000});
  ASSERT_TRUE(rows.ok()) << rows.status();
  EXPECT_EQ(rows->rows, 5000u);
  EXPECT_TRUE(rows->truncated);
  EXPECT_EQ(rows->columns[0].int64s.back(), 4999);
  auto bytes = pool->RunTyped({}, "SELECT 'abcd' AS s, i FROM range(100) t(i) ORDER BY i",
                              {.max_rows = 1000, .max_bytes = 120});
  ASSERT_TRUE(bytes.ok()) << bytes.status();
  EXPECT_EQ(bytes->rows, 10u);  // 12 bytes a row
  EXPECT_TRUE(bytes->truncated);
  auto uncovered = pool->RunTyped({}, "SELECT now() AS t");
  EXPECT_EQ(uncovered.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(uncovered.status().message(), HasSubstr("\"t\""));
  auto user = pool->RunTyped({}, "SELECT 1", {.user_sql = true});
  EXPECT_EQ(user.status().code(), absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace strata::query
