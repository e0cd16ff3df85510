#pragma once

// Reading request header values: one cookie out of a Cookie header ("a=1;
// b=2"), as browsers send it (RFC 6265, section 5.4: pairs separated by
// ";", optional spaces, the first pair with the name wins; values returned
// as sent, since strata's own cookie values never need quoting or
// decoding), and comparing tokens without regard to ASCII case.
//
// Thread-safety: stateless.

#include <optional>
#include <string_view>

namespace strata::api {

// The value of cookie `name` in `header`; nullopt when it is not there.
std::optional<std::string_view> CookieValue(std::string_view header, std::string_view name);

// `text` without the optional whitespace (spaces and tabs) around it.
std::string_view TrimSpaces(std::string_view text);

// True when `a` and `b` are equal but for the case of ASCII letters.
bool EqualsIgnoringCase(std::string_view a, std::string_view b);

}  // namespace strata::api
