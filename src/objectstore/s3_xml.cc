#include "objectstore/s3_xml.h"

#include <functional>

#include "common/status_macros.h"
#include "common/utf8.h"
#include "fmt/format.h"

namespace strata::objectstore {
namespace {

// Called at every end tag with the names of the open elements (outermost
// first, the closing one last) and the element's decoded character data
// (everything directly inside it, for elements with children too).
using ElementHandler =
    std::function<absl::Status(const std::vector<std::string_view>& path, std::string_view text)>;

absl::Status Malformed(size_t offset, std::string_view what) {
  return absl::InvalidArgumentError(fmt::format("S3 XML answer at byte {}: {}", offset, what));
}

bool IsNameChar(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' ||
         c == '_' || c == '.' || c == ':';
}

// Decodes the reference starting at xml[i] == '&' into `out`; returns the
// index after its ';'.
absl::StatusOr<size_t> DecodeReference(std::string_view xml, size_t i, std::string& out) {
  size_t end = xml.find(';', i);
  if (end == std::string_view::npos || end - i > 12) return Malformed(i, "unterminated '&'");
  std::string_view name = xml.substr(i + 1, end - i - 1);
  if (name == "lt") {
    out.push_back('<');
  } else if (name == "gt") {
    out.push_back('>');
  } else if (name == "amp") {
    out.push_back('&');
  } else if (name == "quot") {
    out.push_back('"');
  } else if (name == "apos") {
    out.push_back('\'');
  } else if (name.size() >= 2 && name[0] == '#') {
    uint32_t code_point = 0;
    bool hex = name[1] == 'x';
    std::string_view digits = name.substr(hex ? 2 : 1);
    if (digits.empty() || digits.size() > 8) return Malformed(i, "bad character reference");
    for (char c : digits) {
      int digit;
      if (c >= '0' && c <= '9') {
        digit = c - '0';
      } else if (hex && c >= 'a' && c <= 'f') {
        digit = c - 'a' + 10;
      } else if (hex && c >= 'A' && c <= 'F') {
        digit = c - 'A' + 10;
      } else {
        return Malformed(i, "bad character reference");
      }
      code_point = code_point * (hex ? 16 : 10) + digit;
      if (code_point > 0x10FFFF) return Malformed(i, "character reference out of range");
    }
    if (code_point == 0 || (code_point >= 0xD800 && code_point <= 0xDFFF)) {
      return Malformed(i, "character reference to no character");
    }
    AppendUtf8(code_point, &out);
  } else {
    return Malformed(i, "unknown entity");
  }
  return end + 1;
}

absl::Status WalkXml(std::string_view xml, const ElementHandler& handler) {
  if (xml.size() > kMaxS3XmlBytes) {
    return Malformed(0, fmt::format("larger than {} bytes", kMaxS3XmlBytes));
  }
  std::vector<std::string_view> open;
  std::vector<std::string> texts;  // character data of each open element
  bool saw_root = false;
  size_t i = 0;
  while (i < xml.size()) {
    char c = xml[i];
    if (c != '<') {
      if (open.empty()) {
        if (c == ' ' || c == '\t' || c == '\r' || c == '\n') {
          ++i;
          continue;
        }
        return Malformed(i, "character data outside the root element");
      }
      if (c == '&') {
        STRATA_ASSIGN_OR_RETURN(i, DecodeReference(xml, i, texts.back()));
      } else {
        texts.back().push_back(c);
        ++i;
      }
      continue;
    }
    std::string_view rest = xml.substr(i);
    if (rest.starts_with("<?")) {
      size_t end = xml.find("?>", i + 2);
      if (end == std::string_view::npos) return Malformed(i, "unterminated '<?'");
      i = end + 2;
    } else if (rest.starts_with("<!--")) {
      size_t end = xml.find("-->", i + 4);
      if (end == std::string_view::npos) return Malformed(i, "unterminated comment");
      i = end + 3;
    } else if (rest.starts_with("<![CDATA[")) {
      if (open.empty()) return Malformed(i, "CDATA outside the root element");
      size_t end = xml.find("]]>", i + 9);
      if (end == std::string_view::npos) return Malformed(i, "unterminated CDATA");
      texts.back().append(xml.substr(i + 9, end - i - 9));
      i = end + 3;
    } else if (rest.starts_with("<!")) {
      return Malformed(i, "a DOCTYPE or other declaration (refused)");
    } else if (rest.starts_with("</")) {
      size_t start = i + 2;
      size_t j = start;
      while (j < xml.size() && IsNameChar(xml[j])) ++j;
      std::string_view name = xml.substr(start, j - start);
      while (j < xml.size() &&
             (xml[j] == ' ' || xml[j] == '\t' || xml[j] == '\r' || xml[j] == '\n')) {
        ++j;
      }
      if (j >= xml.size() || xml[j] != '>') return Malformed(i, "unterminated end tag");
      if (open.empty() || open.back() != name) return Malformed(i, "end tag does not match");
      STRATA_RETURN_IF_ERROR(handler(open, texts.back()));
      open.pop_back();
      texts.pop_back();
      i = j + 1;
    } else {
      size_t start = i + 1;
      size_t j = start;
      while (j < xml.size() && IsNameChar(xml[j])) ++j;
      if (j == start) return Malformed(i, "a '<' that starts no tag");
      std::string_view name = xml.substr(start, j - start);
      // Attributes are skipped, quoted values included.
      char quote = 0;
      while (j < xml.size() && (quote != 0 || xml[j] != '>')) {
        if (quote != 0) {
          if (xml[j] == quote) quote = 0;
        } else if (xml[j] == '"' || xml[j] == '\'') {
          quote = xml[j];
        } else if (xml[j] == '<') {
          return Malformed(j, "'<' inside a tag");
        }
        ++j;
      }
      if (j >= xml.size()) return Malformed(i, "unterminated start tag");
      bool empty_element = xml[j - 1] == '/' && j - 1 >= start + name.size();
      if (open.empty() && saw_root) return Malformed(i, "a second root element");
      saw_root = true;
      if (static_cast<int>(open.size()) >= kMaxS3XmlDepth) {
        return Malformed(i, fmt::format("nested deeper than {} elements", kMaxS3XmlDepth));
      }
      open.push_back(name);
      texts.emplace_back();
      if (empty_element) {
        STRATA_RETURN_IF_ERROR(handler(open, texts.back()));
        open.pop_back();
        texts.pop_back();
      }
      i = j + 1;
    }
  }
  if (!open.empty()) return Malformed(xml.size(), "ends inside an element");
  if (!saw_root) return Malformed(xml.size(), "no element");
  return absl::OkStatus();
}

// Decimal digits only (no sign, no space), at most 19 of them.
bool ParseDecimal(std::string_view text, uint64_t* out) {
  if (text.empty() || text.size() > 19) return false;
  uint64_t value = 0;
  for (char c : text) {
    if (c < '0' || c > '9') return false;
    value = value * 10 + static_cast<uint64_t>(c - '0');
  }
  *out = value;
  return true;
}

bool PathIs(const std::vector<std::string_view>& path,
            std::initializer_list<std::string_view> names) {
  if (path.size() != names.size()) return false;
  size_t i = 0;
  for (std::string_view name : names) {
    if (path[i++] != name) return false;
  }
  return true;
}

}  // namespace

absl::StatusOr<S3ErrorBody> ParseS3Error(std::string_view xml) {
  S3ErrorBody body;
  bool is_error = false;
  STRATA_RETURN_IF_ERROR(WalkXml(xml, [&](const auto& path, std::string_view text) {
    if (PathIs(path, {"Error"})) is_error = true;
    if (PathIs(path, {"Error", "Code"})) body.code = std::string(text.substr(0, 256));
    if (PathIs(path, {"Error", "Message"})) body.message = std::string(text.substr(0, 1024));
    return absl::OkStatus();
  }));
  if (!is_error) return Malformed(0, "not an <Error> document");
  return body;
}

absl::StatusOr<ListObjectsV2Result> ParseListObjectsV2(std::string_view xml) {
  ListObjectsV2Result result;
  ObjectInfo current;
  bool has_key = false;
  bool is_list = false;
  STRATA_RETURN_IF_ERROR(WalkXml(xml, [&](const auto& path, std::string_view text) {
    if (PathIs(path, {"ListBucketResult"})) {
      is_list = true;
    } else if (PathIs(path, {"ListBucketResult", "Contents", "Key"})) {
      current.key = std::string(text);
      has_key = true;
    } else if (PathIs(path, {"ListBucketResult", "Contents", "Size"})) {
      if (!ParseDecimal(text, &current.size)) {
        return Malformed(0, fmt::format("object size \"{}\" is not a number", text.substr(0, 40)));
      }
    } else if (PathIs(path, {"ListBucketResult", "Contents"})) {
      if (!has_key) return Malformed(0, "<Contents> without <Key>");
      result.objects.push_back(std::move(current));
      current = ObjectInfo{};
      has_key = false;
    } else if (PathIs(path, {"ListBucketResult", "IsTruncated"})) {
      if (text != "true" && text != "false") return Malformed(0, "<IsTruncated> is not a boolean");
      result.truncated = text == "true";
    } else if (PathIs(path, {"ListBucketResult", "NextContinuationToken"})) {
      result.next_continuation_token = std::string(text);
    }
    return absl::OkStatus();
  }));
  if (!is_list) return Malformed(0, "not a <ListBucketResult> document");
  if (result.truncated && result.next_continuation_token.empty()) {
    return Malformed(0, "truncated listing without <NextContinuationToken>");
  }
  return result;
}

absl::StatusOr<std::vector<DeleteError>> ParseDeleteResult(std::string_view xml) {
  std::vector<DeleteError> errors;
  DeleteError current;
  bool is_result = false;
  STRATA_RETURN_IF_ERROR(WalkXml(xml, [&](const auto& path, std::string_view text) {
    if (PathIs(path, {"DeleteResult"})) {
      is_result = true;
    } else if (PathIs(path, {"DeleteResult", "Error", "Key"})) {
      current.key = std::string(text);
    } else if (PathIs(path, {"DeleteResult", "Error", "Code"})) {
      current.code = std::string(text.substr(0, 256));
    } else if (PathIs(path, {"DeleteResult", "Error", "Message"})) {
      current.message = std::string(text.substr(0, 1024));
    } else if (PathIs(path, {"DeleteResult", "Error"})) {
      errors.push_back(std::move(current));
      current = DeleteError{};
    }
    return absl::OkStatus();
  }));
  if (!is_result) return Malformed(0, "not a <DeleteResult> document");
  return errors;
}

absl::StatusOr<std::string> ParseInitiateMultipartUpload(std::string_view xml) {
  std::string upload_id;
  bool is_result = false;
  STRATA_RETURN_IF_ERROR(WalkXml(xml, [&](const auto& path, std::string_view text) {
    if (PathIs(path, {"InitiateMultipartUploadResult"})) is_result = true;
    if (PathIs(path, {"InitiateMultipartUploadResult", "UploadId"})) {
      if (text.empty() || text.size() > kMaxUploadIdBytes) {
        return Malformed(0, fmt::format("<UploadId> of {} bytes", text.size()));
      }
      upload_id = std::string(text);
    }
    return absl::OkStatus();
  }));
  if (!is_result) return Malformed(0, "not an <InitiateMultipartUploadResult> document");
  if (upload_id.empty()) return Malformed(0, "no <UploadId>");
  return upload_id;
}

absl::StatusOr<std::optional<S3ErrorBody>> ParseCompleteMultipartUpload(std::string_view xml) {
  // An <Error> anywhere at the top wins: a failure is never taken for success.
  absl::StatusOr<S3ErrorBody> error = ParseS3Error(xml);
  if (error.ok()) return *std::move(error);
  bool is_result = false;
  STRATA_RETURN_IF_ERROR(WalkXml(xml, [&](const auto& path, std::string_view) {
    if (PathIs(path, {"CompleteMultipartUploadResult"})) is_result = true;
    return absl::OkStatus();
  }));
  if (!is_result) return Malformed(0, "neither <CompleteMultipartUploadResult> nor <Error>");
  return std::nullopt;
}

}  // namespace strata::objectstore
