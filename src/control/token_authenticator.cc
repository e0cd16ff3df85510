#include "control/token_authenticator.h"

#include <sodium.h>

#include <utility>
#include <vector>

#include "common/check.h"
#include "common/status_macros.h"
#include "fmt/format.h"

namespace strata::control {
namespace {

// Uses closer together than this are recorded once: last_used_at is kept
// to about a second, and a busy token does not write its shared cache line
// on every request.
constexpr int64_t kLastUseResolutionMs = 1000;

absl::Status UnknownToken() { return absl::UnauthenticatedError("unknown or revoked token"); }

}  // namespace

TokenAuthenticator::TokenAuthenticator(TokenStore* store, TokenAuthenticatorOptions options)
    : store_(store), options_(std::move(options)), snapshot_(std::make_shared<const Snapshot>()) {}

absl::StatusOr<std::unique_ptr<TokenAuthenticator>> TokenAuthenticator::Create(
    TokenStore* store, TokenAuthenticatorOptions options) {
  STRATA_CHECK(store != nullptr, "TokenAuthenticator needs a TokenStore");
  std::unique_ptr<TokenAuthenticator> authenticator(
      new TokenAuthenticator(store, std::move(options)));
  STRATA_RETURN_IF_ERROR(authenticator->Refresh());
  return authenticator;
}

TokenAuthenticator::~TokenAuthenticator() { Stop(); }

std::shared_ptr<const TokenAuthenticator::Snapshot> TokenAuthenticator::CurrentSnapshot() const {
  MutexLock lock(&snapshot_mu_);
  return snapshot_;
}

absl::StatusOr<TokenScope> TokenAuthenticator::Authenticate(std::string_view token) const {
  if (token.empty() || token.size() > kMaxPresentedTokenBytes) {
    failures_.fetch_add(1, std::memory_order_relaxed);
    return UnknownToken();
  }
  const TokenHash hash = HashToken(token);
  const std::shared_ptr<const Snapshot> snapshot = CurrentSnapshot();
  const auto it = snapshot->find(hash);
  // The lookup compares hashes, so its timing depends only on the hash of
  // what was presented; the constant-time comparison is the check that
  // decides.
  if (it == snapshot->end() ||
      sodium_memcmp(it->second.hash.data(), hash.data(), hash.size()) != 0) {
    failures_.fetch_add(1, std::memory_order_relaxed);
    return UnknownToken();
  }
  const Entry& entry = it->second;
  const int64_t now_ms = absl::ToUnixMillis(options_.clock());
  if (now_ms - entry.last_use->load(std::memory_order_relaxed) >= kLastUseResolutionMs) {
    entry.last_use->store(now_ms, std::memory_order_relaxed);
  }
  return entry.scope;
}

absl::Status TokenAuthenticator::Authorize(std::string_view token, TokenScope required) const {
  STRATA_ASSIGN_OR_RETURN(const TokenScope scope, Authenticate(token));
  if (ScopeAllows(scope, required)) return absl::OkStatus();
  return absl::PermissionDeniedError(
      fmt::format("the token has scope {}; this needs scope {}{}", TokenScopeName(scope),
                  TokenScopeName(required), required == TokenScope::kAdmin ? "" : " or admin"));
}

absl::Status TokenAuthenticator::Refresh() {
  absl::Status status;
  {
    MutexLock lock(&refresh_mu_);
    status = RefreshLocked();
  }
  if (status.ok()) {
    MutexLock lock(&thread_mu_);
    ++refreshes_;
    thread_cv_.SignalAll();
  }
  return status;
}

absl::Status TokenAuthenticator::RefreshLocked() {
  const std::shared_ptr<const Snapshot> current = CurrentSnapshot();

  // Load first and swap, then write last-use times: a database that takes
  // reads but refuses writes (a full disk) must not hold up revocations.
  STRATA_ASSIGN_OR_RETURN(const std::vector<LiveToken> live, store_->LoadLive());
  absl::flat_hash_map<int64_t, std::shared_ptr<LastUse>> last_use_by_id;
  for (const auto& [hash, entry] : *current) last_use_by_id[entry.id] = entry.last_use;
  auto next = std::make_shared<Snapshot>();
  next->reserve(live.size());
  for (const LiveToken& token : live) {
    std::shared_ptr<LastUse>& last_use = last_use_by_id[token.id];
    if (last_use == nullptr) last_use = std::make_shared<LastUse>(0);
    next->insert_or_assign(token.hash, Entry{token.id, token.scope, token.hash, last_use});
  }
  {
    MutexLock lock(&snapshot_mu_);
    snapshot_ = std::move(next);
  }

  // Uses through the old snapshot count too: they share the same LastUse,
  // and a revoked token's last use is still worth recording.
  absl::flat_hash_map<int64_t, absl::Time> to_write;
  for (const auto& [id, last_use] : last_use_by_id) {
    const int64_t ms = last_use->load(std::memory_order_relaxed);
    if (ms > 0 && ms > flushed_last_use_[id]) to_write[id] = absl::FromUnixMillis(ms);
  }
  STRATA_RETURN_IF_ERROR(store_->RecordLastUsed(to_write));
  for (const auto& [id, time] : to_write) flushed_last_use_[id] = absl::ToUnixMillis(time);
  // Forget tokens that are gone; their last use has just been written.
  absl::flat_hash_map<int64_t, int64_t> kept;
  for (const LiveToken& token : live) {
    if (auto it = flushed_last_use_.find(token.id); it != flushed_last_use_.end()) {
      kept.insert(*it);
    }
  }
  flushed_last_use_ = std::move(kept);
  return absl::OkStatus();
}

void TokenAuthenticator::Start(absl::Duration interval) {
  MutexLock lock(&thread_mu_);
  STRATA_CHECK(!started_, "TokenAuthenticator::Start() called twice");
  started_ = true;
  thread_ = std::thread([this, interval] { RefreshLoop(interval); });
}

void TokenAuthenticator::Stop() {
  std::thread thread;
  {
    MutexLock lock(&thread_mu_);
    stopping_ = true;
    thread_cv_.SignalAll();
    thread = std::move(thread_);
  }
  if (thread.joinable()) thread.join();
}

void TokenAuthenticator::RefreshLoop(absl::Duration interval) {
  const auto period = absl::ToChronoNanoseconds(interval);
  while (true) {
    {
      MutexLock lock(&thread_mu_);
      const auto deadline = std::chrono::steady_clock::now() + period;
      while (!stopping_ && std::chrono::steady_clock::now() < deadline) {
        thread_cv_.WaitUntil(&thread_mu_, deadline);
      }
      if (stopping_) return;
    }
    if (absl::Status status = Refresh(); !status.ok() && options_.on_refresh_error) {
      options_.on_refresh_error(status);
    }
  }
}

size_t TokenAuthenticator::live_tokens() const { return CurrentSnapshot()->size(); }

uint64_t TokenAuthenticator::refreshes() const {
  MutexLock lock(&thread_mu_);
  return refreshes_;
}

bool TokenAuthenticator::TEST_WaitForRefreshes(uint64_t count,
                                               std::chrono::steady_clock::time_point deadline) {
  MutexLock lock(&thread_mu_);
  while (refreshes_ < count) {
    if (!thread_cv_.WaitUntil(&thread_mu_, deadline) &&
        std::chrono::steady_clock::now() >= deadline) {
      return refreshes_ >= count;
    }
  }
  return true;
}

}  // namespace strata::control
