#include "api/accept_encoding.h"

#include "absl/strings/ascii.h"
#include "api/header_values.h"

namespace strata::api {
namespace {

// The weight of one list element's parameters ("q=0.5"): false only for a
// weight of zero ("q=0", "q=0.0", "q=0.000").
bool NonzeroWeight(std::string_view parameters) {
  while (!parameters.empty()) {
    const size_t semicolon = parameters.find(';');
    const std::string_view parameter = TrimSpaces(parameters.substr(0, semicolon));
    parameters =
        semicolon == std::string_view::npos ? std::string_view() : parameters.substr(semicolon + 1);
    if (parameter.size() < 2 ||
        absl::ascii_tolower(static_cast<unsigned char>(parameter[0])) != 'q' ||
        parameter[1] != '=') {
      continue;
    }
    const std::string_view value = parameter.substr(2);
    if (value.empty() || value[0] != '0') return true;
    for (char c : value.substr(1)) {
      if (c != '.' && c != '0') return true;
    }
    return false;
  }
  return true;
}

}  // namespace

bool AcceptsGzip(std::string_view accept_encoding) {
  return AcceptsCoding(accept_encoding, "gzip");
}

bool AcceptsCoding(std::string_view accept_encoding, std::string_view wanted) {
  bool listed = false;
  bool accepted = false;
  bool any = false;
  while (!accept_encoding.empty()) {
    const size_t comma = accept_encoding.find(',');
    const std::string_view element = accept_encoding.substr(0, comma);
    accept_encoding =
        comma == std::string_view::npos ? std::string_view() : accept_encoding.substr(comma + 1);
    const size_t semicolon = element.find(';');
    const std::string_view coding = TrimSpaces(element.substr(0, semicolon));
    const std::string_view parameters =
        semicolon == std::string_view::npos ? std::string_view() : element.substr(semicolon + 1);
    if (EqualsIgnoringCase(coding, wanted) ||
        (wanted == "gzip" && EqualsIgnoringCase(coding, "x-gzip"))) {
      listed = true;
      accepted = accepted || NonzeroWeight(parameters);
    } else if (coding == "*") {
      any = NonzeroWeight(parameters);
    }
  }
  return listed ? accepted : any;
}

}  // namespace strata::api
