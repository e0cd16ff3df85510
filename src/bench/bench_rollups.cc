#include "bench/bench_rollups.h"

#include <algorithm>
#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "api/service_health.h"
#include "api/service_health_json.h"
#include "api/service_map.h"
#include "bench/bench_common.h"
#include "fmt/format.h"
#include "io/posix_file_system.h"
#include "query/query_pool.h"
#include "query/view_files.h"
#include "rollups/duration_histogram.h"
#include "spdlog/spdlog.h"
#include "storage/storage.h"
#include "storage/table/rollups_table.h"
#include "storage/table/spans_table.h"
#include "workload/traffic_generator.h"

namespace strata::bench {
namespace {

using Clock = BenchClock;
constexpr uint64_t kIngestRequestSpans = 50'000;

std::string Cell(const std::optional<std::string>& v) { return v.value_or("NULL"); }

// Whether DuckDB's exact quantile falls in the bucket the histogram reports.
bool SameBucket(const std::optional<std::string>& exact, std::optional<int64_t> reported) {
  if (!exact.has_value() || !reported.has_value()) return !exact.has_value() && !reported;
  return rollups::DurationBucket(std::stoll(*exact)) == rollups::DurationBucket(*reported);
}

std::string Int128(__int128 v) {
  if (v == 0) return "0";
  const bool negative = v < 0;
  unsigned __int128 u = negative ? -static_cast<unsigned __int128>(v) : v;
  std::string out;
  while (u > 0) {
    out.insert(out.begin(), static_cast<char>('0' + static_cast<int>(u % 10)));
    u /= 10;
  }
  return negative ? "-" + out : out;
}

// A raw row (count, errors, sum, p50, p95, p99 from column `at` on) against
// a merged Red; logs what differs.
bool Matches(const std::vector<std::optional<std::string>>& row, size_t at, const api::Red& red,
             const std::string& what) {
  const bool ok = Cell(row[at]) == std::to_string(red.count()) &&
                  Cell(row[at + 1]) == std::to_string(red.errors()) &&
                  Cell(row[at + 2]) == (red.count() == 0 ? "NULL" : Int128(red.duration_sum())) &&
                  SameBucket(row[at + 3], red.Quantile(500)) &&
                  SameBucket(row[at + 4], red.Quantile(950)) &&
                  SameBucket(row[at + 5], red.Quantile(990));
  if (!ok) {
    spdlog::error("bench rollups: {}: DuckDB counts {} errors {} sum {}, the rollups {} {} {}",
                  what, Cell(row[at]), Cell(row[at + 1]), Cell(row[at + 2]), red.count(),
                  red.errors(), Int128(red.duration_sum()));
  }
  return ok;
}

// Spans written per second into a fresh directory per setting, rounds
// alternated: the median round of each, and the median of the rounds'
// off/on ratios (a round's two runs are next to each other in time, so the
// ratio is steadier than the medians on a machine whose speed drifts).
struct IngestRates {
  double on = 0;
  double off = 0;
  double ratio = 1;  // the median of the rounds' off/on ratios
};

bool MeasureIngest(const BenchRollupsOptions& options, const std::string& dir, uint64_t now,
                   IngestRates* rates) {
  PosixFileSystem fs;
  std::vector<double> on, off;
  std::unique_ptr<storage::Storage> stores[2];
  for (int s = 0; s < 2; ++s) {
    const std::string path = fmt::format("{}-ingest-{}", dir, s == 0 ? "on" : "off");
    (void)fs.RemoveAll(path);
    storage::StorageOptions so;
    so.writer.max_requests_per_batch = 1;
    so.write_rollups = s == 0;
    auto opened = storage::Storage::Open(fs, path, so);
    if (!opened.ok()) return FailStep("rollups", "open ingest directory", opened.status()) == 0;
    stores[s] = *std::move(opened);
  }
  const size_t requests = std::max<uint64_t>(1, options.ingest_spans / kIngestRequestSpans);
  for (int round = 0; round < options.ingest_rounds; ++round) {
    // The traffic of the round, generated before either write (untimed).
    std::vector<std::unique_ptr<otlp::TraceBatch>> traffic[2];
    for (int s = 0; s < 2; ++s) {
      for (size_t i = 0; i < requests; ++i) {
        workload::TrafficGenerator generator(
            workload::TrafficOptions{.seed = options.seed * 7919 + round * 131 + i,
                                     .start_time_unix_nano = now + i * kHourNanos / requests});
        traffic[s].push_back(generator.Traces(static_cast<int>(kIngestRequestSpans)));
      }
    }
    if (round == 0) {
      // CPU of one request's rollups against its spans.parquet, untimed by
      // the rounds: what the commit adds before any I/O.
      const otlp::TraceBatch* one = traffic[0][0].get();
      double spans_s = ThreadCpuSeconds();
      auto table = storage::WriteSpansTable({&one, 1}, "20250614093015123456000");
      spans_s = ThreadCpuSeconds() - spans_s;
      // The least of a few runs of each half (the machine's noise is
      // larger than the difference otherwise).
      double build_s = 1e9, write_s = 1e9;
      rollups::RollupRows rows;
      absl::StatusOr<std::string> file;
      for (int i = 0; i < 5; ++i) {
        double t = ThreadCpuSeconds();
        rows = rollups::BuildRollups({&one, 1}, {}, {});
        build_s = std::min(build_s, ThreadCpuSeconds() - t);
        t = ThreadCpuSeconds();
        file = storage::WriteRollupsTable(rows, "20250614093015123456000");
        write_s = std::min(write_s, ThreadCpuSeconds() - t);
      }
      if (!table.ok() || !file.ok()) return false;
      fmt::print(
          "one request of {} spans: spans.parquet {:.1f} ms CPU; rollups built in {:.1f} "
          "ms, written in {:.1f} ms ({} rows, {} bytes)\n",
          one->spans.size(), spans_s * 1e3, build_s * 1e3, write_s * 1e3, rows.size(),
          file->size());
    }
    for (int k = 0; k < 2; ++k) {
      const int s = (round + k) % 2;  // on first in even rounds, off first in odd ones
      uint64_t spans = 0;
      for (const auto& b : traffic[s]) spans += b->spans.size();
      const double seconds = Drive(*stores[s], 1, requests, [&](size_t i) {
        storage::WriteRequest r;
        r.rows = traffic[s][i]->spans.size();
        r.bytes = r.rows * 400;
        r.traces = std::move(traffic[s][i]);
        return r;
      });
      if (seconds <= 0) return false;
      (s == 0 ? on : off).push_back(static_cast<double>(spans) / seconds);
      fmt::print("ingest round {}: rollups {}: {:.0f} spans/s\n", round, s == 0 ? "on" : "off",
                 static_cast<double>(spans) / seconds);
    }
  }
  for (int s = 0; s < 2; ++s) {
    stores[s].reset();
    if (!options.keep) (void)fs.RemoveAll(fmt::format("{}-ingest-{}", dir, s == 0 ? "on" : "off"));
  }
  std::vector<double> ratios;
  for (size_t i = 0; i < on.size(); ++i) ratios.push_back(off[i] / on[i]);
  std::sort(ratios.begin(), ratios.end());
  std::sort(on.begin(), on.end());
  std::sort(off.begin(), off.end());
  rates->on = on[on.size() / 2];
  rates->off = off[off.size() / 2];
  rates->ratio = ratios[ratios.size() / 2];
  return true;
}

// From the acknowledgement of a request to its batch's edges resolved by
// the service map's background pass (as `strata serve` runs it), for
// requests written one at a time: the p99 in ms, or a negative value when
// a step failed.
double MeasureEdgeFreshness(const BenchRollupsOptions& options, const std::string& dir,
                            uint64_t now) {
  PosixFileSystem fs;
  const std::string path = dir + "-freshness";
  (void)fs.RemoveAll(path);
  storage::StorageOptions so;
  so.writer.max_requests_per_batch = 1;
  auto opened = storage::Storage::Open(fs, path, so);
  if (!opened.ok()) return FailStep("rollups", "open freshness directory", opened.status()) * -1.0;
  std::unique_ptr<storage::Storage> store = *std::move(opened);
  std::vector<double> waits;
  {
    api::ServiceMap map;
    map.Start([&store] { return store.get(); }, &fs);
    absl::flat_hash_set<std::string> seen;
    for (int i = 0; i < options.freshness_requests; ++i) {
      workload::TrafficGenerator generator(workload::TrafficOptions{
          .seed = options.seed * 104729 + i, .start_time_unix_nano = now + i * 60'000'000'000ull});
      storage::WriteRequest r;
      r.traces = generator.Traces(static_cast<int>(kIngestRequestSpans / 10));
      r.rows = r.traces->spans.size();
      r.bytes = r.rows * 400;
      if (const absl::Status written = store->Write(std::move(r)); !written.ok()) {
        return FailStep("rollups", "freshness write", written) * -1.0;
      }
      const Clock::time_point acked = Clock::now();
      std::vector<std::string> fresh;
      const std::shared_ptr<const storage::Snapshot> published = store->Pin();
      for (const auto& batch : published->batches()) {
        if (seen.insert(batch->meta().id).second) fresh.push_back(batch->meta().id);
      }
      for (const std::string& id : fresh) {
        while (!map.Resolved(id)) {
          if (SecondsSince(acked) > 120) {
            spdlog::error("bench rollups: batch {} not resolved after 120 s", id);
            return -1;
          }
          std::this_thread::sleep_for(std::chrono::milliseconds(1));
        }
      }
      waits.push_back(SecondsSince(acked));
    }
  }
  store.reset();
  if (!options.keep) (void)fs.RemoveAll(path);
  return waits.empty() ? 0 : QuantileMs(waits, 0.99);
}

}  // namespace

int RunBenchRollups(const BenchRollupsOptions& options) {
  PosixFileSystem fs;
  const std::string dir = std::filesystem::absolute(
                              options.data_dir.empty() ? "strata-bench-rollups" : options.data_dir)
                              .lexically_normal()
                              .string();
  if (!options.reuse) {
    if (auto exists = fs.Exists(dir); exists.ok() && *exists) {
      if (!options.data_dir.empty()) {
        spdlog::error("bench rollups: {} exists; pass --reuse to query it, or another --dir", dir);
        return 1;
      }
      (void)fs.RemoveAll(dir);
    }
  }
  const uint64_t build_now = UnixNanosNow();
  storage::StorageOptions storage_options;
  storage_options.writer.max_requests_per_batch = 1;
  auto storage = storage::Storage::Open(fs, dir, storage_options);
  if (!storage.ok()) return FailStep("rollups", "open", storage.status());
  if (!options.reuse) {
    WrittenRows written;
    const int batches = std::max(1, options.batches);
    if (!WriteBatches(**storage,
                      GeneratedBatches{.spans = options.spans,
                                       .batches = batches,
                                       .seed = options.seed,
                                       .first_time_unix_nano = build_now - kDayNanos,
                                       .step_nanos = kDayNanos / batches},
                      &written)) {
      return 1;
    }
    fmt::print("built {} batches of about {} spans in {:.1f} s (generation included)\n", batches,
               written.spans / batches, written.seconds);
  }
  std::shared_ptr<const storage::Snapshot> snapshot = (*storage)->Pin();
  uint64_t spans = 0, newest = 0, span_bytes = 0, rollup_bytes = 0;
  for (const auto& batch : snapshot->batches()) {
    const storage::BatchMeta& meta = batch->meta();
    spans += meta.spans.rows;
    if (meta.spans.rows > 0) newest = std::max(newest, meta.spans.event_time->max);
    if (meta.spans_parquet.has_value()) span_bytes += meta.spans_parquet->bytes;
    if (meta.rollups_parquet.has_value()) rollup_bytes += meta.rollups_parquet->bytes;
  }
  if (spans == 0) {
    spdlog::error("bench rollups: no spans in {}", dir);
    return 1;
  }
  // The 24 hours up to the minute after the newest span, on whole minutes.
  const uint64_t end = rollups::MinuteOf(newest) + rollups::kMinuteNanos;
  const api::MinuteWindow window{end - kDayNanos, end};
  fmt::print("data: {} spans in {} batches; spans.parquet {:.1f} MB, rollups.parquet {:.2f} MB\n",
             spans, snapshot->size(), span_bytes / 1e6, rollup_bytes / 1e6);

  // Rollup answers: the first reads every batch's rollups (cold), the rest
  // find them in memory, as a running server does.
  api::RollupCache cache;
  Clock::time_point start = Clock::now();
  auto cold = cache.ForWindow(fs, *snapshot, window);
  const double cold_s = SecondsSince(start);
  if (!cold.ok()) return FailStep("rollups", "read rollups", cold.status());
  std::vector<double> services_s, red_s;
  std::vector<api::ServiceRed> services;
  std::string busiest;
  int64_t busiest_requests = -1;
  size_t answer_bytes = 0;
  for (int i = 0; i < std::max(1, options.runs); ++i) {
    start = Clock::now();
    auto rows = cache.ForWindow(fs, *snapshot, window);
    if (!rows.ok()) return FailStep("rollups", "services", rows.status());
    services = api::ServicesRed(*rows, window);
    answer_bytes = api::ServicesJson(services, window, {}).size();
    services_s.push_back(SecondsSince(start));
  }
  for (const api::ServiceRed& s : services) {
    if (s.requests.count() > busiest_requests) {
      busiest_requests = s.requests.count();
      busiest = s.name;
    }
  }
  api::RedSelector selector;
  selector.service = api::ServiceSelector{busiest, std::nullopt};
  std::vector<api::Red> series;
  for (int i = 0; i < std::max(1, options.runs); ++i) {
    start = Clock::now();
    auto rows = cache.ForWindow(fs, *snapshot, window);
    if (!rows.ok()) return FailStep("rollups", "red series", rows.status());
    series = api::RedSeries(*rows, window, rollups::kMinuteNanos, selector);
    (void)api::RedSeriesJson(series, window, rollups::kMinuteNanos, {});
    red_s.push_back(SecondsSince(start));
  }

  // The service map over the last hour: every batch resolved first (what a
  // start does), then answers as a running server gives them.
  const api::MinuteWindow hour{end - kHourNanos, end};
  api::ServiceMap service_map;
  start = Clock::now();
  const size_t unresolved = service_map.CatchUp(fs, *snapshot, UINT64_MAX);
  const double resolve_s = SecondsSince(start);
  std::vector<double> map_s;
  api::ServiceMapAnswer map;
  for (int i = 0; i < std::max(1, options.runs); ++i) {
    start = Clock::now();
    auto rows = cache.ForWindow(fs, *snapshot, hour);
    if (!rows.ok()) return FailStep("rollups", "service map", rows.status());
    map = service_map.Answer(fs, *snapshot, hour, *rows);
    (void)api::ServiceMapJson(map, hour, service_map.options().resolver);
    map_s.push_back(SecondsSince(start));
  }

  // The same answers from the raw spans.
  auto pool = query::QueryPool::Open(query::QueryPoolOptions{.data_dir = dir});
  if (!pool.ok()) return FailStep("rollups", "query pool", pool.status());
  const query::ViewFiles files =
      query::ViewFilesOf(*snapshot, query::EventWindow{window.first, window.end});
  const query::QueryOptions slow{.deadline = std::chrono::minutes(10), .max_rows = 100'000};
  constexpr char kMeasures[] =
      "count(*) FILTER (WHERE kind IN (2, 5)), "
      "count(*) FILTER (WHERE kind IN (2, 5) AND status_code = 2), "
      "CAST(sum(duration_nano::HUGEINT) FILTER (WHERE kind IN (2, 5)) AS VARCHAR), "
      "quantile_disc(duration_nano, 0.5) FILTER (WHERE kind IN (2, 5)), "
      "quantile_disc(duration_nano, 0.95) FILTER (WHERE kind IN (2, 5)), "
      "quantile_disc(duration_nano, 0.99) FILTER (WHERE kind IN (2, 5))";
  std::vector<double> raw_services_s, raw_red_s;
  query::QueryResult raw_services, raw_red;
  for (int i = 0; i < std::max(1, options.baseline_runs); ++i) {
    query::QueryOptions q = slow;
    q.params = {window.first, window.end};
    start = Clock::now();
    auto r = (*pool)->Run(files,
                          fmt::format("SELECT coalesce(service_name, ''), {} FROM spans WHERE "
                                      "start_time_unix_nano >= $1 AND start_time_unix_nano < $2 "
                                      "GROUP BY 1",
                                      kMeasures),
                          q);
    raw_services_s.push_back(SecondsSince(start));
    if (!r.ok()) return FailStep("rollups", "raw services", r.status());
    raw_services = *std::move(r);
    q.params = {window.first, window.end, busiest};
    start = Clock::now();
    r = (*pool)->Run(files,
                     fmt::format("SELECT start_time_unix_nano // 60000000000 * 60000000000, {} "
                                 "FROM spans WHERE start_time_unix_nano >= $1 AND "
                                 "start_time_unix_nano < $2 AND service_name = $3 AND kind IN "
                                 "(2, 5) GROUP BY 1",
                                 kMeasures),
                     q);
    raw_red_s.push_back(SecondsSince(start));
    if (!r.ok()) return FailStep("rollups", "raw red series", r.status());
    raw_red = *std::move(r);
  }

  // The service map's definition over the hour, reading the spans an hour
  // either side (the late window) for parents and children.
  std::vector<double> raw_map_s;
  query::QueryResult raw_map;
  for (int i = 0; i < std::max(1, options.baseline_runs); ++i) {
    const query::ViewFiles map_files = query::ViewFilesOf(
        *snapshot, query::EventWindow{hour.first - kHourNanos, hour.end + kHourNanos});
    start = Clock::now();
    auto r = (*pool)->Run(map_files, api::ServiceMapReferenceSql(hour.first, hour.end), slow);
    raw_map_s.push_back(SecondsSince(start));
    if (!r.ok()) return FailStep("rollups", "raw service map", r.status());
    raw_map = *std::move(r);
  }

  // Exact: every service and every minute as DuckDB counts them.
  bool exact = raw_services.rows.size() == services.size();
  if (!exact) {
    spdlog::error("bench rollups: DuckDB finds {} services, the rollups {}",
                  raw_services.rows.size(), services.size());
  }
  std::map<std::string, const api::ServiceRed*> by_name;
  for (const api::ServiceRed& s : services) by_name[s.name] = &s;
  for (const auto& row : raw_services.rows) {
    auto it = by_name.find(Cell(row[0]));
    exact = exact && it != by_name.end() && Matches(row, 1, it->second->requests, Cell(row[0]));
  }
  size_t busy_minutes = 0;
  for (const auto& row : raw_red.rows) {
    const uint64_t minute = std::stoull(Cell(row[0]));
    const size_t i = (minute - window.first) / rollups::kMinuteNanos;
    exact = exact && i < series.size() && Matches(row, 1, series[i], "minute " + Cell(row[0]));
  }
  for (const api::Red& point : series) busy_minutes += point.count() > 0;
  exact = exact && busy_minutes == raw_red.rows.size();
  // ... and every edge of the hour.
  std::map<std::string, const api::MapEdge*> edges;
  for (const api::MapEdge& edge : map.edges) edges[api::EdgeName(map, edge)] = &edge;
  bool map_exact = unresolved == 0 && map.pending_batches == 0 && !map.edges.empty() &&
                   edges.size() == raw_map.rows.size();
  for (const auto& row : raw_map.rows) {
    auto it = edges.find(Cell(row[0]));
    const bool same = it != edges.end() &&
                      Cell(row[1]) == std::to_string(it->second->measures.calls) &&
                      Cell(row[2]) == std::to_string(it->second->measures.errors) &&
                      SameBucket(row[3], it->second->measures.Quantile(500)) &&
                      SameBucket(row[4], it->second->measures.Quantile(990));
    if (!same) spdlog::error("bench rollups: edge {} differs from DuckDB's", Cell(row[0]));
    map_exact = map_exact && same;
  }
  if (edges.size() != raw_map.rows.size()) {
    spdlog::error("bench rollups: {} edges, DuckDB finds {}", edges.size(), raw_map.rows.size());
  }
  exact = exact && map_exact;

  IngestRates rates;
  if (options.ingest_rounds > 0 && !MeasureIngest(options, dir, build_now, &rates)) return 1;
  const double overhead_pct = (rates.ratio - 1) * 100;
  double freshness_ms = 0;
  if (options.freshness_requests > 0) {
    freshness_ms = MeasureEdgeFreshness(options, dir, build_now);
    if (freshness_ms < 0) return 1;
  }

  storage->reset();
  if (!options.keep && options.data_dir.empty()) (void)fs.RemoveAll(dir);

  const double services_ms = QuantileMs(services_s, 0.5);
  const double red_ms = QuantileMs(red_s, 0.5);
  const double raw_services_ms = QuantileMs(raw_services_s, 0.5);
  const double raw_red_ms = QuantileMs(raw_red_s, 0.5);
  const double map_ms = QuantileMs(map_s, 0.5);
  const double raw_map_ms = QuantileMs(raw_map_s, 0.5);
  const double ratio = raw_services_ms / std::max({services_ms, red_ms, map_ms, 1e-6});
  fmt::print("\n{:<44} {:>12}\n", "answer (p50)", "ms");
  fmt::print("{:<44} {:>12.2f}\n", "rollups: first read of every batch (cold)", cold_s * 1e3);
  fmt::print("{:<44} {:>12.2f}\n", fmt::format("rollups: {} services over 24 h", services.size()),
             services_ms);
  fmt::print("{:<44} {:>12.2f}\n", fmt::format("rollups: {} RED at 1 min over 24 h", busiest),
             red_ms);
  fmt::print(
      "{:<44} {:>12.2f}\n",
      fmt::format("service map: {} nodes, {} edges over 1 h", map.nodes.size(), map.edges.size()),
      map_ms);
  fmt::print("{:<44} {:>12.2f}\n", "DuckDB over raw spans: services", raw_services_ms);
  fmt::print("{:<44} {:>12.2f}\n", "DuckDB over raw spans: RED series", raw_red_ms);
  fmt::print("{:<44} {:>12.2f}\n", "DuckDB over raw spans: service map", raw_map_ms);
  fmt::print(
      "service map: every batch resolved in {:.1f} s ({:.0f} spans/s); edge freshness "
      "p99 {:.1f} ms over {} requests\n",
      resolve_s, static_cast<double>(spans) / std::max(resolve_s, 1e-9), freshness_ms,
      options.freshness_requests);
  fmt::print(
      "services answer: {} bytes; ratio (raw services / slowest rollup answer) {:.0f}x; "
      "exact {}\n",
      answer_bytes, ratio, exact);
  if (options.ingest_rounds > 0) {
    fmt::print(
        "ingest: rollups on {:.0f} spans/s, off {:.0f} spans/s (median of {} rounds "
        "each, alternated); overhead {:.1f}% (median of the rounds' off/on ratios)\n",
        rates.on, rates.off, options.ingest_rounds, overhead_pct);
  }
  fmt::print(
      "{{\"spans\":{},\"batches\":{},\"services_p50_ms\":{:.3f},\"red_series_p50_ms\":{:.3f},"
      "\"service_map_p50_ms\":{:.3f},\"raw_duckdb_p50_ms\":{:.3f},\"raw_red_p50_ms\":{:.3f},"
      "\"raw_service_map_p50_ms\":{:.3f},\"resolve_all_s\":{:.2f},"
      "\"ratio\":{:.1f},\"cold_read_ms\":{:.1f},\"ingest_on_spans_per_s\":{:.0f},"
      "\"ingest_off_spans_per_s\":{:.0f},\"ingest_overhead_pct\":{:.2f},"
      "\"edge_freshness_p99_ms\":{:.1f},\"rollups_bytes_per_span\":{:.3f},\"exact\":{}}}\n",
      spans, snapshot->size(), services_ms, red_ms, map_ms, raw_services_ms, raw_red_ms, raw_map_ms,
      resolve_s, ratio, cold_s * 1e3, rates.on, rates.off, overhead_pct, freshness_ms,
      static_cast<double>(rollup_bytes) / static_cast<double>(spans), exact);
  return exact ? 0 : 1;
}

}  // namespace strata::bench
