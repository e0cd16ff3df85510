// SearchLogs (search.h).

#include <algorithm>
#include <charconv>
#include <chrono>

#include "absl/strings/str_cat.h"
#include "api/log_filter.h"
#include "api/log_rows.h"
#include "api/params.h"
#include "api/search.h"
#include "api/stored_values.h"
#include "common/status_macros.h"

namespace strata::api {
namespace {

using internal::CellInt;
using internal::CellString;
using internal::NextParam;

constexpr std::string_view kCursorPrefix = "v1.";

struct Cursor {
  uint64_t time = 0;
  uint64_t key = 0;
};

std::string EncodeCursor(const Cursor& cursor) {
  return absl::StrCat(std::string(kCursorPrefix), cursor.time, ".", cursor.key);
}

absl::StatusOr<Cursor> DecodeCursor(std::string_view text) {
  auto bad = [&] {
    return absl::InvalidArgumentError(
        absl::StrCat("cursor: not a cursor from a previous page: ", QuoteForError(text)));
  };
  if (text.substr(0, kCursorPrefix.size()) != kCursorPrefix) return bad();
  std::string_view rest = text.substr(kCursorPrefix.size());
  const size_t dot = rest.find('.');
  if (dot == std::string_view::npos) return bad();
  Cursor cursor;
  const std::string_view time = rest.substr(0, dot);
  const std::string_view key = rest.substr(dot + 1);
  auto [time_end, time_ec] = std::from_chars(time.data(), time.data() + time.size(), cursor.time);
  auto [key_end, key_ec] = std::from_chars(key.data(), key.data() + key.size(), cursor.key);
  if (time.empty() || key.empty() || time_ec != std::errc() || key_ec != std::errc() ||
      time_end != time.data() + time.size() || key_end != key.data() + key.size()) {
    return bad();
  }
  return cursor;
}

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

absl::StatusOr<Cursor> CursorAfter(const std::vector<std::optional<std::string>>& row) {
  Cursor cursor;
  STRATA_ASSIGN_OR_RETURN(int64_t time, CellInt(row[log_column::kTime]));
  cursor.time = static_cast<uint64_t>(time);
  const std::string key = CellString(row[log_column::kRowKey]);
  auto [end, ec] = std::from_chars(key.data(), key.data() + key.size(), cursor.key);
  if (ec != std::errc() || end != key.data() + key.size()) {
    return absl::InternalError(absl::StrCat("log search: bad row key \"", key, "\""));
  }
  return cursor;
}

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

// The first slice of the window PageTimeFloor looks at, and how much each
// next slice grows.
constexpr int64_t kFirstSliceNanos = 60'000'000'000;  // one minute
constexpr int64_t kSliceGrowth = 8;

// The time at or after which the page's rows lie: the (limit + 1)-th
// newest time among the matching rows older than the cursor's time (all
// matching rows without a cursor), or the window's start when fewer match.
// The page then reads whole rows, and hashes their row keys, only at or
// after it: a bound parameter, so DuckDB skips the row groups whose time
// statistics end before it, where otherwise every matching row of the
// window would be read whole and hashed to keep the newest few. Rows at the
// cursor's own time are newer than every row counted here, so they can
// only add to the page.
//
// The floor is looked for newest first, in slices of the window that end
// where it ends and grow from one minute eightfold: recent rows are what a
// page shows, and a common match fills the page from the newest minutes,
// whose files are the only ones each query lists. A slice that holds
// more than `limit` matches holds the floor, since every row outside it is
// older than all of them; a rare match costs at most about 8/7 of one scan
// of the whole window, plus a query per slice.
absl::StatusOr<int64_t> PageTimeFloor(query::QueryPool& pool, const storage::Snapshot& snapshot,
                                      const std::string& data_dir, const LogSearch& search,
                                      std::optional<uint64_t> before, const CallOptions& call,
                                      LogSearchStats* stats) {
  const std::chrono::steady_clock::time_point began = std::chrono::steady_clock::now();
  const int64_t upper = before.has_value() && *before < static_cast<uint64_t>(search.end)
                            ? static_cast<int64_t>(*before)
                            : search.end;
  int64_t slice = kFirstSliceNanos;
  while (true) {
    const int64_t lower = upper - search.start <= slice ? search.start : upper - slice;
    std::vector<query::QueryParam> params;
    std::string filters = internal::LogFilterSql(search, &params);
    absl::StrAppend(&filters, " AND time_unix_nano >= ", NextParam(params));
    params.emplace_back(static_cast<uint64_t>(lower));
    absl::StrAppend(&filters, " AND time_unix_nano < ", NextParam(params));
    params.emplace_back(static_cast<uint64_t>(upper));
    const std::string sql = absl::StrCat(
        "SELECT min(time_unix_nano), count(*) FROM (SELECT time_unix_nano FROM logs", " WHERE ",
        filters, " ORDER BY time_unix_nano DESC LIMIT ", search.limit + 1, ")");
    const query::ViewFiles files = LogFilesFor(snapshot, data_dir, lower, upper);
    ++stats->slices;
    stats->floor_files += files.logs.size();
    STRATA_ASSIGN_OR_RETURN(
        query::QueryResult result,
        pool.Run(files, sql,
                 internal::Options(internal::RemainingCall(call, began), std::move(params), 1)));
    stats->floor_ms = MillisSince(began);
    STRATA_RETURN_IF_ERROR(internal::CheckShape(result, 2, "log search floor"));
    if (result.rows.size() != 1) return absl::InternalError("log search floor: no row");
    STRATA_ASSIGN_OR_RETURN(int64_t count, CellInt(result.rows[0][1]));
    if (count > search.limit) return CellInt(result.rows[0][0]);
    if (lower <= search.start) return search.start;
    slice =
        slice > (upper - search.start) / kSliceGrowth ? upper - search.start : slice * kSliceGrowth;
  }
}

}  // namespace

absl::StatusOr<LogPage> SearchLogs(query::QueryPool& pool, const storage::Snapshot& snapshot,
                                   const std::string& data_dir, const LogSearch& search,
                                   const CallOptions& call, LogSearchStats* stats) {
  LogSearchStats unused;
  if (stats == nullptr) stats = &unused;
  *stats = {};
  const std::chrono::steady_clock::time_point began = std::chrono::steady_clock::now();
  std::optional<Cursor> cursor;
  if (!search.cursor.empty()) {
    STRATA_ASSIGN_OR_RETURN(cursor, DecodeCursor(search.cursor));
  }
  STRATA_ASSIGN_OR_RETURN(
      const int64_t floor,
      PageTimeFloor(pool, snapshot, data_dir, search,
                    cursor.has_value() ? std::optional<uint64_t>(cursor->time) : std::nullopt, call,
                    stats));
  // No row of the page is newer than the cursor's time.
  const int64_t page_end = cursor.has_value() && cursor->time < static_cast<uint64_t>(search.end)
                               ? static_cast<int64_t>(cursor->time) + 1
                               : search.end;
  std::vector<query::QueryParam> params;
  std::string filters = internal::LogFilterSql(search, &params);
  absl::StrAppend(&filters, " AND time_unix_nano >= ", NextParam(params));
  params.emplace_back(static_cast<uint64_t>(floor));
  std::string after;
  if (cursor.has_value()) {
    const std::string time_param = NextParam(params);
    params.emplace_back(cursor->time);
    const std::string key_param = NextParam(params);
    params.emplace_back(cursor->key);
    after = absl::StrCat(" WHERE time_unix_nano < ", time_param,
                         " OR (time_unix_nano = ", time_param, " AND row_key < ", key_param, ")");
  }
  const query::ViewFiles page_files = LogFilesFor(snapshot, data_dir, floor, page_end);
  stats->page_files = page_files.logs.size();
  const std::chrono::steady_clock::time_point page_began = std::chrono::steady_clock::now();
  // One row more than the page, to know whether another page follows. The
  // limit is a validated integer, not request text.
  const std::string sql = absl::StrCat(
      "SELECT ", SelectedColumnsSql(),
      " FROM (SELECT *, hash(time_unix_nano, observed_time_unix_nano, severity_number,"
      " severity_text, body_type, body_str, body_int, body_double, body_bool, body_bytes,"
      " trace_id, span_id, flags, event_name, attr_keys, attr_types, attr_str, attr_int,"
      " attr_double, attr_bool, attr_bytes, resource_attr_keys, resource_attr_str,"
      " resource_attr_int, scope_name, scope_version) AS row_key FROM logs"
      " WHERE ",
      filters, ")", after, " ORDER BY time_unix_nano DESC, row_key DESC LIMIT ", search.limit + 1);
  STRATA_ASSIGN_OR_RETURN(
      query::QueryResult result,
      pool.Run(page_files, sql,
               internal::Options(internal::RemainingCall(call, began), std::move(params),
                                 static_cast<size_t>(search.limit + 1))));
  stats->page_ms = MillisSince(page_began);
  STRATA_RETURN_IF_ERROR(internal::CheckShape(result, log_column::kCount, "log search"));
  LogPage page;
  const size_t shown = std::min(result.rows.size(), static_cast<size_t>(search.limit));
  for (size_t i = 0; i < shown; ++i) {
    STRATA_ASSIGN_OR_RETURN(LogEntry entry, ReadLogEntry(result.rows[i], &page.values));
    page.logs.push_back(std::move(entry));
  }
  if (result.rows.size() > shown) {
    STRATA_ASSIGN_OR_RETURN(Cursor cursor, CursorAfter(result.rows[shown - 1]));
    page.next_cursor = EncodeCursor(cursor);
  }
  return page;
}

}  // namespace strata::api
