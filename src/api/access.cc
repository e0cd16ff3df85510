#include "api/access.h"

#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "api/header_values.h"
#include "common/check.h"
#include "fmt/format.h"

namespace strata::api {
namespace {

constexpr RouteRule kRules[] = {
    // Telemetry: read.
    {"GET", "/api/v1/traces/", true, Access::kRead},
    {"GET", "/api/v1/traces", false, Access::kRead},
    {"GET", "/api/v1/logs", false, Access::kRead},
    {"GET", "/api/v1/logs/volume", false, Access::kRead},
    {"GET", "/api/v1/logs/tail", false, Access::kRead},
    {"GET", "/api/v1/attributes", false, Access::kRead},
    {"GET", "/api/v1/metrics/names", false, Access::kRead},
    {"GET", "/api/v1/metrics/query", false, Access::kRead},
    {"GET", "/api/v1/services", false, Access::kRead},
    {"GET", "/api/v1/services/", true, Access::kRead},
    {"GET", "/api/v1/red", false, Access::kRead},
    {"GET", "/api/v1/service-map", false, Access::kRead},
    {"POST", "/api/v1/sql", false, Access::kRead},
    // Jaeger's query API: read.
    {"GET", "/jaeger/api/services", false, Access::kRead},
    {"GET", "/jaeger/api/services/", true, Access::kRead},
    {"GET", "/jaeger/api/operations", false, Access::kRead},
    {"GET", "/jaeger/api/traces", false, Access::kRead},
    {"GET", "/jaeger/api/traces/", true, Access::kRead},
    {"GET", "/jaeger/api/dependencies", false, Access::kRead},
    {"GET", "/jaeger/api/v3/services", false, Access::kRead},
    {"GET", "/jaeger/api/v3/operations", false, Access::kRead},
    {"GET", "/jaeger/api/v3/traces", false, Access::kRead},
    {"GET", "/jaeger/api/v3/traces/", true, Access::kRead},
    // The Prometheus API (prometheus_endpoints.cc): read; queries also by
    // form-encoded POST, as Grafana sends them.
    {"GET", "/prometheus/api/v1/query", false, Access::kRead},
    {"GET", "/prometheus/api/v1/query_range", false, Access::kRead},
    {"GET", "/prometheus/api/v1/query_exemplars", false, Access::kRead},
    {"GET", "/prometheus/api/v1/labels", false, Access::kRead},
    {"GET", "/prometheus/api/v1/series", false, Access::kRead},
    {"GET", "/prometheus/api/v1/format_query", false, Access::kRead},
    {"POST", "/prometheus/api/v1/query", false, Access::kRead},
    {"POST", "/prometheus/api/v1/query_range", false, Access::kRead},
    {"POST", "/prometheus/api/v1/query_exemplars", false, Access::kRead},
    {"POST", "/prometheus/api/v1/labels", false, Access::kRead},
    {"POST", "/prometheus/api/v1/series", false, Access::kRead},
    {"POST", "/prometheus/api/v1/format_query", false, Access::kRead},
    {"GET", "/prometheus/api/v1/label/", true, Access::kRead},
    {"GET", "/prometheus/api/v1/metadata", false, Access::kRead},
    {"GET", "/prometheus/api/v1/status/buildinfo", false, Access::kRead},
    {"GET", "/prometheus/api/v1/rules", false, Access::kRead},
    {"GET", "/prometheus/api/v1/alerts", false, Access::kRead},
    // The Tempo API (tempo_endpoints.cc).
    {"GET", "/tempo/api/echo", false, Access::kRead},
    {"GET", "/tempo/api/status/buildinfo", false, Access::kRead},
    {"GET", "/tempo/api/search", false, Access::kRead},
    {"GET", "/tempo/api/traces/", true, Access::kRead},
    {"GET", "/tempo/api/v2/traces/", true, Access::kRead},
    {"GET", "/tempo/api/search/tags", false, Access::kRead},
    {"GET", "/tempo/api/v2/search/tags", false, Access::kRead},
    {"GET", "/tempo/api/search/tag/", true, Access::kRead},
    {"GET", "/tempo/api/v2/search/tag/", true, Access::kRead},
    // The Loki API (loki_endpoints.cc).
    {"GET", "/loki/api/v1/query_range", false, Access::kRead},
    {"GET", "/loki/api/v1/query", false, Access::kRead},
    {"GET", "/loki/api/v1/labels", false, Access::kRead},
    {"GET", "/loki/api/v1/label", false, Access::kRead},
    {"GET", "/loki/api/v1/label/", true, Access::kRead},
    {"GET", "/loki/api/v1/series", false, Access::kRead},
    {"GET", "/loki/api/v1/status/buildinfo", false, Access::kRead},
    {"GET", "/loki/api/v1/index/stats", false, Access::kRead},
    {"GET", "/loki/api/v1/index/volume", false, Access::kRead},
    {"GET", "/loki/api/v1/index/volume_range", false, Access::kRead},
    {"GET", "/loki/api/v1/detected_labels", false, Access::kRead},
    {"GET", "/loki/api/v1/detected_fields", false, Access::kRead},
    {"GET", "/loki/api/v1/tail", false, Access::kRead},
    // The MCP server (docs/mcp.md): agents send a read token.
    {"POST", "/mcp", false, Access::kRead},
    {"GET", "/mcp", false, Access::kRead},
    {"DELETE", "/mcp", false, Access::kRead},
    // OAuth 2.1 for /mcp (oauth_endpoints.cc): metadata, registration and
    // the token endpoint are for anyone (clients before they hold a
    // token); the authorization page handles the session itself (sign in
    // first); the consent's answer needs a signed-in user.
    {"GET", "/.well-known/oauth-protected-resource", false, Access::kPublic},
    {"GET", "/.well-known/oauth-protected-resource/mcp", false, Access::kPublic},
    {"GET", "/.well-known/oauth-authorization-server", false, Access::kPublic},
    {"POST", "/oauth/register", false, Access::kPublic},
    {"GET", "/oauth/authorize", false, Access::kPublic},
    {"POST", "/oauth/authorize", false, Access::kSignedIn},
    {"POST", "/oauth/token", false, Access::kPublic},
    // Signing in.
    {"GET", "/api/v1/auth/setup", false, Access::kPublic},
    {"POST", "/api/v1/auth/setup", false, Access::kPublic},
    {"POST", "/api/v1/auth/login", false, Access::kPublic},
    {"POST", "/api/v1/auth/password", false, Access::kPublic},
    {"POST", "/api/v1/auth/logout", false, Access::kSignedIn},
    {"GET", "/api/v1/auth/me", false, Access::kSignedIn},
    {"POST", "/api/v1/auth/me/password", false, Access::kSignedIn},
    {"GET", "/api/v1/auth/me/oauth-grants", false, Access::kSignedIn},
    {"DELETE", "/api/v1/auth/me/oauth-grants/", true, Access::kSignedIn},
    // Administration.
    {"GET", "/api/v1/users", false, Access::kAdmin},
    {"POST", "/api/v1/users", false, Access::kAdmin},
    {"PATCH", "/api/v1/users/", true, Access::kAdmin},
    {"DELETE", "/api/v1/users/", true, Access::kAdmin},
    {"POST", "/api/v1/users/", true, Access::kAdmin},
    {"GET", "/api/v1/tokens", false, Access::kAdmin},
    {"POST", "/api/v1/tokens", false, Access::kAdmin},
    {"DELETE", "/api/v1/tokens/", true, Access::kAdmin},
    {"GET", "/api/v1/audit", false, Access::kAdmin},
    // Saved queries: each person's own, and shared ones (saved_queries.h).
    {"GET", "/api/v1/saved-queries", false, Access::kSignedIn},
    {"POST", "/api/v1/saved-queries", false, Access::kSignedIn},
    {"GET", "/api/v1/saved-queries/", true, Access::kSignedIn},
    {"PATCH", "/api/v1/saved-queries/", true, Access::kSignedIn},
    {"DELETE", "/api/v1/saved-queries/", true, Access::kSignedIn},
};

}  // namespace

std::string_view AccessName(Access access) {
  switch (access) {
    case Access::kPublic:
      return "public";
    case Access::kRead:
      return "read";
    case Access::kSignedIn:
      return "signed-in";
    case Access::kOperator:
      return "operator";
    case Access::kAdmin:
      return "admin";
  }
  STRATA_CHECK(false, "unknown Access");
  return "";
}

std::span<const RouteRule> RouteRules() { return kRules; }

std::optional<Access> AccessFor(std::string_view method, std::string_view path) {
  const RouteRule* best = nullptr;
  for (const RouteRule& rule : kRules) {
    if (rule.method != method) continue;
    const bool matches =
        rule.prefix ? path.substr(0, rule.path.size()) == rule.path : path == rule.path;
    if (!matches) continue;
    if (best == nullptr || (best->prefix && !rule.prefix) ||
        (best->prefix == rule.prefix && rule.path.size() > best->path.size())) {
      best = &rule;
    }
  }
  if (best == nullptr) return std::nullopt;
  return best->access;
}

std::string Caller::Actor() const {
  switch (kind) {
    case Kind::kAnonymous:
      return "anonymous";
    case Kind::kToken:
      return fmt::format("token:{}", control::TokenScopeName(scope));
    case Kind::kSession:
      return "user:" + session.user.email;
  }
  return "anonymous";
}

absl::Status CheckAccess(Access access, const Caller& caller) {
  if (access == Access::kPublic) return absl::OkStatus();
  if (caller.kind == Caller::Kind::kAnonymous) {
    return absl::UnauthenticatedError("sign in, or send a token (Authorization: Bearer <token>)");
  }
  if (caller.kind == Caller::Kind::kToken) {
    const bool allowed = (access == Access::kRead &&
                          control::ScopeAllows(caller.scope, control::TokenScope::kRead)) ||
                         ((access == Access::kOperator || access == Access::kAdmin) &&
                          caller.scope == control::TokenScope::kAdmin);
    if (allowed) return absl::OkStatus();
    if (access == Access::kSignedIn) {
      return absl::PermissionDeniedError("this endpoint is for a signed-in user, not a token");
    }
    return absl::PermissionDeniedError(
        fmt::format("a token of scope {} may not do this; it needs a {} token",
                    control::TokenScopeName(caller.scope),
                    access == Access::kRead ? "read or admin" : "admin"));
  }
  const control::Role role = caller.session.user.role;
  const bool allowed =
      access == Access::kRead || access == Access::kSignedIn ||
      (access == Access::kOperator && control::RoleAllows(role, control::Role::kOperator)) ||
      (access == Access::kAdmin && control::RoleAllows(role, control::Role::kAdmin));
  if (allowed) return absl::OkStatus();
  return absl::PermissionDeniedError(fmt::format("role {} may not do this; it needs {}",
                                                 control::RoleName(role), AccessName(access)));
}

std::string_view BearerToken(const server::HttpRequest& request) {
  std::string_view value = request.Header("Authorization");
  while (!value.empty() && value.front() == ' ') value.remove_prefix(1);
  if (value.size() < 7 || absl::AsciiStrToLower(std::string(value.substr(0, 7))) != "bearer ") {
    return {};
  }
  value.remove_prefix(7);
  while (!value.empty() && value.front() == ' ') value.remove_prefix(1);
  while (!value.empty() && value.back() == ' ') value.remove_suffix(1);
  return value;
}

std::string BasicPassword(const server::HttpRequest& request) {
  std::string_view value = request.Header("Authorization");
  while (!value.empty() && value.front() == ' ') value.remove_prefix(1);
  if (value.size() < 6 || absl::AsciiStrToLower(std::string(value.substr(0, 6))) != "basic ") {
    return {};
  }
  value.remove_prefix(6);
  while (!value.empty() && value.front() == ' ') value.remove_prefix(1);
  while (!value.empty() && value.back() == ' ') value.remove_suffix(1);
  std::string decoded;
  if (!absl::Base64Unescape(absl::string_view(value.data(), value.size()), &decoded)) return {};
  const size_t colon = decoded.find(':');
  if (colon == std::string::npos) return {};
  return decoded.substr(colon + 1);
}

std::string PresentedToken(const server::HttpRequest& request) {
  if (const std::string_view bearer = BearerToken(request); !bearer.empty()) {
    return std::string(bearer);
  }
  return BasicPassword(request);
}

std::string_view SessionCookie(const server::HttpRequest& request, bool secure) {
  const std::string_view name = secure ? kSecureSessionCookie : kSessionCookie;
  for (const auto& [key, value] : request.headers) {
    if (!EqualsIgnoringCase(key, "Cookie")) continue;
    if (const std::optional<std::string_view> found = CookieValue(value, name)) return *found;
  }
  return {};
}

std::string SetSessionCookie(std::string_view token, absl::Duration lifetime, bool secure) {
  return fmt::format("{}={}; Path=/; Max-Age={}; HttpOnly; SameSite=Lax{}",
                     secure ? kSecureSessionCookie : kSessionCookie, token,
                     absl::ToInt64Seconds(lifetime), secure ? "; Secure" : "");
}

std::string ClearSessionCookie(bool secure) {
  return fmt::format("{}=; Path=/; Max-Age=0; HttpOnly; SameSite=Lax{}",
                     secure ? kSecureSessionCookie : kSessionCookie, secure ? "; Secure" : "");
}

bool IsOAuthClientEndpoint(std::string_view path) {
  return path == "/oauth/register" || path == "/oauth/token";
}

bool ChangesState(std::string_view method) {
  return method != "GET" && method != "HEAD" && method != "OPTIONS";
}

absl::Status CheckBrowserRequest(const server::HttpRequest& request, bool secure,
                                 std::string_view host) {
  if (EqualsIgnoringCase(request.Header("Sec-Fetch-Site"), "cross-site")) {
    return absl::PermissionDeniedError("cross-site requests are refused (Sec-Fetch-Site)");
  }
  if (!ChangesState(request.method)) return absl::OkStatus();
  if (request.Header("X-Strata-Request") != "1") {
    return absl::PermissionDeniedError(
        "a browser request that changes something needs the header X-Strata-Request: 1");
  }
  const std::string_view origin = request.Header("Origin");
  if (!origin.empty()) {
    const std::string own = fmt::format("{}://{}", secure ? "https" : "http", host);
    if (!EqualsIgnoringCase(origin, own)) {
      return absl::PermissionDeniedError(
          fmt::format("Origin {} is not this server's origin ({})", origin, own));
    }
  }
  return absl::OkStatus();
}

}  // namespace strata::api
