#pragma once

// The questions the REST API answers, as plain functions over a QueryPool
// and the files of one pinned Snapshot (query::ViewFiles), so the HTTP
// handlers (api_server.h) and `strata bench query` share them. Each builds
// parameterized SQL over the views spans, logs and metrics: every value
// that came from a request is bound as $1, $2, ..., never pasted into the
// SQL text. docs/api.md states the semantics (filters, order, limits).
//
// Attribute filters (`attr.<key>=<value>`) match when the key's first
// occurrence (list_position) in the row's own attributes or in its
// resource's attributes has the value: as a string, or as an int64 / double
// / bool when the value parses as one (attributes.md, "What queries look
// like").
//
// Thread-safety: reentrant (the pool is safe for concurrent use). Errors:
// the pool's (InvalidArgument, ResourceExhausted, DeadlineExceeded,
// Internal); InvalidArgument for a bad cursor or an over-large metric
// query; Internal when a result does not have the expected shape.

#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "io/file_system.h"
#include "otlp/batch.h"
#include "query/query_pool.h"
#include "query/view_files.h"
#include "storage/commit/catalog.h"

namespace strata::api {

using Attributes = std::vector<std::pair<std::string, std::string>>;

// The files of `snapshot` for the views, as absolute paths (batch
// directories not already under `data_dir` are joined to it). With
// `spans_window` (`logs_window`), only the spans (logs) files whose event
// times meet it (query/view_files.h): for the calls that read spans
// starting (records timed) in a window.
query::ViewFiles ViewFilesFor(const storage::Snapshot& snapshot, const std::string& data_dir,
                              std::optional<query::EventWindow> spans_window = std::nullopt,
                              std::optional<query::EventWindow> logs_window = std::nullopt);

// Common to every call: the query deadline (0: the pool's default).
struct CallOptions {
  std::chrono::milliseconds deadline{0};
};

// ---- traces ----

inline constexpr int64_t kTraceLimitDefault = 20;
inline constexpr int64_t kTraceLimitMax = 1000;

struct TraceSearch {
  int64_t start = 0;                     // unix ns, span start_time_unix_nano >= start
  int64_t end = 0;                       // and < end
  std::optional<std::string> service;    // spans.service_name
  std::optional<std::string> operation;  // spans.name
  std::optional<int64_t> min_duration;   // duration_nano >= (ns)
  std::optional<int64_t> max_duration;   // duration_nano <= (ns)
  std::optional<int32_t> status;         // status_code =
  bool status_negated = false;           // status_code <> (instead of =)
  std::optional<int32_t> kind;           // kind = (the Jaeger API's span.kind)
  Attributes attributes;
  int64_t limit = kTraceLimitDefault;
};

struct TraceSummary {
  std::string trace_id;  // 32 lowercase hex digits
  std::string root_service;
  std::string root_name;
  int64_t start = 0;     // earliest span start in the window (unix ns)
  int64_t duration = 0;  // latest span end minus start (ns)
  int64_t span_count = 0;
  int64_t error_count = 0;
  std::vector<std::string> services;  // sorted, distinct
  // Spans per service name, sorted by name: every span of the summary
  // counted once, under "" when its resource has no string service.name.
  std::vector<std::pair<std::string, int64_t>> service_spans;
  int32_t root_status_code = 0;  // the root span's status code, as sent
};

// Traces with at least one span in the window matching every filter; each
// summary covers all of the trace's spans in the window. Newest first (by
// summary start, then trace id), at most `limit`.
//
// Queries over `snapshot`'s files (paths as ViewFilesFor makes them).
// Pass 1 finds the newest matching traces and their summary starts,
// reading the batches of the window newest first in up to three rounds
// (about a sixteenth of the window's span rows, a quarter, then all). A
// round over the newest batches answers when it finds `limit` traces that
// start after every span of the batches it left out and that no batch it
// left out holds (their filters and trace indexes, storage::
// BatchHoldsTrace): each such trace is whole in what the round read, and
// any trace it did not find starts earlier. Pass 2 builds the summaries
// from only the batches the traces are in that meet [oldest summary start,
// end), since no span of theirs in the window starts earlier. A nonzero
// `call.deadline` bounds all of them together.
[[nodiscard]] absl::StatusOr<std::vector<TraceSummary>> SearchTraces(
    query::QueryPool& pool, const storage::Snapshot& snapshot, const std::string& data_dir,
    const TraceSearch& search, const CallOptions& call = {});

// A trace search written as SQL (the Tempo API's TraceQL, compat/traceql/):
// traces with a span in [start, end) whose spans' computed columns satisfy
// `having`. `span_columns` computes named columns over one row of the
// spans view (`(<condition>) AS f0, ...`); with `trace_columns` the row also
// has the trace's kTraceColumns (TraceColumnsCte()). `having` aggregates
// them per trace (`bool_or(f0) AND bool_or(f1)`). `params` are $3, $4, ...
// ($1 and $2 are the window). Summaries, order and limit as SearchTraces.
struct TraceMatchSql {
  int64_t start = 0;
  int64_t end = 0;
  std::string span_columns;
  std::string having;
  bool trace_columns = false;
  std::vector<query::QueryParam> params;
  int64_t limit = kTraceLimitDefault;
};

[[nodiscard]] absl::StatusOr<std::vector<TraceSummary>> SearchTracesBySql(
    query::QueryPool& pool, const storage::Snapshot& snapshot, const std::string& data_dir,
    const TraceMatchSql& match, const CallOptions& call = {});

// SearchTracesBySql in its two steps, for callers that read more of the
// same traces beside the summaries (the TraceQL search's matched spans).
struct FoundTraces {
  // (trace id in hex, earliest span start in the window), newest first.
  std::vector<std::pair<std::string, int64_t>> traces;
  int64_t oldest_start = INT64_MAX;  // of `traces`
  int64_t end = 0;                   // the window's
  // The view files whose spans list holds every span the traces have in
  // [oldest_start, end): the batches they are in that meet it.
  query::ViewFiles files;
};
// Pass 1.
[[nodiscard]] absl::StatusOr<FoundTraces> FindTracesBySql(query::QueryPool& pool,
                                                          const storage::Snapshot& snapshot,
                                                          const std::string& data_dir,
                                                          const TraceMatchSql& match,
                                                          const CallOptions& call = {});
// Pass 2: the summaries of `found`'s traces, in its order.
[[nodiscard]] absl::StatusOr<std::vector<TraceSummary>> SummarizeTraces(
    query::QueryPool& pool, const FoundTraces& found, const CallOptions& call = {});

// `trace_columns AS (...)`: per trace with spans in the window ($1, $2),
// trace_root_name, trace_root_service (the root: its span with no parent,
// the earliest if several) and trace_duration_nano (latest end minus
// earliest start).
std::string TraceColumnsCte();

// ---- logs ----

inline constexpr int64_t kLogLimitDefault = 100;
inline constexpr int64_t kLogLimitMax = 1000;

// The most matching records one time may hold where a page ends.
inline constexpr int64_t kMaxLogTieRows = 100'000;

struct LogSearch {
  int64_t start = 0;  // time_unix_nano >= start
  int64_t end = 0;    // and < end
  std::optional<std::string> service;
  std::optional<int32_t> severity_min;
  // q: lower(q) is a substring of lower(s) for a string s of the body: the
  // body itself when it is a string, any string value inside an array or
  // kvlist body (docs/api.md, GET /api/v1/logs).
  std::optional<std::string> text;
  std::optional<otlp::TraceId> trace_id;
  Attributes attributes;
  // body.<path>=<value> (log_filter.h; otlp/any_value_path.h's syntax).
  Attributes body_paths;
  int64_t limit = kLogLimitDefault;
  // From LogPage::next_cursor; empty: the first page.
  std::string cursor;
  // kMaxLogTieRows; the API never changes it (tests lower it).
  int64_t max_tie_rows = kMaxLogTieRows;
};

// The typed values of a page's records, held in an otlp batch so that the
// OTLP/JSON encoders (otlp/encode.h) write them as GET /api/v1/traces/{id}
// writes span attributes: one body per record in `bodies`, the records'
// own attributes in `log_attributes`, scope and resource attributes in
// BatchBase's scope_attributes and resource_attributes, array and kvlist
// children in nested_values / nested_attributes, strings and bytes in the
// arena.
struct LogValues : otlp::BatchBase {
  otlp::ValueColumns bodies;
  otlp::AttributeColumns log_attributes;
};

struct LogEntry {
  int64_t time = 0;           // unix ns
  int64_t observed_time = 0;  // unix ns
  int32_t severity_number = 0;
  std::string severity_text;
  std::string service;
  std::string trace_id;  // hex, "" when absent
  std::string span_id;   // hex, "" when absent
  // Rows of the page's LogValues: `body` in bodies, the ranges in
  // log_attributes, scope_attributes and resource_attributes.
  uint32_t body = 0;
  otlp::Range attributes;
  otlp::Range scope_attributes;
  otlp::Range resource_attributes;
};

struct LogPage {
  std::vector<LogEntry> logs;
  LogValues values;
  // Opaque; empty when this page is the last.
  std::string next_cursor;
};

// Newest first, ordered by (time_unix_nano, row key) descending, where the
// row key is a hash of the record's whole content (log_records.h), so a
// record keeps its place when compaction moves it to another file. The
// cursor holds the last row's (time, key) and how many rows with that same
// (time, key), identical records, the pages so far showed, so the next page
// starts right after it and identical records are neither lost nor shown
// twice.
//
// Over `snapshot`'s logs files (paths as ViewFilesFor makes them), newest
// first, in three steps:
//   1. DuckDB finds the positions (file, row, time) of the limit + 1 newest
//      matches older than the cursor's time, reading only the filter
//      columns, over slices of the window that end where it ends (or at the
//      cursor) and grow from one minute eightfold; each slice's query lists
//      only the files whose records meet it.
//   2. Records of equal time are ordered by their key, which DuckDB cannot
//      compute cheaply, so the positions of every match at the oldest of
//      those times, and at the cursor's time, are found too (at most
//      LogSearch::max_tie_rows; more is FailedPrecondition).
//   3. strata's own reader reads those rows, and only the pages that hold
//      them (storage::ReadLogsRowsAt), and they are ordered by (time, key).
// A nonzero `call.deadline` bounds the queries together.

// What one SearchLogs call did (for `strata bench query`).
struct LogSearchStats {
  int slices = 0;          // queries looking for the newest matches
  size_t floor_files = 0;  // logs files they listed, summed
  size_t page_files = 0;   // logs files the records were read from
  size_t rows_read = 0;    // records read (the page's, the ties, one more)
  double floor_ms = 0;     // wall time of those queries
  double ties_ms = 0;      // and of the ties query
  double page_ms = 0;      // and of reading the records
};

[[nodiscard]] absl::StatusOr<LogPage> SearchLogs(query::QueryPool& pool, FileSystem& fs,
                                                 const storage::Snapshot& snapshot,
                                                 const std::string& data_dir,
                                                 const LogSearch& search,
                                                 const CallOptions& call = {},
                                                 LogSearchStats* stats = nullptr);

// ---- metrics ----

inline constexpr int64_t kMetricNamesLimitDefault = 1000;
inline constexpr int64_t kMetricNamesLimitMax = 10000;

struct MetricName {
  std::string name;
  std::string type;  // gauge, sum, histogram, exponential_histogram, summary
  std::string unit;
  int64_t points = 0;
};

// Metrics with points in [start, end), by name.
[[nodiscard]] absl::StatusOr<std::vector<MetricName>> MetricNames(query::QueryPool& pool,
                                                                  const query::ViewFiles& files,
                                                                  int64_t start, int64_t end,
                                                                  int64_t limit,
                                                                  const CallOptions& call = {});

enum class Aggregation { kSum, kAvg, kMin, kMax, kRate, kP50, kP90, kP95, kP99 };
[[nodiscard]] absl::StatusOr<Aggregation> ParseAggregation(std::string_view name,
                                                           std::string_view value);

inline constexpr int64_t kMaxMetricBuckets = 11'000;
inline constexpr int64_t kMaxMetricSeries = 1'000;
inline constexpr size_t kMaxMetricPoints = 1'000'000;

struct MetricQuery {
  std::string name;
  int64_t start = 0;
  int64_t end = 0;
  int64_t step = 0;  // ns, > 0
  Aggregation aggregation = Aggregation::kSum;
  Attributes attributes;
};

// An exemplar stored with a data point (metrics-parquet.md, "Exemplars").
struct MetricExemplar {
  int64_t time = 0;             // unix ns
  std::optional<double> value;  // nullopt when the exemplar had none
  std::string trace_id;         // hex, "" when absent
  std::string span_id;          // hex, "" when absent
};
inline constexpr size_t kMaxMetricExemplarsPerSeries = 1'000;

struct MetricSeries {
  // service.name first (when the resource has one), then the point's
  // attributes in stored order.
  Attributes labels;
  // (bucket start unix ns, value), ascending; buckets without a value are
  // left out.
  std::vector<std::pair<int64_t, double>> points;
  // The exemplars of the series' points in the window, by time ascending
  // (ties by trace and span id); the newest kMaxMetricExemplarsPerSeries
  // when there are more.
  std::vector<MetricExemplar> exemplars;
};

// The default step for a window: window / 60 rounded to whole seconds, at
// least one second.
int64_t DefaultStep(int64_t start, int64_t end);

// Series of metric `name` grouped by (service, point attribute set); see
// docs/api.md for each aggregation's meaning.
[[nodiscard]] absl::StatusOr<std::vector<MetricSeries>> QueryMetric(query::QueryPool& pool,
                                                                    const query::ViewFiles& files,
                                                                    const MetricQuery& q,
                                                                    const CallOptions& call = {});

// ---- helpers shared by the .cc files ----
namespace internal {

// Appends the SQL of one attribute filter to `sql`, binding its values in
// `params`; `prefixes` are the attribute families to look in ("attr",
// "resource_attr").
void AppendAttributeFilter(const std::string& key, const std::string& value,
                           const std::vector<std::string>& prefixes, std::string* sql,
                           std::vector<query::QueryParam>* params);

// "$<n>" for the parameter about to be pushed.
std::string NextParam(const std::vector<query::QueryParam>& params);

[[nodiscard]] absl::StatusOr<int64_t> CellInt(const std::optional<std::string>& cell);
[[nodiscard]] absl::StatusOr<double> CellDouble(const std::optional<std::string>& cell);
std::string CellString(const std::optional<std::string>& cell);

query::QueryOptions Options(const CallOptions& call, std::vector<query::QueryParam> params,
                            size_t max_rows);
// What is left of `call`'s deadline for a later query of a call that began
// at `began` (at least 1 ms, since 0 means the pool's default); `call` as
// it is when it has no deadline.
CallOptions RemainingCall(const CallOptions& call, std::chrono::steady_clock::time_point began);
// Internal unless every row of `result` has `columns` cells.
[[nodiscard]] absl::Status CheckShape(const query::QueryResult& result, size_t columns,
                                      std::string_view what);

// SQL that renders attribute family `prefix` as "k\x1fv\x1ek\x1fv..."; and
// its inverse.
std::string AttributeSetSql(const std::string& prefix);
Attributes SplitAttributeSet(std::string_view text);

// SQL that renders a metrics row's exemplars as "time|value|trace|span"
// joined by ';' (value empty when the exemplar had none; ids lowercase hex
// or empty); and its inverse, appending to `out`.
extern const char kExemplarsSql[];
[[nodiscard]] absl::Status ParseExemplars(std::string_view text, std::vector<MetricExemplar>* out);

}  // namespace internal

}  // namespace strata::api
