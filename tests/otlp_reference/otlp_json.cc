#include "otlp_reference/otlp_json.h"

#include <cstddef>
#include <string>
#include <string_view>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "google/protobuf/util/json_util.h"

namespace strata::otlp_reference {
namespace {

enum class IdEncoding { kBase64ToHex, kHexToBase64 };

bool IsIdKey(absl::string_view quoted_key) {
  return quoted_key == "\"traceId\"" || quoted_key == "\"spanId\"" ||
         quoted_key == "\"parentSpanId\"";
}

size_t SkipWhitespace(absl::string_view json, size_t i) {
  while (i < json.size() &&
         (json[i] == ' ' || json[i] == '\n' || json[i] == '\r' || json[i] == '\t')) {
    ++i;
  }
  return i;
}

// `json[start]` is a quote; returns the index just past the closing quote.
absl::StatusOr<size_t> EndOfString(absl::string_view json, size_t start) {
  size_t i = start + 1;
  while ((i = json.find_first_of("\\\"", i)) != absl::string_view::npos) {
    if (json[i] == '"') return i + 1;
    i += 2;  // a backslash and the character it escapes
  }
  return absl::InvalidArgumentError(absl::StrCat("unterminated string at offset ", start));
}

bool IsHex(absl::string_view s) {
  if (s.size() % 2 != 0) return false;
  for (char c : s) {
    bool digit = (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
    if (!digit) return false;
  }
  return true;
}

absl::StatusOr<std::string> ConvertId(absl::string_view value, IdEncoding encoding, size_t offset) {
  if (encoding == IdEncoding::kHexToBase64) {
    if (!IsHex(value)) {
      return absl::InvalidArgumentError(
          absl::StrCat("id \"", value, "\" at offset ", offset, " is not hex"));
    }
    return absl::Base64Escape(absl::HexStringToBytes(value));
  }
  std::string bytes;
  if (!absl::Base64Unescape(value, &bytes)) {
    return absl::InvalidArgumentError(
        absl::StrCat("id \"", value, "\" at offset ", offset, " is not base64"));
  }
  return absl::BytesToHexString(bytes);
}

// Keys whose values are 64-bit integers (decimal strings in canonical
// protobuf JSON; parsers accept numbers too).
bool IsInt64Key(absl::string_view quoted_key) {
  static constexpr absl::string_view kKeys[] = {"\"timeUnixNano\"",    "\"startTimeUnixNano\"",
                                                "\"endTimeUnixNano\"", "\"observedTimeUnixNano\"",
                                                "\"count\"",           "\"zeroCount\"",
                                                "\"intValue\"",        "\"asInt\"",
                                                "\"bucketCounts\""};
  for (absl::string_view key : kKeys) {
    if (quoted_key == key) return true;
  }
  return false;
}

bool IsInteger(absl::string_view s) {
  if (!s.empty() && s[0] == '-') s.remove_prefix(1);
  if (s.empty()) return false;
  for (char c : s) {
    if (c < '0' || c > '9') return false;
  }
  return true;
}

struct RewriteRules {
  IdEncoding ids;
  bool unquote_int64 = false;
};

// Rewrites one string value token (quotes included) that follows `key`.
absl::StatusOr<std::string> RewriteValue(absl::string_view key, absl::string_view token,
                                         const RewriteRules& rules, size_t offset) {
  absl::string_view inner = token.substr(1, token.size() - 2);
  if (IsIdKey(key)) {
    absl::StatusOr<std::string> converted = ConvertId(inner, rules.ids, offset);
    if (!converted.ok()) return converted.status();
    return absl::StrCat("\"", *converted, "\"");
  }
  if (rules.unquote_int64 && IsInt64Key(key) && IsInteger(inner)) return std::string(inner);
  return std::string(token);
}

// Copies `json`, rewriting string values by the key they belong to (for
// array elements, the array's key). A JSON string is a key exactly when a
// colon follows it, and no run of characters inside a string can look like
// a whole string token, so tokenizing strings is all the parsing needed.
absl::StatusOr<std::string> RewriteJson(absl::string_view json, const RewriteRules& rules) {
  std::string out;
  out.reserve(json.size() + json.size() / 4);
  absl::string_view key;
  size_t i = 0;
  while (i < json.size()) {
    size_t quote = json.find('"', i);
    if (quote == absl::string_view::npos) quote = json.size();
    out.append(json.data() + i, quote - i);
    i = quote;
    if (i == json.size()) break;
    absl::StatusOr<size_t> end = EndOfString(json, i);
    if (!end.ok()) return end.status();
    absl::string_view token = json.substr(i, *end - i);
    size_t next = SkipWhitespace(json, *end);
    if (next < json.size() && json[next] == ':') {
      key = token;
      out.append(token.data(), token.size());
    } else {
      absl::StatusOr<std::string> value = RewriteValue(key, token, rules, i);
      if (!value.ok()) return value.status();
      out += *value;
    }
    i = *end;
  }
  return out;
}

}  // namespace

absl::StatusOr<std::string> ToOtlpJson(const google::protobuf::Message& message,
                                       const OtlpJsonStyle& style) {
  google::protobuf::util::JsonPrintOptions options;
  options.add_whitespace = style.pretty;
  options.always_print_primitive_fields = style.print_defaults;
  options.always_print_enums_as_ints = true;
  options.preserve_proto_field_names = false;  // lowerCamelCase
  std::string json;
  auto status = google::protobuf::util::MessageToJsonString(message, &json, options);
  if (!status.ok()) {
    return absl::InternalError(absl::StrCat("libprotobuf JSON printer: ", status.ToString()));
  }
  return RewriteJson(absl::string_view(json),
                     {.ids = IdEncoding::kBase64ToHex, .unquote_int64 = style.int64_as_numbers});
}

absl::Status FromOtlpJson(std::string_view json, google::protobuf::Message* message) {
  absl::StatusOr<std::string> canonical =
      RewriteJson(absl::string_view(json.data(), json.size()), {.ids = IdEncoding::kHexToBase64});
  if (!canonical.ok()) return canonical.status();
  google::protobuf::util::JsonParseOptions options;
  options.ignore_unknown_fields = true;
  message->Clear();
  auto status = google::protobuf::util::JsonStringToMessage(*canonical, message, options);
  if (!status.ok()) {
    return absl::InvalidArgumentError(absl::StrCat("libprotobuf JSON parser: ", status.ToString()));
  }
  return absl::OkStatus();
}

}  // namespace strata::otlp_reference
