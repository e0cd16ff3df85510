#pragma once

// ProtoWriter appends protobuf wire-format fields to one std::string: tags,
// varints, fixed-width scalars, length-delimited bytes, packed repeated
// scalars and nested messages.
//
// Nested messages are written in one pass with a back-patched length. Open()
// writes the tag and reserves one byte for the length; Close() stores the
// length there, and only when the body turned out to be 128 bytes or longer
// does it shift the body right to make room for the longer varint. Lengths are
// therefore always minimal varints, as libprotobuf writes them.
//
// Field methods named after a proto3 scalar type (UInt32, String, Double, ...)
// omit the field at its default value (implicit presence). The *Always
// variants write unconditionally; they serve oneof members and optional
// fields, whose presence must survive a default value.
//
// Thread-safety: single owner. Errors: none; the output only grows.

#include <array>
#include <bit>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

#include "otlp/proto_wire.h"

namespace strata::otlp {

class ProtoWriter {
 public:
  // Where a nested message starts, as returned by Open().
  struct Mark {
    size_t tag_begin;
    size_t body_begin;
  };

  explicit ProtoWriter(std::string* out) : out_(out) {}

  static constexpr size_t VarintSize(uint64_t v) {
    return static_cast<size_t>((std::bit_width(v | 1) + 6) / 7);
  }

  // ------------------------------------------------------------ raw bytes

  void AppendVarint(uint64_t v) {
    char buf[10];
    size_t n = EncodeVarint(v, buf);
    out_->append(buf, n);
  }
  void AppendTag(uint32_t field, WireType type) {
    AppendVarint((uint64_t{field} << 3) | static_cast<uint64_t>(type));
  }
  void AppendFixed32(uint32_t v) {
    char buf[4];
    StoreLittleEndian(v, buf);
    out_->append(buf, 4);
  }
  void AppendFixed64(uint64_t v) {
    char buf[8];
    StoreLittleEndian(v, buf);
    out_->append(buf, 8);
  }

  // ------------------------------------------- fields written unconditionally

  void VarintAlways(uint32_t field, uint64_t v) {
    AppendTag(field, WireType::kVarint);
    AppendVarint(v);
  }
  void Fixed32Always(uint32_t field, uint32_t v) {
    AppendTag(field, WireType::kFixed32);
    AppendFixed32(v);
  }
  void Fixed64Always(uint32_t field, uint64_t v) {
    AppendTag(field, WireType::kFixed64);
    AppendFixed64(v);
  }
  void DoubleAlways(uint32_t field, double v) { Fixed64Always(field, std::bit_cast<uint64_t>(v)); }
  void BytesAlways(uint32_t field, std::string_view v) {
    AppendTag(field, WireType::kLen);
    AppendVarint(v.size());
    out_->append(v.data(), v.size());
  }
  // A trace or span id: its bytes as a bytes field.
  template <size_t N>
  void IdAlways(uint32_t field, const std::array<uint8_t, N>& id) {
    BytesAlways(field, {reinterpret_cast<const char*>(id.data()), N});
  }
  // int32 and enum values are sign-extended to 64 bits, as protobuf requires.
  void Int32Always(uint32_t field, int32_t v) {
    VarintAlways(field, static_cast<uint64_t>(static_cast<int64_t>(v)));
  }

  // ----------------------------------- implicit-presence (proto3) scalars

  void UInt32(uint32_t field, uint32_t v) {
    if (v != 0) VarintAlways(field, v);
  }
  void Int32(uint32_t field, int32_t v) {
    if (v != 0) Int32Always(field, v);
  }
  void SInt32(uint32_t field, int32_t v) {
    if (v != 0) VarintAlways(field, ZigZag32(v));
  }
  void Bool(uint32_t field, bool v) {
    if (v) VarintAlways(field, 1);
  }
  void Fixed32(uint32_t field, uint32_t v) {
    if (v != 0) Fixed32Always(field, v);
  }
  void Fixed64(uint32_t field, uint64_t v) {
    if (v != 0) Fixed64Always(field, v);
  }
  // Only +0.0 is the default; -0.0 has a set sign bit and is written, as
  // libprotobuf does.
  void Double(uint32_t field, double v) {
    if (std::bit_cast<uint64_t>(v) != 0) DoubleAlways(field, v);
  }
  void String(uint32_t field, std::string_view v) {
    if (!v.empty()) BytesAlways(field, v);
  }

  // ------------------------------------------------ packed repeated scalars

  void PackedFixed64(uint32_t field, const uint64_t* values, size_t count) {
    if (count == 0) return;
    AppendTag(field, WireType::kLen);
    AppendVarint(count * 8);
    AppendLittleEndianArray(values, count);
  }
  void PackedDouble(uint32_t field, const double* values, size_t count) {
    if (count == 0) return;
    AppendTag(field, WireType::kLen);
    AppendVarint(count * 8);
    AppendLittleEndianArray(values, count);
  }
  void PackedVarint(uint32_t field, const uint64_t* values, size_t count) {
    if (count == 0) return;
    size_t bytes = 0;
    for (size_t i = 0; i < count; ++i) bytes += VarintSize(values[i]);
    AppendTag(field, WireType::kLen);
    AppendVarint(bytes);
    size_t at = out_->size();
    out_->resize(at + bytes);
    char* p = out_->data() + at;
    for (size_t i = 0; i < count; ++i) p += EncodeVarint(values[i], p);
  }

  // ------------------------------------------------------ nested messages

  // Starts a length-delimited field whose body is written next.
  Mark Open(uint32_t field) {
    Mark mark;
    mark.tag_begin = out_->size();
    AppendTag(field, WireType::kLen);
    out_->push_back('\0');
    mark.body_begin = out_->size();
    return mark;
  }

  // Finishes the field that `mark` opened, fixing up its length prefix.
  void Close(Mark mark) {
    size_t length = out_->size() - mark.body_begin;
    if (length < 0x80) {
      (*out_)[mark.body_begin - 1] = static_cast<char>(length);
      return;
    }
    size_t extra = VarintSize(length) - 1;
    out_->resize(out_->size() + extra);
    char* body = out_->data() + mark.body_begin;
    std::memmove(body + extra, body, length);
    EncodeVarint(length, body - 1);
  }

  std::string* output() { return out_; }

 private:
  static uint32_t ZigZag32(int32_t v) {
    return (static_cast<uint32_t>(v) << 1) ^ static_cast<uint32_t>(v >> 31);
  }

  static size_t EncodeVarint(uint64_t v, char* p) {
    size_t n = 0;
    while (v >= 0x80) {
      p[n++] = static_cast<char>(v | 0x80);
      v >>= 7;
    }
    p[n++] = static_cast<char>(v);
    return n;
  }

  template <typename T>
  static void StoreLittleEndian(T v, char* p) {
    for (size_t i = 0; i < sizeof(T); ++i) p[i] = static_cast<char>(v >> (8 * i));
  }

  // 8-byte values (uint64_t or double) in little-endian order.
  template <typename T>
  void AppendLittleEndianArray(const T* values, size_t count) {
    static_assert(sizeof(T) == 8);
    if constexpr (std::endian::native == std::endian::little) {
      out_->append(reinterpret_cast<const char*>(values), count * 8);
    } else {
      for (size_t i = 0; i < count; ++i) AppendFixed64(std::bit_cast<uint64_t>(values[i]));
    }
  }

  std::string* out_;
};

}  // namespace strata::otlp
