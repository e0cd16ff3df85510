#pragma once

// The LogQL lexer: query text into tokens for parser.cc.
//
// Tokens:
//   punctuation  { } ( ) [ ] ,
//   operators    = != =~ !~ | |= |~ |> !> == < <= > >= + - * / % ^
//   kString      "..." (a backslash escapes the next byte) or `...` (raw)
//   kNumeric     a number, duration or byte size as written (12, 1.5,
//                .5, 1e3, 0x1f, 5m, 1h30m, 10KiB); the parser decides which
//                of them it needs where (durations.h reads them)
//   kIdent       [A-Za-z_:][A-Za-z0-9_:]*: label names and every keyword
//   kFlag        --strict, --keep-empty (logfmt's flags)
// Whitespace and `#` comments to the end of a line separate tokens.
//
// Thread-safety: a Lexer has a single owner. Errors: Next() returns
// InvalidArgument naming the column for text that is no token.

#include <cstddef>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"

namespace strata::compat::logql {

enum class TokenKind {
  kEnd,
  kLeftBrace,
  kRightBrace,
  kLeftParen,
  kRightParen,
  kLeftBracket,
  kRightBracket,
  kComma,
  kEq,
  kNe,
  kRegex,
  kNotRegex,
  kPipe,
  kPipeExact,
  kPipeMatch,
  kPipePattern,
  kNotPattern,
  kEqEq,
  kLt,
  kLe,
  kGt,
  kGe,
  kAdd,
  kSub,
  kMul,
  kDiv,
  kMod,
  kPow,
  kString,
  kNumeric,
  kIdent,
  kFlag,
};

struct Token {
  TokenKind kind = TokenKind::kEnd;
  std::string_view text;  // as written
  size_t offset = 0;      // of the first byte
  std::string value;      // kString: the decoded value
};

class Lexer {
 public:
  explicit Lexer(std::string_view text) : text_(text) {}

  [[nodiscard]] absl::StatusOr<Token> Next();

 private:
  absl::Status Error(size_t offset, std::string_view what) const;
  void SkipSpaceAndComments();
  absl::StatusOr<Token> LexString(size_t start);
  Token LexNumeric(size_t start);

  const std::string_view text_;
  size_t pos_ = 0;
};

// Decodes the escapes of a double-quoted string's body as Go does (\n \t
// \r \a \b \f \v \\ \" \' \xHH \uHHHH \UHHHHHHHH and octal \ooo); any other
// escaped byte stands for itself.
std::string UnescapeLogQL(std::string_view body);

}  // namespace strata::compat::logql
