#pragma once

// The seven-column attribute family of docs/format/attributes.md
// (P_keys, P_types, P_str, P_int, P_double, P_bool, P_bytes): its specs,
// AttributeFamilyWriter (AppendRow / AppendConcatenatedRow /
// AppendEmptyRow per row, or AddTable once per batch and AppendTableRow per
// row when rows are sorted differently from their batch), the
// `<element>_attr_count` lists, and AttributeFamilyReader (AppendRow /
// AppendSplitRow).
//
// Errors: every problem with bytes read from a file is DataLoss naming the
// file and the check that failed. Writers only fail when the batch breaks
// batch.h's invariants the writer depends on (Internal) or Parquet writing
// fails. Thread-safety: writers and readers have a single owner; the free
// functions are reentrant.

#include <array>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "otlp/batch.h"
#include "parquet/column_vector.h"
#include "parquet/file_reader.h"
#include "parquet/file_writer.h"
#include "storage/format/batch_meta.h"
#include "storage/table/table_file.h"

namespace strata::storage {

// ------------------------------------------------------------ attributes

// The seven list columns of an attribute family, in the order of
// attributes.md: P_keys, P_types, P_str, P_int, P_double, P_bool, P_bytes.
inline constexpr int kAttributeFamilyColumns = 7;
void AppendAttributeFamilySpecs(std::string_view prefix, std::vector<parquet::ColumnSpec>* specs);

// One row's elements in a family's element arrays; rows holding the same
// attributes (a resource's, on every span of that resource) can share them.
struct FamilyElements {
  uint64_t begin = 0;
  uint64_t count = 0;
};

// Builds the seven ColumnVectors of one family, a row at a time.
class AttributeFamilyWriter {
 public:
  AttributeFamilyWriter();

  void Reserve(size_t rows, size_t elements);

  // Appends a row holding attributes `range` of `table` (an attribute table
  // of `batch`; kArray / kKvList values are stored as their protobuf-encoded
  // AnyValue, children read from batch.nested_*). Returns where its
  // elements are, for AppendSharedRow.
  FamilyElements AppendRow(const otlp::BatchBase& batch, const otlp::AttributeColumns& table,
                           otlp::Range range);
  // Appends a row holding the concatenation of the attributes each range
  // names, in order (per-event / per-link / per-exemplar attributes).
  FamilyElements AppendConcatenatedRow(const otlp::BatchBase& batch,
                                       const otlp::AttributeColumns& table,
                                       std::span<const otlp::Range> ranges);
  // Adds the elements of attributes `range` of `table` without a row, for
  // rows that AppendSharedRow adds later.
  FamilyElements AddElements(const otlp::BatchBase& batch, const otlp::AttributeColumns& table,
                             otlp::Range range);
  // Adds every row of `table` as elements, in table order (reading the
  // table sequentially), and returns the element number of its row 0. Rows
  // then point at them with AppendTableRow / AppendTableConcatenatedRow, in
  // any order: the way to write rows sorted differently from their batch.
  uint64_t AddTable(const otlp::BatchBase& batch, const otlp::AttributeColumns& table);
  // A row holding attributes `range` of a table AddTable returned `base` for.
  void AppendTableRow(uint64_t base, otlp::Range range);
  // Hints that AppendTableRow(base, range) comes soon (it reads the row's
  // type codes).
  void PrefetchTableRow(uint64_t base, otlp::Range range) const {
    if (range.count != 0) __builtin_prefetch(types_.int32s.data() + base + range.begin);
  }
  // A row holding the concatenation of `ranges` of such a table: shares the
  // table's elements when the non-empty ranges are adjacent (as decoders
  // lay them out), else copies them like AppendConcatenatedRow.
  void AppendTableConcatenatedRow(uint64_t base, const otlp::BatchBase& batch,
                                  const otlp::AttributeColumns& table,
                                  std::span<const otlp::Range> ranges);
  // Appends a row whose list is the same elements as an earlier row.
  void AppendSharedRow(FamilyElements elements);
  void AppendEmptyRow() { AppendSharedRow({}); }

  size_t rows() const { return rows_.size(); }

  // Appends the seven columns, in spec order, to *out and resets the writer.
  void MoveColumnsTo(std::vector<parquet::ColumnVector>* out);
  // For rows written in chunks over elements that stay (FileWriter::
  // WriteChunk): gives the seven columns the rows appended since the last
  // ClearRows and appends pointers to them, in spec order, to *out; the
  // columns stay the writer's. ClearRows then forgets those rows, keeping
  // every element.
  void ExposeRows(std::vector<const parquet::ColumnVector*>* out);
  void ClearRows();

 private:
  // Turns rows_ and present_ into the columns' lists.
  void SetLists();
  void AppendElements(const otlp::BatchBase& batch, const otlp::AttributeColumns& table,
                      otlp::Range range);

  parquet::ColumnVector keys_;
  parquet::ColumnVector types_;
  parquet::ColumnVector str_;
  parquet::ColumnVector int_;
  parquet::ColumnVector double_;
  parquet::ColumnVector bool_;
  parquet::ColumnVector bytes_;
  // Per row: its elements (every column of the family lists them), and
  // which value lists hold a value (bit 2 + list), as kValueListBit says.
  // MoveColumnsTo turns them into the columns' lists.
  std::vector<parquet::ListRange> rows_;
  std::vector<uint8_t> present_;
  // The last row's elements and present bits.
  FamilyElements last_elements_;
  uint8_t last_present_ = 0;
};

// Appends one row to a list<u32> count column (see AppendElementCountSpec):
// `ranges[i].count` for each i.
void AppendElementCounts(std::span<const otlp::Range> ranges, parquet::ColumnVector* counts);

// Reads the seven read-back ColumnVectors of one family into a batch's
// attribute tables. Make() validates the whole family once (equal list
// lengths per row, type codes 0..7, exactly one value per element in the
// column its type names, no null keys or types list; a null value list is
// one with no values) and retains the string and bytes
// buffers in the batch (or copies each appended row's strings, see
// StringOwnership); the rows then need no further checks except nested
// value decoding.
class AttributeFamilyReader {
 public:
  // Where the strings handed to the batch live.
  enum class StringOwnership {
    // The columns' byte buffers move into `batch` (retained), and rows view
    // them: for families read on most rows.
    kRetainColumns,
    // The columns keep their buffers (they must outlive the reader), and
    // each row's strings are copied into batch->arena as it is appended:
    // for families whose rows mostly repeat (a resource's attributes on
    // every row of the resource), of which the batch keeps few.
    kCopyToArena,
  };

  // `columns` are the family's seven vectors in spec order. DataLoss names
  // `file_name` and the column.
  [[nodiscard]] static absl::StatusOr<AttributeFamilyReader> Make(
      std::span<parquet::ColumnVector> columns, std::string_view prefix, std::string_view file_name,
      otlp::BatchBase* batch, StringOwnership ownership = StringOwnership::kRetainColumns);

  size_t rows() const { return lists_.size(); }

  // Appends row `row`'s attributes to *table, decoding array / kvlist bytes
  // into batch->nested_values / nested_attributes, and returns their Range
  // in *table. DataLoss for undecodable nested bytes.
  [[nodiscard]] absl::StatusOr<otlp::Range> AppendRow(size_t row, otlp::BatchBase* batch,
                                                      otlp::AttributeColumns* table) const;

  // Row `row` holds the concatenated attributes of several elements;
  // `counts` (one row of an `<element>_attr_count` column) says how many
  // each owns. Appends them to *table and writes one Range per element to
  // *out (cleared first). DataLoss when the counts do not sum to the row's
  // list length.
  [[nodiscard]] absl::Status AppendSplitRow(size_t row, std::span<const uint32_t> counts,
                                            otlp::BatchBase* batch, otlp::AttributeColumns* table,
                                            std::vector<otlp::Range>* out) const;

 private:
  AttributeFamilyReader() = default;
  [[nodiscard]] absl::Status AppendElement(uint64_t element, otlp::BatchBase* batch,
                                           otlp::AttributeColumns* table) const;

  std::string file_name_;
  std::string prefix_;
  bool copy_ = false;  // StringOwnership::kCopyToArena
  std::vector<parquet::ListRange> lists_;
  std::vector<std::string_view> keys_;
  std::vector<otlp::ValueType> types_;
  // Per element: string / bytes payload, or the int / double / bool bits.
  std::vector<std::string_view> payload_;
  std::vector<uint64_t> bits_;
};

}  // namespace strata::storage
