#include "bench/bench_query.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/escaping.h"
#include "api/attribute_discovery.h"
#include "api/search.h"
#include "bench/bench_common.h"
#include "bench/bench_trace_compact.h"
#include "bench/log_tail_latency.h"
#include "fmt/format.h"
#include "io/posix_file_system.h"
#include "query/query_pool.h"
#include "query/view_files.h"
#include "spdlog/spdlog.h"
#include "storage/storage.h"
#include "storage/trace_lookup.h"

namespace strata::bench {
namespace {

using Clock = BenchClock;

}  // namespace

bool BuildQueryData(storage::Storage& storage, const BenchQueryOptions& options, uint64_t now) {
  const int batches = std::max(1, options.batches);
  WrittenRows written;
  if (!WriteBatches(storage,
                    GeneratedBatches{.spans = options.spans,
                                     .batches = batches,
                                     .seed = options.seed,
                                     .first_time_unix_nano = now - kDayNanos,
                                     .step_nanos = kDayNanos / batches},
                    &written)) {
    return false;
  }
  fmt::print("built {} batches of about {} spans in {:.1f} s (generation included)\n", batches,
             written.spans / batches, written.seconds);
  // The log records of the last hour, a tenth of them with structured
  // bodies, with a tenth as many spans beside them.
  const uint64_t logs = options.logs > 0 ? options.logs : options.spans / 4;
  const int log_batches = std::max(1, batches / 20);
  WrittenRows written_logs;
  if (!WriteBatches(storage,
                    GeneratedBatches{.spans = std::max<uint64_t>(1, logs / 10),
                                     .batches = log_batches,
                                     .seed = options.seed + 7,
                                     .first_time_unix_nano = now - kHourNanos,
                                     .step_nanos = kHourNanos / log_batches,
                                     .logs_per_span = 10,
                                     .structured_body_percent = 10},
                    &written_logs)) {
    return false;
  }
  fmt::print("built {} batches of log records in the last hour in {:.1f} s\n", log_batches,
             written_logs.seconds);
  return true;
}

namespace {

struct SampledTrace {
  otlp::TraceId id{};
  uint64_t spans = 0;
};

bool ParseTraceId(std::string_view hex, otlp::TraceId* id) {
  std::string bytes;
  if (hex.size() != 32 || hex.find_first_not_of("0123456789abcdefABCDEF") != hex.npos) return false;
  bytes = absl::HexStringToBytes(absl::string_view(hex.data(), hex.size()));
  std::copy(bytes.begin(), bytes.end(), id->begin());
  return true;
}

std::string IdBytes(const otlp::TraceId& id) { return std::string(id.begin(), id.end()); }

}  // namespace

int RunBenchQuery(const BenchQueryOptions& options) {
  PosixFileSystem fs;
  // Absolute: DuckDB may read only under the data directory, named by path.
  const std::string dir =
      std::filesystem::absolute(options.data_dir.empty() ? "strata-bench-query" : options.data_dir)
          .lexically_normal()
          .string();
  if (!options.reuse) {
    if (auto exists = fs.Exists(dir); exists.ok() && *exists) {
      if (!options.data_dir.empty()) {
        spdlog::error("bench query: {} exists; pass --reuse to query it, or another --dir", dir);
        return 1;
      }
      (void)fs.RemoveAll(dir);
    }
  }
  const uint64_t build_now = UnixNanosNow();
  storage::StorageOptions storage_options;
  storage_options.writer.max_requests_per_batch = 1;  // one batch per request
  storage_options.lookup_cache_bytes = options.lookup_cache_bytes;
  if (options.page_rows > 0) {
    storage_options.tables.page_rows = options.page_rows;
    storage_options.tables.spans_page_rows = options.page_rows;
  }
  const Clock::time_point open_start = Clock::now();
  auto storage = storage::Storage::Open(fs, dir, storage_options);
  if (!storage.ok()) return FailStep("query", "open", storage.status());
  const double open_seconds = SecondsSince(open_start);
  if (!options.reuse && !BuildQueryData(**storage, options, build_now)) return 1;

  std::shared_ptr<const storage::Snapshot> snapshot = (*storage)->Pin();
  uint64_t spans = 0;
  uint64_t span_batches = 0;
  for (const auto& batch : snapshot->batches()) {
    spans += batch->meta().spans.rows;
    span_batches += batch->meta().spans.rows > 0;
  }
  fmt::print("data: {} log records\n", CountRows(*snapshot).logs);
  fmt::print("data: {} spans in {} batches ({} batches in all); boot validation took {:.2f} s\n",
             spans, span_batches, snapshot->size(), open_seconds);
  if (spans == 0) {
    spdlog::error("bench query: no spans in {}", dir);
    return 1;
  }

  auto pool = query::QueryPool::Open(query::QueryPoolOptions{.data_dir = dir});
  if (!pool.ok()) return FailStep("query", "query pool", pool.status());
  const query::ViewFiles files = query::ViewFilesOf(*snapshot);
  const query::QueryOptions slow{.deadline = std::chrono::minutes(10), .max_rows = 100'000};

  // Ground truth, untimed: a sample of trace ids with their span counts,
  // and the newest span start (the "now" of the search window).
  auto sample = (*pool)->Run(
      files,
      fmt::format("SELECT hex(trace_id), count(*) FROM spans WHERE trace_id IN (SELECT trace_id "
                  "FROM spans USING SAMPLE reservoir({} ROWS) REPEATABLE ({})) GROUP BY 1",
                  std::max(1, options.lookups), options.seed),
      slow);
  if (!sample.ok()) return FailStep("query", "sampling trace ids", sample.status());
  std::vector<SampledTrace> present;
  for (const auto& row : sample->rows) {
    SampledTrace t;
    if (!row[0] || !row[1] || !ParseTraceId(*row[0], &t.id)) {
      spdlog::error("bench query: unexpected sample row");
      return 1;
    }
    t.spans = std::stoull(*row[1]);
    present.push_back(t);
  }
  auto newest = (*pool)->Run(files, "SELECT max(start_time_unix_nano) FROM spans", slow);
  if (!newest.ok() || newest->rows.empty() || !newest->rows[0][0]) {
    return FailStep("query", "newest span",
                    newest.ok() ? absl::InternalError("no rows") : newest.status());
  }
  const uint64_t now = std::stoull(*newest->rows[0][0]);

  // Trace by id, present ids: every span comes back.
  // Also the thread's CPU time per lookup: on a shared machine the wall
  // time includes waiting for a core, the CPU time does not.
  std::vector<double> present_s, present_cpu_s, absent_s;
  uint64_t lookup_spans = 0;
  storage::TraceLookupStats stats_sum;
  for (const SampledTrace& t : present) {
    storage::TraceLookupStats stats;
    const double cpu_start = ThreadCpuSeconds();
    const Clock::time_point start = Clock::now();
    auto trace = storage::LookupTrace(fs, dir, *snapshot, t.id, &stats);
    present_s.push_back(SecondsSince(start));
    present_cpu_s.push_back(ThreadCpuSeconds() - cpu_start);
    if (!trace.ok()) return FailStep("query", "trace lookup", trace.status());
    const uint64_t got = trace->has_value() ? (*trace)->spans.size() : 0;
    if (got != t.spans) {
      spdlog::error("bench query: trace {} returned {} spans, DuckDB counts {}",
                    absl::BytesToHexString(IdBytes(t.id)), got, t.spans);
      return 1;
    }
    lookup_spans += got;
    stats_sum.filter_matches += stats.filter_matches;
    stats_sum.batches_read += stats.batches_read;
  }
  // Absent ids: random, so (almost surely) in no batch.
  std::mt19937_64 rng(options.seed);
  for (int i = 0; i < std::max(1, options.lookups); ++i) {
    otlp::TraceId id;
    for (size_t b = 0; b < id.size(); b += 8) {
      const uint64_t r = rng();
      std::memcpy(id.data() + b, &r, 8);
    }
    storage::TraceLookupStats stats;
    const Clock::time_point start = Clock::now();
    auto trace = storage::LookupTrace(fs, dir, *snapshot, id, &stats);
    absent_s.push_back(SecondsSince(start));
    if (!trace.ok()) return FailStep("query", "absent trace lookup", trace.status());
    if (trace->has_value()) {
      spdlog::error("bench query: random id {} found", absl::BytesToHexString(IdBytes(id)));
      return 1;
    }
  }

  // The same lookup as a DuckDB scan over every file.
  std::vector<double> scan_s;
  for (int i = 0; i < std::max(1, options.scans); ++i) {
    const SampledTrace& t = present[i % present.size()];
    query::QueryOptions q = slow;
    q.params = {query::Blob{IdBytes(t.id)}};
    const Clock::time_point start = Clock::now();
    auto rows = (*pool)->Run(files, "SELECT span_id, name FROM spans WHERE trace_id = $1", q);
    scan_s.push_back(SecondsSince(start));
    if (!rows.ok()) return FailStep("query", "duckdb scan", rows.status());
    if (rows->rows.size() != t.spans) {
      spdlog::error("bench query: the scan found {} spans of a trace the lookup found with {}",
                    rows->rows.size(), t.spans);
      return 1;
    }
  }

  // Error traces of one service in the last hour, as the API's trace
  // search runs it.
  // Also the process's CPU time per search: DuckDB's threads included (and
  // any other thread's, so it is an upper bound).
  std::vector<double> search_s, search_cpu_s;
  size_t search_hits = 0;
  for (int i = 0; i < std::max(1, options.scans); ++i) {
    api::TraceSearch search;
    search.start = static_cast<int64_t>(now - kHourNanos);
    search.end = static_cast<int64_t>(now + 1);
    search.service = "checkout";
    search.status = 2;  // STATUS_CODE_ERROR
    const double cpu_start = ProcessCpuSeconds();
    const Clock::time_point start = Clock::now();
    // As the API does (it lists only the batches whose spans meet the
    // window, then those the summaries need).
    auto traces = api::SearchTraces(**pool, *snapshot, dir, search);
    search_s.push_back(SecondsSince(start));
    search_cpu_s.push_back(ProcessCpuSeconds() - cpu_start);
    if (!traces.ok()) return FailStep("query", "search", traces.status());
    search_hits = traces->size();
  }

  // p99 duration per operation over 24 hours.
  std::vector<double> aggregate_s;
  size_t operations = 0;
  for (int i = 0; i < std::max(1, options.scans); ++i) {
    query::QueryOptions q = slow;
    q.params = {now - kDayNanos};
    const Clock::time_point start = Clock::now();
    const query::ViewFiles day_files =
        query::ViewFilesOf(*snapshot, query::EventWindow{now - kDayNanos, UINT64_MAX});
    auto rows = (*pool)->Run(day_files,
                             "SELECT service_name, name, quantile_cont(duration_nano, 0.99) "
                             "FROM spans WHERE start_time_unix_nano >= $1 GROUP BY ALL",
                             q);
    aggregate_s.push_back(SecondsSince(start));
    if (!rows.ok()) return FailStep("query", "aggregate", rows.status());
    operations = rows->rows.size();
  }

  // A log search with q= over the last hour, as GET /api/v1/logs runs it
  // (the first page of 100).
  std::vector<double> log_search_s, log_floor_s, log_ties_s, log_page_s;
  size_t log_hits = 0;
  api::LogSearchStats log_stats;
  for (int i = 0; i < std::max(1, options.scans); ++i) {
    api::LogSearch search;
    search.start = static_cast<int64_t>(now - kHourNanos);
    search.end = static_cast<int64_t>(now + 1);
    search.text = "Connection Reset";
    const Clock::time_point start = Clock::now();
    auto page = api::SearchLogs(**pool, fs, *snapshot, dir, search, {}, &log_stats);
    log_search_s.push_back(SecondsSince(start));
    log_floor_s.push_back(log_stats.floor_ms / 1000);
    log_ties_s.push_back(log_stats.ties_ms / 1000);
    log_page_s.push_back(log_stats.page_ms / 1000);
    if (!page.ok()) return FailStep("query", "log search", page.status());
    log_hits = page->logs.size();
  }

  // Attribute keys of spans in the last hour (GET /api/v1/attributes).
  std::vector<double> attr_keys_s;
  size_t attr_keys = 0;
  int64_t attr_rows = 0;
  for (int i = 0; i < std::max(1, options.scans); ++i) {
    api::AttributeDiscoveryQuery q;
    q.signal = api::Signal::kSpans;
    q.start = static_cast<int64_t>(now - kHourNanos);
    q.end = static_cast<int64_t>(now + 1);
    const Clock::time_point start = Clock::now();
    auto discovered = api::DiscoverAttributes(**pool, *snapshot, dir, q);
    attr_keys_s.push_back(SecondsSince(start));
    if (!discovered.ok()) return FailStep("query", "attribute discovery", discovered.status());
    attr_keys = discovered->attributes.size();
    attr_rows = discovered->rows_sampled;
  }

  // The compact form of a 100k-span trace over loopback HTTP (written now,
  // so after the searches above, which it would otherwise join).
  CompactTraceResult compact;
  const absl::Status compact_status = MeasureCompactTrace(fs, **storage, **pool, dir, options.seed,
                                                          std::max(5, options.scans), &compact);
  if (!compact_status.ok()) return FailStep("query", "compact trace", compact_status);

  // GET /api/v1/logs/tail: acknowledgement to event, one record at a time.
  auto tail = MeasureLogTailLatency(**storage, **pool, dir, 100);
  if (!tail.ok()) return FailStep("query", "log tail", tail.status());

  // Taken while the batches are live: retiring them empties the cache.
  // A filter through the SQL helpers on a promoted key (docs/sql.md,
  // "Promoted keys") against the same filter on the promoted column, as
  // user SQL both, alternating: the helper's expansion must make it read
  // what the column filter reads.
  struct FriendlyPair {
    const char* label;
    const char* friendly;
    const char* column;
    const char* value;
    std::vector<double> friendly_s;
    std::vector<double> column_s;
  };
  FriendlyPair pairs[] = {
      {"http.route",
       "SELECT count(*) FROM spans WHERE attr_str('http.route') = $1",
       "SELECT count(*) FROM spans WHERE http_route = $1",
       "/api/checkout",
       {},
       {}},
      {"service.name",
       "SELECT count(*) FROM spans WHERE resource_attr_str('service.name') = $1",
       "SELECT count(*) FROM spans WHERE service_name = $1",
       "checkout",
       {},
       {}},
  };
  for (FriendlyPair& pair : pairs) {
    for (int i = 0; i < std::max(3, options.scans); ++i) {
      std::optional<std::string> counts[2];
      for (int form = 0; form < 2; ++form) {
        query::QueryOptions q = slow;
        q.user_sql = true;
        q.params = {std::string(pair.value)};
        const Clock::time_point start = Clock::now();
        auto rows = (*pool)->Run(files, form == 0 ? pair.friendly : pair.column, q);
        (form == 0 ? pair.friendly_s : pair.column_s).push_back(SecondsSince(start));
        if (!rows.ok()) return FailStep("query", "friendly filter", rows.status());
        counts[form] = rows->rows.empty() ? std::nullopt : rows->rows[0][0];
      }
      if (counts[0] != counts[1]) {
        spdlog::error("bench query: the {} helper filter counted {} rows, the column {}",
                      pair.label, counts[0].value_or("none"), counts[1].value_or("none"));
        return 1;
      }
    }
  }

  const double lookup_cache_mib =
      static_cast<double>((*storage)->lookup_cache().used_bytes()) / (1 << 20);
  const double lookup_cache_limit_mib =
      static_cast<double>((*storage)->lookup_cache().limit_bytes()) / (1 << 20);
  snapshot.reset();
  pool->reset();
  (*storage)->Shutdown(std::chrono::seconds(10));
  storage->reset();
  if (!options.keep && !options.reuse) (void)fs.RemoveAll(dir);

  const double trace_p50 = QuantileMs(present_s, 0.5);
  const double trace_p99 = QuantileMs(present_s, 0.99);
  const double trace_cpu_p50 = QuantileMs(present_cpu_s, 0.5);
  const double absent_p50 = QuantileMs(absent_s, 0.5);
  const double absent_p99 = QuantileMs(absent_s, 0.99);
  const double scan_p50 = QuantileMs(scan_s, 0.5);
  const double search_p50 = QuantileMs(search_s, 0.5);
  const double search_cpu_p50 = QuantileMs(search_cpu_s, 0.5);
  const double aggregate_p50 = QuantileMs(aggregate_s, 0.5);
  const double log_search_p50 = QuantileMs(log_search_s, 0.5);
  const double attr_keys_p50 = QuantileMs(attr_keys_s, 0.5);
  fmt::print("{:<44} {:>10} {:>10}\n", "query", "p50 ms", "p99 ms");
  fmt::print("{:<44} {:>10.3f} {:>10.3f}\n", "trace by id, present (no time range)", trace_p50,
             trace_p99);
  fmt::print("{:<44} {:>10.3f}\n", "  its CPU time (this thread)", trace_cpu_p50);
  fmt::print("{:<44} {:>10.3f} {:>10.3f}\n", "trace by id, absent", absent_p50, absent_p99);
  fmt::print("{:<44} {:>10.1f}\n", "same lookup as a DuckDB scan of all files", scan_p50);
  fmt::print("{:<44} {:>10.1f}\n", "error traces of one service, last hour", search_p50);
  fmt::print("{:<44} {:>10.1f}\n", "  its CPU time (the process)", search_cpu_p50);
  fmt::print("{:<44} {:>10.1f}\n", "p99 duration per operation, 24 hours", aggregate_p50);
  fmt::print("{:<44} {:>10.1f}\n", "log search q=, last hour (target 150)", log_search_p50);
  fmt::print("{:<44} {:>10.1f}   ({} queries over {} files)\n",
             "  finding the newest matches (DuckDB)", QuantileMs(log_floor_s, 0.5),
             log_stats.slices, log_stats.floor_files);
  fmt::print("{:<44} {:>10.1f}\n", "  and every match at the page's last time",
             QuantileMs(log_ties_s, 0.5));
  fmt::print("{:<44} {:>10.1f}   ({} records from {} files)\n", "  reading them (strata's reader)",
             QuantileMs(log_page_s, 0.5), log_stats.rows_read, log_stats.page_files);
  fmt::print("{:<44} {:>10.1f}\n", "attribute keys of spans, last hour (target 50)", attr_keys_p50);
  fmt::print("log search found {} records (first page); attribute discovery {} keys from {} rows\n",
             log_hits, attr_keys, attr_rows);
  double friendly_filter_ratio = 0;
  for (FriendlyPair& pair : pairs) {
    const double friendly_p50 = QuantileMs(pair.friendly_s, 0.5);
    const double column_p50 = QuantileMs(pair.column_s, 0.5);
    const double ratio = friendly_p50 / std::max(column_p50, 1e-6);
    friendly_filter_ratio = std::max(friendly_filter_ratio, ratio);
    fmt::print("{:<44} {:>10.1f}\n", fmt::format("filter {} through the SQL helper", pair.label),
               friendly_p50);
    fmt::print("{:<44} {:>10.1f}   (helper/column {:.2f})\n",
               fmt::format("  the same on the promoted column"), column_p50, ratio);
  }
  fmt::print("{:<44} {:>10.1f}   {} bytes\n", "compact form of a 100k-span trace, gzip",
             compact.gzip_p50_ms, compact.gzip_bytes);
  fmt::print("{:<44} {:>10.1f}   {} bytes\n", "  the same without gzip", compact.plain_p50_ms,
             compact.plain_bytes);
  fmt::print("{:<44} {:>10.1f}\n", "  its trace lookup alone (in process)", compact.lookup_p50_ms);
  fmt::print("{:<44} {:>10.1f}\n", "  its JSON encoding alone (in process)", compact.encode_p50_ms);
  fmt::print("{:<44} {:>10.1f} {:>10.1f}\n", "live tail, acknowledgement to event (p50, max)",
             tail->p50_ms, tail->max_ms);
  fmt::print(
      "{} present lookups returned {} spans; {:.2f} filter matches and {:.2f} batches read "
      "per lookup; search found {} traces; aggregate {} operations\n",
      present.size(), lookup_spans, static_cast<double>(stats_sum.filter_matches) / present.size(),
      static_cast<double>(stats_sum.batches_read) / present.size(), search_hits, operations);
  fmt::print(
      "lookup cache: {:.2f} MiB of {:.0f} MiB (the footers, OffsetIndexes and "
      "dictionary pages of the batches read)\n",
      lookup_cache_mib, lookup_cache_limit_mib);
  fmt::print(
      "{{\"spans\":{},\"batches\":{},\"trace_p50_ms\":{:.3f},\"trace_p99_ms\":{:.3f},"
      "\"absent_p50_ms\":{:.3f},\"absent_p99_ms\":{:.3f},\"duckdb_scan_p50_ms\":{:.1f},"
      "\"ratio\":{:.1f},\"search_p50_ms\":{:.1f},\"aggregate_p50_ms\":{:.1f},"
      "\"trace_cpu_p50_ms\":{:.3f},\"lookup_cache_mib\":{:.2f},\"search_cpu_p50_ms\":{:.1f},"
      "\"friendly_filter_ratio\":{:.2f},"
      "\"trace100k_compact_ms\":{:.1f},\"trace100k_compact_bytes\":{},"
      "\"trace100k_compact_plain_ms\":{:.1f},\"trace100k_compact_plain_bytes\":{},"
      "\"log_search_p50_ms\":{:.1f},\"attr_keys_p50_ms\":{:.1f},"
      "\"log_tail_p50_ms\":{:.1f},\"log_tail_max_ms\":{:.1f}}}\n",
      spans, span_batches, trace_p50, trace_p99, absent_p50, absent_p99, scan_p50,
      scan_p50 / std::max(trace_p50, 1e-6), search_p50, aggregate_p50, trace_cpu_p50,
      lookup_cache_mib, search_cpu_p50, friendly_filter_ratio, compact.gzip_p50_ms,
      compact.gzip_bytes, compact.plain_p50_ms, compact.plain_bytes, log_search_p50, attr_keys_p50,
      tail->p50_ms, tail->max_ms);
  return 0;
}

}  // namespace strata::bench
