#include "compat/promql/lexer.h"

#include <cstdint>

#include "absl/strings/str_cat.h"
#include "common/utf8.h"

namespace strata::compat::promql {
namespace {

bool IsDigit(char c) { return c >= '0' && c <= '9'; }
bool IsAlpha(char c) { return c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }
bool IsAlphaNumeric(char c) { return IsAlpha(c) || IsDigit(c); }
bool IsHexDigit(char c) { return IsDigit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'); }
int HexValue(char c) {
  if (IsDigit(c)) return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  return c - 'A' + 10;
}

// The length of the well-formed UTF-8 sequence at s[i], or 0.
size_t Utf8Length(absl::string_view s, size_t i) {
  const auto b0 = static_cast<unsigned char>(s[i]);
  if (b0 < 0x80) return 1;
  size_t n = 0;
  uint32_t rune = 0;
  uint32_t min = 0;
  if ((b0 & 0xE0) == 0xC0) {
    n = 2, rune = b0 & 0x1F, min = 0x80;
  } else if ((b0 & 0xF0) == 0xE0) {
    n = 3, rune = b0 & 0x0F, min = 0x800;
  } else if ((b0 & 0xF8) == 0xF0) {
    n = 4, rune = b0 & 0x07, min = 0x10000;
  } else {
    return 0;
  }
  if (i + n > s.size()) return 0;
  for (size_t k = 1; k < n; ++k) {
    const auto b = static_cast<unsigned char>(s[i + k]);
    if ((b & 0xC0) != 0x80) return 0;
    rune = (rune << 6) | (b & 0x3F);
  }
  if (rune < min || rune > 0x10FFFF || (rune >= 0xD800 && rune < 0xE000)) return 0;
  return n;
}

class Lexer {
 public:
  explicit Lexer(absl::string_view query) : q_(query) {}

  absl::StatusOr<std::vector<Token>> Run() {
    std::vector<Token> tokens;
    while (true) {
      SkipSpaceAndComments();
      if (pos_ >= q_.size()) {
        tokens.push_back(Token{TokenKind::kEnd, "", q_.size()});
        return tokens;
      }
      absl::StatusOr<Token> token = Next();
      if (!token.ok()) return token.status();
      tokens.push_back(*std::move(token));
    }
  }

 private:
  absl::Status Error(size_t at, absl::string_view message) const {
    return absl::InvalidArgumentError(
        absl::StrCat(PositionText(q_, at), ": parse error: ", message));
  }

  void SkipSpaceAndComments() {
    while (pos_ < q_.size()) {
      const char c = q_[pos_];
      if (c == ' ' || c == '\t' || c == '\n' || c == '\r') {
        ++pos_;
      } else if (c == '#') {
        while (pos_ < q_.size() && q_[pos_] != '\n') ++pos_;
      } else {
        return;
      }
    }
  }

  char Peek(size_t ahead = 0) const { return pos_ + ahead < q_.size() ? q_[pos_ + ahead] : '\0'; }

  Token Make(TokenKind kind, size_t start, size_t length) {
    pos_ = start + length;
    return Token{kind, std::string(q_.substr(start, length)), start};
  }

  absl::StatusOr<Token> Next() {
    const size_t start = pos_;
    const char c = q_[pos_];
    switch (c) {
      case '(':
        return Make(TokenKind::kLeftParen, start, 1);
      case ')':
        return Make(TokenKind::kRightParen, start, 1);
      case '{':
        if (brace_open_) return Error(start, "unexpected left brace '{'");
        brace_open_ = true;
        return Make(TokenKind::kLeftBrace, start, 1);
      case '}':
        brace_open_ = false;
        return Make(TokenKind::kRightBrace, start, 1);
      case '[':
        if (bracket_open_) return Error(start, "unexpected left bracket '['");
        bracket_open_ = true;
        return Make(TokenKind::kLeftBracket, start, 1);
      case ']':
        bracket_open_ = false;
        return Make(TokenKind::kRightBracket, start, 1);
      case ',':
        return Make(TokenKind::kComma, start, 1);
      case '@':
        return Make(TokenKind::kAt, start, 1);
      case '+':
        return Make(TokenKind::kPlus, start, 1);
      case '-':
        return Make(TokenKind::kMinus, start, 1);
      case '*':
        return Make(TokenKind::kStar, start, 1);
      case '/':
        return Make(TokenKind::kSlash, start, 1);
      case '%':
        return Make(TokenKind::kPercent, start, 1);
      case '^':
        return Make(TokenKind::kCaret, start, 1);
      case '=':
        if (Peek(1) == '=') return Make(TokenKind::kEqEq, start, 2);
        if (Peek(1) == '~') return Make(TokenKind::kRegex, start, 2);
        return Make(TokenKind::kAssign, start, 1);
      case '!':
        if (Peek(1) == '=') return Make(TokenKind::kNe, start, 2);
        if (Peek(1) == '~') return Make(TokenKind::kNotRegex, start, 2);
        return Error(start, "unexpected character after '!'");
      case '<':
        if (Peek(1) == '=') return Make(TokenKind::kLe, start, 2);
        return Make(TokenKind::kLt, start, 1);
      case '>':
        if (Peek(1) == '=') return Make(TokenKind::kGe, start, 2);
        return Make(TokenKind::kGt, start, 1);
      case '"':
      case '\'':
        return QuotedString(c);
      case '`':
        return RawString();
      default:
        break;
    }
    if (c == ':') {
      if (bracket_open_) return Make(TokenKind::kColon, start, 1);
      if (brace_open_) return Error(start, "unexpected character inside braces: ':'");
      return Identifier();
    }
    if (IsDigit(c) || (c == '.' && IsDigit(Peek(1)))) return NumberOrDuration();
    if (IsAlpha(c)) return Identifier();
    return Error(start, absl::StrCat("unexpected character: '", std::string(1, c), "'"));
  }

  absl::StatusOr<Token> Identifier() {
    const size_t start = pos_;
    while (pos_ < q_.size() &&
           (IsAlphaNumeric(q_[pos_]) || (q_[pos_] == ':' && !brace_open_ && !bracket_open_))) {
      ++pos_;
    }
    if (bracket_open_) {
      return Error(start, "unexpected identifier inside brackets");
    }
    return Token{TokenKind::kIdentifier, std::string(q_.substr(start, pos_ - start)), start};
  }

  bool Accept(absl::string_view set) {
    if (pos_ < q_.size() && set.find(q_[pos_]) != absl::string_view::npos) {
      ++pos_;
      return true;
    }
    return false;
  }
  void AcceptRun(absl::string_view set) {
    while (Accept(set)) {
    }
  }

  // Prometheus's scanNumber: digits (hex after 0x), a fraction, an
  // exponent, and then no letter or digit.
  bool ScanNumber() {
    absl::string_view digits = "0123456789";
    if (Peek() == '0' && (Peek(1) == 'x' || Peek(1) == 'X')) {
      pos_ += 2;
      digits = "0123456789abcdefABCDEF";
    } else if (Accept("0")) {
      // A lone 0 continues as a decimal number.
    }
    AcceptRun(digits);
    if (Accept(".")) AcceptRun(digits);
    if (Accept("eE")) {
      Accept("+-");
      AcceptRun("0123456789");
    }
    return !IsAlphaNumeric(Peek());
  }

  bool AcceptRemainingDuration() {
    if (!Accept("smhdwy")) return false;
    Accept("s");
    while (Accept("0123456789")) {
      AcceptRun("0123456789");
      if (!Accept("smhdw")) return false;
      Accept("s");
    }
    return !IsAlphaNumeric(Peek());
  }

  absl::StatusOr<Token> NumberOrDuration() {
    const size_t start = pos_;
    if (ScanNumber()) {
      return Token{TokenKind::kNumber, std::string(q_.substr(start, pos_ - start)), start};
    }
    if (AcceptRemainingDuration()) {
      return Token{TokenKind::kDuration, std::string(q_.substr(start, pos_ - start)), start};
    }
    return Error(start, absl::StrCat("bad number or duration syntax: \"",
                                     q_.substr(start, pos_ - start), "\""));
  }

  absl::StatusOr<Token> QuotedString(char quote) {
    const size_t start = pos_;
    ++pos_;
    std::string value;
    while (true) {
      if (pos_ >= q_.size() || q_[pos_] == '\n') {
        return Error(start, "unterminated quoted string");
      }
      const char c = q_[pos_];
      if (c == quote) {
        ++pos_;
        return Token{TokenKind::kString, std::move(value), start};
      }
      if (c == '\\') {
        absl::Status escaped = Escape(quote, &value);
        if (!escaped.ok()) return escaped;
        continue;
      }
      const size_t n = Utf8Length(q_, pos_);
      if (n == 0) return Error(pos_, "invalid UTF-8 rune");
      value.append(q_.data() + pos_, n);
      pos_ += n;
    }
  }

  absl::Status Escape(char quote, std::string* value) {
    const size_t at = pos_;
    ++pos_;  // the backslash
    if (pos_ >= q_.size()) return Error(at, "escape sequence not terminated");
    const char c = q_[pos_++];
    switch (c) {
      case 'a':
        value->push_back('\a');
        return absl::OkStatus();
      case 'b':
        value->push_back('\b');
        return absl::OkStatus();
      case 'f':
        value->push_back('\f');
        return absl::OkStatus();
      case 'n':
        value->push_back('\n');
        return absl::OkStatus();
      case 'r':
        value->push_back('\r');
        return absl::OkStatus();
      case 't':
        value->push_back('\t');
        return absl::OkStatus();
      case 'v':
        value->push_back('\v');
        return absl::OkStatus();
      case '\\':
        value->push_back('\\');
        return absl::OkStatus();
      default:
        break;
    }
    if (c == quote) {
      value->push_back(c);
      return absl::OkStatus();
    }
    int digits = 0;
    int base = 16;
    uint32_t max = 0x10FFFF;
    bool is_byte = false;
    if (c >= '0' && c <= '7') {
      --pos_;
      digits = 3, base = 8, max = 255, is_byte = true;
    } else if (c == 'x') {
      digits = 2, max = 255, is_byte = true;
    } else if (c == 'u') {
      digits = 4;
    } else if (c == 'U') {
      digits = 8;
    } else {
      return Error(at, "unknown escape sequence");
    }
    uint32_t x = 0;
    for (int i = 0; i < digits; ++i) {
      if (pos_ >= q_.size()) return Error(at, "escape sequence not terminated");
      const char d = q_[pos_];
      const bool ok = base == 8 ? (d >= '0' && d <= '7') : IsHexDigit(d);
      if (!ok) return Error(at, "illegal character in escape sequence");
      x = x * base + static_cast<uint32_t>(HexValue(d));
      ++pos_;
    }
    if (x > max || (x >= 0xD800 && x < 0xE000)) {
      return Error(at, "escape sequence is an invalid Unicode code point");
    }
    if (is_byte) {
      value->push_back(static_cast<char>(x));
    } else {
      AppendUtf8(x, value);
    }
    return absl::OkStatus();
  }

  absl::StatusOr<Token> RawString() {
    const size_t start = pos_;
    ++pos_;
    std::string value;
    while (true) {
      if (pos_ >= q_.size()) return Error(start, "unterminated raw string");
      if (q_[pos_] == '`') {
        ++pos_;
        return Token{TokenKind::kString, std::move(value), start};
      }
      const size_t n = Utf8Length(q_, pos_);
      if (n == 0) return Error(pos_, "invalid UTF-8 rune");
      value.append(q_.data() + pos_, n);
      pos_ += n;
    }
  }

  absl::string_view q_;
  size_t pos_ = 0;
  bool brace_open_ = false;
  bool bracket_open_ = false;
};

}  // namespace

absl::StatusOr<std::vector<Token>> Lex(absl::string_view query) { return Lexer(query).Run(); }

std::string PositionText(absl::string_view query, size_t pos) {
  size_t line = 1;
  size_t column = 1;
  for (size_t i = 0; i < pos && i < query.size(); ++i) {
    if (query[i] == '\n') {
      ++line;
      column = 1;
    } else {
      ++column;
    }
  }
  return absl::StrCat(line, ":", column);
}

}  // namespace strata::compat::promql
