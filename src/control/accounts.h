#pragma once

// Accounts holds the rules for people (docs/api.md, "Accounts"): first-boot
// setup, sign-in with Argon2id passwords, browser sessions with idle and
// absolute expiry, one-time password links, user administration and the
// audit log. Rows live in an AccountStore; the setup link lives only in
// memory (a restart makes a new one while no user exists).
//
// Answers that could tell an attacker something are uniform: an unknown
// email, a user without a password, a deactivated user and a wrong password
// all get Unauthenticated "wrong email or password", and each of them costs
// one Argon2id verification (a fixed dummy hash stands in for a missing
// one). Secrets (session tokens, setup and password links) are 32 random
// bytes; only their BLAKE2b hashes are kept, and they are compared in
// constant time.
//
// Limits (AttemptLimiter): sign-in per address and per account, setup and
// password links per address. Over a limit: ResourceExhausted carrying the
// wait (RetryAfterOf()).
//
// Thread-safety: safe for concurrent use. The store must outlive it.
//
// Errors: InvalidArgument for a bad email, name, role or password (before
// anything is consumed); Unauthenticated for wrong credentials or an
// unknown or used link; PermissionDenied for a wrong or expired setup link;
// FailedPrecondition "setup is closed" once a user exists (the API's 410);
// ResourceExhausted over a limit; the store's errors otherwise.

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "common/mutex.h"
#include "control/account_store.h"
#include "control/attempt_limiter.h"
#include "control/password.h"

namespace strata::control {

struct AccountsOptions {
  std::function<absl::Time()> clock = [] { return absl::Now(); };
  PasswordHashParams hash_params = kPasswordHashParams;
  // Argon2id computations at once (each takes hash_params.memory_bytes).
  int max_concurrent_hashes = 2;
  absl::Duration session_idle = absl::Hours(12);
  absl::Duration session_lifetime = absl::Hours(24 * 7);
  absl::Duration setup_link_lifetime = absl::Hours(1);
  absl::Duration password_link_lifetime = absl::Minutes(15);
  absl::Duration audit_retention = absl::Hours(24 * 90);
  AttemptLimits limits;
  // Told when an audit event cannot be written (the server logs it).
  std::function<void(const absl::Status&)> on_audit_error;
};

// Where a request came from, for the audit log and the limits.
struct RequestOrigin {
  std::string address;
  std::string user_agent;
};

struct SignedIn {
  std::string session_token;  // the cookie's value; exists only here
  User user;
};

struct SessionUser {
  int64_t session_id = 0;
  User user;
};

struct PasswordLink {
  std::string token;  // goes into the link's fragment; exists only here
  absl::Time expires_at;
};

struct CreatedUser {
  User user;
  PasswordLink link;
};

// The length of session tokens and link tokens (GenerateSecret()).
inline constexpr size_t kSecretLength = 52;

// The wait carried by a ResourceExhausted status from Accounts.
std::optional<absl::Duration> RetryAfterOf(const absl::Status& status);

// Trims `email`, lower-cases its ASCII letters and checks its shape
// (local@domain, at most 254 bytes, no spaces or control characters).
[[nodiscard]] absl::StatusOr<std::string> NormalizeEmail(std::string_view email);

class Accounts {
 public:
  Accounts(AccountStore* store, AccountsOptions options);

  Accounts(const Accounts&) = delete;
  Accounts& operator=(const Accounts&) = delete;

  const AccountsOptions& options() const { return options_; }

  // First boot. While no user exists, makes a new setup link token (valid
  // setup_link_lifetime; the previous one stops working) and returns it;
  // nullopt once a user exists.
  [[nodiscard]] absl::StatusOr<std::optional<std::string>> OpenSetup() ABSL_LOCKS_EXCLUDED(mu_);
  // True while no user exists.
  [[nodiscard]] absl::StatusOr<bool> SetupNeeded();
  // Creates the first admin and signs them in; the link then stops working.
  [[nodiscard]] absl::StatusOr<SignedIn> CompleteSetup(
      std::string_view token, std::string_view email, std::string_view name,
      std::string_view password, const RequestOrigin& origin) ABSL_LOCKS_EXCLUDED(mu_);

  [[nodiscard]] absl::StatusOr<SignedIn> SignIn(std::string_view email, std::string_view password,
                                                const RequestOrigin& origin);
  [[nodiscard]] absl::Status SignOut(const SessionUser& session, const RequestOrigin& origin);
  // A signed-in user changes their own password: `current` must verify
  // (limited per account like sign-in, Unauthenticated "wrong password"
  // otherwise). Every session of the user ends, and a new one is started
  // for this client.
  [[nodiscard]] absl::StatusOr<SignedIn> ChangeOwnPassword(const SessionUser& session,
                                                           std::string_view current,
                                                           std::string_view replacement,
                                                           const RequestOrigin& origin);
  // The live session whose token is `token`, its last-seen time moved
  // forward (written at most once a minute); nullopt for an unknown,
  // expired or deactivated one (expired ones are deleted).
  [[nodiscard]] absl::StatusOr<std::optional<SessionUser>> ResolveSession(std::string_view token);

  // Administration; `actor` names who acts in the audit log.
  [[nodiscard]] absl::StatusOr<std::vector<User>> ListUsers();
  [[nodiscard]] absl::StatusOr<User> GetUser(int64_t id);
  // A new user without a password, and a link for them to set one.
  [[nodiscard]] absl::StatusOr<CreatedUser> CreateUser(std::string_view actor,
                                                       std::string_view email,
                                                       std::string_view name, Role role,
                                                       const RequestOrigin& origin);
  // A new password link for the user with `email` (NotFound when none).
  [[nodiscard]] absl::StatusOr<PasswordLink> ResetLink(std::string_view actor,
                                                       std::string_view email,
                                                       const RequestOrigin& origin);
  // Sets the password of the link's user (ending their other sessions) and
  // signs them in. The link works once.
  [[nodiscard]] absl::StatusOr<SignedIn> UsePasswordLink(std::string_view token,
                                                         std::string_view password,
                                                         const RequestOrigin& origin);
  [[nodiscard]] absl::StatusOr<User> ChangeUser(std::string_view actor, int64_t id,
                                                UserChange change, const RequestOrigin& origin);
  [[nodiscard]] absl::Status DeleteUser(std::string_view actor, int64_t id,
                                        const RequestOrigin& origin);

  // Writes an audit event stamped now (errors go to on_audit_error), and
  // about once an hour deletes expired sessions and audit events older than
  // audit_retention.
  void Audit(std::string_view actor, std::string_view action, std::string_view target,
             AuditOutcome outcome, const RequestOrigin& origin, std::string_view detail = "")
      ABSL_LOCKS_EXCLUDED(mu_);
  [[nodiscard]] absl::StatusOr<std::vector<AuditEvent>> ListAudit(std::optional<int64_t> before_id,
                                                                  size_t limit);

 private:
  // Runs `fn` once fewer than max_concurrent_hashes others run.
  template <typename Fn>
  auto WithHashSlot(Fn fn) ABSL_LOCKS_EXCLUDED(hash_mu_);
  // The dummy hash verified for unknown users.
  std::string DummyHash() ABSL_LOCKS_EXCLUDED(mu_);
  // ResourceExhausted when any of `keys` must wait.
  absl::Status CheckLimits(std::initializer_list<std::string_view> keys, absl::Time now);
  absl::StatusOr<SignedIn> StartSession(const User& user, const RequestOrigin& origin,
                                        absl::Time now);
  void Housekeep(absl::Time now) ABSL_LOCKS_EXCLUDED(mu_);

  AccountStore* const store_;
  const AccountsOptions options_;
  AttemptLimiter limiter_;

  Mutex hash_mu_;
  CondVar hash_cv_;
  int hashes_running_ ABSL_GUARDED_BY(hash_mu_) = 0;

  Mutex mu_;
  std::optional<TokenHash> setup_hash_ ABSL_GUARDED_BY(mu_);
  absl::Time setup_expires_at_ ABSL_GUARDED_BY(mu_);
  std::string dummy_hash_ ABSL_GUARDED_BY(mu_);
  absl::Time last_housekeeping_ ABSL_GUARDED_BY(mu_) = absl::InfinitePast();
};

}  // namespace strata::control
