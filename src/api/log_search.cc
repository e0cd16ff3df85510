// SearchLogs (search.h).

#include <algorithm>
#include <charconv>
#include <chrono>
#include <set>
#include <string_view>

#include "absl/strings/str_cat.h"
#include "api/log_cursor.h"
#include "api/log_filter.h"
#include "api/log_records.h"
#include "api/log_rows.h"
#include "api/params.h"
#include "api/search.h"
#include "api/stored_values.h"
#include "common/status_macros.h"
#include "query/duckdb_engine.h"

namespace strata::api {
namespace {

using internal::CellInt;
using internal::CellString;
using internal::NextParam;

}  // namespace

// Shared with the live tail (log_rows.h).
namespace internal {

std::string SelectedColumnsSql() {
  return absl::StrCat(
      "time_unix_nano, observed_time_unix_nano, severity_number, severity_text, body_type, ",
      internal::StoredValueSql("body", ""),
      ", service_name, lower(hex(trace_id)), lower(hex(span_id)), ",
      internal::AttributeFamilySql("attr"), ", ", internal::AttributeFamilySql("scope_attr"), ", ",
      internal::AttributeFamilySql("resource_attr"), ", row_key");
}

absl::StatusOr<LogEntry> ReadLogEntry(const std::vector<std::optional<std::string>>& row,
                                      LogValues* values) {
  LogEntry entry;
  STRATA_ASSIGN_OR_RETURN(entry.time, CellInt(row[log_column::kTime]));
  STRATA_ASSIGN_OR_RETURN(entry.observed_time, CellInt(row[log_column::kObservedTime]));
  STRATA_ASSIGN_OR_RETURN(int64_t severity, CellInt(row[log_column::kSeverityNumber]));
  entry.severity_number = static_cast<int32_t>(severity);
  entry.severity_text = CellString(row[log_column::kSeverityText]);
  entry.service = CellString(row[log_column::kService]);
  entry.trace_id = CellString(row[log_column::kTraceId]);
  entry.span_id = CellString(row[log_column::kSpanId]);
  STRATA_ASSIGN_OR_RETURN(int64_t body_type, CellInt(row[log_column::kBodyType]));
  STRATA_RETURN_IF_ERROR(internal::AppendStoredValue(body_type, CellString(row[log_column::kBody]),
                                                     values, &values->bodies));
  entry.body = otlp::LastRow(values->bodies);
  STRATA_RETURN_IF_ERROR(internal::AppendStoredAttributes(CellString(row[log_column::kAttributes]),
                                                          values, &values->log_attributes,
                                                          &entry.attributes));
  STRATA_RETURN_IF_ERROR(
      internal::AppendStoredAttributes(CellString(row[log_column::kScopeAttributes]), values,
                                       &values->scope_attributes, &entry.scope_attributes));
  STRATA_RETURN_IF_ERROR(
      internal::AppendStoredAttributes(CellString(row[log_column::kResourceAttributes]), values,
                                       &values->resource_attributes, &entry.resource_attributes));
  return entry;
}

}  // namespace internal

namespace {

using internal::ReadLogEntry;
using internal::SelectedColumnsSql;
namespace log_column = internal::log_column;

using internal::KeyedLogEntry;
using internal::LogPosition;

// The files whose records may lie in [start, end) (both within a validated
// window, so not negative).
query::ViewFiles LogFilesFor(const storage::Snapshot& snapshot, const std::string& data_dir,
                             int64_t start, int64_t end) {
  return ViewFilesFor(snapshot, data_dir, std::nullopt,
                      query::EventWindow{static_cast<uint64_t>(std::max<int64_t>(0, start)),
                                         static_cast<uint64_t>(std::max<int64_t>(0, end))});
}

double MillisSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
      .count();
}

// "SELECT filename, file_row_number, time_unix_nano" of the matching
// records of `files` (the logs files listed) WHERE `filters`: read straight
// from the files, whose row numbers the logs view does not show.
std::string PositionsSql(const query::ViewFiles& files, const std::string& filters) {
  std::string list;
  for (const std::string& file : files.logs) {
    absl::StrAppend(&list, list.empty() ? "" : ", ", query::SqlLiteral(file));
  }
  return absl::StrCat("SELECT filename, file_row_number, time_unix_nano FROM read_parquet([", list,
                      "], filename = true, file_row_number = true) WHERE row_kind = 0 AND ",
                      filters);
}

absl::StatusOr<std::vector<LogPosition>> ReadPositions(const query::QueryResult& result) {
  STRATA_RETURN_IF_ERROR(internal::CheckShape(result, 3, "log search positions"));
  std::vector<LogPosition> out;
  out.reserve(result.rows.size());
  for (const auto& row : result.rows) {
    LogPosition p;
    p.file = CellString(row[0]);
    STRATA_ASSIGN_OR_RETURN(int64_t number, CellInt(row[1]));
    STRATA_ASSIGN_OR_RETURN(int64_t time, CellInt(row[2]));
    p.row = static_cast<uint64_t>(number);
    p.time = static_cast<uint64_t>(time);
    out.push_back(std::move(p));
  }
  return out;
}

// The first slice of the window NewestMatches looks at, and how much each
// next slice grows.
constexpr int64_t kFirstSliceNanos = 60'000'000'000;  // one minute
constexpr int64_t kSliceGrowth = 8;

// The positions of the (limit + 1) newest matches older than `upper` (all
// of them when fewer match), newest first; rows of equal time in no
// particular order.
//
// Looked for newest first, in slices of the window that end at `upper` and
// grow from one minute eightfold: recent rows are what a page shows, and a
// common match fills the page from the newest minutes, whose files are the
// only ones each query lists. A slice that holds more than `limit` matches
// holds them all, since every row outside it is older; a rare match costs
// at most about 8/7 of one scan of the whole window, plus a query per
// slice. The queries read only the filter columns and the time.
absl::StatusOr<std::vector<LogPosition>> NewestMatches(
    query::QueryPool& pool, const storage::Snapshot& snapshot, const std::string& data_dir,
    const LogSearch& search, int64_t upper, std::chrono::steady_clock::time_point began,
    const CallOptions& call, LogSearchStats* stats) {
  int64_t slice = kFirstSliceNanos;
  while (true) {
    const int64_t lower = upper - search.start <= slice ? search.start : upper - slice;
    std::vector<query::QueryParam> params;
    std::string filters = internal::LogFilterSql(search, &params);
    absl::StrAppend(&filters, " AND time_unix_nano >= ", NextParam(params));
    params.emplace_back(static_cast<uint64_t>(lower));
    absl::StrAppend(&filters, " AND time_unix_nano < ", NextParam(params));
    params.emplace_back(static_cast<uint64_t>(upper));
    const query::ViewFiles files = LogFilesFor(snapshot, data_dir, lower, upper);
    ++stats->slices;
    stats->floor_files += files.logs.size();
    std::vector<LogPosition> found;
    if (!files.logs.empty()) {
      // The limit is a validated integer, not request text.
      const std::string sql = absl::StrCat(
          PositionsSql(files, filters), " ORDER BY time_unix_nano DESC LIMIT ", search.limit + 1);
      STRATA_ASSIGN_OR_RETURN(
          query::QueryResult result,
          pool.Run(files, sql,
                   internal::Options(internal::RemainingCall(call, began), std::move(params),
                                     static_cast<size_t>(search.limit + 1))));
      STRATA_ASSIGN_OR_RETURN(found, ReadPositions(result));
    }
    if (static_cast<int64_t>(found.size()) > search.limit || lower <= search.start) return found;
    slice =
        slice > (upper - search.start) / kSliceGrowth ? upper - search.start : slice * kSliceGrowth;
  }
}

// The positions of every match at time `a` or `b` (equal when one time).
absl::StatusOr<std::vector<LogPosition>> MatchesAt(query::QueryPool& pool,
                                                   const storage::Snapshot& snapshot,
                                                   const std::string& data_dir,
                                                   const LogSearch& search, uint64_t a, uint64_t b,
                                                   std::chrono::steady_clock::time_point began,
                                                   const CallOptions& call) {
  std::vector<query::QueryParam> params;
  std::string filters = internal::LogFilterSql(search, &params);
  // The range is what DuckDB pushes into the scan (an IN list is not), so
  // the other filters run only on rows at those times.
  const std::string low = NextParam(params);
  params.emplace_back(std::min(a, b));
  const std::string high = NextParam(params);
  params.emplace_back(std::max(a, b));
  absl::StrAppend(&filters, " AND time_unix_nano >= ", low, " AND time_unix_nano <= ", high,
                  " AND (time_unix_nano = ", low, " OR time_unix_nano = ", high, ")");
  const query::ViewFiles files =
      LogFilesFor(snapshot, data_dir, static_cast<int64_t>(std::min(a, b)),
                  static_cast<int64_t>(std::max(a, b)) + 1);
  if (files.logs.empty()) return std::vector<LogPosition>{};
  const std::string sql =
      absl::StrCat(PositionsSql(files, filters), " LIMIT ", search.max_tie_rows + 1);
  STRATA_ASSIGN_OR_RETURN(
      query::QueryResult result,
      pool.Run(files, sql,
               internal::Options(internal::RemainingCall(call, began), std::move(params),
                                 static_cast<size_t>(search.max_tie_rows + 1))));
  if (result.rows.size() > static_cast<size_t>(search.max_tie_rows)) {
    return absl::FailedPreconditionError(
        absl::StrCat("log search: more than ", search.max_tie_rows,
                     " matching records share one time_unix_nano (",
                     a == b ? "" : absl::StrCat(a, " or "), b, "); narrow the search"));
  }
  return ReadPositions(result);
}

bool Newer(const KeyedLogEntry& x, const KeyedLogEntry& y) {
  if (x.entry.time != y.entry.time) return x.entry.time > y.entry.time;
  return x.key > y.key;
}

}  // namespace

absl::StatusOr<LogPage> SearchLogs(query::QueryPool& pool, FileSystem& fs,
                                   const storage::Snapshot& snapshot, const std::string& data_dir,
                                   const LogSearch& search, const CallOptions& call,
                                   LogSearchStats* stats) {
  LogSearchStats unused;
  if (stats == nullptr) stats = &unused;
  *stats = {};
  const std::chrono::steady_clock::time_point began = std::chrono::steady_clock::now();
  std::optional<internal::LogCursor> cursor;
  if (!search.cursor.empty()) {
    STRATA_ASSIGN_OR_RETURN(cursor, internal::DecodeLogCursor(search.cursor));
  }
  // The rows older than the cursor's time; those at its time come from the
  // ties query.
  const bool cursor_in_window = cursor.has_value() &&
                                cursor->time >= static_cast<uint64_t>(search.start) &&
                                cursor->time < static_cast<uint64_t>(search.end);
  const int64_t upper = cursor.has_value() && cursor->time < static_cast<uint64_t>(search.end)
                            ? static_cast<int64_t>(cursor->time)
                            : search.end;
  std::vector<LogPosition> positions;
  if (upper > search.start) {
    STRATA_ASSIGN_OR_RETURN(
        positions, NewestMatches(pool, snapshot, data_dir, search, upper, began, call, stats));
  }
  // Every match at the oldest time the page may end in, and at the
  // cursor's: their keys decide which of them the page shows.
  std::optional<uint64_t> floor;
  if (static_cast<int64_t>(positions.size()) > search.limit) {
    floor =
        std::min_element(positions.begin(), positions.end(),
                         [](const LogPosition& x, const LogPosition& y) { return x.time < y.time; })
            ->time;
    std::erase_if(positions, [&](const LogPosition& p) { return p.time == *floor; });
  }
  stats->floor_ms = MillisSince(began);
  const std::chrono::steady_clock::time_point ties_began = std::chrono::steady_clock::now();
  if (floor.has_value() || cursor_in_window) {
    const uint64_t a = floor.value_or(cursor_in_window ? cursor->time : 0);
    const uint64_t b = cursor_in_window ? cursor->time : a;
    STRATA_ASSIGN_OR_RETURN(std::vector<LogPosition> ties,
                            MatchesAt(pool, snapshot, data_dir, search, a, b, began, call));
    for (LogPosition& p : ties) positions.push_back(std::move(p));
  }
  stats->ties_ms = MillisSince(ties_began);
  const std::chrono::steady_clock::time_point read_began = std::chrono::steady_clock::now();
  LogPage page;
  std::vector<KeyedLogEntry> rows;
  if (!positions.empty()) {
    STRATA_ASSIGN_OR_RETURN(
        rows, internal::ReadLogRecords(fs, internal::LogsFileBatchIds(snapshot, data_dir),
                                       positions, &page.values));
  }
  stats->rows_read = rows.size();
  std::set<std::string_view> files;
  for (const LogPosition& p : positions) files.insert(p.file);
  stats->page_files = files.size();
  // Rows at the cursor's time come after it only when their key is lower,
  // or equal (an identical record) beyond the ones already shown.
  if (cursor.has_value()) {
    uint64_t skip = cursor->shown;
    std::sort(rows.begin(), rows.end(), Newer);
    std::erase_if(rows, [&](const KeyedLogEntry& r) {
      if (static_cast<uint64_t>(r.entry.time) != cursor->time) return false;
      if (r.key > cursor->key) return true;
      if (r.key == cursor->key && skip > 0) {
        --skip;
        return true;
      }
      return false;
    });
  }
  std::stable_sort(rows.begin(), rows.end(), Newer);
  const size_t shown = std::min(rows.size(), static_cast<size_t>(search.limit));
  for (size_t i = 0; i < shown; ++i) page.logs.push_back(std::move(rows[i].entry));
  if (rows.size() > shown) {
    const KeyedLogEntry& last = rows[shown - 1];
    internal::LogCursor next{static_cast<uint64_t>(page.logs.back().time), last.key, 0};
    for (size_t i = shown; i-- > 0 && rows[i].key == next.key &&
                           static_cast<uint64_t>(page.logs[i].time) == next.time;) {
      ++next.shown;
    }
    if (cursor.has_value() && cursor->time == next.time && cursor->key == next.key) {
      next.shown += cursor->shown;
    }
    page.next_cursor = internal::EncodeLogCursor(next);
  }
  stats->page_ms = MillisSince(read_began);
  return page;
}

}  // namespace strata::api
