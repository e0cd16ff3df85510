// ValueJsonWriter::EncodedContains (value_json.h): the JSON text of an
// array or kvlist searched token by token straight off its protobuf bytes.
// A LogQL line filter runs this once per structured log body of its window;
// decoding each body into columns first cost about as much as reading the
// window's string bodies.
//
// The walk answers only for the shape strata's encoder writes
// (otlp/any_value_codec.h), where the decoder reads every field the same
// way: the fields are read with the decoder's own WireReader, and anything
// else the decoder might accept differently, or reject (a second oneof
// member, an unknown field, a key after its value, invalid UTF-8, nesting
// past the decoder's limit), ends the walk with nullopt. After a match the
// walk still reads the rest, so bytes that turn out not to have that shape
// give nullopt, not a match, and the caller's decoder reports their error.

#include "otlp/decode.h"
#include "otlp/proto_wire.h"
#include "query/value_json.h"

namespace strata::query {

namespace {

// The one-byte tags (field number << 3 | wire type) of AnyValue's members,
// and of the repeated `values` of ArrayValue and KeyValueList and the key
// and value of KeyValue.
constexpr uint32_t kStringValueTag = 1 << 3 | 2;
constexpr uint32_t kBoolValueTag = 2 << 3 | 0;
constexpr uint32_t kIntValueTag = 3 << 3 | 0;
constexpr uint32_t kDoubleValueTag = 4 << 3 | 1;
constexpr uint32_t kArrayValueTag = 5 << 3 | 2;
constexpr uint32_t kKvListValueTag = 6 << 3 | 2;
constexpr uint32_t kBytesValueTag = 7 << 3 | 2;
constexpr uint32_t kValuesTag = 1 << 3 | 2;
constexpr uint32_t kKeyTag = 1 << 3 | 2;
constexpr uint32_t kValueTag = 2 << 3 | 2;

}  // namespace

std::optional<bool> ValueJsonWriter::EncodedContains(std::string_view bytes,
                                                     std::string_view needle) {
  needle_ = needle;
  found_ = false;
  if (!WalkValue(bytes, 1)) return std::nullopt;
  return found_;
}

bool ValueJsonWriter::WalkValue(std::string_view message, uint32_t depth) {
  otlp::WireReader r(message);
  if (r.done()) {  // the empty value: null
    if (!found_) found_ = ScalarContains({}, needle_);
    return true;
  }
  uint32_t tag = 0;
  if (!r.ReadTag(&tag)) return false;
  std::string_view payload;
  uint64_t bits = 0;
  switch (tag) {
    case kStringValueTag:
      if (!r.ReadLen(&payload) || !otlp::IsValidUtf8(payload)) return false;
      if (!found_) found_ = EscapedContains(payload, needle_);
      break;
    case kBoolValueTag:
    case kIntValueTag:
      if (!r.ReadVarint(&bits)) return false;
      if (!found_) {
        found_ = ScalarContains(
            tag == kBoolValueTag ? otlp::ValueRow{otlp::ValueType::kBool, {}, bits != 0 ? 1u : 0u}
                                 : otlp::ValueRow{otlp::ValueType::kInt, {}, bits},
            needle_);
      }
      break;
    case kDoubleValueTag:
      if (!r.ReadFixed64(&bits)) return false;
      if (!found_) found_ = ScalarContains({otlp::ValueType::kDouble, {}, bits}, needle_);
      break;
    case kBytesValueTag:
      if (!r.ReadLen(&payload)) return false;
      if (!found_) found_ = ScalarContains({otlp::ValueType::kBytes, payload, 0}, needle_);
      break;
    case kArrayValueTag:
    case kKvListValueTag:
      if (depth > otlp::DecodeLimits{}.max_value_depth || !r.ReadLen(&payload)) return false;
      if (!WalkChildren(payload, tag == kKvListValueTag, depth)) return false;
      break;
    default:
      return false;
  }
  return r.done();  // one member, nothing after it
}

bool ValueJsonWriter::WalkChildren(std::string_view message, bool kvlist, uint32_t depth) {
  otlp::WireReader r(message);
  while (!r.done()) {
    uint32_t tag = 0;
    std::string_view child;
    if (!r.ReadTag(&tag) || tag != kValuesTag || !r.ReadLen(&child)) return false;
    if (!(kvlist ? WalkEntry(child, depth + 1) : WalkValue(child, depth + 1))) return false;
  }
  return true;
}

bool ValueJsonWriter::WalkEntry(std::string_view message, uint32_t depth) {
  otlp::WireReader r(message);
  uint32_t tag = 0;
  if (r.done() || !r.ReadTag(&tag)) return false;
  if (tag == kKeyTag) {
    std::string_view key;
    if (!r.ReadLen(&key) || !otlp::IsValidUtf8(key)) return false;
    if (!found_) found_ = EscapedContains(key, needle_);
    if (r.done()) return WalkValue({}, depth);  // no value: null
    if (!r.ReadTag(&tag)) return false;
  }
  std::string_view value;
  if (tag != kValueTag || !r.ReadLen(&value) || !r.done()) return false;
  return WalkValue(value, depth);
}

}  // namespace strata::query
