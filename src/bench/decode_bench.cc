// decode_bench: single-threaded OTLP decode throughput of strata's decoders,
// with libprotobuf's arena parse of the same bytes as the baseline in the
// same run (db_bench style: a table, then one JSON line for tools).
//
// Payloads are realistic requests from otlp_reference/generator.h: traces
// crossing five services with semantic-convention attributes, correlated
// logs, and sums, gauges and histograms. Each is serialized once with
// libprotobuf; every repetition then decodes every request into a fresh
// batch (strata) or a fresh arena message (libprotobuf), as ingest does.
// The best repetition is reported (the machine may be shared), the median
// beside it.
//
// Usage: decode_bench [--quick] [--repetitions=N] [--requests=N]
//   --quick   2 repetitions over 10 requests, to prove the tool runs (CI);
//             flags after it override its values
// The last line of output is a JSON object: spans_per_sec,
// libprotobuf_spans_per_sec, ratio (strata / libprotobuf), logs_per_sec,
// points_per_sec, json_spans_per_sec, bytes_per_span and more.

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "google/protobuf/arena.h"
#include "otlp/batch.h"
#include "otlp/decode.h"
#include "otlp_reference/generator.h"
#include "otlp_reference/otlp_json.h"

namespace strata::otlp_reference {
namespace {

struct Options {
  bool quick = false;
  int repetitions = 5;
  int requests = 200;
  int rows_per_request = 500;
};

// One measured decoder over one payload.
struct Result {
  std::string name;
  uint64_t rows_per_run = 0;
  uint64_t bytes_per_run = 0;
  double best_seconds = 0;
  double median_seconds = 0;

  double rows_per_sec() const { return static_cast<double>(rows_per_run) / best_seconds; }
  double median_rows_per_sec() const { return static_cast<double>(rows_per_run) / median_seconds; }
  double mb_per_sec() const { return static_cast<double>(bytes_per_run) / best_seconds / 1e6; }
};

// Decodes every payload once; returns the rows decoded.
using RunFn = std::function<uint64_t(const std::vector<std::string>&)>;

Result Measure(const std::string& name, const std::vector<std::string>& payloads,
               const Options& options, const RunFn& run) {
  Result result;
  result.name = name;
  for (const std::string& p : payloads) result.bytes_per_run += p.size();
  result.rows_per_run = run(payloads);  // warm-up, not timed
  std::vector<double> seconds;
  for (int rep = 0; rep < options.repetitions; ++rep) {
    auto start = std::chrono::steady_clock::now();
    uint64_t rows = run(payloads);
    auto stop = std::chrono::steady_clock::now();
    if (rows != result.rows_per_run) {
      std::fprintf(stderr, "%s: decoded %llu rows, then %llu\n", name.c_str(),
                   static_cast<unsigned long long>(result.rows_per_run),
                   static_cast<unsigned long long>(rows));
      std::exit(1);
    }
    seconds.push_back(std::chrono::duration<double>(stop - start).count());
  }
  std::sort(seconds.begin(), seconds.end());
  result.best_seconds = seconds.front();
  result.median_seconds = seconds[seconds.size() / 2];
  return result;
}

void DieOnError(const absl::Status& status, const char* what) {
  if (status.ok()) return;
  std::fprintf(stderr, "%s failed: %s\n", what, status.ToString().c_str());
  std::exit(1);
}

// strata decoder `decode` into a fresh batch per request; `rows` counts.
template <typename Batch, typename Decode, typename Rows>
RunFn StrataRun(Decode decode, Rows rows, const char* what) {
  return [decode, rows, what](const std::vector<std::string>& payloads) {
    uint64_t total = 0;
    for (const std::string& payload : payloads) {
      Batch batch;
      DieOnError(decode(payload, &batch, otlp::DecodeLimits{}), what);
      total += rows(batch);
    }
    return total;
  };
}

// libprotobuf arena parse of each request, in a fresh arena. It reports the
// row count strata decoded from the same bytes.
template <typename Request>
RunFn LibprotobufRun(uint64_t rows_per_run) {
  return [rows_per_run](const std::vector<std::string>& payloads) {
    for (const std::string& payload : payloads) {
      google::protobuf::Arena arena;
      Request* request = google::protobuf::Arena::CreateMessage<Request>(&arena);
      if (!request->ParseFromArray(payload.data(), static_cast<int>(payload.size()))) {
        std::fprintf(stderr, "libprotobuf failed to parse a payload\n");
        std::exit(1);
      }
    }
    return rows_per_run;
  };
}

template <typename Request, typename Generate>
std::vector<std::string> Payloads(const Options& options, Generate generate, bool json) {
  std::vector<std::string> out;
  for (int i = 0; i < options.requests; ++i) {
    Request request = generate(static_cast<uint64_t>(i + 1), options.rows_per_request);
    if (!json) {
      out.push_back(request.SerializeAsString());
      continue;
    }
    absl::StatusOr<std::string> printed = ToOtlpJson(request);
    DieOnError(printed.status(), "ToOtlpJson");
    out.push_back(*std::move(printed));
  }
  return out;
}

struct AllResults {
  Result traces, traces_libprotobuf, traces_json, logs, logs_libprotobuf, metrics,
      metrics_libprotobuf;
};

AllResults RunAll(const Options& options) {
  AllResults r;
  auto spans = [](const otlp::TraceBatch& b) { return uint64_t{b.spans.size()}; };
  auto records = [](const otlp::LogBatch& b) { return uint64_t{b.logs.size()}; };
  auto points = [](const otlp::MetricBatch& b) { return uint64_t{b.point_count()}; };

  std::vector<std::string> traces = Payloads<TraceRequest>(options, RealisticTraceRequest, false);
  r.traces = Measure("traces  protobuf  strata", traces, options,
                     StrataRun<otlp::TraceBatch>(otlp::DecodeTracesProto, spans, "traces"));
  r.traces_libprotobuf = Measure("traces  protobuf  libprotobuf arena", traces, options,
                                 LibprotobufRun<TraceRequest>(r.traces.rows_per_run));
  std::vector<std::string> traces_json =
      Payloads<TraceRequest>(options, RealisticTraceRequest, true);
  r.traces_json = Measure("traces  JSON      strata", traces_json, options,
                          StrataRun<otlp::TraceBatch>(otlp::DecodeTracesJson, spans, "json"));

  std::vector<std::string> logs = Payloads<LogsRequest>(options, RealisticLogsRequest, false);
  r.logs = Measure("logs    protobuf  strata", logs, options,
                   StrataRun<otlp::LogBatch>(otlp::DecodeLogsProto, records, "logs"));
  r.logs_libprotobuf = Measure("logs    protobuf  libprotobuf arena", logs, options,
                               LibprotobufRun<LogsRequest>(r.logs.rows_per_run));

  std::vector<std::string> metrics =
      Payloads<MetricsRequest>(options, RealisticMetricsRequest, false);
  r.metrics = Measure("metrics protobuf  strata", metrics, options,
                      StrataRun<otlp::MetricBatch>(otlp::DecodeMetricsProto, points, "metrics"));
  r.metrics_libprotobuf = Measure("metrics protobuf  libprotobuf arena", metrics, options,
                                  LibprotobufRun<MetricsRequest>(r.metrics.rows_per_run));
  return r;
}

void PrintRow(const Result& r, const char* unit) {
  std::printf("%-36s %10.0f %-7s %10.0f %9.1f %10.1f\n", r.name.c_str(), r.rows_per_sec(), unit,
              r.median_rows_per_sec(), r.mb_per_sec(),
              static_cast<double>(r.bytes_per_run) / static_cast<double>(r.rows_per_run));
}

void PrintReport(const Options& options, const AllResults& r) {
  std::printf(
      "strata decode benchmark: single thread, %d requests x %d rows per payload, "
      "best of %d repetitions (median beside it)\n\n",
      options.requests, options.rows_per_request, options.repetitions);
  std::printf("%-36s %18s %10s %9s %10s\n", "decoder", "rows/s (best)", "median", "MB/s",
              "bytes/row");
  PrintRow(r.traces, "spans");
  PrintRow(r.traces_libprotobuf, "spans");
  PrintRow(r.traces_json, "spans");
  PrintRow(r.logs, "logs");
  PrintRow(r.logs_libprotobuf, "logs");
  PrintRow(r.metrics, "points");
  PrintRow(r.metrics_libprotobuf, "points");
  double ratio = r.traces.rows_per_sec() / r.traces_libprotobuf.rows_per_sec();
  std::printf("\nstrata / libprotobuf (traces): %.2fx   logs: %.2fx   metrics: %.2fx\n\n", ratio,
              r.logs.rows_per_sec() / r.logs_libprotobuf.rows_per_sec(),
              r.metrics.rows_per_sec() / r.metrics_libprotobuf.rows_per_sec());
  std::printf(
      "{\"spans_per_sec\":%.0f,\"libprotobuf_spans_per_sec\":%.0f,\"ratio\":%.3f,"
      "\"logs_per_sec\":%.0f,\"libprotobuf_logs_per_sec\":%.0f,\"points_per_sec\":%.0f,"
      "\"libprotobuf_points_per_sec\":%.0f,\"json_spans_per_sec\":%.0f,"
      "\"bytes_per_span\":%.1f,\"json_bytes_per_span\":%.1f,\"proto_mb_per_sec\":%.1f,"
      "\"statistic\":\"best\",\"repetitions\":%d,\"requests\":%d,\"rows_per_request\":%d,"
      "\"quick\":%s}\n",
      r.traces.rows_per_sec(), r.traces_libprotobuf.rows_per_sec(), ratio, r.logs.rows_per_sec(),
      r.logs_libprotobuf.rows_per_sec(), r.metrics.rows_per_sec(),
      r.metrics_libprotobuf.rows_per_sec(), r.traces_json.rows_per_sec(),
      static_cast<double>(r.traces.bytes_per_run) / static_cast<double>(r.traces.rows_per_run),
      static_cast<double>(r.traces_json.bytes_per_run) /
          static_cast<double>(r.traces_json.rows_per_run),
      r.traces.mb_per_sec(), options.repetitions, options.requests, options.rows_per_request,
      options.quick ? "true" : "false");
}

bool ParseIntFlag(std::string_view arg, std::string_view name, int* out) {
  if (arg.substr(0, name.size()) != name) return false;
  int value = std::atoi(std::string(arg.substr(name.size())).c_str());
  if (value <= 0) {
    std::fprintf(stderr, "%.*s needs a positive integer\n", static_cast<int>(name.size()),
                 name.data());
    std::exit(2);
  }
  *out = value;
  return true;
}

Options ParseFlags(int argc, char** argv) {
  Options options;
  for (int i = 1; i < argc; ++i) {
    std::string_view arg = argv[i];
    if (arg == "--quick") {
      options.quick = true;
      options.repetitions = 2;
      options.requests = 10;
    } else if (!ParseIntFlag(arg, "--repetitions=", &options.repetitions) &&
               !ParseIntFlag(arg, "--requests=", &options.requests)) {
      std::fprintf(stderr, "usage: %s [--quick] [--repetitions=N] [--requests=N]\n", argv[0]);
      std::exit(2);
    }
  }
  return options;
}

}  // namespace
}  // namespace strata::otlp_reference

int main(int argc, char** argv) {
  strata::otlp_reference::Options options = strata::otlp_reference::ParseFlags(argc, argv);
  strata::otlp_reference::PrintReport(options, strata::otlp_reference::RunAll(options));
  return 0;
}
