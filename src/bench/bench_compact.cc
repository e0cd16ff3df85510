#include "bench/bench_compact.h"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <memory>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "bench/bench_common.h"
#include "bench/paced_ingest.h"
#include "fmt/format.h"
#include "io/posix_file_system.h"
#include "spdlog/spdlog.h"
#include "storage/format/batch_id.h"
#include "storage/maintenance/compaction.h"
#include "storage/storage.h"

namespace strata::bench {
namespace {

using Clock = BenchClock;

// Log records and metric data points per span, as `strata bench writer`
// writes them (2M spans, 500k log records, 200k data points).
constexpr double kLogsPerSpan = 0.25;
constexpr double kPointsPerSpan = 0.1;
// Seeds of the phases' traffic, so no phase repeats another's rows.
constexpr uint64_t kCalibrateSeed = 101, kMeasuredSeed = 303;
// How often the watcher looks at the compaction and samples VmRSS.
constexpr auto kWatchInterval = std::chrono::milliseconds(100);
// The load of the quick mode, spans/s (no calibration).
constexpr double kQuickIngestRate = 20'000;
// Below this many requests a p99 is coarse; the bench says so.
constexpr size_t kFewSamples = 200;
// The start of each window whose requests are not counted (at most a
// quarter of the window).
constexpr double kWindowSettleSec = 0.25;

constexpr double kMiB = 1024.0 * 1024.0;

struct LatencySummary {
  size_t requests = 0;
  double p50_ms = 0, p99_ms = 0, max_ms = 0;
};

// One window of the measured load: compaction paused (idle) or running.
struct Window {
  double start_sec = 0;  // since the load began
  double end_sec = 0;
  bool compacting = false;
};

// The latency of the requests that started inside a window of the kind,
// past its first `settle_sec` (a pause takes hold at the merge's next
// chunk, and the load's requests in flight at a switch straddle it).
LatencySummary Summarize(const std::vector<IngestSample>& samples,
                         const std::vector<Window>& windows, bool compacting, double settle_sec) {
  std::vector<double> latencies;
  for (const IngestSample& s : samples) {
    const auto it = std::find_if(windows.begin(), windows.end(), [&](const Window& w) {
      return s.start_sec >= w.start_sec && s.start_sec < w.end_sec;
    });
    if (it == windows.end() || it->compacting != compacting) continue;
    if (s.start_sec >= it->start_sec + settle_sec) latencies.push_back(s.latency_sec);
  }
  LatencySummary out;
  out.requests = latencies.size();
  out.p50_ms = QuantileMs(latencies, 0.5);
  out.p99_ms = QuantileMs(latencies, 0.99);
  out.max_ms = latencies.empty() ? 0 : latencies.back() * 1000;
  return out;
}

// Whether `after` holds exactly `before` plus what a phase acknowledged.
bool CheckRows(std::string_view phase, const SnapshotRows& before, const SnapshotRows& after,
               uint64_t spans, uint64_t logs, uint64_t points) {
  if (after.spans == before.spans + spans && after.logs == before.logs + logs &&
      after.points == before.points + points) {
    return true;
  }
  spdlog::error(
      "bench compact: after {}: the Snapshot holds {} spans, {} log records, {} data points; "
      "expected {} + {}, {} + {}, {} + {}",
      phase, after.spans, after.logs, after.points, before.spans, spans, before.logs, logs,
      before.points, points);
  return false;
}

bool CheckIngest(std::string_view phase, const PacedIngestResult& result) {
  if (result.failed == 0) return true;
  spdlog::error("bench compact: {}: {} requests failed, so the stored rows are not known", phase,
                result.failed);
  return false;
}

// Whether compaction has no more work: no group to plan in the live
// Snapshot and no COMPACTION.json. In this order: a Snapshot with nothing
// to plan was published after any marker it depends on was written, so a
// marker that is gone afterwards was removed, not yet to be written.
bool CompactionIdle(storage::Storage& storage, const storage::CompactionPolicy& policy) {
  {
    const std::shared_ptr<const storage::Snapshot> snapshot = storage.Pin();
    const std::string today = storage::DayOfNanos(UnixNanosNow());
    if (storage::PlanCompaction(*snapshot, policy, today).has_value()) return false;
  }
  const storage::DataDir& dir = storage.data_dir();
  absl::StatusOr<bool> marker = dir.fs().Exists(dir.paths().CompactionMarker());
  return marker.ok() && !*marker;
}

// CPU seconds (user + system) of this process's threads whose nice value
// is `nice`: the maintenance thread lowers its own, and no other thread
// here does. 0 when `nice` is 0 (such a thread cannot be told apart).
double CpuSecondsOfThreadsWithNice(int nice) {
  if (nice == 0) return 0;
  const double ticks_per_sec = static_cast<double>(sysconf(_SC_CLK_TCK));
  double seconds = 0;
  std::error_code ec;
  for (auto it = std::filesystem::directory_iterator("/proc/self/task", ec);
       !ec && it != std::filesystem::directory_iterator(); it.increment(ec)) {
    std::ifstream stat(it->path() / "stat");
    std::string line;
    if (!std::getline(stat, line)) continue;
    // The fields after "(comm)": state is field 3, utime 14, stime 15,
    // nice 19 (proc(5)).
    const size_t paren = line.rfind(')');
    if (paren == std::string::npos) continue;
    std::istringstream fields(line.substr(paren + 2));
    std::vector<std::string> f{std::istream_iterator<std::string>(fields),
                               std::istream_iterator<std::string>()};
    if (f.size() < 17 || std::stoi(f[16]) != nice) continue;
    seconds += (std::stod(f[11]) + std::stod(f[12])) / ticks_per_sec;
  }
  return seconds;
}

std::set<std::string> DaysOf(const storage::Snapshot& snapshot) {
  std::set<std::string> days;
  for (const auto& batch : snapshot.batches()) days.insert(batch->day());
  return days;
}

// What the measured phase saw: one load, compaction paused and running in
// alternating windows while it ran, then compaction alone until it had no
// more work.
struct MeasuredPhase {
  PacedIngestResult ingest;
  std::vector<Window> windows;
  double seconds = 0;               // maintenance start to no more work (or the bound)
  double paused_seconds = 0;        // of it, with compaction paused
  bool finished = false;            // no more work within the bound
  bool failed = false;              // a compaction failed, or compaction halted
  double peak_rss_mib = 0;          // VmHWM
  double rss_max_mib = 0;           // the largest sampled VmRSS
  double maintenance_cpu_sec = 0;   // CPU time of the maintenance thread
  storage::MaintenanceStats stats;  // at the end
};

MeasuredPhase RunMeasured(storage::Storage& storage, const storage::CompactionPolicy& policy,
                          const BenchCompactOptions& options, double rate) {
  MeasuredPhase phase;
  storage::Maintenance& maintenance = storage.maintenance();
  std::atomic<bool> measuring{true};  // windows alternate; the load runs
  const double load_seconds = 2 * options.ingest_seconds;
  const double window_seconds = std::max(0.1, options.window_seconds);
  ResetPeakRss();
  maintenance.Pause();  // the first window is idle
  maintenance.Start();
  const Clock::time_point start = Clock::now();
  auto at = [&](double sec) {
    return start + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(sec));
  };
  std::thread controller([&] {
    const Clock::time_point deadline = at(options.max_compact_seconds);
    Window window{.start_sec = 0, .end_sec = 0, .compacting = false};
    Clock::time_point paused_since = start;
    while (true) {
      phase.rss_max_mib = std::max(phase.rss_max_mib, ProcStatusMiB("VmRSS:"));
      const storage::MaintenanceStats stats = storage.GetMaintenanceStats();
      if (stats.compaction_failures > 0 || stats.compaction_halted) phase.failed = true;
      // Paused, the plan cannot change: only running compaction runs out of work.
      if (window.compacting && CompactionIdle(storage, policy)) phase.finished = true;
      const bool stop = phase.failed || phase.finished || Clock::now() >= deadline;
      const double now_sec = SecondsSince(start);
      if (measuring.load()) {
        const bool last = stop || now_sec >= load_seconds;
        if (last || now_sec >= window.start_sec + window_seconds) {
          window.end_sec = now_sec;
          phase.windows.push_back(window);
          if (last) measuring.store(false);
          const bool compacting = last || !window.compacting;
          if (compacting && !window.compacting) {
            phase.paused_seconds += SecondsSince(paused_since);
            maintenance.Resume();
          } else if (!compacting) {
            maintenance.Pause();
            paused_since = Clock::now();
          }
          window = Window{.start_sec = now_sec, .end_sec = 0, .compacting = compacting};
        }
      }
      if (stop) break;
      // Wake at the next window's start or the watch interval, whichever
      // comes first.
      Clock::time_point wake = Clock::now() + kWatchInterval;
      if (measuring.load()) wake = std::min(wake, at(window.start_sec + window_seconds));
      std::this_thread::sleep_until(wake);
    }
    phase.seconds = SecondsSince(start);
    measuring.store(false);
    maintenance.Resume();
  });
  phase.ingest = RunPacedIngest(
      storage, PacedIngestOptions{.spans_per_sec = rate,
                                  .clients = options.clients,
                                  .seed = options.seed * 1000 + kMeasuredSeed,
                                  .duration = std::chrono::duration_cast<std::chrono::nanoseconds>(
                                      std::chrono::duration<double>(load_seconds)),
                                  .stop = [&] { return !measuring.load(); },
                                  .start = start});
  controller.join();
  phase.peak_rss_mib = ProcStatusMiB("VmHWM:");
  phase.stats = storage.GetMaintenanceStats();
  phase.maintenance_cpu_sec = CpuSecondsOfThreadsWithNice(storage.maintenance().options().nice);
  return phase;
}

// Builds the day: `options.spans` spans in `options.batches` batches, one
// request per batch. Returns the exit code on failure.
std::optional<int> Build(FileSystem& fs, const std::string& dir,
                         const BenchCompactOptions& options) {
  storage::StorageOptions build_options;
  build_options.writer.max_requests_per_batch = 1;  // one batch per request
  auto storage = storage::Storage::Open(fs, dir, build_options);
  if (!storage.ok()) return FailStep("compact", "open", storage.status());
  const SnapshotRows before = CountRows(*(*storage)->Pin());
  WrittenRows written;
  if (!WriteBatches(**storage,
                    GeneratedBatches{.spans = options.spans,
                                     .batches = options.batches,
                                     .seed = options.seed,
                                     .first_time_unix_nano = UnixNanosNow(),
                                     .step_nanos = 0,
                                     .logs_per_span = kLogsPerSpan,
                                     .points_per_span = kPointsPerSpan},
                    &written)) {
    return 1;
  }
  const SnapshotRows after = CountRows(*(*storage)->Pin());
  if (!CheckRows("the build", before, after, written.spans, written.logs, written.points)) {
    return 1;
  }
  fmt::print(
      "built {} batches: {} spans, {} log records, {} data points in {:.1f} s "
      "({:.0f} spans/s, generation included)\n",
      std::max(1, options.batches), written.spans, written.logs, written.points, written.seconds,
      written.spans / written.seconds);
  std::fflush(stdout);
  (*storage)->Shutdown(std::chrono::seconds(30));
  return std::nullopt;
}

void PrintLatency(std::string_view name, const LatencySummary& s) {
  fmt::print("{:<36} {:>9} {:>9.2f} {:>9.2f} {:>9.2f}\n", name, s.requests, s.p50_ms, s.p99_ms,
             s.max_ms);
}

}  // namespace

int RunBenchCompact(const BenchCompactOptions& given) {
  BenchCompactOptions options = given;
  if (options.quick) {
    // Compaction's CPU grows with everything the day holds, the load's
    // rows included, so the quick mode keeps the load small and fixed.
    options.spans = 200'000;
    options.batches = 20;
    options.ingest_seconds = 3;
    options.window_seconds = 1;
    if (options.ingest_rate <= 0) options.ingest_rate = kQuickIngestRate;
  }
  PosixFileSystem fs;
  const std::string dir = std::filesystem::absolute(
                              options.data_dir.empty() ? "strata-bench-compact" : options.data_dir)
                              .lexically_normal()
                              .string();
  const bool remove_after = !options.keep && !options.reuse && !options.build_only;
  if (!options.reuse) {
    if (auto exists = fs.Exists(dir); exists.ok() && *exists) {
      if (!options.data_dir.empty()) {
        spdlog::error("bench compact: {} exists; pass --reuse to compact it, or another --dir",
                      dir);
        return 1;
      }
      (void)fs.RemoveAll(dir);
    }
    if (std::optional<int> failed = Build(fs, dir, options)) return *failed;
    if (options.build_only) {
      fmt::print("kept {}\n", dir);
      return 0;
    }
  }

  // The measured phases: default writer settings, compaction ready but
  // not started.
  storage::StorageOptions storage_options;
  storage::MaintenanceOptions& maintenance = storage_options.maintenance;
  maintenance.compaction = true;
  maintenance.policy.min_inputs = std::max<size_t>(2, options.min_inputs);
  maintenance.idle_interval = std::chrono::milliseconds(50);
  if (options.chunk_rows > 0) maintenance.merge.chunk_rows = options.chunk_rows;
  maintenance.nice = options.maintenance_nice;
  maintenance.sched_idle = options.maintenance_sched_idle;
  const storage::CompactionPolicy policy = maintenance.policy;
  const Clock::time_point open_start = Clock::now();
  auto opened = storage::Storage::Open(fs, dir, storage_options);
  if (!opened.ok()) return FailStep("compact", "open", opened.status());
  storage::Storage& storage = **opened;
  const double open_seconds = SecondsSince(open_start);
  const SnapshotRows built = CountRows(*storage.Pin());
  fmt::print(
      "data: {} spans, {} log records, {} data points in {} batches ({:.0f} MiB); "
      "reopened in {:.2f} s\n",
      built.spans, built.logs, built.points, built.batches, built.bytes / kMiB, open_seconds);
  if (built.spans == 0) {
    spdlog::error("bench compact: no spans in {}", dir);
    return 1;
  }

  // Calibration: the writer's full speed from the same clients.
  double rate = options.ingest_rate;
  double full_speed = 0;
  SnapshotRows before = built;
  if (rate <= 0) {
    const PacedIngestResult calibration = RunPacedIngest(
        storage,
        PacedIngestOptions{.spans_per_sec = 0,
                           .clients = options.clients,
                           .seed = options.seed * 1000 + kCalibrateSeed,
                           .duration = std::chrono::duration_cast<std::chrono::nanoseconds>(
                               std::chrono::duration<double>(options.calibrate_seconds))});
    const SnapshotRows after = CountRows(*storage.Pin());
    if (!CheckIngest("calibration", calibration) ||
        !CheckRows("calibration", before, after, calibration.spans, calibration.logs,
                   calibration.points)) {
      return 1;
    }
    before = after;
    full_speed = calibration.spans_per_sec();
    rate = full_speed / 2;
    fmt::print(
        "calibration: {:.0f} spans/s at full speed from {} clients ({} refused); the load "
        "is half of it\n",
        full_speed, options.clients, calibration.refused);
  }
  // A copy: printed after the storage engine is gone.
  const storage::MergeOptions merge = storage.maintenance().options().merge;
  fmt::print(
      "load: {:.0f} spans/s in requests of 512 rows (20 of every 27 spans, 5 log records, 2 data "
      "points) from {} clients\n"
      "merge: chunk_rows {} (rows decoded per merge round, plus one trace per input), output "
      "row groups of {} MiB (the writer buffers one per file); policy: a level merges at {} "
      "batches, groups of at most {} batches, {} rows, {} MiB; the maintenance thread runs at "
      "nice {}\n",
      rate, options.clients, merge.chunk_rows, merge.tables.row_group_bytes >> 20,
      policy.min_inputs, policy.max_inputs, policy.max_rows, policy.max_bytes >> 20,
      options.maintenance_nice);
  std::fflush(stdout);  // progress, when the output goes to a file

  // The measured phase: one load, compaction paused and running in
  // alternating windows, then compaction alone until it has no more work.
  const std::set<std::string> days = DaysOf(*storage.Pin());
  const double rss_before = ProcStatusMiB("VmRSS:");
  const storage::MaintenanceStats stats_before = storage.GetMaintenanceStats();
  const MeasuredPhase phase = RunMeasured(storage, policy, options, rate);
  const SnapshotRows after = CountRows(*storage.Pin());
  bool ok = CheckIngest("the measured load", phase.ingest) &&
            CheckRows("compaction", before, after, phase.ingest.spans, phase.ingest.logs,
                      phase.ingest.points);
  if (phase.failed) {
    spdlog::error("bench compact: compaction failed ({} failures{})",
                  phase.stats.compaction_failures, phase.stats.compaction_halted ? ", halted" : "");
    ok = false;
  }
  if (!phase.finished && !phase.failed) {
    spdlog::error("bench compact: compaction still had work after {:.0f} s (--max-compact-sec)",
                  phase.seconds);
    ok = false;
  }
  const uint64_t compactions = phase.stats.compactions - stats_before.compactions;
  if (compactions == 0 || after.batches >= before.batches) {
    spdlog::error(
        "bench compact: compaction did not run ({} compactions, {} -> {} batches); "
        "a reused data directory needs batches to merge",
        compactions, before.batches, after.batches);
    ok = false;
  }

  storage.Shutdown(std::chrono::seconds(30));
  opened->reset();
  if (remove_after) (void)fs.RemoveAll(dir);

  const double settle = std::min(kWindowSettleSec, options.window_seconds / 4);
  const LatencySummary idle_latency =
      Summarize(phase.ingest.samples, phase.windows, /*compacting=*/false, settle);
  const LatencySummary compacting_latency =
      Summarize(phase.ingest.samples, phase.windows, /*compacting=*/true, settle);
  size_t idle_windows = 0, compacting_windows = 0;
  for (const Window& w : phase.windows) ++(w.compacting ? compacting_windows : idle_windows);
  const uint64_t merged_spans = phase.stats.merged_spans - stats_before.merged_spans;
  const uint64_t merged_rows = phase.stats.compacted_rows - stats_before.compacted_rows;
  const uint64_t merged_bytes = phase.stats.compacted_bytes - stats_before.compacted_bytes;
  // Throughput over the time compaction was allowed to run.
  const double seconds = std::max(phase.seconds - phase.paused_seconds, 1e-9);
  const double merge_spans_per_sec = merged_spans / seconds;
  const double merge_spans_per_cpu_sec =
      phase.maintenance_cpu_sec > 0 ? merged_spans / phase.maintenance_cpu_sec : 0;
  const double ratio = compacting_latency.p99_ms / std::max(idle_latency.p99_ms, 1e-9);
  const bool target_met = ratio <= 1.5;

  fmt::print(
      "load: {:.1f} s at {:.0f} spans/s ({} requests refused, {} late by more than 1 ms); "
      "windows of {:.1f} s: {} idle (compaction paused), {} compacting; the first {:.2f} s of "
      "each window not counted\n",
      phase.ingest.seconds, phase.ingest.spans_per_sec(), phase.ingest.refused, phase.ingest.late,
      options.window_seconds, idle_windows, compacting_windows, settle);
  fmt::print("{:<36} {:>9} {:>9} {:>9} {:>9}\n", "ingest requests", "count", "p50 ms", "p99 ms",
             "max ms");
  PrintLatency("in idle windows", idle_latency);
  PrintLatency("in compacting windows", compacting_latency);
  fmt::print(
      "compaction: {} compactions in {:.1f} s ({:.1f} s of it paused): merged {} spans "
      "({:.0f}/s running), {} rows of all signals ({:.0f}/s), {:.0f} MiB of input ({:.1f} "
      "MiB/s); {} -> {} batches over {} day(s)\n"
      "maintenance thread CPU: {:.1f} s ({:.0f}% of its running time; {:.0f} spans merged per "
      "CPU second)\n",
      compactions, phase.seconds, phase.paused_seconds, merged_spans, merge_spans_per_sec,
      merged_rows, merged_rows / seconds, merged_bytes / kMiB, merged_bytes / kMiB / seconds,
      before.batches, after.batches, days.size(), phase.maintenance_cpu_sec,
      100 * phase.maintenance_cpu_sec / seconds, merge_spans_per_cpu_sec);
  fmt::print(
      "RSS: peak {:.0f} MiB over the phase (VmHWM; sampled VmRSS max {:.0f} MiB; {:.0f} MiB "
      "before it started)\n",
      phase.peak_rss_mib, phase.rss_max_mib, rss_before);
  if (std::min(idle_latency.requests, compacting_latency.requests) < kFewSamples) {
    fmt::print("note: only {} idle and {} compacting requests; the p99 is coarse\n",
               idle_latency.requests, compacting_latency.requests);
  }
  fmt::print("target (issue 6): ingest p99 while compacting at most 1.5x idle: {:.2f}x, {}\n",
             ratio, target_met ? "met" : "NOT met");
  fmt::print(
      "{{\"spans\":{},\"logs\":{},\"data_points\":{},\"batches_before\":{},\"batches_after\":{},"
      "\"compactions\":{},\"compaction_sec\":{:.2f},\"paused_sec\":{:.2f},\"merged_spans\":{},"
      "\"merge_spans_per_sec\":{:.0f},\"merge_rows_per_sec\":{:.0f},"
      "\"maintenance_cpu_sec\":{:.1f},\"merge_spans_per_cpu_sec\":{:.0f},\"peak_rss_mb\":{:.0f},"
      "\"sampled_rss_max_mb\":{:.0f},\"rss_before_mb\":{:.0f},"
      "\"ingest_rate_spans_per_sec\":{:.0f},\"full_speed_spans_per_sec\":{:.0f},"
      "\"window_sec\":{:.2f},\"idle_windows\":{},\"compacting_windows\":{},"
      "\"ingest_p50_ms_idle\":{:.2f},\"ingest_p99_ms_idle\":{:.2f},"
      "\"ingest_p50_ms_compacting\":{:.2f},\"ingest_p99_ms_compacting\":{:.2f},"
      "\"ingest_requests_idle\":{},\"ingest_requests_compacting\":{},\"ratio\":{:.2f},"
      "\"target_met\":{},\"chunk_rows\":{},\"row_group_bytes\":{},\"maintenance_nice\":{},"
      "\"quick\":{},\"ok\":{}}}\n",
      before.spans, before.logs, before.points, before.batches, after.batches, compactions,
      phase.seconds, phase.paused_seconds, merged_spans, merge_spans_per_sec, merged_rows / seconds,
      phase.maintenance_cpu_sec, merge_spans_per_cpu_sec, phase.peak_rss_mib, phase.rss_max_mib,
      rss_before, rate, full_speed, options.window_seconds, idle_windows, compacting_windows,
      idle_latency.p50_ms, idle_latency.p99_ms, compacting_latency.p50_ms,
      compacting_latency.p99_ms, idle_latency.requests, compacting_latency.requests, ratio,
      target_met, merge.chunk_rows, merge.tables.row_group_bytes, options.maintenance_nice,
      options.quick, ok);
  return ok ? 0 : 1;
}


}  // namespace strata::bench
