#pragma once

// WireReader: a bounds-checked cursor over protobuf wire-format bytes, for the
// hand-written OTLP decoders (proto_decode_*.cc).
//
// It reads tags, varints, fixed32/fixed64 and length-delimited payloads, and
// skips unknown fields of every wire type, including (deprecated) groups up to
// kMaxGroupDepth deep. Payloads are returned as views into the input; nothing
// is copied or allocated. The common cases (one-byte tags and lengths, short
// varints) are inline fast paths; longer forms take a bounds-checked loop.
//
// Errors: every Read*/Skip* returns false on malformed input (truncation,
// a varint longer than 10 bytes, a length past the end, a bad wire type or
// field number) and leaves a static description in error(). The reader never
// reads outside [begin, end).
//
// Thread-safety: a WireReader is a value with a single owner.

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string_view>

#include "absl/base/attributes.h"
#include "absl/base/optimization.h"

namespace strata::otlp {

enum class WireType : uint8_t {
  kVarint = 0,
  kFixed64 = 1,
  kLen = 2,
  kStartGroup = 3,
  kEndGroup = 4,
  kFixed32 = 5,
};

// The tag value of `field` with wire type `type`, as it appears on the wire.
constexpr uint32_t Tag(uint32_t field, WireType type) {
  return (field << 3) | static_cast<uint32_t>(type);
}

// Deepest nesting of groups that SkipField() accepts (libprotobuf's default
// recursion limit is 100; groups are long deprecated and OTLP has none).
inline constexpr int kMaxGroupDepth = 32;

class WireReader {
 public:
  WireReader(const char* begin, const char* end)
      : p_(reinterpret_cast<const uint8_t*>(begin)), end_(reinterpret_cast<const uint8_t*>(end)) {}
  explicit WireReader(std::string_view bytes) : WireReader(bytes.data(), bytes.data() + bytes.size()) {}

  bool done() const { return p_ >= end_; }
  const char* pos() const { return reinterpret_cast<const char*>(p_); }
  // Where the tag most recently read by ReadTag() starts.
  const char* field_start() const { return reinterpret_cast<const char*>(field_start_); }
  // Why the last failed call failed (a static string).
  const char* error() const { return error_; }

  // Reads a tag. Does not validate the field number or wire type: callers
  // switch on the known tags and hand everything else to SkipField().
  [[nodiscard]] bool ReadTag(uint32_t* tag) {
    field_start_ = p_;
    if (ABSL_PREDICT_TRUE(p_ < end_ && *p_ < 0x80)) {
      *tag = *p_++;
      return true;
    }
    uint64_t v;
    if (!ReadVarintSlow(&v)) return false;
    if (ABSL_PREDICT_FALSE(v > UINT32_MAX)) return Error("tag out of range");
    *tag = static_cast<uint32_t>(v);
    return true;
  }

  [[nodiscard]] bool ReadVarint(uint64_t* v) {
    if (ABSL_PREDICT_TRUE(p_ < end_ && *p_ < 0x80)) {
      *v = *p_++;
      return true;
    }
    return ReadVarintSlow(v);
  }

  [[nodiscard]] bool ReadFixed32(uint32_t* v) {
    if (ABSL_PREDICT_FALSE(end_ - p_ < 4)) return Error("truncated fixed32");
    std::memcpy(v, p_, 4);  // little-endian hosts only (x86-64, aarch64)
    p_ += 4;
    return true;
  }

  [[nodiscard]] bool ReadFixed64(uint64_t* v) {
    if (ABSL_PREDICT_FALSE(end_ - p_ < 8)) return Error("truncated fixed64");
    std::memcpy(v, p_, 8);
    p_ += 8;
    return true;
  }

  // Reads a length-delimited payload as a view into the input.
  [[nodiscard]] bool ReadLen(std::string_view* payload) {
    uint64_t len;
    if (ABSL_PREDICT_TRUE(p_ < end_ && *p_ < 0x80)) {
      len = *p_++;
    } else if (!ReadVarintSlow(&len)) {
      return false;
    }
    if (ABSL_PREDICT_FALSE(len > static_cast<uint64_t>(end_ - p_))) {
      return Error("length past end of message");
    }
    *payload = std::string_view(reinterpret_cast<const char*>(p_), len);
    p_ += len;
    return true;
  }

  // Skips the payload of a field whose tag was just read. Rejects field
  // number 0, wire types 6 and 7, an end-group tag without its start, and
  // groups nested deeper than kMaxGroupDepth.
  [[nodiscard]] bool SkipField(uint32_t tag) { return SkipField(tag, 0); }

 private:
  [[nodiscard]] bool ReadVarintSlow(uint64_t* v);
  [[nodiscard]] bool SkipField(uint32_t tag, int group_depth);
  [[nodiscard]] bool SkipGroup(uint32_t field, int group_depth);
  [[nodiscard]] ABSL_ATTRIBUTE_NOINLINE bool Error(const char* why) {
    error_ = why;
    return false;
  }

  const uint8_t* p_;
  const uint8_t* end_;
  const uint8_t* field_start_ = nullptr;
  const char* error_ = "";
};

inline bool WireReader::ReadVarintSlow(uint64_t* v) {
  uint64_t result = 0;
  for (int i = 0; i < 10; ++i) {
    if (ABSL_PREDICT_FALSE(p_ >= end_)) return Error("truncated varint");
    uint8_t byte = *p_++;
    result |= uint64_t{byte & 0x7fu} << (7 * i);
    if (byte < 0x80) {
      *v = result;
      return true;
    }
  }
  return Error("varint longer than 10 bytes");
}

// proto3 int32/enum fields: the low 32 bits of the varint (negative values
// are sent sign-extended to 64 bits).
inline int32_t VarintToInt32(uint64_t v) { return static_cast<int32_t>(static_cast<uint32_t>(v)); }
inline uint32_t VarintToUint32(uint64_t v) { return static_cast<uint32_t>(v); }
// sint32: zigzag over the low 32 bits.
inline int32_t ZigZagToInt32(uint64_t v) {
  uint32_t u = static_cast<uint32_t>(v);
  return static_cast<int32_t>((u >> 1) ^ (~(u & 1) + 1));
}

// Out-of-line full validation (simdjson) for strings that are not all ASCII.
bool IsValidUtf8Slow(std::string_view s);

// True when `s` is valid UTF-8. ASCII-only strings, the common case in
// telemetry, are settled inline a word at a time.
inline bool IsValidUtf8(std::string_view s) {
  const char* p = s.data();
  size_t n = s.size();
  uint64_t acc = 0;
  if (n >= 8) {
    const char* last = p + n - 8;
    for (; p < last; p += 8) {
      uint64_t w;
      std::memcpy(&w, p, 8);
      acc |= w;
    }
    uint64_t w;
    std::memcpy(&w, last, 8);
    acc |= w;
  } else if (n >= 4) {
    uint32_t a, b;
    std::memcpy(&a, p, 4);
    std::memcpy(&b, p + n - 4, 4);
    acc = a | b;
  } else {
    for (size_t i = 0; i < n; ++i) acc |= static_cast<uint8_t>(p[i]);
  }
  if (ABSL_PREDICT_TRUE((acc & 0x8080808080808080ull) == 0)) return true;
  return IsValidUtf8Slow(s);
}

}  // namespace strata::otlp
