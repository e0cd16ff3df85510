#include "api/json_body.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "simdjson.h"

namespace strata::api {

absl::StatusOr<JsonBody> JsonBody::Parse(std::string_view body,
                                         std::span<const JsonMember> members) {
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  if (auto error = parser.parse(body.data(), body.size()).get(doc); error) {
    return absl::InvalidArgumentError(
        absl::StrCat("body: not valid JSON: ", simdjson::error_message(error)));
  }
  simdjson::dom::object object;
  if (doc.get_object().get(object) != simdjson::SUCCESS) {
    return absl::InvalidArgumentError("body: expected a JSON object");
  }
  JsonBody parsed;
  for (simdjson::dom::key_value_pair member : object) {
    const JsonMember* known = nullptr;
    for (const JsonMember& candidate : members) {
      if (candidate.name == member.key) known = &candidate;
    }
    if (known == nullptr) {
      std::vector<std::string> names;
      for (const JsonMember& candidate : members) names.emplace_back(candidate.name);
      return absl::InvalidArgumentError(absl::StrCat("body: unknown member \"",
                                                     std::string(member.key), "\" (expected ",
                                                     absl::StrJoin(names, ", "), ")"));
    }
    const std::string name(known->name);
    if (parsed.values_.contains(name)) {
      return absl::InvalidArgumentError(absl::StrCat("body: member \"", name, "\" given twice"));
    }
    if (known->type == JsonMember::Type::kString) {
      std::string_view text;
      if (member.value.get_string().get(text) != simdjson::SUCCESS) {
        return absl::InvalidArgumentError(
            absl::StrCat("body: member \"", name, "\" must be a string"));
      }
      parsed.values_.emplace(name, std::string(text));
    } else if (known->type == JsonMember::Type::kObject) {
      if (!member.value.is_object()) {
        return absl::InvalidArgumentError(
            absl::StrCat("body: member \"", name, "\" must be a JSON object"));
      }
      parsed.values_.emplace(name, simdjson::minify(member.value));
    } else {
      bool value = false;
      if (member.value.get_bool().get(value) != simdjson::SUCCESS) {
        return absl::InvalidArgumentError(
            absl::StrCat("body: member \"", name, "\" must be true or false"));
      }
      parsed.values_.emplace(name, value);
    }
  }
  for (const JsonMember& member : members) {
    if (member.required && !parsed.values_.contains(std::string(member.name))) {
      return absl::InvalidArgumentError(
          absl::StrCat("body: missing member \"", std::string(member.name), "\""));
    }
  }
  return parsed;
}

std::optional<std::string> JsonBody::String(std::string_view name) const {
  const auto it = values_.find(absl::string_view(name.data(), name.size()));
  if (it == values_.end() || !std::holds_alternative<std::string>(it->second)) return std::nullopt;
  return std::get<std::string>(it->second);
}

std::optional<bool> JsonBody::Bool(std::string_view name) const {
  const auto it = values_.find(absl::string_view(name.data(), name.size()));
  if (it == values_.end() || !std::holds_alternative<bool>(it->second)) return std::nullopt;
  return std::get<bool>(it->second);
}

}  // namespace strata::api
