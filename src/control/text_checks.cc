#include "control/text_checks.h"

#include "fmt/format.h"

namespace strata::control {

int32_t NextCodePoint(std::string_view text, size_t* pos) {
  const auto byte = [&](size_t i) { return static_cast<unsigned char>(text[i]); };
  const unsigned char lead = byte(*pos);
  int length = 0;
  int32_t code = 0;
  int32_t min = 0;
  if (lead < 0x80) {
    ++*pos;
    return lead;
  } else if ((lead & 0xe0) == 0xc0) {
    length = 2, code = lead & 0x1f, min = 0x80;
  } else if ((lead & 0xf0) == 0xe0) {
    length = 3, code = lead & 0x0f, min = 0x800;
  } else if ((lead & 0xf8) == 0xf0) {
    length = 4, code = lead & 0x07, min = 0x10000;
  } else {
    return -1;
  }
  if (*pos + static_cast<size_t>(length) > text.size()) return -1;
  for (int i = 1; i < length; ++i) {
    const unsigned char next = byte(*pos + static_cast<size_t>(i));
    if ((next & 0xc0) != 0x80) return -1;
    code = (code << 6) | (next & 0x3f);
  }
  if (code < min || code > 0x10ffff || (code >= 0xd800 && code <= 0xdfff)) return -1;
  *pos += static_cast<size_t>(length);
  return code;
}

bool IsControlCodePoint(int32_t code) { return code < 0x20 || (code >= 0x7f && code <= 0x9f); }

std::optional<size_t> CodePointCount(std::string_view text) {
  size_t count = 0;
  for (size_t pos = 0; pos < text.size(); ++count) {
    if (NextCodePoint(text, &pos) < 0) return std::nullopt;
  }
  return count;
}

absl::Status ValidatePlainText(std::string_view what, std::string_view text, size_t max_bytes) {
  if (text.empty()) return absl::InvalidArgumentError(fmt::format("{} must not be empty", what));
  if (text.size() > max_bytes) {
    return absl::InvalidArgumentError(
        fmt::format("{} is at most {} bytes; this one is {}", what, max_bytes, text.size()));
  }
  for (size_t pos = 0; pos < text.size();) {
    const int32_t code = NextCodePoint(text, &pos);
    if (code < 0) return absl::InvalidArgumentError(fmt::format("{} must be valid UTF-8", what));
    if (IsControlCodePoint(code)) {
      return absl::InvalidArgumentError(
          fmt::format("{} must not contain control characters (found U+{:04X})", what, code));
    }
  }
  return absl::OkStatus();
}

}  // namespace strata::control
