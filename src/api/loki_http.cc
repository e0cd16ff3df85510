// The helpers the Loki endpoints share (loki_http.h).

#include "api/loki_http.h"

#include <algorithm>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "api/loki_query.h"
#include "common/absl_view.h"
#include "common/status_macros.h"
#include "compat/logql/check.h"
#include "compat/logql/parser.h"

namespace strata::api {
namespace {}  // namespace

server::HttpResponse LokiError(const absl::Status& status) {
  server::HttpResponse response;
  switch (status.code()) {
    case absl::StatusCode::kInvalidArgument:
    case absl::StatusCode::kResourceExhausted:
    case absl::StatusCode::kUnimplemented:
    case absl::StatusCode::kFailedPrecondition:
    case absl::StatusCode::kOutOfRange:
      response.status = 400;
      break;
    case absl::StatusCode::kDeadlineExceeded:
      response.status = 504;
      break;
    case absl::StatusCode::kUnavailable:
      response.status = 503;
      break;
    default:
      response.status = 500;
  }
  response.content_type = "text/plain; charset=utf-8";
  response.body = absl::StrCat(status.message(), "\n");
  return response;
}

absl::StatusOr<LokiWindow> TakeLokiWindow(QueryParams& params, int64_t now) {
  LokiWindow window;
  window.end = now;
  STRATA_ASSIGN_OR_RETURN(std::optional<std::string> end, params.Take("end"));
  if (end.has_value() && !end->empty()) {
    STRATA_ASSIGN_OR_RETURN(window.end, ParseLokiTime("end", *end));
  }
  int64_t since = 3600 * kLokiNanos;
  STRATA_ASSIGN_OR_RETURN(std::optional<std::string> since_text, params.Take("since"));
  if (since_text.has_value() && !since_text->empty()) {
    STRATA_ASSIGN_OR_RETURN(since, ParseLokiDuration("since", *since_text));
  }
  window.start = std::max<int64_t>(0, window.end - since);
  STRATA_ASSIGN_OR_RETURN(std::optional<std::string> start, params.Take("start"));
  if (start.has_value() && !start->empty()) {
    STRATA_ASSIGN_OR_RETURN(window.start, ParseLokiTime("start", *start));
  }
  if (window.end < window.start) {
    return absl::InvalidArgumentError("end timestamp must not be before or equal to start time");
  }
  return window;
}

absl::StatusOr<std::unique_ptr<compat::logql::Expr>> TakeLokiQuery(QueryParams& params) {
  STRATA_ASSIGN_OR_RETURN(std::optional<std::string> text, params.Take("query"));
  if (!text.has_value() || text->empty()) {
    return absl::InvalidArgumentError("parse error : syntax error: unexpected $end");
  }
  absl::StatusOr<std::unique_ptr<compat::logql::Expr>> expr = compat::logql::ParseLogQL(*text);
  if (!expr.ok())
    return absl::InvalidArgumentError(absl::StrCat("parse error ", expr.status().message()));
  STRATA_RETURN_IF_ERROR(compat::logql::CheckLogQL(**expr));
  return expr;
}

absl::StatusOr<std::unique_ptr<compat::logql::Expr>> TakeLokiSelector(QueryParams& params,
                                                                      std::string_view name) {
  STRATA_ASSIGN_OR_RETURN(std::optional<std::string> text, params.Take(name));
  if (!text.has_value() || text->empty()) return std::unique_ptr<compat::logql::Expr>();
  absl::StatusOr<std::unique_ptr<compat::logql::Expr>> expr = compat::logql::ParseLogQL(*text);
  if (!expr.ok())
    return absl::InvalidArgumentError(absl::StrCat("parse error ", expr.status().message()));
  if ((*expr)->kind != compat::logql::Expr::Kind::kLog) {
    return absl::InvalidArgumentError(absl::StrCat(Absl(name), ": a stream selector is needed"));
  }
  return expr;
}

absl::StatusOr<int64_t> TakeLokiCount(QueryParams& params, std::string_view name, int64_t fallback,
                                      int64_t max) {
  STRATA_ASSIGN_OR_RETURN(std::optional<std::string> text, params.Take(name));
  if (!text.has_value() || text->empty()) return fallback;
  int64_t value = 0;
  if (!absl::SimpleAtoi(*text, &value) || value < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("invalid ", Absl(name), " ", QuoteForError(*text)));
  }
  if (value > max) {
    return absl::InvalidArgumentError(
        absl::StrCat(Absl(name), " ", value, " is above the limit of ", max));
  }
  return value == 0 ? fallback : value;
}

std::string LokiWindowSql(const LokiWindow& window, std::vector<query::QueryParam>* params) {
  std::string sql = absl::StrCat("time_unix_nano >= ", internal::NextParam(*params));
  params->emplace_back(static_cast<uint64_t>(window.start));
  absl::StrAppend(&sql, " AND time_unix_nano < ", internal::NextParam(*params));
  params->emplace_back(static_cast<uint64_t>(window.end));
  return sql;
}

query::ViewFiles LokiLogFiles(const storage::Snapshot& snapshot, const std::string& data_dir,
                              const LokiWindow& window) {
  return ViewFilesFor(
      snapshot, data_dir, std::nullopt,
      query::EventWindow{static_cast<uint64_t>(window.start), static_cast<uint64_t>(window.end)});
}

void WriteLokiLabels(const compat::logql::Labels& labels, otlp::JsonWriter* json) {
  json->BeginObject();
  for (const auto& [name, value] : labels) {
    json->Key(name);
    json->String(value);
  }
  json->EndObject();
}

}  // namespace strata::api
