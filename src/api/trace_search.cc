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
#include "io/posix_file_system.h"
#include "spdlog/spdlog.h"
#include "storage/format/layout.h"
#include "storage/offload/data_file_resolver.h"
#include "storage/trace_lookup.h"

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

// A batch whose spans meet the search window.
struct WindowBatch {
  const storage::LiveBatch* batch = nullptr;
  uint64_t newest = 0;  // its newest span start in the window
  uint64_t rows = 0;    // its span rows
  std::string path;     // its spans.parquet, as ViewFilesFor names it
};

// The batches with spans in [start, end), newest first (by their newest
// span start), as ViewFilesFor chooses them.
std::vector<WindowBatch> NewestFirst(const storage::Snapshot& snapshot, const std::string& data_dir,
                                     uint64_t start, uint64_t end) {
  std::vector<WindowBatch> out;
  for (const auto& batch : snapshot.batches()) {
    const storage::BatchMeta& meta = batch->meta();
    if (!meta.spans_parquet.has_value() || !meta.spans.event_time.has_value()) continue;
    const storage::NanosRange& times = *meta.spans.event_time;
    if (times.max < start || times.min >= end) continue;
    // As ViewFilesFor names it (a cached copy when evicted, held by the
    // search's ViewFiles).
    std::string path = storage::DataFilePathOf(*batch, storage::kSpansFileName);
    if (!path.starts_with('/')) path = absl::StrCat(data_dir, "/", path);
    out.push_back({.batch = batch.get(),
                   .newest = std::min(times.max, end - 1),
                   .rows = meta.spans.rows,
                   .path = std::move(path)});
  }
  std::stable_sort(out.begin(), out.end(),
                   [](const WindowBatch& a, const WindowBatch& b) { return a.newest > b.newest; });
  return out;
}

// How many of the newest batches each round of pass 1 reads: about a
// sixteenth of the window's span rows, then a quarter, then all. Spans
// arrive roughly in time order, so the newest matching traces are usually
// whole in the first round; a search that matches little reads about 1.3
// times the rows of a single scan of the window.
std::vector<size_t> NewestRounds(const std::vector<WindowBatch>& batches) {
  uint64_t total = 0;
  for (const WindowBatch& b : batches) total += b.rows;
  std::vector<size_t> rounds;
  for (const uint64_t share : {total / 16, total / 4}) {
    size_t prefix = 0;
    uint64_t rows = 0;
    while (prefix < batches.size() && (prefix == 0 || rows < share)) rows += batches[prefix++].rows;
    if (prefix < batches.size() && (rounds.empty() || prefix > rounds.back())) {
      rounds.push_back(prefix);
    }
  }
  rounds.push_back(batches.size());
  return rounds;
}

std::vector<std::string> PathsOf(const std::vector<WindowBatch>& batches, size_t prefix) {
  std::vector<std::string> out;
  out.reserve(prefix);
  for (size_t i = 0; i < prefix; ++i) out.push_back(batches[i].path);
  return out;
}

// Whether no batch from `prefix` on holds a span of any trace in `top`
// (its first column, the id in hex): then the rows of batches[0, prefix)
// alone gave each of them its whole summary start and filter result. A
// batch whose index cannot be read may hold one.
absl::StatusOr<bool> OnlyIn(FileSystem& fs, const std::string& data_dir,
                            const query::QueryResult& top, const std::vector<WindowBatch>& batches,
                            size_t prefix) {
  for (const auto& row : top.rows) {
    const std::string bytes = absl::HexStringToBytes(CellString(row[0]));
    otlp::TraceId id{};
    if (bytes.size() != id.size()) {
      return absl::InternalError(
          absl::StrCat("trace search: a trace id of ", bytes.size(), " bytes"));
    }
    std::copy(bytes.begin(), bytes.end(), id.begin());
    for (size_t i = prefix; i < batches.size(); ++i) {
      const absl::StatusOr<bool> holds =
          storage::BatchHoldsTrace(fs, data_dir, *batches[i].batch, id);
      // A batch whose index cannot be read is not ruled out: the next
      // round reads it, at the cost of the time. The failure is the
      // index's (strata verify names it), not the search's.
      if (!holds.ok()) {
        spdlog::warn("trace search: cannot rule out batch {} for trace {}: {}",
                     batches[i].batch->dir(), CellString(row[0]), holds.status().ToString());
        return false;
      }
      if (*holds) return false;
    }
  }
  return true;
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
         " FROM spans_stored WHERE start_time_unix_nano >= $1 AND start_time_unix_nano < $2"
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

absl::StatusOr<FoundTraces> FindTracesBySql(query::QueryPool& pool,
                                            const storage::Snapshot& snapshot,
                                            const std::string& data_dir, const TraceMatchSql& match,
                                            const CallOptions& call) {
  const std::chrono::steady_clock::time_point began = std::chrono::steady_clock::now();
  // Windows are validated non-negative with start < end (params.h).
  const uint64_t window_start = static_cast<uint64_t>(std::max<int64_t>(0, match.start));
  const uint64_t window_end = static_cast<uint64_t>(std::max<int64_t>(0, match.end));
  query::ViewFiles files =
      ViewFilesFor(snapshot, data_dir, query::EventWindow{window_start, window_end});
  const std::vector<WindowBatch> batches =
      NewestFirst(snapshot, data_dir, window_start, window_end);

  // Pass 1: the newest `limit` matching traces and their summary starts
  // (no join back to the spans), from the newest batches first
  // (NewestRounds()).
  std::vector<query::QueryParam> base_params;
  base_params.emplace_back(window_start);
  base_params.emplace_back(window_end);
  base_params.insert(base_params.end(), match.params.begin(), match.params.end());
  constexpr char kWindow[] = "start_time_unix_nano >= $1 AND start_time_unix_nano < $2";
  std::string spans_sql = absl::StrCat("SELECT trace_id, start_time_unix_nano, ",
                                       match.span_columns, " FROM spans_stored WHERE ", kWindow);
  if (match.trace_columns) {
    spans_sql =
        absl::StrCat("WITH ", TraceColumnsCte(), " SELECT s.trace_id, s.start_time_unix_nano, ",
                     match.span_columns,
                     " FROM spans_stored s JOIN trace_columns USING (trace_id) WHERE s.", kWindow);
  }
  const std::string newer_param = NextParam(base_params);
  PosixFileSystem fs;
  query::QueryResult top;
  size_t read = batches.size();  // batches[0, read) hold every span of the traces found
  for (const size_t prefix : NewestRounds(batches)) {
    const bool last = prefix == batches.size();
    std::vector<query::QueryParam> params = base_params;
    // A trace whose matching spans are all in older batches starts no later
    // than the newest span of those batches: only traces starting after it
    // can be told apart here.
    std::string having = match.having;
    if (!last) {
      absl::StrAppend(&having, " AND min(start_time_unix_nano) > ", newer_param);
      params.emplace_back(batches[prefix].newest);
    }
    // The limit is a validated integer, not request text.
    const std::string top_sql =
        absl::StrCat("SELECT trace_id, min(start_time_unix_nano) AS start_ns FROM (", spans_sql,
                     ") GROUP BY trace_id HAVING ", having,
                     " ORDER BY start_ns DESC, trace_id LIMIT ", match.limit);
    files.spans = PathsOf(batches, prefix);
    STRATA_ASSIGN_OR_RETURN(
        top, pool.Run(files, top_sql,
                      Options(internal::RemainingCall(call, began), std::move(params),
                              static_cast<size_t>(match.limit))));
    STRATA_RETURN_IF_ERROR(CheckShape(top, 2, "trace search"));
    if (last) break;
    STRATA_ASSIGN_OR_RETURN(const bool whole, OnlyIn(fs, data_dir, top, batches, prefix));
    if (whole && static_cast<int64_t>(top.rows.size()) == match.limit) {
      read = prefix;
      break;
    }
  }
  FoundTraces found;
  found.end = match.end;
  if (top.rows.empty()) return found;
  for (const auto& row : top.rows) {
    STRATA_ASSIGN_OR_RETURN(const int64_t start, CellInt(row[1]));
    found.traces.emplace_back(CellString(row[0]), start);
    found.oldest_start = std::min(found.oldest_start, start);
  }
  // Every span the traces have in the window starts at or after the
  // oldest of their starts, so only the batches whose spans meet
  // [oldest_start, end) hold them: for the newest traces, usually the last
  // batch or two instead of the whole window.
  const uint64_t narrowed_start = static_cast<uint64_t>(std::max<int64_t>(0, found.oldest_start));
  std::vector<WindowBatch> narrowed(batches.begin(), batches.begin() + read);
  std::erase_if(narrowed, [&](const WindowBatch& b) { return b.newest < narrowed_start; });
  files.spans = PathsOf(narrowed, narrowed.size());
  found.files = std::move(files);
  return found;
}

absl::StatusOr<std::vector<TraceSummary>> SummarizeTraces(query::QueryPool& pool,
                                                          const FoundTraces& found,
                                                          const CallOptions& call) {
  if (found.traces.empty()) return std::vector<TraceSummary>();
  std::string ids;
  for (const auto& [id, start] : found.traces) absl::StrAppend(&ids, ids.empty() ? "" : ",", id);
  std::vector<query::QueryParam> summary_params;
  summary_params.emplace_back(static_cast<uint64_t>(std::max<int64_t>(0, found.oldest_start)));
  summary_params.emplace_back(static_cast<uint64_t>(std::max<int64_t>(0, found.end)));
  summary_params.emplace_back(std::move(ids));
  const std::string summary_sql =
      "WITH t AS (SELECT trace_id, span_id, parent_span_id, name, service_name, status_code,"
      " start_time_unix_nano AS s, CAST(start_time_unix_nano AS HUGEINT) + duration_nano AS e"
      " FROM spans_stored WHERE start_time_unix_nano >= $1 AND start_time_unix_nano < $2"
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
  STRATA_ASSIGN_OR_RETURN(query::QueryResult result,
                          pool.Run(found.files, summary_sql,
                                   Options(call, std::move(summary_params), found.traces.size())));
  STRATA_RETURN_IF_ERROR(CheckShape(result, 10, "trace search"));
  if (result.rows.size() != found.traces.size()) {
    return absl::InternalError(absl::StrCat("trace search: ", found.traces.size(),
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

absl::StatusOr<std::vector<TraceSummary>> SearchTracesBySql(query::QueryPool& pool,
                                                            const storage::Snapshot& snapshot,
                                                            const std::string& data_dir,
                                                            const TraceMatchSql& match,
                                                            const CallOptions& call) {
  const std::chrono::steady_clock::time_point began = std::chrono::steady_clock::now();
  STRATA_ASSIGN_OR_RETURN(const FoundTraces found,
                          FindTracesBySql(pool, snapshot, data_dir, match, call));
  return SummarizeTraces(pool, found, internal::RemainingCall(call, began));
}

}  // namespace strata::api
