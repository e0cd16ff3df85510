#include "otlp/loki_push.h"

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "otlp/proto_wire.h"
#include "simdjson.h"

namespace strata::otlp {
namespace {

absl::Status Malformed(std::string_view why) {
  return absl::InvalidArgumentError(
      absl::StrCat("malformed Loki push: ", absl::string_view(why.data(), why.size())));
}

absl::Status TooMany(std::string_view what, size_t max) {
  return absl::ResourceExhaustedError(
      absl::StrCat("Loki push: more than ", max, " ", absl::string_view(what.data(), what.size())));
}

// Adds one entry to `stream` within the limits.
absl::Status AddEntry(LokiPushEntry entry, const LokiPushLimits& limits, LokiPushStream* stream,
                      LokiPush* push) {
  if (entry.line.size() > limits.line_bytes_max)
    return TooMany("bytes in a line", limits.line_bytes_max);
  if (entry.metadata.size() > limits.labels_max)
    return TooMany("metadata labels", limits.labels_max);
  if (++push->entries > limits.entries_max) return TooMany("entries", limits.entries_max);
  stream->entries.push_back(std::move(entry));
  return absl::OkStatus();
}

bool ReadPair(std::string_view bytes, std::pair<std::string, std::string>* pair) {
  WireReader r(bytes);
  while (!r.done()) {
    uint32_t tag = 0;
    std::string_view text;
    if (!r.ReadTag(&tag)) return false;
    if (tag == Tag(1, WireType::kLen) || tag == Tag(2, WireType::kLen)) {
      if (!r.ReadLen(&text)) return false;
      (tag == Tag(1, WireType::kLen) ? pair->first : pair->second) = std::string(text);
    } else if (!r.SkipField(tag)) {
      return false;
    }
  }
  return true;
}

bool ReadTimestamp(std::string_view bytes, int64_t* nanos) {
  WireReader r(bytes);
  uint64_t seconds = 0;
  uint64_t fraction = 0;
  while (!r.done()) {
    uint32_t tag = 0;
    if (!r.ReadTag(&tag)) return false;
    if (tag == Tag(1, WireType::kVarint)) {
      if (!r.ReadVarint(&seconds)) return false;
    } else if (tag == Tag(2, WireType::kVarint)) {
      if (!r.ReadVarint(&fraction)) return false;
    } else if (!r.SkipField(tag)) {
      return false;
    }
  }
  const int64_t s = static_cast<int64_t>(seconds);
  const int64_t n = static_cast<int32_t>(static_cast<uint32_t>(fraction));
  if (s < 0 || s > 9'000'000'000 || n < 0 || n >= 1'000'000'000) return false;
  *nanos = s * 1'000'000'000 + n;
  return true;
}

absl::StatusOr<LokiPushEntry> ReadEntry(std::string_view bytes, const LokiPushLimits& limits) {
  LokiPushEntry entry;
  WireReader r(bytes);
  while (!r.done()) {
    uint32_t tag = 0;
    std::string_view payload;
    if (!r.ReadTag(&tag)) return Malformed(r.error());
    if ((tag & 7) != static_cast<uint32_t>(WireType::kLen) || tag >> 3 < 1 || tag >> 3 > 3) {
      if (!r.SkipField(tag)) return Malformed(r.error());
      continue;
    }
    if (!r.ReadLen(&payload)) return Malformed(r.error());
    if (tag >> 3 == 1) {
      if (!ReadTimestamp(payload, &entry.time_unix_nano)) return Malformed("bad timestamp");
    } else if (tag >> 3 == 2) {
      if (payload.size() > limits.line_bytes_max) {
        return TooMany("bytes in a line", limits.line_bytes_max);
      }
      entry.line = std::string(payload);
    } else {
      if (entry.metadata.size() >= limits.labels_max)
        return TooMany("metadata labels", limits.labels_max);
      std::pair<std::string, std::string> pair;
      if (!ReadPair(payload, &pair)) return Malformed("bad structured metadata");
      entry.metadata.push_back(std::move(pair));
    }
  }
  return entry;
}

}  // namespace

absl::StatusOr<LokiLabelPairs> ParseLokiLabelSet(std::string_view text, size_t labels_max) {
  LokiLabelPairs labels;
  size_t i = 0;
  auto skip_space = [&] {
    while (i < text.size() && absl::ascii_isspace(static_cast<unsigned char>(text[i]))) ++i;
  };
  skip_space();
  if (i == text.size() || text[i] != '{') return Malformed("a label set starts with '{'");
  ++i;
  skip_space();
  if (i < text.size() && text[i] == '}') {
    ++i;
  } else {
    while (true) {
      skip_space();
      const size_t name_start = i;
      while (i < text.size() &&
             (absl::ascii_isalnum(static_cast<unsigned char>(text[i])) || text[i] == '_')) {
        ++i;
      }
      if (i == name_start || absl::ascii_isdigit(static_cast<unsigned char>(text[name_start]))) {
        return Malformed("bad label name");
      }
      std::string name(text.substr(name_start, i - name_start));
      skip_space();
      if (i == text.size() || text[i] != '=') return Malformed("expected '=' after a label name");
      ++i;
      skip_space();
      if (i == text.size() || text[i] != '"') return Malformed("expected a quoted label value");
      ++i;
      std::string value;
      while (true) {
        if (i == text.size()) return Malformed("unterminated label value");
        const char c = text[i++];
        if (c == '"') break;
        if (c != '\\') {
          value.push_back(c);
          continue;
        }
        if (i == text.size()) return Malformed("unterminated escape");
        const char e = text[i++];
        switch (e) {
          case 'n':
            value.push_back('\n');
            break;
          case 't':
            value.push_back('\t');
            break;
          case '\\':
            value.push_back('\\');
            break;
          case '"':
            value.push_back('"');
            break;
          default:
            return Malformed("unknown escape in a label value");
        }
      }
      if (labels.size() >= labels_max) return TooMany("labels in a stream", labels_max);
      labels.emplace_back(std::move(name), std::move(value));
      skip_space();
      if (i < text.size() && text[i] == ',') {
        ++i;
        continue;
      }
      if (i < text.size() && text[i] == '}') {
        ++i;
        break;
      }
      return Malformed("expected ',' or '}' in a label set");
    }
  }
  skip_space();
  if (i != text.size()) return Malformed("text after a label set");
  return labels;
}

absl::StatusOr<LokiPush> DecodeLokiPushProto(std::string_view bytes, const LokiPushLimits& limits) {
  LokiPush push;
  WireReader r(bytes);
  while (!r.done()) {
    uint32_t tag = 0;
    std::string_view stream_bytes;
    if (!r.ReadTag(&tag)) return Malformed(r.error());
    if (tag != Tag(1, WireType::kLen)) {
      if (!r.SkipField(tag)) return Malformed(r.error());
      continue;
    }
    if (!r.ReadLen(&stream_bytes)) return Malformed(r.error());
    if (push.streams.size() >= limits.streams_max) return TooMany("streams", limits.streams_max);
    LokiPushStream& stream = push.streams.emplace_back();
    WireReader s(stream_bytes);
    while (!s.done()) {
      uint32_t field = 0;
      std::string_view payload;
      if (!s.ReadTag(&field)) return Malformed(s.error());
      if (field == Tag(1, WireType::kLen)) {
        if (!s.ReadLen(&payload)) return Malformed(s.error());
        absl::StatusOr<LokiLabelPairs> labels = ParseLokiLabelSet(payload, limits.labels_max);
        if (!labels.ok()) return labels.status();
        stream.labels = *std::move(labels);
      } else if (field == Tag(2, WireType::kLen)) {
        if (!s.ReadLen(&payload)) return Malformed(s.error());
        absl::StatusOr<LokiPushEntry> entry = ReadEntry(payload, limits);
        if (!entry.ok()) return entry.status();
        if (absl::Status added = AddEntry(*std::move(entry), limits, &stream, &push); !added.ok()) {
          return added;
        }
      } else if (!s.SkipField(field)) {
        return Malformed(s.error());
      }
    }
  }
  return push;
}

namespace {

absl::Status ReadJsonPairs(simdjson::dom::element element, size_t labels_max, LokiLabelPairs* out) {
  simdjson::dom::object object;
  if (element.get_object().get(object) != simdjson::SUCCESS) {
    return Malformed("labels must be an object");
  }
  for (auto field : object) {
    std::string_view value;
    if (field.value.get_string().get(value) != simdjson::SUCCESS) {
      return Malformed("label values must be strings");
    }
    if (out->size() >= labels_max) return TooMany("labels", labels_max);
    out->emplace_back(std::string(field.key), std::string(value));
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<LokiPush> DecodeLokiPushJson(std::string_view bytes, const LokiPushLimits& limits) {
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  if (parser.parse(bytes.data(), bytes.size()).get(doc) != simdjson::SUCCESS) {
    return Malformed("not JSON");
  }
  simdjson::dom::array streams;
  if (doc["streams"].get_array().get(streams) != simdjson::SUCCESS) {
    return Malformed("no streams array");
  }
  LokiPush push;
  for (simdjson::dom::element s : streams) {
    if (push.streams.size() >= limits.streams_max) return TooMany("streams", limits.streams_max);
    LokiPushStream& stream = push.streams.emplace_back();
    simdjson::dom::element labels;
    if (s["stream"].get(labels) == simdjson::SUCCESS) {
      if (absl::Status st = ReadJsonPairs(labels, limits.labels_max, &stream.labels); !st.ok()) {
        return st;
      }
    }
    simdjson::dom::array values;
    if (s["values"].get_array().get(values) != simdjson::SUCCESS) {
      return Malformed("a stream without a values array");
    }
    for (simdjson::dom::element v : values) {
      simdjson::dom::array cells;
      if (v.get_array().get(cells) != simdjson::SUCCESS || cells.size() < 2 || cells.size() > 3) {
        return Malformed("a value is [timestamp, line] or [timestamp, line, metadata]");
      }
      LokiPushEntry entry;
      std::string_view time;
      std::string_view line;
      if (cells.at(0).get_string().get(time) != simdjson::SUCCESS ||
          !absl::SimpleAtoi(absl::string_view(time.data(), time.size()), &entry.time_unix_nano) ||
          entry.time_unix_nano < 0) {
        return Malformed("a timestamp is a string of unix nanoseconds");
      }
      if (cells.at(1).get_string().get(line) != simdjson::SUCCESS) {
        return Malformed("a line is a string");
      }
      entry.line = std::string(line);
      if (cells.size() == 3) {
        if (absl::Status st =
                ReadJsonPairs(cells.at(2).value(), limits.labels_max, &entry.metadata);
            !st.ok()) {
          return st;
        }
      }
      if (absl::Status added = AddEntry(std::move(entry), limits, &stream, &push); !added.ok()) {
        return added;
      }
    }
  }
  return push;
}

}  // namespace strata::otlp
