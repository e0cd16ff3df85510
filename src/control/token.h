#pragma once

// Tokens: what a token is, apart from where it is kept
// (docs/format/control-db.md, "Tokens").
//
// A token is "strata_" followed by 52 characters of lower-case Crockford
// base32 (0-9 and a-z without i, l, o, u, so no two characters look alike)
// encoding 32 bytes from libsodium's randombytes_buf(): 256 bits of entropy.
// strata stores only its BLAKE2b-256 hash (libsodium's crypto_generichash).
// A password needs a slow, salted KDF because people choose guessable
// passwords; a 256-bit random token cannot be guessed, so a fast unsalted
// hash is as strong as the token, and it lets every request be checked by
// one hash-table lookup.
//
// Thread-safety: every function is safe to call from any thread.

#include <array>
#include <cstddef>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace strata::control {

// What a token may do. Ingest sends telemetry (OTLP); read queries it (the
// API); admin does both and manages the control plane.
enum class TokenScope { kIngest, kRead, kAdmin };

// "ingest", "read", "admin": the names used by the CLI and the database.
std::string_view TokenScopeName(TokenScope scope);
// The inverse of TokenScopeName(); InvalidArgument listing the valid names.
[[nodiscard]] absl::StatusOr<TokenScope> ParseTokenScope(std::string_view name);
// True when a token of scope `granted` may do what `required` allows
// (admin grants every scope).
bool ScopeAllows(TokenScope granted, TokenScope required);

inline constexpr std::string_view kTokenPrefix = "strata_";
inline constexpr size_t kTokenRandomBytes = 32;
// "strata_" plus ceil(256 / 5) base32 characters.
inline constexpr size_t kTokenLength = kTokenPrefix.size() + (kTokenRandomBytes * 8 + 4) / 5;
inline constexpr size_t kMaxTokenNameBytes = 128;

using TokenHash = std::array<unsigned char, 32>;

// 32 bytes from randombytes_buf() as 52 characters of the token alphabet
// (no prefix): session cookies and one-time links. Aborts as GenerateToken.
std::string GenerateSecret();

// Compares two hashes in constant time (sodium_memcmp).
bool SameHash(const TokenHash& a, const TokenHash& b);

// A new random token. Aborts only if libsodium cannot initialise, which
// means the process has no usable randomness at all.
std::string GenerateToken();

// BLAKE2b-256 of the token text as presented.
TokenHash HashToken(std::string_view token);

// Token names: 1 to kMaxTokenNameBytes bytes of UTF-8 text, no control
// characters, and not all digits (an all-digit argument to `strata token
// revoke` is an id). InvalidArgument saying which rule failed.
[[nodiscard]] absl::Status ValidateTokenName(std::string_view name);

}  // namespace strata::control
