#include "control/token.h"

#include <sodium.h>

#include <cstdint>

#include "common/check.h"
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

// Decodes one UTF-8 code point at `text[*pos]`, advancing *pos; -1 if the
// bytes there are not well-formed UTF-8 (overlong forms, surrogates and
// values past U+10FFFF included).
int32_t NextCodePoint(std::string_view text, size_t* pos) {
  const auto byte = [&](size_t i) { return static_cast<unsigned char>(text[i]); };
  const unsigned char lead = byte(*pos);
  int length = 0;
  int32_t code = 0;
  int32_t min = 0;
  if (lead < 0x80) {
    ++*pos;
    return lead;
  } else if ((lead & 0xe0) == 0xc0) {
    length = 2, code = lead & 0x1f, min = 0x80;
  } else if ((lead & 0xf0) == 0xe0) {
    length = 3, code = lead & 0x0f, min = 0x800;
  } else if ((lead & 0xf8) == 0xf0) {
    length = 4, code = lead & 0x07, min = 0x10000;
  } else {
    return -1;
  }
  if (*pos + static_cast<size_t>(length) > text.size()) return -1;
  for (int i = 1; i < length; ++i) {
    const unsigned char next = byte(*pos + static_cast<size_t>(i));
    if ((next & 0xc0) != 0x80) return -1;
    code = (code << 6) | (next & 0x3f);
  }
  if (code < min || code > 0x10ffff || (code >= 0xd800 && code <= 0xdfff)) return -1;
  *pos += static_cast<size_t>(length);
  return code;
}

bool IsControl(int32_t code) { return code < 0x20 || (code >= 0x7f && code <= 0x9f); }

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

std::string GenerateToken() {
  InitSodiumOnce();
  unsigned char random[kTokenRandomBytes];
  randombytes_buf(random, sizeof(random));
  std::string token = std::string(kTokenPrefix) + Base32(random, sizeof(random));
  sodium_memzero(random, sizeof(random));
  STRATA_CHECK(token.size() == kTokenLength, "token length");
  return token;
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
  if (name.empty()) return absl::InvalidArgumentError("a token name must not be empty");
  if (name.size() > kMaxTokenNameBytes) {
    return absl::InvalidArgumentError(fmt::format(
        "a token name is at most {} bytes; this one is {}", kMaxTokenNameBytes, name.size()));
  }
  bool all_digits = true;
  for (size_t pos = 0; pos < name.size();) {
    const int32_t code = NextCodePoint(name, &pos);
    if (code < 0) return absl::InvalidArgumentError("a token name must be valid UTF-8");
    if (IsControl(code)) {
      return absl::InvalidArgumentError(
          fmt::format("a token name must not contain control characters (found U+{:04X})", code));
    }
    if (code < '0' || code > '9') all_digits = false;
  }
  if (all_digits) {
    return absl::InvalidArgumentError(
        "a token name must not be all digits (`strata token revoke` reads those as an id)");
  }
  return absl::OkStatus();
}

}  // namespace strata::control
