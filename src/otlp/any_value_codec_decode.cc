#include "otlp/any_value_codec.h"
#include "otlp/proto_decode_common.h"

namespace strata::otlp {

absl::Status DecodeAnyValueProto(std::string_view bytes, BatchBase* batch, ValueRow* out,
                                 const DecodeLimits& limits, uint32_t depth) {
  proto::DecodeContext ctx(bytes, limits);
  *out = ValueRow{};
  if (!proto::DecodeAnyValue(ctx, bytes, depth, batch, out)) return ctx.ToStatus("AnyValue");
  return absl::OkStatus();
}

}  // namespace strata::otlp
