// SearchLogs (search.h).

#include <charconv>

#include "absl/strings/str_cat.h"
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

// q=. A string body is searched in its column; an array or kvlist body is
// stored as its encoded AnyValue, and the DuckDB function
// otlp_value_strings (registered by the query adapter, duckdb_engine.h)
// lists the string values inside it, so the whole search stays one
// parameterised SQL statement: the page, its limit and its cursor work as
// for every other filter, and DuckDB's lower() folds case on both sides
// the same way for every string. (A C++ filter after the query would have
// had to fetch and decode every candidate row of the window and page
// around the rows it drops.)
void AppendTextFilter(const std::string& text, std::string* filters,
                      std::vector<query::QueryParam>* params) {
  const std::string needle = NextParam(*params);
  params->emplace_back(text);
  absl::StrAppend(filters, " AND (contains(lower(body_str), lower(", needle,
                  ")) OR list_bool_or(list_transform(otlp_value_strings(body_type, body_bytes),"
                  " lambda s: contains(lower(s), lower(",
                  needle, ")))))");
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

}  // namespace

absl::StatusOr<LogPage> SearchLogs(query::QueryPool& pool, const query::ViewFiles& files,
                                   const LogSearch& search, const CallOptions& call) {
  std::vector<query::QueryParam> params;
  params.emplace_back(static_cast<uint64_t>(search.start));
  params.emplace_back(static_cast<uint64_t>(search.end));
  std::string filters;
  if (search.service.has_value()) {
    absl::StrAppend(&filters, " AND service_name = ", NextParam(params));
    params.emplace_back(*search.service);
  }
  if (search.severity_min.has_value()) {
    absl::StrAppend(&filters, " AND severity_number >= ", NextParam(params));
    params.emplace_back(static_cast<int64_t>(*search.severity_min));
  }
  if (search.text.has_value()) internal::AppendTextFilter(*search.text, &filters, &params);
  if (search.trace_id.has_value()) {
    absl::StrAppend(&filters, " AND trace_id = ", NextParam(params));
    params.emplace_back(query::Blob{std::string(search.trace_id->begin(), search.trace_id->end())});
  }
  for (const auto& [key, value] : search.attributes) {
    internal::AppendAttributeFilter(key, value, {"attr", "resource_attr"}, &filters, &params);
  }
  std::string after;
  if (!search.cursor.empty()) {
    STRATA_ASSIGN_OR_RETURN(Cursor cursor, DecodeCursor(search.cursor));
    const std::string time_param = NextParam(params);
    params.emplace_back(cursor.time);
    const std::string key_param = NextParam(params);
    params.emplace_back(cursor.key);
    after = absl::StrCat(" WHERE time_unix_nano < ", time_param,
                         " OR (time_unix_nano = ", time_param, " AND row_key < ", key_param, ")");
  }
  // One row more than the page, to know whether another page follows. The
  // limit is a validated integer, not request text.
  const std::string sql = absl::StrCat(
      "SELECT ", SelectedColumnsSql(),
      " FROM (SELECT *, hash(time_unix_nano, observed_time_unix_nano, severity_number,"
      " severity_text, body_type, body_str, body_int, body_double, body_bool, body_bytes,"
      " trace_id, span_id, flags, event_name, attr_keys, attr_types, attr_str, attr_int,"
      " attr_double, attr_bool, attr_bytes, resource_attr_keys, resource_attr_str,"
      " resource_attr_int, scope_name, scope_version) AS row_key FROM logs"
      " WHERE time_unix_nano >= $1 AND time_unix_nano < $2",
      filters, ")", after, " ORDER BY time_unix_nano DESC, row_key DESC LIMIT ", search.limit + 1);
  STRATA_ASSIGN_OR_RETURN(
      query::QueryResult result,
      pool.Run(files, sql,
               internal::Options(call, std::move(params), static_cast<size_t>(search.limit + 1))));
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
