#include "control/attempt_limiter.h"

#include <algorithm>

namespace strata::control {

absl::Duration AttemptLimiter::Delay(const Entry& entry) const {
  const int over = entry.failures - limits_.free_failures;
  if (over <= 0) return absl::ZeroDuration();
  absl::Duration delay = limits_.first_delay;
  for (int i = 1; i < over && delay < limits_.max_delay; ++i) delay *= 2;
  return std::min(delay, limits_.max_delay);
}

bool AttemptLimiter::Expired(const Entry& entry, absl::Time now) const {
  return now - entry.last_failure >= std::max(limits_.forget_after, Delay(entry));
}

absl::Duration AttemptLimiter::WaitFor(std::string_view key, absl::Time now) {
  MutexLock lock(&mu_);
  const auto it = entries_.find(absl::string_view(key.data(), key.size()));
  if (it == entries_.end()) return absl::ZeroDuration();
  if (Expired(it->second, now)) {
    entries_.erase(it);
    return absl::ZeroDuration();
  }
  const absl::Time allowed = it->second.last_failure + Delay(it->second);
  return allowed > now ? allowed - now : absl::ZeroDuration();
}

void AttemptLimiter::RecordFailure(std::string_view key, absl::Time now) {
  MutexLock lock(&mu_);
  auto it = entries_.find(absl::string_view(key.data(), key.size()));
  if (it != entries_.end() && Expired(it->second, now)) {
    entries_.erase(it);
    it = entries_.end();
  }
  if (it == entries_.end()) {
    if (entries_.size() >= limits_.max_keys) MakeRoom(now);
    it = entries_.emplace(std::string(key), Entry{}).first;
  }
  ++it->second.failures;
  it->second.last_failure = std::max(it->second.last_failure, now);
}

void AttemptLimiter::Reset(std::string_view key) {
  MutexLock lock(&mu_);
  if (const auto it = entries_.find(absl::string_view(key.data(), key.size()));
      it != entries_.end())
    entries_.erase(it);
}

size_t AttemptLimiter::keys() const {
  MutexLock lock(&mu_);
  return entries_.size();
}

void AttemptLimiter::MakeRoom(absl::Time now) {
  absl::erase_if(entries_, [&](const auto& item) { return Expired(item.second, now); });
  if (entries_.size() < limits_.max_keys || entries_.empty()) return;
  auto oldest = entries_.begin();
  for (auto it = entries_.begin(); it != entries_.end(); ++it) {
    if (it->second.last_failure < oldest->second.last_failure) oldest = it;
  }
  entries_.erase(oldest);
}

}  // namespace strata::control
