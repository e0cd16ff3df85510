#pragma once

// TokenStore keeps ingest, read and admin tokens in the control database,
// <data>/control/strata.sqlite (docs/format/control-db.md, "tokens"). It
// creates tokens (returning the token text exactly once; only its hash is
// stored), lists them, revokes them, and gives TokenAuthenticator the live
// ones. Revoked tokens are kept, with the time they were revoked, so a list
// shows what existed; their names stay taken.
//
// Several processes may hold a TokenStore on one data directory at once:
// the server (through its TokenAuthenticator) and `strata token` from a
// shell. Each write is one SQLite transaction.
//
// Thread-safety: safe for concurrent use (SqliteDb serializes statements).
//
// Errors: Open() as below; Create(): InvalidArgument for a bad name
// (ValidateTokenName), AlreadyExists for a name already used (revoked tokens
// included); Revoke(): NotFound when no token has that id or name; every
// method: SqliteDb's codes (Unavailable when another process holds the
// database locked past the busy timeout) with context.

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "control/sqlite_db.h"
#include "control/token.h"

namespace strata::control {

// The token EnsureIngestToken() creates on first boot.
inline constexpr char kDefaultIngestTokenName[] = "default-ingest";

struct TokenStoreOptions {
  // Stamps created_at and revoked_at; tests inject their own.
  std::function<absl::Time()> clock = [] { return absl::Now(); };
};

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
  // Opens the control database at `db_path` (a data directory's
  // control/strata.sqlite: storage::DataDirPaths::ControlDb()), creating
  // its folder and the database if needed, and applies the control migrations. It does not
  // check or initialise the data directory itself (the caller has done
  // that: boot, or `strata token`). Errors: FailedPrecondition for a
  // database newer than this binary (runbook #control-database-newer);
  // otherwise the SqliteDb or filesystem error, naming the file and the
  // runbook section #control-database-cannot-be-opened.
  [[nodiscard]] static absl::StatusOr<std::unique_ptr<TokenStore>> Open(
      const std::string& db_path, TokenStoreOptions options = {});

  TokenStore(const TokenStore&) = delete;
  TokenStore& operator=(const TokenStore&) = delete;

  const std::string& path() const { return db_->path(); }

  // Creates a token named `name` with `scope` and returns its id and text.
  [[nodiscard]] absl::StatusOr<CreatedToken> Create(std::string_view name, TokenScope scope);

  // As Create(), but only when the store holds no token at all (revoked
  // ones count); nullopt otherwise. Checked and created in one transaction.
  [[nodiscard]] absl::StatusOr<std::optional<CreatedToken>> CreateIfNone(std::string_view name,
                                                                         TokenScope scope);

  // Every token, revoked ones included, by id.
  [[nodiscard]] absl::StatusOr<std::vector<TokenInfo>> List();

  // Revokes the token whose id (when `id_or_name` is all digits) or name is
  // given. Revoking a revoked token changes nothing and says so.
  [[nodiscard]] absl::StatusOr<RevokedToken> Revoke(std::string_view id_or_name);

  // The unrevoked tokens.
  [[nodiscard]] absl::StatusOr<std::vector<LiveToken>> LoadLive();

  // Sets last_used_at of each token id to the given time, unless it is
  // already later. Ids that no longer exist are skipped.
  [[nodiscard]] absl::Status RecordLastUsed(const absl::flat_hash_map<int64_t, absl::Time>& times);

  // How many tokens exist, revoked ones included.
  [[nodiscard]] absl::StatusOr<int64_t> Count();

 private:
  TokenStore(std::unique_ptr<SqliteDb> db, TokenStoreOptions options);

  // Prefixes the database path and `what`, except to NotFound and
  // AlreadyExists, whose messages are complete answers.
  absl::Status Annotate(const absl::Status& status, std::string_view what) const;

  // Constant after construction.
  const std::unique_ptr<SqliteDb> db_;
  const TokenStoreOptions options_;
};

// First boot: when the store holds no token at all, creates an ingest token
// named kDefaultIngestTokenName and returns its text (the server logs it
// once, so telemetry can be sent with no other setup); nullopt when any
// token exists, even a revoked one, so revoking every token does not bring
// a default back.
[[nodiscard]] absl::StatusOr<std::optional<std::string>> EnsureIngestToken(TokenStore& store);

}  // namespace strata::control
