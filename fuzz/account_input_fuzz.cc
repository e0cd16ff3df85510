// Fuzz target for what clients send the account endpoints: JSON bodies
// (src/api/json_body.cc), Cookie headers (src/api/header_values.cc), and the text
// checks on emails, passwords, names and saved-query time ranges
// (src/control/text_checks.cc, accounts.cc, password.cc,
// saved_queries.cc). Each must return a value or an error, never crash; a
// body that parses must keep exactly the members it declared with their
// types; a normalized email must normalize to itself; a found cookie value
// must lie inside the header.

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "api/header_values.h"
#include "api/json_body.h"
#include "control/accounts.h"
#include "control/password.h"
#include "control/saved_queries.h"
#include "control/text_checks.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace strata;
  const std::string_view input(reinterpret_cast<const char*>(data), size);

  static constexpr api::JsonMember kMembers[] = {
      {.name = "name", .required = true},
      {.name = "active", .type = api::JsonMember::Type::kBool},
      {.name = "parameters", .type = api::JsonMember::Type::kObject}};
  if (absl::StatusOr<api::JsonBody> body = api::JsonBody::Parse(input, kMembers); body.ok()) {
    if (!body->String("name").has_value()) __builtin_trap();
    if (body->Bool("name").has_value() || body->String("active").has_value()) __builtin_trap();
    if (const std::optional<std::string> object = body->String("parameters")) {
      // A kept object is minified JSON that parses again as an object.
      static constexpr api::JsonMember kWrap[] = {
          {.name = "o", .type = api::JsonMember::Type::kObject, .required = true}};
      absl::StatusOr<api::JsonBody> again = api::JsonBody::Parse("{\"o\":" + *object + "}", kWrap);
      if (!again.ok() || again->String("o") != object) __builtin_trap();
    }
  }

  if (const std::optional<std::string_view> value = api::CookieValue(input, "strata_session")) {
    if (value->data() < input.data() ||
        value->data() + value->size() > input.data() + input.size()) {
      __builtin_trap();
    }
  }

  if (absl::StatusOr<std::string> email = control::NormalizeEmail(input); email.ok()) {
    absl::StatusOr<std::string> again = control::NormalizeEmail(*email);
    if (!again.ok() || *again != *email) __builtin_trap();
  }
  (void)control::ValidatePassword(input);
  (void)control::ValidateTimeRange(input);
  (void)control::ValidatePlainText("a name", input, 128);
  (void)control::CodePointCount(input);
  return 0;
}
