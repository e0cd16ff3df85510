// SearchTraces (search.h).

#include <algorithm>
#include <chrono>
#include <cstdint>

#include "absl/strings/escaping.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "api/search.h"
#include "common/status_macros.h"

namespace strata::api {
namespace {

using internal::CellInt;
using internal::CellString;
using internal::CheckShape;
using internal::NextParam;
using internal::Options;

// "<hex of name>:<count>,..." (the summary query's service_spans) back into
// (name, count) pairs.
absl::StatusOr<std::vector<std::pair<std::string, int64_t>>> ParseServiceSpans(
    const std::string& text) {
  std::vector<std::pair<std::string, int64_t>> out;
  if (text.empty()) return out;
  for (const absl::string_view item : absl::StrSplit(text, ',')) {
    const size_t colon = item.find(':');
    const absl::string_view hex = item.substr(0, colon);
    int64_t count = 0;
    if (colon == absl::string_view::npos || hex.size() % 2 != 0 ||
        !absl::SimpleAtoi(item.substr(colon + 1), &count)) {
      return absl::InternalError(
          absl::StrCat("trace search: malformed spans per service: ", std::string(item)));
    }
    out.emplace_back(absl::HexStringToBytes(hex), count);
  }
  return out;
}

}  // namespace

std::string TraceColumnsCte() {
  // The root is the span with no parent, the earliest if several (then
  // the least span id), as the summaries below choose it.
  return "trace_columns AS (SELECT trace_id,"
         " first(name ORDER BY parent_span_id IS NOT NULL, start_time_unix_nano, span_id)"
         " AS trace_root_name,"
         " first(service_name ORDER BY parent_span_id IS NOT NULL, start_time_unix_nano, span_id)"
         " AS trace_root_service,"
         " max(CAST(start_time_unix_nano AS HUGEINT) + duration_nano) - min(start_time_unix_nano)"
         " AS trace_duration_nano"
         " FROM spans WHERE start_time_unix_nano >= $1 AND start_time_unix_nano < $2"
         " GROUP BY trace_id)";
}

absl::StatusOr<std::vector<TraceSummary>> SearchTraces(query::QueryPool& pool,
                                                       const storage::Snapshot& snapshot,
                                                       const std::string& data_dir,
                                                       const TraceSearch& search,
                                                       const CallOptions& call) {
  TraceMatchSql match;
  match.start = search.start;
  match.end = search.end;
  match.limit = search.limit;
  // $1, $2: the window.
  std::vector<query::QueryParam>& params = match.params;
  params.emplace_back(uint64_t{0});
  params.emplace_back(uint64_t{0});
  std::string condition = "true";
  if (search.service.has_value()) {
    absl::StrAppend(&condition, " AND service_name = ", NextParam(params));
    params.emplace_back(*search.service);
  }
  if (search.operation.has_value()) {
    absl::StrAppend(&condition, " AND name = ", NextParam(params));
    params.emplace_back(*search.operation);
  }
  if (search.min_duration.has_value()) {
    absl::StrAppend(&condition, " AND duration_nano >= ", NextParam(params));
    params.emplace_back(*search.min_duration);
  }
  if (search.max_duration.has_value()) {
    absl::StrAppend(&condition, " AND duration_nano <= ", NextParam(params));
    params.emplace_back(*search.max_duration);
  }
  if (search.status.has_value()) {
    absl::StrAppend(
        &condition,
        search.status_negated ? " AND status_code <> " : " AND status_code = ", NextParam(params));
    params.emplace_back(static_cast<int64_t>(*search.status));
  }
  if (search.kind.has_value()) {
    absl::StrAppend(&condition, " AND kind = ", NextParam(params));
    params.emplace_back(static_cast<int64_t>(*search.kind));
  }
  for (const auto& [key, value] : search.attributes) {
    internal::AppendAttributeFilter(key, value, {"attr", "resource_attr"}, &condition, &params);
  }
  params.erase(params.begin(), params.begin() + 2);
  match.span_columns = absl::StrCat("(", condition, ") AS f0");
  // bool_or skips NULLs, so a span whose filter is NULL does not match, as
  // in a WHERE clause.
  match.having = "bool_or(f0)";
  return SearchTracesBySql(pool, snapshot, data_dir, match, call);
}

absl::StatusOr<std::vector<TraceSummary>> SearchTracesBySql(query::QueryPool& pool,
                                                            const storage::Snapshot& snapshot,
                                                            const std::string& data_dir,
                                                            const TraceMatchSql& match,
                                                            const CallOptions& call) {
  const std::chrono::steady_clock::time_point began = std::chrono::steady_clock::now();
  // Windows are validated non-negative with start < end (params.h).
  const uint64_t window_start = static_cast<uint64_t>(std::max<int64_t>(0, match.start));
  const uint64_t window_end = static_cast<uint64_t>(std::max<int64_t>(0, match.end));

  // Pass 1: the newest `limit` matching traces and their summary starts, in
  // one scan of the columns the filters need (no join back to the spans).
  std::vector<query::QueryParam> params;
  params.emplace_back(window_start);
  params.emplace_back(window_end);
  params.insert(params.end(), match.params.begin(), match.params.end());
  constexpr char kWindow[] = "start_time_unix_nano >= $1 AND start_time_unix_nano < $2";
  std::string spans_sql = absl::StrCat("SELECT trace_id, start_time_unix_nano, ",
                                       match.span_columns, " FROM spans WHERE ", kWindow);
  if (match.trace_columns) {
    spans_sql = absl::StrCat("WITH ", TraceColumnsCte(),
                             " SELECT s.trace_id, s.start_time_unix_nano, ", match.span_columns,
                             " FROM spans s JOIN trace_columns USING (trace_id) WHERE s.", kWindow);
  }
  // The limit is a validated integer, not request text.
  const std::string top_sql =
      absl::StrCat("SELECT trace_id, min(start_time_unix_nano) AS start_ns FROM (", spans_sql,
                   ") GROUP BY trace_id HAVING ", match.having,
                   " ORDER BY start_ns DESC, trace_id LIMIT ", match.limit);
  STRATA_ASSIGN_OR_RETURN(
      query::QueryResult top,
      pool.Run(ViewFilesFor(snapshot, data_dir, query::EventWindow{window_start, window_end}),
               top_sql, Options(call, std::move(params), static_cast<size_t>(match.limit))));
  STRATA_RETURN_IF_ERROR(CheckShape(top, 2, "trace search"));
  if (top.rows.empty()) return std::vector<TraceSummary>();
  std::string ids;
  int64_t oldest_start = INT64_MAX;
  for (const auto& row : top.rows) {
    absl::StrAppend(&ids, ids.empty() ? "" : ",", CellString(row[0]));
    STRATA_ASSIGN_OR_RETURN(const int64_t start, CellInt(row[1]));
    oldest_start = std::min(oldest_start, start);
  }

  // Pass 2: the summaries of those traces. Every span they have in the
  // window starts at or after the oldest summary start, so only the
  // batches whose spans meet [oldest_start, end) are read: for the newest
  // traces, usually the last batch or two instead of the whole window.
  const uint64_t narrowed_start = static_cast<uint64_t>(std::max<int64_t>(0, oldest_start));
  std::vector<query::QueryParam> summary_params;
  summary_params.emplace_back(narrowed_start);
  summary_params.emplace_back(window_end);
  summary_params.emplace_back(std::move(ids));
  const std::string summary_sql =
      "WITH t AS (SELECT trace_id, span_id, parent_span_id, name, service_name, status_code,"
      " start_time_unix_nano AS s, CAST(start_time_unix_nano AS HUGEINT) + duration_nano AS e"
      " FROM spans WHERE start_time_unix_nano >= $1 AND start_time_unix_nano < $2"
      " AND trace_id IN (SELECT unhex(unnest(string_split($3, ','))))),"
      " agg AS (SELECT trace_id, min(s) AS start_ns, max(e) - min(s) AS duration_ns,"
      " count(*) AS span_count, count(*) FILTER (WHERE status_code = 2) AS error_count,"
      " string_agg(DISTINCT service_name, chr(30) ORDER BY service_name) AS services"
      " FROM t GROUP BY trace_id),"
      " root AS (SELECT trace_id, service_name, name, status_code, row_number() OVER ("
      " PARTITION BY trace_id ORDER BY parent_span_id IS NOT NULL, s, span_id) AS rn FROM t),"
      // Service names in hex, so that no byte of a name can split the list.
      " per_service AS (SELECT trace_id, coalesce(service_name, '') AS service, count(*) AS n"
      " FROM t GROUP BY ALL),"
      " svc AS (SELECT trace_id, string_agg(hex(service) || ':' || n, ',' ORDER BY service)"
      " AS service_spans FROM per_service GROUP BY trace_id)"
      " SELECT lower(hex(agg.trace_id)), root.service_name, root.name, agg.start_ns,"
      " agg.duration_ns, agg.span_count, agg.error_count, agg.services, root.status_code,"
      " svc.service_spans"
      " FROM agg JOIN root ON agg.trace_id = root.trace_id AND root.rn = 1"
      " JOIN svc ON agg.trace_id = svc.trace_id"
      " ORDER BY agg.start_ns DESC, agg.trace_id";
  const CallOptions remaining = internal::RemainingCall(call, began);
  STRATA_ASSIGN_OR_RETURN(
      query::QueryResult result,
      pool.Run(ViewFilesFor(snapshot, data_dir, query::EventWindow{narrowed_start, window_end}),
               summary_sql,
               Options(remaining, std::move(summary_params), static_cast<size_t>(match.limit))));
  STRATA_RETURN_IF_ERROR(CheckShape(result, 10, "trace search"));
  if (result.rows.size() != top.rows.size()) {
    return absl::InternalError(absl::StrCat("trace search: ", top.rows.size(),
                                            " traces matched but ", result.rows.size(),
                                            " summaries came back"));
  }
  std::vector<TraceSummary> out;
  out.reserve(result.rows.size());
  for (const auto& row : result.rows) {
    TraceSummary summary;
    summary.trace_id = CellString(row[0]);
    summary.root_service = CellString(row[1]);
    summary.root_name = CellString(row[2]);
    STRATA_ASSIGN_OR_RETURN(summary.start, CellInt(row[3]));
    STRATA_ASSIGN_OR_RETURN(summary.duration, CellInt(row[4]));
    STRATA_ASSIGN_OR_RETURN(summary.span_count, CellInt(row[5]));
    STRATA_ASSIGN_OR_RETURN(summary.error_count, CellInt(row[6]));
    if (row[7].has_value() && !row[7]->empty()) {
      summary.services = absl::StrSplit(*row[7], '\x1e');
    }
    STRATA_ASSIGN_OR_RETURN(const int64_t root_status, CellInt(row[8]));
    summary.root_status_code = static_cast<int32_t>(root_status);
    STRATA_ASSIGN_OR_RETURN(summary.service_spans, ParseServiceSpans(CellString(row[9])));
    out.push_back(std::move(summary));
  }
  return out;
}

}  // namespace strata::api
