#pragma once

// Reading one cookie out of a Cookie header ("a=1; b=2"), as browsers send
// it (RFC 6265, section 5.4): pairs separated by ";", optional spaces, the
// first pair with the name wins. Values are returned as sent (strata's own
// cookie values never need quoting or decoding).
//
// Thread-safety: stateless.

#include <optional>
#include <string_view>

namespace strata::api {

// The value of cookie `name` in `header`; nullopt when it is not there.
std::optional<std::string_view> CookieValue(std::string_view header, std::string_view name);

}  // namespace strata::api
