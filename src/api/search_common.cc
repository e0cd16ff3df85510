#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdlib>

#include "absl/strings/str_cat.h"
#include "api/search.h"
#include "common/status_macros.h"
#include "query/view_files.h"

namespace strata::api {

query::ViewFiles ViewFilesFor(const storage::Snapshot& snapshot, const std::string& data_dir,
                              std::optional<query::EventWindow> spans_window,
                              std::optional<query::EventWindow> logs_window) {
  query::ViewFiles files = query::ViewFilesOf(snapshot, spans_window, logs_window);
  for (auto* list : {&files.spans, &files.logs, &files.metrics}) {
    for (std::string& path : *list) {
      if (!path.starts_with('/')) path = absl::StrCat(data_dir, "/", path);
    }
  }
  return files;
}

namespace internal {

std::string NextParam(const std::vector<query::QueryParam>& params) {
  return absl::StrCat("$", params.size() + 1);
}

void AppendAttributeFilter(const std::string& key, const std::string& value,
                           const std::vector<std::string>& prefixes, std::string* sql,
                           std::vector<query::QueryParam>* params) {
  const std::string key_param = NextParam(*params);
  params->emplace_back(key);
  const std::string str_param = NextParam(*params);
  params->emplace_back(value);
  std::string int_param, double_param, bool_param;
  int64_t as_int = 0;
  if (auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), as_int);
      !value.empty() && ec == std::errc() && end == value.data() + value.size()) {
    int_param = NextParam(*params);
    params->emplace_back(as_int);
  }
  double as_double = 0;
  if (auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), as_double);
      !value.empty() && ec == std::errc() && end == value.data() + value.size() &&
      std::isfinite(as_double)) {
    double_param = NextParam(*params);
    params->emplace_back(as_double);
  }
  if (value == "true" || value == "false") {
    bool_param = NextParam(*params);
    params->emplace_back(value == "true");
  }
  sql->append(" AND (");
  bool first = true;
  for (const std::string& prefix : prefixes) {
    const std::string position = absl::StrCat("list_position(", prefix, "_keys, ", key_param, ")");
    auto term = [&](std::string_view list, const std::string& param) {
      if (param.empty()) return;
      if (!first) sql->append(" OR ");
      first = false;
      absl::StrAppend(sql, prefix, "_", std::string(list), "[", position, "] = ", param);
    };
    term("str", str_param);
    term("int", int_param);
    term("double", double_param);
    term("bool", bool_param);
  }
  sql->append(")");
}

absl::StatusOr<int64_t> CellInt(const std::optional<std::string>& cell) {
  if (!cell.has_value()) return 0;
  int64_t value = 0;
  auto [end, ec] = std::from_chars(cell->data(), cell->data() + cell->size(), value);
  if (ec != std::errc() || end != cell->data() + cell->size()) {
    return absl::InternalError(absl::StrCat("query result: not an int64: \"", *cell, "\""));
  }
  return value;
}

absl::StatusOr<double> CellDouble(const std::optional<std::string>& cell) {
  if (!cell.has_value()) return std::nan("");
  const std::string& text = *cell;
  char* end = nullptr;
  const double value = std::strtod(text.c_str(), &end);
  if (text.empty() || end != text.c_str() + text.size()) {
    return absl::InternalError(absl::StrCat("query result: not a number: \"", text, "\""));
  }
  return value;
}

std::string CellString(const std::optional<std::string>& cell) {
  return cell.has_value() ? *cell : std::string();
}

query::QueryOptions Options(const CallOptions& call, std::vector<query::QueryParam> params,
                            size_t max_rows) {
  query::QueryOptions options;
  options.deadline = call.deadline;
  options.max_rows = max_rows;
  options.params = std::move(params);
  return options;
}

CallOptions RemainingCall(const CallOptions& call, std::chrono::steady_clock::time_point began) {
  if (call.deadline.count() <= 0) return call;
  const auto spent = std::chrono::duration_cast<std::chrono::milliseconds>(
      std::chrono::steady_clock::now() - began);
  CallOptions remaining = call;
  remaining.deadline = std::max(std::chrono::milliseconds(1), call.deadline - spent);
  return remaining;
}

absl::Status CheckShape(const query::QueryResult& result, size_t columns, std::string_view what) {
  for (const auto& row : result.rows) {
    if (row.size() != columns) {
      return absl::InternalError(absl::StrCat(std::string(what), ": result row has ", row.size(),
                                              " columns, expected ", columns));
    }
  }
  return absl::OkStatus();
}

std::string AttributeSetSql(const std::string& prefix) {
  const std::string& p = prefix;
  return absl::StrCat("array_to_string(list_transform(range(1, len(", p,
                      "_keys) + 1), lambda i: ", p, "_keys[i] || chr(31) || coalesce(", p,
                      "_str[i], CAST(", p, "_int[i] AS VARCHAR), CAST(", p,
                      "_double[i] AS VARCHAR), CAST(", p, "_bool[i] AS VARCHAR), '')), chr(30))");
}

// A point's exemplars as one text: "time|value|trace|span" joined by ';'
// (value empty when the exemplar had none; ids lowercase hex or empty).
const char kExemplarsSql[] =
    "array_to_string(list_transform(range(1, len(exemplar_time_unix_nano) + 1), lambda i:"
    " CAST(exemplar_time_unix_nano[i] AS VARCHAR) || '|' ||"
    " coalesce(CAST(exemplar_value_double[i] AS VARCHAR), CAST(exemplar_value_int[i] AS VARCHAR),"
    " '') || '|' || coalesce(lower(hex(exemplar_trace_id[i])), '') || '|' ||"
    " coalesce(lower(hex(exemplar_span_id[i])), '')), ';')";

absl::Status ParseExemplars(std::string_view text, std::vector<MetricExemplar>* out) {
  size_t begin = 0;
  while (begin < text.size()) {
    size_t end = text.find(';', begin);
    if (end == std::string_view::npos) end = text.size();
    const std::string_view one = text.substr(begin, end - begin);
    begin = end + 1;
    std::string_view fields[4];
    size_t field_begin = 0;
    for (int f = 0; f < 4; ++f) {
      size_t bar = f == 3 ? one.size() : one.find('|', field_begin);
      if (bar == std::string_view::npos) {
        return absl::InternalError(
            absl::StrCat("metric query: bad exemplar \"", std::string(one), "\""));
      }
      fields[f] = one.substr(field_begin, bar - field_begin);
      field_begin = bar + 1;
    }
    MetricExemplar exemplar;
    STRATA_ASSIGN_OR_RETURN(exemplar.time, CellInt(std::string(fields[0])));
    if (!fields[1].empty()) {
      STRATA_ASSIGN_OR_RETURN(exemplar.value, CellDouble(std::string(fields[1])));
    }
    exemplar.trace_id = std::string(fields[2]);
    exemplar.span_id = std::string(fields[3]);
    out->push_back(std::move(exemplar));
  }
  return absl::OkStatus();
}

Attributes SplitAttributeSet(std::string_view text) {
  Attributes out;
  size_t begin = 0;
  while (begin < text.size()) {
    size_t end = text.find('\x1e', begin);
    if (end == std::string_view::npos) end = text.size();
    const std::string_view pair = text.substr(begin, end - begin);
    const size_t separator = pair.find('\x1f');
    if (separator == std::string_view::npos) {
      out.emplace_back(std::string(pair), std::string());
    } else {
      out.emplace_back(std::string(pair.substr(0, separator)),
                       std::string(pair.substr(separator + 1)));
    }
    begin = end + 1;
  }
  return out;
}

}  // namespace internal
}  // namespace strata::api
