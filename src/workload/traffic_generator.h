#pragma once

// TrafficGenerator builds what a small service mesh instrumented with
// OpenTelemetry SDKs sends, straight into columnar batches (otlp/batch.h):
//
//   * traces that cross five services: a frontend SERVER span, CLIENT
//     calls over HTTP or gRPC into other services' SERVER spans, database
//     CLIENT spans below them, proper parent/child links and nested time
//     intervals, HTTP / RPC / database semantic-convention attributes,
//     events, occasional links, and a few percent of errors carrying an
//     `exception` event;
//   * logs correlated with the spans generated before them (trace and span
//     ids, the emitting service), with severities, bodies and attributes;
//   * metrics of every type: monotonic sums, gauges (int and double),
//     explicit-bucket histograms with exemplars, exponential histograms and
//     summaries.
//
// Each batch groups its rows by service (one resource per service, with
// the usual resource attributes) and instrumentation scope, as an SDK
// exporter does. Times advance from `start_time_unix_nano` as traffic is
// generated, so successive batches look like successive exports.
//
// The same seed gives the same batches on every platform (the randomness
// is a fixed-algorithm generator, not <random>'s distributions).
//
// Thread-safety: single owner. Batches returned are self-contained (their
// dynamic strings live in the batch's arena, the rest are literals) and
// satisfy otlp::ValidateBatch. Errors: none.

#include <cstdint>
#include <memory>
#include <vector>

#include "otlp/batch.h"

namespace strata::workload {

struct TrafficOptions {
  uint64_t seed = 1;
  // Times start here (Unix ns) and advance with the traffic.
  uint64_t start_time_unix_nano = 1'750'000'000'000'000'000ULL;
  // Traces have between these many spans (inclusive).
  int min_spans_per_trace = 4;
  int max_spans_per_trace = 16;
  // Percent of server spans that fail.
  int error_percent = 4;
  // Adds structured and non-ASCII values: every fourth log record has a
  // map body ({"message", "code", "where": {"city", "tags": [...]}}) and
  // an array attribute, and root spans carry an array attribute
  // (`app.tags`), a map attribute (`app.user`) and a non-ASCII string
  // (`user.city`). Off by default, so benchmarks keep their traffic.
  bool structured_values = false;
  // Percent of log records whose body is structured rather than a string:
  // a kvlist or an array holding every AnyValue type (nested kvlists and
  // arrays, bytes, empty values, non-ASCII text), as structured-logging
  // libraries send. 0 keeps every body a string, as before the option.
  int structured_body_percent = 0;
  // Percent of traces in which one server also publishes a message (a
  // PRODUCER span with messaging.system and messaging.destination.name)
  // that another service consumes (a CONSUMER span with the same
  // attributes): half the consumers are the producer's child in its
  // trace, half start a trace of their own with a span link to the
  // producer. 0 (the default) keeps the traffic as before the option.
  int messaging_percent = 0;
  // Percent of cross-service calls whose caller-side CLIENT span is held
  // back: the callee's SERVER span names it as parent, but it is only
  // returned by the first Traces() call made once the traffic's clock has
  // passed its end by late_parent_delay_nanos (or by HeldBackSpans()), as
  // a span an SDK exports late. 0 (the default) holds back nothing.
  int late_parent_percent = 0;
  uint64_t late_parent_delay_nanos = 180'000'000'000;
  // How far the clock moves between traces; 0 (the default) is 200 to
  // 400 microseconds, a few thousand requests per second. A larger
  // spacing spreads a few traces over minutes.
  uint64_t trace_spacing_nanos = 0;
};

class TrafficGenerator {
 public:
  explicit TrafficGenerator(TrafficOptions options);
  ~TrafficGenerator();
  TrafficGenerator(const TrafficGenerator&) = delete;
  TrafficGenerator& operator=(const TrafficGenerator&) = delete;

  // Whole traces, at least `span_count` spans in all (the last trace is not
  // cut short), so the batch holds somewhat more than asked.
  std::unique_ptr<otlp::TraceBatch> Traces(int span_count);
  // `record_count` log records, most of them carrying the ids of spans
  // generated earlier.
  std::unique_ptr<otlp::LogBatch> Logs(int record_count);
  // About `point_count` data points over metrics of all five types.
  std::unique_ptr<otlp::MetricBatch> Metrics(int point_count);

  // The spans still held back (late_parent_percent), whatever the clock,
  // in one batch (empty when none is held).
  std::unique_ptr<otlp::TraceBatch> HeldBackSpans();

  // Spans, log records and data points generated so far.
  uint64_t spans_generated() const { return spans_generated_; }

 private:
  class Random;
  struct RecentSpan;
  struct HeldCall;
  class TraceWriter;

  // Writes the held-back CLIENT spans due by `due_unix_nano` into `batch`
  // (through a writer that set up its resources); returns how many.
  int ReleaseHeldCalls(TraceWriter* writer, uint64_t due_unix_nano);

  const TrafficOptions options_;
  std::unique_ptr<Random> rng_;
  uint64_t now_unix_nano_;
  uint64_t spans_generated_ = 0;
  // The last spans generated, for log correlation (a bounded ring).
  std::vector<RecentSpan> recent_;
  size_t recent_next_ = 0;
  // CLIENT spans held back (late_parent_percent), oldest first.
  std::vector<HeldCall> held_;
};

}  // namespace strata::workload
