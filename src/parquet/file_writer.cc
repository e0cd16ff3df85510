#include "parquet/file_writer.h"

#include <cstring>
#include <utility>

#include "fmt/format.h"
#include "common/status_macros.h"

namespace strata::parquet {
namespace {

// The checks below first run a branch-free pass over the whole vector (one
// flag or-ed together, which the compiler vectorizes: the writer validates
// every row it writes, so this is on the hot path) and walk row by row only
// when that pass finds something, to name the first bad row.

// Whether every present list's range is inside the elements and at most
// kMaxPageValues long, and no list is null in a required list column.
bool ListsLookValid(const ColumnSpec& spec, const ColumnVector& v) {
  const uint64_t elements = v.element_count();
  const ListRange* lists = v.lists.data();
  const size_t rows = v.lists.size();
  bool bad = false;
  if (v.list_validity.empty()) {
    for (size_t row = 0; row < rows; ++row) {
      const ListRange r = lists[row];
      bad |= (r.begin > elements) | (r.count > elements - r.begin) |
             (r.count > ColumnWriter::kMaxPageValues);
    }
    return !bad;
  }
  // A required list column may carry all-ones list validity.
  if (!spec.list_optional() && std::memchr(v.list_validity.data(), 0, rows) != nullptr) {
    return false;
  }
  const uint8_t* present = v.list_validity.data();
  for (size_t row = 0; row < rows; ++row) {
    const ListRange r = lists[row];
    const bool out = (r.begin > elements) | (r.count > elements - r.begin) |
                     (r.count > ColumnWriter::kMaxPageValues);
    bad |= (present[row] != 0) & out;
  }
  return !bad;
}

// Whether a byte-array vector's offsets never decrease and every value is
// at most 1 GiB long, and (FIXED_LEN_BYTE_ARRAY) every present value is
// type_length bytes. An unsigned difference of decreasing offsets wraps to
// a huge length, so one comparison catches both.
bool OffsetsLookValid(const ColumnSpec& spec, const ColumnVector& v, size_t first,
                      size_t elements) {
  constexpr uint64_t kMaxLength = INT32_MAX / 2;
  const uint64_t* offsets = v.offsets.data();
  bool bad = false;
  if (spec.type != PhysicalType::kFixedLenByteArray) {
    for (size_t i = first; i < elements; ++i) bad |= offsets[i + 1] - offsets[i] > kMaxLength;
    return !bad;
  }
  const uint64_t width = static_cast<uint64_t>(spec.type_length);
  if (v.validity.empty()) {
    for (size_t i = first; i < elements; ++i) {
      const uint64_t length = offsets[i + 1] - offsets[i];
      bad |= (length != width) | (length > kMaxLength);
    }
    return !bad;
  }
  const uint8_t* present = v.validity.data();
  for (size_t i = first; i < elements; ++i) {
    const uint64_t length = offsets[i + 1] - offsets[i];
    bad |= ((present[i] != 0) & (length != width)) | (length > kMaxLength);
  }
  return !bad;
}

// Ranges a batch's columns share (ListRanges copies: an attribute family's
// columns) whose every range, null or not, was found inside `elements`
// elements and short enough: another column sharing them with as many
// elements needs no second pass.
struct CheckedRanges {
  const ColumnVector* column = nullptr;
  uint64_t elements = 0;
};

// The list part of a LIST vector: validity sizes, no null list in a required
// list, every range inside the elements and short enough for one page.
absl::Status ValidateLists(const ColumnSpec& spec, const ColumnVector& v, CheckedRanges* checked) {
  auto error = [&](std::string_view what) {
    return absl::InvalidArgumentError(fmt::format("column '{}': {}", spec.name, what));
  };
  const size_t rows = v.lists.size();
  const uint64_t elements = v.element_count();
  if (!v.list_validity.empty() && v.list_validity.size() != rows) {
    return error("list validity size differs from the row count");
  }
  const bool null_in_required = !spec.list_optional() && !v.list_validity.empty() &&
                                std::memchr(v.list_validity.data(), 0, rows) != nullptr;
  if (checked->column != nullptr && checked->column->lists.SharesWith(v.lists) &&
      checked->elements == elements && !null_in_required) {
    return absl::OkStatus();
  }
  if (ListsLookValid(spec, v)) {
    // Without list validity every range was checked.
    if (v.list_validity.empty()) *checked = {&v, elements};
    return absl::OkStatus();
  }
  // Something is wrong: find the first bad row for the message.
  for (size_t row = 0; row < rows; ++row) {
    if (v.is_null_list(row)) {
      if (!spec.list_optional()) return error(fmt::format("row {}: null in a required list", row));
      continue;
    }
    const ListRange range = v.lists[row];
    if (range.begin > elements || range.count > elements - range.begin) {
      return error(fmt::format("row {}: list [{}, +{}) outside the {} elements", row, range.begin,
                               range.count, elements));
    }
    if (range.count > ColumnWriter::kMaxPageValues) {
      return error(fmt::format("row {}: a list of {} elements (at most {})", row, range.count,
                               ColumnWriter::kMaxPageValues));
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<std::unique_ptr<FileWriter>> FileWriter::Open(std::vector<ColumnSpec> columns,
                                                             WriterOptions options,
                                                             ByteSink* sink) {
  if (columns.empty()) return absl::InvalidArgumentError("a Parquet file needs a column");
  for (const ColumnSpec& spec : columns) STRATA_RETURN_IF_ERROR(ValidateColumnSpec(spec));
  for (size_t i = 0; i < columns.size(); ++i) {
    for (size_t j = 0; j < i; ++j) {
      if (columns[i].name == columns[j].name) {
        return absl::InvalidArgumentError(fmt::format("duplicate column '{}'", columns[i].name));
      }
    }
  }
  if (options.codec != CompressionCodec::kUncompressed &&
      options.codec != CompressionCodec::kZstd) {
    return absl::InvalidArgumentError("codec must be UNCOMPRESSED or ZSTD");
  }
  if (options.row_group_max_rows <= 0 || options.row_group_max_rows > INT32_MAX ||
      options.column.data_page_max_rows == 0 || options.column.data_page_max_rows > (1u << 22) ||
      options.column.data_page_bytes == 0) {
    return absl::InvalidArgumentError("row group and page limits must be positive and sane");
  }
  if (!options.column_options.empty() && options.column_options.size() != columns.size()) {
    return absl::InvalidArgumentError("column_options needs one entry per column");
  }
  for (const ColumnWriterOptions& column : options.column_options) {
    if (column.data_page_max_rows == 0 || column.data_page_max_rows > (1u << 22) ||
        column.data_page_bytes == 0) {
      return absl::InvalidArgumentError("page limits must be positive and sane");
    }
  }
  for (const SortingColumn& s : options.sorting_columns) {
    if (s.column_idx < 0 || static_cast<size_t>(s.column_idx) >= columns.size()) {
      return absl::InvalidArgumentError(
          fmt::format("sorting column index {} out of range", s.column_idx));
    }
  }
  std::unique_ptr<FileWriter> writer(new FileWriter(std::move(columns), std::move(options), sink));
  STRATA_RETURN_IF_ERROR(writer->Write(kMagic));
  return writer;
}

FileWriter::FileWriter(std::vector<ColumnSpec> columns, WriterOptions options, ByteSink* sink)
    : columns_(std::move(columns)),
      options_(std::move(options)),
      sink_(sink),
      compressor_(options_.codec, options_.zstd_level) {
  writers_.reserve(columns_.size());
  for (size_t c = 0; c < columns_.size(); ++c) {
    const ColumnWriterOptions& column =
        options_.column_options.empty() ? options_.column : options_.column_options[c];
    writers_.push_back(std::make_unique<ColumnWriter>(columns_[c], column, &compressor_));
  }
  metadata_.version = 1;
  metadata_.schema = ToSchemaElements(columns_);
  metadata_.key_value_metadata = options_.key_value_metadata;
  metadata_.created_by = options_.created_by;
  metadata_.column_orders.assign(columns_.size(), 1);  // TYPE_ORDER
}

absl::Status FileWriter::Fail(absl::Status status) {
  if (failure_.ok()) failure_ = status;
  return status;
}

absl::Status FileWriter::Write(std::string_view bytes) {
  if (absl::Status s = sink_->Append(bytes); !s.ok()) return Fail(s);
  offset_ += static_cast<int64_t>(bytes.size());
  return absl::OkStatus();
}

absl::Status FileWriter::ValidateBatch(std::span<const ColumnVector* const> columns, bool chunk) {
  if (columns.size() != columns_.size()) {
    return absl::InvalidArgumentError(
        fmt::format("batch has {} columns, schema has {}", columns.size(), columns_.size()));
  }
  checked_elements_.resize(columns_.size());
  const size_t rows = columns[0]->size();
  CheckedRanges checked;
  for (size_t c = 0; c < columns.size(); ++c) {
    const ColumnSpec& spec = columns_[c];
    const ColumnVector& v = *columns[c];
    auto error = [&](std::string_view what) {
      return absl::InvalidArgumentError(fmt::format("column '{}': {}", spec.name, what));
    };
    if (v.type != spec.type) return error("vector type differs from the column type");
    if (v.is_list != spec.list) return error("list and flat vectors do not mix");
    if (v.size() != rows) return error(fmt::format("{} rows, expected {}", v.size(), rows));
    const size_t elements = v.element_count();
    // The elements an earlier chunk of this vector checked (WriteChunk).
    CheckedElements& earlier = checked_elements_[c];
    const size_t first =
        chunk && earlier.vector == &v && earlier.elements <= elements ? earlier.elements : 0;
    earlier = {};
    if (spec.list) STRATA_RETURN_IF_ERROR(ValidateLists(spec, v, &checked));
    if (!v.validity.empty()) {
      if (v.validity.size() != elements) {
        return error("validity size differs from the value count");
      }
      if (!spec.optional() &&
          std::memchr(v.validity.data() + first, 0, elements - first) != nullptr) {
        return error("null in a required column");
      }
    }
    if (spec.type == PhysicalType::kByteArray || spec.type == PhysicalType::kFixedLenByteArray) {
      if (v.offsets.empty() || v.offsets[0] != 0 || v.offsets.back() != v.bytes.size()) {
        return error("byte offsets do not cover the bytes");
      }
      if (!OffsetsLookValid(spec, v, first, elements)) {
        for (size_t i = first; i < elements; ++i) {
          if (v.offsets[i + 1] < v.offsets[i]) return error("byte offsets decrease");
          const uint64_t length = v.offsets[i + 1] - v.offsets[i];
          if (spec.type == PhysicalType::kFixedLenByteArray && !v.is_null(i) &&
              length != static_cast<uint64_t>(spec.type_length)) {
            return error(fmt::format("row {} has {} bytes, the column holds {}", i, length,
                                     spec.type_length));
          }
          if (length > INT32_MAX / 2) return error("a value longer than 1 GiB");
        }
      }
    }
    if (chunk) earlier = {&v, elements};
  }
  return absl::OkStatus();
}

absl::Status FileWriter::WriteBatch(std::span<const ColumnVector> columns) {
  std::vector<const ColumnVector*> pointers;
  pointers.reserve(columns.size());
  for (const ColumnVector& c : columns) pointers.push_back(&c);
  return WriteColumns(pointers, /*chunk=*/false);
}

absl::Status FileWriter::WriteChunk(std::span<const ColumnVector* const> columns, bool first) {
  if (first) checked_elements_.clear();
  return WriteColumns(columns, /*chunk=*/true);
}

absl::Status FileWriter::WriteColumns(std::span<const ColumnVector* const> columns, bool chunk) {
  if (!failure_.ok()) return failure_;
  if (closed_) return absl::FailedPreconditionError("write after Close");
  STRATA_RETURN_IF_ERROR(ValidateBatch(columns, chunk));
  const size_t rows = columns[0]->size();
  for (auto& writer : writers_) writer->BeginBatch();
  size_t begin = 0;
  while (begin < rows) {
    const size_t room = static_cast<size_t>(options_.row_group_max_rows - row_group_rows_);
    const size_t end = begin + std::min({rows - begin, room, kRowsPerSlice});
    size_t buffered = 0;
    for (size_t c = 0; c < writers_.size(); ++c) {
      if (absl::Status s = writers_[c]->AppendRows(*columns[c], begin, end); !s.ok()) {
        return Fail(s);
      }
      buffered += writers_[c]->buffered_bytes();
    }
    row_group_rows_ += static_cast<int64_t>(end - begin);
    rows_written_ += static_cast<int64_t>(end - begin);
    begin = end;
    if (row_group_rows_ >= options_.row_group_max_rows ||
        buffered >= options_.row_group_max_bytes) {
      STRATA_RETURN_IF_ERROR(FlushRowGroup());
    }
  }
  return absl::OkStatus();
}

absl::Status FileWriter::FlushRowGroup() {
  if (row_group_rows_ == 0) return absl::OkStatus();
  RowGroup group;
  group.num_rows = row_group_rows_;
  group.file_offset = offset_;
  if (metadata_.row_groups.size() <= INT16_MAX) {
    group.ordinal = static_cast<int16_t>(metadata_.row_groups.size());
  }
  group.sorting_columns = options_.sorting_columns;
  int64_t compressed = 0;
  for (auto& writer : writers_) {
    const int64_t start = offset_;
    // The column writer writes through a sink that keeps offset_ current.
    CallbackSink counting([this](std::string_view bytes) { return Write(bytes); });
    OffsetIndex& offset_index = offset_indexes_.emplace_back();
    absl::StatusOr<ColumnChunk> chunk = writer->FlushChunk(start, counting, &offset_index);
    if (!chunk.ok()) return Fail(chunk.status());
    group.total_byte_size += chunk->meta_data->total_uncompressed_size;
    compressed += chunk->meta_data->total_compressed_size;
    group.columns.push_back(*std::move(chunk));
  }
  group.total_compressed_size = compressed;
  metadata_.num_rows += row_group_rows_;
  metadata_.row_groups.push_back(std::move(group));
  row_group_rows_ = 0;
  return absl::OkStatus();
}

absl::Status FileWriter::WriteOffsetIndexes() {
  // Chunks in file order: row group by row group, column by column, the
  // order FlushRowGroup appended them in; all handed to the sink at once.
  std::string bytes;
  size_t next = 0;
  for (RowGroup& group : metadata_.row_groups) {
    for (ColumnChunk& chunk : group.columns) {
      if (next >= offset_indexes_.size()) return Fail(absl::InternalError("offset index missing"));
      const size_t start = bytes.size();
      SerializeOffsetIndex(offset_indexes_[next++], &bytes);
      if (bytes.size() - start > INT32_MAX) {
        return Fail(absl::InternalError("offset index too large"));
      }
      chunk.offset_index_offset = offset_ + static_cast<int64_t>(start);
      chunk.offset_index_length = static_cast<int32_t>(bytes.size() - start);
    }
  }
  offset_indexes_.clear();
  return Write(bytes);
}

absl::Status FileWriter::Close() {
  if (!failure_.ok()) return failure_;
  if (closed_) return absl::FailedPreconditionError("Close called twice");
  STRATA_RETURN_IF_ERROR(FlushRowGroup());
  STRATA_RETURN_IF_ERROR(WriteOffsetIndexes());
  std::string footer;
  SerializeFileMetaData(metadata_, &footer);
  const uint32_t length = static_cast<uint32_t>(footer.size());
  char length_bytes[4];
  std::memcpy(length_bytes, &length, 4);
  footer.append(length_bytes, 4);
  footer.append(kMagic);
  STRATA_RETURN_IF_ERROR(Write(footer));
  closed_ = true;
  return absl::OkStatus();
}

}  // namespace strata::parquet
