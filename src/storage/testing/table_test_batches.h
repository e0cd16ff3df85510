#pragma once

// Test-only builders of hand-made batches for the table tests: attribute
// sets with every value type (nested arrays and kvlists, bytes, NaN
// payloads, extreme integers, empty values, duplicate and empty keys,
// unicode, very long strings), resources with entity refs, scopes. Header-
// only; strings are copied into the batch's arena.

#include <bit>
#include <cstdint>
#include <limits>
#include <string>
#include <string_view>
#include <vector>

#include "otlp/batch.h"

namespace strata::storage::table_testing {

class BatchBuilder {
 public:
  explicit BatchBuilder(otlp::BatchBase* batch) : b_(batch) {}

  std::string_view S(std::string_view s) { return b_->arena.Copy(s); }

  // A value row for the common scalar types.
  static otlp::ValueRow Str(std::string_view s) { return {otlp::ValueType::kString, s, 0}; }
  static otlp::ValueRow Int(int64_t v) {
    return {otlp::ValueType::kInt, {}, static_cast<uint64_t>(v)};
  }
  static otlp::ValueRow Double(double v) {
    return {otlp::ValueType::kDouble, {}, std::bit_cast<uint64_t>(v)};
  }
  static otlp::ValueRow DoubleBits(uint64_t bits) { return {otlp::ValueType::kDouble, {}, bits}; }
  static otlp::ValueRow Bool(bool v) { return {otlp::ValueType::kBool, {}, v ? 1u : 0u}; }
  static otlp::ValueRow Bytes(std::string_view s) { return {otlp::ValueType::kBytes, s, 0}; }
  static otlp::ValueRow Empty() { return {}; }

  // An array value of `elements` (its children appended to nested_values).
  otlp::ValueRow Array(const std::vector<otlp::ValueRow>& elements) {
    const otlp::Range r{static_cast<uint32_t>(b_->nested_values.size()),
                        static_cast<uint32_t>(elements.size())};
    for (const otlp::ValueRow& v : elements) b_->nested_values.Append(v);
    return {otlp::ValueType::kArray, {}, otlp::ValueColumns::Pack(r)};
  }
  otlp::ValueRow KvList(const std::vector<otlp::AttributeRow>& entries) {
    const otlp::Range r{static_cast<uint32_t>(b_->nested_attributes.size()),
                        static_cast<uint32_t>(entries.size())};
    for (const otlp::AttributeRow& e : entries) b_->nested_attributes.Append(e);
    return {otlp::ValueType::kKvList, {}, otlp::ValueColumns::Pack(r)};
  }

  // Appends `rows` to `table` and returns their Range. Build nested values
  // (Array, KvList) before calling, since they append to other tables.
  static otlp::Range Attributes(otlp::AttributeColumns* table,
                                const std::vector<otlp::AttributeRow>& rows) {
    const otlp::Range r{static_cast<uint32_t>(table->size()), static_cast<uint32_t>(rows.size())};
    for (const otlp::AttributeRow& row : rows) table->Append(row);
    return r;
  }

  // Every value type, with the corner cases the format must keep exactly.
  std::vector<otlp::AttributeRow> EveryValueType(const std::string& salt) {
    auto nested_kv = [&] {
      const otlp::ValueRow deeper = Array({Str(S("x")), Double(-0.0)});
      return KvList({{S("inner." + salt), Int(-1)}, {S(""), Empty()}, {S("deeper"), deeper}});
    };
    const otlp::ValueRow in_array = nested_kv();
    const otlp::ValueRow empty_array = Array({});
    const otlp::ValueRow array =
        Array({Str(S("a")), Int(std::numeric_limits<int64_t>::min()), Bool(false), Empty(),
               Bytes(S(std::string("\0\1\2", 3))), in_array, empty_array});
    const otlp::ValueRow kvlist = nested_kv();
    const otlp::ValueRow empty_kv = KvList({});
    const otlp::ValueRow array_empty = Array({});
    return {
        {S("service.name"), Str(S("checkout-" + salt))},
        {S("str.empty"), Str(S(""))},
        {S("str.unicode"), Str(S("h\xc3\xa9llo \xe2\x9c\x93 \xf0\x9f\x9a\x80 " + salt))},
        {S("str.long"), Str(S(std::string(70000, 'L') + salt))},
        {S("int.min"), Int(std::numeric_limits<int64_t>::min())},
        {S("int.max"), Int(std::numeric_limits<int64_t>::max())},
        {S("int.zero"), Int(0)},
        {S("double.nan.payload"), DoubleBits(0x7ff8000000000123ULL)},
        {S("double.neg.nan"), DoubleBits(0xfff0000000000001ULL)},
        {S("double.negzero"), Double(-0.0)},
        {S("double.inf"), Double(std::numeric_limits<double>::infinity())},
        {S("double.small"), Double(5e-324)},
        {S("bool.true"), Bool(true)},
        {S("bool.false"), Bool(false)},
        {S("bytes"), Bytes(S(std::string("\0\xff\x80 bytes", 9)))},
        {S("bytes.empty"), Bytes(S(""))},
        {S("empty.value"), Empty()},
        {S(""), Str(S("empty key"))},
        {S("dup"), Str(S("first"))},
        {S("dup"), Int(2)},
        {S("array"), array},
        {S("kvlist"), kvlist},
        {S("kvlist.empty"), empty_kv},
        {S("array.empty"), array_empty},
    };
  }

  // Many plain attributes: key.0 .. key.n-1.
  std::vector<otlp::AttributeRow> Many(int n, const std::string& prefix) {
    std::vector<otlp::AttributeRow> rows;
    for (int i = 0; i < n; ++i) {
      rows.push_back({S(prefix + std::to_string(i)),
                      i % 3 == 0 ? Int(i) : Str(S("v" + std::to_string(i * 7)))});
    }
    return rows;
  }

  uint32_t Resource(const std::vector<otlp::AttributeRow>& attributes, std::string_view schema_url,
                    uint32_t dropped, int entity_refs) {
    otlp::ResourceRow row;
    row.attributes = Attributes(&b_->resource_attributes, attributes);
    row.dropped_attributes_count = dropped;
    row.schema_url = S(schema_url);
    row.entity_refs = {static_cast<uint32_t>(b_->entity_refs.size()),
                       static_cast<uint32_t>(entity_refs)};
    for (int e = 0; e < entity_refs; ++e) {
      otlp::EntityRefRow ref;
      ref.schema_url = S(e == 0 ? "" : "https://opentelemetry.io/schemas/1.26.0");
      ref.type = S("service" + std::to_string(e));
      ref.id_keys = {static_cast<uint32_t>(b_->entity_keys.size()), static_cast<uint32_t>(e)};
      for (int k = 0; k < e; ++k) b_->entity_keys.push_back(S("id." + std::to_string(k)));
      ref.description_keys = {static_cast<uint32_t>(b_->entity_keys.size()),
                              static_cast<uint32_t>(e % 2 + 1)};
      for (int k = 0; k < e % 2 + 1; ++k) b_->entity_keys.push_back(S(k == 0 ? "" : "desc"));
      b_->entity_refs.Append(ref);
    }
    return b_->resources.Append(row);
  }

  uint32_t Scope(uint32_t resource, std::string_view name, std::string_view version,
                 const std::vector<otlp::AttributeRow>& attributes, uint32_t dropped,
                 std::string_view schema_url) {
    otlp::ScopeRow row;
    row.resource = resource;
    row.name = S(name);
    row.version = S(version);
    row.attributes = Attributes(&b_->scope_attributes, attributes);
    row.dropped_attributes_count = dropped;
    row.schema_url = S(schema_url);
    return b_->scopes.Append(row);
  }

 private:
  otlp::BatchBase* b_;
};

inline otlp::TraceId MakeTraceId(uint64_t hi, uint64_t lo) {
  otlp::TraceId id;
  for (int i = 0; i < 8; ++i) {
    id[i] = static_cast<uint8_t>(hi >> (56 - 8 * i));
    id[8 + i] = static_cast<uint8_t>(lo >> (56 - 8 * i));
  }
  return id;
}

inline otlp::SpanId MakeSpanId(uint64_t v) {
  otlp::SpanId id;
  for (int i = 0; i < 8; ++i) id[i] = static_cast<uint8_t>(v >> (56 - 8 * i));
  return id;
}

}  // namespace strata::storage::table_testing
