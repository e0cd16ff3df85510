// SearchTraces, ListServices and ListOperations (search.h).

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

}  // namespace

absl::StatusOr<std::vector<TraceSummary>> SearchTraces(query::QueryPool& pool,
                                                       const query::ViewFiles& files,
                                                       const TraceSearch& search,
                                                       const CallOptions& call) {
  std::vector<query::QueryParam> params;
  params.emplace_back(static_cast<uint64_t>(search.start));
  params.emplace_back(static_cast<uint64_t>(search.end));
  // $1, $2: the window.
  std::string filters;
  if (search.service.has_value()) {
    absl::StrAppend(&filters, " AND service_name = ", NextParam(params));
    params.emplace_back(*search.service);
  }
  if (search.operation.has_value()) {
    absl::StrAppend(&filters, " AND name = ", NextParam(params));
    params.emplace_back(*search.operation);
  }
  if (search.min_duration.has_value()) {
    absl::StrAppend(&filters, " AND duration_nano >= ", NextParam(params));
    params.emplace_back(*search.min_duration);
  }
  if (search.max_duration.has_value()) {
    absl::StrAppend(&filters, " AND duration_nano <= ", NextParam(params));
    params.emplace_back(*search.max_duration);
  }
  if (search.status.has_value()) {
    absl::StrAppend(&filters, " AND status_code = ", NextParam(params));
    params.emplace_back(static_cast<int64_t>(*search.status));
  }
  for (const auto& [key, value] : search.attributes) {
    internal::AppendAttributeFilter(key, value, {"attr", "resource_attr"}, &filters, &params);
  }
  // The limit is a validated integer, not request text.
  const std::string sql = absl::StrCat(
      "WITH m AS (SELECT DISTINCT trace_id FROM spans"
      " WHERE start_time_unix_nano >= $1 AND start_time_unix_nano < $2",
      filters,
      "),"
      " t AS (SELECT trace_id, span_id, parent_span_id, name, service_name, status_code,"
      " start_time_unix_nano AS s, CAST(start_time_unix_nano AS HUGEINT) + duration_nano AS e"
      " FROM spans WHERE start_time_unix_nano >= $1 AND start_time_unix_nano < $2"
      " AND trace_id IN (SELECT trace_id FROM m)),"
      " agg AS (SELECT trace_id, min(s) AS start_ns, max(e) - min(s) AS duration_ns,"
      " count(*) AS span_count, count(*) FILTER (WHERE status_code = 2) AS error_count,"
      " string_agg(DISTINCT service_name, chr(30) ORDER BY service_name) AS services"
      " FROM t GROUP BY trace_id ORDER BY start_ns DESC, trace_id LIMIT ",
      search.limit,
      "),"
      " root AS (SELECT trace_id, service_name, name, row_number() OVER (PARTITION BY trace_id"
      " ORDER BY parent_span_id IS NOT NULL, s, span_id) AS rn"
      " FROM t WHERE trace_id IN (SELECT trace_id FROM agg))"
      " SELECT lower(hex(agg.trace_id)), root.service_name, root.name, agg.start_ns,"
      " agg.duration_ns, agg.span_count, agg.error_count, agg.services"
      " FROM agg JOIN root ON agg.trace_id = root.trace_id AND root.rn = 1"
      " ORDER BY agg.start_ns DESC, agg.trace_id");
  STRATA_ASSIGN_OR_RETURN(
      query::QueryResult result,
      pool.Run(files, sql, Options(call, std::move(params), static_cast<size_t>(search.limit))));
  STRATA_RETURN_IF_ERROR(CheckShape(result, 8, "trace search"));
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
    out.push_back(std::move(summary));
  }
  return out;
}

absl::StatusOr<std::vector<std::string>> ListServices(query::QueryPool& pool,
                                                      const query::ViewFiles& files, int64_t start,
                                                      int64_t end, int64_t limit,
                                                      const CallOptions& call) {
  std::vector<query::QueryParam> params;
  params.emplace_back(static_cast<uint64_t>(start));
  params.emplace_back(static_cast<uint64_t>(end));
  const std::string sql = absl::StrCat(
      "SELECT service_name FROM ("
      "SELECT service_name FROM spans"
      " WHERE start_time_unix_nano >= $1 AND start_time_unix_nano < $2"
      " UNION SELECT service_name FROM logs WHERE time_unix_nano >= $1 AND time_unix_nano < $2"
      " UNION SELECT service_name FROM metrics WHERE time_unix_nano >= $1 AND time_unix_nano < $2"
      ") WHERE service_name IS NOT NULL ORDER BY service_name LIMIT ",
      limit);
  STRATA_ASSIGN_OR_RETURN(
      query::QueryResult result,
      pool.Run(files, sql, Options(call, std::move(params), static_cast<size_t>(limit))));
  STRATA_RETURN_IF_ERROR(CheckShape(result, 1, "services"));
  std::vector<std::string> out;
  for (const auto& row : result.rows) out.push_back(CellString(row[0]));
  return out;
}

absl::StatusOr<std::vector<Operation>> ListOperations(query::QueryPool& pool,
                                                      const query::ViewFiles& files,
                                                      const std::string& service, int64_t start,
                                                      int64_t end, int64_t limit,
                                                      const CallOptions& call) {
  std::vector<query::QueryParam> params;
  params.emplace_back(static_cast<uint64_t>(start));
  params.emplace_back(static_cast<uint64_t>(end));
  params.emplace_back(service);
  const std::string sql = absl::StrCat(
      "SELECT name, count(*), count(*) FILTER (WHERE status_code = 2) FROM spans"
      " WHERE start_time_unix_nano >= $1 AND start_time_unix_nano < $2 AND service_name = $3"
      " AND name IS NOT NULL GROUP BY name ORDER BY name LIMIT ",
      limit);
  STRATA_ASSIGN_OR_RETURN(
      query::QueryResult result,
      pool.Run(files, sql, Options(call, std::move(params), static_cast<size_t>(limit))));
  STRATA_RETURN_IF_ERROR(CheckShape(result, 3, "operations"));
  std::vector<Operation> out;
  for (const auto& row : result.rows) {
    Operation operation;
    operation.name = CellString(row[0]);
    STRATA_ASSIGN_OR_RETURN(operation.span_count, CellInt(row[1]));
    STRATA_ASSIGN_OR_RETURN(operation.error_count, CellInt(row[2]));
    out.push_back(std::move(operation));
  }
  return out;
}

}  // namespace strata::api
