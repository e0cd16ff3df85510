#include "storage/table/table_file.h"

#include <algorithm>
#include <bit>
#include <cstring>
#include <limits>
#include <utility>

#include "common/check.h"
#include "common/status_macros.h"
#include "fmt/format.h"
#include "otlp/any_value_codec.h"

namespace strata::storage {

using parquet::ColumnSpec;
using parquet::ColumnVector;
using parquet::ListRange;
using parquet::PhysicalType;

// ------------------------------------------------------------ file level

parquet::WriterOptions MakeWriterOptions(const TableOptions& options, std::string_view schema,
                                         std::string_view batch_id,
                                         std::vector<parquet::SortingColumn> sorting_columns) {
  parquet::WriterOptions out;
  out.codec = parquet::CompressionCodec::kZstd;
  out.zstd_level = options.zstd_level;
  out.column.data_page_bytes = options.page_bytes;
  out.column.data_page_max_rows = options.page_rows;
  out.column.dictionary_bytes_limit = options.dictionary_bytes_limit;
  out.row_group_max_bytes = options.row_group_bytes;
  out.row_group_max_rows = std::numeric_limits<int32_t>::max();
  out.sorting_columns = std::move(sorting_columns);
  out.key_value_metadata = {
      {kFormatKey, std::string(kFormatValue)},
      {kSchemaKey, std::string(schema)},
      {kBatchIdKey, std::string(batch_id)},
  };
  out.created_by = options.created_by;
  return out;
}

std::vector<parquet::ColumnWriterOptions> PerColumnOptions(
    const std::vector<ColumnSpec>& specs, const TableOptions& options,
    const parquet::ColumnWriterOptions& base, std::span<const ColumnZstdLevel> zstd_levels,
    std::span<const std::string_view> plain_columns) {
  auto find = [&](std::string_view name) {
    for (size_t i = 0; i < specs.size(); ++i) {
      if (specs[i].name == name) return i;
    }
    STRATA_CHECK(false, "per-column option names a column not in the schema");
    return specs.size();
  };
  std::vector<parquet::ColumnWriterOptions> out(specs.size(), base);
  for (parquet::ColumnWriterOptions& column : out) column.zstd_level = options.fast_zstd_level;
  for (const ColumnZstdLevel& c : zstd_levels) {
    out[find(c.column)].zstd_level = std::min(c.level, options.zstd_level);
  }
  for (std::string_view name : plain_columns) out[find(name)].dictionary_enabled = false;
  return out;
}

absl::StatusOr<std::string> WriteTableFile(const std::vector<ColumnSpec>& specs,
                                           std::span<const ColumnVector> columns,
                                           const parquet::WriterOptions& options) {
  std::string bytes;
  parquet::StringSink sink(&bytes);
  STRATA_ASSIGN_OR_RETURN(std::unique_ptr<parquet::FileWriter> writer,
                          parquet::FileWriter::Open(specs, options, &sink));
  STRATA_RETURN_IF_ERROR(writer->WriteBatch(columns));
  STRATA_RETURN_IF_ERROR(writer->Close());
  return bytes;
}

absl::StatusOr<int> FindColumn(const std::vector<ColumnSpec>& columns, std::string_view name,
                               std::string_view file_name) {
  for (size_t i = 0; i < columns.size(); ++i) {
    if (columns[i].name == name) return static_cast<int>(i);
  }
  return absl::DataLossError(fmt::format("{}: no column '{}'", file_name, name));
}

namespace {

std::string DescribeSpec(const ColumnSpec& spec) {
  return fmt::format("{}{} type {} logical {} width {} {} rep {} list_rep {} len {}", spec.name,
                     spec.list ? " (list)" : "", static_cast<int>(spec.type),
                     static_cast<int>(spec.logical_type.kind), spec.logical_type.bit_width,
                     spec.logical_type.is_signed ? "signed" : "unsigned",
                     static_cast<int>(spec.repetition), static_cast<int>(spec.list_repetition),
                     spec.type_length);
}

absl::Status CheckKeyValue(const parquet::FileMetaData& metadata, std::string_view key,
                           std::string_view want, std::string_view file_name) {
  const parquet::KeyValue* found = nullptr;
  for (const parquet::KeyValue& kv : metadata.key_value_metadata) {
    if (kv.key != key) continue;
    if (found != nullptr) {
      return absl::DataLossError(
          fmt::format("{}: key-value metadata repeats '{}'", file_name, key));
    }
    found = &kv;
  }
  if (found == nullptr || !found->value.has_value()) {
    return absl::DataLossError(fmt::format("{}: key-value metadata lacks '{}'", file_name, key));
  }
  if (*found->value != want) {
    return absl::DataLossError(fmt::format("{}: key-value metadata '{}' is '{}', want '{}'",
                                           file_name, key, *found->value, want));
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status AsDataLoss(const absl::Status& status, std::string_view file_name) {
  if (status.ok() || absl::IsDataLoss(status)) return status;
  if (absl::IsInvalidArgument(status) || absl::IsUnimplemented(status) ||
      absl::IsOutOfRange(status)) {
    return absl::DataLossError(fmt::format("{}: {}", file_name, std::string(status.message())));
  }
  return status;
}

absl::Status CheckTableSchema(const parquet::FileMetaData& metadata,
                              const std::vector<ColumnSpec>& columns,
                              const std::vector<ColumnSpec>& expected, std::string_view schema,
                              std::string_view batch_id, std::string_view file_name) {
  if (columns.size() != expected.size()) {
    return absl::DataLossError(fmt::format("{}: schema has {} columns, want {}", file_name,
                                           columns.size(), expected.size()));
  }
  for (size_t i = 0; i < columns.size(); ++i) {
    // A required list reads as an optional one whose lists are all present:
    // files written before attribute value lists became optional.
    ColumnSpec column = columns[i];
    if (expected[i].list_optional() && column.list) {
      column.list_repetition = parquet::Repetition::kOptional;
    }
    if (!(column == expected[i])) {
      return absl::DataLossError(fmt::format("{}: schema column {} is [{}], want [{}]", file_name,
                                             i, DescribeSpec(columns[i]),
                                             DescribeSpec(expected[i])));
    }
  }
  STRATA_RETURN_IF_ERROR(CheckKeyValue(metadata, kFormatKey, kFormatValue, file_name));
  STRATA_RETURN_IF_ERROR(CheckKeyValue(metadata, kSchemaKey, schema, file_name));
  return CheckKeyValue(metadata, kBatchIdKey, batch_id, file_name);
}

absl::StatusOr<std::unique_ptr<parquet::FileReader>> OpenTable(
    parquet::RandomAccessSource* source, const std::vector<ColumnSpec>& expected,
    std::string_view schema, std::string_view batch_id, std::string_view file_name) {
  parquet::ReaderOptions options;
  options.file_name = std::string(file_name);
  absl::StatusOr<std::unique_ptr<parquet::FileReader>> reader =
      parquet::FileReader::Open(source, options);
  if (!reader.ok()) return AsDataLoss(reader.status(), file_name);
  STRATA_RETURN_IF_ERROR(CheckTableSchema((*reader)->metadata(), (*reader)->columns(), expected,
                                          schema, batch_id, file_name));
  return reader;
}

absl::Status CheckTableFooter(parquet::RandomAccessSource* source,
                              const std::vector<ColumnSpec>& expected, std::string_view schema,
                              std::string_view batch_id, uint64_t expected_file_rows,
                              std::string_view file_name) {
  STRATA_ASSIGN_OR_RETURN(std::unique_ptr<parquet::FileReader> reader,
                          OpenTable(source, expected, schema, batch_id, file_name));
  if (reader->num_rows() < 0 || static_cast<uint64_t>(reader->num_rows()) != expected_file_rows) {
    return absl::DataLossError(fmt::format("{}: footer num_rows {} differs from file_rows {}",
                                           file_name, reader->num_rows(), expected_file_rows));
  }
  return absl::OkStatus();
}

absl::StatusOr<std::vector<ColumnVector>> ReadAllColumns(parquet::FileReader& reader,
                                                         std::string_view file_name) {
  std::vector<int> all(reader.columns().size());
  for (size_t i = 0; i < all.size(); ++i) all[i] = static_cast<int>(i);
  absl::StatusOr<std::vector<ColumnVector>> columns = reader.Read(all, 0, reader.num_rows());
  if (!columns.ok()) return AsDataLoss(columns.status(), file_name);
  return columns;
}

absl::StatusOr<std::vector<ColumnVector>> ReadTableRows(parquet::FileReader& reader,
                                                        std::string_view file_name,
                                                        uint64_t row_begin, uint64_t row_end) {
  const auto file_rows = static_cast<uint64_t>(std::max<int64_t>(reader.num_rows(), 0));
  if (row_begin >= row_end || row_end > file_rows) {
    return absl::DataLossError(fmt::format("{}: rows [{}, {}) asked for, the file has {} rows",
                                           file_name, row_begin, row_end, file_rows));
  }
  std::vector<int> all(reader.columns().size());
  for (size_t i = 0; i < all.size(); ++i) all[i] = static_cast<int>(i);
  absl::StatusOr<std::vector<ColumnVector>> columns =
      reader.Read(all, static_cast<int64_t>(row_begin), static_cast<int64_t>(row_end));
  if (!columns.ok()) return AsDataLoss(columns.status(), file_name);
  return columns;
}

std::string_view RetainBytes(ColumnVector* column, otlp::BatchBase* batch) {
  auto owned = std::make_shared<std::string>(std::move(column->bytes));
  column->bytes.clear();
  std::string_view view(*owned);
  batch->Retain(std::move(owned));
  return view;
}

absl::Status ColumnDataLoss(std::string_view file_name, std::string_view column, size_t row,
                            std::string_view what) {
  return absl::DataLossError(
      fmt::format("{}: column '{}' row {}: {}", file_name, column, row, what));
}

// ------------------------------------------------------------ row kind

void AppendRowKindSpec(std::vector<ColumnSpec>* specs) {
  specs->push_back(ColumnSpec::Integer("row_kind", 8, false));
}

void AppendElementCountSpec(std::string_view name, std::vector<ColumnSpec>* specs) {
  specs->push_back(ColumnSpec::List(ColumnSpec::Integer(std::string(name), 32, false)));
}

std::span<const uint32_t> ListU32(const ColumnVector& column, size_t row) {
  const ListRange range = column.lists[row];
  // int32_t and uint32_t may alias each other.
  return {reinterpret_cast<const uint32_t*>(column.int32s.data()) + range.begin,
          static_cast<size_t>(range.count)};
}

void AppendElementCounts(std::span<const otlp::Range> ranges, ColumnVector* counts) {
  counts->AppendList(counts->int32s.size(), ranges.size());
  for (const otlp::Range& r : ranges) counts->int32s.push_back(static_cast<int32_t>(r.count));
}

// ------------------------------------------------------------ the writers' base

TableFileWriter::TableFileWriter(std::string_view table, std::unique_ptr<parquet::FileWriter> file)
    : table_(table), file_(std::move(file)) {}

TableFileWriter::~TableFileWriter() = default;

void TableFileWriter::Fail(std::string_view what) {
  if (failure_.ok())
    failure_ = absl::InternalError(fmt::format("{} table writer: {}", table_, what));
}

absl::Status TableFileWriter::CheckRoom(uint64_t rows) {
  STRATA_RETURN_IF_ERROR(failure_);
  if (meta_.file_rows + rows >= std::numeric_limits<uint32_t>::max()) {
    Fail("too many rows for one file");
    return failure_;
  }
  return absl::OkStatus();
}

void TableFileWriter::ExtendEventTime(NanosRange range) {
  if (!meta_.event_time.has_value()) {
    meta_.event_time = range;
  } else {
    meta_.event_time->min = std::min(meta_.event_time->min, range.min);
    meta_.event_time->max = std::max(meta_.event_time->max, range.max);
  }
}

absl::StatusOr<SignalMeta> TableFileWriter::FinishFile() {
  if (meta_.file_rows == 0) Fail("a file needs at least one row");
  STRATA_RETURN_IF_ERROR(failure_);
  STRATA_RETURN_IF_ERROR(file_->Close());
  SignalMeta meta = meta_;
  if (!meta.event_time.has_value()) meta.event_time = NanosRange{0, 0};
  return meta;
}

}  // namespace strata::storage
