#include "api/stored_values.h"

#include <bit>
#include <charconv>
#include <optional>
#include <vector>

#include "absl/strings/str_cat.h"
#include "otlp/any_value_codec.h"

namespace strata::api::internal {
namespace {

int HexDigit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// The bytes `hex` spells (either case), copied into `arena`; nullopt when
// it is not hex.
std::optional<std::string_view> BytesFromHex(std::string_view hex, Arena* arena) {
  if (hex.size() % 2 != 0) return std::nullopt;
  if (hex.empty()) return std::string_view();
  char* bytes = arena->Allocate(hex.size() / 2);
  for (size_t i = 0; i < hex.size(); i += 2) {
    const int high = HexDigit(hex[i]);
    const int low = HexDigit(hex[i + 1]);
    if (high < 0 || low < 0) return std::nullopt;
    bytes[i / 2] = static_cast<char>(high * 16 + low);
  }
  return std::string_view(bytes, hex.size() / 2);
}

std::vector<std::string_view> Split(std::string_view text, char separator) {
  std::vector<std::string_view> parts;
  size_t begin = 0;
  for (size_t at = text.find(separator); at != std::string_view::npos;
       at = text.find(separator, begin)) {
    parts.push_back(text.substr(begin, at - begin));
    begin = at + 1;
  }
  parts.push_back(text.substr(begin));
  return parts;
}

absl::Status BadText(std::string_view what, std::string_view text) {
  return absl::InternalError(
      absl::StrCat("stored value: not ", std::string(what), ": \"", std::string(text), "\""));
}

template <typename Number>
std::optional<Number> ParseNumber(std::string_view text) {
  Number value{};
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || ec != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return value;
}

// An array or kvlist: `bytes` is the encoded AnyValue message that carries it.
absl::StatusOr<otlp::ValueRow> DecodeNested(otlp::ValueType type, std::string_view bytes,
                                            otlp::BatchBase* batch) {
  otlp::ValueRow row;
  if (absl::Status decoded = otlp::DecodeAnyValueProto(bytes, batch, &row); !decoded.ok()) {
    return absl::DataLossError(
        absl::StrCat("stored array or kvlist value does not decode: ", decoded.message()));
  }
  if (row.type != type) {
    return absl::DataLossError(absl::StrCat("stored value of type ", static_cast<int>(type),
                                            " decodes as type ", static_cast<int>(row.type)));
  }
  return row;
}

absl::StatusOr<otlp::ValueRow> ParseStoredValue(int64_t type_code, std::string_view text,
                                                otlp::BatchBase* batch) {
  if (type_code < 0 || type_code > 7) return BadText("a type code", absl::StrCat(type_code));
  const auto type = static_cast<otlp::ValueType>(type_code);
  otlp::ValueRow row{.type = type};
  switch (type) {
    case otlp::ValueType::kEmpty:
      if (!text.empty()) return BadText("an empty value", text);
      return row;
    case otlp::ValueType::kBool:
      if (text != "true" && text != "false") return BadText("a bool", text);
      row.bits = text == "true" ? 1 : 0;
      return row;
    case otlp::ValueType::kInt: {
      const std::optional<int64_t> value = ParseNumber<int64_t>(text);
      if (!value.has_value()) return BadText("an int", text);
      row.bits = static_cast<uint64_t>(*value);
      return row;
    }
    case otlp::ValueType::kDouble: {
      const std::optional<double> value = ParseNumber<double>(text);
      if (!value.has_value()) return BadText("a double", text);
      row.bits = std::bit_cast<uint64_t>(*value);
      return row;
    }
    case otlp::ValueType::kString:
    case otlp::ValueType::kBytes:
    case otlp::ValueType::kArray:
    case otlp::ValueType::kKvList:
      break;
  }
  const std::optional<std::string_view> bytes = BytesFromHex(text, &batch->arena);
  if (!bytes.has_value()) return BadText("hex", text);
  if (type == otlp::ValueType::kArray || type == otlp::ValueType::kKvList) {
    return DecodeNested(type, *bytes, batch);
  }
  row.str = *bytes;
  return row;
}

}  // namespace

std::string StoredValueSql(std::string_view prefix, std::string_view index) {
  auto named = [&](std::string_view suffix) {
    return std::string(prefix) + std::string(suffix) + std::string(index);
  };
  return absl::StrCat("coalesce(hex(", named("_str"), "), CAST(", named("_int"),
                      " AS VARCHAR), CAST(", named("_double"), " AS VARCHAR), CAST(",
                      named("_bool"), " AS VARCHAR), hex(", named("_bytes"), "), '')");
}

std::string AttributeFamilySql(std::string_view prefix) {
  const std::string p(prefix);
  return absl::StrCat("array_to_string(list_transform(range(1, len(", p,
                      "_keys) + 1), lambda i: hex(", p, "_keys[i]) || ':' || CAST(", p,
                      "_types[i] AS VARCHAR) || ':' || ", StoredValueSql(prefix, "[i]"), "), ',')");
}

absl::Status AppendStoredValue(int64_t type_code, std::string_view text, otlp::BatchBase* batch,
                               otlp::ValueColumns* values) {
  absl::StatusOr<otlp::ValueRow> row = ParseStoredValue(type_code, text, batch);
  if (!row.ok()) return row.status();
  values->Append(*row);
  return absl::OkStatus();
}

absl::Status AppendStoredAttributes(std::string_view text, otlp::BatchBase* batch,
                                    otlp::AttributeColumns* table, otlp::Range* range) {
  range->begin = static_cast<uint32_t>(table->size());
  for (std::string_view entry : Split(text, ',')) {
    if (entry.empty()) continue;
    const std::vector<std::string_view> parts = Split(entry, ':');
    if (parts.size() != 3) return BadText("an attribute", entry);
    const std::optional<std::string_view> key = BytesFromHex(parts[0], &batch->arena);
    const std::optional<int64_t> type_code = ParseNumber<int64_t>(parts[1]);
    if (!key.has_value() || !type_code.has_value()) return BadText("an attribute", entry);
    absl::StatusOr<otlp::ValueRow> value = ParseStoredValue(*type_code, parts[2], batch);
    if (!value.ok()) return value.status();
    table->Append(otlp::AttributeRow{.key = *key, .value = *value});
  }
  range->count = static_cast<uint32_t>(table->size()) - range->begin;
  return absl::OkStatus();
}

}  // namespace strata::api::internal
