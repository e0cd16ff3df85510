#include "otlp/any_value_codec.h"
#include "otlp/proto_decode_common.h"

namespace strata::otlp {
namespace {

// Depth is bounded: the decoder refused nesting deeper than
// limits.max_value_depth.
void CollectStrings(const BatchBase& batch, const ValueColumns& values, size_t row,
                    std::vector<std::string_view>* out) {
  switch (values.type[row]) {
    case ValueType::kString:
      out->push_back(values.str[row]);
      return;
    case ValueType::kArray: {
      const Range children = values.children_at(row);
      for (uint32_t c = children.begin; c < children.end(); ++c) {
        CollectStrings(batch, batch.nested_values, c, out);
      }
      return;
    }
    case ValueType::kKvList: {
      const Range children = values.children_at(row);
      for (uint32_t c = children.begin; c < children.end(); ++c) {
        CollectStrings(batch, batch.nested_attributes.value, c, out);
      }
      return;
    }
    case ValueType::kEmpty:
    case ValueType::kBool:
    case ValueType::kInt:
    case ValueType::kDouble:
    case ValueType::kBytes:
      return;
  }
}

}  // namespace

absl::Status DecodeAnyValueProto(std::string_view bytes, BatchBase* batch, ValueRow* out,
                                 const DecodeLimits& limits, uint32_t depth) {
  proto::DecodeContext ctx(bytes, limits);
  *out = ValueRow{};
  if (!proto::DecodeAnyValue(ctx, bytes, depth, batch, out)) return ctx.ToStatus("AnyValue");
  return absl::OkStatus();
}

absl::Status AppendAnyValueStrings(std::string_view bytes, std::vector<std::string_view>* out,
                                   const DecodeLimits& limits) {
  BatchBase scratch;
  ValueColumns top;
  ValueRow row;
  if (absl::Status s = DecodeAnyValueProto(bytes, &scratch, &row, limits); !s.ok()) return s;
  top.Append(row);
  CollectStrings(scratch, top, 0, out);
  return absl::OkStatus();
}

}  // namespace strata::otlp
