#include "objectstore/batch_store.h"

#include <algorithm>

#include "fmt/format.h"

namespace strata::objectstore {

absl::Status ValidateObjectKey(std::string_view key) {
  auto bad = [&](std::string_view why) {
    return absl::InvalidArgumentError(fmt::format("object key \"{}\" {}", key.substr(0, 200), why));
  };
  if (key.empty()) return bad("is empty");
  if (key.size() > kMaxKeyBytes) return bad(fmt::format("is longer than {} bytes", kMaxKeyBytes));
  for (char c : key) {
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '.' || c == '_' || c == '=' || c == '/' || c == '-';
    if (!ok) return bad("has a character outside [A-Za-z0-9._=/-]");
  }
  size_t start = 0;
  while (start <= key.size()) {
    size_t end = std::min(key.find('/', start), key.size());
    if (end == start) return bad("has an empty segment (a leading, trailing or double '/')");
    if (key[start] == '.') return bad("has a segment that starts with '.'");
    start = end + 1;
  }
  return absl::OkStatus();
}

}  // namespace strata::objectstore
