#pragma once

// Passwords: the rules a new one must meet, and Argon2id hashing through
// libsodium (docs/format/control-db.md, "users"). The stored form is
// libsodium's encoded string, "$argon2id$v=19$m=<KiB>,t=<passes>,p=1$<salt>$<hash>",
// which carries its own salt and parameters; a hash made with other
// parameters than today's still verifies, and a sign-in rehashes it
// (PasswordNeedsRehash).
//
// Hashing costs kPasswordHashParams' memory (64 MiB) and about 0.1 s of one
// core; callers bound how many run at once.
//
// Thread-safety: stateless functions.

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace strata::control {

inline constexpr size_t kMinPasswordCodePoints = 12;
inline constexpr size_t kMaxPasswordBytes = 1024;

// Argon2id's cost parameters.
struct PasswordHashParams {
  uint64_t passes = 2;                     // libsodium's opslimit
  size_t memory_bytes = size_t{64} << 20;  // libsodium's memlimit
};
// What new hashes use: libsodium's "interactive" Argon2id limits (2 passes
// over 64 MiB, one lane).
inline constexpr PasswordHashParams kPasswordHashParams{};

// OK when `password` is well-formed UTF-8 of at least
// kMinPasswordCodePoints code points and at most kMaxPasswordBytes bytes;
// InvalidArgument saying which rule failed (never echoing the password).
[[nodiscard]] absl::Status ValidatePassword(std::string_view password);

// Argon2id of `password` with a fresh random salt, in libsodium's encoded
// form. ResourceExhausted when the memory cannot be had.
[[nodiscard]] absl::StatusOr<std::string> HashPassword(
    std::string_view password, const PasswordHashParams& params = kPasswordHashParams);

// True when `encoded` is an Argon2id hash of `password` (libsodium's
// verify, which compares in constant time). False for a malformed hash.
bool VerifyPassword(std::string_view encoded, std::string_view password);

// True when `encoded` was not made with `params` (or is not an Argon2id
// hash at all), so the next successful sign-in should store a new hash.
bool PasswordNeedsRehash(std::string_view encoded,
                         const PasswordHashParams& params = kPasswordHashParams);

}  // namespace strata::control
