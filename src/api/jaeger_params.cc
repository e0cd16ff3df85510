#include "api/jaeger_params.h"

#include <algorithm>
#include <charconv>
#include <string>

#include "absl/strings/ascii.h"
#include "api/jaeger_model.h"
#include "common/cat.h"
#include "simdjson.h"

namespace strata::api {
namespace {

absl::Status Bad(std::string_view name, std::string_view why) {
  return absl::InvalidArgumentError(Cat(name, ": ", why));
}

// A whole decimal int64 (an optional '-', digits, nothing else).
bool ParseInt64(std::string_view text, int64_t* out) {
  const char* end = text.data() + text.size();
  const auto [ptr, error] = std::from_chars(text.data(), end, *out);
  return !text.empty() && error == std::errc() && ptr == end;
}

constexpr int64_t kNanosPerMicro = 1000;
constexpr int64_t kNanosPerDay = 86'400 * kNanosPerSecond;

// The tags strata writes itself, mapped back onto the columns they come
// from; false when `key` is not one of them.
absl::StatusOr<bool> TakeWrittenTag(std::string_view name, const std::string& key,
                                    const std::string& value, JaegerTags* out) {
  if (key == "error") {
    if (value != "true" && value != "false") {
      return Bad(name, Cat("error: not true or false: ", QuoteForError(value)));
    }
    out->status = 2;
    out->status_negated = value == "false";
    return true;
  }
  if (key == "otel.status_code") {
    const std::string upper = absl::AsciiStrToUpper(value);
    out->status_negated = false;
    if (upper == "UNSET") {
      out->status = 0;
    } else if (upper == "OK") {
      out->status = 1;
    } else if (upper == "ERROR") {
      out->status = 2;
    } else {
      return Bad(name, Cat("otel.status_code: not OK, ERROR or UNSET: ", QuoteForError(value)));
    }
    return true;
  }
  if (key == "span.kind") {
    const std::optional<int32_t> kind = JaegerSpanKindOf(absl::AsciiStrToLower(value));
    if (!kind.has_value() || value.empty()) {
      return Bad(name, Cat("span.kind: not server, client, producer, consumer or "
                           "internal: ",
                           QuoteForError(value)));
    }
    out->kind = *kind;
    return true;
  }
  return false;
}

// Adds one tag: a tag strata writes onto its column, any other as an
// attribute; the entries counted against kMaxJaegerTags.
absl::Status AddTag(std::string_view name, std::string key, std::string value, JaegerTags* out) {
  if (out->attributes.size() + (out->status.has_value() ? 1 : 0) +
          (out->kind.has_value() ? 1 : 0) >=
      kMaxJaegerTags) {
    return Bad(name, Cat("more than ", std::to_string(kMaxJaegerTags), " tags"));
  }
  if (key.empty()) return Bad(name, "empty tag key");
  absl::StatusOr<bool> written = TakeWrittenTag(name, key, value, out);
  if (!written.ok()) return written.status();
  if (!*written) out->attributes.emplace_back(std::move(key), std::move(value));
  return absl::OkStatus();
}

}  // namespace

absl::Status AddJaegerTagPairs(std::string_view name, const std::vector<std::string>& pairs,
                               JaegerTags* out) {
  for (const std::string& pair : pairs) {
    const size_t colon = pair.find(':');
    if (colon == std::string::npos) {
      return Bad(name, Cat("not key:value: ", QuoteForError(pair)));
    }
    if (absl::Status s = AddTag(name, pair.substr(0, colon), pair.substr(colon + 1), out);
        !s.ok()) {
      return s;
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<JaegerTags> ParseJaegerTags(std::string_view name, std::string_view text) {
  simdjson::dom::parser parser;
  simdjson::dom::element document;
  if (const auto error = parser.parse(text.data(), text.size()).get(document); error) {
    return Bad(name, Cat("not a JSON object: ", simdjson::error_message(error)));
  }
  simdjson::dom::object object;
  if (document.get(object) != simdjson::SUCCESS) return Bad(name, "not a JSON object");
  JaegerTags out;
  size_t entries = 0;
  for (const simdjson::dom::key_value_pair field : object) {
    if (++entries > kMaxJaegerTags) {
      return Bad(name, Cat("more than ", std::to_string(kMaxJaegerTags), " tags"));
    }
    std::string key(field.key);
    std::string value;
    switch (field.value.type()) {
      case simdjson::dom::element_type::STRING:
        value = std::string(std::string_view(field.value.get_string().value()));
        break;
      case simdjson::dom::element_type::BOOL:
        value = field.value.get_bool().value() ? "true" : "false";
        break;
      case simdjson::dom::element_type::INT64:
        value = std::to_string(field.value.get_int64().value());
        break;
      case simdjson::dom::element_type::UINT64:
        value = std::to_string(field.value.get_uint64().value());
        break;
      case simdjson::dom::element_type::DOUBLE:
        value = simdjson::to_string(field.value);
        break;
      default:
        return Bad(name, Cat("tag ", QuoteForError(key), ": not a string, number or boolean"));
    }
    if (absl::Status s = AddTag(name, std::move(key), std::move(value), &out); !s.ok()) {
      return s;
    }
  }
  return out;
}

absl::StatusOr<int64_t> ParseJaegerMicros(std::string_view name, std::string_view value) {
  int64_t micros = 0;
  if (!ParseInt64(value, &micros) || micros < 0 || micros > INT64_MAX / kNanosPerMicro) {
    return Bad(name, Cat("not unix microseconds: ", QuoteForError(value)));
  }
  return micros * kNanosPerMicro;
}

absl::StatusOr<std::optional<int64_t>> ParseJaegerLookback(std::string_view name,
                                                           std::string_view value) {
  if (value == "custom") return std::optional<int64_t>();
  if (value.ends_with('d')) {
    int64_t days = 0;
    if (!ParseInt64(value.substr(0, value.size() - 1), &days) || days <= 0 ||
        days > INT64_MAX / kNanosPerDay) {
      return Bad(name, Cat("not a duration or whole days: ", QuoteForError(value)));
    }
    return std::optional<int64_t>(days * kNanosPerDay);
  }
  absl::StatusOr<int64_t> nanos = ParseDuration(name, value);
  if (!nanos.ok()) return nanos.status();
  if (*nanos == 0) return Bad(name, "must be positive");
  return std::optional<int64_t>(*nanos);
}

absl::StatusOr<otlp::TraceId> ParseJaegerTraceId(std::string_view value) {
  return ParseTrimmedTraceId("trace_id", value);
}

absl::StatusOr<std::optional<std::string>> TakeJaegerParam(QueryParams& params,
                                                           std::string_view name) {
  absl::StatusOr<std::optional<std::string>> value = params.Take(name);
  if (!value.ok()) return value.status();
  if (value->has_value() && (*value)->empty()) return std::optional<std::string>();
  return value;
}

namespace {

// A parameter's value into *text (nullopt when absent or empty).
absl::Status TakeInto(QueryParams& params, std::string_view name,
                      std::optional<std::string>* text) {
  absl::StatusOr<std::optional<std::string>> value = TakeJaegerParam(params, name);
  if (!value.ok()) return value.status();
  *text = *std::move(value);
  return absl::OkStatus();
}

// What the classic and the v3 searches share, under each API's names.
struct SharedSearchNames {
  std::string_view service;
  std::string_view operation;
  std::string_view tags;
  std::string_view tag_pairs;  // "" when the API has no such parameter
  std::string_view min_duration;
  std::string_view max_duration;
  std::string_view limit;
};

absl::Status TakeSharedSearch(QueryParams& params, const SharedSearchNames& names,
                              TraceSearch* search) {
  std::optional<std::string> text;
  if (absl::Status s = TakeInto(params, names.service, &text); !s.ok()) return s;
  search->service = text;
  if (absl::Status s = TakeInto(params, names.operation, &text); !s.ok()) return s;
  search->operation = text;
  if (absl::Status s = TakeInto(params, names.tags, &text); !s.ok()) return s;
  JaegerTags tags;
  if (text.has_value()) {
    absl::StatusOr<JaegerTags> parsed = ParseJaegerTags(names.tags, *text);
    if (!parsed.ok()) return parsed.status();
    tags = *std::move(parsed);
  }
  if (!names.tag_pairs.empty()) {
    if (absl::Status s = AddJaegerTagPairs(names.tag_pairs, params.TakeAll(names.tag_pairs), &tags);
        !s.ok()) {
      return s;
    }
  }
  search->attributes = std::move(tags.attributes);
  search->status = tags.status;
  search->status_negated = tags.status_negated;
  search->kind = tags.kind;
  for (const std::string_view name : {names.min_duration, names.max_duration}) {
    if (absl::Status s = TakeInto(params, name, &text); !s.ok()) return s;
    if (!text.has_value()) continue;
    absl::StatusOr<int64_t> nanos = ParseDuration(name, *text);
    if (!nanos.ok()) return nanos.status();
    (name == names.min_duration ? search->min_duration : search->max_duration) = *nanos;
  }
  if (search->min_duration.has_value() && search->max_duration.has_value() &&
      *search->min_duration > *search->max_duration) {
    return Bad(names.min_duration, Cat("above ", names.max_duration));
  }
  if (absl::Status s = TakeInto(params, names.limit, &text); !s.ok()) return s;
  search->limit = kJaegerTraceLimit.default_value;
  if (text.has_value()) {
    absl::StatusOr<int64_t> limit =
        ParseInteger(names.limit, *text, 1, kJaegerTraceLimit.max_value);
    if (!limit.ok()) return limit.status();
    search->limit = *limit;
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<TraceSearch> TakeJaegerTraceSearch(QueryParams& params, const NowFunction& now) {
  TraceSearch search;
  if (absl::Status s = TakeSharedSearch(params,
                                        {.service = "service",
                                         .operation = "operation",
                                         .tags = "tags",
                                         .tag_pairs = "tag",
                                         .min_duration = "minDuration",
                                         .max_duration = "maxDuration",
                                         .limit = "limit"},
                                        &search);
      !s.ok()) {
    return s;
  }
  std::optional<std::string> text;
  if (absl::Status s = TakeInto(params, "spanKind", &text); !s.ok()) return s;
  if (text.has_value()) {
    const std::optional<int32_t> kind = JaegerSpanKindOf(absl::AsciiStrToLower(*text));
    if (!kind.has_value()) {
      return Bad("spanKind",
                 Cat("not server, client, producer, consumer or internal: ", QuoteForError(*text)));
    }
    search.kind = *kind;
  }
  if (absl::Status s = TakeInto(params, "end", &text); !s.ok()) return s;
  if (text.has_value()) {
    absl::StatusOr<int64_t> end = ParseJaegerMicros("end", *text);
    if (!end.ok()) return end.status();
    search.end = *end;
  } else {
    search.end = now();
  }
  if (absl::Status s = TakeInto(params, "lookback", &text); !s.ok()) return s;
  std::optional<int64_t> lookback;
  if (text.has_value()) {
    absl::StatusOr<std::optional<int64_t>> parsed = ParseJaegerLookback("lookback", *text);
    if (!parsed.ok()) return parsed.status();
    lookback = *parsed;
  }
  if (absl::Status s = TakeInto(params, "start", &text); !s.ok()) return s;
  if (text.has_value()) {
    absl::StatusOr<int64_t> start = ParseJaegerMicros("start", *text);
    if (!start.ok()) return start.status();
    search.start = *start;
  } else {
    search.start =
        std::max<int64_t>(0, search.end - lookback.value_or(kJaegerDefaultLookbackNanos));
  }
  if (search.start >= search.end) return Bad("start", "must be before end");
  return search;
}

absl::StatusOr<TraceSearch> TakeJaegerV3Search(QueryParams& params) {
  TraceSearch search;
  if (absl::Status s = TakeSharedSearch(params,
                                        {.service = "query.service_name",
                                         .operation = "query.operation_name",
                                         .tags = "query.attributes",
                                         .min_duration = "query.duration_min",
                                         .max_duration = "query.duration_max",
                                         .limit = "query.search_depth"},
                                        &search);
      !s.ok()) {
    return s;
  }
  std::optional<std::string> text;
  for (const std::string_view name : {"query.start_time_min", "query.start_time_max"}) {
    if (absl::Status s = TakeInto(params, name, &text); !s.ok()) return s;
    if (!text.has_value()) return Bad(name, "required");
    absl::StatusOr<int64_t> time = ParseTime(name, *text);
    if (!time.ok()) return time.status();
    (name == "query.start_time_min" ? search.start : search.end) = *time;
  }
  if (search.start >= search.end) {
    return Bad("query.start_time_min", "must be before start_time_max");
  }
  if (absl::Status s = TakeInto(params, "query.raw_traces", &text); !s.ok()) return s;
  if (text.has_value() && *text != "true" && *text != "false") {
    return Bad("query.raw_traces", Cat("not true or false: ", QuoteForError(*text)));
  }
  return search;
}

}  // namespace strata::api
