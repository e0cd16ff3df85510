#pragma once

// S3BatchStore: a BatchStore on any S3-compatible server (AWS S3, Ceph's
// RADOS gateway, ...), with requests signed by Signature V4 (sigv4.h) and
// sent over libcurl (curl_http.h). Object `key` is stored as
// <config.prefix><key> in the bucket.
//
//  * PutIfAbsent: PUT with `If-None-Match: *` and the body's SHA-256 signed,
//    so the server stores the whole signed body or nothing, and of racing
//    writers exactly one gets 200 and the others 412 (AlreadyExists). When
//    an attempt's answer is lost (connection error, 5xx) and the retry gets
//    412, the object may be our own: it counts as ours when its ETag is the
//    MD5 of our bytes (a single PUT's ETag), since identical immutable
//    bytes are the same batch file.
//  * PutStreamIfAbsent: up to config.part_bytes, read whole and put as
//    PutIfAbsent does. Larger: HEAD first (an existing object is
//    AlreadyExists and never replaced), then a multipart upload
//    (s3_multipart.cc): initiate, one UploadPart per part with its SHA-256
//    signed, complete with `If-None-Match: *` (a server that checks it
//    answers 412, AlreadyExists; RADOS gateway 16 does not, hence the HEAD
//    and the race in batch_store.h's contract 1). A failed upload is
//    aborted; one cut off by a crash leaves parts the server keeps but
//    never lists (docs/operations.md says how a bucket lifecycle rule
//    removes them). A completion whose answer is lost and whose retry
//    finds the upload gone counts as ours when the object's ETag is the
//    multipart ETag of our parts (MD5 of their MD5s, "-N").
//  * Get: GET with a Range header; 416 (offset past the end) is empty.
//  * List: ListObjectsV2 (list-type=2); the continuation is the server's
//    token.
//  * DeleteMany: multi-object delete (POST ?delete), 1,000 keys a request.
//
// Retries: connection errors, 5xx (503 SlowDown included) and 409
// ConditionalRequestConflict are retried up to config.max_attempts in all,
// with exponential backoff (S3Config); 4xx answers are not retried. Errors
// name what to fix: PermissionDenied for InvalidAccessKeyId,
// SignatureDoesNotMatch and AccessDenied (naming the variables),
// FailedPrecondition for NoSuchBucket, Unavailable when the retries are
// spent (with the last answer).
//
// Thread-safety: safe for concurrent use.

#include <memory>

#include "objectstore/batch_store.h"
#include "objectstore/curl_http.h"
#include "objectstore/s3_config.h"

namespace strata::objectstore {

class S3BatchStore final : public BatchStore {
 public:
  [[nodiscard]] static absl::StatusOr<std::unique_ptr<S3BatchStore>> Create(S3Config config);

  absl::Status PutIfAbsent(std::string_view key, std::string_view data) override;
  absl::Status PutStreamIfAbsent(std::string_view key, uint64_t size,
                                 const PartReader& read) override;
  absl::StatusOr<std::string> Get(std::string_view key, uint64_t offset, uint64_t length) override;
  absl::StatusOr<ObjectInfo> Head(std::string_view key) override;
  absl::StatusOr<ListPage> List(std::string_view prefix, std::string_view continuation,
                                int max_keys) override;
  absl::Status DeleteMany(const std::vector<std::string>& keys) override;
  std::string Describe() const override;

  const S3Config& config() const { return config_; }

 private:
  struct Call {
    std::string method;
    std::string object;  // the full object name in the bucket (prefix + key), or empty
    std::vector<std::pair<std::string, std::string>> query;
    std::vector<std::pair<std::string, std::string>> headers;  // signed too
    std::string_view body;
  };
  struct Outcome {
    HttpResponse response;
    bool retried_after_ambiguous_failure = false;
  };

  explicit S3BatchStore(S3Config config);
  // Signs and sends `call`, retrying as the class comment says. Returns the
  // first answer that is not retried (any status), or Unavailable.
  absl::StatusOr<Outcome> Send(const Call& call);
  absl::StatusOr<HttpResponse> SendOnce(const Call& call);
  // The error for a 4xx/5xx answer to `what` (e.g. "PUT telemetry/x").
  absl::Status ErrorFor(std::string_view what, const HttpResponse& response) const;
  // A multipart upload of `size` bytes (s3_multipart.cc): the parts, then
  // the completion. Aborts the upload when it fails.
  absl::Status PutMultipart(std::string_view key, uint64_t size, const PartReader& read);
  absl::Status UploadParts(std::string_view key, const std::string& upload_id, uint64_t size,
                           const PartReader& read, std::string* complete_xml,
                           std::string* part_md5s);
  absl::Status CompleteUpload(std::string_view key, const std::string& upload_id,
                              const std::string& complete_xml, const std::string& multipart_etag);

  // Constant after construction.
  const S3Config config_;
  std::string scheme_;  // "http" or "https"
  std::string host_;    // the endpoint's host[:port]
  HttpClient http_;
};

}  // namespace strata::objectstore
