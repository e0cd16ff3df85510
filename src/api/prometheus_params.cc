// PromParams (prometheus_params.h).

#include "api/prometheus_params.h"

#include "absl/strings/ascii.h"

namespace strata::api {

absl::StatusOr<QueryParams> PromParams(const server::HttpRequest& request) {
  std::string all(request.query());
  const std::string_view type = request.Header("Content-Type");
  if (request.method == "POST" && request.body != nullptr &&
      absl::AsciiStrToLower(std::string(type.substr(0, type.find(';')))) ==
          "application/x-www-form-urlencoded") {
    if (!all.empty() && !request.body->empty()) all.push_back('&');
    all += *request.body;
  }
  return QueryParams::Parse(all);
}

}  // namespace strata::api
