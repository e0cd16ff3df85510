#include "api/traceql_search.h"

#include <algorithm>
#include <chrono>
#include <future>
#include <variant>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "compat/traceql/parser.h"
#include "compat/traceql/to_sql.h"

namespace strata::api {
namespace {

using internal::CellInt;
using internal::CellString;
using internal::CheckShape;
using internal::Options;

query::QueryParam ToQueryParam(const compat::traceql::SqlValue& value) {
  return std::visit([](const auto& v) { return query::QueryParam(v); }, value);
}

// "<filter 0> AS f0, <filter 1> AS f1, ...".
std::string FilterColumns(const compat::traceql::TraceQLSql& sql) {
  std::string out;
  for (size_t i = 0; i < sql.filters.size(); ++i) {
    absl::StrAppend(&out, i == 0 ? "" : ", ", sql.filters[i], " AS f", i);
  }
  return out;
}

}  // namespace

absl::StatusOr<std::vector<TraceQLTrace>> SearchTraceQL(query::QueryPool& pool,
                                                        const storage::Snapshot& snapshot,
                                                        const std::string& data_dir,
                                                        const TraceQLSearch& search,
                                                        const CallOptions& call) {
  const std::chrono::steady_clock::time_point began = std::chrono::steady_clock::now();
  absl::StatusOr<compat::traceql::Query> parsed =
      compat::traceql::ParseTraceQL(search.query.empty() ? "{}" : search.query);
  // What strata does not answer is a bad request, named, not a server fault.
  if (absl::IsUnimplemented(parsed.status())) {
    return absl::InvalidArgumentError(parsed.status().message());
  }
  STRATA_ASSIGN_OR_RETURN(const compat::traceql::Query query, std::move(parsed));
  // $1, $2: the window, in every query below.
  compat::traceql::SqlParams sql_params{.before = 2};
  STRATA_ASSIGN_OR_RETURN(const compat::traceql::TraceQLSql sql,
                          compat::traceql::TraceQLToSql(query, &sql_params));
  std::vector<std::string> selected_sql;
  for (const compat::traceql::Field& field : query.select) {
    selected_sql.push_back(compat::traceql::SelectedFieldSql(field, &sql_params));
  }
  std::vector<query::QueryParam> params;
  for (const compat::traceql::SqlValue& value : sql_params.values) {
    params.push_back(ToQueryParam(value));
  }

  TraceMatchSql match;
  match.start = search.start;
  match.end = search.end;
  match.limit = search.limit;
  match.trace_columns = sql.needs_trace_columns;
  match.span_columns = FilterColumns(sql);
  match.having = sql.Trace("bool_or", "f");
  match.params = params;
  if (search.min_trace_duration.has_value() || search.max_trace_duration.has_value()) {
    absl::StrAppend(&match.span_columns,
                    ", CAST(start_time_unix_nano AS HUGEINT) + duration_nano AS span_end");
    const std::string duration = "(max(span_end) - min(start_time_unix_nano))";
    if (search.min_trace_duration.has_value()) {
      match.params.emplace_back(*search.min_trace_duration);
      absl::StrAppend(&match.having, " AND ", duration, " >= $", match.params.size() + 2);
    }
    if (search.max_trace_duration.has_value()) {
      match.params.emplace_back(*search.max_trace_duration);
      absl::StrAppend(&match.having, " AND ", duration, " <= $", match.params.size() + 2);
    }
  }
  STRATA_ASSIGN_OR_RETURN(const FoundTraces found,
                          FindTracesBySql(pool, snapshot, data_dir, match, call));
  std::vector<TraceQLTrace> out;
  if (found.traces.empty()) return out;

  // The matched spans of those traces: every span of theirs in the window
  // is in `found.files` and starts at or after the oldest of their starts.
  const uint64_t window_start = static_cast<uint64_t>(std::max<int64_t>(0, search.start));
  const uint64_t window_end = static_cast<uint64_t>(std::max<int64_t>(0, search.end));
  std::string ids;
  for (const auto& [id, start] : found.traces) absl::StrAppend(&ids, ids.empty() ? "" : ",", id);
  const uint64_t narrowed = static_cast<uint64_t>(std::max<int64_t>(0, found.oldest_start));
  std::vector<query::QueryParam> span_params;
  span_params.emplace_back(window_start);
  span_params.emplace_back(window_end);
  span_params.insert(span_params.end(), params.begin(), params.end());
  span_params.emplace_back(narrowed);
  const size_t narrowed_param = span_params.size();
  span_params.emplace_back(ids);
  const size_t ids_param = span_params.size();
  std::string selected_columns;
  for (size_t i = 0; i < selected_sql.size(); ++i) {
    absl::StrAppend(&selected_columns, ", ", selected_sql[i], " AS c", i);
  }
  std::string selected_names;
  for (size_t i = 0; i < selected_sql.size(); ++i) absl::StrAppend(&selected_names, ", c", i);
  const std::string from =
      sql.needs_trace_columns
          ? absl::StrCat("WITH ", TraceColumnsCte(),
                         " SELECT * FROM spans_stored s JOIN trace_columns USING (trace_id)")
          : "SELECT * FROM spans_stored s";
  // Spans in trace order: the limit per trace keeps the earliest.
  const std::string spans_sql = absl::StrCat(
      "SELECT lower(hex(trace_id)), lower(hex(span_id)), name, service_name,"
      " start_time_unix_nano, duration_nano, count(*) OVER (PARTITION BY trace_id)",
      selected_names, " FROM (SELECT trace_id, span_id, name, service_name, start_time_unix_nano,",
      " duration_nano, ", FilterColumns(sql), selected_columns, " FROM (", from,
      " WHERE s.start_time_unix_nano >= $1 AND s.start_time_unix_nano >= $", narrowed_param,
      " AND s.start_time_unix_nano < $2 AND s.trace_id IN (SELECT unhex(unnest(string_split($",
      ids_param, ", ',')))))) WHERE ", sql.AnyFilter("f"),
      " QUALIFY row_number() OVER (PARTITION BY trace_id ORDER BY start_time_unix_nano,"
      " span_id) <= ",
      search.spans_per_set, " ORDER BY 1, 5, 2");
  const size_t columns = 7 + selected_sql.size();
  // The summaries and the matched spans read the same few batches; each
  // scan of one batch runs on one thread, so the two run side by side
  // (the pool bounds how many queries run at once).
  const CallOptions remaining = internal::RemainingCall(call, began);
  std::future<absl::StatusOr<query::QueryResult>> matched = std::async(
      std::launch::async, [&pool, &found, &spans_sql, &span_params, &remaining, &search] {
        return pool.Run(found.files, spans_sql,
                        Options(remaining, std::move(span_params),
                                found.traces.size() * static_cast<size_t>(search.spans_per_set)));
      });
  absl::StatusOr<std::vector<TraceSummary>> summaries = SummarizeTraces(pool, found, remaining);
  absl::StatusOr<query::QueryResult> matched_rows = matched.get();
  STRATA_RETURN_IF_ERROR(summaries.status());
  STRATA_ASSIGN_OR_RETURN(query::QueryResult rows, std::move(matched_rows));
  STRATA_RETURN_IF_ERROR(CheckShape(rows, columns, "TraceQL search"));
  absl::flat_hash_map<std::string, size_t> position;
  out.reserve(summaries->size());
  for (TraceSummary& summary : *summaries) {
    position[summary.trace_id] = out.size();
    out.push_back(TraceQLTrace{.summary = std::move(summary)});
  }
  for (const auto& row : rows.rows) {
    const auto it = position.find(CellString(row[0]));
    if (it == position.end()) return absl::InternalError("TraceQL search: a span of another trace");
    TraceQLTrace& trace = out[it->second];
    MatchedSpan span;
    span.span_id = CellString(row[1]);
    span.name = CellString(row[2]);
    span.service = CellString(row[3]);
    STRATA_ASSIGN_OR_RETURN(span.start, CellInt(row[4]));
    STRATA_ASSIGN_OR_RETURN(span.duration, CellInt(row[5]));
    STRATA_ASSIGN_OR_RETURN(trace.matched, CellInt(row[6]));
    for (size_t i = 0; i < selected_sql.size(); ++i) {
      span.selected.emplace_back(query.select[i].text, row[7 + i]);
    }
    trace.spans.push_back(std::move(span));
  }
  return out;
}

}  // namespace strata::api
