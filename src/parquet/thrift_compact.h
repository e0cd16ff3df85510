#pragma once

// Thrift compact protocol, the encoding of every Parquet footer and page
// header. CompactWriter appends to a std::string; CompactReader decodes a
// byte range it does not own.
//
// Only what Parquet metadata needs is supported: structs, field headers with
// delta-encoded ids, bool, i8, i16, i32, i64 (zigzag varints), double,
// binary/string, list and set. Maps are skipped when read (Parquet has none).
//
// Thread-safety: both classes are single-owner values.
//
// Errors: CompactReader returns InvalidArgument naming the byte offset (relative
// to the start of its input) for truncated input, over-long varints, unknown
// wire types, lists longer than the remaining bytes could hold, and nesting
// deeper than kMaxDepth. It never reads outside its input.

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace strata::parquet {

// Wire types of the compact protocol (the low nibble of a field header).
enum class CompactType : uint8_t {
  kStop = 0,
  kBoolTrue = 1,
  kBoolFalse = 2,
  kByte = 3,
  kI16 = 4,
  kI32 = 5,
  kI64 = 6,
  kDouble = 7,
  kBinary = 8,
  kList = 9,
  kSet = 10,
  kMap = 11,
  kStruct = 12,
};

class CompactWriter {
 public:
  explicit CompactWriter(std::string* out) : out_(out) {}

  // Struct framing: every struct (including the outermost) is bracketed by
  // BeginStruct/EndStruct so field ids are delta-encoded per struct.
  void BeginStruct();
  void EndStruct();

  // A field header followed by the value.
  void FieldBool(int16_t id, bool value);
  void FieldI8(int16_t id, int8_t value);
  void FieldI16(int16_t id, int16_t value);
  void FieldI32(int16_t id, int32_t value);
  void FieldI64(int16_t id, int64_t value);
  void FieldDouble(int16_t id, double value);
  void FieldBinary(int16_t id, std::string_view value);
  // A struct field: writes the header and begins the nested struct; close it
  // with EndStruct().
  void FieldStructBegin(int16_t id);
  // A list field header; the caller then writes `size` elements with the
  // Element* functions (for structs: BeginStruct ... EndStruct each).
  void FieldListBegin(int16_t id, CompactType element_type, uint32_t size);

  void ElementI32(int32_t value) { WriteZigZag64(value); }
  void ElementI64(int64_t value) { WriteZigZag64(value); }
  void ElementBinary(std::string_view value);
  void ElementBool(bool value);

 private:
  void FieldHeader(CompactType type, int16_t id);
  void WriteVarint(uint64_t value);
  void WriteZigZag64(int64_t value);

  std::string* out_;
  // last_field_id_.back() is the id of the previous field of the open struct.
  std::vector<int16_t> last_field_id_;
};

class CompactReader {
 public:
  // Nesting of structs and lists beyond this is rejected (Parquet metadata
  // nests at most a handful of levels; the limit keeps recursion bounded).
  static constexpr int kMaxDepth = 32;

  explicit CompactReader(std::string_view input) : input_(input) {}

  // A field header inside the current struct. At the struct's end returns
  // type kStop (and id 0).
  struct FieldHeader {
    CompactType type;
    int16_t id;
  };
  [[nodiscard]] absl::Status BeginStruct();
  [[nodiscard]] absl::Status EndStruct();
  [[nodiscard]] absl::StatusOr<FieldHeader> ReadFieldHeader();

  // Values. ReadBool needs the type from the field header (the compact
  // protocol stores a bool field's value in its header) or, for list
  // elements, kByte.
  [[nodiscard]] absl::StatusOr<bool> ReadBool(CompactType field_type);
  [[nodiscard]] absl::StatusOr<int8_t> ReadI8();
  [[nodiscard]] absl::StatusOr<int16_t> ReadI16();
  [[nodiscard]] absl::StatusOr<int32_t> ReadI32();
  [[nodiscard]] absl::StatusOr<int64_t> ReadI64();
  [[nodiscard]] absl::StatusOr<double> ReadDouble();
  // The view points into the input.
  [[nodiscard]] absl::StatusOr<std::string_view> ReadBinary();

  struct ListHeader {
    CompactType element_type;
    uint32_t size;
  };
  // Validates that `size` elements could fit in the remaining input.
  [[nodiscard]] absl::StatusOr<ListHeader> ReadListHeader();

  // Skips one value of the given wire type (recursively for containers).
  [[nodiscard]] absl::Status Skip(CompactType type);

  size_t position() const { return pos_; }
  size_t remaining() const { return input_.size() - pos_; }

  // InvalidArgument naming the current offset.
  absl::Status Error(std::string_view what) const;

 private:
  [[nodiscard]] absl::StatusOr<uint64_t> ReadVarint();
  [[nodiscard]] absl::StatusOr<int64_t> ReadZigZag64();
  [[nodiscard]] absl::Status SkipDepth(CompactType type, int depth);

  std::string_view input_;
  size_t pos_ = 0;
  std::vector<int16_t> last_field_id_;
};

// Type checks for parsers: true when a field of wire type `actual` can hold a
// value declared as `expected` (bools accept both bool wire types).
bool CompactTypeMatches(CompactType actual, CompactType expected);

}  // namespace strata::parquet
