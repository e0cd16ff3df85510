#include "control/rate_limiter.h"

namespace strata::control {

absl::Duration RateLimiter::Take(std::string_view key, absl::Time now) {
  MutexLock lock(&mu_);
  auto it = windows_.find(absl::string_view(key.data(), key.size()));
  if (it != windows_.end() && Closed(it->second, now)) {
    windows_.erase(it);
    it = windows_.end();
  }
  if (it == windows_.end()) {
    if (windows_.size() >= limits_.max_keys) MakeRoom(now);
    it = windows_.emplace(std::string(key), Window{.opened = now}).first;
  }
  Window& window = it->second;
  if (window.uses >= limits_.max_per_window) return window.opened + limits_.window - now;
  ++window.uses;
  return absl::ZeroDuration();
}

size_t RateLimiter::keys() const {
  MutexLock lock(&mu_);
  return windows_.size();
}

void RateLimiter::MakeRoom(absl::Time now) {
  absl::erase_if(windows_, [&](const auto& item) { return Closed(item.second, now); });
  if (windows_.size() < limits_.max_keys || windows_.empty()) return;
  auto oldest = windows_.begin();
  for (auto it = windows_.begin(); it != windows_.end(); ++it) {
    if (it->second.opened < oldest->second.opened) oldest = it;
  }
  windows_.erase(oldest);
}

}  // namespace strata::control
