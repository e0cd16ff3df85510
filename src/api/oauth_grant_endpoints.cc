// A signed-in user's OAuth grants (docs/api.md, "OAuth grants"): the
// clients they consented to, and revoking one, which stops its access and
// refresh tokens at once. The rules are control/oauth.h's.

#include <string>
#include <string_view>
#include <vector>

#include "absl/strings/numbers.h"
#include "api/account_json.h"
#include "api/api_respond.h"
#include "api/api_server.h"
#include "control/oauth.h"
#include "fmt/format.h"

namespace strata::api {
namespace {

constexpr std::string_view kGrantsPrefix = "/api/v1/auth/me/oauth-grants/";

// Answers about people's consents are never cached.
server::HttpResponse NoStore(server::HttpResponse response) {
  response.headers.emplace_back("Cache-Control", "no-store");
  return response;
}

}  // namespace

server::HttpResponse Api::ListOAuthGrantsEndpoint(const server::HttpRequest& request,
                                                  const Caller& caller) {
  if (options_.oauth == nullptr) return ApiErrorResponse(absl::NotFoundError("OAuth is off"));
  absl::StatusOr<std::vector<control::OAuthGrant>> grants =
      options_.oauth->ListGrants(caller.session.user.id);
  if (!grants.ok()) return ApiErrorResponse(grants.status());
  return NoStore(JsonAnswer(200, OAuthGrantsJson(*grants)));
}

server::HttpResponse Api::RevokeOAuthGrantEndpoint(const server::HttpRequest& request,
                                                   const Caller& caller) {
  if (options_.oauth == nullptr) return ApiErrorResponse(absl::NotFoundError("OAuth is off"));
  const std::string_view digits = request.path().substr(kGrantsPrefix.size());
  int64_t id = 0;
  if (!absl::SimpleAtoi(absl::string_view(digits.data(), digits.size()), &id) || id <= 0) {
    return ApiErrorResponse(absl::NotFoundError(fmt::format("no such path: {}", request.path())));
  }
  const absl::Status revoked =
      options_.oauth->RevokeGrant(caller.session.user.id, id, absl::FromUnixNanos(options_.now()));
  if (options_.accounts != nullptr) {
    options_.accounts->Audit(
        caller.Actor(), "oauth.revoke", fmt::format("grant:{}", id),
        revoked.ok() ? control::AuditOutcome::kOk : control::AuditOutcome::kFailed,
        OriginOf(request), std::string(revoked.message()));
  }
  if (!revoked.ok()) return ApiErrorResponse(revoked);
  server::HttpResponse response;
  response.status = 204;
  response.content_type.clear();
  return NoStore(std::move(response));
}

}  // namespace strata::api
