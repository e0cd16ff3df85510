#pragma once

// What every endpoint of the REST API answers with: a JSON body, or the
// error answer of a status (ApiErrorResponse in api_server.h), and the two
// macros endpoints use to return the error answer of a failed step:
//   API_RETURN_IF_ERROR(status_expression);
//   API_ASSIGN_OR_RESPOND(lhs, status_or_expression);
//
// Thread-safety: stateless.

#include <string>
#include <string_view>

#include "server/http_adapter.h"

namespace strata::api {

inline constexpr std::string_view kJsonContentType = "application/json";

// `body` as application/json with `status`.
inline server::HttpResponse JsonAnswer(int status, std::string body) {
  server::HttpResponse response;
  response.status = status;
  response.content_type = std::string(kJsonContentType);
  response.body = std::move(body);
  return response;
}

}  // namespace strata::api

#define API_RETURN_IF_ERROR(expr)                                               \
  do {                                                                          \
    const absl::Status api_status_ = (expr);                                    \
    if (!api_status_.ok()) return ::strata::api::ApiErrorResponse(api_status_); \
  } while (false)

#define API_ASSIGN_OR_RESPOND(lhs, expr) API_ASSIGN_IMPL(API_CONCAT(api_or_, __LINE__), lhs, expr)
#define API_CONCAT_INNER(a, b) a##b
#define API_CONCAT(a, b) API_CONCAT_INNER(a, b)
#define API_ASSIGN_IMPL(tmp, lhs, expr)                                \
  auto tmp = (expr);                                                   \
  if (!tmp.ok()) return ::strata::api::ApiErrorResponse(tmp.status()); \
  lhs = *std::move(tmp)
