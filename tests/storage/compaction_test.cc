// Compaction, retention and reclamation on real batches: every row stays
// exactly once (checked through DuckDB on all columns, against the data
// before compaction), traces still come back whole, inputs are deleted
// only once unpinned, and a crash at every sync of the maintenance work is
// resolved at boot with no row lost or doubled.

#include <algorithm>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "common/mutex.h"
#include "gtest/gtest.h"
#include "io/fault_injection_file_system.h"
#include "io/posix_file_system.h"
#include "query/query_pool.h"
#include "query/view_files.h"
#include "storage/storage.h"
#include "storage/table/file_source.h"
#include "storage/table/spans_table.h"
#include "storage/testing/commit_testing.h"
#include "storage/trace_lookup.h"
#include "workload/traffic_generator.h"

namespace strata::storage {
namespace {

// 2026-11-20 10:00:00 UTC and later days, in microseconds.
constexpr int64_t kDayMicros = int64_t{86'400} * 1'000'000;
constexpr int64_t kDay0 = int64_t{1'795'168'800} * 1'000'000;

// A clock the test moves; each call advances it by 1 ms so ids differ.
struct TestClock {
  std::shared_ptr<std::atomic<int64_t>> now = std::make_shared<std::atomic<int64_t>>(kDay0);
  MicrosClock Get() const {
    auto n = now;
    return [n] { return n->fetch_add(1000); };
  }
};

StorageOptions Options(const TestClock& clock, MaintenanceOptions maintenance = {}) {
  StorageOptions options;
  options.clock = clock.Get();
  options.writer.max_requests_per_batch = 1;
  options.maintenance = std::move(maintenance);
  options.maintenance.failure_backoff = std::chrono::nanoseconds(0);
  options.maintenance.merge.chunk_rows = 97;  // many merge rounds on small inputs
  return options;
}

// One request per batch with spans, logs and metrics.
absl::Status WriteOne(Storage& storage, uint32_t seed) {
  workload::TrafficGenerator generator({.seed = seed});
  WriteRequest request;
  request.traces = generator.Traces(120);
  request.logs = generator.Logs(40);
  request.metrics = generator.Metrics(30);
  request.rows = request.traces->spans.size() + request.logs->logs.size() + 30;
  request.bytes = request.rows * 300;
  return storage.Write(std::move(request));
}

// Every data row of the live Snapshot, all columns but the per-file
// numbering of resources, scopes and metrics, sorted: one string per row.
struct Dump {
  std::vector<std::string> spans, logs, metrics;
};

std::vector<std::string> Rows(query::QueryPool& pool, const query::ViewFiles& files,
                              const std::string& table, const std::string& numbering) {
  std::vector<std::string> out;
  auto result = pool.Run(
      files, "SELECT CAST(COLUMNS(* EXCLUDE (" + numbering + ")) AS VARCHAR) FROM " + table);
  EXPECT_TRUE(result.ok()) << result.status();
  if (!result.ok()) return out;
  for (const auto& row : result->rows) {
    std::string line;
    for (const auto& cell : row) line += (cell ? *cell : "<null>") + "|";
    out.push_back(std::move(line));
  }
  std::sort(out.begin(), out.end());
  return out;
}

Dump DumpAll(const std::string& dir, const Snapshot& snapshot) {
  auto pool = query::QueryPool::Open(
      {.data_dir = dir, .max_concurrent = 1, .default_max_rows = 10'000'000});
  EXPECT_TRUE(pool.ok()) << pool.status();
  if (!pool.ok()) return {};
  const query::ViewFiles files = query::ViewFilesOf(snapshot);
  const std::string numbering = "resource_index, scope_index";
  return Dump{Rows(**pool, files, "spans", numbering), Rows(**pool, files, "logs", numbering),
              Rows(**pool, files, "metrics", numbering + ", metric_index")};
}

// Names the table and first differing row when two dumps differ.
::testing::AssertionResult SameRows(const Dump& got, const Dump& want) {
  const std::pair<const char*,
                  std::pair<const std::vector<std::string>*, const std::vector<std::string>*>>
      tables[] = {{"spans", {&got.spans, &want.spans}},
                  {"logs", {&got.logs, &want.logs}},
                  {"metrics", {&got.metrics, &want.metrics}}};
  for (const auto& [name, pair] : tables) {
    const auto& [a, b] = pair;
    if (*a == *b) continue;
    size_t i = 0;
    while (i < a->size() && i < b->size() && (*a)[i] == (*b)[i]) ++i;
    return ::testing::AssertionFailure()
           << name << ": " << a->size() << " rows, want " << b->size() << "; first difference at "
           << i << ":\n got  " << (i < a->size() ? (*a)[i] : "<end>") << "\n want "
           << (i < b->size() ? (*b)[i] : "<end>");
  }
  return ::testing::AssertionSuccess();
}

// Span rows of the live Snapshot, as meta.json counts them.
uint64_t Read(const Storage& storage) {
  uint64_t spans = 0;
  for (const auto& batch : storage.Pin()->batches()) spans += batch->meta().spans.rows;
  return spans;
}

// Runs maintenance steps until one does nothing.
void RunUntilIdle(Storage& storage) {
  for (int i = 0; i < 1000 && storage.maintenance().RunStep(); ++i) {
  }
}

std::set<std::string> DirsOnDisk(FileSystem& fs, const std::string& data) {
  std::set<std::string> out;
  const std::string days = data + "/telemetry/days";
  auto names = fs.ListDir(days);
  if (!names.ok()) return out;
  for (const std::string& day : *names) {
    auto batches = fs.ListDir(days + "/" + day);
    if (!batches.ok()) continue;
    for (const std::string& b : *batches) out.insert(days + "/" + day + "/" + b);
  }
  return out;
}

std::set<std::string> LiveDirs(const Snapshot& snapshot) {
  std::set<std::string> out;
  for (const auto& batch : snapshot.batches()) out.insert(batch->dir());
  return out;
}

// The trace id of a batch's first span row.
otlp::TraceId FirstTraceOf(FileSystem& fs, const LiveBatch& batch) {
  auto source = OpenFileSource(fs, batch.dir() + "/spans.parquet");
  EXPECT_TRUE(source.ok()) << source.status();
  if (!source.ok()) return {};
  const uint64_t first = batch.meta().spans.file_rows - batch.meta().spans.rows;
  auto rows = ReadSpansRows(source->get(), batch.meta().id, "spans.parquet", first, first + 1);
  EXPECT_TRUE(rows.ok()) << rows.status();
  return rows.ok() ? rows->spans.trace_id[0] : otlp::TraceId{};
}

TEST(CompactionTest, LevelsMergeEveryRowExactlyOnceAndTracesStayWhole) {
  PosixFileSystem fs;
  testing::ScopedTempDir temp("compaction");
  const std::string dir = temp.path() + "/data";
  TestClock clock;
  MaintenanceOptions maintenance;
  maintenance.policy.min_inputs = 3;
  maintenance.policy.max_inputs = 3;
  auto storage = Storage::Open(fs, dir, Options(clock, maintenance));
  ASSERT_TRUE(storage.ok()) << storage.status();
  for (uint32_t i = 0; i < 9; ++i) ASSERT_TRUE(WriteOne(**storage, 500 + i).ok());
  std::shared_ptr<const Snapshot> before = (*storage)->Pin();
  ASSERT_EQ(before->size(), 9u);
  const Dump expected = DumpAll(dir, *before);
  ASSERT_GT(expected.spans.size(), 900u);
  ASSERT_GT(expected.logs.size(), 300u);
  ASSERT_GT(expected.metrics.size(), 200u);

  const otlp::TraceId trace = FirstTraceOf(fs, *before->batches()[0]);
  auto old_answer = LookupTrace(fs, dir, *before, trace);
  ASSERT_TRUE(old_answer.ok()) << old_answer.status();
  ASSERT_TRUE(old_answer->has_value());

  // One group of three at level 0 is published; its inputs stay on disk
  // while `before` pins them, and so does the marker, which holds back the
  // next compaction (one marker at a time).
  RunUntilIdle(**storage);
  EXPECT_EQ((*storage)->GetMaintenanceStats().compactions, 1u);
  EXPECT_EQ((*storage)->Pin()->size(), 7u);
  EXPECT_EQ(DirsOnDisk(fs, dir).size(), 10u);
  EXPECT_TRUE(*fs.Exists(dir + "/telemetry/COMPACTION.json"));
  EXPECT_TRUE(SameRows(DumpAll(dir, *(*storage)->Pin()), expected));
  EXPECT_TRUE(SameRows(DumpAll(dir, *before), expected));

  // Unpinned: the inputs are deleted, the marker removed, and the other
  // groups follow: three groups of three at level 0, then one of the three
  // outputs.
  before.reset();
  RunUntilIdle(**storage);
  std::shared_ptr<const Snapshot> after = (*storage)->Pin();
  ASSERT_EQ(after->size(), 1u);
  EXPECT_EQ(after->batches()[0]->id().generation(), 2);
  EXPECT_EQ(after->batches()[0]->meta().sources.size(), 3u);
  EXPECT_EQ((*storage)->GetMaintenanceStats().compactions, 4u);
  EXPECT_TRUE(SameRows(DumpAll(dir, *after), expected));
  EXPECT_EQ(DirsOnDisk(fs, dir), LiveDirs(*after));
  EXPECT_FALSE(*fs.Exists(dir + "/telemetry/COMPACTION.json"));
  EXPECT_EQ((*storage)->GetMaintenanceStats().batches_deleted, 12u);
  auto staging = fs.ListDir(dir + "/telemetry/staging");
  ASSERT_TRUE(staging.ok());
  EXPECT_TRUE(staging->empty());

  // The trace comes back whole, in the same order, from the one output.
  auto new_answer = LookupTrace(fs, dir, *after, trace);
  ASSERT_TRUE(new_answer.ok()) << new_answer.status();
  ASSERT_TRUE(new_answer->has_value());
  EXPECT_EQ((*old_answer)->spans.span_id, (*new_answer)->spans.span_id);

  // Boot validates the output like any batch and serves the same rows.
  after.reset();
  storage->reset();
  auto reopened = Storage::Open(fs, dir, Options(clock, maintenance));
  ASSERT_TRUE(reopened.ok()) << reopened.status();
  EXPECT_TRUE(SameRows(DumpAll(dir, *(*reopened)->Pin()), expected));
}

TEST(CompactionTest, RetentionDropsWholeExpiredDaysOnlyOnceUnpinned) {
  PosixFileSystem fs;
  testing::ScopedTempDir temp("retention");
  const std::string dir = temp.path() + "/data";
  TestClock clock;
  MaintenanceOptions maintenance;
  maintenance.compaction = false;
  maintenance.retention.days = 1;
  {
    auto storage = Storage::Open(fs, dir, Options(clock, maintenance));
    ASSERT_TRUE(storage.ok()) << storage.status();
    for (int day = 0; day < 4; ++day) {
      clock.now->store(kDay0 + day * kDayMicros);
      ASSERT_TRUE(WriteOne(**storage, 700 + day).ok());
      ASSERT_TRUE(WriteOne(**storage, 800 + day).ok());
    }
  }
  // Noon of day 3: days 0 and 1 ended more than a day ago, day 2 did not.
  clock.now->store(kDay0 + 3 * kDayMicros + kDayMicros / 2);
  auto storage = Storage::Open(fs, dir, Options(clock, maintenance));
  ASSERT_TRUE(storage.ok()) << storage.status();
  std::shared_ptr<const Snapshot> pinned = (*storage)->Pin();
  ASSERT_EQ(pinned->size(), 8u);
  RunUntilIdle(**storage);
  std::shared_ptr<const Snapshot> now = (*storage)->Pin();
  std::set<std::string> days;
  for (const auto& batch : now->batches()) days.insert(batch->day());
  EXPECT_EQ(days, (std::set<std::string>{"2026-11-22", "2026-11-23"}));
  // Pinned: nothing deleted yet.
  EXPECT_EQ(DirsOnDisk(fs, dir).size(), 8u);
  pinned.reset();
  RunUntilIdle(**storage);
  EXPECT_EQ(DirsOnDisk(fs, dir), LiveDirs(*now));
  EXPECT_FALSE(*fs.Exists(dir + "/telemetry/days/2026-11-20"));
  EXPECT_FALSE(*fs.Exists(dir + "/telemetry/days/2026-11-21"));
  EXPECT_EQ((*storage)->GetMaintenanceStats().days_dropped, 2u);
}

TEST(CompactionTest, SizeCapDropsOldestDaysButNeverToday) {
  PosixFileSystem fs;
  testing::ScopedTempDir temp("size_cap");
  const std::string dir = temp.path() + "/data";
  TestClock clock;
  MaintenanceOptions maintenance;
  maintenance.compaction = false;
  maintenance.retention.days = 0;
  maintenance.retention.max_disk_bytes = 1;  // far below anything
  auto storage = Storage::Open(fs, dir, Options(clock, maintenance));
  ASSERT_TRUE(storage.ok()) << storage.status();
  for (int day = 0; day < 3; ++day) {
    clock.now->store(kDay0 + day * kDayMicros);
    ASSERT_TRUE(WriteOne(**storage, 900 + day).ok());
  }
  RunUntilIdle(**storage);
  std::shared_ptr<const Snapshot> now = (*storage)->Pin();
  ASSERT_EQ(now->size(), 1u);
  EXPECT_EQ(now->batches()[0]->day(), "2026-11-22");
}

// A merge stopped midway (shutdown) is undone: nothing in staging, no
// marker, the inputs still live and whole; the next run succeeds.
TEST(CompactionTest, StoppedMergeIsUndoneAndLeavesTheInputsLive) {
  PosixFileSystem fs;
  testing::ScopedTempDir temp("compaction_stop");
  const std::string dir = temp.path() + "/data";
  TestClock clock;
  auto storage = Storage::Open(fs, dir, Options(clock));
  ASSERT_TRUE(storage.ok()) << storage.status();
  for (uint32_t i = 0; i < 3; ++i) ASSERT_TRUE(WriteOne(**storage, 1500 + i).ok());
  std::shared_ptr<const Snapshot> before = (*storage)->Pin();
  const Dump expected = DumpAll(dir, *before);
  CompactionGroup group{
      .day = before->batches()[0]->day(), .generation = 0, .inputs = before->batches()};
  for (int stop_at : {1, 2, 5, 20}) {
    int calls = 0;
    MergeOptions merge;
    merge.chunk_rows = 50;
    Compactor compactor((*storage)->data_dir(),
                        {.merge = merge, .load_attachment = nullptr, .check_stop = [&] {
                           return ++calls >= stop_at ? absl::CancelledError("stopping")
                                                     : absl::OkStatus();
                         }});
    absl::StatusOr<CompactionResult> result = compactor.Run(group);
    ASSERT_FALSE(result.ok()) << "stop at " << stop_at;
    EXPECT_TRUE(absl::IsCancelled(result.status())) << result.status();
    EXPECT_EQ((*storage)->Pin()->size(), 3u);
    EXPECT_FALSE(*fs.Exists(dir + "/telemetry/COMPACTION.json"));
    auto staging = fs.ListDir(dir + "/telemetry/staging");
    ASSERT_TRUE(staging.ok());
    EXPECT_TRUE(staging->empty()) << "stop at " << stop_at << ": " << staging->front();
  }
  EXPECT_TRUE(SameRows(DumpAll(dir, *(*storage)->Pin()), expected));
  Compactor compactor((*storage)->data_dir(),
                      {.merge = {}, .load_attachment = nullptr, .check_stop = nullptr});
  absl::StatusOr<CompactionResult> result = compactor.Run(group);
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_EQ((*storage)->Pin()->size(), 1u);
  EXPECT_TRUE(SameRows(DumpAll(dir, *(*storage)->Pin()), expected));
}

// A maintenance thread paused before it starts waits in the pause before
// any step, Stop() ends the pause; resumed, it compacts and every row stays
// exactly once.
TEST(CompactionTest, PausedMaintenanceTakesNoStepUntilResumed) {
  PosixFileSystem fs;
  testing::ScopedTempDir temp("compaction_pause");
  const std::string dir = temp.path() + "/data";
  TestClock clock;
  MaintenanceOptions maintenance;
  maintenance.policy.min_inputs = 2;
  maintenance.idle_interval = std::chrono::milliseconds(1);
  maintenance.nice = 0;
  Dump expected;
  {
    auto storage = Storage::Open(fs, dir, Options(clock, maintenance));
    ASSERT_TRUE(storage.ok()) << storage.status();
    for (uint32_t i = 0; i < 4; ++i) ASSERT_TRUE(WriteOne(**storage, 1700 + i).ok());
    expected = DumpAll(dir, *(*storage)->Pin());
    Maintenance& thread = (*storage)->maintenance();
    thread.Pause();
    thread.Start();
    const auto parked_by = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    while (!(*storage)->GetMaintenanceStats().paused &&
           std::chrono::steady_clock::now() < parked_by) {
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    EXPECT_TRUE((*storage)->GetMaintenanceStats().paused);
    thread.Stop();
    EXPECT_FALSE((*storage)->GetMaintenanceStats().paused);
    EXPECT_EQ((*storage)->GetMaintenanceStats().steps, 0u);
    EXPECT_EQ((*storage)->Pin()->size(), 4u);
  }
  auto storage = Storage::Open(fs, dir, Options(clock, maintenance));
  ASSERT_TRUE(storage.ok()) << storage.status();
  Maintenance& thread = (*storage)->maintenance();
  thread.Pause();
  thread.Start();
  thread.Resume();
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (std::chrono::steady_clock::now() < deadline && (*storage)->Pin()->size() > 1) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  thread.Stop();
  EXPECT_EQ((*storage)->Pin()->size(), 1u);
  EXPECT_GE((*storage)->GetMaintenanceStats().compactions, 1u);
  EXPECT_TRUE(SameRows(DumpAll(dir, *(*storage)->Pin()), expected));
}

// Lookups and DuckDB scans run on pinned Snapshots all through ingest and
// background compaction: none fails (no file disappears under a pin), and
// every acknowledged trace comes back with exactly its spans.
TEST(CompactionTest, QueriesAndLookupsNeverFailWhileCompactionRuns) {
  PosixFileSystem fs;
  testing::ScopedTempDir temp("compaction_queries");
  const std::string dir = temp.path() + "/data";
  TestClock clock;
  MaintenanceOptions maintenance;
  maintenance.policy.min_inputs = 2;
  maintenance.policy.max_inputs = 4;
  maintenance.idle_interval = std::chrono::milliseconds(1);
  maintenance.nice = 0;
  StorageOptions options = Options(clock, maintenance);
  options.start_maintenance = true;
  auto storage = Storage::Open(fs, dir, options);
  ASSERT_TRUE(storage.ok()) << storage.status();
  auto pool = query::QueryPool::Open({.data_dir = dir, .max_concurrent = 2});
  ASSERT_TRUE(pool.ok()) << pool.status();

  Mutex mu;
  std::vector<std::pair<otlp::TraceId, size_t>> acked;  // trace, spans
  uint64_t acked_spans = 0;
  std::atomic<bool> done{false};
  std::atomic<uint64_t> lookups{0}, scans{0};
  std::atomic<int> failures{0};
  std::thread writer([&] {
    for (uint32_t i = 0; i < 40 && failures.load() == 0; ++i) {
      workload::TrafficGenerator generator({.seed = 2000 + i});
      WriteRequest request;
      request.traces = generator.Traces(60);
      std::map<otlp::TraceId, size_t> per_trace;
      for (const otlp::TraceId& t : request.traces->spans.trace_id) ++per_trace[t];
      request.rows = request.traces->spans.size();
      request.bytes = request.rows * 300;
      const uint64_t rows = request.rows;
      if (!(*storage)->Write(std::move(request)).ok()) {
        failures.fetch_add(1);
        break;
      }
      MutexLock lock(&mu);
      for (const auto& entry : per_trace) acked.push_back(entry);
      acked_spans += rows;
    }
  });
  auto reader = [&](uint32_t seed) {
    std::mt19937 rng(seed);
    while (!done.load()) {
      std::pair<otlp::TraceId, size_t> pick;
      uint64_t floor_spans = 0;
      {
        MutexLock lock(&mu);
        if (acked.empty()) continue;
        pick = acked[rng() % acked.size()];
        floor_spans = acked_spans;
      }
      const std::shared_ptr<const Snapshot> pinned = (*storage)->Pin();
      auto found = LookupTrace(fs, dir, *pinned, pick.first);
      if (!found.ok() || !found->has_value() || (*found)->spans.size() != pick.second) {
        ADD_FAILURE() << "lookup: " << (found.ok() ? "wrong answer" : found.status().ToString());
        failures.fetch_add(1);
        return;
      }
      ++lookups;
      if (rng() % 8 == 0) {
        auto counted = (*pool)->Run(query::ViewFilesOf(*pinned), "SELECT count(*) FROM spans");
        if (!counted.ok() || !counted->rows[0][0] ||
            std::stoull(*counted->rows[0][0]) < floor_spans) {
          ADD_FAILURE() << "scan: "
                        << (counted.ok() ? "too few spans" : counted.status().ToString());
          failures.fetch_add(1);
          return;
        }
        ++scans;
      }
    }
  };
  std::thread r1(reader, 1), r2(reader, 2);
  writer.join();
  // Let compaction catch up while the readers go on.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (std::chrono::steady_clock::now() < deadline && failures.load() == 0 &&
         (*storage)->Pin()->size() > 4) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  done.store(true);
  r1.join();
  r2.join();
  EXPECT_EQ(failures.load(), 0);
  const MaintenanceStats stats = (*storage)->GetMaintenanceStats();
  EXPECT_GE(stats.compactions, 5u);
  EXPECT_GT(stats.batches_deleted, 0u);
  EXPECT_GT(lookups.load(), 50u);
  EXPECT_GT(scans.load(), 2u);
  EXPECT_LE((*storage)->Pin()->size(), 4u);
  EXPECT_EQ(Read(**storage), acked_spans);
}

}  // namespace
}  // namespace strata::storage
