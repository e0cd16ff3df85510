#include "storage/table/attribute_family.h"

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

}  // namespace strata::storage
