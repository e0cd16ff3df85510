#pragma once

// FileReader reads the Parquet files FileWriter writes (required and
// optional BOOLEAN, INT32, INT64, DOUBLE, BYTE_ARRAY and FIXED_LEN_BYTE_ARRAY
// columns, flat or as three-level LISTs of them; v1 data pages, PLAIN and dictionary
// encodings, UNCOMPRESSED or ZSTD), for verification and for reading a few
// rows of a batch by row number.
//
// Open checks the magic at both ends, the footer length, and the whole
// footer: flat schema, every row group has one chunk per column whose type,
// path, codec, value count and byte range are consistent and inside the data
// section. Read then touches only the chosen columns and only the pages that
// hold the requested rows: page headers are read one by one, and a page
// outside the range is skipped without being read or decompressed. A LIST
// page's row count is known only from its repetition levels, so a LIST page
// before the range is read and its levels decoded, but not its values.
//
// Thread-safety: single owner (it holds a zstd context and scratch buffers).
//
// Errors: DataLoss for a corrupt file, naming the file, the byte offset and
// what is wrong; InvalidArgument for a bad column index or row range;
// Unimplemented for valid Parquet this reader does not handle (nested
// schemas, data page v2, other codecs or encodings); the source's error when
// a read fails. Corrupt input never crashes it and never makes it allocate
// more than the limits in ReaderOptions.

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "parquet/column_vector.h"
#include "parquet/metadata.h"

namespace strata::parquet {

// Random-access bytes of one file.
class RandomAccessSource {
 public:
  virtual ~RandomAccessSource() = default;
  virtual uint64_t size() const = 0;
  // Replaces *out with exactly `length` bytes at `offset` (the reader only
  // asks for ranges inside size()).
  [[nodiscard]] virtual absl::Status ReadAt(uint64_t offset, size_t length, std::string* out) = 0;
};

// A file held in memory; the bytes must outlive the source.
class StringSource : public RandomAccessSource {
 public:
  explicit StringSource(std::string_view bytes) : bytes_(bytes) {}
  uint64_t size() const override { return bytes_.size(); }
  absl::Status ReadAt(uint64_t offset, size_t length, std::string* out) override;

 private:
  std::string_view bytes_;
};

struct ReaderOptions {
  // Used in error messages.
  std::string file_name = "<parquet>";
  size_t max_footer_bytes = 64 << 20;
  // Largest page (compressed or not) and largest page header accepted.
  size_t max_page_bytes = 256 << 20;
  size_t max_page_header_bytes = 1 << 20;
  // Largest num_values in one page or dictionary; FileWriter writes at most
  // 1 << 22 rows per page.
  int64_t max_values_per_page = 1 << 22;
};

class FileReader {
 public:
  [[nodiscard]] static absl::StatusOr<std::unique_ptr<FileReader>> Open(RandomAccessSource* source,
                                                                        ReaderOptions options = {});
  ~FileReader();
  FileReader(const FileReader&) = delete;
  FileReader& operator=(const FileReader&) = delete;

  const FileMetaData& metadata() const { return metadata_; }
  const std::vector<ColumnSpec>& columns() const { return columns_; }
  int64_t num_rows() const { return metadata_.num_rows; }
  // Index of the column named `name`, or -1.
  int FindColumn(std::string_view name) const;

  // Rows [row_begin, row_end) of the chosen columns (indices into columns()),
  // one vector per chosen column, in the order given.
  [[nodiscard]] absl::StatusOr<std::vector<ColumnVector>> Read(std::span<const int> columns,
                                                               int64_t row_begin, int64_t row_end);
  [[nodiscard]] absl::StatusOr<ColumnVector> ReadColumn(int column, int64_t row_begin,
                                                        int64_t row_end);

 private:
  FileReader(RandomAccessSource* source, ReaderOptions options);
  [[nodiscard]] absl::Status Init();
  [[nodiscard]] absl::Status ValidateRowGroups(int64_t data_end);
  // Appends rows [begin, end) (relative to the row group) of one chunk.
  [[nodiscard]] absl::Status ReadChunk(int row_group, int column, int64_t begin, int64_t end,
                                       ColumnVector* out);
  [[nodiscard]] absl::Status ReadPageHeader(int64_t offset, int64_t chunk_end, PageHeader* header,
                                            int64_t* header_size);
  // Reads and decompresses a page body; the result is in *body.
  [[nodiscard]] absl::Status ReadPageBody(int64_t offset, const PageHeader& header,
                                          CompressionCodec codec, std::string* body);
  [[nodiscard]] absl::Status DecodeDictionary(const ColumnSpec& spec, const PageHeader& header,
                                              std::string_view body, int64_t offset,
                                              ColumnVector* dictionary);
  [[nodiscard]] absl::Status DecodeDataPage(const ColumnSpec& spec, const PageHeader& header,
                                            std::string_view body, int64_t offset,
                                            const ColumnVector* dictionary, ColumnVector* page);
  // Decodes `present` values (after the levels) of a data page into *values.
  [[nodiscard]] absl::Status DecodeValues(const ColumnSpec& spec, const DataPageHeader& data,
                                          std::string_view body, int64_t offset,
                                          const ColumnVector* dictionary, size_t present,
                                          ColumnVector* values);
  // A LIST column's data page: sets *page_rows from the repetition levels
  // and, unless all of those rows are before skip_rows, decodes the page
  // into *page (a LIST vector). rows_left bounds the row count.
  [[nodiscard]] absl::Status DecodeListPage(const ColumnSpec& spec, const PageHeader& header,
                                            std::string_view body, int64_t offset,
                                            const ColumnVector* dictionary, int64_t rows_left,
                                            int64_t skip_rows, ColumnVector* page,
                                            int64_t* page_rows);
  absl::Status Corrupt(int64_t offset, std::string_view what) const;

  RandomAccessSource* const source_;
  const ReaderOptions options_;
  FileMetaData metadata_;
  std::vector<ColumnSpec> columns_;
  std::vector<int64_t> row_group_first_row_;
  void* zstd_context_ = nullptr;  // ZSTD_DCtx*
  std::string scratch_;
  std::string compressed_;
};

}  // namespace strata::parquet
