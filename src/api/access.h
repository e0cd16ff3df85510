#pragma once

// Who may call what (docs/api.md, "Access"). Every route of the REST API is
// classified in one table, RouteRules(): public, read (any signed-in user,
// or a read or admin token), signed-in (a browser session), operator, or
// admin (an admin session or an admin token). A route missing from the
// table is refused (a test fails when one is registered without a row).
//
// A request proves who it is with `Authorization: Bearer <token>` or the
// session cookie (`strata_session`, `__Host-strata_session` over TLS);
// ResolveCaller() in api_server.cc turns either into a Caller.
//
// Requests a cookie authenticates are held to the browser rules
// (CheckBrowserRequest()): state-changing methods need the header
// `X-Strata-Request: 1`; an `Origin` header, when sent, must be the
// request's own origin; `Sec-Fetch-Site: cross-site` is refused. The
// public sign-in endpoints, which set the cookie, follow the same rules.
//
// Thread-safety: stateless functions over constant tables.

#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "control/accounts.h"
#include "control/token.h"
#include "server/http_adapter.h"

namespace strata::api {

enum class Access { kPublic, kRead, kSignedIn, kOperator, kAdmin };
std::string_view AccessName(Access access);

struct RouteRule {
  std::string_view method;
  std::string_view path;  // a prefix when `prefix`
  bool prefix = false;
  Access access = Access::kAdmin;
};

// Every route of the API (/api/v1/ and /jaeger/api/).
std::span<const RouteRule> RouteRules();
// The rule for a request, matched as HttpRouter matches (an exact path
// before the longest prefix); nullopt when none.
std::optional<Access> AccessFor(std::string_view method, std::string_view path);

struct Caller {
  enum class Kind { kAnonymous, kToken, kSession };
  Kind kind = Kind::kAnonymous;
  control::TokenScope scope = control::TokenScope::kRead;  // when kToken
  control::SessionUser session;                            // when kSession
  // When kToken and the token is an OAuth access token: its grant's id
  // (oauth.h); 0 otherwise.
  int64_t oauth_grant = 0;
  // How the audit log names the caller: "user:<email>", "token:<scope>",
  // "anonymous".
  std::string Actor() const;
};

// OK when `caller` may use a route of `access`; Unauthenticated (401) for
// an anonymous caller of a non-public route; PermissionDenied (403)
// otherwise, saying what is needed.
[[nodiscard]] absl::Status CheckAccess(Access access, const Caller& caller);

// The bearer token of `request`, or "" when there is none.
std::string_view BearerToken(const server::HttpRequest& request);
// The password of `Authorization: Basic <base64 of user:password>` (any
// user name), or "" when there is none or it does not decode: how clients
// that only do basic auth send a token.
std::string BasicPassword(const server::HttpRequest& request);
// The token a request presents: its bearer token, else its basic-auth
// password; "" when neither.
std::string PresentedToken(const server::HttpRequest& request);
// The session cookie's value, or "" when there is none.
std::string_view SessionCookie(const server::HttpRequest& request, bool secure);
inline constexpr std::string_view kSessionCookie = "strata_session";
inline constexpr std::string_view kSecureSessionCookie = "__Host-strata_session";
// Set-Cookie values that set the session (valid `lifetime`) and clear it.
std::string SetSessionCookie(std::string_view token, absl::Duration lifetime, bool secure);
std::string ClearSessionCookie(bool secure);

// True for the OAuth endpoints that clients (not browsers) call: client
// registration and the token endpoint. They take no cookie and set none,
// so the browser rules do not apply to them.
bool IsOAuthClientEndpoint(std::string_view path);

// True for methods that change state (anything but GET, HEAD, OPTIONS).
bool ChangesState(std::string_view method);
// The browser rules above; PermissionDenied saying which one failed.
// `secure` and `host` are what the client sees (forwarded.h's RequestView).
[[nodiscard]] absl::Status CheckBrowserRequest(const server::HttpRequest& request, bool secure,
                                               std::string_view host);

}  // namespace strata::api
