#pragma once

// Request bodies that are one JSON object (POST /api/v1/sql, the account
// endpoints): each member a string, a boolean or an object, checked against
// the members an endpoint takes. Unknown members, repeated members, wrong
// types and missing required members are InvalidArgument naming the
// member, so a typo is an error rather than a silently ignored field.
//
// Thread-safety: stateless functions.

#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <variant>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"

namespace strata::api {

struct JsonMember {
  // kObject: a JSON object, kept as minified JSON text (String()).
  enum class Type { kString, kBool, kObject };
  std::string_view name;
  Type type = Type::kString;
  bool required = false;
};

class JsonBody {
 public:
  // Parses `body` as one object whose members are among `members`.
  [[nodiscard]] static absl::StatusOr<JsonBody> Parse(std::string_view body,
                                                      std::span<const JsonMember> members);

  // The member's value when it was given (and had the declared type).
  std::optional<std::string> String(std::string_view name) const;  // kString and kObject
  std::optional<bool> Bool(std::string_view name) const;
  // String(name) or "".
  std::string StringOr(std::string_view name) const { return String(name).value_or(""); }

 private:
  absl::flat_hash_map<std::string, std::variant<std::string, bool>> values_;
};

}  // namespace strata::api
