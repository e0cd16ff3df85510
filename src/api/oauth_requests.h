#pragma once

// What OAuth clients send strata, parsed and checked (docs/mcp.md,
// "Authorization"): the dynamic client registration body (RFC 7591) and
// redirect URIs. Both come from anyone who can reach the port, so every
// size is capped and anything unexpected is refused with the error code
// the RFCs name.
//
// Thread-safety: stateless functions.

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"

namespace strata::api {

inline constexpr size_t kMaxRegistrationBytes = 16 * 1024;
inline constexpr size_t kMaxRedirectUris = 8;
inline constexpr size_t kMaxRedirectUriBytes = 2000;
inline constexpr size_t kMaxClientNameBytes = 200;

struct ClientRegistration {
  std::string name;  // client_name, or "" when not given
  std::vector<std::string> redirect_uris;
};

// OK when `uri` may receive codes: https://<host>[...], or http:// to a
// loopback host (localhost, 127.0.0.1, [::1]) for native apps (RFC 8252);
// at most kMaxRedirectUriBytes, no fragment, no spaces or control bytes.
// InvalidArgument saying why.
[[nodiscard]] absl::Status CheckRedirectUri(std::string_view uri);

// A registration request's JSON body. Members strata does not use are
// ignored, as RFC 7591 asks; redirect_uris is required;
// token_endpoint_auth_method, when given, must be "none" (public clients
// only), grant_types among authorization_code and refresh_token,
// response_types "code". InvalidArgument "invalid_redirect_uri: ..." or
// "invalid_client_metadata: ...".
[[nodiscard]] absl::StatusOr<ClientRegistration> ParseClientRegistration(std::string_view body);

}  // namespace strata::api
