#include "workload/loadgen.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <thread>

#include "absl/status/status.h"
#include "absl/strings/str_split.h"
#include "common/mutex.h"
#include "fmt/format.h"
#include "otlp/encode.h"
#include "server/gzip.h"
#include "spdlog/spdlog.h"
#include "workload/traffic_generator.h"

namespace strata::workload {
namespace {

using Clock = std::chrono::steady_clock;
using server::Signal;

bool IsGrpc(const LoadgenOptions& options) { return options.protocol == "grpc"; }

absl::StatusOr<std::vector<Signal>> ParseSignals(const std::string& text) {
  std::vector<Signal> signals;
  for (absl::string_view part : absl::StrSplit(text, ',', absl::SkipEmpty())) {
    if (part == "traces") {
      signals.push_back(Signal::kTraces);
    } else if (part == "logs") {
      signals.push_back(Signal::kLogs);
    } else if (part == "metrics") {
      signals.push_back(Signal::kMetrics);
    } else {
      return absl::InvalidArgumentError(
          fmt::format("--signals: unknown signal \"{}\" (traces, logs, metrics)", std::string(part)));
    }
  }
  if (signals.empty()) return absl::InvalidArgumentError("--signals names no signal");
  return signals;
}

// Appends acknowledged payloads to the record file: per request a header
// line "<signal> <rows> <bytes>\n" followed by the payload bytes and "\n".
class Recorder {
 public:
  explicit Recorder(std::FILE* file) : file_(file) {}
  ~Recorder() {
    if (file_ != nullptr) std::fclose(file_);
  }
  void Record(const Payload& payload, const std::string& plain) {
    MutexLock lock(&mu_);
    std::fprintf(file_, "%s %llu %zu\n", std::string(server::SignalName(payload.signal)).c_str(),
                 static_cast<unsigned long long>(payload.rows), plain.size());
    std::fwrite(plain.data(), 1, plain.size(), file_);
    std::fputc('\n', file_);
    std::fflush(file_);
  }

 private:
  Mutex mu_;
  std::FILE* file_;
};

double Percentile(std::vector<double>& sorted, double q) {
  if (sorted.empty()) return 0;
  const size_t index = std::min(sorted.size() - 1, static_cast<size_t>(q * sorted.size()));
  return sorted[index];
}

}  // namespace

std::string LoadgenReport::ToJson() const {
  std::string errors_json;
  for (const auto& [code, count] : errors) {
    errors_json += fmt::format("{}\"{}\":{}", errors_json.empty() ? "" : ",", code, count);
  }
  return fmt::format(
      "{{\"elapsed_sec\":{:.3f},\"requests_sent\":{},\"requests_ok\":{},\"spans\":{},\"logs\":{},"
      "\"metric_points\":{},\"spans_per_sec\":{:.0f},\"p50_ms\":{:.3f},\"p90_ms\":{:.3f},"
      "\"p99_ms\":{:.3f},\"max_ms\":{:.3f},\"errors\":{{{}}}}}",
      elapsed_sec, requests_sent, requests_ok, acked(Signal::kTraces), acked(Signal::kLogs),
      acked(Signal::kMetrics), spans_per_sec(), p50_ms, p90_ms, p99_ms, max_ms, errors_json);
}

absl::StatusOr<std::vector<Payload>> BuildPayloads(const LoadgenOptions& options) {
  absl::StatusOr<std::vector<Signal>> signals = ParseSignals(options.signals);
  if (!signals.ok()) return signals.status();
  if (options.request_spans <= 0) return absl::InvalidArgumentError("--request-spans must be > 0");
  const bool json = options.protocol == "http/json";
  const bool compress = options.gzip && !IsGrpc(options);
  const uint64_t now_ns = static_cast<uint64_t>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(
          std::chrono::system_clock::now().time_since_epoch())
          .count());
  workload::TrafficGenerator generator(
      workload::TrafficOptions{.seed = options.seed, .start_time_unix_nano = now_ns});
  // With a record file every request is distinct; otherwise a pool per
  // signal is cycled.
  const uint64_t rounds = !options.record_path.empty()
                              ? std::max<uint64_t>(1, options.max_requests / signals->size() + 1)
                              : static_cast<uint64_t>(std::max(1, options.payloads));
  std::vector<Payload> payloads;
  for (uint64_t round = 0; round < rounds; ++round) {
    for (Signal signal : *signals) {
      Payload payload{.signal = signal};
      std::string bytes;
      switch (signal) {
        case Signal::kTraces: {
          auto batch = generator.Traces(options.request_spans);
          payload.rows = batch->spans.size();
          bytes = json ? otlp::EncodeTracesJson(*batch) : otlp::EncodeTracesProto(*batch);
          break;
        }
        case Signal::kLogs: {
          auto batch = generator.Logs(std::max(1, options.request_spans / 2));
          payload.rows = batch->logs.size();
          bytes = json ? otlp::EncodeLogsJson(*batch) : otlp::EncodeLogsProto(*batch);
          break;
        }
        case Signal::kMetrics: {
          auto batch = generator.Metrics(std::max(1, options.request_spans / 4));
          payload.rows = batch->point_count();
          bytes = json ? otlp::EncodeMetricsJson(*batch) : otlp::EncodeMetricsProto(*batch);
          break;
        }
      }
      if (compress) bytes = server::Gzip(bytes, 6);
      payload.bytes = std::make_shared<const std::string>(std::move(bytes));
      payloads.push_back(std::move(payload));
    }
  }
  return payloads;
}

absl::StatusOr<std::unique_ptr<server::OtlpClient>> NewClient(const LoadgenOptions& options) {
  server::OtlpClientOptions client{
      .target = options.target,
      .token = options.token,
      .encoding = options.protocol == "http/json" ? server::Encoding::kJson
                                                  : server::Encoding::kProtobuf,
      .gzip = options.gzip,
      .connections = options.connections,
      .threads = options.client_threads,
  };
  if (IsGrpc(options)) {
    if (client.target.empty()) client.target = "127.0.0.1:4317";
    return server::NewGrpcClient(client);
  }
  if (options.protocol != "http/protobuf" && options.protocol != "http/json") {
    return absl::InvalidArgumentError(fmt::format(
        "--protocol: \"{}\" is not one of grpc, http/protobuf, http/json", options.protocol));
  }
  if (client.target.empty()) client.target = "127.0.0.1:4318";
  return server::NewHttpClient(client);
}

absl::StatusOr<LoadgenReport> RunLoad(const LoadgenOptions& options,
                                      const std::vector<Payload>& payloads,
                                      server::OtlpClient& client) {
  std::unique_ptr<Recorder> recorder;
  if (!options.record_path.empty()) {
    std::FILE* file = std::fopen(options.record_path.c_str(), "wb");
    if (file == nullptr) {
      return absl::UnavailableError(
          fmt::format("cannot create the record file {}", options.record_path));
    }
    recorder = std::make_unique<Recorder>(file);
  }
  const bool cycle = recorder == nullptr;

  Mutex mu;
  CondVar changed;
  int inflight = 0;
  LoadgenReport report;
  std::vector<double> latencies_ms;

  const Clock::time_point start = Clock::now();
  const Clock::time_point end =
      start + std::chrono::duration_cast<Clock::duration>(
                  std::chrono::duration<double>(std::max(0.0, options.duration_sec)));
  uint64_t spans_sent = 0;
  for (size_t i = 0; !payloads.empty(); ++i) {
    if (!cycle && i >= payloads.size()) break;
    if (options.max_requests > 0 && report.requests_sent >= options.max_requests) break;
    const Payload& payload = payloads[i % payloads.size()];
    if (options.rate_spans_per_sec > 0) {
      // Pace on spans: the next request leaves when the spans already sent
      // are due at the target rate.
      const Clock::time_point due =
          start + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(
                      static_cast<double>(spans_sent) / options.rate_spans_per_sec));
      if (due > end) break;
      std::this_thread::sleep_until(due);
    }
    {
      MutexLock lock(&mu);
      while (inflight >= options.concurrency && Clock::now() < end) {
        changed.WaitFor(&mu, std::chrono::milliseconds(50));
      }
      if (Clock::now() >= end) break;
      ++inflight;
      ++report.requests_sent;
    }
    if (payload.signal == Signal::kTraces) spans_sent += payload.rows;
    const Clock::time_point sent = Clock::now();
    client.Export(payload.signal, payload.bytes,
                  [&, sent, payload_ptr = &payload](server::ExportReply reply) {
                    const double ms =
                        std::chrono::duration<double, std::milli>(Clock::now() - sent).count();
                    if (reply.status.ok() && recorder != nullptr) {
                      recorder->Record(*payload_ptr, *payload_ptr->bytes);
                    }
                    MutexLock lock(&mu);
                    latencies_ms.push_back(ms);
                    if (reply.status.ok()) {
                      ++report.requests_ok;
                      report.acked_rows[payload_ptr->signal] += payload_ptr->rows;
                    } else {
                      ++report.errors[absl::StatusCodeToString(reply.status.code())];
                    }
                    --inflight;
                    changed.SignalAll();
                  });
  }
  {
    MutexLock lock(&mu);
    while (inflight > 0) changed.Wait(&mu);
  }
  report.elapsed_sec = std::chrono::duration<double>(Clock::now() - start).count();
  std::sort(latencies_ms.begin(), latencies_ms.end());
  report.p50_ms = Percentile(latencies_ms, 0.50);
  report.p90_ms = Percentile(latencies_ms, 0.90);
  report.p99_ms = Percentile(latencies_ms, 0.99);
  report.max_ms = latencies_ms.empty() ? 0 : latencies_ms.back();
  return report;
}

int RunLoadgen(const LoadgenOptions& options) {
  if (!options.record_path.empty() && options.gzip && !IsGrpc(options)) {
    spdlog::error("strata loadgen: --record needs uncompressed payloads; drop --gzip");
    return 2;
  }
  if (!options.record_path.empty() && options.max_requests == 0) {
    spdlog::error("strata loadgen: --record needs --max-requests (every payload is sent once)");
    return 2;
  }
  absl::StatusOr<std::unique_ptr<server::OtlpClient>> client = NewClient(options);
  if (!client.ok()) {
    spdlog::error("strata loadgen: {}", client.status().ToString());
    return 2;
  }
  absl::StatusOr<std::vector<Payload>> payloads = BuildPayloads(options);
  if (!payloads.ok()) {
    spdlog::error("strata loadgen: {}", payloads.status().ToString());
    return 2;
  }
  if (!options.quiet) {
    spdlog::info("strata loadgen: {} payloads ready; sending for {} s over {}", payloads->size(),
                 options.duration_sec, options.protocol);
  }
  absl::StatusOr<LoadgenReport> report = RunLoad(options, *payloads, **client);
  client->reset();
  if (!report.ok()) {
    spdlog::error("strata loadgen: {}", report.status().ToString());
    return 1;
  }
  if (!options.quiet) {
    spdlog::info("strata loadgen: {} of {} requests acknowledged; {:.0f} spans/s; p50 {:.2f} ms, "
                 "p99 {:.2f} ms",
                 report->requests_ok, report->requests_sent, report->spans_per_sec(),
                 report->p50_ms, report->p99_ms);
  }
  std::printf("%s\n", report->ToJson().c_str());
  std::fflush(stdout);
  return report->requests_ok > 0 ? 0 : 1;
}


}  // namespace strata::workload
