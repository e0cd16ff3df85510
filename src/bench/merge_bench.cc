// merge_bench: compaction's logs and metrics merges (MergeLogsTables,
// MergeMetricsTables, src/storage/table_merge.h) on the traffic of
// src/workload/: --inputs ingest files of --input-rows log records (and as
// many metric data points), each written by WriteLogsTable /
// WriteMetricsTable from requests of 512 rows, are merged twice per table:
//
//   ingest    all the ingest files into one (each input sorted in runs in a
//             scratch directory, then a k-way merge);
//   sorted    the two halves merged first (untimed), then those two sorted
//             outputs into one (a k-way merge with no runs).
//
// For each it prints rows, wall and CPU seconds, rows per second, the
// merge's own count of rows held at once, an FNV-1a digest of the merged
// file (so a change meant to keep its bytes can be checked; the inputs are
// the same every run), and the process's peak RSS while
// merging (VmHWM, reset through /proc/self/clear_refs before the merge,
// after malloc_trim: the inputs are generated and written first and their
// memory returned), then one JSON line. Files live in a temporary
// directory under $TMPDIR (else /tmp), removed at exit.
//
// Usage: merge_bench [--inputs=N] [--input-rows=N] [--chunk-rows=N] [--fan-in=N]
//                    [--logs-only | --metrics-only]

#include <malloc.h>
#include <time.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "bench/bench_util.h"
#include "common/status_macros.h"
#include "fmt/format.h"
#include "io/file_system.h"
#include "io/posix_file_system.h"
#include "otlp/batch.h"
#include "parquet/file_writer.h"
#include "storage/maintenance/table_merge.h"
#include "storage/table/logs_table.h"
#include "storage/table/metrics_table.h"
#include "workload/traffic_generator.h"

namespace strata {
namespace {

struct Options {
  uint64_t inputs = 8;
  uint64_t input_rows = 250000;
  uint64_t chunk_rows = storage::MergeOptions().chunk_rows;
  uint64_t fan_in = storage::MergeOptions().fan_in;
  bool logs = true;
  bool metrics = true;
};

// A "VmHWM:" / "VmRSS:" line of /proc/self/status, in MiB.
double StatusMib(std::string_view field) {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.starts_with(field)) return std::strtod(line.c_str() + field.size(), nullptr) / 1024;
  }
  return -1;
}

// Resets VmHWM to the current RSS (Linux 4.0+).
void ResetPeakRss() {
  malloc_trim(0);
  std::ofstream("/proc/self/clear_refs") << "5";
}

struct Result {
  uint64_t rows = 0;
  double wall = 0;
  double cpu = 0;
  double rss_before_mib = 0;
  double rss_peak_mib = 0;
  storage::MergeStats stats;
  uint64_t bytes = 0;
  uint64_t digest = 0;  // FNV-1a of the merged file
};

using MergeFn = absl::StatusOr<storage::SignalMeta> (*)(FileSystem&,
                                                        std::span<const storage::MergeInput>,
                                                        std::string_view,
                                                        const storage::MergeOptions&,
                                                        parquet::ByteSink*);

// Merges `inputs` into `path` (batch id `id`), returning the input for the
// result and, when `result` is set, the measurements.
absl::StatusOr<storage::MergeInput> MergeTo(FileSystem& fs, MergeFn merge,
                                            std::span<const storage::MergeInput> inputs,
                                            const std::string& path, const std::string& id,
                                            const Options& options, Result* result) {
  storage::MergeStats stats;
  storage::MergeOptions merge_options;
  merge_options.chunk_rows = options.chunk_rows;
  merge_options.fan_in = static_cast<uint32_t>(options.fan_in);
  merge_options.scratch_dir = path + ".scratch";
  merge_options.stats = &stats;
  STRATA_RETURN_IF_ERROR(fs.CreateDir(merge_options.scratch_dir));
  STRATA_ASSIGN_OR_RETURN(std::unique_ptr<WritableFile> file, fs.NewWritableFile(path));
  parquet::CallbackSink sink([&file](std::string_view bytes) { return file->Append(bytes); });
  if (result != nullptr) {
    ResetPeakRss();
    result->rss_before_mib = StatusMib("VmRSS:");
  }
  const double cpu = bench::CpuSeconds(CLOCK_PROCESS_CPUTIME_ID);
  const auto start = std::chrono::steady_clock::now();
  STRATA_ASSIGN_OR_RETURN(const storage::SignalMeta meta,
                          merge(fs, inputs, id, merge_options, &sink));
  STRATA_RETURN_IF_ERROR(file->Close());
  if (result != nullptr) {
    result->wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    result->cpu = bench::CpuSeconds(CLOCK_PROCESS_CPUTIME_ID) - cpu;
    result->rss_peak_mib = StatusMib("VmHWM:");
    result->rows = meta.file_rows;
    result->stats = stats;
    STRATA_ASSIGN_OR_RETURN(result->bytes, fs.FileSize(path));
    STRATA_ASSIGN_OR_RETURN(const std::string written, fs.ReadFile(path));
    result->digest = bench::Fnv1a(written, bench::kFnv1aOffsetBasis);
  }
  STRATA_RETURN_IF_ERROR(fs.RemoveAll(merge_options.scratch_dir));
  return storage::MergeInput{path, id, meta.file_rows, ""};
}

std::string InputId(int n) { return fmt::format("20261130000000{:09}", n); }

// Writes the ingest inputs of one table; `write` turns a generator into
// one file's bytes and its file_rows.
template <typename Write>
absl::StatusOr<std::vector<storage::MergeInput>> WriteInputs(FileSystem& fs, const std::string& dir,
                                                             std::string_view table,
                                                             const Options& options, Write write) {
  workload::TrafficGenerator generator(workload::TrafficOptions{});
  std::vector<storage::MergeInput> inputs;
  for (uint64_t k = 0; k < options.inputs; ++k) {
    storage::MergeInput input;
    input.path = fmt::format("{}/{}-{}.parquet", dir, table, k);
    input.batch_id = InputId(static_cast<int>(k));
    std::string bytes;
    STRATA_RETURN_IF_ERROR(write(generator, input.batch_id, &bytes, &input.file_rows));
    STRATA_RETURN_IF_ERROR(WriteFile(fs, input.path, bytes));
    inputs.push_back(std::move(input));
  }
  return inputs;
}

void Print(std::string_view table, std::string_view kind, const Result& r) {
  std::printf(
      "%-8s %-7s %10llu rows %8.2f s wall %8.2f s CPU %10.0f rows/s  rows held %7llu  "
      "runs %4llu passes %llu  RSS %7.1f MiB before, peak %7.1f MiB  %6.2f B/row  digest %016llx\n",
      std::string(table).c_str(), std::string(kind).c_str(),
      static_cast<unsigned long long>(r.rows), r.wall, r.cpu, static_cast<double>(r.rows) / r.wall,
      static_cast<unsigned long long>(r.stats.rows_held_peak),
      static_cast<unsigned long long>(r.stats.runs_written),
      static_cast<unsigned long long>(r.stats.merge_passes), r.rss_before_mib, r.rss_peak_mib,
      static_cast<double>(r.bytes) / static_cast<double>(r.rows),
      static_cast<unsigned long long>(r.digest));
}

template <typename Write>
absl::Status BenchTable(FileSystem& fs, const std::string& dir, std::string_view table,
                        MergeFn merge, const Options& options, Write write,
                        std::vector<std::pair<std::string, Result>>* results) {
  STRATA_ASSIGN_OR_RETURN(const std::vector<storage::MergeInput> inputs,
                          WriteInputs(fs, dir, table, options, write));
  Result ingest;
  STRATA_RETURN_IF_ERROR(MergeTo(fs, merge, inputs, fmt::format("{}/{}-all.parquet", dir, table),
                                 InputId(900), options, &ingest)
                             .status());
  Print(table, "ingest", ingest);
  results->emplace_back(fmt::format("{}_ingest", table), ingest);

  const size_t half = inputs.size() / 2;
  const std::span<const storage::MergeInput> all(inputs);
  std::vector<storage::MergeInput> sorted;
  for (const auto& [part, n] : {std::pair{all.first(half), 901}, {all.subspan(half), 902}}) {
    STRATA_ASSIGN_OR_RETURN(storage::MergeInput merged,
                            MergeTo(fs, merge, part, fmt::format("{}/{}-{}.parquet", dir, table, n),
                                    InputId(n), options, nullptr));
    sorted.push_back(std::move(merged));
  }
  Result direct;
  STRATA_RETURN_IF_ERROR(MergeTo(fs, merge, sorted, fmt::format("{}/{}-sorted.parquet", dir, table),
                                 InputId(903), options, &direct)
                             .status());
  Print(table, "sorted", direct);
  results->emplace_back(fmt::format("{}_sorted", table), direct);
  return absl::OkStatus();
}

int Run(const Options& options) {
  PosixFileSystem fs;
  const char* tmp = std::getenv("TMPDIR");
  std::string dir = fmt::format("{}/strata_merge_bench_{}", tmp != nullptr && *tmp ? tmp : "/tmp",
                                static_cast<long>(getpid()));
  if (absl::Status s = fs.CreateDirs(dir); !s.ok()) {
    std::fprintf(stderr, "%s\n", s.ToString().c_str());
    return 1;
  }
  std::vector<std::pair<std::string, Result>> results;
  auto write_logs = [&](workload::TrafficGenerator& generator, const std::string& id,
                        std::string* bytes, uint64_t* file_rows) -> absl::Status {
    std::vector<std::unique_ptr<otlp::LogBatch>> requests;
    std::vector<const otlp::LogBatch*> pointers;
    for (uint64_t rows = 0; rows < options.input_rows; rows += requests.back()->logs.size()) {
      requests.push_back(generator.Logs(512));
      pointers.push_back(requests.back().get());
    }
    STRATA_ASSIGN_OR_RETURN(storage::LogsTable table, storage::WriteLogsTable(pointers, id));
    *bytes = std::move(table.file);
    *file_rows = table.meta.file_rows;
    return absl::OkStatus();
  };
  auto write_metrics = [&](workload::TrafficGenerator& generator, const std::string& id,
                           std::string* bytes, uint64_t* file_rows) -> absl::Status {
    std::vector<std::unique_ptr<otlp::MetricBatch>> requests;
    std::vector<const otlp::MetricBatch*> pointers;
    uint64_t rows = 0;
    while (rows < options.input_rows) {
      requests.push_back(generator.Metrics(512));
      pointers.push_back(requests.back().get());
      rows += requests.back()->number_points.size() + requests.back()->histogram_points.size() +
              requests.back()->exponential_points.size() + requests.back()->summary_points.size();
    }
    STRATA_ASSIGN_OR_RETURN(storage::MetricsTable table, storage::WriteMetricsTable(pointers, id));
    *bytes = std::move(table.file);
    *file_rows = table.meta.file_rows;
    return absl::OkStatus();
  };
  std::printf("%llu ingest inputs of ~%llu rows, chunk_rows %llu, fan_in %llu\n",
              static_cast<unsigned long long>(options.inputs),
              static_cast<unsigned long long>(options.input_rows),
              static_cast<unsigned long long>(options.chunk_rows),
              static_cast<unsigned long long>(options.fan_in));
  absl::Status status;
  if (options.logs) {
    status = BenchTable(fs, dir, "logs", &storage::MergeLogsTables, options, write_logs, &results);
  }
  if (status.ok() && options.metrics) {
    status = BenchTable(fs, dir, "metrics", &storage::MergeMetricsTables, options, write_metrics,
                        &results);
  }
  (void)fs.RemoveAll(dir);
  if (!status.ok()) {
    std::fprintf(stderr, "%s\n", status.ToString().c_str());
    return 1;
  }
  std::string json;
  for (const auto& [name, r] : results) {
    json += fmt::format(
        "{}\"{}_rows_per_sec\":{:.0f},\"{}_peak_rss_mb\":{:.1f},"
        "\"{}_rows_held_peak\":{},\"{}_digest\":\"{:016x}\"",
        json.empty() ? "" : ",", name, static_cast<double>(r.rows) / r.wall, name, r.rss_peak_mib,
        name, r.stats.rows_held_peak, name, r.digest);
  }
  std::printf("{%s}\n", json.c_str());
  return 0;
}

}  // namespace
}  // namespace strata

int main(int argc, char** argv) {
  strata::Options options;
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg = argv[i];
    uint64_t v = 0;
    if (strata::bench::ParseFlag(arg, "--inputs", &v)) {
      options.inputs = std::max<uint64_t>(2, v);
    } else if (strata::bench::ParseFlag(arg, "--input-rows", &v)) {
      options.input_rows = std::max<uint64_t>(1, v);
    } else if (strata::bench::ParseFlag(arg, "--chunk-rows", &v)) {
      options.chunk_rows = std::max<uint64_t>(1, v);
    } else if (strata::bench::ParseFlag(arg, "--fan-in", &v)) {
      options.fan_in = std::max<uint64_t>(2, v);
    } else if (arg == "--logs-only") {
      options.metrics = false;
    } else if (arg == "--metrics-only") {
      options.logs = false;
    } else {
      std::fprintf(stderr,
                   "usage: merge_bench [--inputs=N] [--input-rows=N] [--chunk-rows=N] "
                   "[--fan-in=N] [--logs-only | --metrics-only]\n");
      return 2;
    }
  }
  return strata::Run(options);
}
