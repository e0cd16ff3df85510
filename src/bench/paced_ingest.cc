#include "bench/paced_ingest.h"

#include <algorithm>
#include <atomic>
#include <memory>
#include <thread>

#include "bench/bench_common.h"
#include "spdlog/spdlog.h"
#include "workload/traffic_generator.h"

namespace strata::bench {
namespace {

// The request mix: of every kMixRequests requests, kMixTraces carry spans
// and kMixLogs log records; the rest carry metric data points.
constexpr int kMixRequests = 27;
constexpr int kMixTraces = 20;
constexpr int kMixLogs = 5;

struct Generated {
  storage::WriteRequest request;
  uint64_t spans = 0, logs = 0, points = 0;
};

Generated Generate(workload::TrafficGenerator& generator, uint64_t index, int rows) {
  Generated g;
  storage::WriteRequest& r = g.request;
  const int kind = static_cast<int>(index % kMixRequests);
  if (kind < kMixTraces) {
    r.traces = generator.Traces(rows);
    g.spans = r.traces->spans.size();
    r.rows = g.spans;
    r.bytes = g.spans * 400;  // about the OTLP protobuf size of a generated span
  } else if (kind < kMixTraces + kMixLogs) {
    r.logs = generator.Logs(rows);
    g.logs = r.logs->logs.size();
    r.rows = g.logs;
    r.bytes = g.logs * 250;
  } else {
    r.metrics = generator.Metrics(rows);
    g.points = r.metrics->point_count();
    r.rows = g.points;
    r.bytes = g.points * 250;
  }
  return g;
}

}  // namespace

PacedIngestResult RunPacedIngest(storage::Storage& storage, const PacedIngestOptions& options) {
  const int clients = std::max(1, options.clients);
  const int rows = std::max(1, options.request_rows);
  // Seconds between two requests of one client (0: unpaced).
  const double requests_per_sec =
      options.spans_per_sec / rows * kMixRequests / static_cast<double>(kMixTraces);
  const double interval = options.spans_per_sec > 0 ? clients / requests_per_sec : 0;
  const BenchClock::time_point start = options.start.value_or(BenchClock::now());
  const BenchClock::time_point end =
      start + std::chrono::duration_cast<BenchClock::duration>(options.duration);
  const uint64_t first_time = UnixNanosNow();

  std::vector<PacedIngestResult> per_client(clients);
  std::atomic<bool> logged_failure{false};
  std::vector<std::thread> threads;
  for (int c = 0; c < clients; ++c) {
    threads.emplace_back([&, c] {
      PacedIngestResult& out = per_client[c];
      workload::TrafficGenerator generator(workload::TrafficOptions{
          .seed = options.seed * 1'000'003 + static_cast<uint64_t>(c),
          .start_time_unix_nano = first_time,
      });
      for (uint64_t k = 0;; ++k) {
        Generated next = Generate(generator, k * clients + c, rows);
        BenchClock::time_point due = BenchClock::now();
        if (interval > 0) {
          due = start +
                std::chrono::duration_cast<BenchClock::duration>(std::chrono::duration<double>(
                    (static_cast<double>(c) / clients + static_cast<double>(k)) * interval));
          if (due >= end) break;
          std::this_thread::sleep_until(due);
        }
        const BenchClock::time_point sent = BenchClock::now();
        if (sent >= end || (options.stop && options.stop())) break;
        if (interval > 0 && sent - due > std::chrono::milliseconds(1)) ++out.late;
        const absl::Status status = storage.Write(std::move(next.request));
        const BenchClock::time_point answered = BenchClock::now();
        if (status.ok()) {
          out.samples.push_back(
              {.start_sec = std::chrono::duration<double>(sent - start).count(),
               .latency_sec = std::chrono::duration<double>(answered - sent).count()});
          out.spans += next.spans;
          out.logs += next.logs;
          out.points += next.points;
        } else if (absl::IsResourceExhausted(status)) {
          ++out.refused;
        } else {
          ++out.failed;
          if (!logged_failure.exchange(true)) {
            spdlog::error("bench: an ingest request failed: {}", status.ToString());
          }
        }
      }
    });
  }
  for (std::thread& t : threads) t.join();

  PacedIngestResult result;
  result.seconds = SecondsSince(start);
  for (PacedIngestResult& r : per_client) {
    result.samples.insert(result.samples.end(), r.samples.begin(), r.samples.end());
    result.spans += r.spans;
    result.logs += r.logs;
    result.points += r.points;
    result.refused += r.refused;
    result.failed += r.failed;
    result.late += r.late;
  }
  return result;
}

}  // namespace strata::bench
