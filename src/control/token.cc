#include "control/token.h"

#include <sodium.h>

#include <cstdint>

#include "common/check.h"
#include "common/status_macros.h"
#include "control/text_checks.h"
#include "fmt/format.h"

namespace strata::control {
namespace {

// Lower-case Crockford base32: no i, l, o or u.
constexpr std::string_view kBase32Alphabet = "0123456789abcdefghjkmnpqrstvwxyz";
static_assert(kBase32Alphabet.size() == 32);

void InitSodiumOnce() {
  // sodium_init() is idempotent and thread-safe; the static runs it once.
  static const bool initialized = sodium_init() >= 0;
  STRATA_CHECK(initialized, "libsodium failed to initialise (no usable randomness)");
}

std::string Base32(const unsigned char* bytes, size_t size) {
  std::string out;
  out.reserve((size * 8 + 4) / 5);
  uint32_t buffer = 0;
  int bits = 0;
  for (size_t i = 0; i < size; ++i) {
    buffer = (buffer << 8) | bytes[i];
    bits += 8;
    while (bits >= 5) {
      out += kBase32Alphabet[(buffer >> (bits - 5)) & 31];
      bits -= 5;
    }
  }
  if (bits > 0) out += kBase32Alphabet[(buffer << (5 - bits)) & 31];
  return out;
}

}  // namespace

std::string_view TokenScopeName(TokenScope scope) {
  switch (scope) {
    case TokenScope::kIngest:
      return "ingest";
    case TokenScope::kRead:
      return "read";
    case TokenScope::kAdmin:
      return "admin";
  }
  STRATA_CHECK(false, "unknown TokenScope");
  return "";
}

absl::StatusOr<TokenScope> ParseTokenScope(std::string_view name) {
  for (TokenScope scope : {TokenScope::kIngest, TokenScope::kRead, TokenScope::kAdmin}) {
    if (name == TokenScopeName(scope)) return scope;
  }
  return absl::InvalidArgumentError(
      fmt::format("unknown token scope \"{}\"; the scopes are ingest, read and admin", name));
}

bool ScopeAllows(TokenScope granted, TokenScope required) {
  return granted == required || granted == TokenScope::kAdmin;
}

std::string GenerateSecret() {
  InitSodiumOnce();
  unsigned char random[kTokenRandomBytes];
  randombytes_buf(random, sizeof(random));
  std::string secret = Base32(random, sizeof(random));
  sodium_memzero(random, sizeof(random));
  return secret;
}

std::string GenerateToken() {
  std::string token = std::string(kTokenPrefix) + GenerateSecret();
  STRATA_CHECK(token.size() == kTokenLength, "token length");
  return token;
}

bool SameHash(const TokenHash& a, const TokenHash& b) {
  return sodium_memcmp(a.data(), b.data(), a.size()) == 0;
}

TokenHash HashToken(std::string_view token) {
  InitSodiumOnce();
  static_assert(std::tuple_size_v<TokenHash> == crypto_generichash_BYTES);
  TokenHash hash;
  crypto_generichash(hash.data(), hash.size(), reinterpret_cast<const unsigned char*>(token.data()),
                     token.size(), nullptr, 0);
  return hash;
}

absl::Status ValidateTokenName(std::string_view name) {
  STRATA_RETURN_IF_ERROR(ValidatePlainText("a token name", name, kMaxTokenNameBytes));
  bool all_digits = true;
  for (char c : name) {
    if (c < '0' || c > '9') all_digits = false;
  }
  if (all_digits) {
    return absl::InvalidArgumentError(
        "a token name must not be all digits (`strata token revoke` reads those as an id)");
  }
  return absl::OkStatus();
}

}  // namespace strata::control
