#include "parquet/file_reader.h"

#include <zstd.h>

#include <algorithm>
#include <cstring>
#include <utility>

#include "common/mutex.h"
#include "common/status_macros.h"
#include "fmt/format.h"
#include "parquet/encoding.h"

namespace strata::parquet {
namespace {

// zstd decompression contexts are large (about 100 KiB of tables) and cost
// an allocation and initialisation to create, which a reader that reads a
// few rows (a trace lookup) would pay every time: readers borrow one from
// this pool and give it back. At most kPooledContexts idle contexts are
// kept; safe for concurrent use.
class ZstdContextPool {
 public:
  ZSTD_DCtx* Acquire() ABSL_LOCKS_EXCLUDED(mu_) {
    {
      MutexLock lock(&mu_);
      if (!idle_.empty()) {
        ZSTD_DCtx* context = idle_.back();
        idle_.pop_back();
        return context;
      }
    }
    return ZSTD_createDCtx();
  }
  void Release(ZSTD_DCtx* context) ABSL_LOCKS_EXCLUDED(mu_) {
    {
      MutexLock lock(&mu_);
      if (idle_.size() < kPooledContexts) {
        idle_.push_back(context);
        return;
      }
    }
    ZSTD_freeDCtx(context);
  }

 private:
  static constexpr size_t kPooledContexts = 8;
  Mutex mu_;
  std::vector<ZSTD_DCtx*> idle_ ABSL_GUARDED_BY(mu_);
};

ZstdContextPool& ContextPool() {
  static ZstdContextPool* const pool = new ZstdContextPool();  // never destroyed
  return *pool;
}

size_t FixedWidth(const ColumnSpec& spec) {
  switch (spec.type) {
    case PhysicalType::kInt32:
      return 4;
    case PhysicalType::kInt64:
    case PhysicalType::kDouble:
      return 8;
    default:
      return 0;
  }
}

// Appends `count` PLAIN values (all present) from the front of *data.
absl::Status DecodePlainInto(const ColumnSpec& spec, std::string_view* data, size_t count,
                             ColumnVector* out) {
  switch (spec.type) {
    case PhysicalType::kBoolean:
      return DecodePlainBooleans(data, count, &out->bools);
    case PhysicalType::kInt32:
    case PhysicalType::kInt64:
    case PhysicalType::kDouble: {
      const size_t width = FixedWidth(spec);
      if (count > data->size() / width) {
        return absl::InvalidArgumentError(fmt::format("PLAIN values: need {} bytes, only {} remain",
                                                      count * width, data->size()));
      }
      void* target;
      if (spec.type == PhysicalType::kInt32) {
        out->int32s.resize(out->int32s.size() + count);
        target = out->int32s.data() + out->int32s.size() - count;
      } else if (spec.type == PhysicalType::kInt64) {
        out->int64s.resize(out->int64s.size() + count);
        target = out->int64s.data() + out->int64s.size() - count;
      } else {
        out->doubles.resize(out->doubles.size() + count);
        target = out->doubles.data() + out->doubles.size() - count;
      }
      return DecodePlainFixed(data, count, width, target);
    }
    case PhysicalType::kByteArray:
      return DecodePlainByteArrays(data, count, &out->offsets, &out->bytes);
    case PhysicalType::kFixedLenByteArray:
      return DecodePlainFixedLenByteArrays(data, count, static_cast<size_t>(spec.type_length),
                                           &out->offsets, &out->bytes);
    default:
      return absl::UnimplementedError("unsupported physical type");
  }
}

// Skips `count` PLAIN values (not BOOLEAN) at the front of *data.
absl::Status SkipPlain(const ColumnSpec& spec, std::string_view* data, size_t count) {
  if (count == 0) return absl::OkStatus();
  size_t width = FixedWidth(spec);
  if (spec.type == PhysicalType::kFixedLenByteArray) width = static_cast<size_t>(spec.type_length);
  if (spec.type == PhysicalType::kByteArray) {
    for (size_t i = 0; i < count; ++i) {
      if (data->size() < 4) return absl::InvalidArgumentError("PLAIN byte array length truncated");
      uint32_t length;
      std::memcpy(&length, data->data(), 4);
      if (length > data->size() - 4) {
        return absl::InvalidArgumentError("PLAIN byte array truncated");
      }
      data->remove_prefix(4 + static_cast<size_t>(length));
    }
    return absl::OkStatus();
  }
  if (width == 0) return absl::UnimplementedError("unsupported physical type");
  if (count > data->size() / width) {
    return absl::InvalidArgumentError(
        fmt::format("skipping {} PLAIN values: only {} bytes remain", count, data->size()));
  }
  data->remove_prefix(count * width);
  return absl::OkStatus();
}

}  // namespace

size_t FileLayout::MemoryBytes() const {
  const auto text = [](const std::string& s) { return s.capacity() + 1; };
  const auto optional_text = [&](const std::optional<std::string>& s) {
    return s ? text(*s) : size_t{0};
  };
  const auto key_values = [&](const std::vector<KeyValue>& kvs) {
    size_t bytes = kvs.capacity() * sizeof(KeyValue);
    for (const KeyValue& kv : kvs) bytes += text(kv.key) + optional_text(kv.value);
    return bytes;
  };
  size_t bytes = sizeof(FileLayout) + optional_text(metadata.created_by) +
                 key_values(metadata.key_value_metadata) +
                 metadata.column_orders.capacity() * sizeof(int16_t) +
                 row_group_first_row.capacity() * sizeof(int64_t) +
                 offset_indexes.capacity() * sizeof(std::optional<OffsetIndex>);
  bytes += metadata.schema.capacity() * sizeof(SchemaElement);
  for (const SchemaElement& element : metadata.schema) bytes += text(element.name);
  bytes += columns.capacity() * sizeof(ColumnSpec);
  for (const ColumnSpec& column : columns) bytes += text(column.name);
  bytes += metadata.row_groups.capacity() * sizeof(RowGroup);
  for (const RowGroup& group : metadata.row_groups) {
    bytes += group.columns.capacity() * sizeof(ColumnChunk) +
             group.sorting_columns.capacity() * sizeof(SortingColumn);
    for (const ColumnChunk& chunk : group.columns) {
      bytes += optional_text(chunk.file_path);
      if (!chunk.meta_data) continue;
      const ColumnMetaData& meta = *chunk.meta_data;
      bytes += meta.encodings.capacity() * sizeof(Encoding) +
               meta.path_in_schema.capacity() * sizeof(std::string) +
               key_values(meta.key_value_metadata);
      for (const std::string& part : meta.path_in_schema) bytes += text(part);
      if (meta.statistics) {
        bytes += optional_text(meta.statistics->max) + optional_text(meta.statistics->min) +
                 optional_text(meta.statistics->max_value) +
                 optional_text(meta.statistics->min_value);
      }
    }
  }
  for (const std::optional<OffsetIndex>& index : offset_indexes) {
    if (index) bytes += index->page_locations.capacity() * sizeof(PageLocation);
  }
  return bytes;
}

absl::Status StringSource::ReadAt(uint64_t offset, size_t length, std::string* out) {
  if (offset > bytes_.size() || length > bytes_.size() - offset) {
    return absl::OutOfRangeError(fmt::format("read of {} bytes at {} past the end ({} bytes)",
                                             length, offset, bytes_.size()));
  }
  out->assign(bytes_.data() + offset, length);
  return absl::OkStatus();
}

FileReader::FileReader(RandomAccessSource* source, ReaderOptions options)
    : source_(source), options_(std::move(options)) {
  zstd_context_ = ContextPool().Acquire();
}

FileReader::~FileReader() {
  if (zstd_context_ != nullptr) ContextPool().Release(static_cast<ZSTD_DCtx*>(zstd_context_));
}

absl::Status FileReader::Corrupt(int64_t offset, std::string_view what) const {
  return absl::DataLossError(fmt::format("{}: offset {}: {}", options_.file_name, offset, what));
}

absl::StatusOr<std::unique_ptr<FileReader>> FileReader::Open(RandomAccessSource* source,
                                                             ReaderOptions options) {
  std::unique_ptr<FileReader> reader(new FileReader(source, std::move(options)));
  if (reader->zstd_context_ == nullptr) return absl::ResourceExhaustedError("ZSTD_createDCtx");
  STRATA_RETURN_IF_ERROR(reader->Init());
  return reader;
}

absl::StatusOr<std::unique_ptr<FileReader>> FileReader::Open(
    RandomAccessSource* source, std::shared_ptr<const FileLayout> layout, ReaderOptions options) {
  if (layout == nullptr) return absl::InvalidArgumentError("FileReader::Open: no layout");
  std::unique_ptr<FileReader> reader(new FileReader(source, std::move(options)));
  if (reader->zstd_context_ == nullptr) return absl::ResourceExhaustedError("ZSTD_createDCtx");
  if (source->size() != layout->file_size) {
    return reader->Corrupt(0, fmt::format("file of {} bytes, its layout was read from {} bytes",
                                          source->size(), layout->file_size));
  }
  reader->layout_ = std::move(layout);
  return reader;
}

absl::StatusOr<std::shared_ptr<const FileLayout>> FileReader::ReadLayout(RandomAccessSource* source,
                                                                         ReaderOptions options) {
  STRATA_ASSIGN_OR_RETURN(std::unique_ptr<FileReader> reader, Open(source, std::move(options)));
  const FileLayout& own = *reader->layout_;
  for (size_t g = 0; g < own.metadata.row_groups.size(); ++g) {
    for (size_t c = 0; c < own.columns.size(); ++c) {
      if (!own.metadata.row_groups[g].columns[c].offset_index_offset) continue;
      STRATA_RETURN_IF_ERROR(
          reader->LoadOffsetIndex(static_cast<int>(g), static_cast<int>(c)).status());
    }
  }
  auto layout = std::make_shared<FileLayout>(own);
  layout->offset_indexes = std::move(reader->offset_indexes_);
  layout->offset_indexes.resize(own.metadata.row_groups.size() * own.columns.size());
  return std::shared_ptr<const FileLayout>(std::move(layout));
}

absl::Status FileReader::Init() {
  const uint64_t size = source_->size();
  if (size < 12) return Corrupt(0, fmt::format("file of {} bytes is too small for Parquet", size));
  STRATA_RETURN_IF_ERROR(source_->ReadAt(0, 4, &scratch_));
  if (scratch_ != kMagic) return Corrupt(0, "missing leading PAR1 magic");
  STRATA_RETURN_IF_ERROR(source_->ReadAt(size - 8, 8, &scratch_));
  if (scratch_.substr(4) != kMagic) {
    return Corrupt(static_cast<int64_t>(size - 4), "missing trailing PAR1 magic");
  }
  uint32_t footer_length;
  std::memcpy(&footer_length, scratch_.data(), 4);
  if (footer_length > size - 12 || footer_length > options_.max_footer_bytes) {
    return Corrupt(static_cast<int64_t>(size - 8),
                   fmt::format("footer length {} does not fit in a file of {} bytes (limit {})",
                               footer_length, size, options_.max_footer_bytes));
  }
  const int64_t footer_start = static_cast<int64_t>(size - 8 - footer_length);
  STRATA_RETURN_IF_ERROR(source_->ReadAt(footer_start, footer_length, &scratch_));
  absl::StatusOr<FileMetaData> metadata = ParseFileMetaData(scratch_);
  if (!metadata.ok()) {
    return Corrupt(footer_start,
                   fmt::format("footer: {}", std::string(metadata.status().message())));
  }
  auto layout = std::make_shared<FileLayout>();
  layout->file_size = size;
  layout->metadata = *std::move(metadata);
  absl::StatusOr<std::vector<ColumnSpec>> columns = FromSchemaElements(layout->metadata.schema);
  if (!columns.ok()) {
    return absl::Status(columns.status().code(),
                        fmt::format("{}: footer at offset {}: schema: {}", options_.file_name,
                                    footer_start, std::string(columns.status().message())));
  }
  layout->columns = *std::move(columns);
  STRATA_RETURN_IF_ERROR(ValidateRowGroups(footer_start, layout.get()));
  layout_ = std::move(layout);
  return absl::OkStatus();
}

absl::Status FileReader::ValidateRowGroups(int64_t data_end, FileLayout* layout) {
  const FileMetaData& metadata = layout->metadata;
  const std::vector<ColumnSpec>& columns = layout->columns;
  if (metadata.num_rows < 0) return Corrupt(data_end, "negative num_rows");
  int64_t total = 0;
  layout->row_group_first_row.clear();
  for (size_t g = 0; g < metadata.row_groups.size(); ++g) {
    const RowGroup& group = metadata.row_groups[g];
    auto error = [&](std::string_view what) {
      return Corrupt(data_end, fmt::format("footer: row group {}: {}", g, what));
    };
    if (group.num_rows < 0 || group.num_rows > INT64_MAX - total) return error("bad num_rows");
    if (group.columns.size() != columns.size()) {
      return error(
          fmt::format("{} column chunks for {} columns", group.columns.size(), columns.size()));
    }
    for (size_t c = 0; c < columns.size(); ++c) {
      const ColumnChunk& chunk = group.columns[c];
      const ColumnSpec& spec = columns[c];
      auto chunk_error = [&](std::string_view what) {
        return error(fmt::format("column '{}': {}", spec.name, what));
      };
      if (chunk.file_path) return chunk_error("column chunk in another file");
      if (!chunk.meta_data) return chunk_error("no ColumnMetaData");
      const ColumnMetaData& meta = *chunk.meta_data;
      if (meta.type != spec.type) return chunk_error("type differs from the schema");
      const std::vector<std::string> path =
          spec.list ? std::vector<std::string>{spec.name, "list", "element"}
                    : std::vector<std::string>{spec.name};
      if (meta.path_in_schema != path) {
        return chunk_error("path_in_schema differs from the schema");
      }
      if (meta.codec != CompressionCodec::kUncompressed && meta.codec != CompressionCodec::kZstd) {
        return absl::UnimplementedError(fmt::format("{}: column '{}': codec {} is not supported",
                                                    options_.file_name, spec.name,
                                                    static_cast<int>(meta.codec)));
      }
      if (spec.list ? meta.num_values < group.num_rows : meta.num_values != group.num_rows) {
        return chunk_error(
            fmt::format("{} values in a row group of {} rows", meta.num_values, group.num_rows));
      }
      int64_t start = meta.data_page_offset;
      if (meta.dictionary_page_offset) {
        if (*meta.dictionary_page_offset >= meta.data_page_offset) {
          return chunk_error("dictionary page does not precede the data pages");
        }
        start = *meta.dictionary_page_offset;
      }
      if (start < 4 || start >= data_end || meta.total_compressed_size < 0 ||
          meta.total_compressed_size > data_end - start ||
          meta.data_page_offset - start >= meta.total_compressed_size) {
        return chunk_error(fmt::format("pages at [{}, +{}) outside the data section [4, {})", start,
                                       meta.total_compressed_size, data_end));
      }
      if (chunk.offset_index_offset.has_value() != chunk.offset_index_length.has_value()) {
        return chunk_error("offset_index_offset and offset_index_length not set together");
      }
      if (chunk.offset_index_offset &&
          (*chunk.offset_index_offset < 4 || *chunk.offset_index_offset >= data_end ||
           *chunk.offset_index_length <= 0 ||
           static_cast<size_t>(*chunk.offset_index_length) > options_.max_footer_bytes ||
           *chunk.offset_index_length > data_end - *chunk.offset_index_offset)) {
        return chunk_error(fmt::format("offset index at [{}, +{}) outside the data section [4, {})",
                                       *chunk.offset_index_offset, *chunk.offset_index_length,
                                       data_end));
      }
    }
    layout->row_group_first_row.push_back(total);
    total += group.num_rows;
  }
  if (total != metadata.num_rows) {
    return Corrupt(data_end, fmt::format("row groups hold {} rows, num_rows says {}", total,
                                         metadata.num_rows));
  }
  return absl::OkStatus();
}

int FileReader::FindColumn(std::string_view name) const {
  for (size_t i = 0; i < layout_->columns.size(); ++i) {
    if (layout_->columns[i].name == name) return static_cast<int>(i);
  }
  return -1;
}

absl::StatusOr<std::vector<ColumnVector>> FileReader::Read(std::span<const int> columns,
                                                           int64_t row_begin, int64_t row_end) {
  if (row_begin < 0 || row_begin > row_end || row_end > num_rows()) {
    return absl::InvalidArgumentError(
        fmt::format("row range [{}, {}) outside [0, {})", row_begin, row_end, num_rows()));
  }
  // A few rows: read their pages with as few reads as possible first
  // (not while pages are kept: the pages kept would be read again).
  prefetched_.clear();
  if (!keep_pages_ && row_end - row_begin <= kPrefetchRowsMax) {
    STRATA_RETURN_IF_ERROR(Prefetch(columns, row_begin, row_end));
  }
  std::vector<ColumnVector> result;
  result.reserve(columns.size());
  for (int column : columns) {
    if (column < 0 || static_cast<size_t>(column) >= layout_->columns.size()) {
      return absl::InvalidArgumentError(fmt::format("no column {}", column));
    }
    const ColumnSpec& spec = layout_->columns[column];
    ColumnVector& out =
        result.emplace_back(spec.list ? ColumnVector::List(spec.type) : ColumnVector(spec.type));
    out.Reserve(static_cast<size_t>(std::min<int64_t>(row_end - row_begin, 1 << 20)));
    for (size_t g = 0; g < layout_->metadata.row_groups.size(); ++g) {
      const int64_t first = layout_->row_group_first_row[g];
      const int64_t last = first + layout_->metadata.row_groups[g].num_rows;
      if (last <= row_begin || first >= row_end) continue;
      STRATA_RETURN_IF_ERROR(ReadChunk(static_cast<int>(g), column,
                                       std::max(row_begin, first) - first,
                                       std::min(row_end, last) - first, &out));
    }
    if (spec.optional() && out.validity.empty()) out.validity.assign(out.element_count(), 1);
    if (spec.list_optional() && out.list_validity.empty()) out.list_validity.assign(out.size(), 1);
  }
  prefetched_.clear();
  return result;
}

absl::StatusOr<ColumnVector> FileReader::ReadColumn(int column, int64_t row_begin,
                                                    int64_t row_end) {
  const int columns[] = {column};
  STRATA_ASSIGN_OR_RETURN(std::vector<ColumnVector> result, Read(columns, row_begin, row_end));
  return std::move(result[0]);
}

absl::StatusOr<bool> FileReader::ChunkMayHold(int row_group, int column, std::string_view value,
                                              int64_t max_read_bytes) {
  if (row_group < 0 || static_cast<size_t>(row_group) >= layout_->metadata.row_groups.size() ||
      column < 0 || static_cast<size_t>(column) >= layout_->columns.size()) {
    return absl::InvalidArgumentError(
        fmt::format("{}: no chunk ({}, {})", options_.file_name, row_group, column));
  }
  const ColumnSpec& spec = layout_->columns[static_cast<size_t>(column)];
  if (spec.type != PhysicalType::kByteArray) {
    return absl::InvalidArgumentError(
        fmt::format("{}: column '{}' is not BYTE_ARRAY", options_.file_name, spec.name));
  }
  const ColumnChunk& chunk = layout_->metadata.row_groups[static_cast<size_t>(row_group)]
                                 .columns[static_cast<size_t>(column)];
  const ColumnMetaData& meta = *chunk.meta_data;
  // Unsigned byte order, as Parquet orders BYTE_ARRAY statistics.
  auto before = [](std::string_view a, std::string_view b) {
    return std::lexicographical_compare(a.begin(), a.end(), b.begin(), b.end(), [](char x, char y) {
      return static_cast<unsigned char>(x) < static_cast<unsigned char>(y);
    });
  };
  if (meta.statistics) {
    const Statistics& stats = *meta.statistics;
    if (stats.min_value && before(value, *stats.min_value)) return false;
    if (stats.max_value && before(*stats.max_value, value)) return false;
  }
  // A small chunk the dictionary cannot settle (none, or PLAIN pages
  // after it) is read whole and its values compared.
  auto read_values = [&]() -> absl::StatusOr<bool> {
    const int64_t group_rows =
        layout_->metadata.row_groups[static_cast<size_t>(row_group)].num_rows;
    if (meta.total_compressed_size > max_read_bytes || group_rows > kMayHoldReadRowsMax)
      return true;
    int64_t first_row = 0;
    for (int g = 0; g < row_group; ++g) {
      first_row += layout_->metadata.row_groups[static_cast<size_t>(g)].num_rows;
    }
    STRATA_ASSIGN_OR_RETURN(
        ColumnVector values,
        ReadColumn(
            column, first_row,
            first_row + layout_->metadata.row_groups[static_cast<size_t>(row_group)].num_rows));
    for (size_t i = 0; i < values.element_count(); ++i) {
      if (!values.is_null(i) && values.bytes_at(i) == value) return true;
    }
    return false;
  };
  if (!meta.dictionary_page_offset || !chunk.offset_index_offset) return read_values();
  STRATA_ASSIGN_OR_RETURN(const OffsetIndex* index, LoadOffsetIndex(row_group, column));
  for (const PageLocation& page : index->page_locations) {
    PageHeader header;
    int64_t header_size = 0;
    STRATA_RETURN_IF_ERROR(ReadPageHeader(page.offset, page.offset + page.compressed_page_size,
                                          &header, &header_size));
    if (header.type != PageType::kDataPage || !header.data_page_header ||
        (header.data_page_header->encoding != Encoding::kRleDictionary &&
         header.data_page_header->encoding != Encoding::kPlainDictionary)) {
      return read_values();  // a PLAIN page (the dictionary's fallback) may hold anything
    }
  }
  Dictionary dictionary;
  STRATA_RETURN_IF_ERROR(ReadIndexedDictionary(row_group, column, &dictionary));
  const std::string_view body = dictionary.body;
  for (const uint32_t at : dictionary.page->starts) {
    uint32_t length;
    if (at > body.size() || body.size() - at < 4 ||
        (std::memcpy(&length, body.data() + at, 4), length > body.size() - at - 4)) {
      return Corrupt(*meta.dictionary_page_offset, "dictionary page: an entry runs past the page");
    }
    if (body.substr(at + 4, length) == value) return true;
  }
  return false;
}

absl::Status FileReader::ReadPageHeader(int64_t offset, int64_t chunk_end, PageHeader* header,
                                        int64_t* header_size) {
  const int64_t limit =
      std::min<int64_t>(chunk_end - offset, static_cast<int64_t>(options_.max_page_header_bytes));
  int64_t window = std::min<int64_t>(limit, 256);
  while (true) {
    STRATA_RETURN_IF_ERROR(source_->ReadAt(offset, static_cast<size_t>(window), &scratch_));
    size_t consumed = 0;
    absl::StatusOr<PageHeader> parsed = ParsePageHeader(scratch_, &consumed);
    if (parsed.ok()) {
      *header = *std::move(parsed);
      *header_size = static_cast<int64_t>(consumed);
      return absl::OkStatus();
    }
    if (window >= limit) {
      return Corrupt(offset,
                     fmt::format("bad page header: {}", std::string(parsed.status().message())));
    }
    window = std::min(limit, window * 4);
  }
}

absl::Status FileReader::Decompress(std::string_view compressed, const PageHeader& header,
                                    CompressionCodec codec, int64_t offset, std::string* body) {
  const size_t uncompressed_size = static_cast<size_t>(header.uncompressed_page_size);
  if (codec == CompressionCodec::kUncompressed) {
    if (compressed.size() != uncompressed_size) {
      return Corrupt(offset, "uncompressed page whose two sizes differ");
    }
    body->assign(compressed.data(), compressed.size());
    return absl::OkStatus();
  }
  body->resize(uncompressed_size);
  const size_t n = ZSTD_decompressDCtx(static_cast<ZSTD_DCtx*>(zstd_context_), body->data(),
                                       body->size(), compressed.data(), compressed.size());
  if (ZSTD_isError(n)) {
    return Corrupt(offset, fmt::format("zstd: {}", ZSTD_getErrorName(n)));
  }
  if (n != uncompressed_size) {
    return Corrupt(
        offset, fmt::format("page decompressed to {} bytes, header says {}", n, uncompressed_size));
  }
  return absl::OkStatus();
}

absl::Status FileReader::ReadPageBody(int64_t offset, const PageHeader& header,
                                      CompressionCodec codec, std::string* body) {
  STRATA_RETURN_IF_ERROR(
      source_->ReadAt(offset, static_cast<size_t>(header.compressed_page_size), &compressed_));
  return Decompress(compressed_, header, codec, offset, body);
}

absl::StatusOr<std::shared_ptr<const DictionaryPage>> FileReader::MakeDictionaryPage(
    const ColumnSpec& spec, const PageHeader& header, std::string body, int64_t offset) const {
  if (header.type != PageType::kDictionaryPage || !header.dictionary_page_header) {
    return Corrupt(offset, "dictionary page without its header");
  }
  auto page = std::make_shared<DictionaryPage>();
  page->header = *header.dictionary_page_header;
  page->body = std::move(body);
  const int32_t count = page->header.num_values;
  if (spec.type == PhysicalType::kByteArray && count > 0 && count <= options_.max_values_per_page) {
    // Located once here, so readers that share the page (a lookup cache)
    // copy entries out without walking the page again.
    const std::string_view bytes = page->body;
    page->starts.reserve(std::min(static_cast<size_t>(count), bytes.size() / 4));
    size_t at = 0;
    for (int32_t i = 0; i < count; ++i) {
      uint32_t length;
      if (bytes.size() - at < 4 ||
          (std::memcpy(&length, bytes.data() + at, 4), length > bytes.size() - at - 4)) {
        return Corrupt(offset, fmt::format("dictionary page: entry {} runs past its {} bytes", i,
                                           bytes.size()));
      }
      page->starts.push_back(static_cast<uint32_t>(at));
      at += 4 + size_t{length};
    }
  }
  return std::shared_ptr<const DictionaryPage>(std::move(page));
}

absl::Status FileReader::DecodeDictionary(const ColumnSpec& spec,
                                          std::shared_ptr<const DictionaryPage> page,
                                          int64_t offset, Dictionary* dictionary) {
  const DictionaryPageHeader& dict = page->header;
  if (dict.encoding != Encoding::kPlain && dict.encoding != Encoding::kPlainDictionary) {
    return absl::UnimplementedError(fmt::format("{}: offset {}: dictionary encoding {}",
                                                options_.file_name, offset,
                                                static_cast<int>(dict.encoding)));
  }
  if (dict.num_values < 0 || dict.num_values > options_.max_values_per_page) {
    return Corrupt(offset, fmt::format("dictionary of {} values", dict.num_values));
  }
  // Values are found when a page names them (Gather), so a lookup that
  // needs a few entries does not copy the whole dictionary.
  dictionary->count = static_cast<size_t>(dict.num_values);
  dictionary->body = page->body;
  dictionary->page = std::move(page);
  dictionary->bools.clear();
  std::string_view body = dictionary->body;
  size_t width = FixedWidth(spec);
  if (spec.type == PhysicalType::kFixedLenByteArray) width = static_cast<size_t>(spec.type_length);
  absl::Status s;
  if (spec.type == PhysicalType::kBoolean) {
    s = DecodePlainBooleans(&body, dictionary->count, &dictionary->bools);
  } else if (spec.type == PhysicalType::kByteArray &&
             dictionary->page->starts.size() != dictionary->count) {
    s = absl::InvalidArgumentError(fmt::format("{} values, {} entries located", dictionary->count,
                                               dictionary->page->starts.size()));
  } else if (spec.type != PhysicalType::kByteArray && width > 0 &&
             dictionary->count > body.size() / width) {
    s = absl::InvalidArgumentError(fmt::format("{} values of {} bytes need {} bytes, only {}",
                                               dictionary->count, width, dictionary->count * width,
                                               body.size()));
  }
  if (!s.ok()) return Corrupt(offset, fmt::format("dictionary page: {}", std::string(s.message())));
  return absl::OkStatus();
}

absl::Status FileReader::Gather(const ColumnSpec& spec, Dictionary* dictionary,
                                const std::vector<uint32_t>& indices, int64_t offset,
                                ColumnVector* out) {
  uint32_t max_index = 0;
  for (uint32_t index : indices) max_index = std::max(max_index, index);
  if (!indices.empty() && max_index >= dictionary->count) {
    return Corrupt(offset, fmt::format("dictionary index {} of a dictionary of {}", max_index,
                                       dictionary->count));
  }
  const char* base = dictionary->body.data();
  switch (spec.type) {
    case PhysicalType::kBoolean:
      for (uint32_t i : indices) out->bools.push_back(dictionary->bools[i]);
      return absl::OkStatus();
    case PhysicalType::kInt32:
      for (uint32_t i : indices) {
        int32_t v;
        std::memcpy(&v, base + size_t{i} * 4, 4);
        out->int32s.push_back(v);
      }
      return absl::OkStatus();
    case PhysicalType::kInt64:
      for (uint32_t i : indices) {
        int64_t v;
        std::memcpy(&v, base + size_t{i} * 8, 8);
        out->int64s.push_back(v);
      }
      return absl::OkStatus();
    case PhysicalType::kDouble:
      for (uint32_t i : indices) {
        double v;
        std::memcpy(&v, base + size_t{i} * 8, 8);
        out->doubles.push_back(v);
      }
      return absl::OkStatus();
    case PhysicalType::kFixedLenByteArray: {
      const size_t width = static_cast<size_t>(spec.type_length);
      for (uint32_t i : indices) {
        out->bytes.append(base + size_t{i} * width, width);
        out->offsets.push_back(out->bytes.size());
      }
      return absl::OkStatus();
    }
    case PhysicalType::kByteArray:
      break;
    default:
      return absl::UnimplementedError("unsupported physical type");
  }
  // Byte arrays: the page located its entries (DecodeDictionary checked
  // there is one start per value); each is bounds-checked again, since a
  // shared page is trusted no more than a page just read.
  const std::string_view body = dictionary->body;
  const std::vector<uint32_t>& starts = dictionary->page->starts;
  for (uint32_t i : indices) {
    const size_t at = starts[i];
    uint32_t length;
    if (at > body.size() || body.size() - at < 4 ||
        (std::memcpy(&length, body.data() + at, 4), length > body.size() - at - 4)) {
      return Corrupt(
          offset, fmt::format("dictionary page: entry {} runs past its {} bytes", i, body.size()));
    }
    out->bytes.append(body.data() + at + 4, length);
    out->offsets.push_back(out->bytes.size());
  }
  return absl::OkStatus();
}

absl::Status FileReader::DecodeValues(const ColumnSpec& spec, const DataPageHeader& data,
                                      std::string_view body, int64_t offset, Dictionary* dictionary,
                                      size_t skip, size_t present, ColumnVector* values) {
  if (data.encoding == Encoding::kPlain) {
    absl::Status s;
    if (spec.type == PhysicalType::kBoolean) {
      // Bit-packed: decode the skipped values too (booleans are rare and small).
      std::vector<uint8_t> bools;
      s = DecodePlainBooleans(&body, skip + present, &bools);
      if (s.ok()) values->bools.insert(values->bools.end(), bools.begin() + skip, bools.end());
    } else {
      s = SkipPlain(spec, &body, skip);
      if (s.ok()) s = DecodePlainInto(spec, &body, present, values);
    }
    if (!s.ok()) return Corrupt(offset, fmt::format("PLAIN values: {}", std::string(s.message())));
  } else if (data.encoding == Encoding::kRleDictionary ||
             data.encoding == Encoding::kPlainDictionary) {
    if (dictionary == nullptr) {
      return Corrupt(offset, "dictionary-encoded page without a dictionary");
    }
    if (present > 0) {
      if (body.empty()) return Corrupt(offset, "dictionary indices missing");
      const int width = static_cast<uint8_t>(body[0]);
      body.remove_prefix(1);
      if (width > 32) return Corrupt(offset, fmt::format("index bit width {}", width));
      std::vector<uint32_t> indices(present);
      RleHybridDecoder decoder(body, width);
      absl::Status s = decoder.Skip(skip, 0, nullptr);
      if (s.ok()) s = decoder.Decode(indices.data(), present);
      if (!s.ok()) {
        return Corrupt(offset, fmt::format("dictionary indices: {}", std::string(s.message())));
      }
      STRATA_RETURN_IF_ERROR(Gather(spec, dictionary, indices, offset, values));
    }
  } else {
    return absl::UnimplementedError(fmt::format("{}: offset {}: value encoding {}",
                                                options_.file_name, offset,
                                                static_cast<int>(data.encoding)));
  }
  return absl::OkStatus();
}

absl::Status FileReader::DecodeFlatRows(const ColumnSpec& spec, const PageHeader& header,
                                        std::string_view body, int64_t offset,
                                        Dictionary* dictionary, int64_t skip, int64_t take,
                                        ColumnVector* out) {
  const DataPageHeader& data = *header.data_page_header;
  const int64_t n = data.num_values;
  if (n < 0 || n > options_.max_values_per_page || skip < 0 || take < 0 || skip > n ||
      take > n - skip) {
    return Corrupt(offset, fmt::format("data page of {} values for rows [{}, +{})", n, skip, take));
  }
  size_t present_before = static_cast<size_t>(skip);
  size_t present = static_cast<size_t>(take);
  std::vector<uint8_t> levels;
  if (spec.optional()) {
    if (data.definition_level_encoding != Encoding::kRle) {
      return absl::UnimplementedError(
          fmt::format("{}: offset {}: definition level encoding {}", options_.file_name, offset,
                      static_cast<int>(data.definition_level_encoding)));
    }
    absl::StatusOr<std::string_view> stream = TakeLevelsV1(&body);
    if (!stream.ok()) {
      return Corrupt(offset,
                     fmt::format("definition levels: {}", std::string(stream.status().message())));
    }
    RleHybridDecoder decoder(*stream, 1);
    levels.resize(static_cast<size_t>(take));
    absl::Status s = decoder.Skip(static_cast<size_t>(skip), 1, &present_before);
    if (s.ok()) s = decoder.Decode(levels.data(), levels.size());
    if (!s.ok()) {
      return Corrupt(offset, fmt::format("definition levels: {}", std::string(s.message())));
    }
    present = 0;
    for (uint8_t level : levels) {
      if (level > 1) return Corrupt(offset, fmt::format("definition level {} above 1", level));
      present += level;
    }
  }
  ColumnVector values(spec.type);
  STRATA_RETURN_IF_ERROR(
      DecodeValues(spec, data, body, offset, dictionary, present_before, present, &values));
  if (!spec.optional()) {
    out->AppendSlice(values, 0, values.size());
    return absl::OkStatus();
  }
  // Spread the present values over the rows.
  ColumnVector page(spec.type);
  page.Reserve(levels.size());
  size_t next = 0;
  for (uint8_t level : levels) {
    if (level == 0) {
      page.AppendNull();
    } else {
      page.AppendSlice(values, next, next + 1);
      ++next;
    }
  }
  if (page.validity.empty()) page.validity.assign(levels.size(), 1);
  out->AppendSlice(page, 0, page.size());
  return absl::OkStatus();
}

absl::Status FileReader::CheckListPage(const DataPageHeader& data, int64_t offset) const {
  if (data.num_values <= 0 || data.num_values > options_.max_values_per_page) {
    return Corrupt(offset, fmt::format("list data page of {} values", data.num_values));
  }
  if (data.repetition_level_encoding != Encoding::kRle ||
      data.definition_level_encoding != Encoding::kRle) {
    return absl::UnimplementedError(fmt::format("{}: offset {}: level encodings {} / {}",
                                                options_.file_name, offset,
                                                static_cast<int>(data.repetition_level_encoding),
                                                static_cast<int>(data.definition_level_encoding)));
  }
  return absl::OkStatus();
}

absl::Status FileReader::CountListRows(const ColumnSpec& spec, const PageHeader& header,
                                       std::string_view body, int64_t offset, int64_t* rows) {
  const DataPageHeader& data = *header.data_page_header;
  STRATA_RETURN_IF_ERROR(CheckListPage(data, offset));
  absl::StatusOr<std::string_view> stream = TakeLevelsV1(&body);
  size_t zeros = 0;
  absl::Status s = stream.status();
  if (s.ok()) {
    RleHybridDecoder decoder(*stream, BitWidthFor(spec.max_repetition_level()));
    s = decoder.Skip(static_cast<size_t>(data.num_values), 0, &zeros);
  }
  if (!s.ok()) {
    return Corrupt(offset, fmt::format("repetition levels: {}", std::string(s.message())));
  }
  *rows = static_cast<int64_t>(zeros);
  return absl::OkStatus();
}

absl::Status FileReader::DecodeListRows(const ColumnSpec& spec, const PageHeader& header,
                                        std::string_view body, int64_t offset,
                                        Dictionary* dictionary, int64_t skip, int64_t take,
                                        ColumnVector* out) {
  const DataPageHeader& data = *header.data_page_header;
  STRATA_RETURN_IF_ERROR(CheckListPage(data, offset));
  if (skip < 0 || take <= 0) return Corrupt(offset, "bad row range in a list page");
  const size_t n = static_cast<size_t>(data.num_values);
  const int max_repetition = spec.max_repetition_level();
  const int max_definition = spec.max_definition_level();
  const int repetition_width = BitWidthFor(static_cast<uint32_t>(max_repetition));
  const int definition_width = BitWidthFor(static_cast<uint32_t>(max_definition));
  absl::StatusOr<std::string_view> repetition_stream = TakeLevelsV1(&body);
  if (!repetition_stream.ok()) {
    return Corrupt(offset, fmt::format("repetition levels: {}",
                                       std::string(repetition_stream.status().message())));
  }
  absl::StatusOr<std::string_view> definition_stream = TakeLevelsV1(&body);
  if (!definition_stream.ok()) {
    return Corrupt(offset, fmt::format("definition levels: {}",
                                       std::string(definition_stream.status().message())));
  }
  // Find the level entries of the wanted rows: entries before row `skip`,
  // then the entries of `take` rows.
  size_t first_entry = 0, entries = 0, passed = 0;
  // Positioned at the first wanted entry once its place is found, so the
  // levels before it are walked once.
  RleHybridDecoder repetition_decoder(*repetition_stream, repetition_width);
  {
    RleHybridDecoder first(*repetition_stream, repetition_width);
    uint8_t level = 0;
    if (absl::Status s = first.Decode(&level, 1); !s.ok()) {
      return Corrupt(offset, fmt::format("repetition levels: {}", std::string(s.message())));
    }
    if (level != 0) return Corrupt(offset, "list data page starts inside a row");
    RleHybridDecoder counter(*repetition_stream, repetition_width);
    absl::Status s =
        counter.SkipOccurrences(0, static_cast<size_t>(skip), n, &first_entry, &passed);
    if (s.ok() && (passed < static_cast<size_t>(skip) || first_entry >= n)) {
      return Corrupt(offset, fmt::format("list data page holds fewer than {} rows", skip + 1));
    }
    if (s.ok()) {
      repetition_decoder = counter;
      s = counter.SkipOccurrences(0, static_cast<size_t>(take), n - first_entry, &entries, &passed);
    }
    if (!s.ok()) {
      return Corrupt(offset, fmt::format("repetition levels: {}", std::string(s.message())));
    }
    if (passed < static_cast<size_t>(take)) {
      return Corrupt(offset, fmt::format("list data page holds fewer than {} rows", skip + take));
    }
  }
  std::vector<uint8_t> repetition(entries), definition(entries);
  size_t present_before = 0;
  {
    absl::Status s = repetition_decoder.Decode(repetition.data(), entries);
    if (!s.ok()) {
      return Corrupt(offset, fmt::format("repetition levels: {}", std::string(s.message())));
    }
  }
  {
    RleHybridDecoder decoder(*definition_stream, definition_width);
    absl::Status s =
        decoder.Skip(first_entry, static_cast<uint32_t>(max_definition), &present_before);
    if (s.ok()) s = decoder.Decode(definition.data(), entries);
    if (!s.ok()) {
      return Corrupt(offset, fmt::format("definition levels: {}", std::string(s.message())));
    }
  }
  const uint8_t list_present = spec.list_optional() ? 1 : 0;
  size_t present = 0;
  for (size_t i = 0; i < entries; ++i) {
    if (repetition[i] > max_repetition || definition[i] > max_definition) {
      return Corrupt(offset, fmt::format("level entry {}: level above the column's maximum", i));
    }
    // Continuation entries are elements: their level is above "empty list".
    if (repetition[i] == 1 && definition[i] <= list_present) {
      return Corrupt(offset, fmt::format("level entry {}: an element of an empty or null list", i));
    }
    present += definition[i] == max_definition;
  }
  ColumnVector values(spec.type);
  STRATA_RETURN_IF_ERROR(
      DecodeValues(spec, data, body, offset, dictionary, present_before, present, &values));

  // Without null elements (the usual case) the rows go straight into *out:
  // the lists from the levels, then the values in one piece.
  size_t elements = 0;
  for (size_t i = 0; i < entries; ++i) {
    elements += !(repetition[i] == 0 && definition[i] <= list_present);
  }
  if (elements == present) {
    uint64_t element = out->element_count();
    for (size_t i = 0; i < entries; ++i) {
      if (repetition[i] == 0) {
        if (spec.list_optional() && definition[i] == 0) {
          out->AppendNullList();
          continue;
        }
        out->AppendList(element, 0);
        if (definition[i] == list_present) continue;  // empty list
      }
      ++element;
      ++out->lists.back().count;
    }
    out->AppendElements(values, 0, values.size());
    if (spec.optional() && out->validity.empty()) out->validity.assign(out->element_count(), 1);
    return absl::OkStatus();
  }
  ColumnVector page = ColumnVector::List(spec.type);
  page.Reserve(entries);
  size_t next = 0;
  for (size_t i = 0; i < entries; ++i) {
    const uint8_t level = definition[i];
    if (repetition[i] == 0) {
      if (spec.list_optional() && level == 0) {
        page.AppendNullList();
        continue;
      }
      page.AppendList(page.element_count(), 0);
      if (level == list_present) continue;  // empty list
    }
    if (level == max_definition) {
      page.AppendElements(values, next, next + 1);
      ++next;
    } else {
      page.AppendNull();
    }
    ++page.lists.back().count;
  }
  if (spec.optional() && page.validity.empty()) page.validity.assign(page.element_count(), 1);
  out->AppendSlice(page, 0, page.size());
  return absl::OkStatus();
}

absl::Status FileReader::DecodeRows(const ColumnSpec& spec, const PageHeader& header,
                                    std::string_view body, int64_t offset, Dictionary* dictionary,
                                    int64_t skip, int64_t take, ColumnVector* out) {
  if (take == 0) return absl::OkStatus();
  if (spec.list) return DecodeListRows(spec, header, body, offset, dictionary, skip, take, out);
  return DecodeFlatRows(spec, header, body, offset, dictionary, skip, take, out);
}

absl::Status FileReader::ReadChunk(int row_group, int column, int64_t begin, int64_t end,
                                   ColumnVector* out) {
  const RowGroup& group = layout_->metadata.row_groups[static_cast<size_t>(row_group)];
  const ColumnChunk& chunk = group.columns[static_cast<size_t>(column)];
  if (chunk.offset_index_offset) {
    STRATA_ASSIGN_OR_RETURN(const OffsetIndex* index, LoadOffsetIndex(row_group, column));
    return ReadChunkIndexed(row_group, column, *index, begin, end, out);
  }
  const ColumnMetaData& meta = *chunk.meta_data;
  const ColumnSpec& spec = layout_->columns[static_cast<size_t>(column)];
  int64_t pos = meta.dictionary_page_offset.value_or(meta.data_page_offset);
  const int64_t chunk_end = pos + meta.total_compressed_size;
  int64_t row = 0;
  bool have_dictionary = false;
  Dictionary dictionary;
  std::string body;
  while (row < end) {
    if (pos >= chunk_end) {
      return Corrupt(pos, fmt::format("column '{}' chunk ends after {} of {} rows", spec.name, row,
                                      group.num_rows));
    }
    PageHeader header;
    int64_t header_size = 0;
    STRATA_RETURN_IF_ERROR(ReadPageHeader(pos, chunk_end, &header, &header_size));
    const int64_t body_start = pos + header_size;
    STRATA_RETURN_IF_ERROR(CheckPageSizes(header, pos, chunk_end - body_start));
    const int64_t body_end = body_start + header.compressed_page_size;
    switch (header.type) {
      case PageType::kDictionaryPage: {
        if (have_dictionary || row > 0) return Corrupt(pos, "dictionary page after data pages");
        STRATA_RETURN_IF_ERROR(ReadPageBody(body_start, header, meta.codec, &body));
        STRATA_ASSIGN_OR_RETURN(std::shared_ptr<const DictionaryPage> page,
                                MakeDictionaryPage(spec, header, std::string(body), pos));
        STRATA_RETURN_IF_ERROR(DecodeDictionary(spec, std::move(page), pos, &dictionary));
        have_dictionary = true;
        break;
      }
      case PageType::kDataPage: {
        if (!header.data_page_header) return Corrupt(pos, "data page without its header");
        int64_t page_rows = header.data_page_header->num_values;
        if (spec.list) {
          // A LIST page's row count is known only from its repetition levels.
          STRATA_RETURN_IF_ERROR(ReadPageBody(body_start, header, meta.codec, &body));
          STRATA_RETURN_IF_ERROR(CountListRows(spec, header, body, pos, &page_rows));
        }
        if (page_rows < 0 || page_rows > options_.max_values_per_page ||
            page_rows > group.num_rows - row) {
          return Corrupt(pos, fmt::format("data page of {} rows at row {} of {}", page_rows, row,
                                          group.num_rows));
        }
        if (row + page_rows > begin) {
          if (!spec.list) {
            STRATA_RETURN_IF_ERROR(ReadPageBody(body_start, header, meta.codec, &body));
          }
          const int64_t first = std::max(begin, row);
          STRATA_RETURN_IF_ERROR(DecodeRows(spec, header, body, pos,
                                            have_dictionary ? &dictionary : nullptr, first - row,
                                            std::min(end, row + page_rows) - first, out));
        }
        row += page_rows;
        break;
      }
      case PageType::kDataPageV2:
        return absl::UnimplementedError(
            fmt::format("{}: offset {}: DATA_PAGE_V2 is not supported", options_.file_name, pos));
      case PageType::kIndexPage:
        break;
      default:
        return Corrupt(pos, fmt::format("unknown page type {}", static_cast<int>(header.type)));
    }
    pos = body_end;
  }
  return absl::OkStatus();
}

absl::Status FileReader::CheckPageSizes(const PageHeader& header, int64_t offset,
                                        int64_t room) const {
  if (header.compressed_page_size < 0 || header.uncompressed_page_size < 0 ||
      static_cast<size_t>(header.compressed_page_size) > options_.max_page_bytes ||
      static_cast<size_t>(header.uncompressed_page_size) > options_.max_page_bytes ||
      header.compressed_page_size > room) {
    return Corrupt(offset, fmt::format("page sizes {} / {} do not fit the column chunk",
                                       header.compressed_page_size, header.uncompressed_page_size));
  }
  return absl::OkStatus();
}

absl::Status FileReader::ReadBytes(int64_t offset, int64_t size, std::string* buffer,
                                   std::string_view* bytes) {
  for (const auto& [at, prefetched] : prefetched_) {
    if (offset >= at && offset - at <= static_cast<int64_t>(prefetched.size()) &&
        size <= static_cast<int64_t>(prefetched.size()) - (offset - at)) {
      *bytes = std::string_view(prefetched)
                   .substr(static_cast<size_t>(offset - at), static_cast<size_t>(size));
      return absl::OkStatus();
    }
  }
  STRATA_RETURN_IF_ERROR(source_->ReadAt(offset, static_cast<size_t>(size), buffer));
  *bytes = *buffer;
  return absl::OkStatus();
}

absl::Status FileReader::Prefetch(std::span<const int> columns, int64_t row_begin,
                                  int64_t row_end) {
  prefetched_.clear();
  struct Range {
    int64_t offset;
    int64_t end;
    bool needed;  // a data page; a dictionary page may not be needed
  };
  std::vector<Range> ranges;
  const FileMetaData& metadata = layout_->metadata;
  for (int column : columns) {
    if (column < 0 || static_cast<size_t>(column) >= layout_->columns.size()) continue;
    for (size_t g = 0; g < metadata.row_groups.size(); ++g) {
      const RowGroup& group = metadata.row_groups[g];
      const int64_t first = layout_->row_group_first_row[g];
      if (first + group.num_rows <= row_begin || first >= row_end) continue;
      const ColumnChunk& chunk = group.columns[static_cast<size_t>(column)];
      if (!chunk.offset_index_offset) continue;
      STRATA_ASSIGN_OR_RETURN(const OffsetIndex* index,
                              LoadOffsetIndex(static_cast<int>(g), column));
      const std::vector<PageLocation>& pages = index->page_locations;
      const int64_t begin = std::max(row_begin, first) - first;
      const int64_t end = std::min(row_end, first + group.num_rows) - first;
      auto it = std::upper_bound(
          pages.begin(), pages.end(), begin,
          [](int64_t row, const PageLocation& page) { return row < page.first_row_index; });
      if (it == pages.begin()) continue;  // LoadOffsetIndex rejects this; the read reports it
      for (--it; it != pages.end() && it->first_row_index < end; ++it) {
        ranges.push_back({it->offset, it->offset + it->compressed_page_size, true});
      }
      const ColumnMetaData& meta = *chunk.meta_data;
      const size_t slot = g * layout_->columns.size() + static_cast<size_t>(column);
      if (meta.dictionary_page_offset &&
          (options_.dictionary_cache == nullptr ||
           options_.dictionary_cache->FindDictionary(slot) == nullptr)) {
        ranges.push_back({*meta.dictionary_page_offset, meta.data_page_offset, false});
      }
    }
  }
  std::sort(ranges.begin(), ranges.end(),
            [](const Range& a, const Range& b) { return a.offset < b.offset; });
  // Merge ranges whose gap is small; read the merged spans that hold a data
  // page, until the byte limit.
  int64_t total = 0;
  size_t i = 0;
  while (i < ranges.size()) {
    Range span = ranges[i++];
    while (i < ranges.size() && ranges[i].offset <= span.end + kCoalesceGapBytes) {
      span.end = std::max(span.end, ranges[i].end);
      span.needed |= ranges[i].needed;
      ++i;
    }
    const int64_t size = span.end - span.offset;
    if (!span.needed || size <= 0) continue;
    if (total + size > kPrefetchBytesMax) break;
    total += size;
    std::string& bytes = prefetched_.emplace_back(span.offset, std::string()).second;
    STRATA_RETURN_IF_ERROR(source_->ReadAt(span.offset, static_cast<size_t>(size), &bytes));
  }
  return absl::OkStatus();
}

absl::Status FileReader::ReadWholePage(int64_t offset, int64_t size, std::string* buffer,
                                       PageHeader* header, std::string_view* compressed_body) {
  std::string_view bytes;
  STRATA_RETURN_IF_ERROR(ReadBytes(offset, size, buffer, &bytes));
  size_t consumed = 0;
  absl::StatusOr<PageHeader> parsed = ParsePageHeader(bytes, &consumed);
  if (!parsed.ok()) {
    return Corrupt(offset,
                   fmt::format("bad page header: {}", std::string(parsed.status().message())));
  }
  *header = *std::move(parsed);
  STRATA_RETURN_IF_ERROR(CheckPageSizes(*header, offset, size - static_cast<int64_t>(consumed)));
  if (static_cast<int64_t>(consumed) + header->compressed_page_size != size) {
    return Corrupt(
        offset, fmt::format("page of {} bytes where the offset index says {}",
                            static_cast<int64_t>(consumed) + header->compressed_page_size, size));
  }
  *compressed_body = bytes.substr(consumed);
  return absl::OkStatus();
}

void FileReader::KeepLastPages(bool keep) {
  keep_pages_ = keep;
  kept_pages_.clear();
  kept_dictionaries_.clear();
  if (keep) {
    kept_pages_.resize(layout_->columns.size());
    kept_dictionaries_.resize(layout_->metadata.row_groups.size() * layout_->columns.size());
  }
  kept_pages_.shrink_to_fit();
  kept_dictionaries_.shrink_to_fit();
}

absl::Status FileReader::ReadChunkIndexed(int row_group, int column, const OffsetIndex& index,
                                          int64_t begin, int64_t end, ColumnVector* out) {
  const RowGroup& group = layout_->metadata.row_groups[static_cast<size_t>(row_group)];
  const ColumnMetaData& meta = *group.columns[static_cast<size_t>(column)].meta_data;
  const ColumnSpec& spec = layout_->columns[static_cast<size_t>(column)];
  const std::vector<PageLocation>& pages = index.page_locations;
  if (begin >= end) return absl::OkStatus();
  // The last page whose first row is at or before `begin`.
  auto it = std::upper_bound(
      pages.begin(), pages.end(), begin,
      [](int64_t row, const PageLocation& page) { return row < page.first_row_index; });
  size_t p = static_cast<size_t>(it - pages.begin()) - 1;  // pages[0] starts at row 0
  bool have_dictionary = false;
  Dictionary dictionary;
  const size_t chunk =
      static_cast<size_t>(row_group) * layout_->columns.size() + static_cast<size_t>(column);
  for (; p < pages.size() && pages[p].first_row_index < end; ++p) {
    const PageLocation& location = pages[p];
    const int64_t first_row = location.first_row_index;
    const int64_t end_row = p + 1 < pages.size() ? pages[p + 1].first_row_index : group.num_rows;
    KeptPage* kept = keep_pages_ ? &kept_pages_[static_cast<size_t>(column)] : nullptr;
    PageHeader read_header;
    const PageHeader* header = &read_header;
    std::string_view body;
    if (kept != nullptr && kept->chunk == chunk && kept->page == p) {
      // Checked when it was read.
      header = &kept->header;
      body = kept->body;
    } else {
      std::string_view compressed;
      STRATA_RETURN_IF_ERROR(ReadWholePage(location.offset, location.compressed_page_size,
                                           &page_bytes_, &read_header, &compressed));
      if (read_header.type == PageType::kDataPageV2) {
        return absl::UnimplementedError(fmt::format("{}: offset {}: DATA_PAGE_V2 is not supported",
                                                    options_.file_name, location.offset));
      }
      if (read_header.type != PageType::kDataPage || !read_header.data_page_header) {
        return Corrupt(location.offset, "the offset index names a page that is not a data page");
      }
      const int64_t values = read_header.data_page_header->num_values;
      if (!spec.list && values != end_row - first_row) {
        return Corrupt(location.offset,
                       fmt::format("data page of {} values where the offset index says {} rows",
                                   values, end_row - first_row));
      }
      if (kept != nullptr) {
        kept->chunk = SIZE_MAX;  // until the body is in place
        STRATA_RETURN_IF_ERROR(
            Decompress(compressed, read_header, meta.codec, location.offset, &kept->body));
        kept->header = read_header;
        kept->chunk = chunk;
        kept->page = p;
        header = &kept->header;
        body = kept->body;
      } else {
        STRATA_RETURN_IF_ERROR(
            Decompress(compressed, read_header, meta.codec, location.offset, &page_body_));
        body = page_body_;
      }
    }
    const DataPageHeader& data = *header->data_page_header;
    if (!have_dictionary && meta.dictionary_page_offset &&
        (data.encoding == Encoding::kRleDictionary ||
         data.encoding == Encoding::kPlainDictionary)) {
      STRATA_RETURN_IF_ERROR(ReadIndexedDictionary(row_group, column, &dictionary));
      have_dictionary = true;
    }
    const int64_t first = std::max(begin, first_row);
    STRATA_RETURN_IF_ERROR(DecodeRows(spec, *header, body, location.offset,
                                      have_dictionary ? &dictionary : nullptr, first - first_row,
                                      std::min(end, end_row) - first, out));
  }
  return absl::OkStatus();
}

absl::Status FileReader::ReadIndexedDictionary(int row_group, int column, Dictionary* dictionary) {
  const ColumnSpec& spec = layout_->columns[static_cast<size_t>(column)];
  const ColumnMetaData& meta = *layout_->metadata.row_groups[static_cast<size_t>(row_group)]
                                    .columns[static_cast<size_t>(column)]
                                    .meta_data;
  // The dictionary page fills the bytes before the first data page
  // (ValidateRowGroups checked that it comes first, inside the chunk).
  const int64_t offset = *meta.dictionary_page_offset;
  const size_t chunk =
      static_cast<size_t>(row_group) * layout_->columns.size() + static_cast<size_t>(column);
  if (keep_pages_ && kept_dictionaries_[chunk] != nullptr) {
    return DecodeDictionary(spec, kept_dictionaries_[chunk], offset, dictionary);
  }
  if (options_.dictionary_cache != nullptr) {
    if (std::shared_ptr<const DictionaryPage> cached =
            options_.dictionary_cache->FindDictionary(chunk)) {
      if (keep_pages_) kept_dictionaries_[chunk] = cached;
      return DecodeDictionary(spec, std::move(cached), offset, dictionary);
    }
  }
  const int64_t size = meta.data_page_offset - offset;
  if (size <= 0 ||
      static_cast<uint64_t>(size) > options_.max_page_bytes + options_.max_page_header_bytes) {
    return Corrupt(offset, fmt::format("dictionary page of {} bytes", size));
  }
  PageHeader header;
  std::string_view compressed;
  STRATA_RETURN_IF_ERROR(ReadWholePage(offset, size, &compressed_, &header, &compressed));
  if (header.type != PageType::kDictionaryPage) {
    return Corrupt(offset, "dictionary_page_offset names a page that is not a dictionary page");
  }
  std::string body;
  STRATA_RETURN_IF_ERROR(Decompress(compressed, header, meta.codec, offset, &body));
  STRATA_ASSIGN_OR_RETURN(std::shared_ptr<const DictionaryPage> page,
                          MakeDictionaryPage(spec, header, std::move(body), offset));
  STRATA_RETURN_IF_ERROR(DecodeDictionary(spec, page, offset, dictionary));
  // Offered only once checked, so the cache holds pages that decode.
  if (keep_pages_) kept_dictionaries_[chunk] = page;
  if (options_.dictionary_cache != nullptr) {
    options_.dictionary_cache->OfferDictionary(chunk, std::move(page));
  }
  return absl::OkStatus();
}

absl::StatusOr<const OffsetIndex*> FileReader::LoadOffsetIndex(int row_group, int column) {
  const size_t slot =
      static_cast<size_t>(row_group) * layout_->columns.size() + static_cast<size_t>(column);
  if (!layout_->offset_indexes.empty()) {
    // A layout from ReadLayout() holds every chunk's index, validated.
    const std::optional<OffsetIndex>& shared = layout_->offset_indexes[slot];
    if (!shared) return Corrupt(0, "the shared layout lacks an offset index");
    return &*shared;
  }
  if (offset_indexes_.empty()) {
    offset_indexes_.resize(layout_->metadata.row_groups.size() * layout_->columns.size());
    // Writers put every chunk's OffsetIndex together before the footer:
    // read the region once when it is small, so a read of many columns
    // costs one pread here rather than one per column.
    int64_t low = INT64_MAX, high = 0, total = 0;
    for (const RowGroup& group : layout_->metadata.row_groups) {
      for (const ColumnChunk& chunk : group.columns) {
        if (!chunk.offset_index_offset) continue;
        low = std::min(low, *chunk.offset_index_offset);
        high = std::max(high, *chunk.offset_index_offset + *chunk.offset_index_length);
        total += *chunk.offset_index_length;
      }
    }
    if (low < high && high - low <= static_cast<int64_t>(options_.max_footer_bytes) &&
        high - low <= 2 * total) {
      STRATA_RETURN_IF_ERROR(
          source_->ReadAt(low, static_cast<size_t>(high - low), &offset_index_bytes_));
      offset_index_bytes_at_ = low;
    }
  }
  std::optional<OffsetIndex>& cached = offset_indexes_[slot];
  if (cached) return &*cached;
  const RowGroup& group = layout_->metadata.row_groups[static_cast<size_t>(row_group)];
  const ColumnChunk& chunk = group.columns[static_cast<size_t>(column)];
  const int64_t offset = *chunk.offset_index_offset;
  const int64_t length = *chunk.offset_index_length;
  std::string_view bytes;
  if (!offset_index_bytes_.empty() && offset >= offset_index_bytes_at_ &&
      offset + length <=
          offset_index_bytes_at_ + static_cast<int64_t>(offset_index_bytes_.size())) {
    bytes = std::string_view(offset_index_bytes_)
                .substr(static_cast<size_t>(offset - offset_index_bytes_at_),
                        static_cast<size_t>(length));
  } else {
    STRATA_RETURN_IF_ERROR(source_->ReadAt(offset, static_cast<size_t>(length), &scratch_));
    bytes = scratch_;
  }
  const ColumnSpec& spec = layout_->columns[static_cast<size_t>(column)];
  auto error = [&](std::string_view what) {
    return Corrupt(offset, fmt::format("offset index of column '{}' in row group {}: {}", spec.name,
                                       row_group, what));
  };
  absl::StatusOr<OffsetIndex> parsed = ParseOffsetIndex(bytes);
  if (!parsed.ok()) return error(std::string(parsed.status().message()));
  const std::vector<PageLocation>& pages = parsed->page_locations;
  const ColumnMetaData& meta = *chunk.meta_data;
  const int64_t chunk_end =
      meta.dictionary_page_offset.value_or(meta.data_page_offset) + meta.total_compressed_size;
  if (group.num_rows > 0 && pages.empty()) return error("no pages");
  int64_t previous_end = meta.data_page_offset;
  for (size_t p = 0; p < pages.size(); ++p) {
    const PageLocation& page = pages[p];
    if (p == 0 ? page.first_row_index != 0 : page.first_row_index <= pages[p - 1].first_row_index) {
      return error(fmt::format("page {}: first_row_index {} is not {}", p, page.first_row_index,
                               p == 0 ? "0" : "increasing"));
    }
    if (page.first_row_index >= group.num_rows) {
      return error(fmt::format("page {}: first_row_index {} past the row group's {} rows", p,
                               page.first_row_index, group.num_rows));
    }
    if (page.offset < previous_end) {
      return error(fmt::format("page {}: offset {} is before the end of the previous page ({})", p,
                               page.offset, previous_end));
    }
    if (page.compressed_page_size <= 0 ||
        static_cast<uint64_t>(page.compressed_page_size) >
            options_.max_page_bytes + options_.max_page_header_bytes ||
        page.compressed_page_size > chunk_end - page.offset) {
      return error(
          fmt::format("page {}: {} bytes at offset {} do not fit the column chunk "
                      "(ends at {})",
                      p, page.compressed_page_size, page.offset, chunk_end));
    }
    previous_end = page.offset + page.compressed_page_size;
  }
  cached = *std::move(parsed);
  return &*cached;
}

}  // namespace strata::parquet
