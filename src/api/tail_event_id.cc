#include "api/tail_event_id.h"

#include <charconv>

#include "absl/strings/str_cat.h"
#include "api/params.h"

namespace strata::api {

std::string FormatTailEventId(const storage::BatchId& batch, uint64_t row) {
  return absl::StrCat(batch.ToString(), "-", row);
}

absl::StatusOr<TailEventId> ParseTailEventId(std::string_view text) {
  auto bad = [&] {
    return absl::InvalidArgumentError(absl::StrCat(
        "Last-Event-ID: not an event id of a log tail (<batch id>-<row>): ", QuoteForError(text)));
  };
  const size_t dash = text.rfind('-');
  if (dash == std::string_view::npos) return bad();
  absl::StatusOr<storage::BatchId> batch = storage::BatchId::Parse(text.substr(0, dash));
  if (!batch.ok()) return bad();
  const std::string_view digits = text.substr(dash + 1);
  uint64_t row = 0;
  auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), row);
  if (digits.empty() || ec != std::errc() || end != digits.data() + digits.size()) return bad();
  return TailEventId{.batch = *batch, .row = row};
}

}  // namespace strata::api
