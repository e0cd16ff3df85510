#include "bench/bench_common.h"

#include <algorithm>
#include <atomic>
#include <thread>
#include <vector>

#include "spdlog/spdlog.h"
#include "storage/maintenance/compaction.h"
#include "workload/traffic_generator.h"

namespace strata::bench {

int FailStep(std::string_view command, std::string_view step, const absl::Status& status) {
  spdlog::error("bench {}: {}: {}", command, step, status.ToString());
  return 1;
}

double QuantileMs(std::vector<double>& samples, double q) {
  if (samples.empty()) return 0;
  std::sort(samples.begin(), samples.end());
  const size_t i = std::min(samples.size() - 1, static_cast<size_t>(q * samples.size()));
  return samples[i] * 1000;
}

double Drive(storage::Storage& storage, int clients, size_t count,
             const std::function<storage::WriteRequest(size_t)>& make) {
  std::atomic<size_t> next{0};
  std::atomic<bool> failed{false};
  std::vector<std::thread> threads;
  const BenchClock::time_point start = BenchClock::now();
  for (int c = 0; c < clients; ++c) {
    threads.emplace_back([&] {
      for (size_t i = next++; i < count; i = next++) {
        absl::Status s = storage.Write(make(i));
        while (s.code() == absl::StatusCode::kResourceExhausted) {
          std::this_thread::sleep_for(std::chrono::milliseconds(1));  // a client backing off
          s = storage.Write(make(i));
        }
        if (!s.ok()) {
          spdlog::error("bench: request {} failed: {}", i, s.ToString());
          failed = true;
        }
      }
    });
  }
  for (std::thread& t : threads) t.join();
  return failed ? -1 : SecondsSince(start);
}

bool WriteBatches(storage::Storage& storage, const GeneratedBatches& data, WrittenRows* written) {
  const int batches = std::max(1, data.batches);
  const uint64_t per_batch = std::max<uint64_t>(1, data.spans / batches);
  std::atomic<uint64_t> spans{0}, logs{0}, points{0};
  const double seconds = Drive(storage, 2, batches, [&](size_t b) {
    workload::TrafficGenerator generator(workload::TrafficOptions{
        .seed = data.seed * 1'000'003 + b,
        .start_time_unix_nano = data.first_time_unix_nano + b * data.step_nanos,
        .structured_body_percent = data.structured_body_percent,
    });
    storage::WriteRequest r;
    r.traces = generator.Traces(static_cast<int>(per_batch));
    r.rows = r.traces->spans.size();
    r.bytes = r.rows * 400;  // about the OTLP protobuf size of a generated span
    const auto log_count = static_cast<int>(static_cast<double>(per_batch) * data.logs_per_span);
    if (log_count > 0) {
      r.logs = generator.Logs(log_count);
      r.rows += r.logs->logs.size();
      r.bytes += r.logs->logs.size() * 250;
    }
    const auto point_count =
        static_cast<int>(static_cast<double>(per_batch) * data.points_per_span);
    if (point_count > 0) {
      r.metrics = generator.Metrics(point_count);
      r.rows += r.metrics->point_count();
      r.bytes += r.metrics->point_count() * 250;
    }
    // Counted when built; a request that fails makes the whole build fail.
    spans += r.traces->spans.size();
    logs += r.logs != nullptr ? r.logs->logs.size() : 0;
    points += r.metrics != nullptr ? r.metrics->point_count() : 0;
    return r;
  });
  if (seconds < 0) return false;
  *written = WrittenRows{.spans = spans, .logs = logs, .points = points, .seconds = seconds};
  return true;
}

SnapshotRows CountRows(const storage::Snapshot& snapshot) {
  SnapshotRows rows;
  for (const auto& batch : snapshot.batches()) {
    const storage::BatchMeta& meta = batch->meta();
    rows.spans += meta.spans.rows;
    rows.logs += meta.logs.rows;
    rows.points += meta.metrics.rows;
    rows.bytes += storage::BatchBytes(meta);
    ++rows.batches;
  }
  return rows;
}

}  // namespace strata::bench
