#include "api/oauth_requests.h"

#include <iterator>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "common/cat.h"
#include "fmt/format.h"
#include "simdjson.h"

namespace strata::api {
namespace {

absl::Status Metadata(std::string_view why) {
  return absl::InvalidArgumentError(Cat("invalid_client_metadata: ", why));
}

bool HasControlOrSpace(std::string_view text) {
  for (unsigned char c : text) {
    if (c <= 0x20 || c == 0x7f) return true;
  }
  return false;
}

// True when every string of the array `element` is in `allowed`.
absl::Status CheckStrings(simdjson::dom::element element, std::string_view member,
                          std::initializer_list<std::string_view> allowed) {
  simdjson::dom::array array;
  if (element.get_array().get(array) != simdjson::SUCCESS) {
    return Metadata(Cat(member, " must be an array of strings"));
  }
  size_t count = 0;
  for (simdjson::dom::element item : array) {
    std::string_view value;
    if (item.get_string().get(value) != simdjson::SUCCESS || ++count > 8) {
      return Metadata(Cat(member, " must be an array of at most 8 strings"));
    }
    bool known = false;
    for (std::string_view ok : allowed) known |= value == ok;
    if (!known) return Metadata(Cat(member, ": this server does not support that value"));
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status CheckRedirectUri(std::string_view uri) {
  auto bad = [&](std::string_view why) {
    return absl::InvalidArgumentError(Cat("invalid_redirect_uri: ", why));
  };
  if (uri.empty() || uri.size() > kMaxRedirectUriBytes) {
    return bad(Cat("a redirect URI must be 1 to ", kMaxRedirectUriBytes, " bytes"));
  }
  if (HasControlOrSpace(uri)) return bad("a redirect URI may not hold spaces or control bytes");
  if (uri.find('#') != std::string_view::npos) return bad("a redirect URI may not hold a fragment");
  const absl::string_view text(uri.data(), uri.size());
  std::string_view rest;
  bool https = false;
  if (absl::StartsWithIgnoreCase(text, "https://")) {
    rest = uri.substr(8);
    https = true;
  } else if (absl::StartsWithIgnoreCase(text, "http://")) {
    rest = uri.substr(7);
  } else {
    return bad("a redirect URI must be https, or http to a loopback host");
  }
  std::string_view authority = rest.substr(0, rest.find_first_of("/?"));
  if (authority.empty() || authority.find('@') != std::string_view::npos) {
    return bad("a redirect URI needs a host and no user information");
  }
  if (https) return absl::OkStatus();
  std::string_view host = authority;
  if (host.starts_with("[")) {
    host =
        host.substr(0, host.find(']') == std::string_view::npos ? host.size() : host.find(']') + 1);
  } else {
    host = host.substr(0, host.find(':'));
  }
  const std::string lower = absl::AsciiStrToLower(std::string(host));
  if (lower != "localhost" && lower != "127.0.0.1" && lower != "[::1]") {
    return bad("an http redirect URI must name a loopback host (localhost, 127.0.0.1, [::1])");
  }
  return absl::OkStatus();
}

absl::StatusOr<ClientRegistration> ParseClientRegistration(std::string_view body) {
  if (body.size() > kMaxRegistrationBytes) {
    return Metadata(Cat("the body is larger than ", kMaxRegistrationBytes, " bytes"));
  }
  simdjson::dom::parser parser;
  simdjson::dom::element root;
  simdjson::dom::object object;
  if (parser.parse(body.data(), body.size()).get(root) != simdjson::SUCCESS ||
      root.get_object().get(object) != simdjson::SUCCESS) {
    return Metadata("the body must be a JSON object");
  }
  ClientRegistration registration;
  bool have_uris = false;
  for (simdjson::dom::key_value_pair member : object) {
    const std::string_view key = member.key;
    if (key == "redirect_uris") {
      if (have_uris) return Metadata("redirect_uris given twice");
      have_uris = true;
      simdjson::dom::array uris;
      if (member.value.get_array().get(uris) != simdjson::SUCCESS) {
        return absl::InvalidArgumentError(
            "invalid_redirect_uri: redirect_uris must be an array of strings");
      }
      for (simdjson::dom::element item : uris) {
        std::string_view uri;
        if (item.get_string().get(uri) != simdjson::SUCCESS) {
          return absl::InvalidArgumentError(
              "invalid_redirect_uri: redirect_uris must be an array of strings");
        }
        if (registration.redirect_uris.size() == kMaxRedirectUris) {
          return absl::InvalidArgumentError(
              Cat("invalid_redirect_uri: at most ", kMaxRedirectUris, " redirect URIs"));
        }
        if (absl::Status ok = CheckRedirectUri(uri); !ok.ok()) return ok;
        registration.redirect_uris.emplace_back(uri);
      }
    } else if (key == "client_name") {
      std::string_view name;
      if (member.value.get_string().get(name) != simdjson::SUCCESS) {
        return Metadata("client_name must be a string");
      }
      if (name.size() > kMaxClientNameBytes) {
        return Metadata(Cat("client_name is longer than ", kMaxClientNameBytes, " bytes"));
      }
      for (unsigned char c : name) {
        if (c < 0x20 || c == 0x7f) return Metadata("client_name holds control characters");
      }
      registration.name = std::string(name);
    } else if (key == "token_endpoint_auth_method") {
      std::string_view method;
      if (member.value.get_string().get(method) != simdjson::SUCCESS || method != "none") {
        return Metadata("token_endpoint_auth_method must be \"none\": public clients only");
      }
    } else if (key == "grant_types") {
      if (absl::Status ok =
              CheckStrings(member.value, "grant_types", {"authorization_code", "refresh_token"});
          !ok.ok()) {
        return ok;
      }
    } else if (key == "response_types") {
      if (absl::Status ok = CheckStrings(member.value, "response_types", {"code"}); !ok.ok()) {
        return ok;
      }
    }
  }
  if (registration.redirect_uris.empty()) {
    return absl::InvalidArgumentError("invalid_redirect_uri: redirect_uris needs at least one URI");
  }
  return registration;
}

}  // namespace strata::api
