#pragma once

// What the files of the Loki API (loki_endpoints.cc, loki_index.cc,
// loki_detected.cc, loki_push_endpoint.cc) share: Loki's error answers, the
// window, query, limit and label parameters, and the SQL of a window over
// the logs view.
//
// Thread-safety: reentrant. Errors: InvalidArgument for a bad parameter.

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "api/api_respond.h"
#include "api/params.h"
#include "api/search.h"
#include "compat/logql/ast.h"
#include "compat/logql/pipeline.h"
#include "otlp/json_writer.h"

namespace strata::api {

inline constexpr int64_t kLokiNanos = 1'000'000'000;

// Loki writes errors as text: the message and a newline; 400 for a bad
// request, 504 past the deadline.
server::HttpResponse LokiError(const absl::Status& status);

#define LOKI_ASSIGN_OR_RESPOND(lhs, expr) \
  LOKI_ASSIGN_IMPL(API_CONCAT(loki_or_, __LINE__), lhs, expr)
#define LOKI_ASSIGN_IMPL(tmp, lhs, expr)         \
  auto tmp = (expr);                             \
  if (!tmp.ok()) return LokiError(tmp.status()); \
  lhs = *std::move(tmp)
#define LOKI_RETURN_IF_ERROR(expr)                          \
  do {                                                      \
    const absl::Status loki_status_ = (expr);               \
    if (!loki_status_.ok()) return LokiError(loki_status_); \
  } while (false)

struct LokiWindow {
  int64_t start = 0;  // unix ns, inclusive
  int64_t end = 0;    // exclusive
};

// start, end and since: the last hour before `now` by default.
[[nodiscard]] absl::StatusOr<LokiWindow> TakeLokiWindow(QueryParams& params, int64_t now);

// The required `query` parameter, parsed and checked.
[[nodiscard]] absl::StatusOr<std::unique_ptr<compat::logql::Expr>> TakeLokiQuery(
    QueryParams& params);

// An optional parameter that must be a log query (a selector and maybe a
// pipeline); nullptr when absent or empty.
[[nodiscard]] absl::StatusOr<std::unique_ptr<compat::logql::Expr>> TakeLokiSelector(
    QueryParams& params, std::string_view name);

// A positive integer parameter: `fallback` when absent, empty or 0;
// InvalidArgument when negative, not a number, or above `max`.
[[nodiscard]] absl::StatusOr<int64_t> TakeLokiCount(QueryParams& params, std::string_view name,
                                                    int64_t fallback, int64_t max);

// `time_unix_nano >= $a AND time_unix_nano < $b`, binding in `params`.
std::string LokiWindowSql(const LokiWindow& window, std::vector<query::QueryParam>* params);

// The logs files of the snapshot whose records may fall in the window.
query::ViewFiles LokiLogFiles(const storage::Snapshot& snapshot, const std::string& data_dir,
                              const LokiWindow& window);

void WriteLokiLabels(const compat::logql::Labels& labels, otlp::JsonWriter* json);

}  // namespace strata::api
