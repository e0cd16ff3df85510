#pragma once

// std::string_view as absl::string_view: the Abseil strata builds with keeps
// its own string_view type, and absl::StrCat, SimpleAtoi and friends take
// only that one.

#include <string_view>

#include "absl/strings/string_view.h"

namespace strata {

inline absl::string_view Absl(std::string_view text) { return {text.data(), text.size()}; }

}  // namespace strata
