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

// Counts one entry, kept or dropped, against the push's cap.
absl::Status CountEntry(const LokiPushLimits& limits, const LokiPush& push) {
  if (push.entries + push.rejected.rows >= limits.entries_max) {
    return TooMany("entries", limits.entries_max);
  }
  return absl::OkStatus();
}

// Why an entry cannot be stored, or "" when it can (the per-entry limits).
std::string EntryProblem(size_t line_bytes, size_t metadata_pairs, const LokiPushLimits& limits) {
  if (line_bytes > limits.line_bytes_max) {
    return absl::StrCat("a line of ", line_bytes, " bytes is over the limit of ",
                        limits.line_bytes_max);
  }
  if (metadata_pairs > limits.labels_max) {
    return absl::StrCat("more than ", limits.labels_max, " structured metadata pairs");
  }
  return "";
}

void RejectEntry(size_t stream_index, size_t entry_index, std::string_view why, LokiPush* push) {
  push->rejected.Add(RowRejectReason::kLokiEntry, 1, [&] {
    return absl::StrCat("stream ", stream_index, ", entry ", entry_index, ": ",
                        absl::string_view(why.data(), why.size()));
  });
}

// Drops the last stream of `push` with its entries: its labels cannot be
// stored (`why`).
void RejectLastStream(std::string_view why, LokiPush* push) {
  const size_t index = push->streams.size() - 1;
  const size_t entries = push->streams.back().entries.size();
  push->entries -= entries;
  push->streams.pop_back();
  // A stream without entries drops no row but is still reported.
  if (push->rejected.empty()) {
    push->rejected.first_message =
        absl::StrCat("stream ", index, ": ", absl::string_view(why.data(), why.size()));
  }
  push->rejected.rows += entries;
  push->rejected.by_reason[static_cast<size_t>(RowRejectReason::kLokiStreamLabels)] += entries;
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

enum class TimestampRead { kOk, kOutOfRange, kMalformed };

TimestampRead ReadTimestamp(std::string_view bytes, int64_t* nanos) {
  WireReader r(bytes);
  uint64_t seconds = 0;
  uint64_t fraction = 0;
  while (!r.done()) {
    uint32_t tag = 0;
    if (!r.ReadTag(&tag)) return TimestampRead::kMalformed;
    if (tag == Tag(1, WireType::kVarint)) {
      if (!r.ReadVarint(&seconds)) return TimestampRead::kMalformed;
    } else if (tag == Tag(2, WireType::kVarint)) {
      if (!r.ReadVarint(&fraction)) return TimestampRead::kMalformed;
    } else if (!r.SkipField(tag)) {
      return TimestampRead::kMalformed;
    }
  }
  const int64_t s = static_cast<int64_t>(seconds);
  const int64_t n = static_cast<int32_t>(static_cast<uint32_t>(fraction));
  if (s < 0 || s > 9'000'000'000 || n < 0 || n >= 1'000'000'000) return TimestampRead::kOutOfRange;
  *nanos = s * 1'000'000'000 + n;
  return TimestampRead::kOk;
}

// Reads one EntryAdapter into `entry`. Malformed wire bytes are an error;
// an entry that is well formed but cannot be stored sets `problem` (its
// line and metadata then stay unread past the limits).
absl::Status ReadEntry(std::string_view bytes, const LokiPushLimits& limits, LokiPushEntry* entry,
                       std::string* problem) {
  WireReader r(bytes);
  size_t metadata_pairs = 0;
  size_t line_bytes = 0;
  bool time_in_range = true;
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
      switch (ReadTimestamp(payload, &entry->time_unix_nano)) {
        case TimestampRead::kOk:
          break;
        case TimestampRead::kOutOfRange:
          time_in_range = false;
          break;
        case TimestampRead::kMalformed:
          return Malformed("bad timestamp");
      }
    } else if (tag >> 3 == 2) {
      line_bytes = payload.size();
      if (line_bytes <= limits.line_bytes_max) entry->line = std::string(payload);
    } else {
      std::pair<std::string, std::string> pair;
      if (!ReadPair(payload, &pair)) return Malformed("bad structured metadata");
      if (++metadata_pairs <= limits.labels_max) entry->metadata.push_back(std::move(pair));
    }
  }
  *problem = EntryProblem(line_bytes, metadata_pairs, limits);
  if (problem->empty() && !time_in_range) *problem = "the timestamp is out of range";
  return absl::OkStatus();
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
  size_t stream_count = 0;
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
    if (stream_count++ >= limits.streams_max) return TooMany("streams", limits.streams_max);
    const size_t stream_index = stream_count - 1;
    LokiPushStream& stream = push.streams.emplace_back();
    absl::Status labels_status;
    size_t entry_index = 0;
    WireReader s(stream_bytes);
    while (!s.done()) {
      uint32_t field = 0;
      std::string_view payload;
      if (!s.ReadTag(&field)) return Malformed(s.error());
      if (field == Tag(1, WireType::kLen)) {
        if (!s.ReadLen(&payload)) return Malformed(s.error());
        absl::StatusOr<LokiLabelPairs> labels = ParseLokiLabelSet(payload, limits.labels_max);
        if (labels.ok()) {
          stream.labels = *std::move(labels);
        } else {
          labels_status = labels.status();
        }
      } else if (field == Tag(2, WireType::kLen)) {
        if (!s.ReadLen(&payload)) return Malformed(s.error());
        if (absl::Status counted = CountEntry(limits, push); !counted.ok()) return counted;
        LokiPushEntry entry;
        std::string problem;
        if (absl::Status read = ReadEntry(payload, limits, &entry, &problem); !read.ok()) {
          return read;
        }
        if (problem.empty()) {
          stream.entries.push_back(std::move(entry));
          ++push.entries;
        } else {
          RejectEntry(stream_index, entry_index, problem, &push);
        }
        ++entry_index;
      } else if (!s.SkipField(field)) {
        return Malformed(s.error());
      }
    }
    if (!labels_status.ok()) RejectLastStream(std::string(labels_status.message()), &push);
  }
  return push;
}

namespace {

// Reads a JSON object of string values into `out`. A value that is not a
// string is malformed; past `labels_max` pairs the rest are counted in
// `count` but not kept.
absl::Status ReadJsonPairs(simdjson::dom::element element, size_t labels_max, LokiLabelPairs* out,
                           size_t* count) {
  simdjson::dom::object object;
  if (element.get_object().get(object) != simdjson::SUCCESS) {
    return Malformed("labels must be an object");
  }
  for (auto field : object) {
    std::string_view value;
    if (field.value.get_string().get(value) != simdjson::SUCCESS) {
      return Malformed("label values must be strings");
    }
    if (++*count <= labels_max) out->emplace_back(std::string(field.key), std::string(value));
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
  size_t stream_index = 0;
  for (simdjson::dom::element s : streams) {
    if (stream_index >= limits.streams_max) return TooMany("streams", limits.streams_max);
    LokiPushStream& stream = push.streams.emplace_back();
    size_t label_count = 0;
    simdjson::dom::element labels;
    if (s["stream"].get(labels) == simdjson::SUCCESS) {
      if (absl::Status st = ReadJsonPairs(labels, limits.labels_max, &stream.labels, &label_count);
          !st.ok()) {
        return st;
      }
    }
    simdjson::dom::array values;
    if (s["values"].get_array().get(values) != simdjson::SUCCESS) {
      return Malformed("a stream without a values array");
    }
    size_t entry_index = 0;
    for (simdjson::dom::element v : values) {
      simdjson::dom::array cells;
      if (v.get_array().get(cells) != simdjson::SUCCESS || cells.size() < 2 || cells.size() > 3) {
        return Malformed("a value is [timestamp, line] or [timestamp, line, metadata]");
      }
      if (absl::Status counted = CountEntry(limits, push); !counted.ok()) return counted;
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
      size_t metadata_pairs = 0;
      if (cells.size() == 3) {
        if (absl::Status st = ReadJsonPairs(cells.at(2).value(), limits.labels_max, &entry.metadata,
                                            &metadata_pairs);
            !st.ok()) {
          return st;
        }
      }
      if (const std::string problem = EntryProblem(line.size(), metadata_pairs, limits);
          problem.empty()) {
        entry.line = std::string(line);
        stream.entries.push_back(std::move(entry));
        ++push.entries;
      } else {
        RejectEntry(stream_index, entry_index, problem, &push);
      }
      ++entry_index;
    }
    if (label_count > limits.labels_max) {
      RejectLastStream(absl::StrCat("more than ", limits.labels_max, " labels in a stream"), &push);
    }
    ++stream_index;
  }
  return push;
}

}  // namespace strata::otlp
