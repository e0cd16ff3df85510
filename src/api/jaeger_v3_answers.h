#pragma once

// The answers of Jaeger's v3 query API over HTTP (/jaeger/api/v3/*,
// docs/api.md "Jaeger v3"), as Jaeger's gRPC gateway writes them:
//
//   traces      {"result": <OTLP/JSON TracesData: {"resourceSpans": [...]}>}
//   services    {"services": ["a", ...]}
//   operations  {"operations": [{"name", "spanKind"}, ...]}
//   errors      {"error": {"grpcCode", "httpCode", "message", "httpStatus"}}
//
// Thread-safety: reentrant. Errors: none.

#include <span>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "api/jaeger_model.h"
#include "otlp/batch.h"

namespace strata::api {

// Every span of every batch in one TracesData, each batch's resources in
// its own order (otlp::EncodeTracesJson's form).
std::string JaegerV3TracesResponse(std::span<const otlp::TraceBatch> traces);
std::string JaegerV3ServicesResponse(const std::vector<std::string>& services);
std::string JaegerV3OperationsResponse(const std::vector<JaegerOperation>& operations);
// `status` (not OK) answered with HTTP status `http_status`.
std::string JaegerV3ErrorResponse(const absl::Status& status, int http_status);

}  // namespace strata::api
