#include "bench/bench_writer.h"

#include <fcntl.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <fstream>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "bench/bench_common.h"
#include "fmt/format.h"
#include "io/posix_file_system.h"
#include "parquet/file_reader.h"
#include "query/duckdb_engine.h"
#include "spdlog/spdlog.h"
#include "storage/format/layout.h"
#include "storage/storage.h"
#include "storage/table/spans_table.h"
#include "storage/table/table_file.h"
#include "workload/traffic_generator.h"

namespace strata::bench {
namespace {

using Clock = BenchClock;

// fsyncs a file another library wrote (DuckDB's COPY output).
absl::Status FsyncPath(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return absl::ErrnoToStatus(errno, "open " + path);
  const int rc = ::fsync(fd);
  const int saved = errno;
  ::close(fd);
  return rc == 0 ? absl::OkStatus() : absl::ErrnoToStatus(saved, "fsync " + path);
}

struct DiskUse {
  uint64_t batches = 0;
  uint64_t bytes = 0;
};

// Batches of the snapshot with rows of `signal` and the bytes of all their files.
DiskUse MeasureDisk(const storage::Snapshot& snapshot,
                    const std::function<uint64_t(const storage::BatchMeta&)>& rows) {
  DiskUse use;
  for (const auto& batch : snapshot.batches()) {
    const storage::BatchMeta& m = batch->meta();
    if (rows(m) == 0) continue;
    ++use.batches;
    for (const auto& f :
         {m.spans_parquet, m.spans_tidx, m.logs_parquet, m.metrics_parquet, m.rollups_parquet}) {
      if (f.has_value()) use.bytes += f->bytes;
    }
    use.bytes += storage::SerializeBatchMeta(m).size();
  }
  return use;
}

// Logs a failed step of the baseline; returns the failure marker -1.
double Fail(const absl::Status& status) {
  spdlog::error("bench writer: duckdb baseline: {}", status.ToString());
  return -1;
}

// The DuckDB baseline: for each span batch strata wrote, the same rows
// (read back, untimed) are appended to a DuckDB table and written with
// COPY TO parquet (zstd), then fsynced. Returns seconds, or -1.
double DuckDbBaseline(FileSystem& fs, const storage::Snapshot& snapshot, const std::string& dir,
                      uint64_t* rows_out) {
  auto engine = query::DuckDbEngine::Open({.threads = 2});
  if (!engine.ok()) return Fail(engine.status());
  double seconds = 0;
  int file = 0;
  for (const auto& batch : snapshot.batches()) {
    if (batch->meta().spans.rows == 0) continue;
    auto bytes = fs.ReadFile(batch->dir() + "/spans.parquet");
    if (!bytes.ok()) return Fail(bytes.status());
    parquet::StringSource source(*bytes);
    auto reader = storage::OpenTable(&source, storage::SpansTableColumns(), storage::kSpansSchema,
                                     batch->id().ToString(), storage::kSpansFileName);
    if (!reader.ok()) return Fail(reader.status());
    auto columns = storage::ReadAllColumns(**reader, storage::kSpansFileName);
    if (!columns.ok()) return Fail(columns.status());
    *rows_out += batch->meta().spans.rows;
    const std::string path = fmt::format("{}/duckdb-{}.parquet", dir, file++);
    const Clock::time_point start = Clock::now();
    absl::Status s =
        (*engine)->CreateTableFromColumns("spans", storage::SpansTableColumns(), *columns);
    if (s.ok()) {
      s = (*engine)
              ->Query(fmt::format("COPY spans TO '{}' (FORMAT parquet, COMPRESSION zstd)", path))
              .status();
    }
    if (s.ok()) {
      s = FsyncPath(path);
      if (s.ok()) s = fs.SyncDir(dir);
    }
    seconds += SecondsSince(start);
    if (!s.ok()) return Fail(s);
  }
  return seconds;
}

}  // namespace

int RunBenchWriter(const BenchWriterOptions& options) {
  PosixFileSystem fs;
  const std::string dir = options.data_dir.empty() ? "strata-bench-data" : options.data_dir;
  if (auto exists = fs.Exists(dir); exists.ok() && *exists && options.data_dir.empty()) {
    (void)fs.RemoveAll(dir);
  }
  const int rows = std::max(1, options.request_rows);
  workload::TrafficGenerator generator(workload::TrafficOptions{.seed = options.seed});
  std::vector<std::unique_ptr<otlp::TraceBatch>> traces;
  std::vector<std::unique_ptr<otlp::LogBatch>> logs;
  std::vector<std::unique_ptr<otlp::MetricBatch>> metrics;
  const Clock::time_point gen_start = Clock::now();
  while (generator.spans_generated() < options.spans) traces.push_back(generator.Traces(rows));
  uint64_t log_rows = 0, points = 0;
  while (log_rows < options.logs) {
    logs.push_back(generator.Logs(rows));
    log_rows += logs.back()->logs.size();
  }
  while (points < options.metric_points) {
    metrics.push_back(generator.Metrics(rows));
    points += metrics.back()->point_count();
  }
  const uint64_t spans = generator.spans_generated();
  fmt::print("generated {} spans, {} log records, {} data points in {:.1f} s (not timed)\n", spans,
             log_rows, points, SecondsSince(gen_start));

  auto storage = storage::Storage::Open(fs, dir + "/data");
  if (!storage.ok()) {
    spdlog::error("bench writer: {}", storage.status().ToString());
    return 1;
  }
  const double rss_before = ProcStatusMiB("VmRSS:");
  ResetPeakRss();
  const double span_cpu_start = ProcessCpuSeconds();
  const double span_seconds = Drive(**storage, options.clients, traces.size(), [&](size_t i) {
    storage::WriteRequest r;
    r.rows = traces[i]->spans.size();
    r.bytes = r.rows * 400;  // about the OTLP protobuf size of a generated span
    r.traces = std::move(traces[i]);
    return r;
  });
  const double span_cpu = ProcessCpuSeconds() - span_cpu_start;
  const double peak_rss = ProcStatusMiB("VmHWM:");
  const storage::GroupCommitWriterStats span_stats = (*storage)->WriterStats();
  const double log_seconds = Drive(**storage, options.clients, logs.size(), [&](size_t i) {
    storage::WriteRequest r;
    r.rows = logs[i]->logs.size();
    r.bytes = r.rows * 250;
    r.logs = std::move(logs[i]);
    return r;
  });
  const double metric_seconds = Drive(**storage, options.clients, metrics.size(), [&](size_t i) {
    storage::WriteRequest r;
    r.rows = metrics[i]->point_count();
    r.bytes = r.rows * 250;
    r.metrics = std::move(metrics[i]);
    return r;
  });
  if (span_seconds < 0 || log_seconds < 0 || metric_seconds < 0) {
    spdlog::error("bench writer: some requests failed");
    return 1;
  }
  std::shared_ptr<const storage::Snapshot> snapshot = (*storage)->Pin();
  const DiskUse span_disk = MeasureDisk(*snapshot, [](const auto& m) { return m.spans.rows; });
  const DiskUse log_disk = MeasureDisk(*snapshot, [](const auto& m) { return m.logs.rows; });

  uint64_t baseline_rows = options.skip_baseline ? spans : 0;
  const double baseline_seconds =
      options.skip_baseline ? 0 : DuckDbBaseline(fs, *snapshot, dir, &baseline_rows);
  if (baseline_seconds < 0) return 1;
  if (baseline_rows != spans) {
    spdlog::error("bench writer: the baseline read {} spans back, {} were written", baseline_rows,
                  spans);
    return 1;
  }
  snapshot.reset();
  (*storage)->Shutdown(std::chrono::seconds(10));
  storage->reset();
  if (!options.keep) (void)fs.RemoveAll(dir);

  const double spans_per_sec = spans / span_seconds;
  // 0 (never inf, which is not JSON) when --skip-baseline left it unmeasured.
  const double baseline_per_sec = baseline_seconds > 0 ? spans / baseline_seconds : 0;
  const double ratio = baseline_per_sec > 0 ? spans_per_sec / baseline_per_sec : 0;
  const double bytes_per_span = static_cast<double>(span_disk.bytes) / spans;
  fmt::print("{:<34} {:>14} {:>10} {:>10}\n", "phase", "rows/s", "batches", "B/row");
  fmt::print("{:<34} {:>14.0f} {:>10} {:>10.2f}\n", "strata writer: spans (durable)", spans_per_sec,
             span_disk.batches, bytes_per_span);
  fmt::print("{:<34} {:>14.0f} {:>10} {:>10}\n", "duckdb baseline: spans (same rows)",
             baseline_per_sec, span_disk.batches, "");
  fmt::print("{:<34} {:>14.0f} {:>10} {:>10.2f}\n", "strata writer: logs (durable)",
             log_rows / log_seconds, log_disk.batches,
             static_cast<double>(log_disk.bytes) / log_rows);
  fmt::print("{:<34} {:>14.0f}\n", "strata writer: metric points", points / metric_seconds);
  // CPU of the whole process (writer threads and the driving clients)
  // while spans were written, and the share of the machine's cores it kept
  // busy: below 100% the writer waited (on fsync, or on the clients).
  const unsigned cores = std::max(1u, std::thread::hardware_concurrency());
  fmt::print("span phase: CPU {:.2f} s per million spans, {:.0f}% of {} cores\n",
             span_cpu * 1e6 / static_cast<double>(spans), 100 * span_cpu / (span_seconds * cores),
             cores);
  fmt::print("span phase: {} commits, {:.1f} requests per batch, mean commit {:.1f} ms\n",
             span_stats.commit_calls,
             static_cast<double>(span_stats.requests_ok) /
                 std::max<uint64_t>(1, span_stats.batches_committed),
             1000 * span_stats.commit_latency.sum_seconds /
                 std::max<uint64_t>(1, span_stats.commit_latency.count));
  fmt::print(
      "peak RSS while writing spans {:.0f} MiB (RSS before: {:.0f} MiB, which holds the "
      "pre-generated requests)\n",
      peak_rss, rss_before);
  fmt::print(
      "{{\"spans\":{},\"spans_per_sec\":{:.0f},\"duckdb_baseline_spans_per_sec\":{:.0f},"
      "\"ratio\":{:.2f},\"bytes_per_span\":{:.2f},\"logs_per_sec\":{:.0f},"
      "\"metric_points_per_sec\":{:.0f},\"span_batches\":{},\"peak_rss_mb\":{:.0f},"
      "\"rss_before_mb\":{:.0f}}}\n",
      spans, spans_per_sec, baseline_per_sec, ratio, bytes_per_span, log_rows / log_seconds,
      points / metric_seconds, span_disk.batches, peak_rss, rss_before);
  return 0;
}

}  // namespace strata::bench
