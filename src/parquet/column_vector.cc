#include "parquet/column_vector.h"

#include <algorithm>
#include <cstring>
#include <utility>

#include "fmt/format.h"

namespace strata::parquet {
namespace {

ColumnSpec Make(std::string name, PhysicalType type, bool optional) {
  ColumnSpec spec;
  spec.name = std::move(name);
  spec.type = type;
  spec.repetition = optional ? Repetition::kOptional : Repetition::kRequired;
  return spec;
}

absl::Status SpecError(const ColumnSpec& spec, std::string_view what) {
  return absl::InvalidArgumentError(fmt::format("column '{}': {}", spec.name, what));
}

}  // namespace

ColumnSpec ColumnSpec::Boolean(std::string name, bool optional) {
  return Make(std::move(name), PhysicalType::kBoolean, optional);
}
ColumnSpec ColumnSpec::Int32(std::string name, bool optional) {
  return Make(std::move(name), PhysicalType::kInt32, optional);
}
ColumnSpec ColumnSpec::Int64(std::string name, bool optional) {
  return Make(std::move(name), PhysicalType::kInt64, optional);
}
ColumnSpec ColumnSpec::Double(std::string name, bool optional) {
  return Make(std::move(name), PhysicalType::kDouble, optional);
}
ColumnSpec ColumnSpec::Bytes(std::string name, bool optional) {
  return Make(std::move(name), PhysicalType::kByteArray, optional);
}
ColumnSpec ColumnSpec::String(std::string name, bool optional) {
  ColumnSpec spec = Make(std::move(name), PhysicalType::kByteArray, optional);
  spec.logical_type.kind = LogicalType::Kind::kString;
  return spec;
}
ColumnSpec ColumnSpec::FixedBytes(std::string name, int32_t length, bool optional) {
  ColumnSpec spec = Make(std::move(name), PhysicalType::kFixedLenByteArray, optional);
  spec.type_length = length;
  return spec;
}
ColumnSpec ColumnSpec::TimestampNanos(std::string name, bool optional) {
  ColumnSpec spec = Make(std::move(name), PhysicalType::kInt64, optional);
  spec.logical_type.kind = LogicalType::Kind::kTimestamp;
  spec.logical_type.unit = TimeUnit::kNanos;
  spec.logical_type.is_adjusted_to_utc = true;
  return spec;
}
ColumnSpec ColumnSpec::Integer(std::string name, int bits, bool is_signed, bool optional) {
  ColumnSpec spec =
      Make(std::move(name), bits == 64 ? PhysicalType::kInt64 : PhysicalType::kInt32, optional);
  spec.logical_type.kind = LogicalType::Kind::kInteger;
  spec.logical_type.bit_width = static_cast<int8_t>(bits);
  spec.logical_type.is_signed = is_signed;
  return spec;
}

ColumnSpec ColumnSpec::List(ColumnSpec element, bool optional_list) {
  element.list = true;
  element.list_repetition = optional_list ? Repetition::kOptional : Repetition::kRequired;
  return element;
}

absl::Status ValidateColumnSpec(const ColumnSpec& spec) {
  if (spec.name.empty()) return SpecError(spec, "empty name");
  if (spec.repetition != Repetition::kRequired && spec.repetition != Repetition::kOptional) {
    return SpecError(spec, "only required and optional values are supported");
  }
  if (spec.list_repetition != Repetition::kRequired &&
      (!spec.list || spec.list_repetition != Repetition::kOptional)) {
    return SpecError(spec, "a list is required or optional; a flat column has no list repetition");
  }
  switch (spec.type) {
    case PhysicalType::kBoolean:
    case PhysicalType::kInt32:
    case PhysicalType::kInt64:
    case PhysicalType::kDouble:
    case PhysicalType::kByteArray:
      if (spec.type_length != 0) return SpecError(spec, "type_length set on a variable type");
      break;
    case PhysicalType::kFixedLenByteArray:
      if (spec.type_length <= 0) return SpecError(spec, "FIXED_LEN_BYTE_ARRAY needs a length");
      break;
    default:
      return SpecError(spec,
                       fmt::format("unsupported physical type {}", static_cast<int>(spec.type)));
  }
  const LogicalType& t = spec.logical_type;
  switch (t.kind) {
    case LogicalType::Kind::kNone:
      return absl::OkStatus();
    case LogicalType::Kind::kString:
      if (spec.type != PhysicalType::kByteArray) return SpecError(spec, "STRING needs BYTE_ARRAY");
      return absl::OkStatus();
    case LogicalType::Kind::kTimestamp:
      if (spec.type != PhysicalType::kInt64) return SpecError(spec, "TIMESTAMP needs INT64");
      if (t.unit != TimeUnit::kMillis && t.unit != TimeUnit::kMicros &&
          t.unit != TimeUnit::kNanos) {
        return SpecError(spec, "bad TIMESTAMP unit");
      }
      return absl::OkStatus();
    case LogicalType::Kind::kInteger: {
      const bool int32_width = t.bit_width == 8 || t.bit_width == 16 || t.bit_width == 32;
      if ((spec.type == PhysicalType::kInt32 && int32_width) ||
          (spec.type == PhysicalType::kInt64 && t.bit_width == 64)) {
        return absl::OkStatus();
      }
      return SpecError(spec, "INTEGER bit width does not match the physical type");
    }
    case LogicalType::Kind::kList:
    case LogicalType::Kind::kOther:
      break;
  }
  return SpecError(spec, "unsupported logical type");
}

namespace {

std::optional<ConvertedType> ConvertedFor(const ColumnSpec& spec) {
  const LogicalType& t = spec.logical_type;
  switch (t.kind) {
    case LogicalType::Kind::kString:
      return ConvertedType::kUtf8;
    case LogicalType::Kind::kTimestamp:
      // Only MILLIS and MICROS have a converted type; NANOS has none.
      if (t.unit == TimeUnit::kMillis) return ConvertedType::kTimestampMillis;
      if (t.unit == TimeUnit::kMicros) return ConvertedType::kTimestampMicros;
      return std::nullopt;
    case LogicalType::Kind::kInteger: {
      const int index = t.bit_width == 8 ? 0 : t.bit_width == 16 ? 1 : t.bit_width == 32 ? 2 : 3;
      const int base = t.is_signed ? static_cast<int>(ConvertedType::kInt8)
                                   : static_cast<int>(ConvertedType::kUint8);
      return static_cast<ConvertedType>(base + index);
    }
    default:
      return std::nullopt;
  }
}

}  // namespace

std::vector<SchemaElement> ToSchemaElements(const std::vector<ColumnSpec>& columns) {
  std::vector<SchemaElement> schema;
  schema.reserve(columns.size() + 1);
  SchemaElement& root = schema.emplace_back();
  root.name = "schema";
  root.num_children = static_cast<int32_t>(columns.size());
  for (const ColumnSpec& spec : columns) {
    if (spec.list) {
      SchemaElement& outer = schema.emplace_back();
      outer.repetition_type = spec.list_repetition;
      outer.name = spec.name;
      outer.num_children = 1;
      outer.converted_type = ConvertedType::kList;
      outer.logical_type.kind = LogicalType::Kind::kList;
      SchemaElement& middle = schema.emplace_back();
      middle.repetition_type = Repetition::kRepeated;
      middle.name = "list";
      middle.num_children = 1;
    }
    SchemaElement& e = schema.emplace_back();
    e.type = spec.type;
    if (spec.type == PhysicalType::kFixedLenByteArray) e.type_length = spec.type_length;
    e.repetition_type = spec.repetition;
    e.name = spec.list ? "element" : spec.name;
    e.converted_type = ConvertedFor(spec);
    e.logical_type = spec.logical_type;
  }
  return schema;
}

namespace {

bool IsGroup(const SchemaElement& e) { return !e.type || (e.num_children && *e.num_children != 0); }

// Checks schema[i], a group, and its two descendants form a three-level LIST
// of a primitive; sets *list_repetition.
absl::Status CheckListGroup(const std::vector<SchemaElement>& schema, size_t i,
                            Repetition* list_repetition) {
  const SchemaElement& outer = schema[i];
  auto error = [&](std::string_view what) {
    return absl::InvalidArgumentError(
        fmt::format("schema element {} ('{}'): {}; only three-level LISTs of primitives are "
                    "supported",
                    i, outer.name, what));
  };
  const bool annotated = outer.logical_type.kind == LogicalType::Kind::kList ||
                         (outer.converted_type && *outer.converted_type == ConvertedType::kList);
  if (!annotated) return error("group without a LIST annotation");
  if (outer.type || !outer.num_children || *outer.num_children != 1) {
    return error("LIST group must have one child");
  }
  *list_repetition = outer.repetition_type.value_or(Repetition::kRequired);
  if (*list_repetition != Repetition::kRequired && *list_repetition != Repetition::kOptional) {
    return error("repeated LIST group");
  }
  if (i + 2 >= schema.size()) return error("LIST group is missing its levels");
  const SchemaElement& middle = schema[i + 1];
  if (middle.type || !middle.num_children || *middle.num_children != 1 ||
      middle.repetition_type != Repetition::kRepeated || middle.name != "list") {
    return error("the LIST's middle level must be 'repeated group list' with one child");
  }
  const SchemaElement& leaf = schema[i + 2];
  if (IsGroup(leaf) || leaf.name != "element") {
    return error("the LIST's element must be a primitive named 'element'");
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<std::vector<ColumnSpec>> FromSchemaElements(
    const std::vector<SchemaElement>& schema) {
  if (schema.empty()) return absl::InvalidArgumentError("schema is empty");
  const SchemaElement& root = schema[0];
  if (root.type || !root.num_children || *root.num_children < 0) {
    return absl::InvalidArgumentError("schema root must be a group with children");
  }
  std::vector<ColumnSpec> columns;
  columns.reserve(schema.size() - 1);
  for (size_t i = 1; i < schema.size(); ++i) {
    ColumnSpec spec;
    if (IsGroup(schema[i])) {
      spec.list = true;
      if (absl::Status s = CheckListGroup(schema, i, &spec.list_repetition); !s.ok()) return s;
      spec.name = schema[i].name;
      i += 2;
    }
    const SchemaElement& e = schema[i];
    if (!spec.list) spec.name = e.name;
    spec.type = *e.type;
    spec.repetition = e.repetition_type.value_or(Repetition::kRequired);
    spec.type_length =
        spec.type == PhysicalType::kFixedLenByteArray ? e.type_length.value_or(0) : 0;
    spec.logical_type = e.logical_type;
    if (spec.logical_type.kind == LogicalType::Kind::kNone && e.converted_type &&
        *e.converted_type == ConvertedType::kUtf8) {
      spec.logical_type.kind = LogicalType::Kind::kString;
    }
    if (spec.logical_type.kind == LogicalType::Kind::kOther) {
      // Unknown annotations do not change the physical values; read them raw.
      spec.logical_type = LogicalType{};
    }
    if (absl::Status s = ValidateColumnSpec(spec); !s.ok()) return s;
    columns.push_back(std::move(spec));
  }
  if (columns.size() != static_cast<size_t>(*root.num_children)) {
    return absl::InvalidArgumentError(fmt::format(
        "schema root claims {} children, the schema holds {}", *root.num_children, columns.size()));
  }
  return columns;
}

// ---- ColumnVector ----

ColumnVector ColumnVector::List(PhysicalType t) {
  ColumnVector v(t);
  v.is_list = true;
  return v;
}

size_t ColumnVector::element_count() const {
  switch (type) {
    case PhysicalType::kBoolean:
      return bools.size();
    case PhysicalType::kInt32:
      return int32s.size();
    case PhysicalType::kInt64:
      return int64s.size();
    case PhysicalType::kDouble:
      return doubles.size();
    default:
      return offsets.size() - 1;
  }
}

void ColumnVector::MarkPresent() {
  if (!validity.empty()) validity.push_back(1);
}

void ColumnVector::AppendNull() {
  if (validity.empty()) validity.assign(element_count(), 1);
  validity.push_back(0);
  switch (type) {
    case PhysicalType::kBoolean:
      bools.push_back(0);
      break;
    case PhysicalType::kInt32:
      int32s.push_back(0);
      break;
    case PhysicalType::kInt64:
      int64s.push_back(0);
      break;
    case PhysicalType::kDouble:
      doubles.push_back(0);
      break;
    default:
      offsets.push_back(bytes.size());
      break;
  }
}

void ColumnVector::AppendBool(bool value) {
  MarkPresent();
  bools.push_back(value ? 1 : 0);
}
void ColumnVector::AppendInt32(int32_t value) {
  MarkPresent();
  int32s.push_back(value);
}
void ColumnVector::AppendInt64(int64_t value) {
  MarkPresent();
  int64s.push_back(value);
}
void ColumnVector::AppendDouble(double value) {
  MarkPresent();
  doubles.push_back(value);
}
void ColumnVector::AppendBytes(std::string_view value) {
  MarkPresent();
  bytes.append(value.data(), value.size());
  offsets.push_back(bytes.size());
}

std::vector<ListRange>& ListRanges::OwnShared() {
  ranges_ = ranges_ ? std::make_shared<std::vector<ListRange>>(*ranges_)
                    : std::make_shared<std::vector<ListRange>>();
  return *ranges_;
}

bool ListRanges::operator==(const ListRanges& other) const {
  return SharesWith(other) || std::equal(begin(), end(), other.begin(), other.end());
}

void ColumnVector::AppendList(uint64_t begin, uint64_t count) {
  if (!list_validity.empty()) list_validity.push_back(1);
  lists.push_back({begin, count});
}

void ColumnVector::AppendNullList() {
  if (list_validity.empty()) list_validity.assign(lists.size(), 1);
  list_validity.push_back(0);
  lists.push_back({});
}

void ColumnVector::Clear() {
  ClearLists();
  validity.clear();
  bools.clear();
  int32s.clear();
  int64s.clear();
  doubles.clear();
  offsets.resize(1);
  offsets[0] = 0;
  bytes.clear();
}

void ColumnVector::Reserve(size_t rows) {
  if (is_list) lists.reserve(rows);
  switch (type) {
    case PhysicalType::kBoolean:
      bools.reserve(rows);
      break;
    case PhysicalType::kInt32:
      int32s.reserve(rows);
      break;
    case PhysicalType::kInt64:
      int64s.reserve(rows);
      break;
    case PhysicalType::kDouble:
      doubles.reserve(rows);
      break;
    default:
      offsets.reserve(rows + 1);
      break;
  }
}

void ColumnVector::AppendElements(const ColumnVector& source, size_t begin, size_t end) {
  if (begin >= end) return;
  if (!source.validity.empty() || !validity.empty()) {
    if (validity.empty()) validity.assign(element_count(), 1);
    if (source.validity.empty()) {
      validity.insert(validity.end(), end - begin, 1);
    } else {
      validity.insert(validity.end(), source.validity.begin() + begin,
                      source.validity.begin() + end);
    }
  }
  switch (type) {
    case PhysicalType::kBoolean:
      bools.insert(bools.end(), source.bools.begin() + begin, source.bools.begin() + end);
      break;
    case PhysicalType::kInt32:
      int32s.insert(int32s.end(), source.int32s.begin() + begin, source.int32s.begin() + end);
      break;
    case PhysicalType::kInt64:
      int64s.insert(int64s.end(), source.int64s.begin() + begin, source.int64s.begin() + end);
      break;
    case PhysicalType::kDouble:
      doubles.insert(doubles.end(), source.doubles.begin() + begin, source.doubles.begin() + end);
      break;
    default: {
      const uint64_t first = source.offsets[begin];
      const uint64_t base = bytes.size();
      bytes.append(source.bytes, first, source.offsets[end] - first);
      for (size_t i = begin + 1; i <= end; ++i) offsets.push_back(base + source.offsets[i] - first);
      break;
    }
  }
}

void ColumnVector::AppendSlice(const ColumnVector& source, size_t begin, size_t end) {
  if (!is_list) {
    AppendElements(source, begin, end);
    return;
  }
  for (size_t row = begin; row < end; ++row) {
    if (source.is_null_list(row)) {
      AppendNullList();
      continue;
    }
    const ListRange range = source.lists[row];
    const uint64_t first = element_count();
    AppendElements(source, range.begin, range.begin + range.count);
    AppendList(first, range.count);
  }
}

bool ElementEquals(const ColumnVector& a, size_t i, const ColumnVector& b, size_t j) {
  if (a.is_null(i) != b.is_null(j)) return false;
  if (a.is_null(i)) return true;
  switch (a.type) {
    case PhysicalType::kBoolean:
      return a.bools[i] == b.bools[j];
    case PhysicalType::kInt32:
      return a.int32s[i] == b.int32s[j];
    case PhysicalType::kInt64:
      return a.int64s[i] == b.int64s[j];
    case PhysicalType::kDouble:
      return std::memcmp(&a.doubles[i], &b.doubles[j], sizeof(double)) == 0;
    default:
      return a.bytes_at(i) == b.bytes_at(j);
  }
}

bool ColumnVector::operator==(const ColumnVector& other) const {
  if (type != other.type || is_list != other.is_list || size() != other.size()) return false;
  const size_t n = size();
  if (!is_list) {
    for (size_t i = 0; i < n; ++i) {
      if (!ElementEquals(*this, i, other, i)) return false;
    }
    return true;
  }
  for (size_t row = 0; row < n; ++row) {
    if (is_null_list(row) != other.is_null_list(row)) return false;
    if (is_null_list(row)) continue;
    const ListRange a = lists[row], b = other.lists[row];
    if (a.count != b.count) return false;
    for (uint64_t k = 0; k < a.count; ++k) {
      if (!ElementEquals(*this, a.begin + k, other, b.begin + k)) return false;
    }
  }
  return true;
}

}  // namespace strata::parquet
