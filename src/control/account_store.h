#pragma once

// AccountStore is where the control plane keeps people: users, their
// browser sessions, one-time password links and the audit log
// (docs/format/control-db.md). It is an interface so that a shared database
// can take SQLite's place when several nodes serve one deployment;
// SqliteAccountStore (sqlite_account_store.h) implements it today.
//
// The store only keeps rows: it hashes nothing, checks no password and
// knows no clock. Accounts (accounts.h) holds the rules. Two rules need a
// transaction and so live here: the last active admin cannot lose that
// role, be deactivated or be deleted; and changing a user's role or active
// flag or password ends that user's sessions in the same transaction.
//
// Thread-safety: implementations are safe for concurrent use.
//
// Errors: NotFound for an unknown user id; AlreadyExists for an email
// already used; Aborted (the API's 409) for a change that would leave no
// active admin; FailedPrecondition from CreateFirstUser() when a user
// exists; DataLoss for rows that do not parse; the database's errors
// otherwise.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "control/role.h"
#include "control/token.h"

namespace strata::control {

struct User {
  int64_t id = 0;
  std::string email;  // normalized: trimmed, ASCII lower case
  std::string name;
  Role role = Role::kViewer;
  bool active = true;
  bool has_password = false;  // false until a password link is used
  absl::Time created_at;
  std::optional<absl::Time> last_sign_in_at;
};

// A user with their stored password hash (nullopt: none set yet).
struct UserRecord {
  User user;
  std::optional<std::string> password_hash;
};

struct NewUser {
  std::string email;
  std::string name;
  Role role = Role::kViewer;
  std::optional<std::string> password_hash;
};

// Only the fields set change.
struct UserChange {
  std::optional<std::string> name;
  std::optional<Role> role;
  std::optional<bool> active;
};

struct StoredSession {
  int64_t id = 0;
  User user;
  absl::Time created_at;
  absl::Time last_seen_at;
};

enum class AuditOutcome { kOk, kFailed, kDenied };
std::string_view AuditOutcomeName(AuditOutcome outcome);

struct AuditEvent {
  int64_t id = 0;  // set by the store
  absl::Time at;
  std::string actor;   // "user:<email>", "token:<id>", "anonymous", "cli"
  std::string action;  // e.g. "auth.login", "user.create" (docs/api.md, "Audit log")
  std::string target;  // what it acted on, or ""
  AuditOutcome outcome = AuditOutcome::kOk;
  std::string address;
  std::string user_agent;
  std::string detail;
};

enum class SavedQueryKind { kTraces, kLogs, kMetrics, kSql };
std::string_view SavedQueryKindName(SavedQueryKind kind);
[[nodiscard]] absl::StatusOr<SavedQueryKind> ParseSavedQueryKind(std::string_view name);

struct SavedQuery {
  int64_t id = 0;
  int64_t owner_id = 0;
  std::string owner_email;  // filled by the store
  std::string name;
  SavedQueryKind kind = SavedQueryKind::kTraces;
  std::string parameters;  // a JSON object, as text
  std::string time_range;  // "now-1h" or "<RFC 3339>/<RFC 3339>"
  bool shared = false;
  absl::Time created_at;
  absl::Time updated_at;
};

// Only the fields set change.
struct SavedQueryChange {
  std::optional<std::string> name;
  std::optional<std::string> parameters;
  std::optional<std::string> time_range;
  std::optional<bool> shared;
};

class AccountStore {
 public:
  virtual ~AccountStore() = default;

  // Users.
  [[nodiscard]] virtual absl::StatusOr<int64_t> CountUsers() = 0;
  [[nodiscard]] virtual absl::StatusOr<User> CreateUser(const NewUser& user, absl::Time now) = 0;
  // As CreateUser(), in one transaction with the check that no user exists
  // (FailedPrecondition otherwise).
  [[nodiscard]] virtual absl::StatusOr<User> CreateFirstUser(const NewUser& user,
                                                             absl::Time now) = 0;
  [[nodiscard]] virtual absl::StatusOr<std::optional<UserRecord>> FindUserByEmail(
      const std::string& email) = 0;
  [[nodiscard]] virtual absl::StatusOr<User> GetUser(int64_t id) = 0;
  // Every user, by id.
  [[nodiscard]] virtual absl::StatusOr<std::vector<User>> ListUsers() = 0;
  // Applies `change`; a role or active change also deletes the user's
  // sessions. Aborted when it would leave no active admin.
  [[nodiscard]] virtual absl::StatusOr<User> ChangeUser(int64_t id, const UserChange& change,
                                                        absl::Time now) = 0;
  // Deletes the user with their sessions, links and saved queries. Aborted
  // when they are the last active admin.
  [[nodiscard]] virtual absl::Status DeleteUser(int64_t id) = 0;
  // Stores a new hash. With `end_sessions`, deletes the user's sessions in
  // the same transaction (a password change; not a rehash at sign-in).
  [[nodiscard]] virtual absl::Status SetPasswordHash(int64_t id, const std::string& hash,
                                                     bool end_sessions, absl::Time now) = 0;
  [[nodiscard]] virtual absl::Status RecordSignIn(int64_t id, absl::Time now) = 0;

  // Sessions, found by the hash of their token.
  [[nodiscard]] virtual absl::StatusOr<int64_t> CreateSession(int64_t user_id,
                                                              const TokenHash& hash, absl::Time now,
                                                              const std::string& address,
                                                              const std::string& user_agent) = 0;
  [[nodiscard]] virtual absl::StatusOr<std::optional<StoredSession>> FindSession(
      const TokenHash& hash) = 0;
  [[nodiscard]] virtual absl::Status TouchSession(int64_t id, absl::Time now) = 0;
  [[nodiscard]] virtual absl::Status DeleteSession(int64_t id) = 0;
  // Deletes sessions last seen before `idle_before` or created before
  // `created_before`; returns how many.
  [[nodiscard]] virtual absl::StatusOr<int64_t> DeleteExpiredSessions(
      absl::Time idle_before, absl::Time created_before) = 0;

  // One-time password links.
  [[nodiscard]] virtual absl::Status CreatePasswordLink(int64_t user_id, const TokenHash& hash,
                                                        absl::Time now, absl::Time expires_at) = 0;
  // Marks the link used and returns its user, in one transaction; nullopt
  // when no unused link with that hash expires after `now`.
  [[nodiscard]] virtual absl::StatusOr<std::optional<int64_t>> UsePasswordLink(
      const TokenHash& hash, absl::Time now) = 0;

  // Saved queries. AlreadyExists when the owner has one of that name.
  [[nodiscard]] virtual absl::StatusOr<SavedQuery> CreateSavedQuery(const SavedQuery& query,
                                                                    absl::Time now) = 0;
  // NotFound when there is none with that id.
  [[nodiscard]] virtual absl::StatusOr<SavedQuery> GetSavedQuery(int64_t id) = 0;
  // The user's own and every shared one, by id.
  [[nodiscard]] virtual absl::StatusOr<std::vector<SavedQuery>> ListSavedQueries(
      int64_t user_id) = 0;
  [[nodiscard]] virtual absl::StatusOr<int64_t> CountSavedQueries(int64_t owner_id) = 0;
  [[nodiscard]] virtual absl::StatusOr<SavedQuery> ChangeSavedQuery(int64_t id,
                                                                    const SavedQueryChange& change,
                                                                    absl::Time now) = 0;
  [[nodiscard]] virtual absl::Status DeleteSavedQuery(int64_t id) = 0;

  // The audit log.
  [[nodiscard]] virtual absl::Status AppendAudit(const AuditEvent& event) = 0;
  // Newest first: up to `limit` events with ids below `before_id` (all
  // when nullopt).
  [[nodiscard]] virtual absl::StatusOr<std::vector<AuditEvent>> ListAudit(
      std::optional<int64_t> before_id, size_t limit) = 0;
  // Deletes events older than `before`; returns how many.
  [[nodiscard]] virtual absl::StatusOr<int64_t> PruneAudit(absl::Time before) = 0;
};

}  // namespace strata::control
