#pragma once

// What every table file of strata (spans, logs, metrics; docs/format/
// spans-parquet.md, logs-parquet.md, metrics-parquet.md) shares at the file
// level: the key-value metadata, the writer options, writing a file from
// column specs, opening and checking one (OpenTable, CheckTableFooter: boot
// reads no pages), reading its columns back, and the row-kind and
// element-count columns. A table writer follows the recipe of
// spans_table.cc: specs (this file, attribute_family.h,
// resource_scope_columns.h, promotion.h), rows through the column writers,
// then each writer's MoveColumnsTo in spec order and WriteTableFile.
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

namespace strata::storage {

// ------------------------------------------------------------ file level

// Key-value metadata every table file carries.
inline constexpr char kFormatKey[] = "strata.format";
inline constexpr char kFormatValue[] = "1";
inline constexpr char kSchemaKey[] = "strata.schema";
inline constexpr char kBatchIdKey[] = "strata.batch_id";

// How table files are written. The defaults are the format pages' values,
// chosen by measurement on realistic traffic (tests/storage/
// table_roundtrip_test.cc, SpansWriterThroughputAndSize): zstd 6 against 3
// saves 3.5% of spans.parquet for about 13% more writer instructions; a
// 16 KiB dictionary limit turns unique ids and times PLAIN after a few
// thousand values instead of carrying a dictionary that is larger than the
// values (41.0 against 48.3 bytes per span at zstd 3).
struct TableOptions {
  int zstd_level = 6;
  // A table may give the columns where a higher level pays off a level of
  // their own, at most zstd_level (spans.parquet does; ColumnZstdLevel),
  // and compress the others at this level: ids, durations and already
  // dictionary-coded columns come out the same size (or smaller) at level 1
  // for a fraction of the CPU (spans-parquet.md, "File-level rules").
  int fast_zstd_level = 1;
  // Row groups are cut when their buffered (uncompressed) bytes reach this.
  size_t row_group_bytes = 128 << 20;
  // Data pages end when their uncompressed estimate reaches this (logs and
  // metrics; spans.parquet uses spans_page_bytes).
  size_t page_bytes = 1 << 20;
  // spans.parquet's page size: small, so reading one trace's rows
  // decompresses little (spans-parquet.md, "File-level rules").
  size_t spans_page_bytes = 16 << 10;
  // A page also ends after this many rows.
  size_t page_rows = 20000;
  // spans.parquet's row cap, lower still: a lookup skips the levels of the
  // rows before its trace in every sparse column's page (spans-parquet.md,
  // "File-level rules"). The smaller of this and page_rows applies.
  size_t spans_page_rows = 8192;
  // A column chunk's dictionary falls back to PLAIN past this many bytes.
  size_t dictionary_bytes_limit = 16 << 10;
  // The footer's created_by ("strata <version>").
  std::string created_by = "strata " STRATA_VERSION;
};

// The parquet::WriterOptions for a table: zstd, sizes from `options`,
// sorting columns as given, and the three strata.* key-value entries.
parquet::WriterOptions MakeWriterOptions(const TableOptions& options, std::string_view schema,
                                         std::string_view batch_id,
                                         std::vector<parquet::SortingColumn> sorting_columns);

// A column compressed at its own zstd level instead of fast_zstd_level.
struct ColumnZstdLevel {
  std::string_view column;
  int level = 1;
};

// Per-column writer options (parquet::WriterOptions::column_options):
// `base` everywhere, then options.fast_zstd_level for every column except
// those in `zstd_levels`, which get their level capped at
// options.zstd_level (so a writer that lowers zstd_level, like a merge's
// runs, lowers them all), and no dictionary (PLAIN from the first value)
// for `plain_columns`, whose values never repeat. Every name must be in
// `specs`.
std::vector<parquet::ColumnWriterOptions> PerColumnOptions(
    const std::vector<parquet::ColumnSpec>& specs, const TableOptions& options,
    const parquet::ColumnWriterOptions& base, std::span<const ColumnZstdLevel> zstd_levels,
    std::span<const std::string_view> plain_columns);

// Writes one whole file: specs, then every column (columns[i] matches
// specs[i]) in one batch. Returns the file bytes.
[[nodiscard]] absl::StatusOr<std::string> WriteTableFile(
    const std::vector<parquet::ColumnSpec>& specs, std::span<const parquet::ColumnVector> columns,
    const parquet::WriterOptions& options);

// The index of column `name` in `columns`, or DataLoss naming `file_name`.
[[nodiscard]] absl::StatusOr<int> FindColumn(const std::vector<parquet::ColumnSpec>& columns,
                                             std::string_view name, std::string_view file_name);

// Checks a parsed footer against what strata writes: the schema (converted
// to ColumnSpecs) equals `expected` exactly (names, types, logical types,
// repetition, list shape, order), and the key-value metadata has
// strata.format = 1, strata.schema = `schema`, strata.batch_id = `batch_id`.
// DataLoss names `file_name` and the first difference.
[[nodiscard]] absl::Status CheckTableSchema(const parquet::FileMetaData& metadata,
                                            const std::vector<parquet::ColumnSpec>& columns,
                                            const std::vector<parquet::ColumnSpec>& expected,
                                            std::string_view schema, std::string_view batch_id,
                                            std::string_view file_name);

// What boot checks without reading pages: the footer parses (FileReader::
// Open reads only the footer), CheckTableSchema, and num_rows ==
// expected_file_rows.
[[nodiscard]] absl::Status CheckTableFooter(parquet::RandomAccessSource* source,
                                            const std::vector<parquet::ColumnSpec>& expected,
                                            std::string_view schema, std::string_view batch_id,
                                            uint64_t expected_file_rows,
                                            std::string_view file_name);

// A Parquet reader's error as a table reader returns it: InvalidArgument,
// Unimplemented and OutOfRange become DataLoss naming `file_name` (the bytes
// are not a file strata wrote); DataLoss and the source's I/O errors pass
// through unchanged.
[[nodiscard]] absl::Status AsDataLoss(const absl::Status& status, std::string_view file_name);

// Opens a table file and runs CheckTableSchema. Reader errors are turned
// into DataLoss (a file strata wrote that its own reader rejects is corrupt).
[[nodiscard]] absl::StatusOr<std::unique_ptr<parquet::FileReader>> OpenTable(
    parquet::RandomAccessSource* source, const std::vector<parquet::ColumnSpec>& expected,
    std::string_view schema, std::string_view batch_id, std::string_view file_name);

// Every column of the file, whole, in schema order.
[[nodiscard]] absl::StatusOr<std::vector<parquet::ColumnVector>> ReadAllColumns(
    parquet::FileReader& reader, std::string_view file_name);

// Every column of file rows [row_begin, row_end), in schema order, reading
// only the pages that cover them. DataLoss naming the file when the range
// is empty or passes the file's rows, and for bytes the reader rejects.
[[nodiscard]] absl::StatusOr<std::vector<parquet::ColumnVector>> ReadTableRows(
    parquet::FileReader& reader, std::string_view file_name, uint64_t row_begin, uint64_t row_end);

// Moves a BYTE_ARRAY / FIXED_LEN_BYTE_ARRAY column's bytes into a buffer the
// batch retains and returns a view of them: value i is
// view.substr(offsets[i], offsets[i + 1] - offsets[i]) and stays valid as
// long as the batch. The column's `bytes` is left empty.
std::string_view RetainBytes(parquet::ColumnVector* column, otlp::BatchBase* batch);

// Value slot `i` of a byte column whose bytes RetainBytes returned as `all`.
inline std::string_view BytesAt(const parquet::ColumnVector& column, std::string_view all,
                                size_t i) {
  return all.substr(column.offsets[i], column.offsets[i + 1] - column.offsets[i]);
}

// DataLoss "<file>: column '<column>' row <row>: <what>".
absl::Status ColumnDataLoss(std::string_view file_name, std::string_view column, size_t row,
                            std::string_view what);

// Element appenders for optional element columns whose validity is always
// kept (one byte per element), so nothing has to be back-filled.
inline void PushNull(parquet::ColumnVector& c) {
  c.validity.push_back(0);
  switch (c.type) {
    case parquet::PhysicalType::kBoolean:
      c.bools.push_back(0);
      break;
    case parquet::PhysicalType::kInt32:
      c.int32s.push_back(0);
      break;
    case parquet::PhysicalType::kInt64:
      c.int64s.push_back(0);
      break;
    case parquet::PhysicalType::kDouble:
      c.doubles.push_back(0);
      break;
    default:
      c.offsets.push_back(c.bytes.size());
  }
}
inline void PushBytes(parquet::ColumnVector& c, std::string_view v) {
  c.bytes.append(v.data(), v.size());
  c.offsets.push_back(c.bytes.size());
}

// ------------------------------------------------------------ row kind

// `row_kind` (u8, required).
void AppendRowKindSpec(std::vector<parquet::ColumnSpec>* specs);

// A list<u32> column of element counts, e.g. `event_attr_count`: one count
// per event saying how many attributes of the row's concatenated
// `event_attr_*` family belong to it.
void AppendElementCountSpec(std::string_view name, std::vector<parquet::ColumnSpec>* specs);

// The u32 elements of row `row` of a list<u32> column (INT32 elements
// reinterpreted as unsigned).
std::span<const uint32_t> ListU32(const parquet::ColumnVector& column, size_t row);

// ------------------------------------------------------------ the writers' base

// What the spans, logs and metrics table writers share: the Parquet
// FileWriter they stream row groups into, the meta.json member they build
// (rows, file_rows, event_time, promotion_misses), the first failure they
// record, and finishing the file. Single owner, like the writers.
class TableFileWriter {
 public:
  TableFileWriter(const TableFileWriter&) = delete;
  TableFileWriter& operator=(const TableFileWriter&) = delete;

 protected:
  // `table` ("spans", "logs", "metrics") names the writer in errors.
  TableFileWriter(std::string_view table, std::unique_ptr<parquet::FileWriter> file);
  ~TableFileWriter();

  // Records the first failure: Internal "<table> table writer: <what>".
  void Fail(std::string_view what);
  // The recorded failure, or, when `rows` more rows would not fit one file
  // (2^32 - 1 rows), that failure, recorded.
  [[nodiscard]] absl::Status CheckRoom(uint64_t rows);
  // Widens the meta's event time to hold `range`.
  void ExtendEventTime(NanosRange range);
  // Writes the footer and returns the meta, its event time [0, 0] when no
  // row had one (meta.json wants a range whenever the file has rows).
  // Internal when a failure was recorded or no row was written
  // (meta().file_rows is 0); the Parquet writer's errors.
  [[nodiscard]] absl::StatusOr<SignalMeta> FinishFile();

  parquet::FileWriter& file() { return *file_; }
  SignalMeta& meta() { return meta_; }
  const SignalMeta& meta() const { return meta_; }

 private:
  const std::string_view table_;
  std::unique_ptr<parquet::FileWriter> file_;
  SignalMeta meta_;  // file_rows: rows handed to file_
  absl::Status failure_;
};

}  // namespace strata::storage
