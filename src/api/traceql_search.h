#pragma once

// SearchTraceQL: the trace search of the Tempo API (GET /tempo/api/search,
// docs/tempo.md): the newest traces matching a TraceQL query in a window,
// each with its summary (as SearchTraces gives it) and the spans that
// matched, up to `spans_per_set` of them (the earliest), with how many
// matched and the values of the fields `| select(...)` names.
//
// Three queries over a pinned Snapshot: the traces (FindTracesBySql),
// then side by side (a second thread) their summaries (SummarizeTraces)
// and their matched spans, both from only the batches those traces are
// in that meet [oldest trace start, end).
//
// Thread-safety: reentrant. Errors: InvalidArgument or Unimplemented from
// the TraceQL parser and translation (compat/traceql/), the pool's.

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "api/search.h"

namespace strata::api {

inline constexpr int64_t kSpansPerSetDefault = 3;
inline constexpr int64_t kSpansPerSetMax = 100;

struct TraceQLSearch {
  int64_t start = 0;  // unix ns
  int64_t end = 0;
  std::string query;  // TraceQL; empty: every trace (`{}`)
  // The trace's duration (latest span end minus earliest start in the
  // window), in ns: Tempo's minDuration and maxDuration.
  std::optional<int64_t> min_trace_duration;
  std::optional<int64_t> max_trace_duration;
  int64_t limit = kTraceLimitDefault;
  int64_t spans_per_set = kSpansPerSetDefault;
};

struct MatchedSpan {
  std::string span_id;  // lowercase hex
  std::string name;
  std::string service;
  int64_t start = 0;     // unix ns
  int64_t duration = 0;  // ns
  // The `| select(...)` fields as written, with their values as text
  // (nullopt: the span has none).
  std::vector<std::pair<std::string, std::optional<std::string>>> selected;
};

struct TraceQLTrace {
  TraceSummary summary;
  std::vector<MatchedSpan> spans;  // earliest first, at most spans_per_set
  int64_t matched = 0;             // spans of the trace in the window that matched
};

[[nodiscard]] absl::StatusOr<std::vector<TraceQLTrace>> SearchTraceQL(
    query::QueryPool& pool, const storage::Snapshot& snapshot, const std::string& data_dir,
    const TraceQLSearch& search, const CallOptions& call = {});

}  // namespace strata::api
