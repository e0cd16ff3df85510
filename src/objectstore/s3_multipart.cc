// S3BatchStore's streamed puts: one PUT when the object fits a part, else a
// multipart upload (s3_batch_store.h says how, and why the HEAD first).

#include <algorithm>

#include "common/markup_escape.h"
#include "common/status_macros.h"
#include "fmt/format.h"
#include "objectstore/digests.h"
#include "objectstore/s3_batch_store.h"
#include "objectstore/s3_xml.h"

namespace strata::objectstore {

absl::Status S3BatchStore::PutStreamIfAbsent(std::string_view key, uint64_t size,
                                             const PartReader& read) {
  STRATA_RETURN_IF_ERROR(ValidateObjectKey(key));
  if (size <= config_.part_bytes) {
    std::string data;
    if (size > 0) {
      STRATA_ASSIGN_OR_RETURN(data, read(0, static_cast<size_t>(size)));
      if (data.size() != size) {
        return absl::InternalError(
            fmt::format("streamed put of {}: {} bytes read, not {}", key, data.size(), size));
      }
    }
    return PutIfAbsent(key, data);
  }
  const uint64_t parts = (size + config_.part_bytes - 1) / config_.part_bytes;
  if (parts > kMaxS3Parts) {
    return absl::InvalidArgumentError(
        fmt::format("streamed put of {}: {} bytes need {} parts of {} bytes; S3 takes at most {}",
                    key, size, parts, config_.part_bytes, kMaxS3Parts));
  }
  absl::StatusOr<ObjectInfo> existing = Head(key);
  if (existing.ok()) {
    return absl::AlreadyExistsError(
        fmt::format("PUT {} on {}: the object already exists", key, Describe()));
  }
  if (!absl::IsNotFound(existing.status())) return existing.status();
  return PutMultipart(key, size, read);
}

absl::Status S3BatchStore::PutMultipart(std::string_view key, uint64_t size,
                                        const PartReader& read) {
  const std::string object = config_.prefix + std::string(key);
  Call start;
  start.method = "POST";
  start.object = object;
  start.query = {{"uploads", ""}};
  start.headers = {{"content-type", "application/octet-stream"}};
  STRATA_ASSIGN_OR_RETURN(Outcome started, Send(start));
  const std::string what = fmt::format("multipart upload of {}", key);
  if (started.response.status != 200) return ErrorFor(what, started.response);
  absl::StatusOr<std::string> upload_id = ParseInitiateMultipartUpload(started.response.body);
  if (!upload_id.ok()) {
    return absl::InternalError(
        fmt::format("{} on {}: {}", what, Describe(), std::string(upload_id.status().message())));
  }
  std::string complete_xml;
  std::string part_md5s;
  absl::Status status = UploadParts(key, *upload_id, size, read, &complete_xml, &part_md5s);
  if (status.ok()) {
    const uint64_t parts = part_md5s.size() / 16;
    status = CompleteUpload(key, *upload_id, complete_xml,
                            fmt::format("\"{}-{}\"", HexLower(Md5(part_md5s)), parts));
  }
  if (!status.ok()) {
    // Frees the parts; a failure here leaves them to the bucket's lifecycle
    // rule, and the put's own error is the one to report.
    Call abort;
    abort.method = "DELETE";
    abort.object = object;
    abort.query = {{"uploadId", *upload_id}};
    (void)Send(abort);
  }
  return status;
}

absl::Status S3BatchStore::UploadParts(std::string_view key, const std::string& upload_id,
                                       uint64_t size, const PartReader& read,
                                       std::string* complete_xml, std::string* part_md5s) {
  *complete_xml = "<?xml version=\"1.0\" encoding=\"UTF-8\"?><CompleteMultipartUpload>";
  uint64_t number = 1;
  for (uint64_t offset = 0; offset < size; offset += config_.part_bytes, ++number) {
    const size_t length = static_cast<size_t>(std::min(config_.part_bytes, size - offset));
    STRATA_ASSIGN_OR_RETURN(std::string part, read(offset, length));
    if (part.size() != length) {
      return absl::InternalError(fmt::format("streamed put of {}: {} bytes read at {}, not {}", key,
                                             part.size(), offset, length));
    }
    Call call;
    call.method = "PUT";
    call.object = config_.prefix + std::string(key);
    call.query = {{"partNumber", std::to_string(number)}, {"uploadId", upload_id}};
    call.body = part;
    STRATA_ASSIGN_OR_RETURN(Outcome outcome, Send(call));
    if (outcome.response.status != 200) {
      return ErrorFor(fmt::format("part {} of {}", number, key), outcome.response);
    }
    const std::string etag(outcome.response.Header("etag"));
    if (etag.empty()) {
      return absl::InternalError(
          fmt::format("part {} of {} on {}: no ETag in the answer", number, key, Describe()));
    }
    *part_md5s += Md5(part);
    *complete_xml += fmt::format("<Part><PartNumber>{}</PartNumber><ETag>{}</ETag></Part>", number,
                                 EscapeMarkup(etag));
  }
  *complete_xml += "</CompleteMultipartUpload>";
  return absl::OkStatus();
}

absl::Status S3BatchStore::CompleteUpload(std::string_view key, const std::string& upload_id,
                                          const std::string& complete_xml,
                                          const std::string& multipart_etag) {
  Call call;
  call.method = "POST";
  call.object = config_.prefix + std::string(key);
  call.query = {{"uploadId", upload_id}};
  call.headers = {{"if-none-match", "*"}, {"content-type", "application/xml"}};
  call.body = complete_xml;
  STRATA_ASSIGN_OR_RETURN(Outcome outcome, Send(call));
  const HttpResponse& response = outcome.response;
  const std::string what = fmt::format("completing the upload of {}", key);
  if (response.status == 200) {
    // A 200 may still carry an error (S3 sends its answer before it knows).
    absl::StatusOr<std::optional<S3ErrorBody>> answer = ParseCompleteMultipartUpload(response.body);
    if (!answer.ok()) {
      return absl::InternalError(
          fmt::format("{} on {}: {}", what, Describe(), std::string(answer.status().message())));
    }
    if (!answer->has_value()) return absl::OkStatus();
    return absl::UnavailableError(
        fmt::format("{} on {}: {} {}", what, Describe(), (*answer)->code, (*answer)->message));
  }
  if (response.status == 404 && outcome.retried_after_ambiguous_failure) {
    // An earlier attempt may have completed the upload and lost the answer.
    Call head{"HEAD", call.object, {}, {}, {}};
    STRATA_ASSIGN_OR_RETURN(Outcome existing, Send(head));
    if (existing.response.status == 200 && existing.response.Header("etag") == multipart_etag) {
      return absl::OkStatus();
    }
  }
  return ErrorFor(what, response);
}

}  // namespace strata::objectstore
