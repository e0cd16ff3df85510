#include "control/password.h"

#include <sodium.h>

#include "common/check.h"
#include "control/text_checks.h"
#include "fmt/format.h"

namespace strata::control {
namespace {

void InitSodium() {
  static const bool initialized = sodium_init() >= 0;
  STRATA_CHECK(initialized, "libsodium failed to initialise (no usable randomness)");
}

}  // namespace

absl::Status ValidatePassword(std::string_view password) {
  if (password.size() > kMaxPasswordBytes) {
    return absl::InvalidArgumentError(
        fmt::format("a password is at most {} bytes", kMaxPasswordBytes));
  }
  const std::optional<size_t> count = CodePointCount(password);
  if (!count.has_value()) return absl::InvalidArgumentError("a password must be valid UTF-8");
  if (*count < kMinPasswordCodePoints) {
    return absl::InvalidArgumentError(
        fmt::format("a password needs at least {} characters", kMinPasswordCodePoints));
  }
  return absl::OkStatus();
}

absl::StatusOr<std::string> HashPassword(std::string_view password,
                                         const PasswordHashParams& params) {
  InitSodium();
  char encoded[crypto_pwhash_argon2id_STRBYTES];
  if (crypto_pwhash_argon2id_str(encoded, password.data(), password.size(), params.passes,
                                 params.memory_bytes) != 0) {
    return absl::ResourceExhaustedError(fmt::format(
        "cannot hash a password: Argon2id could not get {} MiB", params.memory_bytes >> 20));
  }
  return std::string(encoded);
}

bool VerifyPassword(std::string_view encoded, std::string_view password) {
  InitSodium();
  if (encoded.size() >= crypto_pwhash_argon2id_STRBYTES) return false;
  char stored[crypto_pwhash_argon2id_STRBYTES] = {};
  encoded.copy(stored, encoded.size());
  return crypto_pwhash_argon2id_str_verify(stored, password.data(), password.size()) == 0;
}

bool PasswordNeedsRehash(std::string_view encoded, const PasswordHashParams& params) {
  InitSodium();
  if (encoded.size() >= crypto_pwhash_argon2id_STRBYTES) return true;
  char stored[crypto_pwhash_argon2id_STRBYTES] = {};
  encoded.copy(stored, encoded.size());
  return crypto_pwhash_argon2id_str_needs_rehash(stored, params.passes, params.memory_bytes) != 0;
}

}  // namespace strata::control
