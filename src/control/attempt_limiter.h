#pragma once

// AttemptLimiter slows down guessing (docs/api.md, "Sign-in limits"). It
// counts failed attempts per key (an address, an account) and, after
// `free_failures` of them, makes the next attempt wait first_delay,
// doubling with each further failure up to max_delay. A key's count is
// forgotten `forget_after` after its last failure (or once its delay has
// passed, when that is longer), and reset by Reset() (a successful sign-in
// resets its account's key, never the address's). At most max_keys keys are
// kept; past that the expired ones are dropped and, if still full, the one
// whose last failure is oldest.
//
// Thread-safety: safe for concurrent use.

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/time/time.h"
#include "common/mutex.h"

namespace strata::control {

struct AttemptLimits {
  int free_failures = 5;
  absl::Duration first_delay = absl::Seconds(1);
  absl::Duration max_delay = absl::Minutes(15);
  absl::Duration forget_after = absl::Minutes(15);
  size_t max_keys = 100000;
};

class AttemptLimiter {
 public:
  explicit AttemptLimiter(AttemptLimits limits = {}) : limits_(limits) {}

  // Zero when an attempt for `key` may go ahead at `now`; otherwise how long
  // until it may.
  absl::Duration WaitFor(std::string_view key, absl::Time now) ABSL_LOCKS_EXCLUDED(mu_);
  void RecordFailure(std::string_view key, absl::Time now) ABSL_LOCKS_EXCLUDED(mu_);
  void Reset(std::string_view key) ABSL_LOCKS_EXCLUDED(mu_);

  size_t keys() const ABSL_LOCKS_EXCLUDED(mu_);

 private:
  struct Entry {
    int failures = 0;
    absl::Time last_failure;
  };
  // The wait an entry imposes after its last failure (zero within the free
  // failures).
  absl::Duration Delay(const Entry& entry) const;
  bool Expired(const Entry& entry, absl::Time now) const;
  void MakeRoom(absl::Time now) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const AttemptLimits limits_;
  mutable Mutex mu_;
  absl::flat_hash_map<std::string, Entry> entries_ ABSL_GUARDED_BY(mu_);
};

}  // namespace strata::control
