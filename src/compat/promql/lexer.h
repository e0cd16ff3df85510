#pragma once

// The PromQL lexer: expression text into tokens for parser.cc, as
// Prometheus 2.42's lexer splits it. Keywords (by, offset, sum, inf, ...)
// are identifiers the parser recognises, case-insensitively, by position.
//
// Tokens:
//   punctuation  ( ) { } [ ] , : (only inside brackets) @
//   operators    + - * / % ^ == != < <= > >= = =~ !~
//   kNumber      12, 1.5, .5, 1e3, 0x1F (no sign)
//   kDuration    a number with units: 5m, 1h30m, 100ms
//   kString      "...", '...' (Go escapes) or `...` (raw)
//   kIdentifier  [a-zA-Z_:][a-zA-Z0-9_:]* (no colon inside braces)
// Whitespace and `#` comments to the end of a line separate tokens.
//
// Thread-safety: single owner. Errors: Lex() returns InvalidArgument
// naming the line and column of text that is no token.

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace strata::compat::promql {

enum class TokenKind {
  kEnd,
  kLeftParen,
  kRightParen,
  kLeftBrace,
  kRightBrace,
  kLeftBracket,
  kRightBracket,
  kComma,
  kColon,
  kAt,
  kPlus,
  kMinus,
  kStar,
  kSlash,
  kPercent,
  kCaret,
  kEqEq,
  kNe,
  kLt,
  kLe,
  kGt,
  kGe,
  kAssign,    // = (a label matcher)
  kRegex,     // =~
  kNotRegex,  // !~
  kNumber,
  kDuration,
  kString,
  kIdentifier,
};

struct Token {
  TokenKind kind = TokenKind::kEnd;
  std::string text;  // for kString the unquoted value
  size_t pos = 0;    // byte offset in the query
};

// Every token of `query`, ending with a kEnd token.
absl::StatusOr<std::vector<Token>> Lex(absl::string_view query);

// "line:column" (1-based) of byte offset `pos`, as Prometheus's messages
// start.
std::string PositionText(absl::string_view query, size_t pos);

}  // namespace strata::compat::promql
