#pragma once

// Pointers from log lines and errors into the operator's runbook,
// docs/operations.md. Every anchor used with RunbookRef() must name a heading
// of that file; runbook_test.cc scans the sources and fails on one that does
// not, so a pointer cannot rot.

#include <string>
#include <string_view>

namespace strata {

inline constexpr char kRunbookPath[] = "docs/operations.md";

// "see docs/operations.md#<anchor>", for the end of an error message.
inline std::string RunbookRef(std::string_view anchor) {
  return std::string("see ") + kRunbookPath + "#" + std::string(anchor);
}

}  // namespace strata
