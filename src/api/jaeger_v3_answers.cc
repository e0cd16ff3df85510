#include "api/jaeger_v3_answers.h"

#include <string_view>

#include "otlp/encode.h"
#include "otlp/json_writer.h"

namespace strata::api {
namespace {

std::string_view HttpStatusText(int status) {
  switch (status) {
    case 400:
      return "Bad Request";
    case 401:
      return "Unauthorized";
    case 403:
      return "Forbidden";
    case 404:
      return "Not Found";
    case 409:
      return "Conflict";
    case 422:
      return "Unprocessable Entity";
    case 429:
      return "Too Many Requests";
    case 503:
      return "Service Unavailable";
    case 504:
      return "Gateway Timeout";
    default:
      return "Internal Server Error";
  }
}

}  // namespace

std::string JaegerV3TracesResponse(std::span<const otlp::TraceBatch> traces) {
  // Each batch encodes as {"resourceSpans":[...]} (or {} when empty): their
  // arrays' contents are joined into one.
  constexpr std::string_view kOpen = "{\"resourceSpans\":[";
  constexpr std::string_view kClose = "]}";
  std::string out = "{\"result\":{\"resourceSpans\":[";
  bool first = true;
  for (const otlp::TraceBatch& batch : traces) {
    const std::string encoded = otlp::EncodeTracesJson(batch);
    if (!encoded.starts_with(kOpen) || !encoded.ends_with(kClose)) continue;
    const std::string_view inner = std::string_view(encoded).substr(
        kOpen.size(), encoded.size() - kOpen.size() - kClose.size());
    if (inner.empty()) continue;
    if (!first) out.push_back(',');
    out.append(inner);
    first = false;
  }
  out.append("]}}");
  return out;
}

std::string JaegerV3ServicesResponse(const std::vector<std::string>& services) {
  std::string out;
  otlp::JsonWriter w(&out);
  w.BeginObject();
  w.Key("services");
  w.BeginArray();
  for (const std::string& service : services) w.String(service);
  w.EndArray();
  w.EndObject();
  return out;
}

std::string JaegerV3OperationsResponse(const std::vector<JaegerOperation>& operations) {
  std::string out;
  otlp::JsonWriter w(&out);
  w.BeginObject();
  w.Key("operations");
  w.BeginArray();
  for (const JaegerOperation& operation : operations) {
    w.BeginObject();
    w.Key("name");
    w.String(operation.name);
    w.Key("spanKind");
    w.String(operation.span_kind);
    w.EndObject();
  }
  w.EndArray();
  w.EndObject();
  return out;
}

std::string JaegerV3ErrorResponse(const absl::Status& status, int http_status) {
  std::string out;
  otlp::JsonWriter w(&out);
  w.BeginObject();
  w.Key("error");
  w.BeginObject();
  w.Key("grpcCode");
  w.Int(static_cast<int>(status.code()));
  w.Key("httpCode");
  w.Int(http_status);
  w.Key("message");
  w.String(std::string(status.message()));
  w.Key("httpStatus");
  w.String(HttpStatusText(http_status));
  w.EndObject();
  w.EndObject();
  return out;
}

}  // namespace strata::api
