#pragma once

// The cursor of GET /api/v1/logs (SearchLogs, search.h): the text a page
// gives as next_cursor and a client sends back, so parsing it is parsing
// untrusted text (fuzz/api_params_fuzz.cc).
//
// Thread-safety: reentrant. Errors: DecodeLogCursor returns InvalidArgument
// naming the cursor parameter and quoting the text.

#include <cstdint>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"

namespace strata::api::internal {

// A log search's cursor: the last row shown, its time and key, and how many
// rows with that time and key (identical records) the pages so far showed.
// Text "v2.<time>.<key>.<shown>", decimal, shown at least 1.
struct LogCursor {
  uint64_t time = 0;
  uint64_t key = 0;
  uint64_t shown = 0;
};
std::string EncodeLogCursor(const LogCursor& cursor);
// InvalidArgument naming the cursor parameter for any other text.
[[nodiscard]] absl::StatusOr<LogCursor> DecodeLogCursor(std::string_view text);

}  // namespace strata::api::internal
