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
// A LIST column (ColumnSpec::list) keeps its elements flat in the same
// arrays, laid out as above with one slot per element ("validity" is then
// element validity), and adds one ListRange per row: the row's list is
// elements [begin, begin + count). Ranges may point anywhere in the element
// arrays, in any order (a writer with a flat attribute table and a Range per
// span hands both over as they are); the reader returns them contiguous and
// in order. list_validity is empty when every list is present, else one byte
// per row (0 = null list, whose range is ignored).
//
// Thread-safety: plain values.

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "parquet/metadata.h"

namespace strata::parquet {

struct ColumnSpec {
  std::string name;
  PhysicalType type = PhysicalType::kInt64;
  // kRequired or kOptional: of the value, or of each element of a list.
  Repetition repetition = Repetition::kRequired;
  // A three-level LIST of the type above:
  //   <list_repetition> group <name> (LIST) {
  //     repeated group list { <repetition> <type> element; } }
  // Its leaf's path is name.list.element.
  bool list = false;
  // kRequired or kOptional (lists only).
  Repetition list_repetition = Repetition::kRequired;
  // kNone; kString on BYTE_ARRAY; kTimestamp (any unit, UTC or not) on INT64;
  // kInteger (8/16/32 bits on INT32, 64 on INT64, signed or not).
  LogicalType logical_type;
  // FIXED_LEN_BYTE_ARRAY only: bytes per value (> 0).
  int32_t type_length = 0;

  bool optional() const { return repetition == Repetition::kOptional; }
  bool list_optional() const { return list && list_repetition == Repetition::kOptional; }
  // Parquet levels of the leaf: max repetition 0 or 1, max definition 0..3.
  int max_repetition_level() const { return list ? 1 : 0; }
  int max_definition_level() const {
    return (list ? 1 + (list_optional() ? 1 : 0) : 0) + (optional() ? 1 : 0);
  }
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
  // A LIST column whose elements are `element` (its name names the column,
  // its repetition says whether elements may be null).
  static ColumnSpec List(ColumnSpec element, bool optional_list = false);
};

// Checks the combination of physical type, logical type, repetition and length
// is one strata supports. InvalidArgument names the column.
[[nodiscard]] absl::Status ValidateColumnSpec(const ColumnSpec& spec);

// The Parquet schema list for the columns under a root named "schema", and
// back. FromSchemaElements accepts flat leaves and three-level LISTs of
// primitives as ToSchemaElements writes them, and rejects any other nesting
// and unsupported types with InvalidArgument.
std::vector<SchemaElement> ToSchemaElements(const std::vector<ColumnSpec>& columns);
[[nodiscard]] absl::StatusOr<std::vector<ColumnSpec>> FromSchemaElements(
    const std::vector<SchemaElement>& schema);

// One row's list: elements [begin, begin + count).
struct ListRange {
  uint64_t begin = 0;
  uint64_t count = 0;
  bool operator==(const ListRange&) const = default;
};

// ranges->push_back({begin, count}), storing the two fields in place. A
// braced temporary goes through the stack as two 8-byte stores read back
// as one 16-byte load, which the CPU cannot forward from the store queue:
// the load then waits for every older store to reach the cache, a stall of
// its own on rows that write many cold column vectors.
inline void PushListRange(std::vector<ListRange>* ranges, uint64_t begin, uint64_t count) {
  ListRange& range = ranges->emplace_back();
  range.begin = begin;
  range.count = count;
}

// The ranges of a LIST column's rows. Copies share one buffer until one of
// them is changed, which then copies it first, so the columns of an
// attribute family (which list the same elements per row) hold one set of
// ranges instead of seven. Reads through a const object never copy.
//
// Thread-safety: a plain value; copies sharing a buffer may be used on
// different threads (a change copies the buffer unless this copy holds the
// only reference, seen with acquire ordering).
class ListRanges {
 public:
  ListRanges() = default;
  ListRanges(std::vector<ListRange> ranges)  // NOLINT(google-explicit-constructor)
      : ranges_(std::make_shared<std::vector<ListRange>>(std::move(ranges))) {}

  size_t size() const { return ranges_ ? ranges_->size() : 0; }
  bool empty() const { return size() == 0; }
  const ListRange* data() const { return ranges_ ? ranges_->data() : nullptr; }
  const ListRange& operator[](size_t i) const { return (*ranges_)[i]; }
  const ListRange& back() const { return ranges_->back(); }
  const ListRange* begin() const { return data(); }
  const ListRange* end() const { return data() + size(); }

  // Changes (each makes this copy's buffer its own first).
  ListRange& operator[](size_t i) { return Own()[i]; }
  ListRange& back() { return Own().back(); }
  ListRange* begin() { return Own().data(); }
  ListRange* end() { return Own().data() + size(); }
  void push_back(ListRange range) { Own().push_back(range); }
  void reserve(size_t n) { Own().reserve(n); }

  // Whether the two share one buffer (then they are equal).
  bool SharesWith(const ListRanges& other) const { return ranges_ && ranges_ == other.ranges_; }
  bool operator==(const ListRanges& other) const;

 private:
  std::vector<ListRange>& Own() {
    if (ranges_ && ranges_.use_count() == 1) {
      // The last other copy may have just been dropped on another thread:
      // its reads of the buffer happen before the changes made here.
      std::atomic_thread_fence(std::memory_order_acquire);
      return *ranges_;
    }
    return OwnShared();
  }
  // Own() for a buffer that is shared (copied) or not there yet (made).
  std::vector<ListRange>& OwnShared();

  std::shared_ptr<std::vector<ListRange>> ranges_;
};

struct ColumnVector {
  PhysicalType type = PhysicalType::kInt64;
  // LIST columns only: one range per row, and list validity.
  bool is_list = false;
  ListRanges lists;
  std::vector<uint8_t> list_validity;
  // Values (elements, for a LIST column) and their validity.
  std::vector<uint8_t> validity;
  std::vector<uint8_t> bools;
  std::vector<int32_t> int32s;
  std::vector<int64_t> int64s;
  std::vector<double> doubles;
  std::vector<uint64_t> offsets{0};
  std::string bytes;

  ColumnVector() = default;
  explicit ColumnVector(PhysicalType t) : type(t) {}
  // An empty LIST column vector of elements of type t.
  static ColumnVector List(PhysicalType t);

  // Rows: lists for a LIST column, else values.
  size_t size() const { return is_list ? lists.size() : element_count(); }
  // Value slots (elements of a LIST column).
  size_t element_count() const;
  // Whether value (element) slot `row` is null.
  bool is_null(size_t row) const { return !validity.empty() && validity[row] == 0; }
  bool is_null_list(size_t row) const { return !list_validity.empty() && list_validity[row] == 0; }
  std::string_view bytes_at(size_t row) const {
    return std::string_view(bytes).substr(offsets[row], offsets[row + 1] - offsets[row]);
  }

  // Builders of value (element) slots. The first AppendNull turns an
  // all-present vector into one with validity bytes.
  void AppendNull();
  void AppendBool(bool value);
  void AppendInt32(int32_t value);
  void AppendInt64(int64_t value);
  void AppendDouble(double value);
  void AppendBytes(std::string_view value);
  // LIST rows: a list of elements [begin, begin + count) (appended before or
  // after, as long as they exist when the vector is written), or a null list.
  void AppendList(uint64_t begin, uint64_t count);
  void AppendNullList();

  // Appends rows [begin, end) of `source` (same type and kind). For LIST
  // vectors the rows' elements are copied after this vector's elements.
  void AppendSlice(const ColumnVector& source, size_t begin, size_t end);
  // Appends value slots [begin, end) of `source` (elements, for lists).
  void AppendElements(const ColumnVector& source, size_t begin, size_t end);
  void Reserve(size_t rows);
  // Removes every row and element, keeping the buffers' capacity.
  void Clear();
  // LIST vectors: removes every row (list), keeping the elements.
  void ClearLists() {
    lists = {};
    list_validity.clear();
  }

  // Equality compares values bit-for-bit (NaN == NaN with the same bits) and
  // treats an all-ones validity like an empty one. LIST vectors are equal
  // when every row's list (null or its elements in order) is, wherever the
  // elements sit.
  bool operator==(const ColumnVector& other) const;

 private:
  void MarkPresent();
};

// Whether value slot i of a equals value slot j of b (same type; nulls equal
// nulls; NaN equals itself bit-for-bit).
bool ElementEquals(const ColumnVector& a, size_t i, const ColumnVector& b, size_t j);

}  // namespace strata::parquet
