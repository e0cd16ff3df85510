#pragma once

// HttpClient: one HTTP/1.1 request at a time per call, over libcurl
// (curl_http.cc is the only file of strata that includes libcurl's
// headers). Connections are kept in a small pool of curl handles and reused
// across calls; TLS (https:// endpoints) is libcurl's, with its default
// certificate checks.
//
// Thread-safety: safe for concurrent use (each call takes its own handle).
// Errors: Send() returns Unavailable when no HTTP answer arrived (refused,
// reset, timed out, a body cut short), naming the URL and curl's reason; any
// HTTP status, 5xx included, is an OK result for the caller to judge.

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "common/mutex.h"

namespace strata::objectstore {

struct HttpRequest {
  std::string method;
  std::string url;
  std::vector<std::pair<std::string, std::string>> headers;
  std::string_view body;  // must stay valid during Send()
};

struct HttpResponse {
  int status = 0;
  // Header names lower-cased.
  std::vector<std::pair<std::string, std::string>> headers;
  std::string body;

  // The first header of that (lower-case) name, or empty.
  std::string_view Header(std::string_view name) const;
};

struct HttpClientOptions {
  std::chrono::milliseconds connect_timeout{5000};
  // The whole exchange, body included.
  std::chrono::milliseconds request_timeout{60000};
  // Answers larger than this fail (a GET asks for bounded ranges).
  size_t max_response_bytes = 256 << 20;
};

class HttpClient {
 public:
  explicit HttpClient(HttpClientOptions options);
  ~HttpClient();
  HttpClient(const HttpClient&) = delete;
  HttpClient& operator=(const HttpClient&) = delete;

  [[nodiscard]] absl::StatusOr<HttpResponse> Send(const HttpRequest& request);

 private:
  void* TakeHandle();
  void ReturnHandle(void* handle);

  const HttpClientOptions options_;
  Mutex mu_;
  std::vector<void*> idle_handles_ ABSL_GUARDED_BY(mu_);  // CURL*
};

}  // namespace strata::objectstore
