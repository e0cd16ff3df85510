#pragma once

// Typed values of stored rows, read back through SQL answers. The query pool
// answers every cell as text (query::QueryResult), and DuckDB's rendering of
// a list is ambiguous (a key may hold ", "), so the searches select each
// value in a form that reads back exactly:
//
//   * a value: its type code (docs/format/attributes.md) and
//     StoredValueSql's text: the hex of a string's UTF-8, of bytes, or of
//     the encoded AnyValue of an array or kvlist (types 1, 7, 5, 6); an int,
//     double or bool as DuckDB casts it to VARCHAR (types 3, 4, 2; DuckDB
//     writes the shortest text that reads back as the same double, and
//     "nan", "inf", "-inf"); "" for an empty value (type 0).
//   * an attribute family: AttributeFamilySql's text, one entry per
//     attribute in stored order, "<hex of key>:<type code>:<value>",
//     joined by ','. Neither ':' nor ',' occurs in a hex string or a
//     rendered number, so the text splits unambiguously.
//
// The Append functions rebuild the values in an otlp batch, decoding
// arrays and kvlists with otlp::DecodeAnyValueProto (their children go to
// batch->nested_values / nested_attributes; strings and bytes are copied
// into batch->arena), so otlp's encoders can write them.
//
// Thread-safety: reentrant; the batch has a single owner. Errors: Internal
// when a text is not what the SQL renders; DataLoss when a stored array or
// kvlist does not decode.

#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "otlp/batch.h"

namespace strata::api::internal {

// SQL of one stored value whose columns are `<prefix>_str`, `_int`,
// `_double`, `_bool`, `_bytes`, each followed by `index` ("" for the body
// columns, "[i]" for element i of an attribute family's lists).
std::string StoredValueSql(std::string_view prefix, std::string_view index);

// SQL of attribute family `prefix` ("attr", "scope_attr", "resource_attr").
std::string AttributeFamilySql(std::string_view prefix);

// Appends the value of type `type_code` rendered as `text` to `values`.
[[nodiscard]] absl::Status AppendStoredValue(int64_t type_code, std::string_view text,
                                             otlp::BatchBase* batch, otlp::ValueColumns* values);

// Appends the attributes of `text` (AttributeFamilySql's rendering) to
// `table`; *range covers them.
[[nodiscard]] absl::Status AppendStoredAttributes(std::string_view text, otlp::BatchBase* batch,
                                                  otlp::AttributeColumns* table,
                                                  otlp::Range* range);

}  // namespace strata::api::internal
