#include "otlp/json_encode_common.h"

#include "common/check.h"

namespace strata::otlp::internal {

void JsonEncoderBase::WriteKeyValuesAtDepth(std::string_view key, const AttributeColumns& table,
                                            Range rows, int depth) {
  if (rows.count == 0) return;
  w_.Key(key);
  WriteKeyValueArray(table, rows, depth);
}

void JsonEncoderBase::WriteKeyValueArray(const AttributeColumns& table, Range rows, int depth) {
  w_.BeginArray();
  for (uint32_t i = rows.begin; i < rows.end(); ++i) {
    w_.BeginObject();
    StringField("key", table.key[i]);
    w_.Key("value");
    WriteAnyValue(table.value, i, depth);
    w_.EndObject();
  }
  w_.EndArray();
}

void JsonEncoderBase::WriteAnyValue(const ValueColumns& values, size_t row, int depth) {
  STRATA_CHECK(depth < kMaxValueDepth, "AnyValue children form a cycle");
  w_.BeginObject();
  switch (values.type[row]) {
    case ValueType::kString:
      w_.Key("stringValue");
      w_.String(values.str[row]);
      break;
    case ValueType::kBool:
      w_.Key("boolValue");
      w_.Bool(values.bool_at(row));
      break;
    case ValueType::kInt:
      w_.Key("intValue");
      w_.IntString(values.int_at(row));
      break;
    case ValueType::kDouble:
      w_.Key("doubleValue");
      w_.Double(values.double_at(row));
      break;
    case ValueType::kArray: {
      Range children = values.children_at(row);
      w_.Key("arrayValue");
      w_.BeginObject();
      if (children.count != 0) {
        w_.Key("values");
        w_.BeginArray();
        for (uint32_t c = children.begin; c < children.end(); ++c) {
          WriteAnyValue(batch_.nested_values, c, depth + 1);
        }
        w_.EndArray();
      }
      w_.EndObject();
      break;
    }
    case ValueType::kKvList: {
      w_.Key("kvlistValue");
      w_.BeginObject();
      WriteKeyValuesAtDepth("values", batch_.nested_attributes, values.children_at(row), depth + 1);
      w_.EndObject();
      break;
    }
    case ValueType::kBytes:
      w_.Key("bytesValue");
      w_.Base64String(values.str[row]);
      break;
    case ValueType::kEmpty:
      break;
  }
  w_.EndObject();
}

void JsonEncoderBase::NumberValue(NumberType type, uint64_t bits) {
  if (type == NumberType::kDouble) {
    DoubleAlways("asDouble", std::bit_cast<double>(bits));
  } else if (type == NumberType::kInt) {
    w_.Key("asInt");
    w_.IntString(static_cast<int64_t>(bits));
  }
}

void JsonEncoderBase::WriteResource(size_t row) {
  if (IsEmptyResource(batch_, row)) return;
  w_.Key("resource");
  WriteResourceObject(row);
}

void JsonEncoderBase::WriteResourceObject(size_t row) {
  const ResourceColumns& r = batch_.resources;
  w_.BeginObject();
  WriteKeyValues("attributes", batch_.resource_attributes, r.attributes[row]);
  Uint32Field("droppedAttributesCount", r.dropped_attributes_count[row]);
  Range refs = r.entity_refs[row];
  if (refs.count != 0) {
    w_.Key("entityRefs");
    w_.BeginArray();
    for (uint32_t i = refs.begin; i < refs.end(); ++i) WriteEntityRef(i);
    w_.EndArray();
  }
  w_.EndObject();
}

void JsonEncoderBase::WriteEntityRef(size_t row) {
  const EntityRefColumns& e = batch_.entity_refs;
  w_.BeginObject();
  StringField("schemaUrl", e.schema_url[row]);
  StringField("type", e.type[row]);
  WriteKeys("idKeys", e.id_keys[row]);
  WriteKeys("descriptionKeys", e.description_keys[row]);
  w_.EndObject();
}

void JsonEncoderBase::WriteKeys(std::string_view key, Range rows) {
  if (rows.count == 0) return;
  w_.Key(key);
  w_.BeginArray();
  for (uint32_t k = rows.begin; k < rows.end(); ++k) w_.String(batch_.entity_keys[k]);
  w_.EndArray();
}

void JsonEncoderBase::WriteScope(size_t row) {
  if (IsEmptyScope(batch_, row)) return;
  const ScopeColumns& s = batch_.scopes;
  w_.Key("scope");
  w_.BeginObject();
  StringField("name", s.name[row]);
  StringField("version", s.version[row]);
  WriteKeyValues("attributes", batch_.scope_attributes, s.attributes[row]);
  Uint32Field("droppedAttributesCount", s.dropped_attributes_count[row]);
  w_.EndObject();
}

}  // namespace strata::otlp::internal
