// Fuzz target for the SQL views' friendly forms (src/query/): the stored
// bytes of an array or kvlist value rendered as JSON (value_json.cc, over
// otlp's AnyValue decoder), and the helper expansion's checks of a call's
// text (sql_helpers.cc). The input's first four bytes place one helper call
// (its offset and its key's offset) in the rest, which is both the SQL
// text and the stored value. Neither may crash; an expansion that succeeds
// must have checked that a quote opens the key, and TextContains must answer
// as searching AppendText's text would (which also holds its walk of the
// encoded bytes, value_search.cc, to the decoder's reading of them).

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "query/sql_helpers.h"
#include "query/value_json.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace strata::query;
  if (size < 4) return 0;
  const std::string_view text(reinterpret_cast<const char*>(data) + 4, size - 4);
  ValueJsonWriter writer;
  std::string json;
  // The needle: the first data[0] % 8 bytes of the value, so it often
  // occurs in its text.
  const std::string_view needle = text.substr(0, std::min<size_t>(text.size(), data[0] % 8));
  for (uint8_t type : {5, 6, 7}) {
    json.clear();
    const StoredValue value{.type = type, .bytes = text};
    (void)writer.AppendValue(value, &json);
    // TextContains answers as searching AppendText's text, and fails when
    // it fails.
    std::string full;
    const bool written = writer.AppendText(value, &full).ok();
    const absl::StatusOr<bool> contains = writer.TextContains(value, needle);
    if (contains.ok() != written && !needle.empty()) __builtin_trap();
    if (written && contains.ok() && *contains != (full.find(needle) != std::string::npos)) {
      __builtin_trap();
    }
  }
  HelperCall call;
  call.location = text.empty() ? 0 : data[0] % (text.size() + 1);
  call.key_location = text.empty() ? 0 : data[1] % (text.size() + 1);
  call.name = data[2] % 2 == 0 ? "attr_str" : "has_resource_attr";
  call.qualifier = data[3] % 3 == 0 ? "s" : "";
  call.argument_count = 1;
  call.key_is_string_literal = true;
  call.key = "k";
  absl::StatusOr<std::string> expanded = ExpandHelperCalls(text, {call});
  if (expanded.ok() && (call.key_location >= text.size() || text[call.key_location] != '\'')) {
    __builtin_trap();
  }
  return 0;
}
