#include "otlp_reference/batch_converter.h"

namespace strata::otlp_reference::internal {
namespace {

namespace common = opentelemetry::proto::common::v1;
namespace resource = opentelemetry::proto::resource::v1;

using absl::Status;
using otlp::Range;

// Deeper AnyValue nesting than any decoder accepts means the batch's child
// ranges form a cycle.
constexpr int kMaxDepth = 64;

}  // namespace

Status CheckSizes(absl::string_view table, size_t expected, std::initializer_list<size_t> sizes) {
  for (size_t size : sizes) {
    if (size != expected) {
      return absl::InternalError(
          absl::StrCat(table, ": a column has ", size, " rows, the table ", expected));
    }
  }
  return absl::OkStatus();
}

Status CheckRange(Range range, size_t table_size, absl::string_view what, size_t row) {
  if (uint64_t{range.begin} + range.count > table_size) {
    return absl::InternalError(absl::StrCat(what, "[", row, "]: range [", range.begin, ", +",
                                            range.count, ") outside a table of ", table_size));
  }
  return absl::OkStatus();
}

Status CheckValueColumns(absl::string_view table, const otlp::ValueColumns& values,
                         size_t expected) {
  return CheckSizes(table, expected, {values.type.size(), values.str.size(), values.bits.size()});
}

Status CheckAttributeColumns(absl::string_view table, const otlp::AttributeColumns& attributes) {
  return CheckValueColumns(table, attributes.value, attributes.key.size());
}

Status Unsupported(absl::string_view what, size_t row) {
  return absl::InvalidArgumentError(
      absl::StrCat(what, "[", row, "] is set, and the OTLP 0.38 protos cannot hold it"));
}

Status BaseConverter::Check() const {
  const otlp::ResourceColumns& r = base_.resources;
  Status s =
      CheckSizes("resources", r.size(),
                 {r.dropped_attributes_count.size(), r.entity_refs.size(), r.schema_url.size()});
  if (!s.ok()) return s;
  const otlp::ScopeColumns& sc = base_.scopes;
  s = CheckSizes("scopes", sc.size(),
                 {sc.resource.size(), sc.version.size(), sc.attributes.size(),
                  sc.dropped_attributes_count.size(), sc.schema_url.size()});
  if (!s.ok()) return s;
  for (const auto& [name, table] : {std::pair{"resource_attributes", &base_.resource_attributes},
                                    std::pair{"scope_attributes", &base_.scope_attributes},
                                    std::pair{"nested_attributes", &base_.nested_attributes}}) {
    s = CheckAttributeColumns(name, *table);
    if (!s.ok()) return s;
  }
  s = CheckValueColumns("nested_values", base_.nested_values, base_.nested_values.type.size());
  if (!s.ok()) return s;
  for (size_t i = 0; i < sc.size(); ++i) {
    if (sc.resource[i] >= r.size()) {
      return absl::InternalError(absl::StrCat("scopes[", i, "].resource = ", sc.resource[i], " of ",
                                              r.size(), " resources"));
    }
  }
  return absl::OkStatus();
}

Status BaseConverter::Value(const otlp::ValueColumns& table, size_t row, common::AnyValue* out,
                            int depth) const {
  if (depth > kMaxDepth) return absl::InternalError("AnyValue children form a cycle");
  switch (table.type[row]) {
    case otlp::ValueType::kEmpty:
      return absl::OkStatus();
    case otlp::ValueType::kString:
      out->set_string_value(std::string(table.str[row]));
      break;
    case otlp::ValueType::kBytes:
      out->set_bytes_value(std::string(table.str[row]));
      break;
    case otlp::ValueType::kBool:
      out->set_bool_value(table.bool_at(row));
      break;
    case otlp::ValueType::kInt:
      out->set_int_value(table.int_at(row));
      break;
    case otlp::ValueType::kDouble:
      out->set_double_value(table.double_at(row));
      break;
    case otlp::ValueType::kArray: {
      Range children = table.children_at(row);
      Status s = CheckRange(children, base_.nested_values.size(), "array value", row);
      if (!s.ok()) return s;
      common::ArrayValue* array = out->mutable_array_value();
      for (uint32_t i = children.begin; i < children.end(); ++i) {
        s = Value(base_.nested_values, i, array->add_values(), depth + 1);
        if (!s.ok()) return s;
      }
      break;
    }
    case otlp::ValueType::kKvList:
      return Attributes(base_.nested_attributes, table.children_at(row), "kvlist value", row,
                        out->mutable_kvlist_value()->mutable_values(), depth + 1);
    default:
      return absl::InternalError(
          absl::StrCat("value type ", static_cast<int>(table.type[row]), " unknown at row ", row));
  }
  return absl::OkStatus();
}

Status BaseConverter::Attributes(const otlp::AttributeColumns& table, Range range,
                                 absl::string_view what, size_t row, KeyValues* out,
                                 int depth) const {
  Status s = CheckRange(range, table.size(), what, row);
  if (!s.ok()) return s;
  for (uint32_t i = range.begin; i < range.end(); ++i) {
    common::KeyValue* kv = out->Add();
    kv->set_key(std::string(table.key[i]));
    s = Value(table.value, i, kv->mutable_value(), depth);
    if (!s.ok()) return s;
  }
  return absl::OkStatus();
}

Status BaseConverter::Resource(size_t row, resource::Resource* out, std::string* schema_url) const {
  const otlp::ResourceColumns& r = base_.resources;
  if (r.entity_refs[row].count != 0) return Unsupported("resources.entity_refs", row);
  Status s = Attributes(base_.resource_attributes, r.attributes[row], "resources.attributes", row,
                        out->mutable_attributes());
  if (!s.ok()) return s;
  out->set_dropped_attributes_count(r.dropped_attributes_count[row]);
  *schema_url = std::string(r.schema_url[row]);
  return absl::OkStatus();
}

Status BaseConverter::Scope(size_t row, common::InstrumentationScope* out,
                            std::string* schema_url) const {
  const otlp::ScopeColumns& sc = base_.scopes;
  if (sc.attributes[row].count != 0) return Unsupported("scopes.attributes", row);
  if (sc.dropped_attributes_count[row] != 0) {
    return Unsupported("scopes.dropped_attributes_count", row);
  }
  out->set_name(std::string(sc.name[row]));
  out->set_version(std::string(sc.version[row]));
  *schema_url = std::string(sc.schema_url[row]);
  return absl::OkStatus();
}

std::vector<std::vector<uint32_t>> BaseConverter::ScopesByResource() const {
  std::vector<std::vector<uint32_t>> out(base_.resources.size());
  for (uint32_t i = 0; i < base_.scopes.size(); ++i) out[base_.scopes.resource[i]].push_back(i);
  return out;
}

absl::StatusOr<std::vector<std::vector<uint32_t>>> BaseConverter::RowsByScope(
    const std::vector<uint32_t>& scope_of_row, absl::string_view what) const {
  std::vector<std::vector<uint32_t>> out(base_.scopes.size());
  for (uint32_t i = 0; i < scope_of_row.size(); ++i) {
    if (scope_of_row[i] >= out.size()) {
      return absl::InternalError(
          absl::StrCat(what, "[", i, "].scope = ", scope_of_row[i], " of ", out.size(), " scopes"));
    }
    out[scope_of_row[i]].push_back(i);
  }
  return out;
}

}  // namespace strata::otlp_reference::internal
