#pragma once

// TokenStore: where ingest, read and admin tokens are kept. It creates
// tokens (returning the token text exactly once; only its hash is stored),
// lists them, revokes them, and gives TokenAuthenticator the live ones.
// Revoked tokens are kept, with the time they were revoked, so a list shows
// what existed; their names stay taken.
//
// This is the interface a shared database can implement for several nodes;
// a single node keeps its tokens in the control database
// (SqliteTokenStore, sqlite_token_store.h).
//
// Thread-safety: implementations are safe for concurrent use.
//
// Errors: Create(): InvalidArgument for a bad name (ValidateTokenName),
// AlreadyExists for a name already used (revoked tokens included);
// Revoke(): NotFound when no token has that id or name; every method: the
// store's own errors (for SQLite, Unavailable when another process holds
// the database locked past the busy timeout) with context.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "control/token.h"

namespace strata::control {

// The token EnsureIngestToken() creates on first boot.
inline constexpr char kDefaultIngestTokenName[] = "default-ingest";

// A token as listed: everything but its hash.
struct TokenInfo {
  int64_t id = 0;
  std::string name;
  TokenScope scope = TokenScope::kIngest;
  absl::Time created_at;
  std::optional<absl::Time> last_used_at;
  std::optional<absl::Time> revoked_at;
};

// Returned by Create(): the only time the token text exists outside the
// caller of a request.
struct CreatedToken {
  int64_t id = 0;
  std::string token;
};

// What authentication needs about an unrevoked token.
struct LiveToken {
  int64_t id = 0;
  TokenHash hash{};
  TokenScope scope = TokenScope::kIngest;
};

struct RevokedToken {
  TokenInfo token;               // as it is now, revoked_at set
  bool already_revoked = false;  // it was revoked before this call; nothing changed
};

class TokenStore {
 public:
  virtual ~TokenStore() = default;

  // Creates a token named `name` with `scope` and returns its id and text.
  [[nodiscard]] virtual absl::StatusOr<CreatedToken> Create(std::string_view name,
                                                            TokenScope scope) = 0;

  // As Create(), but only when the store holds no token at all (revoked
  // ones count); nullopt otherwise. Checked and created atomically.
  [[nodiscard]] virtual absl::StatusOr<std::optional<CreatedToken>> CreateIfNone(
      std::string_view name, TokenScope scope) = 0;

  // Every token, revoked ones included, by id.
  [[nodiscard]] virtual absl::StatusOr<std::vector<TokenInfo>> List() = 0;

  // Revokes the token whose id (when `id_or_name` is all digits) or name is
  // given. Revoking a revoked token changes nothing and says so.
  [[nodiscard]] virtual absl::StatusOr<RevokedToken> Revoke(std::string_view id_or_name) = 0;

  // The unrevoked tokens.
  [[nodiscard]] virtual absl::StatusOr<std::vector<LiveToken>> LoadLive() = 0;

  // Sets last_used_at of each token id to the given time, unless it is
  // already later. Ids that no longer exist are skipped.
  [[nodiscard]] virtual absl::Status RecordLastUsed(
      const absl::flat_hash_map<int64_t, absl::Time>& times) = 0;

  // How many tokens exist, revoked ones included.
  [[nodiscard]] virtual absl::StatusOr<int64_t> Count() = 0;
};

// First boot: when the store holds no token at all, creates an ingest token
// named kDefaultIngestTokenName and returns its text (the server logs it
// once, so telemetry can be sent with no other setup); nullopt when any
// token exists, even a revoked one, so revoking every token does not bring
// a default back.
[[nodiscard]] absl::StatusOr<std::optional<std::string>> EnsureIngestToken(TokenStore& store);

}  // namespace strata::control
