#pragma once

// Checks on text people choose (token names, emails, display names,
// passwords, saved-query names): well-formed UTF-8, lengths, control
// characters.
//
// Thread-safety: stateless functions.

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

#include "absl/status/status.h"

namespace strata::control {

// Decodes one UTF-8 code point at `text[*pos]`, advancing *pos; -1 if the
// bytes there are not well-formed UTF-8 (overlong forms, surrogates and
// values past U+10FFFF included).
int32_t NextCodePoint(std::string_view text, size_t* pos);

// C0 controls, DEL and C1 controls.
bool IsControlCodePoint(int32_t code);

// The number of code points of well-formed UTF-8 text; nullopt otherwise.
std::optional<size_t> CodePointCount(std::string_view text);

// OK when `text` is 1 to `max_bytes` bytes of well-formed UTF-8 without
// control characters; otherwise InvalidArgument starting with `what` ("a
// token name", "a display name") and saying which rule failed.
[[nodiscard]] absl::Status ValidatePlainText(std::string_view what, std::string_view text,
                                             size_t max_bytes);

}  // namespace strata::control
