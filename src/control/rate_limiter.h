#pragma once

// RateLimiter bounds how often one key (a client address) may do something
// that costs the server whatever it is asked (docs/api.md, "OAuth client
// registration limits"): at most `max_per_window` times in a window of
// `window` that opens with the key's first use and closes `window` later;
// the next use after that opens a new window. Unlike AttemptLimiter it
// counts every use, not failures, and refuses rather than delays. At most
// max_keys keys are kept; past that the ones whose window closed are
// dropped and, if still full, the one whose window opened first (its
// count is forgotten: a bound on memory, not on an attacker who controls
// that many addresses).
//
// Thread-safety: safe for concurrent use.

#include <cstddef>
#include <string>
#include <string_view>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/time/time.h"
#include "common/mutex.h"

namespace strata::control {

struct RateLimits {
  int max_per_window = 20;
  absl::Duration window = absl::Hours(1);
  size_t max_keys = 100000;
};

class RateLimiter {
 public:
  explicit RateLimiter(RateLimits limits = {}) : limits_(limits) {}

  // Counts one use of `key` at `now` and returns zero when it fits in the
  // key's window; otherwise counts nothing and returns how long until the
  // window closes.
  absl::Duration Take(std::string_view key, absl::Time now) ABSL_LOCKS_EXCLUDED(mu_);

  size_t keys() const ABSL_LOCKS_EXCLUDED(mu_);

 private:
  struct Window {
    absl::Time opened;
    int uses = 0;
  };
  bool Closed(const Window& window, absl::Time now) const {
    return now - window.opened >= limits_.window;
  }
  void MakeRoom(absl::Time now) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  // Constant after construction.
  const RateLimits limits_;

  mutable Mutex mu_;
  absl::flat_hash_map<std::string, Window> windows_ ABSL_GUARDED_BY(mu_);
};

}  // namespace strata::control
