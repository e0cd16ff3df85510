#include "bench/bench_ingest.h"

#include <sys/resource.h>

#include <algorithm>
#include <atomic>
#include <memory>
#include <thread>
#include <vector>

#include "bench/bench_common.h"
#include "workload/loadgen.h"
#include "fmt/format.h"
#include "io/posix_file_system.h"
#include "otlp/decode.h"
#include "server/grpc_adapter.h"
#include "server/http_adapter.h"
#include "server/ingest_metrics.h"
#include "server/ingest_service.h"
#include "spdlog/spdlog.h"
#include "storage/storage.h"

namespace strata::bench {
namespace {

using workload::BuildPayloads;
using workload::LoadgenOptions;
using workload::LoadgenReport;
using workload::NewClient;
using workload::Payload;
using workload::RunLoad;

constexpr std::string_view kBenchToken = "strata_bench";

double CpuSeconds() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  auto seconds = [](const timeval& tv) { return tv.tv_sec + tv.tv_usec / 1e6; };
  return seconds(usage.ru_utime) + seconds(usage.ru_stime);
}

struct Phase {
  LoadgenReport report;
  double cpu_sec = 0;
};

absl::StatusOr<Phase> RunPhase(const LoadgenOptions& options, const std::vector<Payload>& payloads) {
  absl::StatusOr<std::unique_ptr<server::OtlpClient>> client = NewClient(options);
  if (!client.ok()) return client.status();
  const double cpu_before = CpuSeconds();
  absl::StatusOr<LoadgenReport> report = RunLoad(options, payloads, **client);
  if (!report.ok()) return report.status();
  Phase phase{.report = std::move(*report), .cpu_sec = CpuSeconds() - cpu_before};
  client->reset();
  return phase;
}

void PrintPhase(std::string_view name, const Phase& phase) {
  std::string errors;
  for (const auto& [code, count] : phase.report.errors) {
    errors += fmt::format(" {}={}", code, count);
  }
  fmt::print("{:<28} {:>10.0f} spans/s  p50 {:>7.2f} ms  p99 {:>7.2f} ms  cpu {:>6.2f} s{}\n",
             name, phase.report.spans_per_sec(), phase.report.p50_ms, phase.report.p99_ms,
             phase.cpu_sec, errors.empty() ? "" : "  errors:" + errors);
}

// The writer alone: `requests` of the payloads, decoded (untimed work is
// not separated out: decoding is part of what a listener does too) and
// written through Storage::Write from `clients` threads. Spans/s, or -1.
double WriterOnly(storage::Storage& storage, const std::vector<Payload>& payloads,
                  size_t requests, int clients) {
  uint64_t spans = 0;
  for (size_t i = 0; i < requests; ++i) spans += payloads[i % payloads.size()].rows;
  const double seconds = Drive(storage, clients, requests, [&](size_t i) {
    const Payload& payload = payloads[i % payloads.size()];
    storage::WriteRequest request;
    request.traces = std::make_unique<otlp::TraceBatch>();
    request.traces->Retain(payload.bytes);
    if (!otlp::DecodeTracesProto(*payload.bytes, request.traces.get()).ok()) return request;
    request.rows = request.traces->spans.size();
    request.bytes = request.traces->RetainedBytes();  // as IngestService charges it
    return request;
  });
  return seconds > 0 ? static_cast<double>(spans) / seconds : -1;
}

}  // namespace

int RunBenchIngest(const BenchIngestOptions& options) {
  PosixFileSystem fs;
  const std::string dir = options.data_dir.empty() ? "strata-bench-data" : options.data_dir;
  if (auto exists = fs.Exists(dir); exists.ok() && *exists && options.data_dir.empty()) {
    (void)fs.RemoveAll(dir);
  }
  (void)server::RaiseOpenFileLimit(65'536);
  auto storage = storage::Storage::Open(fs, dir + "/data");
  if (!storage.ok()) {
    spdlog::error("bench ingest: {}", storage.status().ToString());
    return 1;
  }
  server::IngestMetrics metrics;
  server::IngestService ingest(
      **storage,
      [](std::string_view token) {
        return token == kBenchToken ? absl::OkStatus()
                                    : absl::UnauthenticatedError("unknown or revoked token");
      },
      metrics, {});
  auto grpc = server::GrpcServer::Start(ingest, {.address = "127.0.0.1:0"});
  server::OtlpHttpOptions http_options;
  http_options.http.address = "127.0.0.1:0";
  auto http = server::StartOtlpHttpServer(std::move(http_options), ingest);
  if (!grpc.ok() || !http.ok()) {
    spdlog::error("bench ingest: cannot listen: {} {}", grpc.status().ToString(),
                  http.status().ToString());
    return 1;
  }

  LoadgenOptions load{
      .protocol = "grpc",
      .target = fmt::format("127.0.0.1:{}", (*grpc)->port()),
      .token = std::string(kBenchToken),
      .signals = "traces",
      .request_spans = options.request_spans,
      .duration_sec = options.phase_sec,
      .concurrency = options.concurrency,
      .connections = options.connections,
      .payloads = 32,
      .seed = options.seed,
      .quiet = true,
  };
  const BenchClock::time_point gen_start = BenchClock::now();
  absl::StatusOr<std::vector<Payload>> payloads = BuildPayloads(load);
  if (!payloads.ok()) {
    spdlog::error("bench ingest: {}", payloads.status().ToString());
    return 1;
  }
  fmt::print("{} payloads of {} spans pre-encoded in {:.1f} s (not timed)\n", payloads->size(),
             options.request_spans, SecondsSince(gen_start));
  ResetPeakRss();

  absl::StatusOr<Phase> grpc_full = RunPhase(load, *payloads);
  LoadgenOptions http_load = load;
  http_load.protocol = "http/protobuf";
  http_load.target = (*http)->address();
  // HTTP/1.1 carries one request per connection at a time.
  http_load.connections = options.concurrency;
  absl::StatusOr<Phase> http_full =
      grpc_full.ok() ? RunPhase(http_load, *payloads) : grpc_full.status();
  if (!grpc_full.ok() || !http_full.ok()) {
    spdlog::error("bench ingest: {}", http_full.status().ToString());
    return 1;
  }
  PrintPhase("gRPC, full speed", *grpc_full);
  PrintPhase("HTTP/protobuf, full speed", *http_full);
  LoadgenOptions paced = load;
  paced.rate_spans_per_sec = std::max(1.0, grpc_full->report.spans_per_sec() / 2);
  absl::StatusOr<Phase> half = RunPhase(paced, *payloads);
  if (!half.ok()) {
    spdlog::error("bench ingest: {}", half.status().ToString());
    return 1;
  }
  PrintPhase(fmt::format("gRPC at {:.0f} spans/s", paced.rate_spans_per_sec), *half);
  // As many requests as the full-speed gRPC phase had acknowledged.
  const double writer_only = WriterOnly(**storage, *payloads, grpc_full->report.requests_ok,
                                        options.concurrency);
  fmt::print("{:<28} {:>10.0f} spans/s  (the same requests through Storage::Write)\n",
             "writer only", writer_only);
  const double peak_rss = ProcStatusMiB("VmHWM:");

  // Overload: far more in flight than the budget admits; the server must
  // shed with 429 while its memory stays flat.
  double rss_early = 0, rss_late = 0, rss_max = 0;
  uint64_t overload_429 = 0, overload_ok = 0;
  if (options.overload_sec > 0) {
    LoadgenOptions flood = http_load;
    flood.duration_sec = options.overload_sec;
    flood.concurrency = options.overload_concurrency;
    flood.connections = std::min(options.overload_concurrency, 1024);
    std::atomic<bool> done{false};
    std::thread sampler([&] {
      const BenchClock::time_point start = BenchClock::now();
      while (!done) {
        const double rss = ProcStatusMiB("VmRSS:");
        const double t = SecondsSince(start);
        rss_max = std::max(rss_max, rss);
        if (t < options.overload_sec * 0.2) rss_early = std::max(rss_early, rss);
        if (t > options.overload_sec * 0.8) rss_late = std::max(rss_late, rss);
        std::this_thread::sleep_for(std::chrono::milliseconds(250));
      }
    });
    absl::StatusOr<Phase> overload = RunPhase(flood, *payloads);
    done = true;
    sampler.join();
    if (!overload.ok()) {
      spdlog::error("bench ingest: {}", overload.status().ToString());
      return 1;
    }
    PrintPhase("HTTP overload", *overload);
    overload_ok = overload->report.requests_ok;
    auto it = overload->report.errors.find("RESOURCE_EXHAUSTED");
    overload_429 = it == overload->report.errors.end() ? 0 : it->second;
    fmt::print("overload: {} acknowledged, {} answered 429; RSS max {:.0f} MiB in the first 20%, "
               "{:.0f} MiB in the last 20%, {:.0f} MiB overall\n",
               overload_ok, overload_429, rss_early, rss_late, rss_max);
  }

  (*http)->Shutdown(std::chrono::seconds(5));
  (*grpc)->Shutdown(std::chrono::seconds(5));
  (*storage)->Shutdown(std::chrono::seconds(10));
  storage->reset();
  if (!options.keep) (void)fs.RemoveAll(dir);

  const double spans_total = static_cast<double>(grpc_full->report.acked(server::Signal::kTraces));
  const double cpu_per_million = spans_total > 0 ? grpc_full->cpu_sec / (spans_total / 1e6) : 0;
  fmt::print(
      "{{\"grpc_spans_per_sec\":{:.0f},\"http_spans_per_sec\":{:.0f},\"p50_ms\":{:.3f},"
      "\"p99_ms\":{:.3f},\"latency_rate_spans_per_sec\":{:.0f},\"cpu_sec_per_million_spans\":{:.2f},"
      "\"peak_rss_mb\":{:.0f},\"writer_only_spans_per_sec\":{:.0f},\"overload_sec\":{},"
      "\"overload_429\":{},\"overload_ok\":{},\"overload_rss_early_mb\":{:.0f},"
      "\"overload_rss_late_mb\":{:.0f}}}\n",
      grpc_full->report.spans_per_sec(), http_full->report.spans_per_sec(), half->report.p50_ms,
      half->report.p99_ms, paced.rate_spans_per_sec, cpu_per_million, peak_rss, writer_only,
      options.overload_sec, overload_429, overload_ok, rss_early, rss_late);
  return 0;
}


}  // namespace strata::bench
