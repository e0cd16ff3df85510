#pragma once

// The TraceQL lexer: query text into tokens for parser.cc. It knows the
// language's words only as far as the shapes of tokens need (attributes,
// scoped intrinsics, numbers with duration units, strings); keywords are
// identifiers the parser recognises.
//
// Tokens:
//   punctuation  { } ( ) , |
//   operators    = != > >= < <= =~ !~ && || ! + - * / % ^
//                >> << ~ !> !>> !< !<< &> &>> &< &<< &~ (structural)
//   kString      "..." (escapes \" and \\ only) or `...` (raw)
//   kInt, kFloat 12, 1.5 (no sign, no exponent)
//   kDuration    a number and ns, us, µs, ms, s, m or h: 100ms, 1.5s
//   kAttribute   .name, ."quoted", span.name, resource.name, event.name,
//                link.name, instrumentation.name, parent.<attribute>
//   kScoped      span:name, trace:rootName, event:name, link:traceID,
//                instrumentation:name, ... (the word after the colon is
//                checked by the parser)
//   kIdent       other words: intrinsics, enum values, true, false, nil,
//                function names
// Whitespace and `//` comments to the end of a line separate tokens.
//
// Thread-safety: a Lexer has a single owner. Errors: Next() returns
// InvalidArgument naming the column for text that is no token.

#include <cstddef>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"

namespace strata::compat::traceql {

enum class TokenKind {
  kEnd,
  kLeftBrace,
  kRightBrace,
  kLeftParen,
  kRightParen,
  kComma,
  kPipe,
  kEq,
  kNe,
  kGt,
  kGe,
  kLt,
  kLe,
  kRegex,
  kNotRegex,  // also "not sibling" between spansets
  kAnd,
  kOr,
  kNot,
  kPlus,
  kMinus,
  kStar,
  kSlash,
  kPercent,
  kCaret,
  kStructural,  // >> << ~ !> !>> !< !<< &> &>> &< &<< &~ (text says which)
  kString,
  kInt,
  kFloat,
  kDuration,
  kAttribute,
  kScoped,
  kIdent,
};

struct Token {
  TokenKind kind = TokenKind::kEnd;
  std::string_view text;  // as written
  size_t offset = 0;      // of the first byte
  // kString: the value; kAttribute: the key (unquoted); kScoped: the word
  // after the colon.
  std::string value;
  // kAttribute: the scope word before the dot ("" for `.name`, "span",
  // "resource", ..., and "parent" with the rest in `value` as written);
  // kScoped: the word before the colon.
  std::string scope;
};

class Lexer {
 public:
  explicit Lexer(std::string_view text) : text_(text) {}

  [[nodiscard]] absl::StatusOr<Token> Next();

 private:
  absl::Status Error(size_t offset, std::string_view what) const;
  void SkipSpaceAndComments();
  absl::StatusOr<Token> LexString(size_t start);
  absl::StatusOr<Token> LexNumber(size_t start);
  // An attribute name after its dot (quoted or bare), from pos_.
  absl::StatusOr<std::string> LexAttributeName(size_t dot);
  absl::StatusOr<Token> LexWord(size_t start);

  const std::string_view text_;
  size_t pos_ = 0;
};

// Whether `c` can continue a bare attribute name (after its first byte).
bool IsAttributeByte(char c);

}  // namespace strata::compat::traceql
