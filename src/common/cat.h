#pragma once

// Cat: strings, string_views, characters and numbers written one after
// another (the Abseil strata builds with has an absl::StrCat that takes no
// std::string_view).

#include <iterator>
#include <string>

#include "fmt/format.h"

namespace strata {

template <typename... Parts>
std::string Cat(const Parts&... parts) {
  std::string out;
  (fmt::format_to(std::back_inserter(out), "{}", parts), ...);
  return out;
}

}  // namespace strata
