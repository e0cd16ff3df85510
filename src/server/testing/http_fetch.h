#pragma once

// Fetch(): one HTTP request from inside the test process, through libcurl
// (objectstore::HttpClient, which keeps connections open between calls),
// for tests that make hundreds of requests. Curl() (http_testing.h) runs
// the curl binary instead, which costs a process start per request (tens
// of milliseconds, most of it loading curl's shared libraries); tests of
// the listener itself keep using it.
//
// The request is the one `curl -X <method> -H ... --data-binary <body>`
// sends: a body without a Content-Type header goes as
// application/x-www-form-urlencoded, and a request without an Accept
// header accepts */*.
// Errors: status 0, with libcurl's reason in the body.

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "objectstore/curl_http.h"
#include "server/testing/raw_connection.h"

namespace strata::server::testing {

// `value` percent-encoded for a query string (RFC 3986's unreserved
// characters kept).
inline std::string UrlEncode(std::string_view value) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out;
  for (const char c : value) {
    const bool unreserved = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
                            (c >= '0' && c <= '9') || c == '-' || c == '_' || c == '.' || c == '~';
    if (unreserved) {
      out += c;
    } else {
      const auto byte = static_cast<unsigned char>(c);
      out += '%';
      out += kHex[byte >> 4];
      out += kHex[byte & 15];
    }
  }
  return out;
}

// "name=value" pairs as a query string, each value percent-encoded (as
// `curl -G --data-urlencode name=value` does).
inline std::string QueryString(const std::vector<std::string>& params) {
  std::string out;
  for (const std::string& param : params) {
    if (!out.empty()) out += '&';
    const size_t equals = param.find('=');
    out += param.substr(0, equals);
    if (equals != std::string::npos) out += "=" + UrlEncode(param.substr(equals + 1));
  }
  return out;
}

// `method` `url` with `headers` ("Name: value") and, when not empty, `body`.
inline HttpAnswer Fetch(const std::string& method, const std::string& url,
                        const std::vector<std::string>& headers, const std::string& body = "") {
  static objectstore::HttpClient client{objectstore::HttpClientOptions{}};
  objectstore::HttpRequest request;
  request.method = method;
  request.url = url;
  bool has_content_type = false, has_accept = false;
  for (const std::string& header : headers) {
    const size_t colon = header.find(':');
    std::string name = header.substr(0, colon);
    std::string_view value;
    if (colon != std::string::npos) {
      value = std::string_view(header).substr(colon + 1);
      while (!value.empty() && value.front() == ' ') value.remove_prefix(1);
    }
    const std::string lowercase = Lowercase(name);
    has_content_type = has_content_type || lowercase == "content-type";
    has_accept = has_accept || lowercase == "accept";
    request.headers.emplace_back(std::move(name), std::string(value));
  }
  if (!body.empty() && !has_content_type) {
    request.headers.emplace_back("Content-Type", "application/x-www-form-urlencoded");
  }
  if (!has_accept) request.headers.emplace_back("Accept", "*/*");
  request.body = body;
  absl::StatusOr<objectstore::HttpResponse> response = client.Send(request);
  if (!response.ok()) return HttpAnswer{.body = std::string(response.status().message())};
  HttpAnswer answer{.status = response->status, .body = std::move(response->body)};
  for (auto& [name, value] : response->headers) answer.headers[name] = std::move(value);
  return answer;
}

}  // namespace strata::server::testing
