#include "storage/table/table_common.h"

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

// ------------------------------------------------------------ attributes

void AppendAttributeFamilySpecs(std::string_view prefix, std::vector<ColumnSpec>* specs) {
  const std::string p(prefix);
  specs->push_back(ColumnSpec::List(ColumnSpec::String(p + "_keys")));
  specs->push_back(ColumnSpec::List(ColumnSpec::Integer(p + "_types", 8, false)));
  // Value lists are optional: null when no element has a value there.
  specs->push_back(ColumnSpec::List(ColumnSpec::String(p + "_str", true), true));
  specs->push_back(ColumnSpec::List(ColumnSpec::Int64(p + "_int", true), true));
  specs->push_back(ColumnSpec::List(ColumnSpec::Double(p + "_double", true), true));
  specs->push_back(ColumnSpec::List(ColumnSpec::Boolean(p + "_bool", true), true));
  specs->push_back(ColumnSpec::List(ColumnSpec::Bytes(p + "_bytes", true), true));
}

namespace {

// Element appenders for optional element columns whose validity is always
// kept (one byte per element), so nothing has to be back-filled.
inline void PushNull(ColumnVector& c) {
  c.validity.push_back(0);
  switch (c.type) {
    case PhysicalType::kBoolean:
      c.bools.push_back(0);
      break;
    case PhysicalType::kInt32:
      c.int32s.push_back(0);
      break;
    case PhysicalType::kInt64:
      c.int64s.push_back(0);
      break;
    case PhysicalType::kDouble:
      c.doubles.push_back(0);
      break;
    default:
      c.offsets.push_back(c.bytes.size());
  }
}
inline void PushBytes(ColumnVector& c, std::string_view v) {
  c.bytes.append(v.data(), v.size());
  c.offsets.push_back(c.bytes.size());
}

}  // namespace

AttributeFamilyWriter::AttributeFamilyWriter()
    : keys_(ColumnVector::List(PhysicalType::kByteArray)),
      types_(ColumnVector::List(PhysicalType::kInt32)),
      str_(ColumnVector::List(PhysicalType::kByteArray)),
      int_(ColumnVector::List(PhysicalType::kInt64)),
      double_(ColumnVector::List(PhysicalType::kDouble)),
      bool_(ColumnVector::List(PhysicalType::kBoolean)),
      bytes_(ColumnVector::List(PhysicalType::kByteArray)) {}

void AttributeFamilyWriter::Reserve(size_t rows, size_t elements) {
  for (ColumnVector* c : {&keys_, &types_, &str_, &int_, &double_, &bool_, &bytes_}) {
    c->Reserve(elements);
  }
  for (ColumnVector* c : {&str_, &int_, &double_, &bool_, &bytes_}) c->validity.reserve(elements);
  rows_.reserve(rows);
  present_.reserve(rows);
  // Typical keys and string values are a few dozen bytes.
  keys_.bytes.reserve(elements * 16);
  str_.bytes.reserve(elements * 16);
}

void AttributeFamilyWriter::AppendElements(const otlp::BatchBase& batch,
                                           const otlp::AttributeColumns& table, otlp::Range range) {
  STRATA_CHECK(range.end() <= table.size(), "attribute range outside its table");
  const size_t n = range.count;
  if (n == 0) return;
  // Every value column gets a null slot per element first (one bulk fill),
  // then the one slot the element's type names is set.
  const size_t at = types_.int32s.size();
  types_.int32s.resize(at + n);
  int_.int64s.resize(at + n, 0);
  double_.doubles.resize(at + n, 0);
  bool_.bools.resize(at + n, 0);
  for (ColumnVector* c : {&str_, &int_, &double_, &bool_, &bytes_}) c->validity.resize(at + n, 0);
  // No reserve(size() + n) here: called once per row, an exact reserve
  // would reallocate every time (quadratic); push_back grows geometrically.
  const otlp::ValueColumns& v = table.value;
  for (size_t k = 0; k < n; ++k) {
    const uint32_t row = range.begin + static_cast<uint32_t>(k);
    const size_t e = at + k;
    PushBytes(keys_, table.key[row]);
    const otlp::ValueType type = v.type[row];
    types_.int32s[e] = static_cast<int32_t>(type);
    switch (type) {
      case otlp::ValueType::kString:
        str_.validity[e] = 1;
        str_.bytes.append(v.str[row].data(), v.str[row].size());
        break;
      case otlp::ValueType::kInt:
        int_.validity[e] = 1;
        int_.int64s[e] = static_cast<int64_t>(v.bits[row]);
        break;
      case otlp::ValueType::kDouble:
        double_.validity[e] = 1;
        std::memcpy(&double_.doubles[e], &v.bits[row], sizeof(double));
        break;
      case otlp::ValueType::kBool:
        bool_.validity[e] = 1;
        bool_.bools[e] = v.bits[row] != 0 ? 1 : 0;
        break;
      case otlp::ValueType::kBytes:
        bytes_.validity[e] = 1;
        bytes_.bytes.append(v.str[row].data(), v.str[row].size());
        break;
      case otlp::ValueType::kArray:
      case otlp::ValueType::kKvList:
        bytes_.validity[e] = 1;
        otlp::EncodeAnyValueProto(batch, v, row, &bytes_.bytes);
        break;
      case otlp::ValueType::kEmpty:
        break;
    }
    str_.offsets.push_back(str_.bytes.size());
    bytes_.offsets.push_back(bytes_.bytes.size());
  }
}

FamilyElements AttributeFamilyWriter::AddElements(const otlp::BatchBase& batch,
                                                  const otlp::AttributeColumns& table,
                                                  otlp::Range range) {
  const FamilyElements elements{keys_.offsets.size() - 1, range.count};
  AppendElements(batch, table, range);
  return elements;
}

FamilyElements AttributeFamilyWriter::AppendRow(const otlp::BatchBase& batch,
                                                const otlp::AttributeColumns& table,
                                                otlp::Range range) {
  const FamilyElements elements = AddElements(batch, table, range);
  AppendSharedRow(elements);
  return elements;
}

FamilyElements AttributeFamilyWriter::AppendConcatenatedRow(const otlp::BatchBase& batch,
                                                            const otlp::AttributeColumns& table,
                                                            std::span<const otlp::Range> ranges) {
  FamilyElements elements{keys_.offsets.size() - 1, 0};
  for (const otlp::Range& r : ranges) {
    AppendElements(batch, table, r);
    elements.count += r.count;
  }
  AppendSharedRow(elements);
  return elements;
}

uint64_t AttributeFamilyWriter::AddTable(const otlp::BatchBase& batch,
                                         const otlp::AttributeColumns& table) {
  return AddElements(batch, table, {0, static_cast<uint32_t>(table.size())}).begin;
}

void AttributeFamilyWriter::AppendTableRow(uint64_t base, otlp::Range range) {
  AppendSharedRow({base + range.begin, range.count});
}

void AttributeFamilyWriter::AppendTableConcatenatedRow(uint64_t base, const otlp::BatchBase& batch,
                                                       const otlp::AttributeColumns& table,
                                                       std::span<const otlp::Range> ranges) {
  // The decoders lay each parent's children out one after another, so the
  // ranges are usually adjacent and the row can share the table's elements.
  bool adjacent = true;
  uint64_t begin = 0, count = 0;
  bool started = false;
  for (const otlp::Range& r : ranges) {
    if (r.count == 0) continue;
    if (!started) {
      begin = r.begin;
      started = true;
    } else if (begin + count != r.begin) {
      adjacent = false;
      break;
    }
    count += r.count;
  }
  if (adjacent) {
    AppendSharedRow({base + begin, count});
  } else {
    AppendConcatenatedRow(batch, table, ranges);
  }
}

namespace {

// Bit (1 << value column, 2..6) of the value list a type code's value is in;
// 0 for kEmpty (and for codes the writer never produces).
constexpr uint8_t kValueListBit[8] = {0, 1 << 2, 1 << 5, 1 << 3, 1 << 4, 1 << 6, 1 << 6, 1 << 6};

}  // namespace

void AttributeFamilyWriter::AppendSharedRow(FamilyElements elements) {
  // Rows sharing elements (a resource's on every span) come in runs.
  if (elements.begin != last_elements_.begin || elements.count != last_elements_.count) {
    uint8_t present = 0;
    const int32_t* types = types_.int32s.data() + elements.begin;
    for (uint64_t k = 0; k < elements.count; ++k) present |= kValueListBit[types[k] & 7];
    last_elements_ = elements;
    last_present_ = present;
  }
  parquet::PushListRange(&rows_, elements.begin, elements.count);
  present_.push_back(last_present_);
}

void AttributeFamilyWriter::SetLists() {
  // Every column of the family lists the same elements per row; a value
  // list is null where the row has no value of its type (its range is then
  // ignored, so it can stay the row's).
  const size_t rows = rows_.size();
  const parquet::ListRanges shared(std::move(rows_));
  rows_ = {};
  for (ColumnVector* c : {&keys_, &types_, &str_, &int_, &double_, &bool_, &bytes_}) {
    c->lists = shared;
  }
  for (ColumnVector* c : {&str_, &int_, &double_, &bool_, &bytes_}) c->list_validity.resize(rows);
  uint8_t* validity[] = {str_.list_validity.data(), int_.list_validity.data(),
                         double_.list_validity.data(), bool_.list_validity.data(),
                         bytes_.list_validity.data()};
  const uint8_t* present = present_.data();
  for (int c = 0; c < 5; ++c) {
    uint8_t* v = validity[c];
    const int bit = c + 2;
    for (size_t row = 0; row < rows; ++row) v[row] = (present[row] >> bit) & 1;
  }
  present_.clear();
  last_elements_ = {};
  last_present_ = 0;
}

void AttributeFamilyWriter::MoveColumnsTo(std::vector<ColumnVector>* out) {
  SetLists();
  for (ColumnVector* c : {&keys_, &types_, &str_, &int_, &double_, &bool_, &bytes_}) {
    out->push_back(std::move(*c));
    *c = ColumnVector::List(out->back().type);
  }
  present_ = {};
}

void AttributeFamilyWriter::ExposeRows(std::vector<const ColumnVector*>* out) {
  SetLists();
  for (const ColumnVector* c : {&keys_, &types_, &str_, &int_, &double_, &bool_, &bytes_}) {
    out->push_back(c);
  }
}

void AttributeFamilyWriter::ClearRows() {
  for (ColumnVector* c : {&keys_, &types_, &str_, &int_, &double_, &bool_, &bytes_}) {
    c->ClearLists();
  }
  rows_.reserve(present_.capacity());  // SetLists handed rows_ over; as many rows next
}

// ---------------------------------------------------- AttributeFamilyReader

namespace {

constexpr const char* kFamilySuffixes[kAttributeFamilyColumns] = {
    "_keys", "_types", "_str", "_int", "_double", "_bool", "_bytes"};

// Which value column (index into the family, 2..6) a type code's value is
// in; 0 for kEmpty.
int ValueColumnOf(otlp::ValueType type) {
  switch (type) {
    case otlp::ValueType::kString:
      return 2;
    case otlp::ValueType::kInt:
      return 3;
    case otlp::ValueType::kDouble:
      return 4;
    case otlp::ValueType::kBool:
      return 5;
    case otlp::ValueType::kBytes:
    case otlp::ValueType::kArray:
    case otlp::ValueType::kKvList:
      return 6;
    case otlp::ValueType::kEmpty:
      return 0;
  }
  return 0;
}

}  // namespace

absl::StatusOr<AttributeFamilyReader> AttributeFamilyReader::Make(std::span<ColumnVector> columns,
                                                                  std::string_view prefix,
                                                                  std::string_view file_name,
                                                                  otlp::BatchBase* batch,
                                                                  StringOwnership ownership) {
  STRATA_CHECK(columns.size() == kAttributeFamilyColumns, "an attribute family has seven columns");
  AttributeFamilyReader reader;
  reader.file_name_ = std::string(file_name);
  reader.prefix_ = std::string(prefix);
  auto name = [&](int c) { return std::string(prefix) + kFamilySuffixes[c]; };
  const size_t rows = columns[0].size();
  for (int c = 0; c < kAttributeFamilyColumns; ++c) {
    const ColumnVector& v = columns[c];
    if (!v.is_list || v.size() != rows) {
      return ColumnDataLoss(file_name, name(c), 0, "not a list column of the family's length");
    }
    // A value list (2..6) may be null: no element has a value in it.
    if (c >= 2) continue;
    for (size_t r = 0; r < v.list_validity.size(); ++r) {
      if (v.list_validity[r] == 0) return ColumnDataLoss(file_name, name(c), r, "null list");
    }
  }
  reader.copy_ = ownership == StringOwnership::kCopyToArena;
  const std::string_view keys = reader.copy_ ? columns[0].bytes : RetainBytes(&columns[0], batch);
  const std::string_view strs = reader.copy_ ? columns[2].bytes : RetainBytes(&columns[2], batch);
  const std::string_view bytes = reader.copy_ ? columns[6].bytes : RetainBytes(&columns[6], batch);

  reader.lists_.reserve(rows);
  const size_t elements = columns[0].element_count();
  reader.keys_.reserve(elements);
  reader.types_.reserve(elements);
  reader.payload_.reserve(elements);
  reader.bits_.reserve(elements);
  for (size_t r = 0; r < rows; ++r) {
    const uint64_t count = columns[0].lists[r].count;
    bool null_list[kAttributeFamilyColumns] = {};
    for (int c = 1; c < kAttributeFamilyColumns; ++c) {
      null_list[c] = columns[c].is_null_list(r);
      if (!null_list[c] && columns[c].lists[r].count != count) {
        return ColumnDataLoss(file_name, name(c), r,
                              fmt::format("list has {} elements, {} has {}",
                                          columns[c].lists[r].count, name(0), count));
      }
    }
    reader.lists_.push_back({reader.keys_.size(), count});
    for (uint64_t k = 0; k < count; ++k) {
      uint64_t at[kAttributeFamilyColumns];
      for (int c = 0; c < kAttributeFamilyColumns; ++c) at[c] = columns[c].lists[r].begin + k;
      if (columns[0].is_null(at[0])) return ColumnDataLoss(file_name, name(0), r, "null key");
      const int32_t code = columns[1].int32s[at[1]];
      if (columns[1].is_null(at[1]) || code < 0 || code > 7) {
        return ColumnDataLoss(file_name, name(1), r,
                              fmt::format("type code {} outside 0..7", code));
      }
      const auto type = static_cast<otlp::ValueType>(code);
      const int value_column = ValueColumnOf(type);
      for (int c = 2; c < kAttributeFamilyColumns; ++c) {
        if ((null_list[c] || columns[c].is_null(at[c])) == (c != value_column)) continue;
        return ColumnDataLoss(
            file_name, name(c), r,
            fmt::format("element {} of type {} breaks the one-value-per-element rule", k, code));
      }
      reader.keys_.push_back(BytesAt(columns[0], keys, at[0]));
      reader.types_.push_back(type);
      std::string_view payload;
      uint64_t bits = 0;
      switch (value_column) {
        case 2:
          payload = BytesAt(columns[2], strs, at[2]);
          break;
        case 3:
          bits = static_cast<uint64_t>(columns[3].int64s[at[3]]);
          break;
        case 4:
          std::memcpy(&bits, &columns[4].doubles[at[4]], sizeof bits);
          break;
        case 5:
          bits = columns[5].bools[at[5]] != 0 ? 1 : 0;
          break;
        case 6:
          payload = BytesAt(columns[6], bytes, at[6]);
          break;
        default:
          break;
      }
      reader.payload_.push_back(payload);
      reader.bits_.push_back(bits);
    }
  }
  return reader;
}

absl::Status AttributeFamilyReader::AppendElement(uint64_t element, otlp::BatchBase* batch,
                                                  otlp::AttributeColumns* table) const {
  const otlp::ValueType type = types_[element];
  // Nested values decoded from the payload view into it too.
  const std::string_view payload = copy_ ? batch->arena.Copy(payload_[element]) : payload_[element];
  otlp::ValueRow value{type, payload, bits_[element]};
  if (type == otlp::ValueType::kArray || type == otlp::ValueType::kKvList) {
    absl::Status decoded = otlp::DecodeAnyValueProto(payload, batch, &value);
    if (!decoded.ok() || value.type != type) {
      return absl::DataLossError(fmt::format(
          "{}: column '{}_bytes': attribute '{}' (type {}) does not hold a valid encoded {}: {}",
          file_name_, prefix_, keys_[element], static_cast<int>(type),
          type == otlp::ValueType::kArray ? "array" : "kvlist",
          decoded.ok() ? "wrong value type" : std::string(decoded.message())));
    }
  }
  table->Append({copy_ ? batch->arena.Copy(keys_[element]) : keys_[element], value});
  return absl::OkStatus();
}

absl::StatusOr<otlp::Range> AttributeFamilyReader::AppendRow(size_t row, otlp::BatchBase* batch,
                                                             otlp::AttributeColumns* table) const {
  const ListRange list = lists_[row];
  if (table->size() + list.count > std::numeric_limits<uint32_t>::max()) {
    return ColumnDataLoss(file_name_, prefix_ + "_keys", row, "too many attributes");
  }
  const otlp::Range range{static_cast<uint32_t>(table->size()), static_cast<uint32_t>(list.count)};
  for (uint64_t e = list.begin; e < list.begin + list.count; ++e) {
    STRATA_RETURN_IF_ERROR(AppendElement(e, batch, table));
  }
  return range;
}

absl::Status AttributeFamilyReader::AppendSplitRow(size_t row, std::span<const uint32_t> counts,
                                                   otlp::BatchBase* batch,
                                                   otlp::AttributeColumns* table,
                                                   std::vector<otlp::Range>* out) const {
  out->clear();
  uint64_t total = 0;
  for (uint32_t c : counts) total += c;
  if (total != lists_[row].count) {
    return ColumnDataLoss(
        file_name_, prefix_ + "_count", row,
        fmt::format("counts sum to {}, the row holds {} attributes", total, lists_[row].count));
  }
  STRATA_ASSIGN_OR_RETURN(const otlp::Range all, AppendRow(row, batch, table));
  uint32_t begin = all.begin;
  for (uint32_t c : counts) {
    out->push_back({begin, c});
    begin += c;
  }
  return absl::OkStatus();
}

// ------------------------------------------------------ resource and scope

void AppendResourceScopeSpecs(std::vector<ColumnSpec>* specs) {
  specs->push_back(ColumnSpec::Integer("resource_index", 32, false));
  specs->push_back(ColumnSpec::String("resource_schema_url"));
  specs->push_back(ColumnSpec::Integer("resource_dropped_attributes_count", 32, false));
  AppendAttributeFamilySpecs("resource_attr", specs);
  specs->push_back(ColumnSpec::List(ColumnSpec::String("resource_entity_schema_url")));
  specs->push_back(ColumnSpec::List(ColumnSpec::String("resource_entity_type")));
  AppendElementCountSpec("resource_entity_id_key_count", specs);
  specs->push_back(ColumnSpec::List(ColumnSpec::String("resource_entity_id_keys")));
  AppendElementCountSpec("resource_entity_description_key_count", specs);
  specs->push_back(ColumnSpec::List(ColumnSpec::String("resource_entity_description_keys")));
  specs->push_back(ColumnSpec::Integer("scope_index", 32, false, true));
  specs->push_back(ColumnSpec::String("scope_name", true));
  specs->push_back(ColumnSpec::String("scope_version", true));
  specs->push_back(ColumnSpec::String("scope_schema_url", true));
  specs->push_back(ColumnSpec::Integer("scope_dropped_attributes_count", 32, false, true));
  AppendAttributeFamilySpecs("scope_attr", specs);
}

ResourceScopeWriter::ResourceScopeWriter()
    : resource_index_(PhysicalType::kInt32),
      resource_schema_url_(PhysicalType::kByteArray),
      resource_dropped_(PhysicalType::kInt32),
      entity_schema_url_(ColumnVector::List(PhysicalType::kByteArray)),
      entity_type_(ColumnVector::List(PhysicalType::kByteArray)),
      entity_id_key_count_(ColumnVector::List(PhysicalType::kInt32)),
      entity_id_keys_(ColumnVector::List(PhysicalType::kByteArray)),
      entity_description_key_count_(ColumnVector::List(PhysicalType::kInt32)),
      entity_description_keys_(ColumnVector::List(PhysicalType::kByteArray)),
      scope_index_(PhysicalType::kInt32),
      scope_name_(PhysicalType::kByteArray),
      scope_version_(PhysicalType::kByteArray),
      scope_schema_url_(PhysicalType::kByteArray),
      scope_dropped_(PhysicalType::kInt32) {}

void ResourceScopeWriter::Reserve(size_t rows) {
  for (ColumnVector* c :
       {&resource_index_, &resource_schema_url_, &resource_dropped_, &scope_index_, &scope_name_,
        &scope_version_, &scope_schema_url_, &scope_dropped_}) {
    c->Reserve(rows);
  }
  entity_lists_.reserve(rows);
  entity_id_keys_.lists.reserve(rows);
  entity_description_keys_.lists.reserve(rows);
  resource_attributes_.Reserve(rows, 0);
  scope_attributes_.Reserve(rows, 0);
}

uint32_t ResourceScopeWriter::AddBatch(const otlp::BatchBase& batch) {
  BatchState state;
  state.batch = &batch;
  state.resource_base = next_resource_base_;
  state.scope_base = next_scope_base_;
  state.resources.resize(batch.resources.size());
  state.scopes.resize(batch.scopes.size());
  next_resource_base_ += static_cast<uint32_t>(batch.resources.size());
  next_scope_base_ += static_cast<uint32_t>(batch.scopes.size());
  batches_.push_back(std::move(state));
  return static_cast<uint32_t>(batches_.size() - 1);
}

uint32_t ResourceScopeWriter::AddBatch(const otlp::BatchBase& batch,
                                       std::vector<uint32_t> resource_index,
                                       std::vector<uint32_t> scope_index) {
  STRATA_CHECK(
      resource_index.size() == batch.resources.size() && scope_index.size() == batch.scopes.size(),
      "one file index per resource and scope row");
  BatchState state;
  state.batch = &batch;
  state.resource_index = std::move(resource_index);
  state.scope_index = std::move(scope_index);
  state.resources.resize(batch.resources.size());
  state.scopes.resize(batch.scopes.size());
  batches_.push_back(std::move(state));
  return static_cast<uint32_t>(batches_.size() - 1);
}

void ResourceScopeWriter::BuildResource(const otlp::BatchBase& b, ResourceElements* cache,
                                        uint32_t resource) {
  cache->built = true;
  // The attribute elements, written once; every row of the resource shares them.
  cache->attributes =
      resource_attributes_.AddElements(b, b.resource_attributes, b.resources.attributes[resource]);
  const otlp::Range refs = b.resources.entity_refs[resource];
  STRATA_CHECK(refs.end() <= b.entity_refs.size(), "entity ref range outside its table");
  cache->entities = {entity_type_.offsets.size() - 1, refs.count};
  cache->id_keys = {entity_id_keys_.offsets.size() - 1, 0};
  cache->description_keys = {entity_description_keys_.offsets.size() - 1, 0};
  for (uint32_t e = refs.begin; e < refs.end(); ++e) {
    PushBytes(entity_schema_url_, b.entity_refs.schema_url[e]);
    PushBytes(entity_type_, b.entity_refs.type[e]);
    const otlp::Range ids = b.entity_refs.id_keys[e];
    const otlp::Range descriptions = b.entity_refs.description_keys[e];
    STRATA_CHECK(ids.end() <= b.entity_keys.size() && descriptions.end() <= b.entity_keys.size(),
                 "entity key range outside its table");
    entity_id_key_count_.int32s.push_back(static_cast<int32_t>(ids.count));
    entity_description_key_count_.int32s.push_back(static_cast<int32_t>(descriptions.count));
    for (uint32_t k = ids.begin; k < ids.end(); ++k) PushBytes(entity_id_keys_, b.entity_keys[k]);
    for (uint32_t k = descriptions.begin; k < descriptions.end(); ++k) {
      PushBytes(entity_description_keys_, b.entity_keys[k]);
    }
    cache->id_keys.count += ids.count;
    cache->description_keys.count += descriptions.count;
  }
}

void ResourceScopeWriter::AppendRow(uint32_t batch, uint32_t resource,
                                    std::optional<uint32_t> scope) {
  STRATA_CHECK(batch < batches_.size(), "batch number not registered");
  BatchState& state = batches_[batch];
  const otlp::BatchBase& b = *state.batch;
  STRATA_CHECK(resource < b.resources.size(), "resource row out of range");
  ResourceElements& rc = state.resources[resource];
  if (!rc.built) BuildResource(b, &rc, resource);
  resource_index_.int32s.push_back(static_cast<int32_t>(file_resource_index(batch, resource)));
  PushBytes(resource_schema_url_, b.resources.schema_url[resource]);
  resource_dropped_.int32s.push_back(
      static_cast<int32_t>(b.resources.dropped_attributes_count[resource]));
  resource_attributes_.AppendSharedRow(rc.attributes);
  entity_lists_.push_back(rc.entities);
  entity_id_keys_.lists.push_back(rc.id_keys);
  entity_description_keys_.lists.push_back(rc.description_keys);

  if (!scope.has_value()) {
    for (ColumnVector* c :
         {&scope_index_, &scope_name_, &scope_version_, &scope_schema_url_, &scope_dropped_}) {
      c->AppendNull();
    }
    scope_attributes_.AppendEmptyRow();
    return;
  }
  const uint32_t s = *scope;
  STRATA_CHECK(s < b.scopes.size() && b.scopes.resource[s] == resource,
               "scope row out of range or of another resource");
  ScopeElements& sc = state.scopes[s];
  if (!sc.built) {
    sc.built = true;
    sc.attributes = scope_attributes_.AddElements(b, b.scope_attributes, b.scopes.attributes[s]);
  }
  scope_attributes_.AppendSharedRow(sc.attributes);
  scope_index_.AppendInt32(static_cast<int32_t>(file_scope_index(batch, s)));
  scope_name_.AppendBytes(b.scopes.name[s]);
  scope_version_.AppendBytes(b.scopes.version[s]);
  scope_schema_url_.AppendBytes(b.scopes.schema_url[s]);
  scope_dropped_.AppendInt32(static_cast<int32_t>(b.scopes.dropped_attributes_count[s]));
}

template <typename ColumnFn, typename FamilyFn>
void ResourceScopeWriter::VisitInOrder(ColumnFn&& column, FamilyFn&& family) {
  // The four per-entity columns list the same entities per row.
  const parquet::ListRanges entities(std::move(entity_lists_));
  entity_lists_ = {};
  for (ColumnVector* c : {&entity_schema_url_, &entity_type_, &entity_id_key_count_,
                          &entity_description_key_count_}) {
    c->lists = entities;
  }
  for (ColumnVector* c : {&resource_index_, &resource_schema_url_, &resource_dropped_}) column(c);
  family(resource_attributes_);
  for (ColumnVector* c :
       {&entity_schema_url_, &entity_type_, &entity_id_key_count_, &entity_id_keys_,
        &entity_description_key_count_, &entity_description_keys_, &scope_index_, &scope_name_,
        &scope_version_, &scope_schema_url_, &scope_dropped_}) {
    column(c);
  }
  family(scope_attributes_);
}

void ResourceScopeWriter::ExposeRows(std::vector<const ColumnVector*>* out) {
  VisitInOrder([&](ColumnVector* c) { out->push_back(c); },
               [&](AttributeFamilyWriter& family) { family.ExposeRows(out); });
}

void ResourceScopeWriter::ClearRows() {
  for (ColumnVector* c :
       {&resource_index_, &resource_schema_url_, &resource_dropped_, &scope_index_, &scope_name_,
        &scope_version_, &scope_schema_url_, &scope_dropped_}) {
    c->Clear();
  }
  for (ColumnVector* c :
       {&entity_schema_url_, &entity_type_, &entity_id_key_count_, &entity_id_keys_,
        &entity_description_key_count_, &entity_description_keys_}) {
    c->ClearLists();
  }
  resource_attributes_.ClearRows();
  scope_attributes_.ClearRows();
  entity_lists_.reserve(resource_index_.int32s.capacity());
}

void ResourceScopeWriter::MoveColumnsTo(std::vector<ColumnVector>* out) {
  VisitInOrder([&](ColumnVector* c) { out->push_back(std::move(*c)); },
               [&](AttributeFamilyWriter& family) { family.MoveColumnsTo(out); });
  *this = ResourceScopeWriter();
}

// ------------------------------------------------ resource and scope, read

namespace {

// Column offsets within the resource and scope columns.
enum ResourceScopeColumn : int {
  kResourceIndex = 0,
  kResourceSchemaUrl = 1,
  kResourceDropped = 2,
  kResourceAttributes = 3,
  kEntitySchemaUrl = 10,
  kEntityType = 11,
  kEntityIdKeyCount = 12,
  kEntityIdKeys = 13,
  kEntityDescriptionKeyCount = 14,
  kEntityDescriptionKeys = 15,
  kScopeIndex = 16,
  kScopeName = 17,
  kScopeVersion = 18,
  kScopeSchemaUrl = 19,
  kScopeDropped = 20,
  kScopeAttributes = 21,
};
static_assert(kScopeAttributes + kAttributeFamilyColumns == kResourceScopeColumns);
static_assert(kResourceIndex == kResourceIndexOffset && kScopeIndex == kScopeIndexOffset);

// For each index 0..max of an index column (null rows skipped), the first
// row holding it. DataLoss unless the indexes are dense.
absl::StatusOr<std::vector<uint32_t>> FirstRows(const ColumnVector& index, std::string_view column,
                                                std::string_view file_name) {
  const size_t rows = index.size();
  std::vector<uint32_t> first;
  for (size_t r = 0; r < rows; ++r) {
    if (index.is_null(r)) continue;
    const auto value = static_cast<uint32_t>(index.int32s[r]);
    // Dense indexes never exceed the row count; checking first keeps a
    // corrupt value from sizing the vector.
    if (value >= rows) {
      return ColumnDataLoss(file_name, column, r,
                            fmt::format("index {} is not below the row count {}", value, rows));
    }
    if (value >= first.size()) first.resize(value + 1, UINT32_MAX);
    if (first[value] == UINT32_MAX) first[value] = static_cast<uint32_t>(r);
  }
  for (size_t i = 0; i < first.size(); ++i) {
    if (first[i] == UINT32_MAX) {
      return absl::DataLossError(
          fmt::format("{}: column '{}': indexes are not dense, {} is missing below {}", file_name,
                      column, i, first.size() - 1));
    }
  }
  return first;
}

// The entity refs of the resource on row `row`, appended to the batch.
absl::StatusOr<otlp::Range> ReadEntityRefs(std::span<ColumnVector> c, size_t row,
                                           const std::string_view* views,
                                           std::string_view file_name, otlp::BatchBase* batch) {
  const uint64_t refs = c[kEntityType].lists[row].count;
  for (int k : {kEntitySchemaUrl, kEntityIdKeyCount, kEntityDescriptionKeyCount}) {
    if (c[k].lists[row].count != refs) {
      return ColumnDataLoss(file_name,
                            k == kEntitySchemaUrl    ? "resource_entity_schema_url"
                            : k == kEntityIdKeyCount ? "resource_entity_id_key_count"
                                                     : "resource_entity_description_key_count",
                            row, "length differs from resource_entity_type");
    }
  }
  const std::span<const uint32_t> id_counts = ListU32(c[kEntityIdKeyCount], row);
  const std::span<const uint32_t> description_counts = ListU32(c[kEntityDescriptionKeyCount], row);
  uint64_t id_total = 0, description_total = 0;
  for (uint32_t n : id_counts) id_total += n;
  for (uint32_t n : description_counts) description_total += n;
  if (id_total != c[kEntityIdKeys].lists[row].count) {
    return ColumnDataLoss(file_name, "resource_entity_id_keys", row,
                          "length differs from the sum of resource_entity_id_key_count");
  }
  if (description_total != c[kEntityDescriptionKeys].lists[row].count) {
    return ColumnDataLoss(file_name, "resource_entity_description_keys", row,
                          "length differs from the sum of resource_entity_description_key_count");
  }
  // The views are into the columns, which the batch does not keep.
  auto copy = [batch](std::string_view bytes) { return batch->arena.Copy(bytes); };
  const otlp::Range out{static_cast<uint32_t>(batch->entity_refs.size()),
                        static_cast<uint32_t>(refs)};
  uint64_t next_id = c[kEntityIdKeys].lists[row].begin;
  uint64_t next_description = c[kEntityDescriptionKeys].lists[row].begin;
  for (uint64_t e = 0; e < refs; ++e) {
    otlp::EntityRefRow ref;
    ref.schema_url = copy(BytesAt(c[kEntitySchemaUrl], views[kEntitySchemaUrl],
                                  c[kEntitySchemaUrl].lists[row].begin + e));
    ref.type =
        copy(BytesAt(c[kEntityType], views[kEntityType], c[kEntityType].lists[row].begin + e));
    ref.id_keys = {static_cast<uint32_t>(batch->entity_keys.size()), id_counts[e]};
    for (uint32_t k = 0; k < id_counts[e]; ++k) {
      batch->entity_keys.push_back(
          copy(BytesAt(c[kEntityIdKeys], views[kEntityIdKeys], next_id++)));
    }
    ref.description_keys = {static_cast<uint32_t>(batch->entity_keys.size()),
                            description_counts[e]};
    for (uint32_t k = 0; k < description_counts[e]; ++k) {
      batch->entity_keys.push_back(copy(
          BytesAt(c[kEntityDescriptionKeys], views[kEntityDescriptionKeys], next_description++)));
    }
    batch->entity_refs.Append(ref);
  }
  return out;
}

}  // namespace

absl::StatusOr<RowOwners> RebuildResourcesAndScopes(std::span<ColumnVector> c,
                                                    std::string_view file_name,
                                                    otlp::BatchBase* batch) {
  STRATA_CHECK(c.size() == kResourceScopeColumns, "resource and scope column count");
  const size_t rows = c[kResourceIndex].size();
  // Every row repeats its resource's and scope's columns, but the batch
  // needs them once per resource and scope: their strings are copied into
  // the batch's arena rather than the whole columns retained.
  std::string_view views[kScopeAttributes];
  for (int k : {kResourceSchemaUrl, kEntitySchemaUrl, kEntityType, kEntityIdKeys,
                kEntityDescriptionKeys, kScopeName, kScopeVersion, kScopeSchemaUrl}) {
    views[k] = c[k].bytes;
  }
  auto copy = [batch](std::string_view bytes) { return batch->arena.Copy(bytes); };
  STRATA_ASSIGN_OR_RETURN(const std::vector<uint32_t> resource_rows,
                          FirstRows(c[kResourceIndex], "resource_index", file_name));
  STRATA_ASSIGN_OR_RETURN(const std::vector<uint32_t> scope_rows,
                          FirstRows(c[kScopeIndex], "scope_index", file_name));
  STRATA_ASSIGN_OR_RETURN(
      AttributeFamilyReader resource_attributes,
      AttributeFamilyReader::Make(c.subspan(kResourceAttributes, kAttributeFamilyColumns),
                                  "resource_attr", file_name, batch,
                                  AttributeFamilyReader::StringOwnership::kCopyToArena));
  STRATA_ASSIGN_OR_RETURN(
      AttributeFamilyReader scope_attributes,
      AttributeFamilyReader::Make(c.subspan(kScopeAttributes, kAttributeFamilyColumns),
                                  "scope_attr", file_name, batch,
                                  AttributeFamilyReader::StringOwnership::kCopyToArena));

  const auto resource_base = static_cast<uint32_t>(batch->resources.size());
  const auto scope_base = static_cast<uint32_t>(batch->scopes.size());
  for (uint32_t row : resource_rows) {
    otlp::ResourceRow resource;
    STRATA_ASSIGN_OR_RETURN(resource.attributes,
                            resource_attributes.AppendRow(row, batch, &batch->resource_attributes));
    resource.dropped_attributes_count = static_cast<uint32_t>(c[kResourceDropped].int32s[row]);
    STRATA_ASSIGN_OR_RETURN(resource.entity_refs, ReadEntityRefs(c, row, views, file_name, batch));
    resource.schema_url = copy(BytesAt(c[kResourceSchemaUrl], views[kResourceSchemaUrl], row));
    batch->resources.Append(resource);
  }
  for (uint32_t row : scope_rows) {
    for (int k : {kScopeName, kScopeVersion, kScopeSchemaUrl, kScopeDropped}) {
      if (c[k].is_null(row)) {
        return ColumnDataLoss(file_name, "scope_name, scope_version, scope_schema_url", row,
                              "null on a row with a scope_index");
      }
    }
    otlp::ScopeRow scope;
    scope.resource = resource_base + static_cast<uint32_t>(c[kResourceIndex].int32s[row]);
    scope.name = copy(BytesAt(c[kScopeName], views[kScopeName], row));
    scope.version = copy(BytesAt(c[kScopeVersion], views[kScopeVersion], row));
    STRATA_ASSIGN_OR_RETURN(scope.attributes,
                            scope_attributes.AppendRow(row, batch, &batch->scope_attributes));
    scope.dropped_attributes_count = static_cast<uint32_t>(c[kScopeDropped].int32s[row]);
    scope.schema_url = copy(BytesAt(c[kScopeSchemaUrl], views[kScopeSchemaUrl], row));
    batch->scopes.Append(scope);
  }

  RowOwners owners;
  owners.resource.resize(rows);
  owners.scope.resize(rows);
  for (size_t r = 0; r < rows; ++r) {
    const auto resource = static_cast<uint32_t>(c[kResourceIndex].int32s[r]);
    owners.resource[r] = resource_base + resource;
    if (c[kScopeIndex].is_null(r)) {
      owners.scope[r] = RowOwners::kNoScope;
      continue;
    }
    const auto scope = static_cast<uint32_t>(c[kScopeIndex].int32s[r]);
    owners.scope[r] = scope_base + scope;
    if (batch->scopes.resource[scope_base + scope] != resource_base + resource) {
      return ColumnDataLoss(
          file_name, "scope_index", r,
          fmt::format("scope {} appears under resources {} and {}", scope,
                      batch->scopes.resource[scope_base + scope] - resource_base, resource));
    }
  }
  return owners;
}

std::vector<uint32_t> RenumberDense(ColumnVector* index) {
  std::vector<uint32_t> values;
  values.reserve(index->int32s.size());
  for (size_t r = 0; r < index->int32s.size(); ++r) {
    if (!index->is_null(r)) values.push_back(static_cast<uint32_t>(index->int32s[r]));
  }
  std::sort(values.begin(), values.end());
  values.erase(std::unique(values.begin(), values.end()), values.end());
  for (size_t r = 0; r < index->int32s.size(); ++r) {
    if (index->is_null(r)) continue;
    const auto it =
        std::lower_bound(values.begin(), values.end(), static_cast<uint32_t>(index->int32s[r]));
    index->int32s[r] = static_cast<int32_t>(it - values.begin());
  }
  return values;
}

// ------------------------------------------------------------ promotion

void PromotionMisses::Add(std::string_view key, uint64_t rows) {
  for (auto& [k, n] : counts_) {
    if (k == key) {
      n += rows;
      return;
    }
  }
  counts_.emplace_back(key, rows);
}

void PromotionMisses::AddTo(std::map<std::string, uint64_t>* out) const {
  for (const auto& [k, n] : counts_) (*out)[std::string(k)] += n;
}

namespace {

constexpr size_t kMaxPromotedKeyLength = 64;
constexpr size_t kMaxPromotedSources = 32;

// A key's first 8 bytes (zero-padded when shorter), compared before the rest.
uint64_t KeyHead(std::string_view key) {
  uint64_t head = 0;
  std::memcpy(&head, key.data(), std::min<size_t>(8, key.size()));
  return head;
}

}  // namespace

PromotionMatcher::PromotionMatcher(std::vector<PromotionRule> rules)
    : rules_(std::move(rules)), by_length_(kMaxPromotedKeyLength + 1) {
  for (size_t r = 0; r < rules_.size(); ++r) {
    for (size_t p = 0; p < rules_[r].keys.size(); ++p) {
      const std::string_view key = rules_[r].keys[p];
      STRATA_CHECK(key.size() <= kMaxPromotedKeyLength, "promoted key too long");
      const Source source{key, KeyHead(key), static_cast<uint32_t>(r),
                          static_cast<uint32_t>(sources_.size())};
      by_length_[key.size()].push_back(source);
      sources_.push_back(source);
    }
  }
  STRATA_CHECK(sources_.size() <= kMaxPromotedSources, "too many promoted source keys");
}

void PromotionMatcher::Match(const otlp::AttributeColumns& table, otlp::Range range,
                             std::vector<int64_t>* out,
                             std::vector<std::string_view>* missed) const {
  // first[slot] is the row of the slot's first occurrence where bit slot of
  // `found` is set, and unset otherwise.
  static_assert(kMaxPromotedSources <= 64);
  std::array<int64_t, kMaxPromotedSources> first;
  uint64_t found = 0;
  for (uint32_t i = range.begin; i < range.end(); ++i) {
    const std::string_view key = table.key[i];
    if (key.size() > kMaxPromotedKeyLength) continue;
    const std::vector<Source>& candidates = by_length_[key.size()];
    if (candidates.empty()) continue;
    const uint64_t head = KeyHead(key);
    for (const Source& s : candidates) {
      if (s.head != head || (found >> s.slot & 1) != 0) continue;
      if (key.size() <= 8 || std::memcmp(s.key.data() + 8, key.data() + 8, key.size() - 8) == 0) {
        first[s.slot] = i;
        found |= uint64_t{1} << s.slot;
        break;
      }
    }
  }
  out->assign(rules_.size(), -1);
  // Slots were numbered rule by rule, keys in priority order, so the found
  // slots in ascending order meet each rule's keys in priority order; a
  // rule's first key of the right type gives its value.
  for (; found != 0; found &= found - 1) {
    const int slot = std::countr_zero(found);
    const Source& source = sources_[slot];
    if ((*out)[source.rule] >= 0) continue;
    if (table.value.type[first[slot]] == rules_[source.rule].type) {
      (*out)[source.rule] = first[slot];
    } else {
      missed->push_back(source.key);
    }
  }
}

void AppendResourcePromotedSpecs(std::vector<ColumnSpec>* specs) {
  specs->push_back(ColumnSpec::String("service_name", true));
  specs->push_back(ColumnSpec::String("service_version", true));
  specs->push_back(ColumnSpec::String("deployment_environment", true));
}

ResourcePromotedWriter::ResourcePromotedWriter()
    : matcher_({{"service_name", {"service.name"}, otlp::ValueType::kString},
                {"service_version", {"service.version"}, otlp::ValueType::kString},
                {"deployment_environment",
                 {"deployment.environment.name", "deployment.environment"},
                 otlp::ValueType::kString}}) {
  for (ColumnVector& c : columns_) c = ColumnVector(PhysicalType::kByteArray);
}

void ResourcePromotedWriter::Reserve(size_t rows) {
  for (ColumnVector& c : columns_) {
    c.Reserve(rows);
    c.validity.reserve(rows);
  }
}

uint32_t ResourcePromotedWriter::AddBatch(const otlp::BatchBase& batch) {
  BatchState state;
  state.batch = &batch;
  state.resources.resize(batch.resources.size());
  batches_.push_back(std::move(state));
  return static_cast<uint32_t>(batches_.size() - 1);
}

void ResourcePromotedWriter::AppendRow(uint32_t batch, uint32_t resource, PromotionMisses* misses) {
  STRATA_CHECK(batch < batches_.size(), "batch number not registered");
  BatchState& state = batches_[batch];
  const otlp::BatchBase& b = *state.batch;
  STRATA_CHECK(resource < b.resources.size(), "resource row out of range");
  Derived& d = state.resources[resource];
  if (!d.built) {
    d.built = true;
    matcher_.Match(b.resource_attributes, b.resources.attributes[resource], &d.value_row,
                   &d.missed);
  }
  for (int i = 0; i < kResourcePromotedColumns; ++i) {
    const int64_t row = d.value_row[i];
    AppendOptionalString(&columns_[i], row < 0 ? std::nullopt
                                               : std::optional<std::string_view>(
                                                     b.resource_attributes.value.str[row]));
  }
  for (std::string_view key : d.missed) misses->Add(key);
}

void ResourcePromotedWriter::AppendNullRow() {
  for (ColumnVector& c : columns_) AppendOptionalString(&c, std::nullopt);
}

void ResourcePromotedWriter::ExposeRows(std::vector<const ColumnVector*>* out) const {
  for (const ColumnVector& c : columns_) out->push_back(&c);
}

void ResourcePromotedWriter::ClearRows() {
  for (ColumnVector& c : columns_) c.Clear();
}

void ResourcePromotedWriter::MoveColumnsTo(std::vector<ColumnVector>* out) {
  for (ColumnVector& c : columns_) {
    out->push_back(std::move(c));
    c = ColumnVector(PhysicalType::kByteArray);
  }
  batches_.clear();
  current_ = 0;
}

void AppendOptionalString(ColumnVector* column, std::optional<std::string_view> value) {
  if (value.has_value()) {
    column->validity.push_back(1);
    PushBytes(*column, *value);
  } else {
    PushNull(*column);
  }
}

}  // namespace strata::storage
