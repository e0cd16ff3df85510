#pragma once

// TokenAuthenticator answers "which scope does this bearer token carry?"
// for every OTLP request and API call, without touching SQLite: it keeps an
// immutable snapshot of the live tokens, keyed by the BLAKE2b hash of the
// token (token.h), and swaps in a new snapshot on each Refresh(). A check
// costs one hash of the presented token, one hash-table lookup and one
// constant-time comparison (sodium_memcmp). The lookup's timing depends only
// on the hash of what was presented, which says nothing about any live
// token.
//
// Refresh() reloads the live tokens from the TokenStore and writes the
// last-use times gathered since the previous refresh. Start() runs it on a
// background thread every `interval` (1 s by default) until Stop(). So a
// token created or revoked with `strata token` (another process) takes
// effect on a running server within one refresh interval. If a refresh
// fails (the database is locked or unreadable), the previous snapshot stays
// in force: tokens keep working, and a revocation waits for the next
// successful refresh; `on_refresh_error` is told each time.
//
// last_used_at is approximate: a use is written at the next refresh, times
// are kept to about a second, and uses since the last refresh are lost if
// the process dies.
//
// Thread-safety: Authenticate(), Authorize() and the accessors are safe for
// concurrent use with each other and with Refresh(); Start() and Stop() are
// for the owner. The TokenStore must outlive the authenticator.
//
// Errors: Authenticate() returns Unauthenticated ("unknown or revoked
// token") for anything but a live token, and never includes the token in a
// message; Authorize() adds PermissionDenied for a live token whose scope
// does not allow what is asked. Refresh() returns TokenStore's errors.

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string_view>
#include <thread>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "common/mutex.h"
#include "control/token.h"
#include "control/token_store.h"

namespace strata::control {

struct TokenAuthenticatorOptions {
  // Stamps last use; tests inject their own.
  std::function<absl::Time()> clock = [] { return absl::Now(); };
  // Called from the refresh thread when a background refresh fails (the
  // server logs it). Must not call back into the authenticator.
  std::function<void(const absl::Status&)> on_refresh_error;
};

class TokenAuthenticator {
 public:
  // Presented tokens longer than this are refused without being hashed.
  static constexpr size_t kMaxPresentedTokenBytes = 256;
  static constexpr absl::Duration kDefaultRefreshInterval = absl::Seconds(1);

  // Loads the live tokens once, so the authenticator is ready on return.
  [[nodiscard]] static absl::StatusOr<std::unique_ptr<TokenAuthenticator>> Create(
      TokenStore* store, TokenAuthenticatorOptions options = {});
  // Stops the refresh thread (Stop()); does not flush last-use times.
  ~TokenAuthenticator();

  TokenAuthenticator(const TokenAuthenticator&) = delete;
  TokenAuthenticator& operator=(const TokenAuthenticator&) = delete;

  // The scope of `token` if it is live; Unauthenticated otherwise.
  [[nodiscard]] absl::StatusOr<TokenScope> Authenticate(std::string_view token) const;

  // OK when `token` is live and its scope allows `required` (ScopeAllows);
  // Unauthenticated as Authenticate(); PermissionDenied for a live token of
  // another scope.
  [[nodiscard]] absl::Status Authorize(std::string_view token, TokenScope required) const;

  // Writes the last-use times gathered since the previous refresh, then
  // reloads the live tokens. On error the current snapshot stays.
  [[nodiscard]] absl::Status Refresh() ABSL_LOCKS_EXCLUDED(refresh_mu_);

  // Starts a thread that calls Refresh() every `interval` until Stop().
  // At most once per authenticator.
  void Start(absl::Duration interval = kDefaultRefreshInterval) ABSL_LOCKS_EXCLUDED(thread_mu_);
  // Stops and joins the refresh thread promptly (it is woken, not waited
  // out); idempotent. Does not run a last refresh: call Refresh() after
  // Stop() to flush last-use times at shutdown.
  void Stop() ABSL_LOCKS_EXCLUDED(thread_mu_);

  // Authenticate() calls that returned Unauthenticated (Authorize() calls
  // included).
  uint64_t failures() const { return failures_.load(std::memory_order_relaxed); }
  // Tokens in the current snapshot.
  size_t live_tokens() const ABSL_LOCKS_EXCLUDED(snapshot_mu_);
  // Successful Refresh() calls, from any thread.
  uint64_t refreshes() const ABSL_LOCKS_EXCLUDED(thread_mu_);

  // Waits until refreshes() >= `count` or `deadline`; true if reached. For
  // tests that need a background refresh to have happened.
  bool TEST_WaitForRefreshes(uint64_t count, std::chrono::steady_clock::time_point deadline)
      ABSL_LOCKS_EXCLUDED(thread_mu_);

 private:
  // Last use of one token, in Unix milliseconds (0: not used since this
  // process loaded it). Shared by the entries for one token id in
  // successive snapshots, so a use recorded through an old snapshot is not
  // lost when a new one is swapped in. Atomic because every request thread
  // writes it without a lock; relaxed order suffices, as nothing else is
  // published through it.
  using LastUse = std::atomic<int64_t>;

  struct Entry {
    int64_t id = 0;
    TokenScope scope = TokenScope::kIngest;
    TokenHash hash{};
    std::shared_ptr<LastUse> last_use;
  };
  // Immutable once published.
  using Snapshot = absl::flat_hash_map<TokenHash, Entry>;

  TokenAuthenticator(TokenStore* store, TokenAuthenticatorOptions options);

  std::shared_ptr<const Snapshot> CurrentSnapshot() const ABSL_LOCKS_EXCLUDED(snapshot_mu_);
  absl::Status RefreshLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(refresh_mu_);
  void RefreshLoop(absl::Duration interval) ABSL_LOCKS_EXCLUDED(thread_mu_);

  // Constant after construction.
  TokenStore* const store_;
  const TokenAuthenticatorOptions options_;

  // Counts Unauthenticated answers; atomic because request threads bump it
  // without a lock and readers need no ordering with anything else.
  mutable std::atomic<uint64_t> failures_{0};

  // Serializes Refresh() calls (a test's and the background thread's).
  Mutex refresh_mu_;
  // The last-use time written to the store per token id, so a refresh
  // writes only what changed.
  absl::flat_hash_map<int64_t, int64_t> flushed_last_use_ ABSL_GUARDED_BY(refresh_mu_);

  // Held only to copy or swap the pointer, never across I/O.
  mutable Mutex snapshot_mu_;
  std::shared_ptr<const Snapshot> snapshot_ ABSL_GUARDED_BY(snapshot_mu_);

  mutable Mutex thread_mu_;
  CondVar thread_cv_;  // signalled on stop and after each refresh
  bool started_ ABSL_GUARDED_BY(thread_mu_) = false;
  bool stopping_ ABSL_GUARDED_BY(thread_mu_) = false;
  uint64_t refreshes_ ABSL_GUARDED_BY(thread_mu_) = 0;
  std::thread thread_ ABSL_GUARDED_BY(thread_mu_);
};

}  // namespace strata::control
