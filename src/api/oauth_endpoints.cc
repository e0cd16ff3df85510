// OAuth 2.1 for the MCP server (docs/mcp.md, "Authorization"): the
// protected resource's metadata (RFC 9728), the authorization server's
// metadata (RFC 8414), dynamic client registration (RFC 7591), the
// authorization endpoint with PKCE S256 and a signed-in user's consent, and
// the token endpoint (authorization_code and refresh_token). The rules for
// codes, grants and tokens are control/oauth.h's.

#include <algorithm>
#include <iterator>
#include <string>
#include <string_view>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/time/time.h"
#include "api/api_respond.h"
#include "api/api_server.h"
#include "api/oauth_requests.h"
#include "api/params.h"
#include "common/cat.h"
#include "common/markup_escape.h"
#include "control/oauth.h"
#include "control/token.h"
#include "fmt/format.h"
#include "otlp/json_writer.h"

namespace strata::api {
namespace {

constexpr size_t kMaxFormBytes = 16 * 1024;
constexpr size_t kMaxStateBytes = 1024;
constexpr std::string_view kScope = "read";
// Retry-After of a registration refused because every client slot is
// taken (OAuthOptions::max_clients).
constexpr absl::Duration kClientsFullRetryAfter = absl::Hours(1);

std::string Quoted(std::string_view text) {
  std::string out = "\"";
  otlp::JsonWriter::AppendEscaped(text, &out);
  out.push_back('"');
  return out;
}

server::HttpResponse OAuthJson(int status, std::string body) {
  server::HttpResponse response = JsonAnswer(status, std::move(body));
  response.headers.emplace_back("Cache-Control", "no-store");
  return response;
}

// {"error": code, "error_description": ...} as RFC 6749 section 5.2 writes
// it; `status` is the code before the first ':' of the message.
server::HttpResponse OAuthError(const absl::Status& status) {
  const std::string message(status.message());
  const size_t colon = message.find(": ");
  std::string code = colon == std::string::npos ? "invalid_request" : message.substr(0, colon);
  const std::string description = colon == std::string::npos ? message : message.substr(colon + 2);
  int http = 400;
  if (absl::IsNotFound(status)) http = 401;
  if (absl::IsResourceExhausted(status)) {
    http = 429;
    code = "temporarily_unavailable";
  }
  if (absl::IsUnavailable(status) || absl::IsInternal(status) || absl::IsDataLoss(status)) {
    http = 503;
    code = "temporarily_unavailable";
  }
  for (char c : code) {
    if (!absl::ascii_islower(static_cast<unsigned char>(c)) && c != '_') {
      code = "invalid_request";
      break;
    }
  }
  return OAuthJson(http, Cat(R"({"error":)", Quoted(code), R"(,"error_description":)",
                             Quoted(description), "}"));
}

// `uri` with `params` added to its query.
std::string WithQuery(std::string_view uri,
                      std::initializer_list<std::pair<std::string_view, std::string_view>> params) {
  std::string out(uri);
  char separator = uri.find('?') == std::string_view::npos ? '?' : '&';
  for (const auto& [name, value] : params) {
    if (value.empty()) continue;
    out.push_back(separator);
    separator = '&';
    PercentEncode(name, &out);
    out.push_back('=');
    PercentEncode(value, &out);
  }
  return out;
}

// An authorization request's parameters, checked. A bad client or
// redirect URI is `fatal` (told to the user, never redirected to);
// anything else is `error` for the client, at its redirect URI.
struct AuthorizeRequest {
  control::OAuthClient client;
  std::string redirect_uri;
  std::string state;
  std::string code_challenge;
  std::string resource;
  absl::Status fatal;
  absl::Status error;
};

AuthorizeRequest CheckAuthorize(QueryParams& params, control::OAuth& oauth,
                                std::string_view mcp_resource) {
  AuthorizeRequest out;
  auto take = [&](std::string_view name) -> std::string {
    absl::StatusOr<std::optional<std::string>> value = params.Take(name);
    if (!value.ok()) {
      if (out.error.ok())
        out.error =
            absl::InvalidArgumentError("invalid_request: " + std::string(value.status().message()));
      return "";
    }
    return value->value_or("");
  };
  const std::string client_id = take("client_id");
  const std::string redirect_uri = take("redirect_uri");
  const std::string response_type = take("response_type");
  const std::string method = take("code_challenge_method");
  out.code_challenge = take("code_challenge");
  out.state = take("state");
  out.resource = take("resource");
  const std::string scope = take("scope");
  absl::StatusOr<control::OAuthClient> client = oauth.GetClient(client_id);
  if (!client.ok()) {
    out.fatal = client.status();
    return out;
  }
  out.client = *std::move(client);
  bool registered = false;
  for (const std::string& uri : out.client.redirect_uris) registered |= uri == redirect_uri;
  if (!registered) {
    out.fatal = absl::InvalidArgumentError(
        "invalid_request: redirect_uri is not one the client registered");
    return out;
  }
  out.redirect_uri = redirect_uri;
  if (out.state.size() > kMaxStateBytes) {
    out.state.clear();
    out.error = absl::InvalidArgumentError("invalid_request: state is too long");
  }
  if (!out.error.ok()) return out;
  if (response_type != "code") {
    out.error =
        absl::InvalidArgumentError("unsupported_response_type: only response_type=code is offered");
  } else if (method != "S256" || out.code_challenge.size() != 43) {
    out.error = absl::InvalidArgumentError(
        "invalid_request: PKCE is required: code_challenge_method=S256 and a 43-character "
        "code_challenge");
  } else if (!out.resource.empty() && out.resource != mcp_resource) {
    out.error = absl::InvalidArgumentError(
        Cat("invalid_target: this server issues tokens only for ", mcp_resource));
  } else {
    for (absl::string_view word : absl::StrSplit(scope, ' ', absl::SkipEmpty())) {
      if (std::string_view(word.data(), word.size()) != kScope) {
        out.error = absl::InvalidArgumentError("invalid_scope: the only scope is \"read\"");
      }
    }
  }
  if (out.resource.empty()) out.resource = std::string(mcp_resource);
  return out;
}

server::HttpResponse Redirect(std::string location) {
  server::HttpResponse response;
  response.status = 302;
  response.content_type = "text/plain";
  response.headers.emplace_back("Location", std::move(location));
  response.headers.emplace_back("Cache-Control", "no-store");
  return response;
}

server::HttpResponse ErrorPage(const absl::Status& status) {
  server::HttpResponse response;
  response.status = 400;
  response.content_type = "text/html; charset=utf-8";
  response.headers.emplace_back("Cache-Control", "no-store");
  response.headers.emplace_back("Content-Security-Policy", "default-src 'none'");
  response.body =
      Cat("<!doctype html><meta charset=utf-8><title>strata: authorization refused</title>"
          "<h1>This authorization request is refused</h1><p>",
          EscapeMarkup(std::string(status.message())), "</p>");
  return response;
}

}  // namespace

std::string Api::McpResourceUrl(const server::HttpRequest& request) const {
  return BaseUrl(request) + "/mcp";
}

server::HttpResponse Api::OAuthResourceMetadataEndpoint(const server::HttpRequest& request,
                                                        const Caller& caller) {
  if (options_.oauth == nullptr) return ApiErrorResponse(absl::NotFoundError("OAuth is off"));
  const std::string base = BaseUrl(request);
  return OAuthJson(
      200,
      Cat(R"({"resource":)", Quoted(McpResourceUrl(request)), R"(,"authorization_servers":[)",
          Quoted(base), R"(],"scopes_supported":["read"],)",
          R"("bearer_methods_supported":["header"],)", R"("resource_name":"strata MCP server"})"));
}

server::HttpResponse Api::OAuthServerMetadataEndpoint(const server::HttpRequest& request,
                                                      const Caller& caller) {
  if (options_.oauth == nullptr) return ApiErrorResponse(absl::NotFoundError("OAuth is off"));
  const std::string base = BaseUrl(request);
  return OAuthJson(200, Cat(R"({"issuer":)", Quoted(base), R"(,"authorization_endpoint":)",
                            Quoted(base + "/oauth/authorize"), R"(,"token_endpoint":)",
                            Quoted(base + "/oauth/token"), R"(,"registration_endpoint":)",
                            Quoted(base + "/oauth/register"),
                            R"(,"response_types_supported":["code"],)"
                            R"("grant_types_supported":["authorization_code","refresh_token"],)"
                            R"("code_challenge_methods_supported":["S256"],)"
                            R"("token_endpoint_auth_methods_supported":["none"],)"
                            R"("scopes_supported":["read"]})"));
}

server::HttpResponse Api::OAuthRegisterEndpoint(const server::HttpRequest& request,
                                                const Caller& caller) {
  if (options_.oauth == nullptr) return ApiErrorResponse(absl::NotFoundError("OAuth is off"));
  const std::string_view body = request.body != nullptr ? *request.body : std::string_view();
  absl::StatusOr<ClientRegistration> registration = ParseClientRegistration(body);
  if (!registration.ok()) return OAuthError(registration.status());
  // Registration is public and each one is stored: one address gets a
  // bounded number per window (the unused ones are capped in all by
  // OAuthOptions::max_unused_clients).
  const absl::Duration wait =
      oauth_register_limiter_.Take(View(request).address, absl::FromUnixNanos(options_.now()));
  if (wait > absl::ZeroDuration()) {
    const int64_t seconds =
        std::max<int64_t>(1, absl::ToInt64Seconds(absl::Ceil(wait, absl::Seconds(1))));
    server::HttpResponse refused = OAuthError(absl::ResourceExhaustedError(
        fmt::format("temporarily_unavailable: too many client registrations from this "
                    "address (at most {} per {} s)",
                    options_.oauth_registrations.max_per_window,
                    absl::ToInt64Seconds(options_.oauth_registrations.window))));
    refused.headers.emplace_back("Retry-After", std::to_string(seconds));
    return refused;
  }
  absl::StatusOr<control::OAuthClient> client = options_.oauth->RegisterClient(
      registration->name, registration->redirect_uris, absl::FromUnixNanos(options_.now()));
  if (!client.ok()) {
    server::HttpResponse refused = OAuthError(client.status());
    // Every client slot is taken: the earliest one frees on its own when a
    // consent that was never completed has its code cleaned, an hour after
    // the code expired (docs/api.md, "OAuth client registration limits").
    if (absl::IsResourceExhausted(client.status())) {
      refused.headers.emplace_back("Retry-After",
                                   std::to_string(absl::ToInt64Seconds(kClientsFullRetryAfter)));
    }
    return refused;
  }
  std::string uris;
  for (const std::string& uri : client->redirect_uris) {
    if (!uris.empty()) uris.push_back(',');
    uris += Quoted(uri);
  }
  return OAuthJson(
      201, Cat(R"({"client_id":)", Quoted(client->client_id), R"(,"client_id_issued_at":)",
               absl::ToUnixSeconds(client->created_at), R"(,"client_name":)", Quoted(client->name),
               R"(,"redirect_uris":[)", uris,
               R"(],"token_endpoint_auth_method":"none",)"
               R"("grant_types":["authorization_code","refresh_token"],)"
               R"("response_types":["code"],"scope":"read"})"));
}

server::HttpResponse Api::OAuthAuthorizePageEndpoint(const server::HttpRequest& request,
                                                     const Caller& caller) {
  if (options_.oauth == nullptr) return ApiErrorResponse(absl::NotFoundError("OAuth is off"));
  absl::StatusOr<QueryParams> params = QueryParams::Parse(request.query());
  if (!params.ok()) return ErrorPage(params.status());
  AuthorizeRequest checked = CheckAuthorize(*params, *options_.oauth, McpResourceUrl(request));
  if (!checked.fatal.ok()) return ErrorPage(checked.fatal);
  if (!checked.error.ok()) {
    const std::string message(checked.error.message());
    const size_t colon = message.find(": ");
    return Redirect(
        WithQuery(checked.redirect_uri, {{"error", message.substr(0, colon)},
                                         {"error_description", message.substr(colon + 2)},
                                         {"state", checked.state}}));
  }
  if (caller.kind != Caller::Kind::kSession) {
    std::string next;
    PercentEncode(Cat("/oauth/authorize?", request.query()), &next);
    return Redirect(Cat("/signin?next=", next));
  }
  // The consent page: the approval is a POST the page's script sends with
  // the browser rules' header, so only this page (this origin, this
  // session) can approve.
  const std::string nonce = control::GenerateSecret();
  auto hidden = [](std::string_view name, std::string_view value) {
    return Cat("<input type=hidden name=\"", name, "\" value=\"", EscapeMarkup(value), "\">");
  };
  server::HttpResponse response;
  response.status = 200;
  response.content_type = "text/html; charset=utf-8";
  response.headers.emplace_back("Cache-Control", "no-store");
  response.headers.emplace_back("X-Frame-Options", "DENY");
  response.headers.emplace_back(
      "Content-Security-Policy",
      Cat("default-src 'none'; script-src 'nonce-", nonce,
          "'; style-src 'unsafe-inline'; connect-src 'self'; frame-ancestors 'none'"));
  const std::string name =
      checked.client.name.empty() ? std::string("An unnamed client") : checked.client.name;
  response.body =
      Cat("<!doctype html><meta charset=utf-8><title>strata: allow access?</title>"
          "<style>body{font:16px system-ui;max-width:36em;margin:3em auto}"
          "button{font:inherit;padding:.4em 1.2em;margin-right:1em}</style>"
          "<h1>Allow access to strata?</h1><p><b>",
          EscapeMarkup(name), "</b> asks to read this strata's telemetry through its MCP server (",
          EscapeMarkup(checked.resource), ") as <b>", EscapeMarkup(caller.session.user.email),
          "</b>. It will be sent back to <code>", EscapeMarkup(checked.redirect_uri),
          "</code>.</p><p>Access is read-only and lasts until the grant is revoked.</p>"
          "<form id=consent>",
          hidden("client_id", checked.client.client_id),
          hidden("redirect_uri", checked.redirect_uri), hidden("response_type", "code"),
          hidden("code_challenge_method", "S256"), hidden("code_challenge", checked.code_challenge),
          hidden("state", checked.state), hidden("resource", checked.resource),
          "<button name=decision value=approve>Allow</button>"
          "<button name=decision value=deny>Deny</button></form><p id=status></p>"
          "<script nonce=\"",
          nonce,
          "\">document.getElementById('consent').addEventListener('submit',async(e)=>{"
          "e.preventDefault();const body=new URLSearchParams(new FormData(e.target));"
          "body.set('decision',e.submitter.value);"
          "const r=await fetch('/oauth/authorize',{method:'POST',headers:{'X-Strata-Request':'1',"
          "'Content-Type':'application/x-www-form-urlencoded'},body});const j=await r.json();"
          "if(j.redirect_to){location.assign(j.redirect_to)}else{"
          "document.getElementById('status').textContent=j.error||'refused'}});</script>");
  return response;
}

server::HttpResponse Api::OAuthApproveEndpoint(const server::HttpRequest& request,
                                               const Caller& caller) {
  if (options_.oauth == nullptr) return ApiErrorResponse(absl::NotFoundError("OAuth is off"));
  const std::string_view body = request.body != nullptr ? *request.body : std::string_view();
  if (body.size() > kMaxFormBytes) {
    return ApiErrorResponse(absl::InvalidArgumentError("the form is too large"));
  }
  API_ASSIGN_OR_RESPOND(QueryParams params, QueryParams::Parse(body));
  API_ASSIGN_OR_RESPOND(const std::optional<std::string> decision, params.Take("decision"));
  AuthorizeRequest checked = CheckAuthorize(params, *options_.oauth, McpResourceUrl(request));
  if (!checked.fatal.ok()) return ApiErrorResponse(checked.fatal);
  const absl::Time now = absl::FromUnixNanos(options_.now());
  std::string location;
  if (!checked.error.ok()) {
    const std::string message(checked.error.message());
    const size_t colon = message.find(": ");
    location = WithQuery(checked.redirect_uri, {{"error", message.substr(0, colon)},
                                                {"error_description", message.substr(colon + 2)},
                                                {"state", checked.state}});
  } else if (decision.value_or("") != "approve") {
    location = WithQuery(checked.redirect_uri, {{"error", "access_denied"},
                                                {"error_description", "the user declined"},
                                                {"state", checked.state}});
  } else {
    absl::StatusOr<std::string> code =
        options_.oauth->IssueCode(control::OAuthApproval{.client_id = checked.client.client_id,
                                                         .user_id = caller.session.user.id,
                                                         .redirect_uri = checked.redirect_uri,
                                                         .code_challenge = checked.code_challenge,
                                                         .resource = checked.resource},
                                  now);
    if (!code.ok()) return ApiErrorResponse(code.status());
    location = WithQuery(checked.redirect_uri,
                         {{"code", *code}, {"state", checked.state}, {"iss", BaseUrl(request)}});
    if (options_.accounts != nullptr) {
      options_.accounts->Audit(caller.Actor(), "oauth.approve", checked.client.client_id,
                               control::AuditOutcome::kOk, OriginOf(request), checked.client.name);
    }
  }
  return OAuthJson(200, Cat(R"({"redirect_to":)", Quoted(location), "}"));
}

server::HttpResponse Api::OAuthTokenEndpoint(const server::HttpRequest& request,
                                             const Caller& caller) {
  if (options_.oauth == nullptr) return ApiErrorResponse(absl::NotFoundError("OAuth is off"));
  const std::string_view body = request.body != nullptr ? *request.body : std::string_view();
  if (body.size() > kMaxFormBytes) {
    return OAuthError(absl::InvalidArgumentError("invalid_request: the form is too large"));
  }
  absl::StatusOr<QueryParams> params = QueryParams::Parse(body);
  if (!params.ok())
    return OAuthError(absl::InvalidArgumentError(
        Cat("invalid_request: ", std::string(params.status().message()))));
  std::string grant_type, code, redirect_uri, client_id, verifier, resource, refresh;
  for (auto [name, out] : std::initializer_list<std::pair<std::string_view, std::string*>>{
           {"grant_type", &grant_type},
           {"code", &code},
           {"redirect_uri", &redirect_uri},
           {"client_id", &client_id},
           {"code_verifier", &verifier},
           {"resource", &resource},
           {"refresh_token", &refresh}}) {
    absl::StatusOr<std::optional<std::string>> value = params->Take(name);
    if (!value.ok()) {
      return OAuthError(absl::InvalidArgumentError(
          Cat("invalid_request: ", std::string(value.status().message()))));
    }
    *out = value->value_or("");
  }
  (void)params->Take("scope");
  const std::string mcp = McpResourceUrl(request);
  if (!resource.empty() && resource != mcp) {
    return OAuthError(absl::InvalidArgumentError(
        Cat("invalid_target: this server issues tokens only for ", mcp)));
  }
  if (client_id.empty()) {
    return OAuthError(absl::NotFoundError("invalid_client: client_id is required"));
  }
  if (absl::StatusOr<control::OAuthClient> client = options_.oauth->GetClient(client_id);
      !client.ok()) {
    return OAuthError(client.status());
  }
  const absl::Time now = absl::FromUnixNanos(options_.now());
  absl::StatusOr<control::OAuthTokens> tokens;
  if (grant_type == "authorization_code") {
    tokens = options_.oauth->ExchangeCode(code, client_id, redirect_uri, verifier, resource, now);
  } else if (grant_type == "refresh_token") {
    tokens = options_.oauth->Refresh(refresh, client_id, resource, now);
  } else {
    return OAuthError(absl::InvalidArgumentError(
        "unsupported_grant_type: authorization_code and refresh_token are offered"));
  }
  if (!tokens.ok()) return OAuthError(tokens.status());
  return OAuthJson(
      200, Cat(R"({"access_token":)", Quoted(tokens->access_token),
               R"(,"token_type":"Bearer","expires_in":)", absl::ToInt64Seconds(tokens->expires_in),
               R"(,"refresh_token":)", Quoted(tokens->refresh_token), R"(,"scope":"read"})"));
}

}  // namespace strata::api
