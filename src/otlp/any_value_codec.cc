#include "otlp/any_value_codec.h"

// The encoder half; the decoder is in any_value_codec_decode.cc, because
// proto_writer.h and proto_wire.h each define WireType and cannot share a
// translation unit.

#include "otlp/proto_encode_common.h"

namespace strata::otlp {
namespace {

// Gives the free function access to the shared encoder's AnyValue writer.
class AnyValueEncoder : public internal::ProtoEncoderBase {
 public:
  AnyValueEncoder(const BatchBase& batch, std::string* out) : ProtoEncoderBase(batch, out) {}

  // Writes values[row] as field 1 of an imaginary parent, then removes the
  // tag and length so only the message body remains.
  void Encode(const ValueColumns& values, size_t row) {
    std::string* out = w_.output();
    const size_t start = out->size();
    WriteAnyValue(1, values, row, 0);
    // Field 1, wire type 2: a one-byte tag, then the body's varint length.
    size_t prefix = 1;
    while (static_cast<unsigned char>((*out)[start + prefix]) >= 0x80) ++prefix;
    ++prefix;
    out->erase(start, prefix);
  }
};

}  // namespace

void EncodeAnyValueProto(const BatchBase& batch, const ValueColumns& values, size_t row,
                         std::string* out) {
  AnyValueEncoder encoder(batch, out);
  encoder.Encode(values, row);
}

}  // namespace strata::otlp
