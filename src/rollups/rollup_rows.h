#pragma once

// The rows of rollups.parquet in memory (docs/format/rollups-parquet.md,
// "Rows"): BuildRollups computes them from a batch's spans, log records and
// metric data points (the one rule: a pure function of those rows), and
// MergeRollups merges the rows of several batches by key ("Merging"), which
// is what compaction stores for its output and what answers over a window
// add up.
//
// Thread-safety: plain values; the functions are reentrant. Errors: none
// (the batches are only read; a duration sum that would leave int64 splits
// its key into a second row, as the page says).

#include <compare>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "otlp/batch.h"
#include "rollups/duration_histogram.h"

namespace strata::rollups {

// The `rollup` column.
enum class RollupKind : uint8_t {
  kOperation = 1,
  kEndpoint = 2,
  kLogSeverity = 3,
  kMetricPoints = 4,
};

// The `endpoint_type` column (kNone on rows that are not endpoints).
enum class EndpointType : uint8_t {
  kNone = 0,
  kHttp = 1,
  kRpc = 2,
  kMessaging = 3,
};

inline constexpr uint64_t kMinuteNanos = 60'000'000'000;

// The first instant of the UTC minute holding `unix_nanos`.
constexpr uint64_t MinuteOf(uint64_t unix_nanos) { return unix_nanos - unix_nanos % kMinuteNanos; }

// The severity class of a log record's severity_number: 0 unset (0 or
// outside 1..24), else 1 TRACE .. 6 FATAL.
uint8_t SeverityClass(int32_t severity_number);

// A row's key: `kind` says which of the later members are set (the others
// keep their defaults). Ordered as the file sorts its rows.
struct RollupKey {
  RollupKind kind = RollupKind::kOperation;
  uint64_t minute = 0;
  std::string service_namespace;
  std::string service_name;
  std::string span_name;                             // kOperation
  uint8_t span_kind = 0;                             // kOperation, kEndpoint
  EndpointType endpoint_type = EndpointType::kNone;  // kEndpoint
  std::string endpoint_a;                            // kEndpoint
  std::string endpoint_b;                            // kEndpoint
  uint8_t severity_class = 0;                        // kLogSeverity

  friend auto operator<=>(const RollupKey&, const RollupKey&) = default;
  friend bool operator==(const RollupKey&, const RollupKey&) = default;
};

// A row's measures. `errors`, the durations and the histogram are those of
// spans (kinds 1 and 2); the other kinds count only.
struct RollupMeasures {
  int64_t count = 0;
  int64_t errors = 0;
  int64_t duration_sum = 0;
  int64_t duration_min = 0;  // meaningful when count > 0
  int64_t duration_max = 0;
  DurationHistogram histogram;

  friend bool operator==(const RollupMeasures&, const RollupMeasures&) = default;
};

struct RollupRow {
  RollupKey key;
  RollupMeasures measures;

  friend bool operator==(const RollupRow&, const RollupRow&) = default;
};

// Whether a span's row has durations (kinds 1 and 2).
constexpr bool HasDurations(RollupKind kind) {
  return kind == RollupKind::kOperation || kind == RollupKind::kEndpoint;
}

// The rows of one batch (or of a merge), sorted by key; equal keys only
// where a duration sum would have left int64 (then in the order they were
// filled).
using RollupRows = std::vector<RollupRow>;

// The rows the format page defines for these batches' rows, sorted. Batches
// with no rows contribute nothing.
RollupRows BuildRollups(std::span<const otlp::TraceBatch* const> traces,
                        std::span<const otlp::LogBatch* const> logs,
                        std::span<const otlp::MetricBatch* const> metrics);

// The rows of every input merged by key (count, errors and sums add, min
// and max take the extremes, histograms add), sorted. Associative and
// commutative: merging the rollups of batches gives the rollups of their
// rows, up to how a sum that leaves int64 is split.
RollupRows MergeRollups(std::span<const RollupRows* const> inputs);

// Adds `from` into `into` (same key; the caller checks the duration sum
// stays within int64: CanAdd).
void AddMeasures(const RollupMeasures& from, RollupMeasures* into);
// Whether AddMeasures(from, into) keeps into's duration sum within int64.
bool CanAdd(const RollupMeasures& from, const RollupMeasures& into);

}  // namespace strata::rollups
