#include <cstdint>

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

// The string values of one AnyValue read straight off the wire, without
// decoding the value into a batch: log search's q= calls this once per
// array or kvlist body of the window, so it allocates nothing but `out`'s
// growth. Strata writes every stored value with its own encoder, one oneof
// member each; for other input the last oneof member wins, as in the
// decoder. Errors: truncated or malformed fields, unexpected wire types,
// nesting deeper than the limit.
class StringWalker {
 public:
  StringWalker(const DecodeLimits& limits, std::vector<std::string_view>* out)
      : limits_(limits), out_(out) {}

  // An AnyValue message body at nesting `depth` (1 for the top value).
  bool AnyValue(std::string_view message, uint32_t depth) {
    const size_t begin = out_->size();
    uint32_t field = 0, wire = 0;
    std::string_view payload;
    while (!message.empty()) {
      if (!Field(&message, &field, &wire, &payload)) return false;
      if (field < 1 || field > 7) continue;  // unknown fields are skipped
      out_->resize(begin);                   // the last oneof member wins
      if (field == 1 || field == 5 || field == 6 || field == 7) {
        if (wire != 2) return false;
      } else if ((field == 2 || field == 3) ? wire != 0 : wire != 1) {
        return false;
      }
      if (field == 1) out_->push_back(payload);
      if ((field == 5 || field == 6) && !Children(payload, field == 6, depth)) return false;
    }
    return true;
  }

 private:
  // ArrayValue (repeated AnyValue values = 1) or KeyValueList (repeated
  // KeyValue values = 1; KeyValue: key = 1, value = 2).
  bool Children(std::string_view message, bool kvlist, uint32_t depth) {
    if (depth > limits_.max_value_depth) return false;
    uint32_t field = 0, wire = 0;
    std::string_view payload;
    while (!message.empty()) {
      if (!Field(&message, &field, &wire, &payload)) return false;
      if (field != 1) continue;
      if (wire != 2) return false;
      if (!kvlist) {
        if (!AnyValue(payload, depth + 1)) return false;
        continue;
      }
      std::string_view entry = payload, value;
      bool has_value = false;
      uint32_t entry_field = 0, entry_wire = 0;
      while (!entry.empty()) {
        std::string_view part;
        if (!Field(&entry, &entry_field, &entry_wire, &part)) return false;
        if (entry_field == 1 || entry_field == 2) {
          if (entry_wire != 2) return false;
          if (entry_field == 2) {
            value = part;
            has_value = true;
          }
        }
      }
      if (has_value && !AnyValue(value, depth + 1)) return false;
    }
    return true;
  }

  static bool Varint(std::string_view* in, uint64_t* value) {
    *value = 0;
    for (int shift = 0; shift < 64; shift += 7) {
      if (in->empty()) return false;
      const auto byte = static_cast<uint8_t>(in->front());
      in->remove_prefix(1);
      *value |= uint64_t{byte & 0x7fu} << shift;
      if ((byte & 0x80u) == 0) return true;
    }
    return false;
  }

  // One field: its number, wire type and, for wire type 2, its payload.
  static bool Field(std::string_view* in, uint32_t* field, uint32_t* wire,
                    std::string_view* payload) {
    uint64_t tag = 0;
    if (!Varint(in, &tag) || (tag >> 3) == 0 || (tag >> 3) > UINT32_MAX) return false;
    *field = static_cast<uint32_t>(tag >> 3);
    *wire = static_cast<uint32_t>(tag & 7);
    uint64_t value = 0;
    switch (*wire) {
      case 0:
        return Varint(in, &value);
      case 1:
      case 5: {
        const size_t size = *wire == 1 ? 8 : 4;
        if (in->size() < size) return false;
        in->remove_prefix(size);
        return true;
      }
      case 2:
        if (!Varint(in, &value) || value > in->size()) return false;
        *payload = in->substr(0, value);
        in->remove_prefix(value);
        return true;
      default:
        return false;
    }
  }

  const DecodeLimits& limits_;
  std::vector<std::string_view>* out_;
};

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
  const size_t begin = out->size();
  if (StringWalker(limits, out).AnyValue(bytes, 1)) return absl::OkStatus();
  // The decoder names what is wrong (and where).
  out->resize(begin);
  BatchBase scratch;
  ValueColumns top;
  ValueRow row;
  if (absl::Status s = DecodeAnyValueProto(bytes, &scratch, &row, limits); !s.ok()) return s;
  top.Append(row);
  CollectStrings(scratch, top, 0, out);
  return absl::OkStatus();
}

}  // namespace strata::otlp
