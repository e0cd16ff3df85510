#pragma once

// The subset of parquet.thrift (apache/parquet-format) that strata writes and
// reads back: FileMetaData with its schema, row groups, column chunks and
// statistics; page headers for v1 data pages and dictionary pages; sorting
// columns and key/value metadata; the page index's OffsetIndex.
// Serialize* appends the Thrift compact encoding; Parse* decodes it,
// skipping fields this subset does not model (ColumnIndex, bloom filters,
// encryption, size statistics, ...).
//
// Enum fields keep whatever integer the file holds (the enums have a fixed
// underlying type), so a newer file with an unknown codec or encoding parses
// and is rejected where it matters, by the reader, with a precise message.
//
// Thread-safety: plain values.
//
// Errors: Parse* return InvalidArgument (from the Thrift reader, naming the
// byte offset) for malformed input or a missing required field.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"

namespace strata::parquet {

// The four bytes that open and close every Parquet file.
inline constexpr std::string_view kMagic = "PAR1";

enum class PhysicalType : int32_t {
  kBoolean = 0,
  kInt32 = 1,
  kInt64 = 2,
  kInt96 = 3,
  kFloat = 4,
  kDouble = 5,
  kByteArray = 6,
  kFixedLenByteArray = 7,
};

enum class Repetition : int32_t { kRequired = 0, kOptional = 1, kRepeated = 2 };

enum class ConvertedType : int32_t {
  kUtf8 = 0,
  kMap = 1,
  kMapKeyValue = 2,
  kList = 3,
  kTimestampMillis = 9,
  kTimestampMicros = 10,
  kUint8 = 11,
  kUint16 = 12,
  kUint32 = 13,
  kUint64 = 14,
  kInt8 = 15,
  kInt16 = 16,
  kInt32 = 17,
  kInt64 = 18,
};

enum class Encoding : int32_t {
  kPlain = 0,
  kPlainDictionary = 2,
  kRle = 3,
  kBitPacked = 4,
  kDeltaBinaryPacked = 5,
  kDeltaLengthByteArray = 6,
  kDeltaByteArray = 7,
  kRleDictionary = 8,
  kByteStreamSplit = 9,
};

enum class CompressionCodec : int32_t {
  kUncompressed = 0,
  kSnappy = 1,
  kGzip = 2,
  kZstd = 6,
};

enum class PageType : int32_t {
  kDataPage = 0,
  kIndexPage = 1,
  kDictionaryPage = 2,
  kDataPageV2 = 3,
};

enum class TimeUnit : int16_t { kMillis = 1, kMicros = 2, kNanos = 3 };

// The LogicalType union, for the members strata uses; any other member parses
// as kOther (its field id kept in other_id). kList annotates the outer group
// of a three-level LIST, never a leaf.
struct LogicalType {
  enum class Kind { kNone, kString, kTimestamp, kInteger, kList, kOther };
  Kind kind = Kind::kNone;
  // kTimestamp
  bool is_adjusted_to_utc = false;
  TimeUnit unit = TimeUnit::kNanos;
  // kInteger
  int8_t bit_width = 0;
  bool is_signed = true;
  // kOther
  int16_t other_id = 0;

  bool operator==(const LogicalType&) const = default;
};

struct SchemaElement {
  std::optional<PhysicalType> type;
  std::optional<int32_t> type_length;
  std::optional<Repetition> repetition_type;
  std::string name;
  std::optional<int32_t> num_children;
  std::optional<ConvertedType> converted_type;
  std::optional<int32_t> scale;
  std::optional<int32_t> precision;
  std::optional<int32_t> field_id;
  LogicalType logical_type;

  bool operator==(const SchemaElement&) const = default;
};

// Column chunk (or page) statistics. Values are PLAIN-encoded without the
// length prefix of byte arrays.
struct Statistics {
  std::optional<std::string> max;  // deprecated signed-order field
  std::optional<std::string> min;  // deprecated signed-order field
  std::optional<int64_t> null_count;
  std::optional<int64_t> distinct_count;
  std::optional<std::string> max_value;
  std::optional<std::string> min_value;
  std::optional<bool> is_max_value_exact;
  std::optional<bool> is_min_value_exact;

  bool operator==(const Statistics&) const = default;
};

struct KeyValue {
  std::string key;
  std::optional<std::string> value;

  bool operator==(const KeyValue&) const = default;
};

struct SortingColumn {
  int32_t column_idx = 0;
  bool descending = false;
  bool nulls_first = false;

  bool operator==(const SortingColumn&) const = default;
};

struct ColumnMetaData {
  PhysicalType type = PhysicalType::kBoolean;
  std::vector<Encoding> encodings;
  std::vector<std::string> path_in_schema;
  CompressionCodec codec = CompressionCodec::kUncompressed;
  int64_t num_values = 0;
  int64_t total_uncompressed_size = 0;
  int64_t total_compressed_size = 0;
  std::vector<KeyValue> key_value_metadata;
  int64_t data_page_offset = 0;
  std::optional<int64_t> index_page_offset;
  std::optional<int64_t> dictionary_page_offset;
  std::optional<Statistics> statistics;

  bool operator==(const ColumnMetaData&) const = default;
};

struct ColumnChunk {
  std::optional<std::string> file_path;
  int64_t file_offset = 0;
  std::optional<ColumnMetaData> meta_data;
  // Where the chunk's OffsetIndex is (both set or neither).
  std::optional<int64_t> offset_index_offset;
  std::optional<int32_t> offset_index_length;

  bool operator==(const ColumnChunk&) const = default;
};

struct RowGroup {
  std::vector<ColumnChunk> columns;
  int64_t total_byte_size = 0;
  int64_t num_rows = 0;
  std::vector<SortingColumn> sorting_columns;
  std::optional<int64_t> file_offset;
  std::optional<int64_t> total_compressed_size;
  std::optional<int16_t> ordinal;

  bool operator==(const RowGroup&) const = default;
};

struct FileMetaData {
  int32_t version = 1;
  // Depth-first: element 0 is the root (num_children set, no type).
  std::vector<SchemaElement> schema;
  int64_t num_rows = 0;
  std::vector<RowGroup> row_groups;
  std::vector<KeyValue> key_value_metadata;
  std::optional<std::string> created_by;
  // One entry per leaf column when present: the ColumnOrder union member id
  // (1 = TYPE_ORDER, the only one defined).
  std::vector<int16_t> column_orders;

  bool operator==(const FileMetaData&) const = default;
};

struct DataPageHeader {
  int32_t num_values = 0;
  Encoding encoding = Encoding::kPlain;
  Encoding definition_level_encoding = Encoding::kRle;
  Encoding repetition_level_encoding = Encoding::kRle;
  std::optional<Statistics> statistics;

  bool operator==(const DataPageHeader&) const = default;
};

struct DictionaryPageHeader {
  int32_t num_values = 0;
  Encoding encoding = Encoding::kPlain;
  std::optional<bool> is_sorted;

  bool operator==(const DictionaryPageHeader&) const = default;
};

struct PageHeader {
  PageType type = PageType::kDataPage;
  int32_t uncompressed_page_size = 0;
  int32_t compressed_page_size = 0;
  std::optional<int32_t> crc;
  std::optional<DataPageHeader> data_page_header;
  std::optional<DictionaryPageHeader> dictionary_page_header;
  // DataPageHeaderV2 is skipped when parsing; this records that it was there.
  bool has_data_page_header_v2 = false;

  bool operator==(const PageHeader&) const = default;
};

// The page index's OffsetIndex: where each data page of a column chunk is
// (dictionary pages are not listed). offset is the page header's file
// offset, compressed_page_size covers header and body, first_row_index is
// the page's first row relative to the row group.
struct PageLocation {
  int64_t offset = 0;
  int32_t compressed_page_size = 0;
  int64_t first_row_index = 0;

  bool operator==(const PageLocation&) const = default;
};

struct OffsetIndex {
  std::vector<PageLocation> page_locations;

  bool operator==(const OffsetIndex&) const = default;
};

void SerializeFileMetaData(const FileMetaData& metadata, std::string* out);
void SerializePageHeader(const PageHeader& header, std::string* out);
void SerializeOffsetIndex(const OffsetIndex& index, std::string* out);

[[nodiscard]] absl::StatusOr<FileMetaData> ParseFileMetaData(std::string_view bytes);
// Parses one header from the start of `bytes`; *consumed receives its size.
[[nodiscard]] absl::StatusOr<PageHeader> ParsePageHeader(std::string_view bytes, size_t* consumed);
// Parses an OffsetIndex that fills `bytes` exactly (unencoded_byte_array_data_bytes
// is skipped).
[[nodiscard]] absl::StatusOr<OffsetIndex> ParseOffsetIndex(std::string_view bytes);

}  // namespace strata::parquet
