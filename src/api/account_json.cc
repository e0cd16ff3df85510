#include "api/account_json.h"

#include <optional>

#include "absl/time/time.h"
#include "otlp/json_writer.h"

namespace strata::api {
namespace {

void TimeMember(otlp::JsonWriter& w, std::string_view key, std::optional<absl::Time> time) {
  w.Key(key);
  if (!time.has_value()) {
    w.Null();
    return;
  }
  w.String(absl::FormatTime("%Y-%m-%dT%H:%M:%E3SZ", *time, absl::UTCTimeZone()));
}

void WriteUser(otlp::JsonWriter& w, const control::User& user) {
  w.BeginObject();
  w.Key("id");
  w.Int(user.id);
  w.Key("email");
  w.String(user.email);
  w.Key("name");
  w.String(user.name);
  w.Key("role");
  w.String(control::RoleName(user.role));
  w.Key("active");
  w.Bool(user.active);
  w.Key("has_password");
  w.Bool(user.has_password);
  TimeMember(w, "created_at", user.created_at);
  TimeMember(w, "last_sign_in_at", user.last_sign_in_at);
  w.EndObject();
}

void WriteLink(otlp::JsonWriter& w, const control::PasswordLink& link, std::string_view base) {
  w.BeginObject();
  w.Key("url");
  w.String(std::string(base) + "/password#token=" + link.token);
  TimeMember(w, "expires_at", link.expires_at);
  w.EndObject();
}

void WriteToken(otlp::JsonWriter& w, const control::TokenInfo& token) {
  w.BeginObject();
  w.Key("id");
  w.Int(token.id);
  w.Key("name");
  w.String(token.name);
  w.Key("scope");
  w.String(control::TokenScopeName(token.scope));
  TimeMember(w, "created_at", token.created_at);
  TimeMember(w, "last_used_at", token.last_used_at);
  TimeMember(w, "revoked_at", token.revoked_at);
  w.EndObject();
}

void WriteOAuthGrant(otlp::JsonWriter& w, const control::OAuthGrant& grant) {
  w.BeginObject();
  w.Key("id");
  w.Int(grant.id);
  w.Key("client_id");
  w.String(grant.client_id);
  w.Key("client_name");
  w.String(grant.client_name);
  w.Key("resource");
  w.String(grant.resource);
  TimeMember(w, "created_at", grant.created_at);
  TimeMember(w, "last_issued_at", grant.last_issued_at);
  w.EndObject();
}

void WriteAuditEvent(otlp::JsonWriter& w, const control::AuditEvent& event) {
  w.BeginObject();
  w.Key("id");
  w.Int(event.id);
  TimeMember(w, "at", event.at);
  w.Key("actor");
  w.String(event.actor);
  w.Key("action");
  w.String(event.action);
  w.Key("target");
  w.String(event.target);
  w.Key("outcome");
  w.String(control::AuditOutcomeName(event.outcome));
  w.Key("address");
  w.String(event.address);
  w.Key("user_agent");
  w.String(event.user_agent);
  w.Key("detail");
  w.String(event.detail);
  w.EndObject();
}

// `item` written by `write`, alone.
template <typename Item>
std::string ObjectJson(const Item& item, void (*write)(otlp::JsonWriter&, const Item&)) {
  std::string out;
  otlp::JsonWriter w(&out);
  write(w, item);
  return out;
}

// {"<key>": [item, ...]}.
template <typename Item>
std::string ListJson(std::string_view key, const std::vector<Item>& items,
                     void (*write)(otlp::JsonWriter&, const Item&)) {
  std::string out;
  otlp::JsonWriter w(&out);
  w.BeginObject();
  w.Key(key);
  w.BeginArray();
  for (const Item& item : items) write(w, item);
  w.EndArray();
  w.EndObject();
  return out;
}

}  // namespace

std::string UserJson(const control::User& user) { return ObjectJson(user, WriteUser); }

std::string UsersJson(const std::vector<control::User>& users) {
  return ListJson("users", users, WriteUser);
}

std::string CreatedUserJson(const control::User& user, const control::PasswordLink& link,
                            std::string_view base) {
  std::string out;
  otlp::JsonWriter w(&out);
  w.BeginObject();
  w.Key("user");
  WriteUser(w, user);
  w.Key("password_link");
  WriteLink(w, link, base);
  w.EndObject();
  return out;
}

std::string PasswordLinkJson(const control::PasswordLink& link, std::string_view base) {
  std::string out;
  otlp::JsonWriter w(&out);
  w.BeginObject();
  w.Key("password_link");
  WriteLink(w, link, base);
  w.EndObject();
  return out;
}

std::string TokensJson(const std::vector<control::TokenInfo>& tokens) {
  return ListJson("tokens", tokens, WriteToken);
}

std::string OAuthGrantsJson(const std::vector<control::OAuthGrant>& grants) {
  return ListJson("grants", grants, WriteOAuthGrant);
}

std::string TokenInfoJson(const control::TokenInfo& token) { return ObjectJson(token, WriteToken); }

std::string CreatedTokenJson(const control::CreatedToken& created, std::string_view name,
                             control::TokenScope scope) {
  std::string out;
  otlp::JsonWriter w(&out);
  w.BeginObject();
  w.Key("id");
  w.Int(created.id);
  w.Key("name");
  w.String(name);
  w.Key("scope");
  w.String(control::TokenScopeName(scope));
  w.Key("token");
  w.String(created.token);
  w.EndObject();
  return out;
}

std::string SavedQueryJson(const control::SavedQuery& query) {
  std::string out;
  otlp::JsonWriter w(&out);
  w.BeginObject();
  w.Key("id");
  w.Int(query.id);
  w.Key("owner");
  w.String(query.owner_email);
  w.Key("name");
  w.String(query.name);
  w.Key("kind");
  w.String(control::SavedQueryKindName(query.kind));
  w.Key("time_range");
  w.String(query.time_range);
  w.Key("shared");
  w.Bool(query.shared);
  TimeMember(w, "created_at", query.created_at);
  TimeMember(w, "updated_at", query.updated_at);
  // The parameters are a JSON object the API checked and minified on the
  // way in; they go out as they are, last.
  w.Key("parameters");
  out += query.parameters.empty() ? "{}" : query.parameters;
  out += '}';
  return out;
}

std::string SavedQueriesJson(const std::vector<control::SavedQuery>& queries) {
  std::string out = R"({"saved_queries":[)";
  for (size_t i = 0; i < queries.size(); ++i) {
    if (i > 0) out += ',';
    out += SavedQueryJson(queries[i]);
  }
  out += "]}";
  return out;
}

std::string AuditJson(const std::vector<control::AuditEvent>& events, bool more) {
  std::string out;
  otlp::JsonWriter w(&out);
  w.BeginObject();
  w.Key("events");
  w.BeginArray();
  for (const control::AuditEvent& event : events) WriteAuditEvent(w, event);
  w.EndArray();
  w.Key("next_before");
  if (more && !events.empty()) {
    w.Int(events.back().id);
  } else {
    w.Null();
  }
  w.EndObject();
  return out;
}

}  // namespace strata::api
