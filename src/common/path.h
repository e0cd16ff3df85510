#pragma once

// The two path helpers every part uses: JoinPath() and ParentPath(). Paths
// are plain strings with '/' separators (strata runs on POSIX); nothing here
// touches the filesystem. Stateless and thread-safe.

#include <string>
#include <string_view>

namespace strata {

// `dir` + "/" + `name`; `name` alone when `dir` is empty, and no second
// '/' when `dir` already ends with one.
std::string JoinPath(std::string_view dir, std::string_view name);

// The directory holding `path`, with trailing '/' ignored: "a/b" -> "a",
// "/a" -> "/", "a" -> ".", "/" -> "/".
std::string ParentPath(std::string_view path);

}  // namespace strata
