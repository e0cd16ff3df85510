#pragma once

// FileWriter writes one Parquet file for a flat schema of required and
// optional columns: "PAR1", row groups of column chunks (see ColumnWriter for
// pages, dictionaries and statistics), then one page-index OffsetIndex per
// column chunk (row group by row group, column by column; the footer's
// ColumnChunk.offset_index_offset/length point at them), then the Thrift
// compact FileMetaData, its 4-byte length and "PAR1" again. No ColumnIndex
// is written. Bytes go to a ByteSink in file order;
// nothing is ever rewritten, so the sink may be a file, a socket or a string.
//
// Usage: Open, WriteBatch (or WriteChunk, for rows streamed over lasting
// element arrays) any number of times, Close. A row group ends when it
// holds row_group_max_rows rows or its buffered bytes reach
// row_group_max_bytes (checked every kRowsPerSlice rows of a call, so a
// caller cutting its rows into calls of whole slices gets the same row
// groups as one call), so memory stays near
// row_group_max_bytes plus one open page per column and the dictionaries.
//
// The caller declares sorting_columns (it knows how it sorted the rows; the
// writer does not check) and key/value metadata; both land in the footer.
//
// Thread-safety: single owner.
//
// Errors: InvalidArgument for a schema or batch that does not fit the
// supported subset (named by column); the sink's error for a failed write.
// After any error the writer is failed: later calls return that error and
// the sink holds an incomplete file.

#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "parquet/column_vector.h"
#include "parquet/column_writer.h"
#include "parquet/metadata.h"

namespace strata::parquet {

// Appends to a std::string the caller owns.
class StringSink : public ByteSink {
 public:
  explicit StringSink(std::string* out) : out_(out) {}
  absl::Status Append(std::string_view bytes) override {
    out_->append(bytes.data(), bytes.size());
    return absl::OkStatus();
  }

 private:
  std::string* out_;
};

// Forwards each write to a callback (e.g. a FileSystem file's Append).
class CallbackSink : public ByteSink {
 public:
  explicit CallbackSink(std::function<absl::Status(std::string_view)> append)
      : append_(std::move(append)) {}
  absl::Status Append(std::string_view bytes) override { return append_(bytes); }

 private:
  std::function<absl::Status(std::string_view)> append_;
};

struct WriterOptions {
  // UNCOMPRESSED or ZSTD.
  CompressionCodec codec = CompressionCodec::kZstd;
  int zstd_level = 3;
  ColumnWriterOptions column;
  // Per column (schema order), options replacing `column` (a column's own
  // zstd level, PLAIN from the start for values that never repeat); empty:
  // `column` for every column.
  std::vector<ColumnWriterOptions> column_options;
  int64_t row_group_max_rows = 1 << 20;
  size_t row_group_max_bytes = 128 << 20;
  std::vector<SortingColumn> sorting_columns;
  std::vector<KeyValue> key_value_metadata;
  std::string created_by = "strata";
};

class FileWriter {
 public:
  // Rows are cut into slices of this many rows between row-group size checks.
  static constexpr size_t kRowsPerSlice = 4096;

  // Writes the leading magic. sink must outlive the writer.
  [[nodiscard]] static absl::StatusOr<std::unique_ptr<FileWriter>> Open(
      std::vector<ColumnSpec> columns, WriterOptions options, ByteSink* sink);

  // Appends rows: columns[i] holds column i's values; all the same length.
  [[nodiscard]] absl::Status WriteBatch(std::span<const ColumnVector> columns);
  // Appends rows as WriteBatch does, from vectors that live on across calls:
  // each call writes every row the vectors hold; between calls a caller may
  // replace the rows but must only add to a LIST column's elements, never
  // change them. Elements an earlier WriteChunk of the same stream checked
  // are not checked again, so a file streamed in chunks of rows over one set
  // of element arrays (rows sorted differently from their elements) pays
  // for each element's check once. `first` starts a stream: every element
  // is checked (vectors at the addresses of an earlier stream's are new).
  [[nodiscard]] absl::Status WriteChunk(std::span<const ColumnVector* const> columns, bool first);

  // Flushes the last row group and writes the footer. Call once.
  [[nodiscard]] absl::Status Close();

  int64_t rows_written() const { return rows_written_; }
  // Bytes handed to the sink so far (the file size once closed).
  int64_t bytes_written() const { return offset_; }
  // The footer as written; complete after Close.
  const FileMetaData& metadata() const { return metadata_; }

 private:
  FileWriter(std::vector<ColumnSpec> columns, WriterOptions options, ByteSink* sink);
  // Checks a batch (WriteBatch) or a chunk (WriteChunk, `chunk` true: see
  // checked_elements_).
  [[nodiscard]] absl::Status ValidateBatch(std::span<const ColumnVector* const> columns,
                                           bool chunk);
  [[nodiscard]] absl::Status WriteColumns(std::span<const ColumnVector* const> columns, bool chunk);
  [[nodiscard]] absl::Status FlushRowGroup();
  // Writes every chunk's OffsetIndex and points the footer at them.
  [[nodiscard]] absl::Status WriteOffsetIndexes();
  [[nodiscard]] absl::Status Write(std::string_view bytes);
  absl::Status Fail(absl::Status status);

  // Constant after construction.
  const std::vector<ColumnSpec> columns_;
  const WriterOptions options_;
  ByteSink* const sink_;

  PageCompressor compressor_;
  std::vector<std::unique_ptr<ColumnWriter>> writers_;
  FileMetaData metadata_;
  // One per column chunk flushed, in file order, until Close writes them.
  std::vector<OffsetIndex> offset_indexes_;
  int64_t offset_ = 0;
  int64_t rows_written_ = 0;
  int64_t row_group_rows_ = 0;
  bool closed_ = false;
  absl::Status failure_;
  // Per column: the vector the last WriteChunk checked and how many of its
  // elements; cleared by WriteBatch (a new vector may reuse an address).
  struct CheckedElements {
    const ColumnVector* vector = nullptr;
    uint64_t elements = 0;
  };
  std::vector<CheckedElements> checked_elements_;
};

}  // namespace strata::parquet
