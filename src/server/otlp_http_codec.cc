#include "server/otlp_http_codec.h"

#include <charconv>

#include "common/utf8.h"
#include "fmt/format.h"
#include "otlp/json_writer.h"
#include "otlp/proto_wire.h"

namespace strata::server {
namespace {

char AsciiLower(char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; }

void AppendVarint(uint64_t value, std::string* out) {
  while (value >= 0x80) {
    out->push_back(static_cast<char>(value | 0x80));
    value >>= 7;
  }
  out->push_back(static_cast<char>(value));
}

// Where the value of the first member named `key` starts in `json`, or npos.
// A scan, not a parser: good for the small, flat objects strata's server
// answers with (a Status, a partialSuccess), which is all the client reads.
size_t JsonMemberValue(std::string_view json, std::string_view key) {
  const std::string needle = fmt::format("\"{}\"", key);
  size_t pos = json.find(needle);
  if (pos == std::string_view::npos) return pos;
  pos += needle.size();
  while (pos < json.size() && (json[pos] == ' ' || json[pos] == '\n' || json[pos] == '\t')) ++pos;
  if (pos >= json.size() || json[pos] != ':') return std::string_view::npos;
  ++pos;
  while (pos < json.size() && (json[pos] == ' ' || json[pos] == '\n' || json[pos] == '\t')) ++pos;
  return pos;
}

std::optional<uint32_t> ParseHex4(std::string_view json, size_t pos) {
  if (pos + 4 > json.size()) return std::nullopt;
  uint32_t value = 0;
  auto [end, ec] = std::from_chars(json.data() + pos, json.data() + pos + 4, value, 16);
  if (ec != std::errc() || end != json.data() + pos + 4) return std::nullopt;
  return value;
}

std::optional<std::string> JsonStringMember(std::string_view json, std::string_view key) {
  size_t pos = JsonMemberValue(json, key);
  if (pos >= json.size() || json[pos] != '"') return std::nullopt;
  ++pos;
  std::string out;
  while (pos < json.size()) {
    const char c = json[pos++];
    if (c == '"') return out;
    if (c != '\\') {
      out.push_back(c);
      continue;
    }
    if (pos >= json.size()) break;
    const char escape = json[pos++];
    switch (escape) {
      case 'b':
        out.push_back('\b');
        break;
      case 'f':
        out.push_back('\f');
        break;
      case 'n':
        out.push_back('\n');
        break;
      case 'r':
        out.push_back('\r');
        break;
      case 't':
        out.push_back('\t');
        break;
      case 'u': {
        std::optional<uint32_t> unit = ParseHex4(json, pos);
        if (!unit.has_value()) return std::nullopt;
        pos += 4;
        uint32_t code_point = *unit;
        if (code_point >= 0xD800 && code_point < 0xDC00 && pos + 6 <= json.size() &&
            json[pos] == '\\' && json[pos + 1] == 'u') {
          std::optional<uint32_t> low = ParseHex4(json, pos + 2);
          if (low.has_value() && *low >= 0xDC00 && *low < 0xE000) {
            code_point = 0x10000 + ((code_point - 0xD800) << 10) + (*low - 0xDC00);
            pos += 6;
          }
        }
        AppendUtf8(code_point, &out);
        break;
      }
      default:
        out.push_back(escape);
        break;  // '"', '\\', '/'
    }
  }
  return std::nullopt;
}

// An integer member, as a JSON number or (64-bit OTLP/JSON) a decimal string.
std::optional<int64_t> JsonIntegerMember(std::string_view json, std::string_view key) {
  size_t pos = JsonMemberValue(json, key);
  if (pos >= json.size()) return std::nullopt;
  if (json[pos] == '"') ++pos;
  int64_t value = 0;
  auto [end, ec] = std::from_chars(json.data() + pos, json.data() + json.size(), value);
  if (ec != std::errc()) return std::nullopt;
  return value;
}

// google.rpc.Status.message (field 2) of a protobuf body.
std::optional<std::string> ProtoStatusMessage(std::string_view body) {
  otlp::WireReader reader(body);
  std::optional<std::string> message;
  while (!reader.done()) {
    uint32_t tag = 0;
    if (!reader.ReadTag(&tag)) return std::nullopt;
    if (tag == otlp::Tag(2, otlp::WireType::kLen)) {
      std::string_view payload;
      if (!reader.ReadLen(&payload)) return std::nullopt;
      message = std::string(payload);
    } else if (!reader.SkipField(tag)) {
      return std::nullopt;
    }
  }
  return message;
}

// Export<Signal>ServiceResponse.partial_success.rejected_<rows> (field 1 of
// field 1) of a protobuf body.
int64_t ProtoRejectedRows(std::string_view body) {
  otlp::WireReader reader(body);
  int64_t rejected = 0;
  while (!reader.done()) {
    uint32_t tag = 0;
    if (!reader.ReadTag(&tag)) return rejected;
    if (tag != otlp::Tag(1, otlp::WireType::kLen)) {
      if (!reader.SkipField(tag)) return rejected;
      continue;
    }
    std::string_view partial;
    if (!reader.ReadLen(&partial)) return rejected;
    otlp::WireReader inner(partial);
    while (!inner.done()) {
      uint32_t inner_tag = 0;
      if (!inner.ReadTag(&inner_tag)) return rejected;
      if (inner_tag == otlp::Tag(1, otlp::WireType::kVarint)) {
        uint64_t value = 0;
        if (!inner.ReadVarint(&value)) return rejected;
        rejected = static_cast<int64_t>(value);
      } else if (!inner.SkipField(inner_tag)) {
        return rejected;
      }
    }
  }
  return rejected;
}

std::string_view RejectedRowsJsonMember(Signal signal) {
  switch (signal) {
    case Signal::kTraces:
      return "rejectedSpans";
    case Signal::kLogs:
      return "rejectedLogRecords";
    case Signal::kMetrics:
      return "rejectedDataPoints";
  }
  return "rejected";
}

}  // namespace

bool AsciiEqualsIgnoreCase(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (AsciiLower(a[i]) != AsciiLower(b[i])) return false;
  }
  return true;
}

std::string_view TrimHttpWhitespace(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

std::string_view MediaTypeOf(std::string_view content_type) {
  return TrimHttpWhitespace(content_type.substr(0, content_type.find(';')));
}

std::string_view ContentTypeFor(Encoding encoding) {
  return encoding == Encoding::kProtobuf ? "application/x-protobuf" : "application/json";
}

std::string EncodeStatusBody(Encoding encoding, const absl::Status& status) {
  const int code = static_cast<int>(status.code());
  const std::string message(status.message());
  std::string out;
  if (encoding == Encoding::kProtobuf) {
    if (code != 0) {
      out.push_back(0x08);
      AppendVarint(static_cast<uint64_t>(code), &out);
    }
    if (!message.empty()) {
      out.push_back(0x12);
      AppendVarint(message.size(), &out);
      out += message;
    }
    return out;
  }
  otlp::JsonWriter json(&out);
  json.BeginObject();
  json.Key("code");
  json.Int(code);
  json.Key("message");
  json.String(message);
  json.EndObject();
  return out;
}

std::optional<Encoding> EncodingForContentType(std::string_view content_type) {
  const std::string_view media = MediaTypeOf(content_type);
  if (AsciiEqualsIgnoreCase(media, "application/x-protobuf")) return Encoding::kProtobuf;
  if (AsciiEqualsIgnoreCase(media, "application/json")) return Encoding::kJson;
  return std::nullopt;
}

absl::StatusCode CodeForHttpStatus(int status) {
  switch (status) {
    case 200:
      return absl::StatusCode::kOk;
    case 400:
      return absl::StatusCode::kInvalidArgument;
    case 401:
      return absl::StatusCode::kUnauthenticated;
    case 403:
      return absl::StatusCode::kPermissionDenied;
    case 404:
      return absl::StatusCode::kNotFound;
    case 413:
      return absl::StatusCode::kOutOfRange;
    case 415:
      return absl::StatusCode::kFailedPrecondition;
    case 429:
      return absl::StatusCode::kResourceExhausted;
    case 502:
    case 503:
      return absl::StatusCode::kUnavailable;
    case 504:
      return absl::StatusCode::kDeadlineExceeded;
    case 500:
      return absl::StatusCode::kInternal;
    default:
      return absl::StatusCode::kUnknown;
  }
}

ExportReply ParseExportReply(Signal signal, int status, std::string_view content_type,
                             std::string_view retry_after, std::string_view body) {
  ExportReply reply;
  retry_after = TrimHttpWhitespace(retry_after);
  int64_t seconds = 0;
  if (!retry_after.empty()) {
    auto [end, ec] =
        std::from_chars(retry_after.data(), retry_after.data() + retry_after.size(), seconds);
    if (ec == std::errc() && seconds > 0) reply.retry_after = std::chrono::seconds(seconds);
  }
  const std::optional<Encoding> encoding = EncodingForContentType(content_type);
  if (status == 200) {
    if (encoding == Encoding::kProtobuf) {
      reply.rejected_rows = ProtoRejectedRows(body);
    } else if (encoding == Encoding::kJson) {
      reply.rejected_rows = JsonIntegerMember(body, RejectedRowsJsonMember(signal)).value_or(0);
    }
    return reply;
  }
  std::optional<std::string> message;
  if (encoding == Encoding::kProtobuf) {
    message = ProtoStatusMessage(body);
  } else if (encoding == Encoding::kJson) {
    message = JsonStringMember(body, "message");
  }
  if (!message.has_value()) message = std::string(TrimHttpWhitespace(body.substr(0, 1024)));
  while (!message->empty() && (message->back() == '\n' || message->back() == '\r')) {
    message->pop_back();
  }
  if (message->empty()) message = fmt::format("HTTP status {}", status);
  const absl::StatusCode code = CodeForHttpStatus(status);
  reply.status =
      absl::Status(code == absl::StatusCode::kOk ? absl::StatusCode::kUnknown : code, *message);
  return reply;
}

}  // namespace strata::server
