#include "control/accounts.h"

#include <algorithm>
#include <cmath>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/cord.h"
#include "absl/strings/numbers.h"
#include "common/status_macros.h"
#include "control/text_checks.h"
#include "fmt/format.h"

namespace strata::control {
namespace {

constexpr absl::string_view kRetryAfterPayload = "strata.dev/retry-after-seconds";
constexpr size_t kMaxEmailBytes = 254;
constexpr size_t kMaxNameBytes = 128;
constexpr absl::Duration kTouchEvery = absl::Minutes(1);
constexpr absl::Duration kHousekeepEvery = absl::Hours(1);
constexpr char kWrongCredentials[] = "wrong email or password";

absl::Status LimitedError(std::string_view what, absl::Duration wait) {
  const int64_t seconds =
      std::max<int64_t>(1, absl::ToInt64Seconds(absl::Ceil(wait, absl::Seconds(1))));
  absl::Status status = absl::ResourceExhaustedError(
      fmt::format("too many failed {}; try again in {} s", what, seconds));
  status.SetPayload(kRetryAfterPayload, absl::Cord(std::to_string(seconds)));
  return status;
}

absl::StatusOr<std::string> NormalizeName(std::string_view name) {
  const std::string trimmed(
      absl::StripAsciiWhitespace(absl::string_view(name.data(), name.size())));
  STRATA_RETURN_IF_ERROR(ValidatePlainText("a display name", trimmed, kMaxNameBytes));
  return trimmed;
}

std::string AddressKey(std::string_view kind, const RequestOrigin& origin) {
  return fmt::format("{}:address:{}", kind, origin.address);
}

std::string UserActor(const User& user) { return "user:" + user.email; }

}  // namespace

std::optional<absl::Duration> RetryAfterOf(const absl::Status& status) {
  const absl::optional<absl::Cord> payload = status.GetPayload(kRetryAfterPayload);
  int64_t seconds = 0;
  if (!payload.has_value() || !absl::SimpleAtoi(std::string(*payload), &seconds)) {
    return std::nullopt;
  }
  return absl::Seconds(seconds);
}

absl::StatusOr<std::string> NormalizeEmail(std::string_view email) {
  std::string out(absl::StripAsciiWhitespace(absl::string_view(email.data(), email.size())));
  absl::AsciiStrToLower(&out);
  STRATA_RETURN_IF_ERROR(ValidatePlainText("an email address", out, kMaxEmailBytes));
  const size_t at = out.find('@');
  if (at == std::string::npos || at == 0 || at + 1 == out.size() ||
      out.find('@', at + 1) != std::string::npos || out.find(' ') != std::string::npos) {
    return absl::InvalidArgumentError(
        "an email address needs the form name@domain (one @, no spaces)");
  }
  return out;
}

Accounts::Accounts(AccountStore* store, AccountsOptions options)
    : store_(store), options_(std::move(options)), limiter_(options_.limits) {}

template <typename Fn>
auto Accounts::WithHashSlot(Fn fn) {
  {
    MutexLock lock(&hash_mu_);
    while (hashes_running_ >= std::max(1, options_.max_concurrent_hashes)) {
      hash_cv_.WaitUntil(&hash_mu_,
                         std::chrono::steady_clock::now() + std::chrono::milliseconds(100));
    }
    ++hashes_running_;
  }
  auto result = fn();
  MutexLock lock(&hash_mu_);
  --hashes_running_;
  hash_cv_.Signal();
  return result;
}

std::string Accounts::DummyHash() {
  MutexLock lock(&mu_);
  if (dummy_hash_.empty()) {
    absl::StatusOr<std::string> hash = HashPassword(GenerateSecret(), options_.hash_params);
    // Without memory for one hash no sign-in can succeed anyway; a
    // malformed dummy still costs a parse and fails.
    dummy_hash_ = hash.ok() ? *std::move(hash) : "-";
  }
  return dummy_hash_;
}

absl::Status Accounts::CheckLimits(std::initializer_list<std::string_view> keys, absl::Time now) {
  absl::Duration wait = absl::ZeroDuration();
  for (std::string_view key : keys) wait = std::max(wait, limiter_.WaitFor(key, now));
  if (wait <= absl::ZeroDuration()) return absl::OkStatus();
  return LimitedError("attempts", wait);
}

absl::StatusOr<std::optional<std::string>> Accounts::OpenSetup() {
  STRATA_ASSIGN_OR_RETURN(const bool needed, SetupNeeded());
  MutexLock lock(&mu_);
  if (!needed) {
    setup_hash_.reset();
    return std::nullopt;
  }
  std::string token = GenerateSecret();
  setup_hash_ = HashToken(token);
  setup_expires_at_ = options_.clock() + options_.setup_link_lifetime;
  return token;
}

absl::StatusOr<bool> Accounts::SetupNeeded() {
  STRATA_ASSIGN_OR_RETURN(const int64_t users, store_->CountUsers());
  return users == 0;
}

absl::StatusOr<SignedIn> Accounts::CompleteSetup(std::string_view token, std::string_view email,
                                                 std::string_view name, std::string_view password,
                                                 const RequestOrigin& origin) {
  const absl::Time now = options_.clock();
  const std::string key = AddressKey("setup", origin);
  STRATA_RETURN_IF_ERROR(CheckLimits({key}, now));
  STRATA_ASSIGN_OR_RETURN(const bool needed, SetupNeeded());
  if (!needed) {
    return absl::FailedPreconditionError(
        "setup is closed: an account already exists; sign in, or ask an admin for one");
  }
  bool matches = false;
  {
    MutexLock lock(&mu_);
    matches = setup_hash_.has_value() && now < setup_expires_at_ && token.size() == kSecretLength &&
              SameHash(*setup_hash_, HashToken(token));
  }
  if (!matches) {
    limiter_.RecordFailure(key, now);
    Audit("anonymous", "auth.setup", "", AuditOutcome::kDenied, origin, "wrong or expired link");
    return absl::PermissionDeniedError(
        "the setup link is wrong or has expired; restarting strata serve prints a new one");
  }
  STRATA_ASSIGN_OR_RETURN(std::string normalized_email, NormalizeEmail(email));
  STRATA_ASSIGN_OR_RETURN(std::string normalized_name, NormalizeName(name));
  STRATA_RETURN_IF_ERROR(ValidatePassword(password));
  STRATA_ASSIGN_OR_RETURN(
      std::string hash, WithHashSlot([&] { return HashPassword(password, options_.hash_params); }));
  absl::StatusOr<User> user = store_->CreateFirstUser(NewUser{.email = std::move(normalized_email),
                                                              .name = std::move(normalized_name),
                                                              .role = Role::kAdmin,
                                                              .password_hash = std::move(hash)},
                                                      now);
  if (absl::IsFailedPrecondition(user.status())) {
    return absl::FailedPreconditionError("setup is closed: an account already exists");
  }
  STRATA_RETURN_IF_ERROR(user.status());
  {
    MutexLock lock(&mu_);
    setup_hash_.reset();
  }
  Audit(UserActor(*user), "auth.setup", UserActor(*user), AuditOutcome::kOk, origin);
  return StartSession(*user, origin, now);
}

absl::StatusOr<SignedIn> Accounts::StartSession(const User& user, const RequestOrigin& origin,
                                                absl::Time now) {
  SignedIn signed_in;
  signed_in.session_token = GenerateSecret();
  STRATA_RETURN_IF_ERROR(store_
                             ->CreateSession(user.id, HashToken(signed_in.session_token), now,
                                             origin.address, origin.user_agent)
                             .status());
  STRATA_RETURN_IF_ERROR(store_->RecordSignIn(user.id, now));
  signed_in.user = user;
  signed_in.user.last_sign_in_at = absl::FromUnixMillis(absl::ToUnixMillis(now));
  return signed_in;
}

absl::StatusOr<SignedIn> Accounts::SignIn(std::string_view email, std::string_view password,
                                          const RequestOrigin& origin) {
  const absl::Time now = options_.clock();
  Housekeep(now);
  const absl::StatusOr<std::string> normalized = NormalizeEmail(email);
  const std::string account_key =
      fmt::format("sign-in:account:{}", normalized.ok() ? *normalized : std::string(email));
  const std::string address_key = AddressKey("sign-in", origin);
  if (absl::Status limited = CheckLimits({address_key, account_key}, now); !limited.ok()) {
    Audit("anonymous", "auth.login", normalized.ok() ? *normalized : "", AuditOutcome::kDenied,
          origin, "over the sign-in limit");
    return limited;
  }
  std::optional<UserRecord> record;
  if (normalized.ok()) {
    STRATA_ASSIGN_OR_RETURN(record, store_->FindUserByEmail(*normalized));
  }
  const bool usable = record.has_value() && record->user.active &&
                      record->password_hash.has_value() && password.size() <= kMaxPasswordBytes;
  const std::string stored = usable ? *record->password_hash : DummyHash();
  const bool verified =
      WithHashSlot([&] { return VerifyPassword(stored, password.substr(0, kMaxPasswordBytes)); });
  if (!usable || !verified) {
    limiter_.RecordFailure(address_key, now);
    limiter_.RecordFailure(account_key, now);
    Audit("anonymous", "auth.login", normalized.ok() ? *normalized : "", AuditOutcome::kFailed,
          origin, kWrongCredentials);
    return absl::UnauthenticatedError(kWrongCredentials);
  }
  limiter_.Reset(account_key);
  const User& user = record->user;
  if (PasswordNeedsRehash(stored, options_.hash_params)) {
    absl::StatusOr<std::string> rehashed =
        WithHashSlot([&] { return HashPassword(password, options_.hash_params); });
    if (rehashed.ok()) {
      STRATA_RETURN_IF_ERROR(store_->SetPasswordHash(user.id, *rehashed, false, now));
    }
  }
  STRATA_ASSIGN_OR_RETURN(SignedIn signed_in, StartSession(user, origin, now));
  Audit(UserActor(user), "auth.login", UserActor(user), AuditOutcome::kOk, origin);
  return signed_in;
}

absl::StatusOr<SignedIn> Accounts::ChangeOwnPassword(const SessionUser& session,
                                                     std::string_view current,
                                                     std::string_view replacement,
                                                     const RequestOrigin& origin) {
  const absl::Time now = options_.clock();
  const std::string account_key = fmt::format("sign-in:account:{}", session.user.email);
  STRATA_RETURN_IF_ERROR(CheckLimits({account_key}, now));
  STRATA_RETURN_IF_ERROR(ValidatePassword(replacement));
  STRATA_ASSIGN_OR_RETURN(const std::optional<UserRecord> record,
                          store_->FindUserByEmail(session.user.email));
  const bool usable = record.has_value() && record->password_hash.has_value() &&
                      current.size() <= kMaxPasswordBytes;
  const std::string stored = usable ? *record->password_hash : DummyHash();
  const bool verified = WithHashSlot([&] { return VerifyPassword(stored, current); });
  if (!usable || !verified) {
    limiter_.RecordFailure(account_key, now);
    Audit(UserActor(session.user), "auth.password_change", UserActor(session.user),
          AuditOutcome::kFailed, origin, "wrong current password");
    return absl::UnauthenticatedError("wrong password");
  }
  STRATA_ASSIGN_OR_RETURN(std::string hash, WithHashSlot([&] {
                            return HashPassword(replacement, options_.hash_params);
                          }));
  STRATA_RETURN_IF_ERROR(
      store_->SetPasswordHash(session.user.id, hash, /*end_sessions=*/true, now));
  Audit(UserActor(session.user), "auth.password_change", UserActor(session.user), AuditOutcome::kOk,
        origin);
  return StartSession(record->user, origin, now);
}

absl::Status Accounts::SignOut(const SessionUser& session, const RequestOrigin& origin) {
  STRATA_RETURN_IF_ERROR(store_->DeleteSession(session.session_id));
  Audit(UserActor(session.user), "auth.logout", UserActor(session.user), AuditOutcome::kOk, origin);
  return absl::OkStatus();
}

absl::StatusOr<std::optional<SessionUser>> Accounts::ResolveSession(std::string_view token) {
  if (token.size() != kSecretLength) return std::nullopt;
  STRATA_ASSIGN_OR_RETURN(std::optional<StoredSession> stored,
                          store_->FindSession(HashToken(token)));
  if (!stored.has_value()) return std::nullopt;
  const absl::Time now = options_.clock();
  if (now - stored->last_seen_at >= options_.session_idle ||
      now - stored->created_at >= options_.session_lifetime || !stored->user.active) {
    STRATA_RETURN_IF_ERROR(store_->DeleteSession(stored->id));
    return std::nullopt;
  }
  if (now - stored->last_seen_at >= kTouchEvery) {
    STRATA_RETURN_IF_ERROR(store_->TouchSession(stored->id, now));
  }
  return SessionUser{stored->id, std::move(stored->user)};
}

absl::StatusOr<std::vector<User>> Accounts::ListUsers() { return store_->ListUsers(); }

absl::StatusOr<User> Accounts::GetUser(int64_t id) { return store_->GetUser(id); }

absl::StatusOr<CreatedUser> Accounts::CreateUser(std::string_view actor, std::string_view email,
                                                 std::string_view name, Role role,
                                                 const RequestOrigin& origin) {
  STRATA_ASSIGN_OR_RETURN(std::string normalized_email, NormalizeEmail(email));
  STRATA_ASSIGN_OR_RETURN(std::string normalized_name, NormalizeName(name));
  const absl::Time now = options_.clock();
  CreatedUser created;
  STRATA_ASSIGN_OR_RETURN(
      created.user,
      store_->CreateUser(NewUser{.email = normalized_email, .name = normalized_name, .role = role},
                         now));
  created.link.token = GenerateSecret();
  created.link.expires_at = now + options_.password_link_lifetime;
  STRATA_RETURN_IF_ERROR(store_->CreatePasswordLink(created.user.id, HashToken(created.link.token),
                                                    now, created.link.expires_at));
  Audit(actor, "user.create", UserActor(created.user), AuditOutcome::kOk, origin,
        fmt::format("role {}", RoleName(role)));
  return created;
}

absl::StatusOr<PasswordLink> Accounts::ResetLink(std::string_view actor, std::string_view email,
                                                 const RequestOrigin& origin) {
  STRATA_ASSIGN_OR_RETURN(const std::string normalized, NormalizeEmail(email));
  STRATA_ASSIGN_OR_RETURN(const std::optional<UserRecord> record,
                          store_->FindUserByEmail(normalized));
  if (!record.has_value()) {
    return absl::NotFoundError(fmt::format("no user has email {}", normalized));
  }
  const absl::Time now = options_.clock();
  PasswordLink link{GenerateSecret(), now + options_.password_link_lifetime};
  STRATA_RETURN_IF_ERROR(
      store_->CreatePasswordLink(record->user.id, HashToken(link.token), now, link.expires_at));
  Audit(actor, "user.password_link", UserActor(record->user), AuditOutcome::kOk, origin);
  return link;
}

absl::StatusOr<SignedIn> Accounts::UsePasswordLink(std::string_view token,
                                                   std::string_view password,
                                                   const RequestOrigin& origin) {
  const absl::Time now = options_.clock();
  const std::string key = AddressKey("password-link", origin);
  STRATA_RETURN_IF_ERROR(CheckLimits({key}, now));
  STRATA_RETURN_IF_ERROR(ValidatePassword(password));
  std::optional<int64_t> user_id;
  if (token.size() == kSecretLength) {
    STRATA_ASSIGN_OR_RETURN(user_id, store_->UsePasswordLink(HashToken(token), now));
  }
  if (!user_id.has_value()) {
    limiter_.RecordFailure(key, now);
    Audit("anonymous", "auth.password_link", "", AuditOutcome::kFailed, origin,
          "unknown, used or expired link");
    return absl::UnauthenticatedError(
        "this password link is unknown, already used or expired; ask an admin for a new one");
  }
  STRATA_ASSIGN_OR_RETURN(const User user, store_->GetUser(*user_id));
  if (!user.active) {
    return absl::UnauthenticatedError("this account is deactivated; ask an admin");
  }
  STRATA_ASSIGN_OR_RETURN(
      std::string hash, WithHashSlot([&] { return HashPassword(password, options_.hash_params); }));
  STRATA_RETURN_IF_ERROR(store_->SetPasswordHash(user.id, hash, /*end_sessions=*/true, now));
  Audit(UserActor(user), "auth.password_link", UserActor(user), AuditOutcome::kOk, origin);
  STRATA_ASSIGN_OR_RETURN(SignedIn signed_in, StartSession(user, origin, now));
  signed_in.user.has_password = true;
  return signed_in;
}

absl::StatusOr<User> Accounts::ChangeUser(std::string_view actor, int64_t id, UserChange change,
                                          const RequestOrigin& origin) {
  if (change.name.has_value()) {
    STRATA_ASSIGN_OR_RETURN(change.name, NormalizeName(*change.name));
  }
  absl::StatusOr<User> user = store_->ChangeUser(id, change, options_.clock());
  std::string detail;
  if (change.role.has_value()) detail += fmt::format("role {} ", RoleName(*change.role));
  if (change.active.has_value()) detail += *change.active ? "activate " : "deactivate ";
  if (change.name.has_value()) detail += "rename ";
  if (!detail.empty()) detail.pop_back();
  Audit(actor, "user.change", user.ok() ? UserActor(*user) : fmt::format("user:{}", id),
        user.ok() ? AuditOutcome::kOk : AuditOutcome::kFailed, origin,
        user.ok() ? detail : fmt::format("{}: {}", detail, std::string(user.status().message())));
  return user;
}

absl::Status Accounts::DeleteUser(std::string_view actor, int64_t id, const RequestOrigin& origin) {
  absl::StatusOr<User> user = store_->GetUser(id);
  STRATA_RETURN_IF_ERROR(user.status());
  const absl::Status deleted = store_->DeleteUser(id);
  Audit(actor, "user.delete", UserActor(*user),
        deleted.ok() ? AuditOutcome::kOk : AuditOutcome::kFailed, origin,
        deleted.ok() ? "" : std::string(deleted.message()));
  return deleted;
}

void Accounts::Audit(std::string_view actor, std::string_view action, std::string_view target,
                     AuditOutcome outcome, const RequestOrigin& origin, std::string_view detail) {
  const absl::Time now = options_.clock();
  const absl::Status status = store_->AppendAudit(AuditEvent{.at = now,
                                                             .actor = std::string(actor),
                                                             .action = std::string(action),
                                                             .target = std::string(target),
                                                             .outcome = outcome,
                                                             .address = origin.address,
                                                             .user_agent = origin.user_agent,
                                                             .detail = std::string(detail)});
  if (!status.ok() && options_.on_audit_error) options_.on_audit_error(status);
  Housekeep(now);
}

absl::StatusOr<std::vector<AuditEvent>> Accounts::ListAudit(std::optional<int64_t> before_id,
                                                            size_t limit) {
  return store_->ListAudit(before_id, limit);
}

void Accounts::Housekeep(absl::Time now) {
  {
    MutexLock lock(&mu_);
    if (now - last_housekeeping_ < kHousekeepEvery) return;
    last_housekeeping_ = now;
  }
  absl::Status status =
      store_->DeleteExpiredSessions(now - options_.session_idle, now - options_.session_lifetime)
          .status();
  if (status.ok()) status = store_->PruneAudit(now - options_.audit_retention).status();
  if (!status.ok() && options_.on_audit_error) options_.on_audit_error(status);
}

}  // namespace strata::control
