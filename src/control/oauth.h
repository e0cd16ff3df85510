#pragma once

// OAuth 2.1 for the MCP server (docs/mcp.md, "Authorization"): public
// clients registered dynamically (RFC 7591), authorization codes bound to
// their client, redirect URI and PKCE S256 challenge, access tokens bound
// to one resource (RFC 8707: strata's /mcp URL) and refresh tokens that
// rotate. OAuth is an interface with two implementations of the same
// behaviour: SqliteOAuth (sqlite_oauth.h), a single node's, whose rows
// live in the control database (docs/format/control-db.md, tables
// oauth_clients, oauth_codes, oauth_grants, oauth_tokens), and
// PostgresOAuth (postgres_oauth.h), whose rows several nodes share
// (docs/format/postgres-control.md), so a client registered or a code
// issued on one node works on every node.
//
// A grant is one user's consent to one client: the family of every token
// issued from one authorization code. A refresh token works once; its use
// gives a new access token and a new refresh token in the same grant.
// Presenting a used refresh token again (a copy was stolen, or the client
// is confused) revokes the whole grant, as presenting a used code again
// revokes the grant that code made.
//
// Secrets (codes, access and refresh tokens) are 32 random bytes
// (GenerateSecret()); only their BLAKE2b hashes are stored, found by hash
// and compared in constant time, as tokens are (token.h). The PKCE check
// compares SHA-256 of the verifier with the challenge in constant time.
//
// Thread-safety: implementations are safe for concurrent use; each
// exchange is one transaction, and a code or refresh token is consumed by
// at most one exchange, whichever node runs it.
//
// Errors: InvalidArgument ("invalid_request: ...", "invalid_target: ...")
// for malformed input; NotFound ("invalid_client: ...") for an unknown
// client; Unauthenticated ("invalid_grant: ...") for a code or refresh
// token that is unknown, used, expired, revoked or bound to something
// else; ResourceExhausted past the client limit; the database's otherwise.

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"

namespace strata::control {

inline constexpr std::string_view kOAuthAccessPrefix = "strata_oauth_";
inline constexpr std::string_view kOAuthRefreshPrefix = "strata_refresh_";
inline constexpr std::string_view kOAuthClientPrefix = "strata_client_";

struct OAuthOptions {
  size_t max_clients = 1000;
  // Registered clients no user has consented to (no code, no grant): at
  // most this many (>= 1); a registration past it deletes the oldest of
  // them, so that public registrations neither grow the table nor lock
  // out the next client.
  size_t max_unused_clients = 100;
  absl::Duration code_lifetime = absl::Seconds(60);
  absl::Duration access_lifetime = absl::Hours(1);
  absl::Duration refresh_lifetime = absl::Hours(24 * 30);
};

struct OAuthClient {
  std::string client_id;
  std::string name;
  std::vector<std::string> redirect_uris;
  absl::Time created_at;
};

// What a consenting user approved: the code is bound to all of it.
struct OAuthApproval {
  std::string client_id;
  int64_t user_id = 0;
  std::string redirect_uri;
  std::string code_challenge;  // base64url SHA-256 of the verifier
  std::string resource;
};

struct OAuthTokens {
  std::string access_token;  // exist only here
  std::string refresh_token;
  absl::Duration expires_in;
};

// A user's live grant (one consent to one client), for listing it.
struct OAuthGrant {
  int64_t id = 0;
  std::string client_id;
  std::string client_name;
  std::string resource;
  absl::Time created_at;
  // When its newest access token was issued (the consent or the last
  // refresh).
  absl::Time last_issued_at;
};

// The grant behind a live access token.
struct OAuthAccess {
  int64_t grant_id = 0;
  int64_t user_id = 0;
};

// base64url (no padding) of SHA-256(verifier): the S256 challenge.
std::string PkceChallenge(std::string_view verifier);

class OAuth {
 public:
  virtual ~OAuth() = default;

  // The single node's: SqliteOAuth on the control database at `db_path`
  // (migrations applied).
  [[nodiscard]] static absl::StatusOr<std::unique_ptr<OAuth>> Open(const std::string& db_path,
                                                                   absl::Time now,
                                                                   OAuthOptions options = {});

  // Registers a public client; `redirect_uris` are checked by the caller
  // (oauth_requests.h). Deletes the oldest unused clients past
  // max_unused_clients - 1 first. ResourceExhausted past max_clients.
  [[nodiscard]] virtual absl::StatusOr<OAuthClient> RegisterClient(
      std::string_view name, const std::vector<std::string>& redirect_uris, absl::Time now) = 0;
  // NotFound ("invalid_client") for an unknown id.
  [[nodiscard]] virtual absl::StatusOr<OAuthClient> GetClient(std::string_view client_id) = 0;

  // A new single-use code for `approval`, valid code_lifetime.
  [[nodiscard]] virtual absl::StatusOr<std::string> IssueCode(const OAuthApproval& approval,
                                                              absl::Time now) = 0;
  // authorization_code: the code must be unused and unexpired, and
  // `client_id`, `redirect_uri` and the verifier must match what it was
  // issued for (and `resource`, when not empty). A code presented twice
  // revokes the grant its first use made.
  [[nodiscard]] virtual absl::StatusOr<OAuthTokens> ExchangeCode(
      std::string_view code, std::string_view client_id, std::string_view redirect_uri,
      std::string_view verifier, std::string_view resource, absl::Time now) = 0;
  // refresh_token: rotates; a used refresh token revokes its grant.
  [[nodiscard]] virtual absl::StatusOr<OAuthTokens> Refresh(std::string_view refresh_token,
                                                            std::string_view client_id,
                                                            std::string_view resource,
                                                            absl::Time now) = 0;
  // The grant of a live access token issued for `resource` to a user who
  // is still active; nullopt otherwise.
  [[nodiscard]] virtual absl::StatusOr<std::optional<OAuthAccess>> ResolveAccess(
      std::string_view access_token, std::string_view resource, absl::Time now) = 0;

  // `user_id`'s grants that are not revoked, newest first (at most 1,000).
  [[nodiscard]] virtual absl::StatusOr<std::vector<OAuthGrant>> ListGrants(int64_t user_id) = 0;
  // Revokes `user_id`'s grant `grant_id`: its access and refresh tokens
  // stop working at once. NotFound unless it is a live grant of that user.
  [[nodiscard]] virtual absl::Status RevokeGrant(int64_t user_id, int64_t grant_id,
                                                 absl::Time now) = 0;

  // Clients no user has consented to (no code, no grant).
  [[nodiscard]] virtual absl::StatusOr<int64_t> UnusedClients() = 0;
};

}  // namespace strata::control
