#include "objectstore/curl_http.h"

#include <curl/curl.h>

#include <cstring>
#include <mutex>

#include "absl/strings/ascii.h"
#include "absl/strings/strip.h"
#include "common/check.h"
#include "fmt/format.h"

namespace strata::objectstore {
namespace {

// Idle connections kept for reuse; more concurrent calls open more, and the
// extra handles are closed when returned.
constexpr size_t kMaxIdleHandles = 16;

void GlobalInitOnce() {
  static std::once_flag once;
  std::call_once(once, [] {
    CURLcode code = curl_global_init(CURL_GLOBAL_DEFAULT);
    STRATA_CHECK(code == CURLE_OK, "curl_global_init failed");
  });
}

struct Transfer {
  const HttpClientOptions* options;
  std::string_view upload;
  size_t uploaded = 0;
  HttpResponse* response;
  bool too_large = false;
};

size_t WriteBody(char* data, size_t size, size_t count, void* user) {
  auto* transfer = static_cast<Transfer*>(user);
  size_t n = size * count;
  if (transfer->response->body.size() + n > transfer->options->max_response_bytes) {
    transfer->too_large = true;
    return 0;  // aborts the transfer
  }
  transfer->response->body.append(data, n);
  return n;
}

size_t ReadBody(char* buffer, size_t size, size_t count, void* user) {
  auto* transfer = static_cast<Transfer*>(user);
  size_t n = std::min(size * count, transfer->upload.size() - transfer->uploaded);
  std::memcpy(buffer, transfer->upload.data() + transfer->uploaded, n);
  transfer->uploaded += n;
  return n;
}

size_t WriteHeader(char* data, size_t size, size_t count, void* user) {
  auto* transfer = static_cast<Transfer*>(user);
  size_t n = size * count;
  std::string_view line(data, n);
  size_t colon = line.find(':');
  if (line.starts_with("HTTP/")) {
    transfer->response->headers.clear();  // a new answer (after 100 Continue)
  } else if (colon != std::string_view::npos) {
    std::string name = absl::AsciiStrToLower(std::string(line.substr(0, colon)));
    std::string value(line.substr(colon + 1));
    absl::StripAsciiWhitespace(&value);
    transfer->response->headers.emplace_back(std::move(name), std::move(value));
  }
  return n;
}

}  // namespace

std::string_view HttpResponse::Header(std::string_view name) const {
  for (const auto& [key, value] : headers) {
    if (key == name) return value;
  }
  return {};
}

HttpClient::HttpClient(HttpClientOptions options) : options_(options) { GlobalInitOnce(); }

HttpClient::~HttpClient() {
  MutexLock lock(&mu_);
  for (void* handle : idle_handles_) curl_easy_cleanup(static_cast<CURL*>(handle));
}

void* HttpClient::TakeHandle() {
  {
    MutexLock lock(&mu_);
    if (!idle_handles_.empty()) {
      void* handle = idle_handles_.back();
      idle_handles_.pop_back();
      return handle;
    }
  }
  CURL* handle = curl_easy_init();
  STRATA_CHECK(handle != nullptr, "curl_easy_init failed");
  return handle;
}

void HttpClient::ReturnHandle(void* handle) {
  {
    MutexLock lock(&mu_);
    if (idle_handles_.size() < kMaxIdleHandles) {
      idle_handles_.push_back(handle);
      return;
    }
  }
  curl_easy_cleanup(static_cast<CURL*>(handle));
}

absl::StatusOr<HttpResponse> HttpClient::Send(const HttpRequest& request) {
  CURL* curl = static_cast<CURL*>(TakeHandle());
  curl_easy_reset(curl);  // keeps the connection cache
  HttpResponse response;
  Transfer transfer{&options_, request.body, 0, &response};
  curl_slist* headers = nullptr;
  for (const auto& [name, value] : request.headers) {
    headers = curl_slist_append(headers, fmt::format("{}: {}", name, value).c_str());
  }
  // No "Expect: 100-continue" round trip: the body goes with the headers.
  headers = curl_slist_append(headers, "Expect:");
  curl_easy_setopt(curl, CURLOPT_URL, request.url.c_str());
  curl_easy_setopt(curl, CURLOPT_HTTPHEADER, headers);
  curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(curl, CURLOPT_CONNECTTIMEOUT_MS,
                   static_cast<long>(options_.connect_timeout.count()));
  curl_easy_setopt(curl, CURLOPT_TIMEOUT_MS, static_cast<long>(options_.request_timeout.count()));
  curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, WriteBody);
  curl_easy_setopt(curl, CURLOPT_WRITEDATA, &transfer);
  curl_easy_setopt(curl, CURLOPT_HEADERFUNCTION, WriteHeader);
  curl_easy_setopt(curl, CURLOPT_HEADERDATA, &transfer);
  curl_easy_setopt(curl, CURLOPT_PROTOCOLS_STR, "http,https");
  if (request.method == "HEAD") {
    curl_easy_setopt(curl, CURLOPT_NOBODY, 1L);
  } else if (request.method == "PUT" || request.method == "POST" || !request.body.empty()) {
    curl_easy_setopt(curl, CURLOPT_UPLOAD, 1L);
    curl_easy_setopt(curl, CURLOPT_READFUNCTION, ReadBody);
    curl_easy_setopt(curl, CURLOPT_READDATA, &transfer);
    curl_easy_setopt(curl, CURLOPT_INFILESIZE_LARGE, static_cast<curl_off_t>(request.body.size()));
    curl_easy_setopt(curl, CURLOPT_CUSTOMREQUEST, request.method.c_str());
  } else if (request.method != "GET") {
    curl_easy_setopt(curl, CURLOPT_CUSTOMREQUEST, request.method.c_str());
  }
  CURLcode code = curl_easy_perform(curl);
  long status = 0;
  curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &status);
  curl_slist_free_all(headers);
  ReturnHandle(curl);
  if (transfer.too_large) {
    return absl::ResourceExhaustedError(fmt::format("{} {}: the answer is larger than {} bytes",
                                                    request.method, request.url,
                                                    options_.max_response_bytes));
  }
  if (code != CURLE_OK) {
    return absl::UnavailableError(fmt::format("{} {}: {} (curl error {})", request.method,
                                              request.url, curl_easy_strerror(code),
                                              static_cast<int>(code)));
  }
  response.status = static_cast<int>(status);
  return response;
}

}  // namespace strata::objectstore
