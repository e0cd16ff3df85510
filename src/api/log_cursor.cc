// EncodeLogCursor, DecodeLogCursor (log_cursor.h).

#include "api/log_cursor.h"

#include <algorithm>
#include <charconv>

#include "absl/strings/str_cat.h"
#include "api/params.h"

namespace strata::api::internal {
namespace {

constexpr std::string_view kCursorPrefix = "v2.";

}  // namespace

std::string EncodeLogCursor(const LogCursor& cursor) {
  return absl::StrCat(std::string(kCursorPrefix), cursor.time, ".", cursor.key, ".", cursor.shown);
}

absl::StatusOr<LogCursor> DecodeLogCursor(std::string_view text) {
  auto bad = [&] {
    return absl::InvalidArgumentError(
        absl::StrCat("cursor: not a cursor from a previous page: ", QuoteForError(text)));
  };
  if (text.substr(0, kCursorPrefix.size()) != kCursorPrefix) return bad();
  std::string_view rest = text.substr(kCursorPrefix.size());
  LogCursor cursor;
  uint64_t* const fields[] = {&cursor.time, &cursor.key, &cursor.shown};
  for (size_t i = 0; i < 3; ++i) {
    const size_t dot = i < 2 ? rest.find('.') : rest.size();
    if (dot == std::string_view::npos) return bad();
    const std::string_view field = rest.substr(0, dot);
    auto [end, ec] = std::from_chars(field.data(), field.data() + field.size(), *fields[i]);
    if (field.empty() || ec != std::errc() || end != field.data() + field.size()) return bad();
    rest.remove_prefix(std::min(rest.size(), dot + 1));
  }
  if (cursor.shown == 0) return bad();
  return cursor;
}

}  // namespace strata::api::internal
