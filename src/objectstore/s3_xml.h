#pragma once

// The XML answers strata reads from an S3 server, and nothing else:
// ListObjectsV2's ListBucketResult, a multi-object delete's DeleteResult,
// a multipart upload's InitiateMultipartUploadResult and
// CompleteMultipartUploadResult, and the Error body of a failed request. A small hand-written
// reader for exactly the XML those use (elements, character data, the five named entities and
// numeric character references, CDATA, comments, the XML declaration); a DOCTYPE is refused, so no
// entity is ever expanded. Elements strata does not read are skipped. The bytes come from the
// network: every input is bounded (kMaxS3XmlBytes, kMaxS3XmlDepth) and
// fuzzed (fuzz/s3_xml_fuzz.cc).
//
// Pure functions; safe to call from any thread. Errors: InvalidArgument for
// malformed or oversized XML, naming the byte offset.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "objectstore/batch_store.h"

namespace strata::objectstore {

inline constexpr size_t kMaxS3XmlBytes = 16 << 20;
inline constexpr int kMaxS3XmlDepth = 16;

struct S3ErrorBody {
  std::string code;     // "NoSuchBucket", "SignatureDoesNotMatch", ...
  std::string message;  // may be empty
};

struct ListObjectsV2Result {
  std::vector<ObjectInfo> objects;  // keys as the server sent them
  bool truncated = false;
  std::string next_continuation_token;
};

struct DeleteError {
  std::string key;
  std::string code;
  std::string message;
};

[[nodiscard]] absl::StatusOr<S3ErrorBody> ParseS3Error(std::string_view xml);
[[nodiscard]] absl::StatusOr<ListObjectsV2Result> ParseListObjectsV2(std::string_view xml);
// The <Error> entries of a DeleteResult (empty when every key was deleted).
[[nodiscard]] absl::StatusOr<std::vector<DeleteError>> ParseDeleteResult(std::string_view xml);
// The <UploadId> of an InitiateMultipartUploadResult (never empty, at most
// kMaxUploadIdBytes).
inline constexpr size_t kMaxUploadIdBytes = 1024;
[[nodiscard]] absl::StatusOr<std::string> ParseInitiateMultipartUpload(std::string_view xml);
// A CompleteMultipartUpload's 200 answer, which may carry an error: the
// S3ErrorBody of an <Error> document, or nothing for a
// CompleteMultipartUploadResult.
[[nodiscard]] absl::StatusOr<std::optional<S3ErrorBody>> ParseCompleteMultipartUpload(
    std::string_view xml);

}  // namespace strata::objectstore
