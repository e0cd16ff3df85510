// EncodeAnyValueJson, EncodeKeyValuesJson and EncodeResourceJson (encode.h):
// the request encoders' AnyValue, KeyValue and Resource writers, outside a
// request.

#include <string>

#include "otlp/encode.h"
#include "otlp/json_encode_common.h"

namespace strata::otlp {
namespace {

class ValueJsonEncoder : public internal::JsonEncoderBase {
 public:
  ValueJsonEncoder(const BatchBase& batch, std::string* out) : JsonEncoderBase(batch, out) {}

  void AnyValue(const ValueColumns& values, size_t row) { WriteAnyValue(values, row, 0); }
  void KeyValues(const AttributeColumns& attributes, Range rows) {
    WriteKeyValueArray(attributes, rows, 0);
  }
  void Resource(size_t row) { WriteResourceObject(row); }
};

}  // namespace

std::string EncodeAnyValueJson(const BatchBase& batch, const ValueColumns& values, size_t row) {
  std::string out;
  ValueJsonEncoder(batch, &out).AnyValue(values, row);
  return out;
}

std::string EncodeKeyValuesJson(const BatchBase& batch, const AttributeColumns& attributes,
                                Range rows) {
  std::string out;
  ValueJsonEncoder(batch, &out).KeyValues(attributes, rows);
  return out;
}

std::string EncodeResourceJson(const BatchBase& batch, size_t row) {
  std::string out;
  ValueJsonEncoder(batch, &out).Resource(row);
  return out;
}

}  // namespace strata::otlp
