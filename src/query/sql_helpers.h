#pragma once

// The SQL helpers of docs/sql.md ("Helpers"): attr('key'), attr_str('key'),
// resource_attr_int('key'), has_attr('key'), ... They read one attribute of
// the row by key, typed. DuckDB 1.4 binds a macro's body when the macro is
// created, so a macro cannot name the columns of the table it is later used
// on; the helpers are therefore expanded in the SQL text before DuckDB sees
// it. DuckDB's own parser finds the calls (json_serialize_sql, in the
// adapter), so calls are never confused with text in strings, quoted names
// or comments; this file turns each call into the expression it stands for
// and checks that the text at each reported position is that call.
//
// A call on a promoted key whose column holds exactly that value
// (docs/sql.md, "Promoted keys") becomes the promoted column, so a filter
// through the helper reads what a filter on the column reads. Any other
// call becomes a list_position lookup on the attribute lists.
//
// Nothing here is a DuckDB object, so user SQL (read-only, one SELECT)
// can neither redefine nor drop a helper.
//
// Thread-safety: reentrant. Errors: InvalidArgument naming the call and its
// offset when a helper is not called with exactly one string literal.

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"

namespace strata::query {

// One function call of the SQL text, as DuckDB's parser reports it.
struct HelperCall {
  // Byte offset of the call's first character (its qualifier's, if any).
  size_t location = 0;
  // The function's name, lowercase.
  std::string name;
  // The table name or alias written before the name ("s" in
  // s.attr_str('k')), or empty.
  std::string qualifier;
  // The arguments: their count, and for a lone string literal its offset
  // and value.
  size_t argument_count = 0;
  bool key_is_string_literal = false;
  size_t key_location = 0;
  std::string key;
};

// Every helper's name, lowercase (for the adapter's search of the parse
// tree).
const std::vector<std::string>& HelperNames();

// The expression a helper call stands for, without the text checks; for
// tests and docs. InvalidArgument for a name that is not a helper.
[[nodiscard]] absl::StatusOr<std::string> HelperExpansion(std::string_view name,
                                                          std::string_view qualifier,
                                                          std::string_view key);

// The promoted column that holds exactly the string value of `key`'s first
// occurrence in family `prefix` ("attr", "resource_attr"), when its type
// is string (docs/sql.md, "Promoted keys"), or empty. Spans' attribute
// columns are stored; the logs and metrics views compute them from the
// lists.
std::string_view PromotedColumnOf(std::string_view prefix, std::string_view key);

// `sql` with every call in `calls` (calls of helpers; others are ignored)
// replaced by its expression, in parentheses. Each call's text is checked
// against what the parser reported: [qualifier.]name, '(', the string
// literal at key_location, ')', with only whitespace between.
[[nodiscard]] absl::StatusOr<std::string> ExpandHelperCalls(std::string_view sql,
                                                            std::vector<HelperCall> calls);

}  // namespace strata::query
