// Fuzz target for the object store's S3 XML reader (src/objectstore/
// s3_xml.cc): any bytes give a result or an InvalidArgument error from each
// parser, never a crash; an upload id is never empty nor over its cap; a listing that says it is
// truncated always carries a continuation token; and a key put through EscapeMarkup() reads back
// unchanged.

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "common/markup_escape.h"
#include "objectstore/s3_xml.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace strata::objectstore;
  const std::string_view input(reinterpret_cast<const char*>(data), size);

  auto error = ParseS3Error(input);
  if (!error.ok() && !absl::IsInvalidArgument(error.status())) std::abort();
  if (error.ok() && (error->code.size() > 256 || error->message.size() > 1024)) std::abort();

  auto list = ParseListObjectsV2(input);
  if (!list.ok() && !absl::IsInvalidArgument(list.status())) std::abort();
  if (list.ok() && list->truncated && list->next_continuation_token.empty()) std::abort();

  auto deleted = ParseDeleteResult(input);
  if (!deleted.ok() && !absl::IsInvalidArgument(deleted.status())) std::abort();

  auto upload = ParseInitiateMultipartUpload(input);
  if (!upload.ok() && !absl::IsInvalidArgument(upload.status())) std::abort();
  if (upload.ok() && (upload->empty() || upload->size() > kMaxUploadIdBytes)) std::abort();

  auto completed = ParseCompleteMultipartUpload(input);
  if (!completed.ok() && !absl::IsInvalidArgument(completed.status())) std::abort();
  // An <Error> answer is reported as one, whichever parser reads it.
  if (completed.ok() && completed->has_value() != error.ok()) std::abort();

  // Escaping round-trips any bytes that XML character data can hold.
  std::string text(input.substr(0, 200));
  bool representable = true;
  for (unsigned char c : text) {
    if (c < 0x20 && c != '\t' && c != '\n') representable = false;
    if (c == '\r') representable = false;  // fine either way; kept simple
  }
  if (representable) {
    auto round = ParseS3Error("<Error><Code>" + strata::EscapeMarkup(text) + "</Code></Error>");
    if (!round.ok() || round->code != text.substr(0, 256)) std::abort();
  }
  return 0;
}
