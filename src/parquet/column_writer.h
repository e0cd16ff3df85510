#pragma once

// ColumnWriter encodes one flat column's values into the pages of one column
// chunk at a time; FileWriter owns one per column and asks each to flush its
// chunk when a row group ends.
//
// Pages are Parquet v1 data pages: [definition levels][values], the levels
// RLE-encoded with a 4-byte length (optional columns only), the values either
// RLE_DICTIONARY (1-byte bit width + RLE/bit-packed indices into a PLAIN
// dictionary page written first in the chunk) or PLAIN. A page is cut when its
// estimated uncompressed size reaches data_page_bytes or it holds
// data_page_max_rows rows. Each finished page is compressed at once (zstd or
// not at all), so a chunk's memory is its compressed pages plus one open page
// plus the dictionary.
//
// A column whose options disable the dictionary (ids and times that never
// repeat) is PLAIN from its first value.
//
// Flat rows, and runs of empty or null lists, are added a run at a time with
// the limits checked after a run's last row only; a run is cut short so that
// no check after an earlier row could have fired (an upper bound of the
// estimate stays below the limit), so pages end exactly where a check after
// every row would end them. Runs of lists with elements are added in one
// loop that makes the checks of every row itself (a few instructions once
// inlined; the dictionary may grow by every element, so a bound would cut
// runs short) and ends the run where a check would flush the page.
//
// Dictionary fallback: when the dictionary's PLAIN size would exceed
// dictionary_bytes_limit, the open page is flushed as a dictionary page and
// every later value of the chunk is written PLAIN; the writer then stays
// PLAIN for the rest of the file (a column that overflowed once is high
// cardinality, and rebuilding the dictionary every row group would cost
// CPU for nothing). BOOLEAN is always PLAIN.
//
// Statistics per chunk: null_count, and min_value/max_value in the column's
// sort order (signed for INT32/INT64, unsigned for INTEGER(_, false) and for
// byte arrays, IEEE with NaN excluded for DOUBLE, false < true for BOOLEAN).
// Byte-array bounds longer than statistics_max_bytes are truncated to a
// shorter lower/upper bound and marked inexact.
//
// LIST columns (ColumnSpec::list): a page is [repetition levels][definition
// levels][values], both level streams RLE with a 4-byte length; a row is one
// level entry per element (repetition level 0 for its first, 1 after), or a
// single entry for an empty list (definition level 1 if the list is
// optional, else 0) or a null list (definition level 0). A null element has
// definition level max - 1. Pages are cut only between rows, so every page
// starts with repetition level 0 and a row's list never spans pages; a
// page's num_values and the chunk's num_values count level entries. A
// dictionary overflow in the middle of a row rewinds the row, flushes the
// rows before it and writes the row again PLAIN. null_count counts level
// entries below the maximum definition level (null and empty lists, null
// elements); bounds cover the present elements.
//
// Thread-safety: single owner (the file writer's thread).
// Errors: FlushChunk returns the sink's error, or Internal if zstd fails.

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "common/arena.h"
#include "parquet/column_vector.h"
#include "parquet/dictionary_index.h"
#include "parquet/encoding.h"
#include "parquet/metadata.h"
#include "parquet/pod_vector.h"

namespace strata::parquet {

// Where a Parquet file's bytes go. FileWriter calls Append in file order.
class ByteSink {
 public:
  virtual ~ByteSink() = default;
  [[nodiscard]] virtual absl::Status Append(std::string_view bytes) = 0;
};

// Compresses pages; one per file writer, shared by its column writers. The
// zstd context is the calling thread's (one per thread, kept for the
// thread's life and shared by every compressor on it), so neither a column
// nor a file allocates one.
class PageCompressor {
 public:
  PageCompressor(CompressionCodec codec, int zstd_level);
  PageCompressor(const PageCompressor&) = delete;
  PageCompressor& operator=(const PageCompressor&) = delete;

  CompressionCodec codec() const { return codec_; }
  // Replaces *out with the compressed form of input (a copy when
  // UNCOMPRESSED), at `zstd_level` when given, else the compressor's level.
  [[nodiscard]] absl::Status Compress(std::string_view input, std::string* out,
                                      std::optional<int> zstd_level = std::nullopt);

 private:
  CompressionCodec codec_;
  int zstd_level_;
};

struct ColumnWriterOptions {
  size_t data_page_bytes = 1 << 20;
  size_t data_page_max_rows = 20000;
  bool dictionary_enabled = true;
  size_t dictionary_bytes_limit = 1 << 20;
  size_t statistics_max_bytes = 64;
  // This column's zstd level; unset: the file's (the compressor's) level.
  std::optional<int> zstd_level;
};

class ColumnWriter {
 public:
  ColumnWriter(ColumnSpec spec, const ColumnWriterOptions& options, PageCompressor* compressor);

  // Most level entries (values) in one page: FileWriter rejects longer lists
  // and a page is cut before a row that would pass it.
  static constexpr size_t kMaxPageValues = 1 << 22;

  // Starts a batch: every AppendRows until the next BeginBatch passes slices
  // of one unchanged vector, so what the writer remembers about a vector's
  // list rows (below) stays valid. FileWriter calls it once per WriteBatch.
  void BeginBatch() { ForgetMemos(); }

  // Appends rows [begin, end) of values. The caller (FileWriter) has checked
  // that values matches the spec (type, kind, length, no nulls when
  // required, list ranges inside the elements).
  [[nodiscard]] absl::Status AppendRows(const ColumnVector& values, size_t begin, size_t end);

  // Bytes this chunk holds so far: compressed pages, the open page's estimate
  // and the dictionary.
  size_t buffered_bytes() const;

  // Ends the chunk: flushes the open page, writes the dictionary page (if
  // any) and the data pages to sink starting at file_offset, and returns the
  // chunk's metadata, and, when offset_index is given, where each data page
  // went (for the page index). The writer is then ready for the next chunk.
  [[nodiscard]] absl::StatusOr<ColumnChunk> FlushChunk(int64_t file_offset, ByteSink& sink,
                                                       OffsetIndex* offset_index = nullptr);

  const ColumnSpec& spec() const { return spec_; }
  // True once the dictionary overflowed (see the class comment).
  bool dictionary_fallen_back() const { return !dictionary_allowed_; }

 private:
  bool UsesDictionary() const { return dictionary_active_; }
  // Dictionary lookups for a run of value slots, one class per value type
  // (defined in the .cc): ByteLookup for BYTE_ARRAY / FIXED_LEN_BYTE_ARRAY,
  // FixedLookup<T> for INT32 / INT64 / DOUBLE values T. A lookup holds the
  // vector's arrays and the writer's last-value cache for the run.
  class ByteLookup;
  template <typename T>
  class FixedLookup;
  // Returns f(lookup) with the lookup for this column's type, one switch per
  // run keeping the type test out of the per-value path.
  template <typename F>
  size_t WithLookup(const ColumnVector& values, F&& f);
  // Adds the present values of slots [begin, end) (a slot whose validity
  // byte is 0 is skipped) to the dictionary and their indices to the open
  // page. Returns end, or the first slot whose value would overflow the
  // dictionary: it and the slots after it were not added, and the caller
  // retries after FallBackToPlain.
  template <typename Lookup>
  size_t AddDictionarySlots(const ColumnVector& values, size_t begin, size_t end, Lookup& lookup);
  size_t AddDictionaryRun(const ColumnVector& values, size_t begin, size_t end);
  void AddPlainValue(const ColumnVector& values, size_t row);
  void UpdateStatistics(const ColumnVector& values, size_t row);
  [[nodiscard]] absl::Status FallBackToPlain();
  // LIST columns: how many rows from `begin` are empty or null lists that
  // can be added with the page limits checked only after the last (0 when
  // the row at begin is not such a list).
  size_t SafeEmptyListRun(const ColumnVector& values, size_t begin, size_t end) const;
  // Adds rows [begin, end), each an empty or a null list.
  void AddEmptyLists(const ColumnVector& values, size_t begin, size_t end);
  // LIST columns: adds rows from `begin` (the row at begin a list of at
  // least one element that passed the kMaxPageValues check) while they are
  // such lists, up to end, checking the page limits before and after each
  // row in the loop, and stops at the row before which a check would flush
  // the page or after the row after which one would. Also stops after a row
  // whose dictionary overflowed (the page before it was flushed and the row
  // written PLAIN). *added receives the rows added (at least 1).
  [[nodiscard]] absl::Status AddListRun(const ColumnVector& values, size_t begin, size_t end,
                                        size_t* added);
  // The loop of AddListRun: each row's levels, and its elements
  // [first, first + count) through add_values(first, count), which returns
  // false for a dictionary overflow. Returns the row it stopped at; when
  // that row overflowed (*overflowed), its levels, indices and nulls are
  // rewound.
  template <typename AddValues>
  size_t AddListRows(const ColumnVector& values, size_t begin, size_t end, AddValues&& add_values,
                     bool* overflowed);
  // Remembers a list row of elements [first, first + count) just added from
  // the given marks into the open page (see ListMemo).
  void RememberListRow(uint64_t first, uint64_t count, size_t levels_begin, size_t indices_begin,
                       int64_t nulls_begin);
  // Flat columns, a run at a time: how many rows from `begin` (at most
  // end - begin, at least 1) can be added with the page limits checked
  // only after the last of them, cutting pages exactly where a check after
  // every row would (see AppendRows).
  size_t SafeFlatRun(const ColumnVector& values, size_t begin, size_t end) const;
  // Adds flat rows [begin, end) with no page check; stops early after a row
  // whose dictionary overflowed (the page before it was flushed and the row
  // written PLAIN). *added receives the rows added.
  [[nodiscard]] absl::Status AddFlatRun(const ColumnVector& values, size_t begin, size_t end,
                                        size_t* added);
  // The PLAIN values of flat rows [begin, end), and their statistics.
  void AddPlainRun(const ColumnVector& values, size_t begin, size_t end);
  // The definition levels, null count and row counts of flat rows
  // [begin, end) whose values were added.
  void AddFlatLevels(const ColumnVector& values, size_t begin, size_t end);
  // Starts remembering list rows of `values` if its rows share elements.
  void PrepareListMemo(const ColumnVector& values);
  size_t OpenPageBytes() const {
    size_t bytes = (repetition_levels_.size() + definition_levels_.size()) / 8;
    if (dictionary_active_) {
      const int width = BitWidthFor(dictionary_size_ == 0 ? 0 : dictionary_size_ - 1);
      bytes += 1 + indices_.size() * static_cast<size_t>(width) / 8;
    } else {
      bytes += plain_values_.size() + plain_bools_.size() / 8;
    }
    return bytes;
  }
  [[nodiscard]] absl::Status FlushPage();
  Statistics BuildStatistics() const;
  void ResetChunk();
  void ForgetMemos();

  // Constant after construction.
  const ColumnSpec spec_;
  const ColumnWriterOptions options_;
  PageCompressor* const compressor_;
  const bool unsigned_order_;

  // Whether a new chunk starts with a dictionary (false after a fallback).
  bool dictionary_allowed_;

  // The chunk being built.
  bool dictionary_active_ = false;
  std::string dictionary_plain_;  // the dictionary page body
  uint32_t dictionary_size_ = 0;
  Arena dictionary_arena_;  // keys of dictionary_bytes_
  ByteDictionaryIndex dictionary_bytes_;
  FixedDictionaryIndex dictionary_fixed_;
  // The byte value most recently looked up, and its index: consecutive equal
  // values (a resource's strings on every span of a sorted run) skip the
  // hash lookup. last_bytes_ points into dictionary_arena_.
  std::string_view last_bytes_;
  uint32_t last_bytes_index_ = 0;
  bool has_last_bytes_ = false;
  // List rows remembered while the dictionary is active, for a vector whose
  // rows share elements (a resource's attributes on every span of that
  // resource, in trace order): a row whose range was added before repeats
  // its definition levels and indices without lookups. Only vectors whose
  // rows name more than twice as many elements as they hold are remembered
  // (rows of unique elements would pay for nothing), by the first element
  // of the range, at most kMaxMemoLevels level entries in all.
  static constexpr size_t kMaxMemoLevels = 1 << 20;
  struct ListMemo {
    uint64_t count = 0;
    uint32_t levels_at = 0;  // into memo_definition_levels_
    uint32_t indices_at = 0;  // into memo_indices_
    uint32_t indices_count = 0;
    uint32_t nulls = 0;
  };
  const ColumnVector* memo_values_ = nullptr;  // the vector PrepareListMemo saw
  bool memo_enabled_ = false;
  std::vector<int32_t> memo_by_begin_;  // element -> index into memos_, or -1
  std::vector<ListMemo> memos_;
  PodVector<uint8_t> memo_definition_levels_;
  PodVector<uint32_t> memo_indices_;
  std::string pages_;  // finished pages: header + (compressed) body
  // One per finished data page; offsets relative to the start of pages_.
  std::vector<PageLocation> page_locations_;
  int64_t pages_uncompressed_bytes_ = 0;
  int64_t chunk_rows_ = 0;
  int64_t chunk_values_ = 0;  // level entries (== rows for flat columns)
  int64_t null_count_ = 0;
  bool wrote_dictionary_page_data_ = false;
  bool wrote_plain_page_ = false;

  // Statistics (bounds over present values).
  bool has_bounds_ = false;
  int64_t min_int_ = 0, max_int_ = 0;
  double min_double_ = 0, max_double_ = 0;
  std::string min_bytes_, max_bytes_;

  // The open page.
  PodVector<uint8_t> repetition_levels_;
  PodVector<uint8_t> definition_levels_;
  PodVector<uint32_t> indices_;
  std::vector<uint8_t> plain_bools_;
  std::string plain_values_;
  size_t page_rows_ = 0;
  size_t page_values_ = 0;

  // Scratch buffers reused across pages.
  std::string page_body_;
  std::string compressed_;
  std::string header_;
};

}  // namespace strata::parquet
