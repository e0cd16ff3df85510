// SearchLogs (search.h).

#include <charconv>

#include "absl/strings/str_cat.h"
#include "api/params.h"
#include "api/search.h"
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
  if (search.text.has_value()) {
    absl::StrAppend(&filters, " AND contains(lower(body_str), lower(", NextParam(params), "))");
    params.emplace_back(*search.text);
  }
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
      "SELECT time_unix_nano, observed_time_unix_nano, severity_number, severity_text,"
      " coalesce(body_str, CAST(body_int AS VARCHAR), CAST(body_double AS VARCHAR),"
      " CAST(body_bool AS VARCHAR), ''), service_name, lower(hex(trace_id)), lower(hex(span_id)),",
      internal::AttributeSetSql("attr"),
      ", row_key FROM (SELECT *, hash(time_unix_nano, observed_time_unix_nano, severity_number,"
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
  STRATA_RETURN_IF_ERROR(internal::CheckShape(result, 10, "log search"));
  LogPage page;
  const size_t shown = std::min(result.rows.size(), static_cast<size_t>(search.limit));
  for (size_t i = 0; i < shown; ++i) {
    const auto& row = result.rows[i];
    LogEntry entry;
    STRATA_ASSIGN_OR_RETURN(entry.time, CellInt(row[0]));
    STRATA_ASSIGN_OR_RETURN(entry.observed_time, CellInt(row[1]));
    STRATA_ASSIGN_OR_RETURN(int64_t severity, CellInt(row[2]));
    entry.severity_number = static_cast<int32_t>(severity);
    entry.severity_text = CellString(row[3]);
    entry.body = CellString(row[4]);
    entry.service = CellString(row[5]);
    entry.trace_id = CellString(row[6]);
    entry.span_id = CellString(row[7]);
    entry.attributes = internal::SplitAttributeSet(CellString(row[8]));
    page.logs.push_back(std::move(entry));
  }
  if (result.rows.size() > shown) {
    const auto& last = result.rows[shown - 1];
    Cursor cursor;
    STRATA_ASSIGN_OR_RETURN(int64_t time, CellInt(last[0]));
    cursor.time = static_cast<uint64_t>(time);
    const std::string key = CellString(last[9]);
    auto [end, ec] = std::from_chars(key.data(), key.data() + key.size(), cursor.key);
    if (ec != std::errc() || end != key.data() + key.size()) {
      return absl::InternalError(absl::StrCat("log search: bad row key \"", key, "\""));
    }
    page.next_cursor = EncodeCursor(cursor);
  }
  return page;
}

}  // namespace strata::api
