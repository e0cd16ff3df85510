#include "parquet/file_reader.h"

#include <zstd.h>

#include <algorithm>
#include <cstring>
#include <utility>

#include "fmt/format.h"
#include "parquet/encoding.h"
#include "common/status_macros.h"

namespace strata::parquet {
namespace {

constexpr std::string_view kMagic = "PAR1";

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

// Appends dictionary[index] for each index.
void GatherFromDictionary(const ColumnVector& dictionary, const std::vector<uint32_t>& indices,
                          ColumnVector* out) {
  switch (dictionary.type) {
    case PhysicalType::kBoolean:
      for (uint32_t i : indices) out->bools.push_back(dictionary.bools[i]);
      break;
    case PhysicalType::kInt32:
      for (uint32_t i : indices) out->int32s.push_back(dictionary.int32s[i]);
      break;
    case PhysicalType::kInt64:
      for (uint32_t i : indices) out->int64s.push_back(dictionary.int64s[i]);
      break;
    case PhysicalType::kDouble:
      for (uint32_t i : indices) out->doubles.push_back(dictionary.doubles[i]);
      break;
    default:
      for (uint32_t i : indices) {
        const std::string_view v = dictionary.bytes_at(i);
        out->bytes.append(v.data(), v.size());
        out->offsets.push_back(out->bytes.size());
      }
      break;
  }
}

}  // namespace

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
  zstd_context_ = ZSTD_createDCtx();
}

FileReader::~FileReader() {
  if (zstd_context_ != nullptr) ZSTD_freeDCtx(static_cast<ZSTD_DCtx*>(zstd_context_));
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
  metadata_ = *std::move(metadata);
  absl::StatusOr<std::vector<ColumnSpec>> columns = FromSchemaElements(metadata_.schema);
  if (!columns.ok()) {
    return absl::Status(columns.status().code(),
                        fmt::format("{}: footer at offset {}: schema: {}", options_.file_name,
                                    footer_start, std::string(columns.status().message())));
  }
  columns_ = *std::move(columns);
  return ValidateRowGroups(footer_start);
}

absl::Status FileReader::ValidateRowGroups(int64_t data_end) {
  if (metadata_.num_rows < 0) return Corrupt(data_end, "negative num_rows");
  int64_t total = 0;
  row_group_first_row_.clear();
  for (size_t g = 0; g < metadata_.row_groups.size(); ++g) {
    const RowGroup& group = metadata_.row_groups[g];
    auto error = [&](std::string_view what) {
      return Corrupt(data_end, fmt::format("footer: row group {}: {}", g, what));
    };
    if (group.num_rows < 0 || group.num_rows > INT64_MAX - total) return error("bad num_rows");
    if (group.columns.size() != columns_.size()) {
      return error(
          fmt::format("{} column chunks for {} columns", group.columns.size(), columns_.size()));
    }
    for (size_t c = 0; c < columns_.size(); ++c) {
      const ColumnChunk& chunk = group.columns[c];
      const ColumnSpec& spec = columns_[c];
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
    }
    row_group_first_row_.push_back(total);
    total += group.num_rows;
  }
  if (total != metadata_.num_rows) {
    return Corrupt(data_end, fmt::format("row groups hold {} rows, num_rows says {}", total,
                                         metadata_.num_rows));
  }
  return absl::OkStatus();
}

int FileReader::FindColumn(std::string_view name) const {
  for (size_t i = 0; i < columns_.size(); ++i) {
    if (columns_[i].name == name) return static_cast<int>(i);
  }
  return -1;
}

absl::StatusOr<std::vector<ColumnVector>> FileReader::Read(std::span<const int> columns,
                                                           int64_t row_begin, int64_t row_end) {
  if (row_begin < 0 || row_begin > row_end || row_end > num_rows()) {
    return absl::InvalidArgumentError(
        fmt::format("row range [{}, {}) outside [0, {})", row_begin, row_end, num_rows()));
  }
  std::vector<ColumnVector> result;
  result.reserve(columns.size());
  for (int column : columns) {
    if (column < 0 || static_cast<size_t>(column) >= columns_.size()) {
      return absl::InvalidArgumentError(fmt::format("no column {}", column));
    }
    const ColumnSpec& spec = columns_[column];
    ColumnVector& out =
        result.emplace_back(spec.list ? ColumnVector::List(spec.type) : ColumnVector(spec.type));
    out.Reserve(static_cast<size_t>(std::min<int64_t>(row_end - row_begin, 1 << 20)));
    for (size_t g = 0; g < metadata_.row_groups.size(); ++g) {
      const int64_t first = row_group_first_row_[g];
      const int64_t last = first + metadata_.row_groups[g].num_rows;
      if (last <= row_begin || first >= row_end) continue;
      STRATA_RETURN_IF_ERROR(ReadChunk(static_cast<int>(g), column,
                                          std::max(row_begin, first) - first,
                                          std::min(row_end, last) - first, &out));
    }
    if (spec.optional() && out.validity.empty()) out.validity.assign(out.element_count(), 1);
    if (spec.list_optional() && out.list_validity.empty()) out.list_validity.assign(out.size(), 1);
  }
  return result;
}

absl::StatusOr<ColumnVector> FileReader::ReadColumn(int column, int64_t row_begin,
                                                    int64_t row_end) {
  const int columns[] = {column};
  STRATA_ASSIGN_OR_RETURN(std::vector<ColumnVector> result, Read(columns, row_begin, row_end));
  return std::move(result[0]);
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

absl::Status FileReader::ReadPageBody(int64_t offset, const PageHeader& header,
                                      CompressionCodec codec, std::string* body) {
  const size_t compressed_size = static_cast<size_t>(header.compressed_page_size);
  const size_t uncompressed_size = static_cast<size_t>(header.uncompressed_page_size);
  if (codec == CompressionCodec::kUncompressed) {
    if (compressed_size != uncompressed_size) {
      return Corrupt(offset, "uncompressed page whose two sizes differ");
    }
    return source_->ReadAt(offset, compressed_size, body);
  }
  STRATA_RETURN_IF_ERROR(source_->ReadAt(offset, compressed_size, &compressed_));
  body->resize(uncompressed_size);
  const size_t n = ZSTD_decompressDCtx(static_cast<ZSTD_DCtx*>(zstd_context_), body->data(),
                                       body->size(), compressed_.data(), compressed_.size());
  if (ZSTD_isError(n)) {
    return Corrupt(offset, fmt::format("zstd: {}", ZSTD_getErrorName(n)));
  }
  if (n != uncompressed_size) {
    return Corrupt(
        offset, fmt::format("page decompressed to {} bytes, header says {}", n, uncompressed_size));
  }
  return absl::OkStatus();
}

absl::Status FileReader::DecodeDictionary(const ColumnSpec& spec, const PageHeader& header,
                                          std::string_view body, int64_t offset,
                                          ColumnVector* dictionary) {
  if (!header.dictionary_page_header) return Corrupt(offset, "dictionary page without its header");
  const DictionaryPageHeader& dict = *header.dictionary_page_header;
  if (dict.encoding != Encoding::kPlain && dict.encoding != Encoding::kPlainDictionary) {
    return absl::UnimplementedError(fmt::format("{}: offset {}: dictionary encoding {}",
                                                options_.file_name, offset,
                                                static_cast<int>(dict.encoding)));
  }
  if (dict.num_values < 0 || dict.num_values > options_.max_values_per_page) {
    return Corrupt(offset, fmt::format("dictionary of {} values", dict.num_values));
  }
  *dictionary = ColumnVector(spec.type);
  if (absl::Status s =
          DecodePlainInto(spec, &body, static_cast<size_t>(dict.num_values), dictionary);
      !s.ok()) {
    return Corrupt(offset, fmt::format("dictionary page: {}", std::string(s.message())));
  }
  return absl::OkStatus();
}

absl::Status FileReader::DecodeValues(const ColumnSpec& spec, const DataPageHeader& data,
                                      std::string_view body, int64_t offset,
                                      const ColumnVector* dictionary, size_t present,
                                      ColumnVector* values) {
  if (data.encoding == Encoding::kPlain) {
    if (absl::Status s = DecodePlainInto(spec, &body, present, values); !s.ok()) {
      return Corrupt(offset, fmt::format("PLAIN values: {}", std::string(s.message())));
    }
  } else if (data.encoding == Encoding::kRleDictionary ||
             data.encoding == Encoding::kPlainDictionary) {
    if (dictionary == nullptr)
      return Corrupt(offset, "dictionary-encoded page without a dictionary");
    if (present > 0) {
      if (body.empty()) return Corrupt(offset, "dictionary indices missing");
      const int width = static_cast<uint8_t>(body[0]);
      body.remove_prefix(1);
      if (width > 32) return Corrupt(offset, fmt::format("index bit width {}", width));
      std::vector<uint32_t> indices(present);
      RleHybridDecoder decoder(body, width);
      if (absl::Status s = decoder.Decode(indices.data(), present); !s.ok()) {
        return Corrupt(offset, fmt::format("dictionary indices: {}", std::string(s.message())));
      }
      const size_t dictionary_size = dictionary->size();
      for (uint32_t index : indices) {
        if (index >= dictionary_size) {
          return Corrupt(offset, fmt::format("dictionary index {} of a dictionary of {}", index,
                                             dictionary_size));
        }
      }
      GatherFromDictionary(*dictionary, indices, values);
    }
  } else {
    return absl::UnimplementedError(fmt::format("{}: offset {}: value encoding {}",
                                                options_.file_name, offset,
                                                static_cast<int>(data.encoding)));
  }
  return absl::OkStatus();
}

absl::Status FileReader::DecodeDataPage(const ColumnSpec& spec, const PageHeader& header,
                                        std::string_view body, int64_t offset,
                                        const ColumnVector* dictionary, ColumnVector* page) {
  const DataPageHeader& data = *header.data_page_header;
  const size_t n = static_cast<size_t>(data.num_values);
  std::vector<uint8_t> levels;
  size_t present = n;
  if (spec.optional()) {
    if (data.definition_level_encoding != Encoding::kRle) {
      return absl::UnimplementedError(
          fmt::format("{}: offset {}: definition level encoding {}", options_.file_name, offset,
                      static_cast<int>(data.definition_level_encoding)));
    }
    levels.resize(n);
    if (absl::Status s = DecodeLevelsV1(&body, n, 1, levels.data()); !s.ok()) {
      return Corrupt(offset, fmt::format("definition levels: {}", std::string(s.message())));
    }
    present = static_cast<size_t>(std::count(levels.begin(), levels.end(), 1));
  }
  ColumnVector values(spec.type);
  STRATA_RETURN_IF_ERROR(DecodeValues(spec, data, body, offset, dictionary, present, &values));
  if (!spec.optional()) {
    *page = std::move(values);
    return absl::OkStatus();
  }
  // Spread the present values over the rows.
  *page = ColumnVector(spec.type);
  page->Reserve(n);
  size_t next = 0;
  for (size_t i = 0; i < n; ++i) {
    if (levels[i] == 0) {
      page->AppendNull();
    } else {
      page->AppendSlice(values, next, next + 1);
      ++next;
    }
  }
  if (page->validity.empty()) page->validity.assign(n, 1);
  return absl::OkStatus();
}

absl::Status FileReader::DecodeListPage(const ColumnSpec& spec, const PageHeader& header,
                                        std::string_view body, int64_t offset,
                                        const ColumnVector* dictionary, int64_t rows_left,
                                        int64_t skip_rows, ColumnVector* page,
                                        int64_t* page_rows) {
  const DataPageHeader& data = *header.data_page_header;
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
  const size_t n = static_cast<size_t>(data.num_values);
  std::vector<uint8_t> repetition(n), definition(n);
  if (absl::Status s = DecodeLevelsV1(&body, n, spec.max_repetition_level(), repetition.data());
      !s.ok()) {
    return Corrupt(offset, fmt::format("repetition levels: {}", std::string(s.message())));
  }
  if (repetition[0] != 0) return Corrupt(offset, "list data page starts inside a row");
  const int64_t rows = std::count(repetition.begin(), repetition.end(), 0);
  if (rows > rows_left) {
    return Corrupt(offset, fmt::format("list data page of {} rows where {} remain", rows, rows_left));
  }
  *page_rows = rows;
  // A page wholly before the wanted rows needs only its row count.
  if (rows <= skip_rows) return absl::OkStatus();

  const int max_definition = spec.max_definition_level();
  if (absl::Status s = DecodeLevelsV1(&body, n, max_definition, definition.data()); !s.ok()) {
    return Corrupt(offset, fmt::format("definition levels: {}", std::string(s.message())));
  }
  const uint8_t list_present = spec.list_optional() ? 1 : 0;
  size_t present = 0;
  for (size_t i = 0; i < n; ++i) {
    // Continuation entries are elements: their level is above "empty list".
    if (repetition[i] == 1 && definition[i] <= list_present) {
      return Corrupt(offset, fmt::format("level entry {}: an element of an empty or null list", i));
    }
    present += definition[i] == max_definition;
  }
  ColumnVector values(spec.type);
  STRATA_RETURN_IF_ERROR(DecodeValues(spec, data, body, offset, dictionary, present, &values));

  *page = ColumnVector::List(spec.type);
  page->Reserve(n);
  size_t next = 0;
  for (size_t i = 0; i < n; ++i) {
    const uint8_t level = definition[i];
    if (repetition[i] == 0) {
      if (spec.list_optional() && level == 0) {
        page->AppendNullList();
        continue;
      }
      page->AppendList(page->element_count(), 0);
      if (level == list_present) continue;  // empty list
    }
    if (level == max_definition) {
      page->AppendElements(values, next, next + 1);
      ++next;
    } else {
      page->AppendNull();
    }
    ++page->lists.back().count;
  }
  if (spec.optional() && page->validity.empty()) page->validity.assign(page->element_count(), 1);
  return absl::OkStatus();
}

absl::Status FileReader::ReadChunk(int row_group, int column, int64_t begin, int64_t end,
                                   ColumnVector* out) {
  const RowGroup& group = metadata_.row_groups[static_cast<size_t>(row_group)];
  const ColumnMetaData& meta = *group.columns[static_cast<size_t>(column)].meta_data;
  const ColumnSpec& spec = columns_[static_cast<size_t>(column)];
  int64_t pos = meta.dictionary_page_offset.value_or(meta.data_page_offset);
  const int64_t chunk_end = pos + meta.total_compressed_size;
  int64_t row = 0;
  bool have_dictionary = false;
  ColumnVector dictionary;
  ColumnVector page;
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
    if (header.compressed_page_size < 0 || header.uncompressed_page_size < 0 ||
        static_cast<size_t>(header.compressed_page_size) > options_.max_page_bytes ||
        static_cast<size_t>(header.uncompressed_page_size) > options_.max_page_bytes ||
        header.compressed_page_size > chunk_end - body_start) {
      return Corrupt(pos, fmt::format("page sizes {} / {} do not fit the column chunk",
                                      header.compressed_page_size, header.uncompressed_page_size));
    }
    const int64_t body_end = body_start + header.compressed_page_size;
    switch (header.type) {
      case PageType::kDictionaryPage:
        if (have_dictionary || row > 0) return Corrupt(pos, "dictionary page after data pages");
        STRATA_RETURN_IF_ERROR(ReadPageBody(body_start, header, meta.codec, &body));
        STRATA_RETURN_IF_ERROR(DecodeDictionary(spec, header, body, pos, &dictionary));
        have_dictionary = true;
        break;
      case PageType::kDataPage: {
        if (!header.data_page_header) return Corrupt(pos, "data page without its header");
        if (spec.list) {
          STRATA_RETURN_IF_ERROR(ReadPageBody(body_start, header, meta.codec, &body));
          int64_t page_rows = 0;
          STRATA_RETURN_IF_ERROR(DecodeListPage(spec, header, body, pos,
                                                have_dictionary ? &dictionary : nullptr,
                                                group.num_rows - row, begin - row, &page,
                                                &page_rows));
          if (row + page_rows > begin) {
            out->AppendSlice(page, static_cast<size_t>(std::max(begin, row) - row),
                             static_cast<size_t>(std::min(end, row + page_rows) - row));
          }
          row += page_rows;
          break;
        }
        const int64_t n = header.data_page_header->num_values;
        if (n < 0 || n > options_.max_values_per_page || n > group.num_rows - row) {
          return Corrupt(
              pos, fmt::format("data page of {} values at row {} of {}", n, row, group.num_rows));
        }
        if (row + n > begin) {
          STRATA_RETURN_IF_ERROR(ReadPageBody(body_start, header, meta.codec, &body));
          STRATA_RETURN_IF_ERROR(DecodeDataPage(spec, header, body, pos,
                                                   have_dictionary ? &dictionary : nullptr, &page));
          out->AppendSlice(page, static_cast<size_t>(std::max(begin, row) - row),
                           static_cast<size_t>(std::min(end, row + n) - row));
        }
        row += n;
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

}  // namespace strata::parquet
