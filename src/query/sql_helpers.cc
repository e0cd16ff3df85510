#include "query/sql_helpers.h"

#include <algorithm>
#include <cctype>
#include <optional>
#include <utility>

#include "fmt/format.h"

namespace strata::query {

namespace {

// An attribute family (docs/format/attributes.md) and the promoted columns
// that hold exactly the string value of one of its keys.
struct Family {
  std::string_view prefix;  // the helpers' prefix and the columns'
  std::vector<std::pair<std::string_view, std::string_view>> promoted;  // key, column
};

const std::vector<Family>& Families() {
  // Only promoted columns with a single source key stand in for a key: a
  // column with a list of sources (http_method, db_system,
  // deployment_environment, http_status_code) may hold another key's
  // value, and spans' exception_type may come from an event. In logs and
  // metrics, where these span keys are not promoted, the views compute
  // the same columns from the lists (query_pool.cc), so the expansion
  // means the same in every view.
  static const std::vector<Family> families = {
      {"attr",
       {{"http.route", "http_route"},
        {"rpc.service", "rpc_service"},
        {"rpc.method", "rpc_method"},
        {"peer.service", "peer_service"},
        {"messaging.system", "messaging_system"},
        {"messaging.destination.name", "messaging_destination"}}},
      {"resource_attr", {{"service.name", "service_name"}, {"service.version", "service_version"}}},
      {"scope_attr", {}},
  };
  return families;
}

// What a helper returns.
enum class Form { kText, kStr, kInt, kDouble, kBool, kJson, kHas };

constexpr std::pair<std::string_view, Form> kSuffixes[] = {
    {"", Form::kText},          {"_str", Form::kStr},   {"_int", Form::kInt},
    {"_double", Form::kDouble}, {"_bool", Form::kBool}, {"_json", Form::kJson},
};

std::string Literal(std::string_view text) {
  std::string out = "'";
  for (char c : text) {
    if (c == '\'') out += '\'';
    out += c;
  }
  return out + "'";
}

// The family and form of helper `name`, if it is one.
std::optional<std::pair<const Family*, Form>> Lookup(std::string_view name) {
  for (const Family& family : Families()) {
    if (name == fmt::format("has_{}", family.prefix)) return std::make_pair(&family, Form::kHas);
    for (const auto& [suffix, form] : kSuffixes) {
      if (name == fmt::format("{}{}", family.prefix, suffix)) return std::make_pair(&family, form);
    }
  }
  return std::nullopt;
}

bool IsSqlSpace(char c) { return std::isspace(static_cast<unsigned char>(c)) != 0; }

size_t SkipSpace(std::string_view sql, size_t at) {
  while (at < sql.size() && IsSqlSpace(sql[at])) ++at;
  return at;
}

bool EqualsIgnoringCase(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return std::tolower(static_cast<unsigned char>(x)) ==
                  std::tolower(static_cast<unsigned char>(y));
         });
}

// The end of the identifier `name` (plain, case-insensitive, or in double
// quotes with "" for a quote) written at `at`, or nullopt.
std::optional<size_t> MatchIdentifier(std::string_view sql, size_t at, std::string_view name) {
  if (at < sql.size() && sql[at] == '"') {
    std::string unquoted;
    size_t i = at + 1;
    while (i < sql.size()) {
      if (sql[i] == '"') {
        if (i + 1 < sql.size() && sql[i + 1] == '"') {
          unquoted += '"';
          i += 2;
          continue;
        }
        return unquoted == name ? std::optional<size_t>(i + 1) : std::nullopt;
      }
      unquoted += sql[i++];
    }
    return std::nullopt;
  }
  if (sql.size() - std::min(at, sql.size()) < name.size() ||
      !EqualsIgnoringCase(sql.substr(at, name.size()), name)) {
    return std::nullopt;
  }
  return at + name.size();
}

// The end of the string literal at `at` ('...' with '' for a quote), or
// nullopt.
std::optional<size_t> MatchStringLiteral(std::string_view sql, size_t at) {
  if (at >= sql.size() || sql[at] != '\'') return std::nullopt;
  for (size_t i = at + 1; i < sql.size(); ++i) {
    if (sql[i] != '\'') continue;
    if (i + 1 < sql.size() && sql[i + 1] == '\'') {
      ++i;
      continue;
    }
    return i + 1;
  }
  return std::nullopt;
}

absl::Status BadCall(const HelperCall& call, std::string_view why) {
  return absl::InvalidArgumentError(fmt::format(
      "query: {}() at offset {} {}; a helper takes one string literal, the attribute key, as "
      "in {}('http.route') (docs/sql.md, \"Helpers\")",
      call.name, call.location, why, call.name));
}

// The end of `call`'s text, checked against the parser's report.
absl::StatusOr<size_t> CallEnd(std::string_view sql, const HelperCall& call) {
  size_t at = call.location;
  if (!call.qualifier.empty()) {
    std::optional<size_t> end = MatchIdentifier(sql, at, call.qualifier);
    if (!end.has_value() || *end >= sql.size() || sql[*end] != '.') {
      return BadCall(call, "is not written as <table>.<helper>(...)");
    }
    at = *end + 1;
  }
  std::optional<size_t> end = MatchIdentifier(sql, at, call.name);
  if (!end.has_value()) return BadCall(call, "could not be found in the text");
  at = SkipSpace(sql, *end);
  if (at >= sql.size() || sql[at] != '(') return BadCall(call, "has no '(' after its name");
  at = SkipSpace(sql, at + 1);
  if (at != call.key_location) return BadCall(call, "has text before its key");
  std::optional<size_t> literal_end = MatchStringLiteral(sql, at);
  if (!literal_end.has_value()) return BadCall(call, "does not start its key with a quote");
  at = SkipSpace(sql, *literal_end);
  if (at >= sql.size() || sql[at] != ')') return BadCall(call, "has text after its key");
  return at + 1;
}

}  // namespace

std::string_view PromotedColumnOf(std::string_view prefix, std::string_view key) {
  for (const Family& family : Families()) {
    if (family.prefix != prefix) continue;
    for (const auto& [promoted_key, column] : family.promoted) {
      if (promoted_key == key) return column;
    }
  }
  return {};
}

const std::vector<std::string>& HelperNames() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> out;
    for (const Family& family : Families()) {
      for (const auto& [suffix, form] : kSuffixes) {
        out.push_back(fmt::format("{}{}", family.prefix, suffix));
      }
      out.push_back(fmt::format("has_{}", family.prefix));
    }
    return out;
  }();
  return names;
}

absl::StatusOr<std::string> HelperExpansion(std::string_view name, std::string_view qualifier,
                                            std::string_view key) {
  std::optional<std::pair<const Family*, Form>> helper = Lookup(name);
  if (!helper.has_value()) {
    return absl::InvalidArgumentError(fmt::format("query: {} is not a helper", name));
  }
  const auto [family, form] = *helper;
  // A qualifier is an identifier as written; it goes back quoted.
  std::string q;
  if (!qualifier.empty()) {
    q = "\"";
    for (char c : qualifier) {
      if (c == '"') q += '"';
      q += c;
    }
    q += "\".";
  }
  const std::string k = Literal(key);
  const std::string_view p = family->prefix;
  if (form == Form::kHas) return fmt::format("list_contains({}{}_keys, {})", q, p, k);
  if (form == Form::kStr) {
    for (const auto& [promoted_key, column] : family->promoted) {
      if (promoted_key == key) return fmt::format("{}{}", q, column);
    }
  }
  const std::string position = fmt::format("list_position({}{}_keys, {})", q, p, k);
  auto element = [&](std::string_view list) {
    return fmt::format("{}{}_{}[{}]", q, p, list, position);
  };
  switch (form) {
    case Form::kStr:
      return element("str");
    case Form::kInt:
      return element("int");
    case Form::kDouble:
      return element("double");
    case Form::kBool:
      return element("bool");
    case Form::kText:
    case Form::kJson:
      return fmt::format("{}({}, {}, {}, {}, {}, {})",
                         form == Form::kText ? "otlp_value_text" : "otlp_value_json",
                         element("types"), element("str"), element("int"), element("double"),
                         element("bool"), element("bytes"));
    case Form::kHas:
      break;
  }
  return absl::InternalError("query: unhandled helper form");
}

absl::StatusOr<std::string> ExpandHelperCalls(std::string_view sql, std::vector<HelperCall> calls) {
  std::erase_if(calls, [](const HelperCall& call) { return !Lookup(call.name).has_value(); });
  // In text order, and the output built once: the work is linear in the
  // text and the calls, however many calls a query holds. Calls never
  // overlap (a helper's only argument is a literal).
  std::sort(calls.begin(), calls.end(),
            [](const HelperCall& a, const HelperCall& b) { return a.location < b.location; });
  std::string out;
  out.reserve(sql.size());
  size_t copied = 0;  // sql[0, copied) is in `out`
  for (const HelperCall& call : calls) {
    if (call.argument_count != 1) return BadCall(call, "does not have exactly one argument");
    if (!call.key_is_string_literal) return BadCall(call, "has a key that is not a string literal");
    if (call.location < copied) return BadCall(call, "overlaps another call");
    absl::StatusOr<size_t> end = CallEnd(sql, call);
    if (!end.ok()) return end.status();
    absl::StatusOr<std::string> expansion = HelperExpansion(call.name, call.qualifier, call.key);
    if (!expansion.ok()) return expansion.status();
    out.append(sql.substr(copied, call.location - copied));
    out.append("(").append(*expansion).append(")");
    copied = *end;
  }
  out.append(sql.substr(copied));
  return out;
}

}  // namespace strata::query
