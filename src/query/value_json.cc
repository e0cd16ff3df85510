#include "query/value_json.h"

#include <bit>

#include "common/check.h"
#include "otlp/any_value_codec.h"
#include "otlp/json_writer.h"

namespace strata::query {

namespace {

// Deeper than any value the decoder accepts (DecodeLimits::max_value_depth).
constexpr int kMaxDepth = 64;

void AppendDouble(double v, std::string* out) {
  otlp::JsonWriter writer(out);
  writer.Double(v);
}

void AppendInt(int64_t v, std::string* out) {
  otlp::JsonWriter writer(out);
  writer.Int(v);
}

void AppendString(std::string_view s, std::string* out) {
  out->push_back('"');
  otlp::JsonWriter::AppendEscaped(s, out);
  out->push_back('"');
}

void AppendBase64(std::string_view s, std::string* out) {
  out->push_back('"');
  otlp::JsonWriter::AppendBase64(s, out);
  out->push_back('"');
}

}  // namespace

void ValueJsonWriter::AppendKey(std::string_view key, std::string* out) {
  AppendString(key, out);
  out->push_back(':');
}

void ValueJsonWriter::AppendScalar(const otlp::ValueRow& value, std::string* out) {
  switch (value.type) {
    case otlp::ValueType::kString:
      AppendString(value.str, out);
      return;
    case otlp::ValueType::kBool:
      out->append(value.bits != 0 ? "true" : "false");
      return;
    case otlp::ValueType::kInt:
      AppendInt(static_cast<int64_t>(value.bits), out);
      return;
    case otlp::ValueType::kDouble:
      AppendDouble(std::bit_cast<double>(value.bits), out);
      return;
    case otlp::ValueType::kBytes:
      AppendBase64(value.str, out);
      return;
    case otlp::ValueType::kEmpty:
    case otlp::ValueType::kArray:
    case otlp::ValueType::kKvList:
      break;
  }
  out->append("null");
}

void ValueJsonWriter::AppendDecoded(const otlp::ValueColumns& values, size_t row, int depth,
                                    std::string* out) {
  STRATA_CHECK(depth < kMaxDepth, "decoded AnyValue children form a cycle");
  switch (values.type[row]) {
    case otlp::ValueType::kArray: {
      const otlp::Range children = values.children_at(row);
      out->push_back('[');
      for (uint32_t c = children.begin; c < children.end(); ++c) {
        if (c != children.begin) out->push_back(',');
        AppendDecoded(scratch_.nested_values, c, depth + 1, out);
      }
      out->push_back(']');
      return;
    }
    case otlp::ValueType::kKvList: {
      const otlp::Range children = values.children_at(row);
      out->push_back('{');
      for (uint32_t c = children.begin; c < children.end(); ++c) {
        if (c != children.begin) out->push_back(',');
        AppendKey(scratch_.nested_attributes.key[c], out);
        AppendDecoded(scratch_.nested_attributes.value, c, depth + 1, out);
      }
      out->push_back('}');
      return;
    }
    default:
      AppendScalar({values.type[row], values.str[row], values.bits[row]}, out);
  }
}

absl::Status ValueJsonWriter::DecodeNested(std::string_view bytes) {
  // Emptied, not replaced: the columns keep their capacity from one value
  // to the next, so a value costs no allocation once the largest has been
  // seen.
  scratch_.nested_values.Resize(0);
  scratch_.nested_attributes.Resize(0);
  otlp::ValueRow row;
  if (absl::Status s = otlp::DecodeAnyValueProto(bytes, &scratch_, &row); !s.ok()) return s;
  top_.Resize(0);
  top_.Append(row);
  return absl::OkStatus();
}

absl::Status ValueJsonWriter::AppendValue(const StoredValue& value, std::string* out) {
  if (value.type > 7) {
    return absl::InvalidArgumentError("stored value: type code outside 0..7");
  }
  if (!value.present && value.type != 0) {
    out->append("null");
    return absl::OkStatus();
  }
  switch (value.type) {
    case 1:
      AppendString(value.str, out);
      break;
    case 2:
      out->append(value.bool_value ? "true" : "false");
      break;
    case 3:
      AppendInt(value.int_value, out);
      break;
    case 4:
      AppendDouble(value.double_value, out);
      break;
    case 5:
    case 6: {
      if (absl::Status s = DecodeNested(value.bytes); !s.ok()) return s;
      AppendDecoded(top_, 0, 0, out);
      break;
    }
    case 7:
      AppendBase64(value.bytes, out);
      break;
    default:
      out->append("null");
  }
  return absl::OkStatus();
}

absl::Status ValueJsonWriter::AppendText(const StoredValue& value, std::string* out) {
  if (value.type == 1 && value.present) {
    out->append(value.str);
    return absl::OkStatus();
  }
  return AppendValue(value, out);
}

bool ValueJsonWriter::EscapedContains(std::string_view s, std::string_view needle) {
  bool verbatim = true;  // escaping leaves `s` as it is
  for (const char c : s) {
    const auto byte = static_cast<unsigned char>(c);
    if (byte < 0x20 || byte >= 0x80 || c == '"' || c == '\\') {
      verbatim = false;
      break;
    }
  }
  if (verbatim) return s.find(needle) != std::string_view::npos;
  token_.clear();
  otlp::JsonWriter::AppendEscaped(s, &token_);
  return token_.find(needle) != std::string::npos;
}

bool ValueJsonWriter::DecodedContains(const otlp::ValueColumns& values, size_t row, int depth,
                                      std::string_view needle) {
  STRATA_CHECK(depth < kMaxDepth, "decoded AnyValue children form a cycle");
  switch (values.type[row]) {
    case otlp::ValueType::kString:
      return EscapedContains(values.str[row], needle);
    case otlp::ValueType::kArray: {
      const otlp::Range children = values.children_at(row);
      for (uint32_t c = children.begin; c < children.end(); ++c) {
        if (DecodedContains(scratch_.nested_values, c, depth + 1, needle)) return true;
      }
      return false;
    }
    case otlp::ValueType::kKvList: {
      const otlp::Range children = values.children_at(row);
      for (uint32_t c = children.begin; c < children.end(); ++c) {
        if (EscapedContains(scratch_.nested_attributes.key[c], needle) ||
            DecodedContains(scratch_.nested_attributes.value, c, depth + 1, needle)) {
          return true;
        }
      }
      return false;
    }
    default:
      return ScalarContains({values.type[row], values.str[row], values.bits[row]}, needle);
  }
}

bool ValueJsonWriter::ScalarContains(const otlp::ValueRow& value, std::string_view needle) {
  // A number, a literal or a base64 string: short, written whole.
  token_.clear();
  AppendScalar(value, &token_);
  return token_.find(needle) != std::string::npos;
}

absl::StatusOr<bool> ValueJsonWriter::TextContains(const StoredValue& value,
                                                   std::string_view needle) {
  if (value.type > 7) {
    return absl::InvalidArgumentError("stored value: type code outside 0..7");
  }
  if (needle.empty()) return true;
  if (value.type == 0) return false;  // no text: searched as ""
  if (value.type == 1 && value.present) return value.str.find(needle) != std::string_view::npos;
  const bool nested = (value.type == 5 || value.type == 6) && value.present;
  if (nested && needle.find_first_of("\"{}[],:") == std::string_view::npos) {
    if (const std::optional<bool> found = EncodedContains(value.bytes, needle)) return *found;
    if (absl::Status s = DecodeNested(value.bytes); !s.ok()) return s;
    return DecodedContains(top_, 0, 0, needle);
  }
  token_.clear();
  if (absl::Status s = AppendText(value, &token_); !s.ok()) return s;
  return token_.find(needle) != std::string::npos;
}

}  // namespace strata::query
