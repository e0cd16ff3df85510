// The account endpoints of the REST API (docs/api.md, "Accounts"):
// first-boot setup, sign-in and sign-out, password links, users, tokens,
// the audit log and saved queries. Access rules are access.h's table, checked before these
// run; these check only what a rule cannot (a user's own session, the
// last admin, which happens in the store).

#include "absl/strings/numbers.h"
#include "api/account_json.h"
#include "api/api_respond.h"
#include "api/api_server.h"
#include "api/json_body.h"
#include "api/params.h"
#include "fmt/format.h"
#include "otlp/json_writer.h"

namespace strata::api {
namespace {

constexpr std::string_view kUsersPrefix = "/api/v1/users/";
constexpr std::string_view kTokensPrefix = "/api/v1/tokens/";
constexpr std::string_view kSavedQueriesPrefix = "/api/v1/saved-queries/";
constexpr std::string_view kPasswordLinkSuffix = "/password-link";
constexpr Limit kAuditLimit{100, 1000};

// Answers about people and secrets are never cached.
server::HttpResponse Json(int status, std::string body) {
  server::HttpResponse response = JsonAnswer(status, std::move(body));
  response.headers.emplace_back("Cache-Control", "no-store");
  return response;
}

server::HttpResponse NoContent() {
  server::HttpResponse response;
  response.status = 204;
  response.content_type.clear();
  response.headers.emplace_back("Cache-Control", "no-store");
  return response;
}

absl::Status NotConfigured(std::string_view what) {
  return absl::UnavailableError(fmt::format("{} are not available on this server", what));
}

std::string_view Body(const server::HttpRequest& request) {
  return request.body != nullptr ? std::string_view(*request.body) : std::string_view();
}

// The id in "/api/v1/users/{id}..." after `prefix`, and what follows it.
absl::StatusOr<std::pair<int64_t, std::string_view>> IdAfter(std::string_view path,
                                                             std::string_view prefix) {
  std::string_view rest = path.substr(prefix.size());
  const size_t slash = rest.find('/');
  const std::string_view digits = rest.substr(0, slash);
  int64_t id = 0;
  if (digits.empty() || !absl::SimpleAtoi(absl::string_view(digits.data(), digits.size()), &id) ||
      id <= 0) {
    return absl::NotFoundError(fmt::format("no such path: {}", path));
  }
  return std::make_pair(id,
                        slash == std::string_view::npos ? std::string_view() : rest.substr(slash));
}

}  // namespace

std::string Api::BaseUrl(const server::HttpRequest& request) const {
  const RequestView view = View(request);
  return fmt::format("{}://{}", view.secure ? "https" : "http", view.host);
}

server::HttpResponse Api::SignedInResponse(const server::HttpRequest& request, int status,
                                           const control::SignedIn& signed_in) const {
  server::HttpResponse response = Json(status, UserJson(signed_in.user));
  response.headers.emplace_back(
      "Set-Cookie",
      SetSessionCookie(signed_in.session_token, options_.accounts->options().session_lifetime,
                       View(request).secure));
  return response;
}

server::HttpResponse Api::SetupStatusEndpoint(const server::HttpRequest& request,
                                              const Caller& caller) {
  if (options_.accounts == nullptr) return ApiErrorResponse(NotConfigured("accounts"));
  API_ASSIGN_OR_RESPOND(const bool needed, options_.accounts->SetupNeeded());
  std::string out;
  otlp::JsonWriter w(&out);
  w.BeginObject();
  w.Key("setup_needed");
  w.Bool(needed);
  w.EndObject();
  return Json(200, std::move(out));
}

server::HttpResponse Api::SetupEndpoint(const server::HttpRequest& request, const Caller& caller) {
  if (options_.accounts == nullptr) return ApiErrorResponse(NotConfigured("accounts"));
  static constexpr JsonMember kMembers[] = {{.name = "token", .required = true},
                                            {.name = "email", .required = true},
                                            {.name = "name", .required = true},
                                            {.name = "password", .required = true}};
  API_ASSIGN_OR_RESPOND(const JsonBody body, JsonBody::Parse(Body(request), kMembers));
  absl::StatusOr<control::SignedIn> signed_in = options_.accounts->CompleteSetup(
      body.StringOr("token"), body.StringOr("email"), body.StringOr("name"),
      body.StringOr("password"), OriginOf(request));
  if (absl::IsFailedPrecondition(signed_in.status())) {
    server::HttpResponse gone = ApiErrorResponse(signed_in.status());
    gone.status = 410;
    return gone;
  }
  if (!signed_in.ok()) return ApiErrorResponse(signed_in.status());
  return SignedInResponse(request, 201, *signed_in);
}

server::HttpResponse Api::LoginEndpoint(const server::HttpRequest& request, const Caller& caller) {
  if (options_.accounts == nullptr) return ApiErrorResponse(NotConfigured("accounts"));
  static constexpr JsonMember kMembers[] = {{.name = "email", .required = true},
                                            {.name = "password", .required = true}};
  API_ASSIGN_OR_RESPOND(const JsonBody body, JsonBody::Parse(Body(request), kMembers));
  API_ASSIGN_OR_RESPOND(const control::SignedIn signed_in,
                        options_.accounts->SignIn(body.StringOr("email"), body.StringOr("password"),
                                                  OriginOf(request)));
  return SignedInResponse(request, 200, signed_in);
}

server::HttpResponse Api::PasswordEndpoint(const server::HttpRequest& request,
                                           const Caller& caller) {
  if (options_.accounts == nullptr) return ApiErrorResponse(NotConfigured("accounts"));
  static constexpr JsonMember kMembers[] = {{.name = "token", .required = true},
                                            {.name = "password", .required = true}};
  API_ASSIGN_OR_RESPOND(const JsonBody body, JsonBody::Parse(Body(request), kMembers));
  API_ASSIGN_OR_RESPOND(const control::SignedIn signed_in,
                        options_.accounts->UsePasswordLink(
                            body.StringOr("token"), body.StringOr("password"), OriginOf(request)));
  return SignedInResponse(request, 200, signed_in);
}

server::HttpResponse Api::LogoutEndpoint(const server::HttpRequest& request, const Caller& caller) {
  API_RETURN_IF_ERROR(options_.accounts->SignOut(caller.session, OriginOf(request)));
  server::HttpResponse response = NoContent();
  response.headers.emplace_back("Set-Cookie", ClearSessionCookie(View(request).secure));
  return response;
}

server::HttpResponse Api::MeEndpoint(const server::HttpRequest& request, const Caller& caller) {
  return Json(200, UserJson(caller.session.user));
}

server::HttpResponse Api::ChangePasswordEndpoint(const server::HttpRequest& request,
                                                 const Caller& caller) {
  static constexpr JsonMember kMembers[] = {{.name = "current_password", .required = true},
                                            {.name = "new_password", .required = true}};
  API_ASSIGN_OR_RESPOND(const JsonBody body, JsonBody::Parse(Body(request), kMembers));
  API_ASSIGN_OR_RESPOND(
      const control::SignedIn signed_in,
      options_.accounts->ChangeOwnPassword(caller.session, body.StringOr("current_password"),
                                           body.StringOr("new_password"), OriginOf(request)));
  return SignedInResponse(request, 200, signed_in);
}

server::HttpResponse Api::ListUsersEndpoint(const server::HttpRequest& request,
                                            const Caller& caller) {
  if (options_.accounts == nullptr) return ApiErrorResponse(NotConfigured("accounts"));
  API_ASSIGN_OR_RESPOND(const std::vector<control::User> users, options_.accounts->ListUsers());
  return Json(200, UsersJson(users));
}

server::HttpResponse Api::CreateUserEndpoint(const server::HttpRequest& request,
                                             const Caller& caller) {
  if (options_.accounts == nullptr) return ApiErrorResponse(NotConfigured("accounts"));
  static constexpr JsonMember kMembers[] = {{.name = "email", .required = true},
                                            {.name = "name", .required = true},
                                            {.name = "role", .required = true}};
  API_ASSIGN_OR_RESPOND(const JsonBody body, JsonBody::Parse(Body(request), kMembers));
  API_ASSIGN_OR_RESPOND(const control::Role role, control::ParseRole(body.StringOr("role")));
  API_ASSIGN_OR_RESPOND(
      const control::CreatedUser created,
      options_.accounts->CreateUser(caller.Actor(), body.StringOr("email"), body.StringOr("name"),
                                    role, OriginOf(request)));
  return Json(201, CreatedUserJson(created.user, created.link, BaseUrl(request)));
}

server::HttpResponse Api::UserEndpoint(const server::HttpRequest& request, const Caller& caller) {
  if (options_.accounts == nullptr) return ApiErrorResponse(NotConfigured("accounts"));
  API_ASSIGN_OR_RESPOND(const auto id_and_rest, IdAfter(request.path(), kUsersPrefix));
  const auto [id, rest] = id_and_rest;
  const control::RequestOrigin origin = OriginOf(request);
  if (request.method == "POST" && rest == kPasswordLinkSuffix) {
    API_ASSIGN_OR_RESPOND(const control::User user, options_.accounts->GetUser(id));
    API_ASSIGN_OR_RESPOND(const control::PasswordLink link,
                          options_.accounts->ResetLink(caller.Actor(), user.email, origin));
    return Json(201, PasswordLinkJson(link, BaseUrl(request)));
  }
  if (!rest.empty() || request.method == "POST") {
    return ApiErrorResponse(absl::NotFoundError(fmt::format("no such path: {}", request.path())));
  }
  if (request.method == "DELETE") {
    API_RETURN_IF_ERROR(options_.accounts->DeleteUser(caller.Actor(), id, origin));
    return NoContent();
  }
  static constexpr JsonMember kMembers[] = {
      {.name = "name"}, {.name = "role"}, {.name = "active", .type = JsonMember::Type::kBool}};
  API_ASSIGN_OR_RESPOND(const JsonBody body, JsonBody::Parse(Body(request), kMembers));
  control::UserChange change;
  change.name = body.String("name");
  change.active = body.Bool("active");
  if (const std::optional<std::string> role = body.String("role")) {
    API_ASSIGN_OR_RESPOND(change.role, control::ParseRole(*role));
  }
  API_ASSIGN_OR_RESPOND(const control::User user,
                        options_.accounts->ChangeUser(caller.Actor(), id, change, origin));
  return Json(200, UserJson(user));
}

server::HttpResponse Api::ListTokensEndpoint(const server::HttpRequest& request,
                                             const Caller& caller) {
  if (options_.tokens == nullptr) return ApiErrorResponse(NotConfigured("tokens"));
  API_ASSIGN_OR_RESPOND(const std::vector<control::TokenInfo> tokens, options_.tokens->List());
  return Json(200, TokensJson(tokens));
}

server::HttpResponse Api::CreateTokenEndpoint(const server::HttpRequest& request,
                                              const Caller& caller) {
  if (options_.tokens == nullptr) return ApiErrorResponse(NotConfigured("tokens"));
  static constexpr JsonMember kMembers[] = {{.name = "name", .required = true},
                                            {.name = "scope", .required = true}};
  API_ASSIGN_OR_RESPOND(const JsonBody body, JsonBody::Parse(Body(request), kMembers));
  API_ASSIGN_OR_RESPOND(const control::TokenScope scope,
                        control::ParseTokenScope(body.StringOr("scope")));
  const std::string name = body.StringOr("name");
  absl::StatusOr<control::CreatedToken> created = options_.tokens->Create(name, scope);
  if (created.ok() && options_.tokens_changed) options_.tokens_changed();
  if (options_.accounts != nullptr) {
    options_.accounts->Audit(
        caller.Actor(), "token.create", fmt::format("token:{}", name),
        created.ok() ? control::AuditOutcome::kOk : control::AuditOutcome::kFailed,
        OriginOf(request),
        created.ok() ? fmt::format("scope {}", control::TokenScopeName(scope))
                     : std::string(created.status().message()));
  }
  if (!created.ok()) return ApiErrorResponse(created.status());
  return Json(201, CreatedTokenJson(*created, name, scope));
}

server::HttpResponse Api::RevokeTokenEndpoint(const server::HttpRequest& request,
                                              const Caller& caller) {
  if (options_.tokens == nullptr) return ApiErrorResponse(NotConfigured("tokens"));
  API_ASSIGN_OR_RESPOND(const auto id_and_rest, IdAfter(request.path(), kTokensPrefix));
  if (!id_and_rest.second.empty()) {
    return ApiErrorResponse(absl::NotFoundError(fmt::format("no such path: {}", request.path())));
  }
  absl::StatusOr<control::RevokedToken> revoked =
      options_.tokens->Revoke(std::to_string(id_and_rest.first));
  if (revoked.ok() && options_.tokens_changed) options_.tokens_changed();
  if (options_.accounts != nullptr) {
    options_.accounts->Audit(
        caller.Actor(), "token.revoke", fmt::format("token:{}", id_and_rest.first),
        revoked.ok() ? control::AuditOutcome::kOk : control::AuditOutcome::kFailed,
        OriginOf(request),
        revoked.ok() ? (revoked->already_revoked ? "already revoked" : "")
                     : std::string(revoked.status().message()));
  }
  if (!revoked.ok()) return ApiErrorResponse(revoked.status());
  return Json(200, TokenInfoJson(revoked->token));
}

server::HttpResponse Api::AuditEndpoint(const server::HttpRequest& request, const Caller& caller) {
  if (options_.accounts == nullptr) return ApiErrorResponse(NotConfigured("accounts"));
  API_ASSIGN_OR_RESPOND(QueryParams params, QueryParams::Parse(request.query()));
  API_ASSIGN_OR_RESPOND(const int64_t limit, TakeLimit(params, kAuditLimit));
  API_ASSIGN_OR_RESPOND(const std::optional<std::string> before_text, params.Take("before"));
  API_RETURN_IF_ERROR(params.Finish());
  std::optional<int64_t> before;
  if (before_text.has_value()) {
    int64_t value = 0;
    if (!absl::SimpleAtoi(*before_text, &value) || value <= 0) {
      return ApiErrorResponse(
          absl::InvalidArgumentError("before: expected a positive event id (next_before)"));
    }
    before = value;
  }
  API_ASSIGN_OR_RESPOND(std::vector<control::AuditEvent> events,
                        options_.accounts->ListAudit(before, static_cast<size_t>(limit) + 1));
  const bool more = events.size() > static_cast<size_t>(limit);
  if (more) events.resize(static_cast<size_t>(limit));
  return Json(200, AuditJson(events, more));
}

server::HttpResponse Api::ListSavedQueriesEndpoint(const server::HttpRequest& request,
                                                   const Caller& caller) {
  if (options_.saved_queries == nullptr) return ApiErrorResponse(NotConfigured("saved queries"));
  API_ASSIGN_OR_RESPOND(const std::vector<control::SavedQuery> queries,
                        options_.saved_queries->List(caller.session.user));
  return Json(200, SavedQueriesJson(queries));
}

server::HttpResponse Api::CreateSavedQueryEndpoint(const server::HttpRequest& request,
                                                   const Caller& caller) {
  if (options_.saved_queries == nullptr) return ApiErrorResponse(NotConfigured("saved queries"));
  static constexpr JsonMember kMembers[] = {
      {.name = "name", .required = true},
      {.name = "kind", .required = true},
      {.name = "parameters", .type = JsonMember::Type::kObject, .required = true},
      {.name = "time_range", .required = true},
      {.name = "shared", .type = JsonMember::Type::kBool}};
  API_ASSIGN_OR_RESPOND(const JsonBody body, JsonBody::Parse(Body(request), kMembers));
  API_ASSIGN_OR_RESPOND(const control::SavedQueryKind kind,
                        control::ParseSavedQueryKind(body.StringOr("kind")));
  API_ASSIGN_OR_RESPOND(
      const control::SavedQuery created,
      options_.saved_queries->Create(
          caller.session.user, control::SavedQuery{.name = body.StringOr("name"),
                                                   .kind = kind,
                                                   .parameters = body.StringOr("parameters"),
                                                   .time_range = body.StringOr("time_range"),
                                                   .shared = body.Bool("shared").value_or(false)}));
  return Json(201, SavedQueryJson(created));
}

server::HttpResponse Api::SavedQueryEndpoint(const server::HttpRequest& request,
                                             const Caller& caller) {
  if (options_.saved_queries == nullptr) return ApiErrorResponse(NotConfigured("saved queries"));
  API_ASSIGN_OR_RESPOND(const auto id_and_rest, IdAfter(request.path(), kSavedQueriesPrefix));
  if (!id_and_rest.second.empty()) {
    return ApiErrorResponse(absl::NotFoundError(fmt::format("no such path: {}", request.path())));
  }
  const int64_t id = id_and_rest.first;
  const control::User& user = caller.session.user;
  if (request.method == "GET") {
    API_ASSIGN_OR_RESPOND(const control::SavedQuery query, options_.saved_queries->Get(user, id));
    return Json(200, SavedQueryJson(query));
  }
  if (request.method == "DELETE") {
    API_RETURN_IF_ERROR(options_.saved_queries->Delete(user, id));
    return NoContent();
  }
  static constexpr JsonMember kMembers[] = {
      {.name = "name"},
      {.name = "parameters", .type = JsonMember::Type::kObject},
      {.name = "time_range"},
      {.name = "shared", .type = JsonMember::Type::kBool}};
  API_ASSIGN_OR_RESPOND(const JsonBody body, JsonBody::Parse(Body(request), kMembers));
  API_ASSIGN_OR_RESPOND(const control::SavedQuery changed,
                        options_.saved_queries->Change(
                            user, id,
                            control::SavedQueryChange{.name = body.String("name"),
                                                      .parameters = body.String("parameters"),
                                                      .time_range = body.String("time_range"),
                                                      .shared = body.Bool("shared")}));
  return Json(200, SavedQueryJson(changed));
}

}  // namespace strata::api
