#pragma once

// What the Loki endpoints (loki_endpoints.cc) share with the evaluation of
// LogQL metric queries (loki_metrics.cc): the limits on what a client
// controls, Loki's time and duration parameters, and the metric engine.
//
// Metric queries (docs/loki.md): a range aggregation reads the log lines of
// its window once through ScanLoki (loki_logs.h), keeps one sample per line
// (1, the line's bytes, or the unwrapped value) under the labels of its
// series, and computes each step's value over the samples of
// (t - offset - range, t - offset]. A series is identified by all labels of
// its lines (stream labels, structured metadata, parsed labels); under a
// `sum by`/`sum without` of count_over_time, rate, bytes_over_time,
// bytes_rate or sum_over_time, directly by the grouped labels (the sum is
// the same, and the series stay few). Vector aggregations, binary
// operators, literals and vector() then run step by step.
//
// Memory is bounded by the scan budget (kLokiScanRowsMax lines, one
// sample each), kLokiSeriesMax series and kLokiPointsMax steps; past any of
// them the query is refused with InvalidArgument or ResourceExhausted (400).
//
// Thread-safety: reentrant. Errors: InvalidArgument, ResourceExhausted,
// Unimplemented (constructs strata does not evaluate), and ScanLoki's.

#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "api/search.h"
#include "compat/logql/ast.h"
#include "otlp/json_writer.h"
#include "query/query_pool.h"

namespace strata::api {

inline constexpr int64_t kLokiLimitDefault = 100;
inline constexpr int64_t kLokiLimitMax = 5000;
inline constexpr size_t kLokiLabelValuesMax = 1000;
inline constexpr size_t kLokiSeriesMax = 10'000;
inline constexpr int64_t kLokiPointsMax = 11'000;
// The Loki version buildinfo reports: Grafana enables features by it.
inline constexpr std::string_view kLokiCompatibleVersion = "3.0.0";

struct LokiQueryStats {
  double seconds = 0;
  int64_t rows_read = 0;
  int64_t queries = 0;
  int64_t entries = 0;
};

// The "stats" member of an answer's data.
void WriteLokiStats(const LokiQueryStats& stats, otlp::JsonWriter* json);

struct LokiMetricQuery {
  const compat::logql::Expr* expr = nullptr;
  int64_t start = 0;  // unix ns; for an instant query start == end
  int64_t end = 0;
  int64_t step = 0;  // ns; 0: an instant query at `end`
};

// The whole answer JSON (status, data with resultType vector, matrix or
// scalar, and stats).
[[nodiscard]] absl::StatusOr<std::string> RunLokiMetricQuery(
    query::QueryPool& pool, const storage::Snapshot& snapshot, const std::string& data_dir,
    const LokiMetricQuery& q, const CallOptions& call, std::chrono::steady_clock::time_point began);

// Loki's time parameters: an integer of up to 10 digits is unix seconds, a
// longer one unix nanoseconds, a number with a '.' fractional seconds,
// anything else RFC 3339.
[[nodiscard]] absl::StatusOr<int64_t> ParseLokiTime(std::string_view name, std::string_view value);
// A Prometheus-style duration ("5m", "1h30m") or a number of seconds.
[[nodiscard]] absl::StatusOr<int64_t> ParseLokiDuration(std::string_view name,
                                                        std::string_view value);

}  // namespace strata::api
