#include "bench/bench_compat.h"

#include <filesystem>
#include <vector>

#include "api/attribute_discovery.h"
#include "api/jaeger_model.h"
#include "api/jaeger_search.h"
#include "api/loki_logs.h"
#include "api/loki_query.h"
#include "api/search.h"
#include "api/tempo_answers.h"
#include "api/traceql_search.h"
#include "bench/bench_common.h"
#include "bench/bench_promql.h"
#include "bench/bench_query.h"
#include "compat/logql/parser.h"
#include "fmt/format.h"
#include "io/posix_file_system.h"
#include "otlp/encode.h"
#include "query/query_pool.h"
#include "query/view_files.h"
#include "spdlog/spdlog.h"
#include "storage/storage.h"
#include "storage/trace_lookup.h"

namespace strata::bench {

int RunBenchCompat(const BenchCompatOptions& options) {
  PosixFileSystem fs;
  // Absolute: DuckDB may read only under the data directory, named by path.
  const std::string dir =
      std::filesystem::absolute(options.data_dir.empty() ? "strata-bench-compat" : options.data_dir)
          .lexically_normal()
          .string();
  if (!options.reuse) {
    if (auto exists = fs.Exists(dir); exists.ok() && *exists) {
      if (!options.data_dir.empty()) {
        spdlog::error("bench compat: {} exists; pass --reuse to query it, or another --dir", dir);
        return 1;
      }
      (void)fs.RemoveAll(dir);
    }
  }
  storage::StorageOptions storage_options;
  storage_options.writer.max_requests_per_batch = 1;  // one batch per request
  auto storage = storage::Storage::Open(fs, dir, storage_options);
  if (!storage.ok()) return FailStep("compat", "open", storage.status());
  if (!options.reuse) {
    BenchQueryOptions build;
    build.spans = options.spans;
    build.batches = options.batches;
    build.seed = options.seed;
    if (!BuildQueryData(**storage, build, UnixNanosNow())) return 1;
  }
  auto pool = query::QueryPool::Open(query::QueryPoolOptions{.data_dir = dir});
  if (!pool.ok()) return FailStep("compat", "query pool", pool.status());
  // PromQL on strata and on Prometheus holding the same samples (not with
  // --reuse: the model would be written twice).
  std::optional<PromqlBenchNumbers> promql;
  if (options.metric_points > 0 && !options.reuse) {
    auto measured = RunPromqlBench(**storage, **pool, dir, static_cast<int64_t>(UnixNanosNow()),
                                   {.points = options.metric_points, .runs = options.runs});
    if (!measured.ok()) return FailStep("compat", "PromQL", measured.status());
    promql = *measured;
  }
  const std::shared_ptr<const storage::Snapshot> snapshot = (*storage)->Pin();
  const query::ViewFiles files = query::ViewFilesOf(*snapshot);
  const query::QueryOptions slow{.deadline = std::chrono::minutes(10), .max_rows = 100'000};

  // Untimed: the newest span start (the window's end), the service with the
  // most errors in the last hour, and a sample of trace ids.
  auto newest = (*pool)->Run(files, "SELECT max(start_time_unix_nano) FROM spans", slow);
  if (!newest.ok() || newest->rows.empty() || !newest->rows[0][0]) {
    return FailStep("compat", "newest span",
                    newest.ok() ? absl::InternalError("no spans") : newest.status());
  }
  const int64_t end = std::stoll(*newest->rows[0][0]) + 1;
  const int64_t start = end - static_cast<int64_t>(kHourNanos);
  auto busiest = (*pool)->Run(
      files,
      fmt::format("SELECT service_name FROM spans WHERE start_time_unix_nano >= {} AND "
                  "status_code = 2 GROUP BY 1 ORDER BY count(*) DESC LIMIT 1",
                  start),
      slow);
  if (!busiest.ok() || busiest->rows.empty() || !busiest->rows[0][0]) {
    return FailStep("compat", "a service with errors",
                    busiest.ok() ? absl::InternalError("no errors") : busiest.status());
  }
  const std::string service = *busiest->rows[0][0];
  auto sample = (*pool)->Run(
      files,
      fmt::format("SELECT DISTINCT hex(trace_id) FROM spans USING SAMPLE reservoir({} ROWS) "
                  "REPEATABLE ({})",
                  std::max(1, options.lookups), options.seed),
      slow);
  if (!sample.ok()) return FailStep("compat", "sampling trace ids", sample.status());

  const api::CallOptions call{.deadline = std::chrono::seconds(60)};
  const int runs = std::max(1, options.runs);
  std::vector<double> tempo_s, tempo_duration_s, rest_s, tag_values_s, jaeger_s;
  size_t tempo_hits = 0, rest_hits = 0, tag_values = 0, jaeger_bytes = 0;
  for (int run = 0; run < runs; ++run) {
    api::TraceQLSearch search{.start = start, .end = end};
    search.query = fmt::format(R"({{ resource.service.name = "{}" && status = error }})", service);
    BenchClock::time_point t0 = BenchClock::now();
    auto tempo = api::SearchTraceQL(**pool, *snapshot, dir, search, call);
    tempo_s.push_back(SecondsSince(t0));
    if (!tempo.ok()) return FailStep("compat", "TraceQL search", tempo.status());
    tempo_hits = tempo->size();

    search.query = fmt::format(
        R"({{ resource.service.name = "{}" && status = error && duration > 10ms }})", service);
    t0 = BenchClock::now();
    auto with_duration = api::SearchTraceQL(**pool, *snapshot, dir, search, call);
    tempo_duration_s.push_back(SecondsSince(t0));
    if (!with_duration.ok()) return FailStep("compat", "TraceQL search", with_duration.status());

    api::TraceSearch rest{.start = start, .end = end, .service = service, .status = 2};
    t0 = BenchClock::now();
    auto baseline = api::SearchTraces(**pool, *snapshot, dir, rest, call);
    rest_s.push_back(SecondsSince(t0));
    if (!baseline.ok()) return FailStep("compat", "REST search", baseline.status());
    rest_hits = baseline->size();

    // Jaeger's search as Grafana sends it (service, tags {"error":"true"},
    // limit 20): the same search, then each trace whole, as Jaeger JSON.
    t0 = BenchClock::now();
    auto jaeger = api::FindJaegerTraces(**pool, fs, dir, *snapshot, rest, call, 200'000);
    if (!jaeger.ok()) return FailStep("compat", "Jaeger search", jaeger.status());
    jaeger_bytes = api::JaegerTracesResponse(*jaeger).size();
    jaeger_s.push_back(SecondsSince(t0));

    api::AttributeDiscoveryQuery q{.signal = api::Signal::kSpans, .start = start, .end = end};
    q.key = "service.name";
    q.values = api::kDiscoveryValuesMax;
    t0 = BenchClock::now();
    auto values = api::DiscoverAttributes(**pool, *snapshot, dir, q, call);
    tag_values_s.push_back(SecondsSince(t0));
    if (!values.ok()) return FailStep("compat", "tag values", values.status());
    tag_values = values->attributes.empty() ? 0 : values->attributes[0].values.size();
  }
  if (tempo_hits != rest_hits) {
    spdlog::error("bench compat: TraceQL found {} traces, the REST search {}", tempo_hits,
                  rest_hits);
    return 1;
  }

  // LogQL (docs/loki.md): a line filter over the last hour as Grafana's
  // log search asks it (1000 lines, newest first), and Grafana's log
  // volume query over the 24 hours before the end at a 2-minute step.
  const std::string logql_filter = fmt::format(R"({{service_name="{}"}} |= "error")", service);
  const std::string logql_volume = fmt::format(
      R"(sum by (level, detected_level) (count_over_time({{service_name="{}"}} | drop __error__ [2m])))",
      service);
  auto filter_expr = compat::logql::ParseLogQL(logql_filter);
  auto volume_expr = compat::logql::ParseLogQL(logql_volume);
  if (!filter_expr.ok() || !volume_expr.ok()) {
    return FailStep("compat", "LogQL",
                    filter_expr.ok() ? volume_expr.status() : filter_expr.status());
  }
  std::vector<double> logql_filter_s, logql_volume_s;
  size_t logql_lines = 0;
  int64_t logql_read = 0;
  for (int run = 0; run < runs; ++run) {
    api::LokiScan scan;
    scan.matchers = &(*filter_expr)->log.matchers;
    scan.stages = &(*filter_expr)->log.stages;
    scan.start = start;
    scan.end = end;
    scan.wanted = 1000;
    size_t lines = 0;
    api::LokiScanStats scan_stats;
    BenchClock::time_point t0 = BenchClock::now();
    const absl::Status scanned = api::ScanLoki(
        **pool, *snapshot, dir, scan, call,
        [&](compat::logql::LogLine&&) { return ++lines < 1000; }, &scan_stats);
    logql_filter_s.push_back(SecondsSince(t0));
    if (!scanned.ok()) return FailStep("compat", "LogQL line filter", scanned);
    logql_lines = lines;
    logql_read = scan_stats.rows_read;
    api::LokiMetricQuery volume{.expr = volume_expr->get(),
                                .start = end - 24 * static_cast<int64_t>(kHourNanos),
                                .end = end,
                                .step = 120'000'000'000};
    t0 = BenchClock::now();
    auto answer = api::RunLokiMetricQuery(**pool, *snapshot, dir, volume, call, t0);
    logql_volume_s.push_back(SecondsSince(t0));
    if (!answer.ok()) return FailStep("compat", "LogQL volume", answer.status());
  }

  std::vector<double> proto_s, json_s;
  size_t proto_bytes = 0;
  for (const auto& row : sample->rows) {
    auto id = api::ParseTempoTraceId(row[0].value_or(""));
    if (!id.ok()) return FailStep("compat", "sampled id", id.status());
    BenchClock::time_point t0 = BenchClock::now();
    auto trace = storage::LookupTrace(fs, dir, *snapshot, *id, nullptr);
    if (!trace.ok() || !trace->has_value()) {
      return FailStep("compat", "trace lookup",
                      trace.ok() ? absl::NotFoundError("a sampled trace") : trace.status());
    }
    proto_bytes += api::TempoTraceProto(otlp::EncodeTracesProto(**trace), true).size();
    proto_s.push_back(SecondsSince(t0));
    t0 = BenchClock::now();
    auto again = storage::LookupTrace(fs, dir, *snapshot, *id, nullptr);
    if (!again.ok() || !again->has_value())
      return FailStep("compat", "trace lookup", again.status());
    (void)otlp::EncodeTracesJson(**again);
    json_s.push_back(SecondsSince(t0));
  }

  const double tempo_p50 = QuantileMs(tempo_s, 0.5);
  const double tempo_duration_p50 = QuantileMs(tempo_duration_s, 0.5);
  const double rest_p50 = QuantileMs(rest_s, 0.5);
  const double tag_values_p50 = QuantileMs(tag_values_s, 0.5);
  const double proto_p50 = QuantileMs(proto_s, 0.5);
  const double json_p50 = QuantileMs(json_s, 0.5);
  fmt::print("{:<56} {:>10}\n", "query (last hour; service " + service + ")", "p50 ms");
  fmt::print("{:<56} {:>10.1f}   ({} traces; target 100)\n",
             "Tempo search {service && status = error}", tempo_p50, tempo_hits);
  fmt::print("{:<56} {:>10.1f}   (target 100)\n", "  the same && duration > 10ms",
             tempo_duration_p50);
  fmt::print("{:<56} {:>10.1f}   (TraceQL/REST {:.2f})\n",
             "  baseline: GET /api/v1/traces?service=&status=error", rest_p50,
             tempo_p50 / std::max(rest_p50, 1e-6));
  const double jaeger_p50 = QuantileMs(jaeger_s, 0.5);
  fmt::print("{:<56} {:>10.1f}   ({} bytes; target 100)\n",
             "Jaeger search, service and error=true, whole traces", jaeger_p50, jaeger_bytes);
  fmt::print("{:<56} {:>10.1f}   ({} values; target 30)\n", "Tempo tag values, service.name",
             tag_values_p50, tag_values);
  fmt::print("{:<56} {:>10.3f}   ({} traces, {:.0f} bytes each; target 3)\n",
             "Tempo trace by id, protobuf", proto_p50, proto_s.size(),
             proto_s.empty() ? 0.0 : static_cast<double>(proto_bytes) / proto_s.size());
  fmt::print("{:<56} {:>10.3f}   (protobuf/JSON {:.2f})\n",
             "  baseline: GET /api/v1/traces/{id} (OTLP/JSON)", json_p50,
             proto_p50 / std::max(json_p50, 1e-6));
  const double logql_filter_p50 = QuantileMs(logql_filter_s, 0.5);
  const double logql_volume_p50 = QuantileMs(logql_volume_s, 0.5);
  fmt::print("{:<56} {:>10.1f}   ({} lines, {} records read; target 300)\n",
             "LogQL {service_name} |= \"error\", last hour", logql_filter_p50, logql_lines,
             logql_read);
  fmt::print("{:<56} {:>10.1f}   (target 500)\n", "LogQL log volume query, 24 h, step 2m",
             logql_volume_p50);
  std::string promql_json;
  if (promql.has_value()) {
    const PromqlBenchNumbers& p = *promql;
    fmt::print("{:<56} {:>10}\n",
               fmt::format("PromQL over {:.1f} h, 60 s step ({} points; Prometheus {} samples)",
                           p.window_hours, p.points, p.prometheus_samples),
               "p50 ms");
    fmt::print("{:<56} {:>10.1f}   ({} series)\n", "  strata: sum by (job) (rate(..._count[5m]))",
               p.strata_rate_p50_ms, p.rate_series);
    fmt::print("{:<56} {:>10.1f}\n", "  Prometheus 2.42, the same", p.prometheus_rate_p50_ms);
    fmt::print("{:<56} {:>10.1f}   ({} series)\n",
               "  strata: histogram_quantile(0.99, sum by (le, job) ...)", p.strata_quantile_p50_ms,
               p.quantile_series);
    fmt::print("{:<56} {:>10.1f}\n", "  Prometheus 2.42, the same", p.prometheus_quantile_p50_ms);
    const double ratio =
        std::max(p.strata_rate_p50_ms / std::max(p.prometheus_rate_p50_ms, 1e-6),
                 p.strata_quantile_p50_ms / std::max(p.prometheus_quantile_p50_ms, 1e-6));
    fmt::print("{:<56} {:>10.2f}   (target at most 2)\n", "  promql_ratio (the slower of the two)",
               ratio);
    promql_json = fmt::format(
        ",\"promql_rate_p50_ms\":{:.1f},\"prometheus_rate_p50_ms\":{:.1f},"
        "\"promql_quantile_p50_ms\":{:.1f},\"prometheus_quantile_p50_ms\":{:.1f},"
        "\"promql_ratio\":{:.2f}",
        p.strata_rate_p50_ms, p.prometheus_rate_p50_ms, p.strata_quantile_p50_ms,
        p.prometheus_quantile_p50_ms, ratio);
    // The series listings: with the cache (its first call, then warm) and
    // without.
    fmt::print("{:<56} {:>10} {:>10} {:>10}\n", "  listings over the window (ms)", "cold",
               "cached p50", "uncached");
    struct ListingLine {
      const char* key;  // the JSON fields' prefix
      std::string title;
      const PromListTimes& times;
    };
    const ListingLine listings[] = {
        {"series",
         fmt::format("  /series, match[] the _bucket series ({})", p.listings.series.answers),
         p.listings.series},
        {"labels", fmt::format("  /labels ({} names)", p.listings.labels.answers),
         p.listings.labels},
        {"label_values",
         fmt::format("  /label/__name__/values ({} values)", p.listings.label_values.answers),
         p.listings.label_values}};
    for (const ListingLine& listing : listings) {
      const PromListTimes& times = listing.times;
      fmt::print(
          "{:<56} {:>10.1f} {:>10.1f} {:>10.1f}   (cached/uncached {:.2f}; cold: {} decode, {} "
          "catalog queries)\n",
          listing.title, times.cold_ms, times.cached_p50_ms, times.uncached_p50_ms,
          times.cached_p50_ms / std::max(times.uncached_p50_ms, 1e-6), times.cold_decode_queries,
          times.cold_catalog_queries);
      promql_json += fmt::format(
          ",\"{0}_cold_ms\":{1:.1f},\"{0}_cached_p50_ms\":{2:.1f},\"{0}_uncached_p50_ms\":{3:.1f},"
          "\"{0}_cold_decode_queries\":{4},\"{0}_cold_catalog_queries\":{5}",
          listing.key, times.cold_ms, times.cached_p50_ms, times.uncached_p50_ms,
          times.cold_decode_queries, times.cold_catalog_queries);
    }
  }
  fmt::print(
      "{{\"tempo_search_p50_ms\":{:.1f},\"tempo_search_duration_p50_ms\":{:.1f},"
      "\"rest_search_p50_ms\":{:.1f},\"jaeger_search_p50_ms\":{:.1f},"
      "\"tempo_tag_values_p50_ms\":{:.1f},"
      "\"tempo_trace_p50_ms\":{:.3f},\"rest_trace_p50_ms\":{:.3f},"
      "\"logql_filter_p50_ms\":{:.1f},\"logql_volume_p50_ms\":{:.1f}{}}}\n",
      tempo_p50, tempo_duration_p50, rest_p50, jaeger_p50, tag_values_p50, proto_p50, json_p50,
      logql_filter_p50, logql_volume_p50, promql_json);
  if (options.data_dir.empty() && !options.keep) {
    storage->reset();
    (void)fs.RemoveAll(dir);
  }
  return 0;
}

}  // namespace strata::bench
