#include "otlp/proto_encode_common.h"

#include "common/check.h"

namespace strata::otlp::internal {

void ProtoEncoderBase::WriteKeyValues(uint32_t field, const AttributeColumns& table, Range rows) {
  WriteKeyValuesAtDepth(field, table, rows, 0);
}

void ProtoEncoderBase::WriteKeyValuesAtDepth(uint32_t field, const AttributeColumns& table,
                                             Range rows, int depth) {
  for (uint32_t i = rows.begin; i < rows.end(); ++i) {
    ProtoWriter::Mark kv = w_.Open(field);
    w_.String(1, table.key[i]);               // KeyValue.key
    WriteAnyValue(2, table.value, i, depth);  // KeyValue.value
    w_.Close(kv);
  }
}

void ProtoEncoderBase::WriteAnyValue(uint32_t field, const ValueColumns& values, size_t row,
                                     int depth) {
  STRATA_CHECK(depth < kMaxValueDepth, "AnyValue children form a cycle");
  ProtoWriter::Mark any = w_.Open(field);
  switch (values.type[row]) {
    case ValueType::kString:
      w_.BytesAlways(1, values.str[row]);
      break;
    case ValueType::kBool:
      w_.VarintAlways(2, values.bool_at(row) ? 1 : 0);
      break;
    case ValueType::kInt:
      w_.VarintAlways(3, values.bits[row]);
      break;
    case ValueType::kDouble:
      w_.Fixed64Always(4, values.bits[row]);
      break;
    case ValueType::kArray: {
      Range children = values.children_at(row);
      ProtoWriter::Mark array = w_.Open(5);
      for (uint32_t c = children.begin; c < children.end(); ++c) {
        WriteAnyValue(1, batch_.nested_values, c, depth + 1);  // ArrayValue.values
      }
      w_.Close(array);
      break;
    }
    case ValueType::kKvList: {
      ProtoWriter::Mark list = w_.Open(6);
      // KeyValueList.values
      WriteKeyValuesAtDepth(1, batch_.nested_attributes, values.children_at(row), depth + 1);
      w_.Close(list);
      break;
    }
    case ValueType::kBytes:
      w_.BytesAlways(7, values.str[row]);
      break;
    case ValueType::kEmpty:
      break;
  }
  w_.Close(any);
}

void ProtoEncoderBase::WriteResource(size_t row) {
  if (IsEmptyResource(batch_, row)) return;
  const ResourceColumns& r = batch_.resources;
  ProtoWriter::Mark resource = w_.Open(1);
  WriteKeyValues(1, batch_.resource_attributes, r.attributes[row]);
  w_.UInt32(2, r.dropped_attributes_count[row]);
  Range refs = r.entity_refs[row];
  for (uint32_t i = refs.begin; i < refs.end(); ++i) WriteEntityRef(i);
  w_.Close(resource);
}

void ProtoEncoderBase::WriteEntityRef(size_t row) {
  const EntityRefColumns& e = batch_.entity_refs;
  ProtoWriter::Mark ref = w_.Open(3);  // Resource.entity_refs
  w_.String(1, e.schema_url[row]);
  w_.String(2, e.type[row]);
  // Repeated strings are never packed; an empty key is still an element.
  for (uint32_t k = e.id_keys[row].begin; k < e.id_keys[row].end(); ++k) {
    w_.BytesAlways(3, batch_.entity_keys[k]);
  }
  Range description = e.description_keys[row];
  for (uint32_t k = description.begin; k < description.end(); ++k) {
    w_.BytesAlways(4, batch_.entity_keys[k]);
  }
  w_.Close(ref);
}

void ProtoEncoderBase::WriteScope(size_t row) {
  if (IsEmptyScope(batch_, row)) return;
  const ScopeColumns& s = batch_.scopes;
  ProtoWriter::Mark scope = w_.Open(1);
  w_.String(1, s.name[row]);
  w_.String(2, s.version[row]);
  WriteKeyValues(3, batch_.scope_attributes, s.attributes[row]);
  w_.UInt32(4, s.dropped_attributes_count[row]);
  w_.Close(scope);
}

}  // namespace strata::otlp::internal
