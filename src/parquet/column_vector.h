#pragma once

// ColumnSpec describes one column of a flat Parquet schema; ColumnVector holds
// a run of that column's values in memory. The writer consumes ColumnVectors
// and the reader produces them, so a round trip can be checked with ==.
//
// Layout of a ColumnVector of n rows ("dense": every row has a slot, null or
// not):
//   * validity: empty when every row is present (required columns always),
//     else n bytes, 1 = present, 0 = null.
//   * BOOLEAN: bools (n bytes, 0/1); INT32: int32s; INT64: int64s; DOUBLE:
//     doubles; BYTE_ARRAY and FIXED_LEN_BYTE_ARRAY: row i is
//     bytes[offsets[i], offsets[i + 1]) and offsets has n + 1 entries.
//   * A null row's slot holds 0 / false / the empty string.
//
// Thread-safety: plain values.

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "parquet/metadata.h"

namespace strata::parquet {

struct ColumnSpec {
  std::string name;
  PhysicalType type = PhysicalType::kInt64;
  // kRequired or kOptional; kRepeated (nested data) is not supported yet.
  Repetition repetition = Repetition::kRequired;
  // kNone; kString on BYTE_ARRAY; kTimestamp (any unit, UTC or not) on INT64;
  // kInteger (8/16/32 bits on INT32, 64 on INT64, signed or not).
  LogicalType logical_type;
  // FIXED_LEN_BYTE_ARRAY only: bytes per value (> 0).
  int32_t type_length = 0;

  bool optional() const { return repetition == Repetition::kOptional; }
  bool operator==(const ColumnSpec&) const = default;

  static ColumnSpec Boolean(std::string name, bool optional = false);
  static ColumnSpec Int32(std::string name, bool optional = false);
  static ColumnSpec Int64(std::string name, bool optional = false);
  static ColumnSpec Double(std::string name, bool optional = false);
  static ColumnSpec Bytes(std::string name, bool optional = false);
  static ColumnSpec String(std::string name, bool optional = false);
  static ColumnSpec FixedBytes(std::string name, int32_t length, bool optional = false);
  // INT64 nanoseconds since the Unix epoch, TIMESTAMP(NANOS, isAdjustedToUTC=true).
  static ColumnSpec TimestampNanos(std::string name, bool optional = false);
  // INTEGER(bits, signed) on INT32 (bits 8/16/32) or INT64 (bits 64).
  static ColumnSpec Integer(std::string name, int bits, bool is_signed, bool optional = false);
};

// Checks the combination of physical type, logical type, repetition and length
// is one strata supports. InvalidArgument names the column.
[[nodiscard]] absl::Status ValidateColumnSpec(const ColumnSpec& spec);

// The Parquet schema list for flat columns under a root named "schema", and
// back. FromSchemaElements rejects nested schemas and unsupported types with
// InvalidArgument.
std::vector<SchemaElement> ToSchemaElements(const std::vector<ColumnSpec>& columns);
[[nodiscard]] absl::StatusOr<std::vector<ColumnSpec>> FromSchemaElements(
    const std::vector<SchemaElement>& schema);

struct ColumnVector {
  PhysicalType type = PhysicalType::kInt64;
  std::vector<uint8_t> validity;
  std::vector<uint8_t> bools;
  std::vector<int32_t> int32s;
  std::vector<int64_t> int64s;
  std::vector<double> doubles;
  std::vector<uint64_t> offsets{0};
  std::string bytes;

  ColumnVector() = default;
  explicit ColumnVector(PhysicalType t) : type(t) {}

  size_t size() const;
  bool is_null(size_t row) const { return !validity.empty() && validity[row] == 0; }
  std::string_view bytes_at(size_t row) const {
    return std::string_view(bytes).substr(offsets[row], offsets[row + 1] - offsets[row]);
  }

  // Builders. The first AppendNull turns an all-present vector into one with
  // validity bytes.
  void AppendNull();
  void AppendBool(bool value);
  void AppendInt32(int32_t value);
  void AppendInt64(int64_t value);
  void AppendDouble(double value);
  void AppendBytes(std::string_view value);

  // Appends rows [begin, end) of `source` (same type).
  void AppendSlice(const ColumnVector& source, size_t begin, size_t end);
  void Reserve(size_t rows);

  // Equality compares values bit-for-bit (NaN == NaN with the same bits) and
  // treats an all-ones validity like an empty one.
  bool operator==(const ColumnVector& other) const;

 private:
  void MarkPresent();
};

}  // namespace strata::parquet
