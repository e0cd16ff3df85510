#pragma once

// FileReader reads the Parquet files FileWriter writes (required and
// optional BOOLEAN, INT32, INT64, DOUBLE, BYTE_ARRAY and FIXED_LEN_BYTE_ARRAY
// columns, flat or as three-level LISTs of them; v1 data pages, PLAIN and dictionary
// encodings, UNCOMPRESSED or ZSTD), for verification and for reading a few
// rows of a batch by row number.
//
// Open checks the magic at both ends, the footer length, and the whole
// footer: flat schema, every row group has one chunk per column whose type,
// path, codec, value count and byte range (and OffsetIndex range, if any)
// are consistent and inside the data section. Read then touches only the
// chosen columns and only the pages that hold the requested rows:
//
//  * A chunk with an OffsetIndex (the page index FileWriter writes): the
//    index is read on first use (all chunks' indexes with one read when they
//    lie together), validated (pages inside the chunk, in order, not
//    overlapping, sizes within the limits, first rows starting at 0,
//    increasing and inside the row group) and kept. Each page holding wanted
//    rows is then read with one read of header and body; the dictionary
//    page, when a page needs it, likewise. For a read of a few rows, the
//    pages of all chosen columns are read first with one read per run of
//    nearby pages (Prefetch), since a page of a small column is often a
//    few hundred bytes from the next column's.
//  * Without one, page headers are read one by one from the chunk start and
//    a page outside the range is skipped unread, except that a LIST page's
//    row count is known only from its repetition levels, so a LIST page
//    before the range is read and its levels walked.
//
// A FileLayout (the parsed footer and every chunk's OffsetIndex, see
// below) can be kept and handed to later readers of the same file, which
// then read no footer and no index: trace lookups keep one per batch. In
// the same way a DictionaryPageCache (ReaderOptions::dictionary_cache)
// keeps decompressed dictionary pages, so later reads of indexed chunks
// decompress only their data pages.
//
// Within a page only the wanted rows are decoded: levels and dictionary
// indices before them are skipped run by run, PLAIN values by offset (byte
// arrays by their lengths), and decoding stops after the last wanted row.
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
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
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

// A chunk's dictionary page, decompressed but not decoded, as a
// DictionaryPageCache keeps it. Immutable once built.
struct DictionaryPage {
  DictionaryPageHeader header;
  std::string body;
  // BYTE_ARRAY dictionaries: where each entry (its 4-byte length) starts
  // in body, found when the page was read. Empty for other types.
  std::vector<uint32_t> starts;
};

// Decompressed dictionary pages of one file, kept across the readers of
// that file, so a reader that needs a chunk's dictionary neither reads nor
// decompresses it again (trace lookups keep one per batch). Keyed by chunk:
// row group * columns + column. Implementations bound their own memory and
// are safe for concurrent use. A cached page is trusted as read: the reader
// checks its header and values as it checks a page it read itself.
class DictionaryPageCache {
 public:
  virtual ~DictionaryPageCache() = default;
  // The page of `chunk`, or null.
  virtual std::shared_ptr<const DictionaryPage> FindDictionary(size_t chunk) const = 0;
  // Offers the page of `chunk` just read; the cache keeps it or not.
  virtual void OfferDictionary(size_t chunk, std::shared_ptr<const DictionaryPage> page) const = 0;
};

struct ReaderOptions {
  // Used in error messages.
  std::string file_name = "<parquet>";
  // Optional; consulted and filled by reads of chunks with an OffsetIndex.
  // It must hold pages of this very file only, and outlive the reader.
  const DictionaryPageCache* dictionary_cache = nullptr;
  size_t max_footer_bytes = 64 << 20;
  // Largest page (compressed or not) and largest page header accepted.
  size_t max_page_bytes = 256 << 20;
  size_t max_page_header_bytes = 1 << 20;
  // Largest num_values in one page or dictionary; FileWriter writes at most
  // 1 << 22 rows per page.
  int64_t max_values_per_page = 1 << 22;
};

// What FileReader parses before it reads a page: the footer, validated,
// the leaf columns, and (in a layout from FileReader::ReadLayout) every
// chunk's OffsetIndex, validated. Immutable once built, so readers of the
// same file on any thread may share one.
struct FileLayout {
  uint64_t file_size = 0;
  FileMetaData metadata;
  std::vector<ColumnSpec> columns;
  // The file row of each row group's first row.
  std::vector<int64_t> row_group_first_row;
  // Per chunk (row group * columns + column): its OffsetIndex, set for
  // every chunk that has one. Empty in a reader's own layout, which loads
  // indexes lazily instead.
  std::vector<std::optional<OffsetIndex>> offset_indexes;

  // Bytes held, approximately: the structures and the strings and vectors
  // they own, without allocator overhead.
  size_t MemoryBytes() const;
};

class FileReader {
 public:
  [[nodiscard]] static absl::StatusOr<std::unique_ptr<FileReader>> Open(RandomAccessSource* source,
                                                                        ReaderOptions options = {});
  // A reader of the file `layout` was read from (ReadLayout), without
  // reading its footer or indexes again. DataLoss if the source's size is
  // not the one the layout was read from.
  [[nodiscard]] static absl::StatusOr<std::unique_ptr<FileReader>> Open(
      RandomAccessSource* source, std::shared_ptr<const FileLayout> layout,
      ReaderOptions options = {});
  // Opens `source` and reads and validates every chunk's OffsetIndex: the
  // layout to hand to later Open()s. Open()'s errors, and DataLoss for a
  // bad OffsetIndex.
  [[nodiscard]] static absl::StatusOr<std::shared_ptr<const FileLayout>> ReadLayout(
      RandomAccessSource* source, ReaderOptions options = {});
  ~FileReader();
  FileReader(const FileReader&) = delete;
  FileReader& operator=(const FileReader&) = delete;

  const FileMetaData& metadata() const { return layout_->metadata; }
  const std::vector<ColumnSpec>& columns() const { return layout_->columns; }
  int64_t num_rows() const { return layout_->metadata.num_rows; }
  const std::shared_ptr<const FileLayout>& layout() const { return layout_; }
  // Index of the column named `name`, or -1.
  int FindColumn(std::string_view name) const;

  // While on, each column keeps the last data page it decompressed from an
  // indexed chunk (header and body) and the dictionaries it read, so reads
  // of rows that share a page read and decompress it once: for reading
  // scattered rows one small range at a time. Holds one page per column
  // and the dictionaries until turned off (the default), which frees them.
  void KeepLastPages(bool keep);

  // Rows [row_begin, row_end) of the chosen columns (indices into columns()),
  // one vector per chosen column, in the order given.
  [[nodiscard]] absl::StatusOr<std::vector<ColumnVector>> Read(std::span<const int> columns,
                                                               int64_t row_begin, int64_t row_end);
  [[nodiscard]] absl::StatusOr<ColumnVector> ReadColumn(int column, int64_t row_begin,
                                                        int64_t row_end);

  // Whether a row of chunk (row_group, column), a BYTE_ARRAY column flat or
  // a list's elements, may hold `value`: false when the chunk's
  // min_value/max_value statistics exclude it, or when every data page is
  // dictionary-encoded (read from the OffsetIndex and each page's header)
  // and the dictionary lacks it. Otherwise a chunk of at most
  // `max_read_bytes` compressed and kMayHoldReadRowsMax rows (one without
  // a dictionary, or whose dictionary fell back to PLAIN, or without an
  // OffsetIndex) is read and answers exactly; a larger one answers true. InvalidArgument for a bad
  // index or another physical type; the reads' errors.
  static constexpr int64_t kMayHoldReadRowsMax = 1 << 21;  // rows of a chunk read whole
  [[nodiscard]] absl::StatusOr<bool> ChunkMayHold(int row_group, int column, std::string_view value,
                                                  int64_t max_read_bytes);

 private:
  // A chunk's dictionary page, decompressed and checked but not decoded:
  // values are copied out as pages name them.
  struct Dictionary {
    size_t count = 0;
    std::shared_ptr<const DictionaryPage> page;  // owns `body`
    std::string_view body;                       // PLAIN values
    std::vector<uint8_t> bools;                  // BOOLEAN dictionaries only, decoded
  };

  FileReader(RandomAccessSource* source, ReaderOptions options);
  [[nodiscard]] absl::Status Init();
  [[nodiscard]] absl::Status ValidateRowGroups(int64_t data_end, FileLayout* layout);
  // Appends rows [begin, end) (relative to the row group) of one chunk.
  [[nodiscard]] absl::Status ReadChunk(int row_group, int column, int64_t begin, int64_t end,
                                       ColumnVector* out);
  // Without an OffsetIndex: walks the page headers from the chunk start.
  [[nodiscard]] absl::Status ReadPageHeader(int64_t offset, int64_t chunk_end, PageHeader* header,
                                            int64_t* header_size);
  // With one: reads just the pages that hold [begin, end).
  [[nodiscard]] absl::Status ReadChunkIndexed(int row_group, int column, const OffsetIndex& index,
                                              int64_t begin, int64_t end, ColumnVector* out);
  // The chunk's OffsetIndex, read, parsed and validated on first use.
  [[nodiscard]] absl::StatusOr<const OffsetIndex*> LoadOffsetIndex(int row_group, int column);
  // Before a Read() of at most kPrefetchRowsMax rows: reads the pages of
  // the indexed chunks that hold the rows, and their dictionary pages, with
  // one read per run of ranges less than kCoalesceGapBytes apart (runs of
  // dictionary pages alone are left to be read when needed), at most
  // kPrefetchBytesMax in all. Reads of those ranges then cost no I/O.
  [[nodiscard]] absl::Status Prefetch(std::span<const int> columns, int64_t row_begin,
                                      int64_t row_end);
  static constexpr int64_t kPrefetchRowsMax = 4096;
  static constexpr int64_t kCoalesceGapBytes = 8 << 10;
  static constexpr int64_t kPrefetchBytesMax = 1 << 20;
  // The `size` bytes at `offset`: from what Prefetch() read, or read into
  // *buffer. *bytes views them.
  [[nodiscard]] absl::Status ReadBytes(int64_t offset, int64_t size, std::string* buffer,
                                       std::string_view* bytes);
  // Reads a page of exactly `size` bytes (header and body) with one read
  // into *buffer (or from what Prefetch() read); *compressed_body points
  // into it.
  [[nodiscard]] absl::Status ReadWholePage(int64_t offset, int64_t size, std::string* buffer,
                                           PageHeader* header, std::string_view* compressed_body);
  // The chunk's dictionary: from options_.dictionary_cache when it holds
  // the page, else read, decompressed and offered to it.
  [[nodiscard]] absl::Status ReadIndexedDictionary(int row_group, int column,
                                                   Dictionary* dictionary);
  [[nodiscard]] absl::Status CheckPageSizes(const PageHeader& header, int64_t offset,
                                            int64_t room) const;
  // Reads and decompresses a page body; the result is in *body.
  [[nodiscard]] absl::Status ReadPageBody(int64_t offset, const PageHeader& header,
                                          CompressionCodec codec, std::string* body);
  [[nodiscard]] absl::Status Decompress(std::string_view compressed, const PageHeader& header,
                                        CompressionCodec codec, int64_t offset, std::string* body);
  [[nodiscard]] absl::Status DecodeDictionary(const ColumnSpec& spec,
                                              std::shared_ptr<const DictionaryPage> page,
                                              int64_t offset, Dictionary* dictionary);
  // `header` and `body` (decompressed) as a DictionaryPage, with the
  // entries of a BYTE_ARRAY dictionary located; DataLoss if the header is
  // not a dictionary page's or an entry runs past the body.
  [[nodiscard]] absl::StatusOr<std::shared_ptr<const DictionaryPage>> MakeDictionaryPage(
      const ColumnSpec& spec, const PageHeader& header, std::string body, int64_t offset) const;
  // Appends rows [skip, skip + take) of a decompressed data page to *out,
  // decoding only those rows' levels and values: the levels and values
  // before them are skipped run by run (PLAIN fixed-width values by offset),
  // and nothing after them is touched.
  [[nodiscard]] absl::Status DecodeRows(const ColumnSpec& spec, const PageHeader& header,
                                        std::string_view body, int64_t offset,
                                        Dictionary* dictionary, int64_t skip, int64_t take,
                                        ColumnVector* out);
  [[nodiscard]] absl::Status DecodeFlatRows(const ColumnSpec& spec, const PageHeader& header,
                                            std::string_view body, int64_t offset,
                                            Dictionary* dictionary, int64_t skip, int64_t take,
                                            ColumnVector* out);
  [[nodiscard]] absl::Status DecodeListRows(const ColumnSpec& spec, const PageHeader& header,
                                            std::string_view body, int64_t offset,
                                            Dictionary* dictionary, int64_t skip, int64_t take,
                                            ColumnVector* out);
  [[nodiscard]] absl::Status CheckListPage(const DataPageHeader& data, int64_t offset) const;
  // A LIST page's row count, from its repetition levels.
  [[nodiscard]] absl::Status CountListRows(const ColumnSpec& spec, const PageHeader& header,
                                           std::string_view body, int64_t offset, int64_t* rows);
  // Appends dictionary[index] for each index (DataLoss for an index past
  // the dictionary or an entry past its page).
  [[nodiscard]] absl::Status Gather(const ColumnSpec& spec, Dictionary* dictionary,
                                    const std::vector<uint32_t>& indices, int64_t offset,
                                    ColumnVector* out);
  // Skips `skip` present values, then decodes `present` values of a data
  // page (the body after the levels) into *values.
  [[nodiscard]] absl::Status DecodeValues(const ColumnSpec& spec, const DataPageHeader& data,
                                          std::string_view body, int64_t offset,
                                          Dictionary* dictionary, size_t skip, size_t present,
                                          ColumnVector* values);
  absl::Status Corrupt(int64_t offset, std::string_view what) const;

  RandomAccessSource* const source_;
  const ReaderOptions options_;
  // Set by Init() or given to Open(); never null after Open().
  std::shared_ptr<const FileLayout> layout_;
  void* zstd_context_ = nullptr;  // ZSTD_DCtx*
  std::string scratch_;
  std::string compressed_;
  std::string page_bytes_;
  // A decompressed page of an indexed chunk; kept so each page does not
  // allocate and zero a buffer of its own.
  std::string page_body_;
  // KeepLastPages: per column, the chunk and page number of its kept page
  // (SIZE_MAX: none), the page's header and decompressed body; per chunk,
  // its dictionary page once read.
  struct KeptPage {
    size_t chunk = SIZE_MAX;
    size_t page = SIZE_MAX;
    PageHeader header;
    std::string body;
  };
  bool keep_pages_ = false;
  std::vector<KeptPage> kept_pages_;
  std::vector<std::shared_ptr<const DictionaryPage>> kept_dictionaries_;
  // What Prefetch() read for the current Read(): (file offset, bytes), in
  // file order.
  std::vector<std::pair<int64_t, std::string>> prefetched_;
  // Per chunk (row group * columns + column), its parsed OffsetIndex once
  // read; empty until the first indexed read. Unused when layout_ holds
  // the indexes.
  std::vector<std::optional<OffsetIndex>> offset_indexes_;
  // The region holding every chunk's OffsetIndex, when read in one piece.
  std::string offset_index_bytes_;
  int64_t offset_index_bytes_at_ = 0;
};

}  // namespace strata::parquet
