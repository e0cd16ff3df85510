#include "bench/bench_trace_compact.h"

#include <chrono>
#include <memory>
#include <optional>
#include <utility>
#include <vector>

#include "api/api_server.h"
#include "api/params.h"
#include "api/trace_columns.h"
#include "bench/bench_common.h"
#include "common/status_macros.h"
#include "fmt/format.h"
#include "server/http_adapter.h"
#include "storage/trace_lookup.h"
#include "workload/traffic_generator.h"

namespace strata::bench {
namespace {

constexpr char kCompactToken[] = "bench-read-token";
constexpr auto kCallTimeout = std::chrono::seconds(60);

// The id of the trace of kCompactTraceSpans spans that `seed` generates (a
// trace across the five services, so its spans have five resources),
// written now unless an earlier run on the same data (--reuse) wrote it:
// writing it again would double its spans.
absl::StatusOr<otlp::TraceId> BigTrace(FileSystem& fs, storage::Storage& storage,
                                       const std::string& dir, uint64_t seed) {
  workload::TrafficOptions options;
  options.seed = seed * 7919 + 17;
  options.start_time_unix_nano = UnixNanosNow() - 30ULL * 60 * 1'000'000'000;
  options.min_spans_per_trace = kCompactTraceSpans;
  options.max_spans_per_trace = kCompactTraceSpans;
  workload::TrafficGenerator generator(options);
  storage::WriteRequest request;
  request.traces = generator.Traces(1);
  if (request.traces->spans.size() != static_cast<size_t>(kCompactTraceSpans)) {
    return absl::InternalError(fmt::format("the generator made {} spans, not {}",
                                           request.traces->spans.size(), kCompactTraceSpans));
  }
  const otlp::TraceId id = request.traces->spans.trace_id[0];
  storage::TraceLookupStats stats;
  STRATA_RETURN_IF_ERROR(storage::LookupTrace(fs, dir, *storage.Pin(), id, &stats,
                                              storage::TraceLookupDetail::kSkeleton)
                             .status());
  if (stats.rows_read == static_cast<uint64_t>(kCompactTraceSpans)) return id;
  if (stats.rows_read != 0) {
    return absl::FailedPreconditionError(
        fmt::format("trace {} of seed {} has {} spans in {}, not {}; pass another --seed",
                    api::TraceIdHex(id), seed, stats.rows_read, dir, kCompactTraceSpans));
  }
  request.rows = request.traces->spans.size();
  request.bytes = request.rows * 400;  // about the OTLP protobuf size of a generated span
  STRATA_RETURN_IF_ERROR(storage.Write(std::move(request)));
  return id;
}

// "span_count":N of a compact answer; 0 when absent.
uint64_t SpanCountOf(const std::string& body) {
  constexpr std::string_view kKey = "\"span_count\":";
  const size_t at = body.find(kKey);
  if (at == std::string::npos) return 0;
  return std::strtoull(body.c_str() + at + kKey.size(), nullptr, 10);
}

}  // namespace

absl::Status MeasureCompactTrace(FileSystem& fs, storage::Storage& storage, query::QueryPool& pool,
                                 const std::string& dir, uint64_t seed, int runs,
                                 CompactTraceResult* result) {
  runs = std::max(1, runs);
  STRATA_ASSIGN_OR_RETURN(const otlp::TraceId id, BigTrace(fs, storage, dir, seed));
  const std::shared_ptr<const storage::Snapshot> snapshot = storage.Pin();

  // In process: the lookup and the encoding on their own.
  std::vector<double> lookup_s, encode_s;
  for (int i = 0; i < runs; ++i) {
    const BenchClock::time_point start = BenchClock::now();
    STRATA_ASSIGN_OR_RETURN(std::optional<otlp::TraceBatch> trace,
                            storage::LookupTrace(fs, dir, *snapshot, id, nullptr,
                                                 storage::TraceLookupDetail::kSkeleton));
    lookup_s.push_back(SecondsSince(start));
    if (!trace.has_value() || trace->spans.size() != static_cast<size_t>(kCompactTraceSpans)) {
      return absl::InternalError(fmt::format("the lookup found {} spans of {}",
                                             trace.has_value() ? trace->spans.size() : 0,
                                             kCompactTraceSpans));
    }
    const BenchClock::time_point encode_start = BenchClock::now();
    const std::string json = api::TraceColumnsJson(*trace);
    encode_s.push_back(SecondsSince(encode_start));
  }

  // Over loopback HTTP, through the API's routes, workers and gzip.
  api::ApiOptions options;
  options.storage = [&storage] { return &storage; };
  options.pool = &pool;
  options.fs = &fs;
  options.data_dir = dir;
  options.authenticate = api::AcceptOnlyToken(kCompactToken);
  api::Api api(std::move(options));
  server::HttpRouter router;
  api.AddRoutes(&router);
  server::HttpServerOptions http;
  http.address = "127.0.0.1:0";
  STRATA_ASSIGN_OR_RETURN(std::unique_ptr<server::HttpServer> server,
                          server::HttpServer::Start(http, std::move(router).ToHandler()));
  const std::string address = server->address();
  const auto fetch = [&](bool gzip, double* seconds) -> absl::StatusOr<server::HttpResponse> {
    server::HttpRequest request;
    request.method = "GET";
    request.target = fmt::format("/api/v1/traces/{}?format=columns", api::TraceIdHex(id));
    request.headers.emplace_back("Authorization", fmt::format("Bearer {}", kCompactToken));
    if (gzip) request.headers.emplace_back("Accept-Encoding", "gzip");
    const BenchClock::time_point start = BenchClock::now();
    absl::StatusOr<server::HttpResponse> response =
        server::HttpCall(address, request, kCallTimeout);
    *seconds = SecondsSince(start);
    if (response.ok() && response->status != 200) {
      return absl::InternalError(fmt::format("HTTP {}: {}", response->status, response->body));
    }
    return response;
  };
  std::vector<double> gzip_s, plain_s;
  double seconds = 0;
  absl::Status status = absl::OkStatus();
  for (int i = 0; i <= runs && status.ok(); ++i) {
    absl::StatusOr<server::HttpResponse> gzipped = fetch(true, &seconds);
    if (!gzipped.ok()) {
      status = gzipped.status();
      break;
    }
    if (i > 0) gzip_s.push_back(seconds);  // the first is the warm-up
    result->gzip_bytes = gzipped->body.size();
    absl::StatusOr<server::HttpResponse> plain = fetch(false, &seconds);
    if (!plain.ok()) {
      status = plain.status();
      break;
    }
    if (i > 0) plain_s.push_back(seconds);
    result->plain_bytes = plain->body.size();
    result->spans = SpanCountOf(plain->body);
    if (result->spans != static_cast<uint64_t>(kCompactTraceSpans)) {
      status = absl::InternalError(
          fmt::format("the answer has span_count {}, not {}", result->spans, kCompactTraceSpans));
    }
  }
  server->Shutdown(std::chrono::seconds(5));
  STRATA_RETURN_IF_ERROR(status);
  result->gzip_p50_ms = QuantileMs(gzip_s, 0.5);
  result->plain_p50_ms = QuantileMs(plain_s, 0.5);
  result->lookup_p50_ms = QuantileMs(lookup_s, 0.5);
  result->encode_p50_ms = QuantileMs(encode_s, 0.5);
  return absl::OkStatus();
}

}  // namespace strata::bench
