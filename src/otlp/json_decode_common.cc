#include "otlp/json_decode_common.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <memory>
#include <system_error>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "common/absl_view.h"
#include "common/check.h"

namespace strata::otlp::json_internal {
namespace {

// ----------------------------------------------------------- field tables

enum AnyValueField {
  kStringValue,
  kBoolValue,
  kIntValue,
  kDoubleValue,
  kArrayValue,
  kKvlistValue,
  kBytesValue,
  kStringValueStrindex,
};

const FieldTable& AnyValueFields() {
  static const FieldTable* const table = new FieldTable({
      {kStringValue, "stringValue", "string_value"},
      {kBoolValue, "boolValue", "bool_value"},
      {kIntValue, "intValue", "int_value"},
      {kDoubleValue, "doubleValue", "double_value"},
      {kArrayValue, "arrayValue", "array_value"},
      {kKvlistValue, "kvlistValue", "kvlist_value"},
      {kBytesValue, "bytesValue", "bytes_value"},
      {kStringValueStrindex, "stringValueStrindex", "string_value_strindex"},
  });
  return *table;
}

// ArrayValue and KeyValueList both hold one repeated field, "values".
const FieldTable& ValuesFields() {
  static const FieldTable* const table = new FieldTable({{0, "values", "values"}});
  return *table;
}

enum KeyValueField { kKey, kValue, kKeyStrindex };

const FieldTable& KeyValueFields() {
  static const FieldTable* const table = new FieldTable({
      {kKey, "key", "key"},
      {kValue, "value", "value"},
      {kKeyStrindex, "keyStrindex", "key_strindex"},
  });
  return *table;
}

enum ResourceField { kResourceAttributes, kResourceDropped, kEntityRefs };

const FieldTable& ResourceFields() {
  static const FieldTable* const table = new FieldTable({
      {kResourceAttributes, "attributes", "attributes"},
      {kResourceDropped, "droppedAttributesCount", "dropped_attributes_count"},
      {kEntityRefs, "entityRefs", "entity_refs"},
  });
  return *table;
}

enum EntityRefField { kEntitySchemaUrl, kEntityType, kIdKeys, kDescriptionKeys };

const FieldTable& EntityRefFields() {
  static const FieldTable* const table = new FieldTable({
      {kEntitySchemaUrl, "schemaUrl", "schema_url"},
      {kEntityType, "type", "type"},
      {kIdKeys, "idKeys", "id_keys"},
      {kDescriptionKeys, "descriptionKeys", "description_keys"},
  });
  return *table;
}

enum ScopeField { kScopeName, kScopeVersion, kScopeAttributes, kScopeDropped };

const FieldTable& ScopeFields() {
  static const FieldTable* const table = new FieldTable({
      {kScopeName, "name", "name"},
      {kScopeVersion, "version", "version"},
      {kScopeAttributes, "attributes", "attributes"},
      {kScopeDropped, "droppedAttributesCount", "dropped_attributes_count"},
  });
  return *table;
}

// No known fields: every key is skipped as unknown.
const FieldTable& NoFields() {
  static const FieldTable* const table = new FieldTable({});
  return *table;
}

// ------------------------------------------------------------ text helpers

// absl here is built without std::string_view aliasing absl::string_view.

bool IsDigit(char c) { return c >= '0' && c <= '9'; }

std::string_view TrimTrailingSpace(std::string_view s) {
  while (!s.empty() &&
         (s.back() == ' ' || s.back() == '\t' || s.back() == '\n' || s.back() == '\r')) {
    s.remove_suffix(1);
  }
  return s;
}

// The parts of a JSON number: -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?
struct NumberParts {
  bool negative = false;
  std::string_view integer_digits;
  std::string_view fraction_digits;
  int64_t exponent = 0;  // clamped to +-kExponentClamp
};

constexpr int64_t kExponentClamp = 100000;

bool SplitJsonNumber(std::string_view s, NumberParts* parts) {
  size_t i = 0;
  const size_t n = s.size();
  if (i < n && s[i] == '-') {
    parts->negative = true;
    ++i;
  }
  const size_t integer_begin = i;
  if (i >= n || !IsDigit(s[i])) return false;
  if (s[i] == '0') {
    ++i;
  } else {
    while (i < n && IsDigit(s[i])) ++i;
  }
  parts->integer_digits = s.substr(integer_begin, i - integer_begin);
  if (i < n && s[i] == '.') {
    const size_t begin = ++i;
    while (i < n && IsDigit(s[i])) ++i;
    if (i == begin) return false;
    parts->fraction_digits = s.substr(begin, i - begin);
  }
  if (i < n && (s[i] == 'e' || s[i] == 'E')) {
    ++i;
    bool exponent_negative = false;
    if (i < n && (s[i] == '+' || s[i] == '-')) exponent_negative = s[i++] == '-';
    const size_t begin = i;
    int64_t exponent = 0;
    while (i < n && IsDigit(s[i])) {
      exponent = std::min(kExponentClamp, exponent * 10 + (s[i] - '0'));
      ++i;
    }
    if (i == begin) return false;
    parts->exponent = exponent_negative ? -exponent : exponent;
  }
  return i == n;
}

enum class IntegerParse { kOk, kSyntax, kNotInteger, kOverflow };

// Parses JSON number text that denotes an integer exactly ("12", "-3",
// "1e3", "1.50e2"), without rounding through double.
IntegerParse ParseJsonInteger(std::string_view s, bool* negative, uint64_t* magnitude) {
  NumberParts parts;
  if (!SplitJsonNumber(s, &parts)) return IntegerParse::kSyntax;
  *negative = parts.negative;
  *magnitude = 0;
  // The significant digits are integer_digits followed by fraction_digits.
  const size_t total = parts.integer_digits.size() + parts.fraction_digits.size();
  auto digit = [&](size_t k) {
    return k < parts.integer_digits.size() ? parts.integer_digits[k]
                                           : parts.fraction_digits[k - parts.integer_digits.size()];
  };
  size_t first = 0;
  while (first < total && digit(first) == '0') ++first;
  if (first == total) return IntegerParse::kOk;  // zero
  size_t last = total - 1;
  while (digit(last) == '0') --last;
  // value = digits[first..last] * 10^scale
  const int64_t scale = parts.exponent - static_cast<int64_t>(parts.fraction_digits.size()) +
                        static_cast<int64_t>(total - 1 - last);
  if (scale < 0) return IntegerParse::kNotInteger;
  const int64_t digit_count = static_cast<int64_t>(last - first + 1);
  if (digit_count + scale > 20) return IntegerParse::kOverflow;
  uint64_t value = 0;
  for (size_t k = first; k <= last; ++k) {
    if (__builtin_mul_overflow(value, 10, &value) ||
        __builtin_add_overflow(value, static_cast<uint64_t>(digit(k) - '0'), &value)) {
      return IntegerParse::kOverflow;
    }
  }
  for (int64_t k = 0; k < scale; ++k) {
    if (__builtin_mul_overflow(value, 10, &value)) return IntegerParse::kOverflow;
  }
  *magnitude = value;
  return IntegerParse::kOk;
}

int HexDigit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

enum class HexIdText { kHex, kOddLength, kNotHex };

// Reads an id's hex text of any even length: sets *length to the bytes it
// makes and fills `out` when that is out.size(), else zeroes it.
HexIdText ReadHexIdAnyLength(std::string_view hex, std::span<uint8_t> out,
                             internal::IdLength* length) {
  std::fill(out.begin(), out.end(), 0);
  if (hex.size() % 2 != 0) return HexIdText::kOddLength;
  for (const char c : hex) {
    if (HexDigit(c) < 0) return HexIdText::kNotHex;
  }
  length->bytes = static_cast<uint32_t>(hex.size() / 2);
  if (hex.size() == 2 * out.size()) {
    for (size_t k = 0; k < out.size(); ++k) {
      out[k] = static_cast<uint8_t>(HexDigit(hex[2 * k]) << 4 | HexDigit(hex[2 * k + 1]));
    }
  }
  return HexIdText::kHex;
}

int Base64Digit(char c) {
  if (c >= 'A' && c <= 'Z') return c - 'A';
  if (c >= 'a' && c <= 'z') return c - 'a' + 26;
  if (c >= '0' && c <= '9') return c - '0' + 52;
  if (c == '+' || c == '-') return 62;  // standard and URL-safe alphabets
  if (c == '/' || c == '_') return 63;
  return -1;
}

// Decodes base64 in either alphabet, with or without padding, into `out`
// (room for s.size() * 3 / 4 bytes). Returns the decoded size, or -1.
int64_t DecodeBase64(std::string_view s, char* out) {
  size_t padding = 0;
  while (padding < 2 && padding < s.size() && s[s.size() - 1 - padding] == '=') ++padding;
  if (padding > 0 && s.size() % 4 != 0) return -1;
  const std::string_view body = s.substr(0, s.size() - padding);
  if (body.size() % 4 == 1) return -1;
  size_t written = 0;
  uint32_t accumulator = 0;
  int bits = 0;
  for (char c : body) {
    const int digit = Base64Digit(c);
    if (digit < 0) return -1;
    accumulator = (accumulator << 6) | static_cast<uint32_t>(digit);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out[written++] = static_cast<char>((accumulator >> bits) & 0xff);
    }
  }
  return static_cast<int64_t>(written);
}

// Length of the valid UTF-8 sequence starting at s[i], or 0 if invalid
// (overlong forms, surrogates and code points past U+10FFFF are invalid).
size_t Utf8SequenceLength(std::string_view s, size_t i) {
  const auto byte = [&](size_t k) { return static_cast<unsigned char>(s[k]); };
  const unsigned char c = byte(i);
  if (c < 0x80) return 1;
  size_t length;
  unsigned char low = 0x80, high = 0xbf;  // range of the second byte
  if (c >= 0xc2 && c <= 0xdf) {
    length = 2;
  } else if (c >= 0xe0 && c <= 0xef) {
    length = 3;
    if (c == 0xe0) low = 0xa0;
    if (c == 0xed) high = 0x9f;
  } else if (c >= 0xf0 && c <= 0xf4) {
    length = 4;
    if (c == 0xf0) low = 0x90;
    if (c == 0xf4) high = 0x8f;
  } else {
    return 0;
  }
  if (i + length > s.size()) return 0;
  if (byte(i + 1) < low || byte(i + 1) > high) return 0;
  for (size_t k = 2; k < length; ++k) {
    if (byte(i + k) < 0x80 || byte(i + k) > 0xbf) return 0;
  }
  return length;
}

// --------------------------------------------------------- padded buffers

// Inputs up to this size are copied into a buffer (and parsed by a parser)
// kept per thread; larger ones get their own, freed after the call, so a
// thread does not hold on to the memory of its largest request.
constexpr size_t kRetainedInputBytes = size_t{1} << 20;

struct ThreadState {
  std::string buffer;
  od::parser parser;
};

ThreadState& LocalState() {
  thread_local ThreadState state;
  return state;
}

}  // namespace

// -------------------------------------------------------------- FieldTable

FieldTable::FieldTable(std::initializer_list<Entry> entries) {
  for (const Entry& e : entries) {
    // The tables are constants of this module; a bad one is a bug.
    STRATA_CHECK(e.id >= 0 && e.id < kMaxFields && e.json_name.size() <= kMaxKeyLength &&
                     e.proto_name.size() <= kMaxKeyLength,
                 "malformed JSON field table");
    json_names_[e.id] = e.json_name;
    by_length_[e.json_name.size()].push_back(Slot{e.json_name, e.id});
    if (e.proto_name != e.json_name) {
      by_length_[e.proto_name.size()].push_back(Slot{e.proto_name, e.id});
    }
  }
}

int FieldTable::Find(std::string_view key) const {
  if (key.size() > kMaxKeyLength) return -1;
  for (const Slot& slot : by_length_[key.size()]) {
    if (std::memcmp(slot.key.data(), key.data(), key.size()) == 0) return slot.id;
  }
  return -1;
}

// -------------------------------------------------------------- JsonReader

JsonReader::JsonReader(std::string_view input, od::document* doc, BatchBase* batch,
                       const DecodeLimits& limits, const char* poison)
    : input_(input), doc_(doc), batch_(batch), limits_(limits), poison_(poison) {}

absl::Status JsonReader::Error(const PathFrame& f, std::string_view what) const {
  return ErrorAt(f, f.at, what);
}

absl::Status JsonReader::ErrorAt(const PathFrame& f, const char* at, std::string_view what) const {
  // The path is at most max_json_depth frames deep; walk it leaf to root.
  std::vector<const PathFrame*> frames;
  for (const PathFrame* p = &f; p != nullptr; p = p->parent) {
    if (!p->name.empty() || p->index >= 0) frames.push_back(p);
  }
  std::string path;
  for (size_t k = frames.size(); k-- > 0;) {
    if (!frames[k]->name.empty()) {
      if (!path.empty()) path += '.';
      path.append(frames[k]->name);
    }
    if (frames[k]->index >= 0) absl::StrAppend(&path, "[", frames[k]->index, "]");
  }
  std::string message = "otlp/json: ";
  if (!path.empty()) absl::StrAppend(&message, path, ": ");
  size_t offset = input_.size();
  if (at != nullptr && at >= input_.data() && at <= input_.data() + input_.size()) {
    offset = static_cast<size_t>(at - input_.data());
  }
  absl::StrAppend(&message, Absl(what), " (at byte ", offset, ")");
  return absl::InvalidArgumentError(message);
}

namespace {

// The offset of the '"' that opens the string `json` leaves unclosed (its
// last string), or json.size() when every string is closed. simdjson
// finds an unclosed string before it has a position to report.
size_t UnclosedStringStart(std::string_view json) {
  size_t open = json.size();
  for (size_t i = 0; i < json.size(); ++i) {
    if (json[i] != '"') continue;
    open = i;
    for (++i; i < json.size() && json[i] != '"'; ++i) {
      if (json[i] == '\\') ++i;
    }
    if (i < json.size()) open = json.size();
  }
  return open;
}

}  // namespace

absl::Status JsonReader::SyntaxError(const PathFrame& f, simdjson::error_code code) const {
  const char* at = f.at;
  if (code == simdjson::INCOMPLETE_ARRAY_OR_OBJECT) {
    at = input_.data() + input_.size();
  } else if (code == simdjson::UNCLOSED_STRING) {
    at = input_.data() + UnclosedStringStart(input_);
  } else if (doc_ != nullptr) {
    if (auto location = doc_->current_location(); location.error() == simdjson::SUCCESS) {
      at = location.value_unsafe();
    }
  }
  return ErrorAt(f, at, absl::StrCat("malformed JSON: ", simdjson::error_message(code)));
}

absl::Status JsonReader::TypeError(const PathFrame& f, simdjson::error_code code,
                                   std::string_view expected) const {
  if (code == simdjson::INCORRECT_TYPE) return Error(f, absl::StrCat("expected ", Absl(expected)));
  return SyntaxError(f, code);
}

absl::Status JsonReader::MissingField(const PathFrame& f, std::string_view name) const {
  return Error(PathFrame{&f, name, -1, f.at, f.depth + 1}, "required field missing");
}

absl::Status JsonReader::DepthError(const PathFrame& f) const {
  return Error(f, absl::StrCat("JSON nesting deeper than ", limits_.max_json_depth));
}

absl::Status JsonReader::CheckKeyPoison(const PathFrame& f, const char* key_at) const {
  // Only on the rerun that locates invalid UTF-8: find the closing quote.
  const char* end = key_at + 1;
  const char* limit = input_.data() + input_.size();
  while (end < limit && *end != '"') end += (*end == '\\') ? 2 : 1;
  if (poison_ >= key_at && poison_ <= end) {
    return ErrorAt(f, poison_, "invalid UTF-8 in a field name");
  }
  return absl::OkStatus();
}

absl::Status JsonReader::Skip(od::value& v, const PathFrame& f) {
  od::json_type type;
  if (auto code = v.type().get(type); code != simdjson::SUCCESS) return SyntaxError(f, code);
  switch (type) {
    case od::json_type::object:
      return ForEachField(v, f, NoFields(),
                          [](int, od::value&, const PathFrame&) { return absl::OkStatus(); });
    case od::json_type::array:
      return ForEachElement(v, f, [&](od::value& e, const PathFrame& ef) { return Skip(e, ef); });
    case od::json_type::string: {
      std::string_view ignored;
      return ReadString(v, f, &ignored);
    }
    case od::json_type::number: {
      NumberParts parts;
      if (!SplitJsonNumber(TrimTrailingSpace(v.raw_json_token()), &parts)) {
        return Error(f, "malformed JSON number");
      }
      return absl::OkStatus();
    }
    case od::json_type::boolean: {
      bool ignored;
      if (auto code = v.get_bool().get(ignored); code != simdjson::SUCCESS) {
        return Error(f, "malformed JSON literal");
      }
      return absl::OkStatus();
    }
    case od::json_type::null: {
      bool is_null = false;
      if (auto code = v.is_null().get(is_null); code != simdjson::SUCCESS || !is_null) {
        return Error(f, "malformed JSON literal");
      }
      return absl::OkStatus();
    }
  }
  return Error(f, "malformed JSON value");
}

// ----------------------------------------------------------------- scalars

absl::Status JsonReader::ReadString(od::value& v, const PathFrame& f, std::string_view* out) {
  if (poison_ != nullptr) {
    const std::string_view token = v.raw_json_token();
    if (poison_ >= token.data() && poison_ < token.data() + token.size()) {
      return ErrorAt(f, poison_, "invalid UTF-8");
    }
  }
  if (auto code = v.get_string().get(*out); code != simdjson::SUCCESS) {
    if (code == simdjson::STRING_ERROR) return Error(f, "invalid string escape");
    return TypeError(f, code, "a string");
  }
  return absl::OkStatus();
}

absl::Status JsonReader::String(od::value& v, const PathFrame& f, std::string_view* out) {
  std::string_view s;
  if (absl::Status status = ReadString(v, f, &s); !status.ok()) return status;
  *out = batch_->arena.Copy(s);
  return absl::OkStatus();
}

absl::Status JsonReader::Bool(od::value& v, const PathFrame& f, bool* out) {
  if (auto code = v.get_bool().get(*out); code != simdjson::SUCCESS) {
    return TypeError(f, code, "true or false");
  }
  return absl::OkStatus();
}

absl::Status JsonReader::Integer(od::value& v, const PathFrame& f, uint64_t max_negative,
                                 uint64_t max_positive, bool* negative, uint64_t* magnitude) {
  od::json_type type;
  if (auto code = v.type().get(type); code != simdjson::SUCCESS) return SyntaxError(f, code);
  std::string_view text;
  if (type == od::json_type::number) {
    // simdjson's integer getters reject 1e3 and 2.0, which proto3 JSON
    // accepts; parse the token exactly instead.
    text = TrimTrailingSpace(v.raw_json_token());
  } else if (type == od::json_type::string) {
    if (absl::Status s = ReadString(v, f, &text); !s.ok()) return s;
  } else {
    return Error(f, "expected an integer (number or decimal string)");
  }
  switch (ParseJsonInteger(text, negative, magnitude)) {
    case IntegerParse::kOk:
      break;
    case IntegerParse::kSyntax:
      return Error(f, "expected an integer (number or decimal string)");
    case IntegerParse::kNotInteger:
      return Error(f, "not an integer");
    case IntegerParse::kOverflow:
      return Error(f, "integer out of range");
  }
  if (*magnitude > (*negative ? max_negative : max_positive)) {
    return Error(f, "integer out of range");
  }
  return absl::OkStatus();
}

absl::Status JsonReader::Uint64(od::value& v, const PathFrame& f, uint64_t* out) {
  bool negative = false;
  *out = 0;
  return Integer(v, f, 0, std::numeric_limits<uint64_t>::max(), &negative, out);
}

absl::Status JsonReader::Int64(od::value& v, const PathFrame& f, int64_t* out) {
  bool negative = false;
  uint64_t magnitude = 0;
  absl::Status s =
      Integer(v, f, uint64_t{1} << 63, std::numeric_limits<int64_t>::max(), &negative, &magnitude);
  // Two's complement negation; well defined for 2^63 too.
  *out = static_cast<int64_t>(negative ? ~magnitude + 1 : magnitude);
  return s;
}

absl::Status JsonReader::Uint32(od::value& v, const PathFrame& f, uint32_t* out) {
  bool negative = false;
  uint64_t magnitude = 0;
  absl::Status s = Integer(v, f, 0, std::numeric_limits<uint32_t>::max(), &negative, &magnitude);
  *out = static_cast<uint32_t>(magnitude);
  return s;
}

absl::Status JsonReader::Int32(od::value& v, const PathFrame& f, int32_t* out) {
  bool negative = false;
  uint64_t magnitude = 0;
  absl::Status s =
      Integer(v, f, uint64_t{1} << 31, std::numeric_limits<int32_t>::max(), &negative, &magnitude);
  if (!s.ok()) magnitude = 0;
  const int64_t wide =
      negative ? -static_cast<int64_t>(magnitude) : static_cast<int64_t>(magnitude);
  *out = static_cast<int32_t>(wide);
  return s;
}

absl::Status JsonReader::Double(od::value& v, const PathFrame& f, double* out) {
  od::json_type type;
  if (auto code = v.type().get(type); code != simdjson::SUCCESS) return SyntaxError(f, code);
  if (type == od::json_type::number) {
    if (auto code = v.get_double().get(*out); code != simdjson::SUCCESS) {
      return Error(f, "invalid or out-of-range number");
    }
    return absl::OkStatus();
  }
  if (type != od::json_type::string) return Error(f, "expected a number");
  std::string_view text;
  if (absl::Status s = ReadString(v, f, &text); !s.ok()) return s;
  if (text == "NaN") {
    *out = std::numeric_limits<double>::quiet_NaN();
  } else if (text == "Infinity") {
    *out = std::numeric_limits<double>::infinity();
  } else if (text == "-Infinity") {
    *out = -std::numeric_limits<double>::infinity();
  } else {
    NumberParts parts;
    if (!SplitJsonNumber(text, &parts)) return Error(f, "expected a number");
    auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), *out);
    if (ec != std::errc() || end != text.data() + text.size()) {
      return Error(f, "invalid or out-of-range number");
    }
  }
  return absl::OkStatus();
}

absl::Status JsonReader::Enum(od::value& v, const PathFrame& f, EnumNames names, int32_t* out) {
  od::json_type type;
  if (auto code = v.type().get(type); code != simdjson::SUCCESS) return SyntaxError(f, code);
  if (type == od::json_type::string) {
    // Peek: a name is matched here, digits fall through to Int32.
    std::string_view token = TrimTrailingSpace(v.raw_json_token());
    if (token.size() >= 2 && !IsDigit(token[1]) && token[1] != '-') {
      std::string_view name;
      if (absl::Status s = ReadString(v, f, &name); !s.ok()) return s;
      for (size_t k = 0; k < names.size(); ++k) {
        if (names[k] == name) {
          *out = static_cast<int32_t>(k);
          return absl::OkStatus();
        }
      }
      return Error(f, absl::StrCat("unknown enum value name \"",
                                   absl::CHexEscape(Absl(name.substr(0, 64))), "\""));
    }
  }
  return Int32(v, f, out);
}

absl::Status JsonReader::HexId(od::value& v, const PathFrame& f, std::span<uint8_t> out,
                               uint8_t* present) {
  std::string_view hex;
  if (absl::Status s = ReadString(v, f, &hex); !s.ok()) return s;
  *present = hex.empty() ? 0 : 1;
  if (hex.empty()) return absl::OkStatus();
  if (hex.size() != 2 * out.size()) {
    return Error(f, absl::StrCat("invalid hex id: expected ", 2 * out.size(), " hex digits, got ",
                                 hex.size(), " characters"));
  }
  for (size_t k = 0; k < out.size(); ++k) {
    const int high = HexDigit(hex[2 * k]);
    const int low = HexDigit(hex[2 * k + 1]);
    if (high < 0 || low < 0) return Error(f, "invalid hex");
    out[k] = static_cast<uint8_t>(high << 4 | low);
  }
  return absl::OkStatus();
}

absl::Status JsonReader::HexIdAnyLength(od::value& v, const PathFrame& f, std::span<uint8_t> out,
                                        internal::IdLength* length) {
  std::string_view hex;
  if (absl::Status s = ReadString(v, f, &hex); !s.ok()) return s;
  switch (ReadHexIdAnyLength(hex, out, length)) {
    case HexIdText::kHex:
      return absl::OkStatus();
    case HexIdText::kOddLength:
      return Error(f,
                   absl::StrCat("invalid hex id: an odd number (", hex.size(), ") of characters"));
    case HexIdText::kNotHex:
      break;
  }
  return Error(f, "invalid hex");
}

absl::Status JsonReader::HexIdOrInvalid(od::value& v, const PathFrame& f, std::span<uint8_t> out,
                                        internal::IdLength* length) {
  std::string_view hex;
  if (absl::Status s = ReadString(v, f, &hex); !s.ok()) return s;
  *length = {};
  length->not_hex = ReadHexIdAnyLength(hex, out, length) != HexIdText::kHex;
  return absl::OkStatus();
}

absl::Status JsonReader::TraceIdHex(od::value& v, const PathFrame& f, TraceId* out,
                                    uint8_t* present) {
  return HexId(v, f, std::span<uint8_t>(*out), present);
}

absl::Status JsonReader::SpanIdHex(od::value& v, const PathFrame& f, SpanId* out,
                                   uint8_t* present) {
  return HexId(v, f, std::span<uint8_t>(*out), present);
}

absl::Status JsonReader::Base64Bytes(od::value& v, const PathFrame& f, std::string_view* out) {
  std::string_view text;
  if (absl::Status s = ReadString(v, f, &text); !s.ok()) return s;
  if (text.empty()) {
    *out = {};
    return absl::OkStatus();
  }
  char* bytes = batch_->arena.Allocate(text.size() / 4 * 3 + 3);
  const int64_t size = DecodeBase64(text, bytes);
  if (size < 0) return Error(f, "invalid base64");
  *out = std::string_view(bytes, static_cast<size_t>(size));
  return absl::OkStatus();
}

absl::Status JsonReader::Uint64List(od::value& v, const PathFrame& f, std::vector<uint64_t>* table,
                                    Range* range) {
  const size_t begin = table->size();
  absl::Status s = ForEachElement(v, f, [&](od::value& e, const PathFrame& ef) {
    uint64_t value;
    absl::Status status = Uint64(e, ef, &value);
    table->push_back(value);
    return status;
  });
  *range = RangeToEnd(*table, begin);
  return s;
}

absl::Status JsonReader::DoubleList(od::value& v, const PathFrame& f, std::vector<double>* table,
                                    Range* range) {
  const size_t begin = table->size();
  absl::Status s = ForEachElement(v, f, [&](od::value& e, const PathFrame& ef) {
    double value;
    absl::Status status = Double(e, ef, &value);
    table->push_back(value);
    return status;
  });
  *range = RangeToEnd(*table, begin);
  return s;
}

// --------------------------------------------------------- AnyValue & co.

std::vector<ValueRow>& JsonReader::ValueScratch(uint32_t depth) {
  while (value_scratch_.size() <= depth) value_scratch_.emplace_back();
  value_scratch_[depth].clear();
  return value_scratch_[depth];
}

std::vector<AttributeRow>& JsonReader::KeyValueScratch(uint32_t depth) {
  while (key_value_scratch_.size() <= depth) key_value_scratch_.emplace_back();
  key_value_scratch_[depth].clear();
  return key_value_scratch_[depth];
}

absl::Status JsonReader::AnyValue(od::value& v, const PathFrame& f, uint32_t value_depth,
                                  ValueRow* out) {
  *out = ValueRow{};
  int members = 0;
  return ForEachField(v, f, AnyValueFields(), [&](int id, od::value& fv, const PathFrame& ff) {
    if (id == kStringValueStrindex) {
      return Error(ff, "stringValueStrindex is only valid in profiles, not in this signal");
    }
    if (++members > 1) return Error(ff, "more than one member of the AnyValue oneof is set");
    switch (id) {
      case kStringValue:
        out->type = ValueType::kString;
        return String(fv, ff, &out->str);
      case kBoolValue: {
        out->type = ValueType::kBool;
        bool b = false;
        absl::Status s = Bool(fv, ff, &b);
        out->bits = b ? 1 : 0;
        return s;
      }
      case kIntValue: {
        out->type = ValueType::kInt;
        int64_t i = 0;
        absl::Status s = Int64(fv, ff, &i);
        out->bits = static_cast<uint64_t>(i);
        return s;
      }
      case kDoubleValue: {
        out->type = ValueType::kDouble;
        double d = 0;
        absl::Status s = Double(fv, ff, &d);
        out->bits = std::bit_cast<uint64_t>(d);
        return s;
      }
      case kArrayValue:
        out->type = ValueType::kArray;
        return ArrayValue(fv, ff, value_depth + 1, &out->bits);
      case kKvlistValue:
        out->type = ValueType::kKvList;
        return KvListValue(fv, ff, value_depth + 1, &out->bits);
      case kBytesValue:
        out->type = ValueType::kBytes;
        return Base64Bytes(fv, ff, &out->str);
    }
    return absl::OkStatus();
  });
}

absl::Status JsonReader::ArrayValue(od::value& v, const PathFrame& f, uint32_t depth,
                                    uint64_t* bits) {
  if (depth > limits_.max_value_depth) {
    return Error(f, absl::StrCat("AnyValue nesting deeper than ", limits_.max_value_depth));
  }
  std::vector<ValueRow>& children = ValueScratch(depth);
  absl::Status s = ForEachField(v, f, ValuesFields(), [&](int, od::value& fv, const PathFrame& ff) {
    return ForEachElement(fv, ff, [&](od::value& e, const PathFrame& ef) {
      ValueRow child;
      absl::Status status = AnyValue(e, ef, depth, &child);
      children.push_back(child);
      return status;
    });
  });
  if (!s.ok()) return s;
  // Grandchildren are in place; now the children, in one run.
  ValueColumns& table = batch_->nested_values;
  const size_t begin = table.size();
  for (const ValueRow& child : children) table.Append(child);
  *bits = ValueColumns::Pack(RangeToEnd(table, begin));
  return absl::OkStatus();
}

absl::Status JsonReader::KvListValue(od::value& v, const PathFrame& f, uint32_t depth,
                                     uint64_t* bits) {
  if (depth > limits_.max_value_depth) {
    return Error(f, absl::StrCat("AnyValue nesting deeper than ", limits_.max_value_depth));
  }
  auto& children = KeyValueScratch(depth);
  absl::Status s = ForEachField(v, f, ValuesFields(), [&](int, od::value& fv, const PathFrame& ff) {
    return ForEachElement(fv, ff, [&](od::value& e, const PathFrame& ef) {
      AttributeRow child;
      absl::Status status = KeyValue(e, ef, depth, &child.key, &child.value);
      children.push_back(child);
      return status;
    });
  });
  if (!s.ok()) return s;
  AttributeColumns& table = batch_->nested_attributes;
  const size_t begin = table.size();
  for (const AttributeRow& child : children) table.Append(child);
  *bits = ValueColumns::Pack(RangeToEnd(table, begin));
  return absl::OkStatus();
}

absl::Status JsonReader::KeyValue(od::value& v, const PathFrame& f, uint32_t value_depth,
                                  std::string_view* key, ValueRow* value) {
  *key = {};
  *value = ValueRow{};
  return ForEachField(v, f, KeyValueFields(), [&](int id, od::value& fv, const PathFrame& ff) {
    switch (id) {
      case kKey:
        return String(fv, ff, key);
      case kValue:
        return AnyValue(fv, ff, value_depth, value);
      case kKeyStrindex:
        return Error(ff, "keyStrindex is only valid in profiles, not in this signal");
    }
    return absl::OkStatus();
  });
}

absl::Status JsonReader::Attributes(od::value& v, const PathFrame& f, AttributeColumns* table,
                                    Range* range) {
  const size_t begin = table->size();
  absl::Status s = ForEachElement(v, f, [&](od::value& e, const PathFrame& ef) {
    AttributeRow row;
    absl::Status status = KeyValue(e, ef, 0, &row.key, &row.value);
    if (status.ok()) table->Append(row);
    return status;
  });
  *range = RangeToEnd(*table, begin);
  return s;
}

// ---------------------------------------------------- resource and scope

absl::Status JsonReader::Resource(od::value& v, const PathFrame& f, ResourceRow* row) {
  return ForEachField(v, f, ResourceFields(), [&](int id, od::value& fv, const PathFrame& ff) {
    switch (id) {
      case kResourceAttributes:
        return Attributes(fv, ff, &batch_->resource_attributes, &row->attributes);
      case kResourceDropped:
        return Uint32(fv, ff, &row->dropped_attributes_count);
      case kEntityRefs: {
        const size_t begin = batch_->entity_refs.size();
        absl::Status s = ForEachElement(
            fv, ff, [&](od::value& e, const PathFrame& ef) { return EntityRef(e, ef); });
        row->entity_refs = RangeToEnd(batch_->entity_refs, begin);
        return s;
      }
    }
    return absl::OkStatus();
  });
}

absl::Status JsonReader::EntityRef(od::value& v, const PathFrame& f) {
  std::vector<std::string_view>& keys = batch_->entity_keys;
  EntityRefRow row;
  row.id_keys = row.description_keys = EmptyRangeAtEnd(keys);
  auto key_list = [&](od::value& fv, const PathFrame& ff, Range* range) {
    const size_t begin = keys.size();
    absl::Status s = ForEachElement(fv, ff, [&](od::value& e, const PathFrame& ef) {
      std::string_view key;
      absl::Status status = String(e, ef, &key);
      keys.push_back(key);
      return status;
    });
    *range = RangeToEnd(keys, begin);
    return s;
  };
  absl::Status s =
      ForEachField(v, f, EntityRefFields(), [&](int id, od::value& fv, const PathFrame& ff) {
        switch (id) {
          case kEntitySchemaUrl:
            return String(fv, ff, &row.schema_url);
          case kEntityType:
            return String(fv, ff, &row.type);
          case kIdKeys:
            return key_list(fv, ff, &row.id_keys);
          case kDescriptionKeys:
            return key_list(fv, ff, &row.description_keys);
        }
        return absl::OkStatus();
      });
  if (!s.ok()) return s;
  batch_->entity_refs.Append(row);
  return absl::OkStatus();
}

absl::Status JsonReader::Scope(od::value& v, const PathFrame& f, ScopeRow* row) {
  return ForEachField(v, f, ScopeFields(), [&](int id, od::value& fv, const PathFrame& ff) {
    switch (id) {
      case kScopeName:
        return String(fv, ff, &row->name);
      case kScopeVersion:
        return String(fv, ff, &row->version);
      case kScopeAttributes:
        return Attributes(fv, ff, &batch_->scope_attributes, &row->attributes);
      case kScopeDropped:
        return Uint32(fv, ff, &row->dropped_attributes_count);
    }
    return absl::OkStatus();
  });
}

absl::Status JsonReader::DecodeSignal(od::value& root, const PathFrame& f,
                                      const SignalTables& tables, ItemFn item) {
  return ForEachField(root, f, *tables.root, [&](int, od::value& fv, const PathFrame& ff) {
    return ForEachElement(fv, ff, [&](od::value& e, const PathFrame& ef) {
      return ResourceEnvelope(e, ef, tables, item);
    });
  });
}

absl::Status JsonReader::ResourceEnvelope(od::value& v, const PathFrame& f,
                                          const SignalTables& tables, ItemFn item) {
  const uint32_t resource = static_cast<uint32_t>(batch_->resources.size());
  ResourceRow row;
  row.attributes = EmptyRangeAtEnd(batch_->resource_attributes);
  row.entity_refs = EmptyRangeAtEnd(batch_->entity_refs);
  absl::Status s = ForEachField(
      v, f, *tables.resource_envelope, [&](int id, od::value& fv, const PathFrame& ff) {
        switch (id) {
          case 0:
            return Resource(fv, ff, &row);
          case 1:
            return ForEachElement(fv, ff, [&](od::value& e, const PathFrame& ef) {
              return ScopeEnvelope(e, ef, resource, tables, item);
            });
          case 2:
            return String(fv, ff, &row.schema_url);
        }
        return absl::OkStatus();
      });
  if (!s.ok()) return s;
  batch_->resources.Append(row);
  return absl::OkStatus();
}

absl::Status JsonReader::ScopeEnvelope(od::value& v, const PathFrame& f, uint32_t resource,
                                       const SignalTables& tables, ItemFn item) {
  const uint32_t scope = static_cast<uint32_t>(batch_->scopes.size());
  ScopeRow row;
  row.resource = resource;
  row.attributes = EmptyRangeAtEnd(batch_->scope_attributes);
  absl::Status s =
      ForEachField(v, f, *tables.scope_envelope, [&](int id, od::value& fv, const PathFrame& ff) {
        switch (id) {
          case 0:
            return Scope(fv, ff, &row);
          case 1:
            return ForEachElement(
                fv, ff, [&](od::value& e, const PathFrame& ef) { return item(e, ef, scope); });
          case 2:
            return String(fv, ff, &row.schema_url);
        }
        return absl::OkStatus();
      });
  if (!s.ok()) return s;
  batch_->scopes.Append(row);
  return absl::OkStatus();
}

// ------------------------------------------------------------- documents

absl::Status RunDocument(std::string_view json, const DecodeLimits& limits, BatchBase* batch,
                         size_t poison_offset, RootFn root, bool* invalid_utf8) {
  *invalid_utf8 = false;
  if (json.size() > simdjson::SIMDJSON_MAXSIZE_BYTES - simdjson::SIMDJSON_PADDING) {
    return absl::InvalidArgumentError(
        absl::StrCat("otlp/json: request of ", json.size(), " bytes is too large"));
  }
  // simdjson reads up to SIMDJSON_PADDING bytes past the input, so the input
  // is copied into a padded buffer: one memcpy of the request, small next to
  // parsing it. Small inputs reuse a per-thread buffer and parser.
  ThreadState* state = &LocalState();
  std::unique_ptr<ThreadState> own;
  if (json.size() > kRetainedInputBytes) {
    own = std::make_unique<ThreadState>();
    state = own.get();
  }
  std::string& buffer = state->buffer;
  buffer.resize(json.size() + simdjson::SIMDJSON_PADDING);
  std::memcpy(buffer.data(), json.data(), json.size());
  std::memset(buffer.data() + json.size(), 0, simdjson::SIMDJSON_PADDING);

  od::document doc;
  auto code = state->parser.iterate(buffer.data(), json.size(), buffer.size()).get(doc);
  if (code == simdjson::UTF8_ERROR) {
    *invalid_utf8 = true;
    return absl::InvalidArgumentError("otlp/json: invalid UTF-8");
  }
  const std::string_view input(buffer.data(), json.size());
  const char* poison = poison_offset < json.size() ? buffer.data() + poison_offset : nullptr;
  // A document that failed to start has no position to ask for.
  JsonReader reader(input, code == simdjson::SUCCESS ? &doc : nullptr, batch, limits, poison);
  PathFrame frame{nullptr, {}, -1, buffer.data(), 1};
  if (code != simdjson::SUCCESS) return reader.SyntaxError(frame, code);
  od::value value;
  if (code = doc.get_value().get(value); code != simdjson::SUCCESS) {
    // A scalar document cannot be a request; simdjson reports it oddly.
    if (code == simdjson::SCALAR_DOCUMENT_AS_VALUE) code = simdjson::INCORRECT_TYPE;
    return reader.TypeError(frame, code, "an object");
  }
  if (absl::Status s = root(reader, value, frame); !s.ok()) return s;
  if (auto location = doc.current_location(); location.error() == simdjson::SUCCESS) {
    return reader.ErrorAt(frame, location.value_unsafe(),
                          "unexpected content after the JSON document");
  }
  return absl::OkStatus();
}

absl::Status LocateInvalidUtf8(std::string_view json, const DecodeLimits& limits,
                               BatchBase* scratch, RootFn root) {
  std::string clean(json);
  size_t first_invalid = std::string_view::npos;
  for (size_t i = 0; i < clean.size();) {
    const size_t length = Utf8SequenceLength(clean, i);
    if (length == 0) {
      if (first_invalid == std::string_view::npos) first_invalid = i;
      clean[i++] = '?';
    } else {
      i += length;
    }
  }
  const std::string fallback =
      absl::StrCat("otlp/json: invalid UTF-8 (at byte ",
                   first_invalid == std::string_view::npos ? 0 : first_invalid, ")");
  if (first_invalid == std::string_view::npos) return absl::InvalidArgumentError(fallback);
  bool invalid_utf8 = false;
  absl::Status s = RunDocument(clean, limits, scratch, first_invalid, root, &invalid_utf8);
  if (s.ok() || invalid_utf8) return absl::InvalidArgumentError(fallback);
  return s;
}

}  // namespace strata::otlp::json_internal
