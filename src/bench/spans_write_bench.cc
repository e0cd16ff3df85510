// spans_write_bench: single-threaded CPU cost and size of WriteSpansTable
// (spans.parquet) on the traffic `strata bench writer` sends: requests of
// 512 spans from src/workload/, grouped into files of --file-spans spans
// (about what one group commit writes). It writes every file --repeat
// times and prints CPU per span, bytes per span, the bytes of each column
// chunk, and an FNV-1a digest of the files so a change meant to keep the
// bytes identical can be checked (db_bench style: a table, then one JSON
// line). Quick enough to run under `valgrind --tool=callgrind` with
// --spans 50000.
//
// Usage: spans_write_bench [--spans=N] [--file-spans=N] [--request-spans=N]
//                          [--repeat=N] [--zstd-level=N] [--fast-zstd-level=N]
//                          [--page-bytes=N] [--page-rows=N] [--columns]
// --zstd-level and --fast-zstd-level set TableOptions' two levels (the
// columns spans.parquet compresses harder, and the rest).

#include <sys/resource.h>
#include <time.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "bench/bench_util.h"
#include "otlp/batch.h"
#include "parquet/file_reader.h"
#include "storage/table/spans_table.h"
#include "storage/table/table_file.h"
#include "workload/traffic_generator.h"

namespace strata {
namespace {

struct Options {
  uint64_t spans = 200000;
  uint64_t file_spans = 54000;
  int request_spans = 512;
  int repeat = 1;
  int zstd_level = storage::TableOptions().zstd_level;
  int fast_zstd_level = storage::TableOptions().fast_zstd_level;
  uint64_t page_bytes = storage::TableOptions().spans_page_bytes;
  uint64_t page_rows = storage::TableOptions().spans_page_rows;
  bool columns = false;
};

// Minor page faults of this thread so far (fresh pages the writer touched).
uint64_t ThreadMinorFaults() {
  rusage usage{};
  getrusage(RUSAGE_THREAD, &usage);
  return static_cast<uint64_t>(usage.ru_minflt);
}

int Run(const Options& options) {
  workload::TrafficGenerator generator(workload::TrafficOptions{});
  std::vector<std::unique_ptr<otlp::TraceBatch>> requests;
  while (generator.spans_generated() < options.spans) {
    requests.push_back(generator.Traces(options.request_spans));
  }
  std::vector<std::vector<const otlp::TraceBatch*>> files(1);
  uint64_t in_file = 0;
  for (const auto& r : requests) {
    if (in_file >= options.file_spans) {
      files.emplace_back();
      in_file = 0;
    }
    files.back().push_back(r.get());
    in_file += r->spans.size();
  }
  const uint64_t spans = generator.spans_generated();

  storage::TableOptions table_options;
  table_options.zstd_level = options.zstd_level;
  table_options.fast_zstd_level = options.fast_zstd_level;
  table_options.spans_page_bytes = options.page_bytes;
  table_options.page_rows = options.page_rows;
  table_options.spans_page_rows = options.page_rows;
  std::vector<std::string> written;
  const double cpu_start = bench::CpuSeconds(CLOCK_THREAD_CPUTIME_ID);
  const uint64_t faults_start = ThreadMinorFaults();
  for (int round = 0; round < options.repeat; ++round) {
    written.clear();
    for (const auto& inputs : files) {
      absl::StatusOr<storage::SpansTable> table =
          storage::WriteSpansTable(inputs, "20261130T000000Z-0000000001-bench", table_options);
      if (!table.ok()) {
        std::fprintf(stderr, "WriteSpansTable: %s\n", table.status().ToString().c_str());
        return 1;
      }
      written.push_back(std::move(table->file));
    }
  }
  const double cpu = (bench::CpuSeconds(CLOCK_THREAD_CPUTIME_ID) - cpu_start) / options.repeat;
  const double faults = static_cast<double>(ThreadMinorFaults() - faults_start) / options.repeat;
  uint64_t bytes = 0, digest = bench::kFnv1aOffsetBasis;
  for (const std::string& f : written) {
    bytes += f.size();
    digest = bench::Fnv1a(f, digest);
  }

  if (options.columns) {
    std::map<std::string, int64_t> column_bytes;
    for (const std::string& f : written) {
      parquet::StringSource source(f);
      auto reader = parquet::FileReader::Open(&source);
      if (!reader.ok()) {
        std::fprintf(stderr, "read back: %s\n", reader.status().ToString().c_str());
        return 1;
      }
      for (const parquet::RowGroup& group : (*reader)->metadata().row_groups) {
        for (size_t c = 0; c < group.columns.size(); ++c) {
          column_bytes[storage::SpansTableColumns()[c].name] +=
              group.columns[c].meta_data->total_compressed_size;
        }
      }
    }
    std::vector<std::pair<int64_t, std::string>> by_size;
    for (const auto& [name, n] : column_bytes) by_size.emplace_back(n, name);
    std::sort(by_size.rbegin(), by_size.rend());
    std::printf("%-40s %10s\n", "column", "B/span");
    for (const auto& [n, name] : by_size) {
      std::printf("%-40s %10.3f\n", name.c_str(),
                  static_cast<double>(n) / static_cast<double>(spans));
    }
  }
  std::printf("%llu spans in %zu files of ~%llu (requests of %d), zstd %d / %d\n",
              static_cast<unsigned long long>(spans), written.size(),
              static_cast<unsigned long long>(options.file_spans), options.request_spans,
              options.zstd_level, options.fast_zstd_level);
  std::printf(
      "CPU %.3f s, %.3f us/span, %.0f spans/CPU-s; %.3f bytes/span; %.0f minor faults "
      "(%.3f per span)\n",
      cpu, 1e6 * cpu / static_cast<double>(spans), static_cast<double>(spans) / cpu,
      static_cast<double>(bytes) / static_cast<double>(spans), faults,
      faults / static_cast<double>(spans));
  std::printf(
      "{\"spans\":%llu,\"cpu_us_per_span\":%.3f,\"bytes_per_span\":%.3f,\"bytes\":%llu,"
      "\"digest\":\"%016llx\"}\n",
      static_cast<unsigned long long>(spans), 1e6 * cpu / static_cast<double>(spans),
      static_cast<double>(bytes) / static_cast<double>(spans),
      static_cast<unsigned long long>(bytes), static_cast<unsigned long long>(digest));
  return 0;
}

}  // namespace
}  // namespace strata

int main(int argc, char** argv) {
  strata::Options options;
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg = argv[i];
    uint64_t v = 0;
    if (strata::bench::ParseFlag(arg, "--spans", &v)) {
      options.spans = v;
    } else if (strata::bench::ParseFlag(arg, "--file-spans", &v)) {
      options.file_spans = std::max<uint64_t>(1, v);
    } else if (strata::bench::ParseFlag(arg, "--request-spans", &v)) {
      options.request_spans = static_cast<int>(std::max<uint64_t>(1, v));
    } else if (strata::bench::ParseFlag(arg, "--repeat", &v)) {
      options.repeat = static_cast<int>(std::max<uint64_t>(1, v));
    } else if (strata::bench::ParseFlag(arg, "--zstd-level", &v)) {
      options.zstd_level = static_cast<int>(v);
    } else if (arg.starts_with("--fast-zstd-level=")) {
      options.fast_zstd_level = std::atoi(std::string(arg.substr(18)).c_str());
    } else if (strata::bench::ParseFlag(arg, "--page-bytes", &v)) {
      options.page_bytes = std::max<uint64_t>(1, v);
    } else if (strata::bench::ParseFlag(arg, "--page-rows", &v)) {
      options.page_rows = std::max<uint64_t>(1, v);
    } else if (arg == "--columns") {
      options.columns = true;
    } else {
      std::fprintf(stderr,
                   "usage: spans_write_bench [--spans=N] [--file-spans=N] [--request-spans=N] "
                   "[--repeat=N] [--zstd-level=N] [--fast-zstd-level=N] [--page-bytes=N] "
                   "[--page-rows=N] [--columns]\n");
      return 2;
    }
  }
  return strata::Run(options);
}
