// TakeLogFilters and LogFilterSql (log_filter.h).

#include "api/log_filter.h"

#include "absl/strings/str_cat.h"
#include "otlp/any_value_path.h"

namespace strata::api {
namespace {

using internal::NextParam;

absl::Status TakeOptional(QueryParams& params, std::string_view name,
                          std::optional<std::string>* out) {
  absl::StatusOr<std::optional<std::string>> value = params.Take(name);
  if (!value.ok()) return value.status();
  *out = *std::move(value);
  return absl::OkStatus();
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
                  ")) OR (body_type IN (5, 6) AND list_bool_or(list_transform("
                  "otlp_value_strings(body_type, body_bytes), lambda s: contains(lower(s), lower(",
                  needle, "))))))");
}

// body.<path>=. Only array and kvlist bodies have paths; the query
// adapter's otlp_value_path_equals walks the stored AnyValue and compares
// typed, as attribute filters do (otlp/any_value_path.h).
void AppendBodyPathFilter(const std::string& path, const std::string& value, std::string* filters,
                          std::vector<query::QueryParam>* params) {
  const std::string path_param = NextParam(*params);
  params->emplace_back(path);
  const std::string value_param = NextParam(*params);
  params->emplace_back(value);
  absl::StrAppend(filters, " AND body_type IN (5, 6) AND otlp_value_path_equals(body_type,",
                  " body_bytes, ", path_param, ", ", value_param, ")");
}

}  // namespace

absl::Status TakeLogFilters(QueryParams& params, const NowFunction& now, LogSearch* search) {
  absl::StatusOr<TimeWindow> window = TakeWindow(params, now);
  if (!window.ok()) return window.status();
  search->start = window->start;
  search->end = window->end;
  return TakeLogRecordFilters(params, search);
}

absl::Status TakeLogRecordFilters(QueryParams& params, LogSearch* search) {
  if (absl::Status s = TakeOptional(params, "service", &search->service); !s.ok()) return s;
  std::optional<std::string> text;
  if (absl::Status s = TakeOptional(params, "severity_min", &text); !s.ok()) return s;
  if (text.has_value()) {
    absl::StatusOr<int32_t> severity = ParseSeverity("severity_min", *text);
    if (!severity.ok()) return severity.status();
    search->severity_min = *severity;
  }
  if (absl::Status s = TakeOptional(params, "q", &search->text); !s.ok()) return s;
  if (absl::Status s = TakeOptional(params, "trace_id", &text); !s.ok()) return s;
  if (text.has_value()) {
    absl::StatusOr<otlp::TraceId> id = ParseTraceId("trace_id", *text);
    if (!id.ok()) return id.status();
    search->trace_id = *id;
  }
  absl::StatusOr<Attributes> attributes = params.TakeAttributes();
  if (!attributes.ok()) return attributes.status();
  search->attributes = *std::move(attributes);
  absl::StatusOr<Attributes> body_paths = params.TakePrefixed("body.");
  if (!body_paths.ok()) return body_paths.status();
  if (body_paths->size() > kMaxBodyPathFilters) {
    return absl::InvalidArgumentError(
        absl::StrCat("body.: more than ", kMaxBodyPathFilters, " body.<path> filters"));
  }
  for (const auto& [path, value] : *body_paths) {
    const std::string name = absl::StrCat("body.", path);
    if (path.size() > kMaxBodyPathBytes) {
      return absl::InvalidArgumentError(
          absl::StrCat(QuoteForError(name), ": path longer than ", kMaxBodyPathBytes, " bytes"));
    }
    if (absl::StatusOr<std::vector<std::string>> parsed = otlp::ParseValuePath(path);
        !parsed.ok()) {
      return absl::InvalidArgumentError(absl::StrCat(name, ": ", parsed.status().message()));
    }
  }
  search->body_paths = *std::move(body_paths);
  return absl::OkStatus();
}

namespace internal {

std::string LogFilterSql(const LogSearch& search, std::vector<query::QueryParam>* params) {
  const std::string start_param = NextParam(*params);
  params->emplace_back(static_cast<uint64_t>(search.start));
  const std::string end_param = NextParam(*params);
  params->emplace_back(static_cast<uint64_t>(search.end));
  return absl::StrCat("time_unix_nano >= ", start_param, " AND time_unix_nano < ", end_param,
                      LogRecordFilterSql(search, params));
}

std::string LogRecordFilterSql(const LogSearch& search, std::vector<query::QueryParam>* params) {
  std::string filters;
  if (search.service.has_value()) {
    absl::StrAppend(&filters, " AND service_name = ", NextParam(*params));
    params->emplace_back(*search.service);
  }
  if (search.severity_min.has_value()) {
    absl::StrAppend(&filters, " AND severity_number >= ", NextParam(*params));
    params->emplace_back(static_cast<int64_t>(*search.severity_min));
  }
  if (search.text.has_value()) AppendTextFilter(*search.text, &filters, params);
  if (search.trace_id.has_value()) {
    absl::StrAppend(&filters, " AND trace_id = ", NextParam(*params));
    params->emplace_back(
        query::Blob{std::string(search.trace_id->begin(), search.trace_id->end())});
  }
  for (const auto& [key, value] : search.attributes) {
    AppendAttributeFilter(key, value, {"attr", "resource_attr"}, &filters, params);
  }
  for (const auto& [path, value] : search.body_paths) {
    AppendBodyPathFilter(path, value, &filters, params);
  }
  return filters;
}

}  // namespace internal
}  // namespace strata::api
