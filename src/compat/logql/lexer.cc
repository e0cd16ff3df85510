#include "compat/logql/lexer.h"

#include <array>
#include <cstdint>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "common/absl_view.h"
#include "common/utf8.h"

namespace strata::compat::logql {
namespace {

struct Operator {
  std::string_view text;
  TokenKind kind;
};

// Longest first, so that a prefix never wins over the whole operator.
constexpr std::array<Operator, 27> kOperators = {{
    {"!=", TokenKind::kNe},         {"!~", TokenKind::kNotRegex},    {"!>", TokenKind::kNotPattern},
    {"=~", TokenKind::kRegex},      {"==", TokenKind::kEqEq},        {"|=", TokenKind::kPipeExact},
    {"|~", TokenKind::kPipeMatch},  {"|>", TokenKind::kPipePattern}, {"<=", TokenKind::kLe},
    {">=", TokenKind::kGe},         {"=", TokenKind::kEq},           {"|", TokenKind::kPipe},
    {"<", TokenKind::kLt},          {">", TokenKind::kGt},           {"+", TokenKind::kAdd},
    {"-", TokenKind::kSub},         {"*", TokenKind::kMul},          {"/", TokenKind::kDiv},
    {"%", TokenKind::kMod},         {"^", TokenKind::kPow},          {"{", TokenKind::kLeftBrace},
    {"}", TokenKind::kRightBrace},  {"(", TokenKind::kLeftParen},    {")", TokenKind::kRightParen},
    {"[", TokenKind::kLeftBracket}, {"]", TokenKind::kRightBracket}, {",", TokenKind::kComma},
}};

bool IsDigit(char c) { return absl::ascii_isdigit(static_cast<unsigned char>(c)); }
bool IsHex(char c) { return absl::ascii_isxdigit(static_cast<unsigned char>(c)); }
bool IsIdentStart(char c) {
  return absl::ascii_isalpha(static_cast<unsigned char>(c)) || c == '_' || c == ':';
}
bool IsIdentByte(char c) {
  return absl::ascii_isalnum(static_cast<unsigned char>(c)) || c == '_' || c == ':';
}
bool IsSpace(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v';
}

// Reads `digits` hexadecimal digits at body[*i]; false (and *i unchanged)
// when they are not all there.
bool ReadHex(std::string_view body, size_t* i, int digits, uint32_t* code) {
  if (*i + digits > body.size()) return false;
  uint32_t value = 0;
  for (int k = 0; k < digits; ++k) {
    const char c = body[*i + k];
    if (!IsHex(c)) return false;
    value = value * 16 + (IsDigit(c) ? c - '0' : (absl::ascii_tolower(c) - 'a' + 10));
  }
  *i += digits;
  *code = value;
  return true;
}

}  // namespace

std::string UnescapeLogQL(std::string_view body) {
  std::string out;
  out.reserve(body.size());
  for (size_t i = 0; i < body.size(); ++i) {
    if (body[i] != '\\' || i + 1 >= body.size()) {
      out.push_back(body[i]);
      continue;
    }
    const char c = body[++i];
    uint32_t code = 0;
    size_t next = i + 1;
    switch (c) {
      case 'n':
        out.push_back('\n');
        break;
      case 't':
        out.push_back('\t');
        break;
      case 'r':
        out.push_back('\r');
        break;
      case 'a':
        out.push_back('\a');
        break;
      case 'b':
        out.push_back('\b');
        break;
      case 'f':
        out.push_back('\f');
        break;
      case 'v':
        out.push_back('\v');
        break;
      case 'x':
        if (ReadHex(body, &next, 2, &code)) {
          out.push_back(static_cast<char>(code));
          i = next - 1;
        } else {
          out.push_back(c);
        }
        break;
      case 'u':
      case 'U':
        if (ReadHex(body, &next, c == 'u' ? 4 : 8, &code)) {
          AppendUtf8(code, &out);
          i = next - 1;
        } else {
          out.push_back(c);
        }
        break;
      default:
        if (c >= '0' && c <= '7' && i + 2 < body.size() && body[i + 1] >= '0' &&
            body[i + 1] <= '7' && body[i + 2] >= '0' && body[i + 2] <= '7') {
          out.push_back(static_cast<char>(
              ((c - '0') * 64 + (body[i + 1] - '0') * 8 + (body[i + 2] - '0')) & 0xFF));
          i += 2;
        } else {
          out.push_back(c);
        }
    }
  }
  return out;
}

absl::Status Lexer::Error(size_t offset, std::string_view what) const {
  return absl::InvalidArgumentError(
      absl::StrCat("LogQL: at column ", offset + 1, ": ", Absl(what)));
}

void Lexer::SkipSpaceAndComments() {
  while (pos_ < text_.size()) {
    const char c = text_[pos_];
    if (IsSpace(c)) {
      ++pos_;
    } else if (c == '#') {
      const size_t end = text_.find('\n', pos_);
      pos_ = end == std::string_view::npos ? text_.size() : end + 1;
    } else {
      return;
    }
  }
}

absl::StatusOr<Token> Lexer::LexString(size_t start) {
  const char quote = text_[start];
  size_t i = start + 1;
  while (i < text_.size() && text_[i] != quote) {
    if (quote == '"' && text_[i] == '\n') return Error(start, "a string ends at a newline");
    if (quote == '"' && text_[i] == '\\') ++i;
    ++i;
  }
  if (i >= text_.size()) return Error(start, "a string is not closed");
  Token token;
  token.kind = TokenKind::kString;
  token.offset = start;
  token.text = text_.substr(start, i + 1 - start);
  const std::string_view body = text_.substr(start + 1, i - start - 1);
  token.value = quote == '"' ? UnescapeLogQL(body) : std::string(body);
  pos_ = i + 1;
  return token;
}

Token Lexer::LexNumeric(size_t start) {
  size_t i = start;
  while (i < text_.size()) {
    const char c = text_[i];
    if (IsIdentByte(c) && c != ':') {
      ++i;
    } else if (c == '.') {
      ++i;
    } else if (static_cast<unsigned char>(c) == 0xC2 && i + 1 < text_.size() &&
               static_cast<unsigned char>(text_[i + 1]) == 0xB5) {
      i += 2;  // µ, in µs
    } else if ((c == '+' || c == '-') && i > start &&
               (text_[i - 1] == 'e' || text_[i - 1] == 'E') && i + 1 < text_.size() &&
               IsDigit(text_[i + 1]) &&
               !(i - start >= 2 && text_[start] == '0' &&
                 (text_[start + 1] == 'x' || text_[start + 1] == 'X'))) {
      ++i;
    } else {
      break;
    }
  }
  Token token;
  token.kind = TokenKind::kNumeric;
  token.offset = start;
  token.text = text_.substr(start, i - start);
  pos_ = i;
  return token;
}

absl::StatusOr<Token> Lexer::Next() {
  SkipSpaceAndComments();
  Token token;
  token.offset = pos_;
  if (pos_ >= text_.size()) return token;
  const size_t start = pos_;
  const char c = text_[pos_];
  if (c == '"' || c == '`') return LexString(start);
  if (IsDigit(c) || (c == '.' && pos_ + 1 < text_.size() && IsDigit(text_[pos_ + 1]))) {
    return LexNumeric(start);
  }
  if (IsIdentStart(c)) {
    size_t i = start + 1;
    while (i < text_.size() && IsIdentByte(text_[i])) ++i;
    token.kind = TokenKind::kIdent;
    token.text = text_.substr(start, i - start);
    pos_ = i;
    return token;
  }
  for (std::string_view flag : {std::string_view("--strict"), std::string_view("--keep-empty")}) {
    if (text_.substr(pos_, flag.size()) == flag &&
        (pos_ + flag.size() >= text_.size() || !IsIdentByte(text_[pos_ + flag.size()]))) {
      pos_ += flag.size();
      token.kind = TokenKind::kFlag;
      token.text = text_.substr(start, flag.size());
      return token;
    }
  }
  for (const Operator& op : kOperators) {
    if (text_.substr(pos_, op.text.size()) == op.text) {
      pos_ += op.text.size();
      token.kind = op.kind;
      token.text = text_.substr(start, op.text.size());
      return token;
    }
  }
  if (static_cast<unsigned char>(c) >= 0x80) return Error(start, "a character LogQL does not use");
  return Error(start, absl::StrCat("unexpected '", std::string(1, c), "'"));
}

}  // namespace strata::compat::logql
