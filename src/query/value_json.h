#pragma once

// Stored attribute values and log bodies as plain JSON, for the friendly
// columns of the SQL views (docs/sql.md): a value is written as the JSON
// value it is, not as an OTLP/JSON AnyValue wrapper. Strings are JSON
// strings, ints JSON numbers (every int64 exactly), doubles the shortest
// number that reads back to the same bits (NaN and the infinities, which
// JSON lacks, as the strings "NaN", "Infinity", "-Infinity"), bools true or
// false, bytes base64 strings (as OTLP/JSON writes them), an empty value
// null, an array a JSON array and a kvlist a JSON object (keys in stored
// order, a repeated key kept). An attribute set is a JSON object.
//
// Arrays and kvlists arrive as the encoded AnyValue of
// docs/format/attributes.md and go through otlp's protobuf decoder, with
// its depth limit.
//
// Thread-safety: a ValueJsonWriter has a single owner; DuckDB's worker
// threads each use their own. Errors: InvalidArgument when nested bytes do
// not decode (the decoder's message), or a type code outside 0..7.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "otlp/batch.h"

namespace strata::query {

// One stored value: the type code and the value column its type selects
// (docs/format/attributes.md). `present` is false when that column holds
// NULL where the type needs a value (corrupt; written as null).
struct StoredValue {
  uint8_t type = 0;
  bool present = true;
  std::string_view str;     // type 1
  int64_t int_value = 0;    // type 3
  double double_value = 0;  // type 4
  bool bool_value = false;  // type 2
  std::string_view bytes;   // types 5, 6 (encoded AnyValue) and 7
};

class ValueJsonWriter {
 public:
  // Appends `value` as JSON to *out.
  [[nodiscard]] absl::Status AppendValue(const StoredValue& value, std::string* out);

  // Appends `key` as a JSON object key, with its colon, to *out.
  static void AppendKey(std::string_view key, std::string* out);

  // Appends the text form of `value` (docs/sql.md, attr()): a string as
  // it is, anything else as its JSON text.
  [[nodiscard]] absl::Status AppendText(const StoredValue& value, std::string* out);

  // Whether the text form of `value` (AppendText's; "" for an empty value,
  // which has none) contains `needle`, exactly as searching that text
  // would say, and with AppendText's errors. For an array or kvlist and a
  // needle without JSON's structural characters (`"{}[],:`), a match can
  // only lie inside one token of the text (a string's escaped bytes, a
  // number, a literal, a base64 string), so the tokens are searched one by
  // one and the text is never written: straight off the protobuf bytes
  // when they have the shape strata's encoder writes (EncodedContains),
  // else from the decoded value. Any other needle searches the written
  // text. The empty needle is found in any value, even one whose bytes do
  // not decode.
  [[nodiscard]] absl::StatusOr<bool> TextContains(const StoredValue& value,
                                                  std::string_view needle);

  // TextContains's search of the encoded array or kvlist `bytes` for
  // `needle` (not empty, no structural character), read straight off the
  // protobuf wire without decoding the value into columns
  // (value_search.cc). It answers only for bytes in the shape strata's
  // encoder writes, which the decoder reads the same way: one oneof
  // member per AnyValue, entries of one key then one value, valid UTF-8
  // strings, nesting within the decoder's depth limit. For anything else
  // it returns nullopt, and the caller decodes the bytes (which reports
  // their error, if they have one).
  std::optional<bool> EncodedContains(std::string_view bytes, std::string_view needle);

 private:
  void AppendDecoded(const otlp::ValueColumns& values, size_t row, int depth, std::string* out);
  // Decodes an array or kvlist (types 5 and 6) into scratch_ and top_.
  [[nodiscard]] absl::Status DecodeNested(std::string_view bytes);
  // Whether one token of the decoded value at `row`, or of its children,
  // contains `needle` (which has no structural character).
  bool DecodedContains(const otlp::ValueColumns& values, size_t row, int depth,
                       std::string_view needle);
  // Whether `s`, escaped as inside a JSON string, contains `needle`.
  bool EscapedContains(std::string_view s, std::string_view needle);
  // Appends the JSON text of a value that is neither an array nor a
  // kvlist.
  static void AppendScalar(const otlp::ValueRow& value, std::string* out);

  // One AnyValue message body at nesting `depth` (1 for the top value),
  // one entry of a kvlist, the entries of an array or kvlist: false when
  // the bytes leave EncodedContains's shape. Each token searched, until
  // one matches, sets found_.
  bool WalkValue(std::string_view message, uint32_t depth);
  bool WalkEntry(std::string_view message, uint32_t depth);
  bool WalkChildren(std::string_view message, bool kvlist, uint32_t depth);
  // Whether the JSON text of a value that is neither an array nor a kvlist
  // contains `needle`.
  bool ScalarContains(const otlp::ValueRow& value, std::string_view needle);

  // Scratch space for decoded arrays and kvlists, and the top value of
  // one, reused between values.
  otlp::BatchBase scratch_;
  otlp::ValueColumns top_;
  // One token's text, reused.
  std::string token_;
  // EncodedContains's needle and whether a token holds it.
  std::string_view needle_;
  bool found_ = false;
};

}  // namespace strata::query
