// Crash loops through maintenance: compaction (merge, marker, promotion,
// publish), retention and reclamation run over the fault-injecting file
// system, which crashes after every possible number of syncs (or fails
// operations with EIO/ENOSPC); the data directory is then reopened, which
// must always succeed, and:
//
//   * right after the reboot, every row of today's batches is present
//     exactly once, and no row of the expired day twice;
//   * once maintenance has run to the end without faults, today's rows are
//     still there exactly once, the expired day is gone, no marker or
//     staging entry is left, and the directories on disk are exactly the
//     live batches.

#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "io/fault_injection_file_system.h"
#include "io/posix_file_system.h"
#include "storage/storage.h"
#include "storage/table/file_source.h"
#include "storage/table/spans_table.h"
#include "storage/testing/commit_testing.h"
#include "workload/traffic_generator.h"

namespace strata::storage {
namespace {

using testing::ScopedTempDir;

constexpr int64_t kDayMicros = int64_t{86'400} * 1'000'000;
constexpr int64_t kExpiredDay = int64_t{1'795'168'800} * 1'000'000;  // 2026-11-20 10:00 UTC
constexpr int64_t kToday = kExpiredDay + 3 * kDayMicros;             // 2026-11-23 10:00 UTC

// (trace id, span id) of one span, as bytes.
using SpanKey = std::string;

struct Contents {
  std::map<SpanKey, int> spans;  // key -> copies
  uint64_t logs = 0;
  uint64_t metrics = 0;
};

// Everything the live Snapshot holds, read through strata's reader.
Contents Read(FileSystem& fs, const Snapshot& snapshot, const std::string& day = "") {
  Contents out;
  for (const auto& batch : snapshot.batches()) {
    if (!day.empty() && batch->day() != day) continue;
    out.logs += batch->meta().logs.rows;
    out.metrics += batch->meta().metrics.rows;
    if (!batch->meta().spans_parquet.has_value()) continue;
    auto source = OpenFileSource(fs, batch->dir() + "/spans.parquet");
    EXPECT_TRUE(source.ok()) << source.status();
    if (!source.ok()) continue;
    auto spans = ReadSpansTable(source->get(), batch->meta().id, "spans.parquet");
    EXPECT_TRUE(spans.ok()) << spans.status();
    if (!spans.ok()) continue;
    for (size_t i = 0; i < spans->spans.size(); ++i) {
      SpanKey key(reinterpret_cast<const char*>(spans->spans.trace_id[i].data()), 16);
      key.append(reinterpret_cast<const char*>(spans->spans.span_id[i].data()), 8);
      ++out.spans[key];
    }
  }
  return out;
}

StorageOptions Options(std::shared_ptr<std::atomic<int64_t>> now) {
  StorageOptions options;
  options.clock = [now] { return now->fetch_add(1000); };
  options.writer.max_requests_per_batch = 1;
  options.writer.max_commit_retries = 0;
  options.maintenance.policy.min_inputs = 3;
  options.maintenance.policy.max_inputs = 3;
  options.maintenance.retention.days = 1;
  options.maintenance.merge.chunk_rows = 50;
  options.maintenance.failure_backoff = std::chrono::nanoseconds(0);
  return options;
}

void RunUntilIdle(Storage& storage) {
  for (int i = 0; i < 200 && storage.maintenance().RunStep(); ++i) {
  }
}

// A data directory with two batches of an expired day and six of today,
// written once; each run copies it.
class Template {
 public:
  static const Template& Get() {
    static const Template* const t = new Template();
    return *t;
  }
  const std::string& dir() const { return dir_; }
  const Contents& today() const { return today_; }
  const Contents& expired() const { return expired_; }

 private:
  Template() : temp_("compaction_crash_template") {
    dir_ = temp_.path() + "/data";
    PosixFileSystem fs;
    auto now = std::make_shared<std::atomic<int64_t>>(kExpiredDay);
    auto storage = Storage::Open(fs, dir_, Options(now));
    EXPECT_TRUE(storage.ok()) << storage.status();
    if (!storage.ok()) return;
    for (uint32_t i = 0; i < 8; ++i) {
      if (i == 2) now->store(kToday);
      workload::TrafficGenerator generator({.seed = 300 + i});
      WriteRequest request;
      request.traces = generator.Traces(40);
      request.logs = generator.Logs(10);
      request.metrics = generator.Metrics(10);
      request.rows = request.traces->spans.size() + request.logs->logs.size() + 10;
      request.bytes = request.rows * 300;
      EXPECT_TRUE((*storage)->Write(std::move(request)).ok());
    }
    const std::shared_ptr<const Snapshot> snapshot = (*storage)->Pin();
    EXPECT_EQ(snapshot->size(), 8u);
    today_ = Read(fs, *snapshot, "2026-11-23");
    expired_ = Read(fs, *snapshot, "2026-11-20");
  }

  ScopedTempDir temp_;
  std::string dir_;
  Contents today_, expired_;
};

std::set<std::string> Entries(FileSystem& fs, const std::string& dir) {
  auto names = fs.ListDir(dir);
  return names.ok() ? std::set<std::string>(names->begin(), names->end()) : std::set<std::string>{};
}

struct Run {
  std::optional<uint64_t> crash_after_syncs;
  uint32_t faults_one_in = 0;
  uint64_t seed = 1;
};

class MaintenanceCrash {
 public:
  // Syncs a full maintenance run makes without faults.
  uint64_t CountSyncs() {
    Setup(1);
    if (::testing::Test::HasFatalFailure()) return 0;
    auto storage = Storage::Open(*fs_, data_, Options(now_));
    EXPECT_TRUE(storage.ok()) << storage.status();
    if (!storage.ok()) return 0;
    const uint64_t before = fs_->sync_count();
    RunUntilIdle(**storage);
    EXPECT_EQ((*storage)->GetMaintenanceStats().compactions, 2u);
    return fs_->sync_count() - before;
  }

  // True when the faults halted compaction (a failure whose undo failed
  // too); the checks below then also prove that the restart resolves it.
  bool CrashAndCheck(const Run& run) {
    bool halted = false;
    Check(run, &halted);
    return halted;
  }

 private:
  void Check(const Run& run, bool* halted) {
    Setup(run.seed);
    if (::testing::Test::HasFatalFailure()) return;
    {
      auto storage = Storage::Open(*fs_, data_, Options(now_));
      ASSERT_TRUE(storage.ok()) << storage.status();
      if (run.crash_after_syncs.has_value()) fs_->CrashAfterSyncs(*run.crash_after_syncs);
      if (run.faults_one_in != 0) {
        for (IoOperation op :
             {IoOperation::kAppend, IoOperation::kSync, IoOperation::kSyncDir, IoOperation::kRename,
              IoOperation::kCreateDir, IoOperation::kOpenForWrite, IoOperation::kRemove}) {
          fs_->InjectFaults(op, run.faults_one_in, run.seed % 2 == 0 ? EIO : ENOSPC);
        }
      }
      RunUntilIdle(**storage);
      const MaintenanceStats stats = (*storage)->GetMaintenanceStats();
      *halted = stats.compaction_halted;
      if (*halted) {
        // Halted: further steps leave the compaction to the restart
        // (failure_backoff is 0, so they would retry it otherwise).
        for (int i = 0; i < 3; ++i) (*storage)->maintenance().RunStep();
        EXPECT_EQ((*storage)->GetMaintenanceStats().compaction_failures, stats.compaction_failures)
            << Describe(run);
      }
    }
    const absl::Status crashed = fs_->SimulateCrash({});
    ASSERT_TRUE(crashed.ok()) << Describe(run) << ": " << crashed;
    fs_->ClearFaults();

    // Reboot: boot resolves whatever the crash left.
    auto storage = Storage::Open(*fs_, data_, Options(now_));
    ASSERT_TRUE(storage.ok()) << "after " << Describe(run) << ": " << storage.status();
    EXPECT_FALSE((*storage)->GetMaintenanceStats().compaction_halted) << Describe(run);
    const Template& t = Template::Get();
    {
      const Contents now = Read(*fs_, *(*storage)->Pin());
      uint64_t expired_seen = 0;
      for (const auto& [key, copies] : t.expired().spans) {
        const auto it = now.spans.find(key);
        if (it != now.spans.end()) {
          ASSERT_EQ(it->second, 1) << Describe(run) << ": an expired span twice";
          ++expired_seen;
        }
      }
      for (const auto& [key, copies] : t.today().spans) {
        const auto it = now.spans.find(key);
        ASSERT_TRUE(it != now.spans.end()) << Describe(run) << ": a span of today lost";
        ASSERT_EQ(it->second, 1) << Describe(run) << ": a span of today twice";
      }
      ASSERT_EQ(now.spans.size(), t.today().spans.size() + expired_seen) << Describe(run);
    }
    // Maintenance runs to the end without faults.
    RunUntilIdle(**storage);
    const std::shared_ptr<const Snapshot> snapshot = (*storage)->Pin();
    const Contents end = Read(*fs_, *snapshot);
    EXPECT_EQ(end.spans, t.today().spans) << Describe(run);
    EXPECT_EQ(end.logs, t.today().logs) << Describe(run);
    EXPECT_EQ(end.metrics, t.today().metrics) << Describe(run);
    EXPECT_EQ(snapshot->size(), 2u) << Describe(run);
    const std::string telemetry = data_ + "/telemetry";
    EXPECT_FALSE(*fs_->Exists(telemetry + "/COMPACTION.json")) << Describe(run);
    EXPECT_TRUE(Entries(*fs_, telemetry + "/staging").empty()) << Describe(run);
    EXPECT_EQ(Entries(*fs_, telemetry + "/days"), std::set<std::string>{"2026-11-23"})
        << Describe(run);
    std::set<std::string> live;
    for (const auto& batch : snapshot->batches()) live.insert(batch->id().ToString() + ".batch");
    EXPECT_EQ(Entries(*fs_, telemetry + "/days/2026-11-23"), live) << Describe(run);
  }

  static std::string Describe(const Run& run) {
    return "crash after " +
           (run.crash_after_syncs ? std::to_string(*run.crash_after_syncs) : std::string("none")) +
           " syncs, faults 1 in " + std::to_string(run.faults_one_in) + ", seed " +
           std::to_string(run.seed);
  }

  void Setup(uint64_t seed) {
    const Template& t = Template::Get();
    ASSERT_FALSE(t.dir().empty());
    temp_ = std::make_unique<ScopedTempDir>("compaction_crash");
    data_ = temp_->path() + "/data";
    std::error_code ec;
    std::filesystem::copy(t.dir(), data_, std::filesystem::copy_options::recursive, ec);
    ASSERT_FALSE(ec) << ec.message();
    std::filesystem::remove(data_ + "/LOCK", ec);
    fs_ = std::make_unique<FaultInjectionFileSystem>(&posix_, seed);
    now_->store(kToday + kDayMicros / 4);
  }

  PosixFileSystem posix_;
  std::unique_ptr<ScopedTempDir> temp_;
  std::string data_;
  std::unique_ptr<FaultInjectionFileSystem> fs_;
  std::shared_ptr<std::atomic<int64_t>> now_ = std::make_shared<std::atomic<int64_t>>(kToday);
};

TEST(MaintenanceCrashTest, CrashAtEverySyncOfMaintenanceLosesAndDoublesNothing) {
  const uint64_t syncs = MaintenanceCrash().CountSyncs();
  ASSERT_GT(syncs, 20u);
  int halted = 0;
  for (uint64_t k = 0; k <= syncs; ++k) {
    MaintenanceCrash crash;
    halted += crash.CrashAndCheck({.crash_after_syncs = k}) ? 1 : 0;
    if (::testing::Test::HasFatalFailure()) return;
  }
  // A crash point after the marker's sync fails the compaction and its
  // undo: the Aborted path runs, and the reboot above resolved it.
  EXPECT_GT(halted, 0);
}

TEST(MaintenanceCrashTest, InjectedEioAndEnospcThenACrash) {
  for (uint64_t seed = 1; seed <= 24; ++seed) {
    MaintenanceCrash crash;
    crash.CrashAndCheck({.crash_after_syncs = std::nullopt,
                         .faults_one_in = static_cast<uint32_t>(4 + seed % 5),
                         .seed = seed});
    if (::testing::Test::HasFatalFailure()) return;
  }
}

}  // namespace
}  // namespace strata::storage
