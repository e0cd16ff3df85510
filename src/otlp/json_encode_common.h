#pragma once

// JsonEncoderBase holds what the three OTLP/JSON encoders share: the request
// -> resourceX -> scopeX envelope, Resource, InstrumentationScope, KeyValue,
// AnyValue, and field writers that follow the protobuf JSON mapping (fields
// at their default value and empty arrays are omitted; 64-bit integers are
// decimal strings; ids are lowercase hex; bytes are base64).
//
// Presence rules match the protobuf encoders (proto_encode_common.h): empty
// Resource and InstrumentationScope objects are omitted, a KeyValue always has
// "value" ({} for kEmpty), and AnyValue members are written even at their
// default value.
//
// Precondition: the batch satisfies batch.h's invariants; AnyValue nesting
// deeper than kMaxValueDepth aborts. Thread-safety: one encoder per call; the
// batch is only read.

#include <array>
#include <bit>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "otlp/batch.h"
#include "otlp/encode_common.h"
#include "otlp/json_writer.h"

namespace strata::otlp::internal {

// Names of the nested arrays of one signal's request.
struct JsonEnvelopeNames {
  std::string_view resources;  // "resourceSpans"
  std::string_view scopes;     // "scopeSpans"
  std::string_view items;      // "spans"
};

class JsonEncoderBase {
 protected:
  JsonEncoderBase(const BatchBase& batch, std::string* out) : batch_(batch), w_(out) {}

  // Writes the whole request object: every resource row, under it its scope
  // rows, under each scope the item rows that `item_scope` assigns to it,
  // each written as one array element by write_item(row).
  template <typename WriteItem>
  void WriteRequest(const JsonEnvelopeNames& names, const std::vector<uint32_t>& item_scope,
                    WriteItem&& write_item) {
    RowGroups scopes(batch_.scopes.resource, batch_.resources.size());
    RowGroups items(item_scope, batch_.scopes.size());
    w_.BeginObject();
    if (batch_.resources.size() != 0) {
      w_.Key(names.resources);
      w_.BeginArray();
      for (size_t r = 0; r < batch_.resources.size(); ++r) {
        w_.BeginObject();
        WriteResource(r);
        if (!scopes.children(r).empty()) {
          w_.Key(names.scopes);
          w_.BeginArray();
          for (uint32_t s : scopes.children(r)) {
            w_.BeginObject();
            WriteScope(s);
            if (!items.children(s).empty()) {
              w_.Key(names.items);
              w_.BeginArray();
              for (uint32_t item : items.children(s)) write_item(item);
              w_.EndArray();
            }
            StringField("schemaUrl", batch_.scopes.schema_url[s]);
            w_.EndObject();
          }
          w_.EndArray();
        }
        StringField("schemaUrl", batch_.resources.schema_url[r]);
        w_.EndObject();
      }
      w_.EndArray();
    }
    w_.EndObject();
  }

  // Writes `key` with rows [rows.begin, rows.end()) of `table` as an array
  // of KeyValue objects; nothing when the range is empty.
  void WriteKeyValues(std::string_view key, const AttributeColumns& table, Range rows) {
    WriteKeyValuesAtDepth(key, table, rows, 0);
  }
  // Writes values[row] as an AnyValue object.
  void WriteAnyValue(const ValueColumns& values, size_t row, int depth);
  // Writes rows [rows.begin, rows.end()) of `table` as an array of KeyValue
  // objects ([] when the range is empty).
  void WriteKeyValueArray(const AttributeColumns& table, Range rows, int depth);

  // Field writers that omit the default value.
  void StringField(std::string_view key, std::string_view v) {
    if (v.empty()) return;
    w_.Key(key);
    w_.String(v);
  }
  void Uint32Field(std::string_view key, uint32_t v) {
    if (v == 0) return;
    w_.Key(key);
    w_.Uint(v);
  }
  void Int32Field(std::string_view key, int32_t v) {
    if (v == 0) return;
    w_.Key(key);
    w_.Int(v);
  }
  void Uint64Field(std::string_view key, uint64_t v) {
    if (v == 0) return;
    w_.Key(key);
    w_.UintString(v);
  }
  void DoubleField(std::string_view key, double v) {
    if (std::bit_cast<uint64_t>(v) == 0) return;
    DoubleAlways(key, v);
  }
  void DoubleAlways(std::string_view key, double v) {
    w_.Key(key);
    w_.Double(v);
  }
  template <size_t N>
  void IdField(std::string_view key, const std::array<uint8_t, N>& id) {
    w_.Key(key);
    w_.HexString(id.data(), N);
  }
  // A NumberDataPoint or Exemplar value oneof.
  void NumberValue(NumberType type, uint64_t bits);
  // Resource row `row` as an object ({} when it is empty).
  void WriteResourceObject(size_t row);

  const BatchBase& batch_;
  JsonWriter w_;

 private:
  void WriteResource(size_t row);
  void WriteScope(size_t row);
  void WriteEntityRef(size_t row);
  void WriteKeys(std::string_view key, Range rows);
  void WriteKeyValuesAtDepth(std::string_view key, const AttributeColumns& table, Range rows,
                             int depth);
};

}  // namespace strata::otlp::internal
