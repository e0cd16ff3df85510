#include "objectstore/s3_batch_store.h"

#include <algorithm>
#include <chrono>
#include <random>
#include <thread>

#include "absl/strings/numbers.h"
#include "common/markup_escape.h"
#include "common/status_macros.h"
#include "fmt/format.h"
#include "objectstore/digests.h"
#include "objectstore/s3_xml.h"
#include "objectstore/sigv4.h"

namespace strata::objectstore {
namespace {

bool Retryable(const HttpResponse& response, std::string_view error_code) {
  if (response.status >= 500) return true;  // 500, 503 SlowDown, ...
  return response.status == 409 && error_code == "ConditionalRequestConflict";
}

std::string ErrorCodeOf(const HttpResponse& response) {
  if (response.body.empty()) return "";
  absl::StatusOr<S3ErrorBody> body = ParseS3Error(response.body);
  return body.ok() ? body->code : "";
}

}  // namespace

absl::StatusOr<std::unique_ptr<S3BatchStore>> S3BatchStore::Create(S3Config config) {
  STRATA_RETURN_IF_ERROR(ValidateS3Config(config));
  return std::unique_ptr<S3BatchStore>(new S3BatchStore(std::move(config)));
}

S3BatchStore::S3BatchStore(S3Config config) : config_(std::move(config)), http_(config_.http) {
  size_t colon = config_.endpoint.find("://");
  scheme_ = config_.endpoint.substr(0, colon);
  host_ = config_.endpoint.substr(colon + 3);
}

std::string S3BatchStore::Describe() const {
  return fmt::format("s3://{}/{} at {}", config_.bucket, config_.prefix, config_.endpoint);
}

absl::StatusOr<HttpResponse> S3BatchStore::SendOnce(const Call& call) {
  bool virtual_host = config_.addressing == S3Addressing::kVirtualHost;
  std::string host = virtual_host ? config_.bucket + "." + host_ : host_;
  std::string path = virtual_host ? "/" + call.object : "/" + config_.bucket + "/" + call.object;
  if (!virtual_host && call.object.empty()) path = "/" + config_.bucket;
  std::string amz_date = AmzDate(std::chrono::duration_cast<std::chrono::seconds>(
                                     std::chrono::system_clock::now().time_since_epoch())
                                     .count());
  SigV4Request signing;
  signing.method = call.method;
  signing.path = path;
  signing.query = call.query;
  signing.payload_sha256_hex = HexLower(Sha256(call.body));
  signing.headers = call.headers;
  signing.headers.emplace_back("host", host);
  signing.headers.emplace_back("x-amz-date", amz_date);
  signing.headers.emplace_back("x-amz-content-sha256", signing.payload_sha256_hex);
  SigV4Signature signature = SignV4(config_.credentials, config_.region, "s3", amz_date, signing);

  HttpRequest request;
  request.method = call.method;
  request.url = fmt::format("{}://{}{}", scheme_, host, UriEncode(path, true));
  std::string query = CanonicalQueryString(call.query);
  if (!query.empty()) request.url += "?" + query;
  request.headers = signing.headers;
  request.headers.emplace_back("Authorization", signature.authorization);
  request.body = call.body;
  return http_.Send(request);
}

absl::StatusOr<S3BatchStore::Outcome> S3BatchStore::Send(const Call& call) {
  thread_local std::minstd_rand jitter(std::random_device{}());
  Outcome outcome;
  std::string last_failure;
  for (int attempt = 1; attempt <= config_.max_attempts; ++attempt) {
    if (attempt > 1) {
      int64_t ceiling =
          std::min<int64_t>(config_.backoff_max.count(), config_.backoff_initial.count()
                                                             << std::min(attempt - 2, 20));
      int64_t wait_ms = ceiling / 2 + (ceiling > 1 ? int64_t(jitter() % (ceiling / 2 + 1)) : 0);
      std::this_thread::sleep_for(std::chrono::milliseconds(wait_ms));
    }
    absl::StatusOr<HttpResponse> response = SendOnce(call);
    if (!response.ok()) {
      if (!absl::IsUnavailable(response.status())) return response.status();
      last_failure = std::string(response.status().message());
      outcome.retried_after_ambiguous_failure = true;
      continue;
    }
    std::string code = response->status >= 300 ? ErrorCodeOf(*response) : "";
    if (Retryable(*response, code)) {
      last_failure = fmt::format("HTTP {} {}", response->status, code);
      outcome.retried_after_ambiguous_failure = true;
      continue;
    }
    outcome.response = *std::move(response);
    return outcome;
  }
  return absl::UnavailableError(
      fmt::format("{} {} on {}: no answer after {} attempts; the last: {}", call.method,
                  call.object, Describe(), config_.max_attempts, last_failure));
}

absl::Status S3BatchStore::ErrorFor(std::string_view what, const HttpResponse& response) const {
  S3ErrorBody body;
  if (!response.body.empty()) {
    absl::StatusOr<S3ErrorBody> parsed = ParseS3Error(response.body);
    if (parsed.ok()) body = *std::move(parsed);
  }
  std::string detail = body.code.empty()
                           ? fmt::format("HTTP {}", response.status)
                           : fmt::format("HTTP {} {}{}{}", response.status, body.code,
                                         body.message.empty() ? "" : ": ", body.message);
  const std::string& key_id = config_.credentials.access_key_id;
  if (body.code == "InvalidAccessKeyId") {
    return absl::PermissionDeniedError(
        fmt::format("{} on {}: the server does not know the access key id \"{}\" ({}); set "
                    "STRATA_S3_ACCESS_KEY_ID (or AWS_ACCESS_KEY_ID) to a key of that server",
                    what, Describe(), key_id, detail));
  }
  if (body.code == "SignatureDoesNotMatch") {
    return absl::PermissionDeniedError(fmt::format(
        "{} on {}: the server rejected the signature made with access key id \"{}\" ({}); check "
        "STRATA_S3_SECRET_ACCESS_KEY (or AWS_SECRET_ACCESS_KEY), and the region "
        "STRATA_S3_REGION (now \"{}\")",
        what, Describe(), key_id, detail, config_.region));
  }
  if (body.code == "AccessDenied" || (response.status == 403 && body.code.empty())) {
    return absl::PermissionDeniedError(fmt::format(
        "{} on {}: access denied for access key id \"{}\" ({}); check the key and secret "
        "(STRATA_S3_ACCESS_KEY_ID, STRATA_S3_SECRET_ACCESS_KEY) and that the key may use bucket "
        "\"{}\"",
        what, Describe(), key_id, detail, config_.bucket));
  }
  if (body.code == "NoSuchBucket") {
    return absl::FailedPreconditionError(fmt::format(
        "{} on {}: bucket \"{}\" does not exist ({}); create it, or set STRATA_S3_BUCKET to an "
        "existing bucket",
        what, Describe(), config_.bucket, detail));
  }
  if (body.code == "NoSuchKey" || response.status == 404) {
    return absl::NotFoundError(
        fmt::format("{} on {}: no such object ({})", what, Describe(), detail));
  }
  if (response.status == 412) {
    return absl::AlreadyExistsError(
        fmt::format("{} on {}: the object already exists ({})", what, Describe(), detail));
  }
  if (response.status >= 500) {
    return absl::UnavailableError(fmt::format("{} on {}: {}", what, Describe(), detail));
  }
  return absl::InternalError(
      fmt::format("{} on {}: unexpected answer {}", what, Describe(), detail));
}

absl::Status S3BatchStore::PutIfAbsent(std::string_view key, std::string_view data) {
  STRATA_RETURN_IF_ERROR(ValidateObjectKey(key));
  Call call;
  call.method = "PUT";
  call.object = config_.prefix + std::string(key);
  call.headers = {{"if-none-match", "*"}, {"content-type", "application/octet-stream"}};
  call.body = data;
  STRATA_ASSIGN_OR_RETURN(Outcome outcome, Send(call));
  const HttpResponse& response = outcome.response;
  std::string what = fmt::format("PUT {}", key);
  if (response.status == 200) return absl::OkStatus();
  if (response.status == 412 && outcome.retried_after_ambiguous_failure) {
    // An earlier attempt may have stored the object and lost the answer.
    Call head{"HEAD", call.object, {}, {}, {}};
    STRATA_ASSIGN_OR_RETURN(Outcome existing, Send(head));
    std::string etag(existing.response.Header("etag"));
    if (existing.response.status == 200 && etag == "\"" + HexLower(Md5(data)) + "\"") {
      return absl::OkStatus();
    }
  }
  return ErrorFor(what, response);
}

absl::StatusOr<std::string> S3BatchStore::Get(std::string_view key, uint64_t offset,
                                              uint64_t length) {
  STRATA_RETURN_IF_ERROR(ValidateObjectKey(key));
  if (length == 0) return absl::InvalidArgumentError("object read of 0 bytes");
  if (length > config_.http.max_response_bytes) {
    return absl::InvalidArgumentError(fmt::format("object read of {} bytes is over the {}-byte cap",
                                                  length, config_.http.max_response_bytes));
  }
  uint64_t last = offset + length - 1;
  if (last < offset) last = UINT64_MAX;  // offset + length overflows: to the end
  Call call;
  call.method = "GET";
  call.object = config_.prefix + std::string(key);
  call.headers = {{"range", fmt::format("bytes={}-{}", offset, last)}};
  STRATA_ASSIGN_OR_RETURN(Outcome outcome, Send(call));
  HttpResponse& response = outcome.response;
  if (response.status == 206) return std::move(response.body);
  if (response.status == 200) {  // the server sent the whole object
    if (offset >= response.body.size()) return std::string();
    return response.body.substr(offset, length);
  }
  if (response.status == 416) return std::string();
  return ErrorFor(fmt::format("GET {}", key), response);
}

absl::StatusOr<ObjectInfo> S3BatchStore::Head(std::string_view key) {
  STRATA_RETURN_IF_ERROR(ValidateObjectKey(key));
  Call call{"HEAD", config_.prefix + std::string(key), {}, {}, {}};
  STRATA_ASSIGN_OR_RETURN(Outcome outcome, Send(call));
  const HttpResponse& response = outcome.response;
  if (response.status == 200) {
    ObjectInfo info{std::string(key), 0};
    if (!absl::SimpleAtoi(std::string(response.Header("content-length")), &info.size)) {
      return absl::InternalError(fmt::format("HEAD {} on {}: no Content-Length", key, Describe()));
    }
    return info;
  }
  return ErrorFor(fmt::format("HEAD {}", key), response);
}

absl::StatusOr<ListPage> S3BatchStore::List(std::string_view prefix, std::string_view continuation,
                                            int max_keys) {
  if (max_keys < 1 || max_keys > kMaxKeysPerPage) {
    return absl::InvalidArgumentError(
        fmt::format("list page of {} keys (1 to {})", max_keys, kMaxKeysPerPage));
  }
  Call call;
  call.method = "GET";
  call.query = {{"list-type", "2"},
                {"prefix", config_.prefix + std::string(prefix)},
                {"max-keys", std::to_string(max_keys)}};
  if (!continuation.empty()) call.query.emplace_back("continuation-token", continuation);
  STRATA_ASSIGN_OR_RETURN(Outcome outcome, Send(call));
  const HttpResponse& response = outcome.response;
  std::string what = fmt::format("LIST {}", prefix);
  if (response.status != 200) return ErrorFor(what, response);
  absl::StatusOr<ListObjectsV2Result> parsed = ParseListObjectsV2(response.body);
  if (!parsed.ok()) {
    return absl::InternalError(
        fmt::format("{} on {}: {}", what, Describe(), std::string(parsed.status().message())));
  }
  ListPage page;
  for (ObjectInfo& object : parsed->objects) {
    if (!object.key.starts_with(config_.prefix)) {
      return absl::InternalError(fmt::format(
          "{} on {}: the server listed \"{}\", outside the prefix", what, Describe(), object.key));
    }
    object.key.erase(0, config_.prefix.size());
    page.objects.push_back(std::move(object));
  }
  if (parsed->truncated) page.next = std::move(parsed->next_continuation_token);
  return page;
}

absl::Status S3BatchStore::DeleteMany(const std::vector<std::string>& keys) {
  for (const std::string& key : keys) STRATA_RETURN_IF_ERROR(ValidateObjectKey(key));
  for (size_t start = 0; start < keys.size(); start += kMaxKeysPerPage) {
    size_t end = std::min(keys.size(), start + kMaxKeysPerPage);
    std::string body = "<?xml version=\"1.0\" encoding=\"UTF-8\"?><Delete><Quiet>true</Quiet>";
    for (size_t i = start; i < end; ++i) {
      body += "<Object><Key>" + EscapeMarkup(config_.prefix + keys[i]) + "</Key></Object>";
    }
    body += "</Delete>";
    Call call;
    call.method = "POST";
    call.query = {{"delete", ""}};
    call.headers = {{"content-md5", Base64(Md5(body))}, {"content-type", "application/xml"}};
    call.body = body;
    STRATA_ASSIGN_OR_RETURN(Outcome outcome, Send(call));
    const HttpResponse& response = outcome.response;
    std::string what = fmt::format("DELETE {} keys from {}", end - start, keys[start]);
    if (response.status != 200) return ErrorFor(what, response);
    absl::StatusOr<std::vector<DeleteError>> errors = ParseDeleteResult(response.body);
    if (!errors.ok()) {
      return absl::InternalError(
          fmt::format("{} on {}: {}", what, Describe(), std::string(errors.status().message())));
    }
    if (!errors->empty()) {
      const DeleteError& first = errors->front();
      return absl::InternalError(
          fmt::format("{} on {}: {} keys not deleted, the first \"{}\": {} {}", what, Describe(),
                      errors->size(), first.key, first.code, first.message));
    }
  }
  return absl::OkStatus();
}

}  // namespace strata::objectstore
