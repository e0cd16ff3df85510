#pragma once

// JSON answers of the account endpoints (docs/api.md, "Accounts").
//
// Thread-safety: stateless functions.

#include <string>
#include <vector>

#include "control/account_store.h"
#include "control/accounts.h"
#include "control/oauth.h"
#include "control/token_store.h"

namespace strata::api {

// {"id", "email", "name", "role", "active", "has_password", "created_at",
// "last_sign_in_at"}; times as RFC 3339 UTC strings or null.
std::string UserJson(const control::User& user);
// {"users": [...]}.
std::string UsersJson(const std::vector<control::User>& users);
// {"user": {...}, "password_link": {"url", "expires_at"}}; `url` is
// `base` + "/password#token=" + the link's token.
std::string CreatedUserJson(const control::User& user, const control::PasswordLink& link,
                            std::string_view base);
std::string PasswordLinkJson(const control::PasswordLink& link, std::string_view base);
// {"tokens": [{"id", "name", "scope", "created_at", "last_used_at", "revoked_at"}]}.
std::string TokensJson(const std::vector<control::TokenInfo>& tokens);
std::string TokenInfoJson(const control::TokenInfo& token);
// {"id", "name", "scope", "token"}: the only time the token is shown.
std::string CreatedTokenJson(const control::CreatedToken& created, std::string_view name,
                             control::TokenScope scope);
// {"id", "owner", "name", "kind", "parameters" (the stored object),
// "time_range", "shared", "created_at", "updated_at"}.
std::string SavedQueryJson(const control::SavedQuery& query);
// {"saved_queries": [...]}.
std::string SavedQueriesJson(const std::vector<control::SavedQuery>& queries);
// {"grants": [{"id", "client_id", "client_name", "resource", "created_at",
// "last_issued_at"}]}.
std::string OAuthGrantsJson(const std::vector<control::OAuthGrant>& grants);
// {"events": [...], "next_before": id or null}.
std::string AuditJson(const std::vector<control::AuditEvent>& events, bool more);

}  // namespace strata::api
