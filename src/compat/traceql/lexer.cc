#include "compat/traceql/lexer.h"

#include <array>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "common/absl_view.h"

namespace strata::compat::traceql {
namespace {

struct Operator {
  std::string_view text;
  TokenKind kind;
};

// Longest first, so that a prefix never wins over the whole operator.
constexpr std::array<Operator, 35> kOperators = {{
    {"!>>", TokenKind::kStructural}, {"!<<", TokenKind::kStructural},
    {"&>>", TokenKind::kStructural}, {"&<<", TokenKind::kStructural},
    {"!=", TokenKind::kNe},          {"!~", TokenKind::kNotRegex},
    {"!>", TokenKind::kStructural},  {"!<", TokenKind::kStructural},
    {"=~", TokenKind::kRegex},       {"&&", TokenKind::kAnd},
    {"||", TokenKind::kOr},          {">=", TokenKind::kGe},
    {"<=", TokenKind::kLe},          {">>", TokenKind::kStructural},
    {"<<", TokenKind::kStructural},  {"&>", TokenKind::kStructural},
    {"&<", TokenKind::kStructural},  {"&~", TokenKind::kStructural},
    {"=", TokenKind::kEq},           {"!", TokenKind::kNot},
    {">", TokenKind::kGt},           {"<", TokenKind::kLt},
    {"~", TokenKind::kStructural},   {"+", TokenKind::kPlus},
    {"-", TokenKind::kMinus},        {"*", TokenKind::kStar},
    {"/", TokenKind::kSlash},        {"%", TokenKind::kPercent},
    {"^", TokenKind::kCaret},        {"|", TokenKind::kPipe},
    {"{", TokenKind::kLeftBrace},    {"}", TokenKind::kRightBrace},
    {"(", TokenKind::kLeftParen},    {")", TokenKind::kRightParen},
    {",", TokenKind::kComma},
}};

// Duration units, longest first where one is a prefix of another.
constexpr std::array<std::string_view, 7> kUnits = {"ns", "us", "\xC2\xB5s", "ms", "s", "m", "h"};

bool IsWordStart(char c) { return absl::ascii_isalpha(static_cast<unsigned char>(c)) || c == '_'; }
bool IsWordByte(char c) { return absl::ascii_isalnum(static_cast<unsigned char>(c)) || c == '_'; }
bool IsDigit(char c) { return absl::ascii_isdigit(static_cast<unsigned char>(c)); }

bool IsAttributeScope(std::string_view word) {
  return word == "span" || word == "resource" || word == "event" || word == "link" ||
         word == "instrumentation" || word == "parent";
}

bool IsIntrinsicScope(std::string_view word) {
  return word == "span" || word == "trace" || word == "event" || word == "link" ||
         word == "instrumentation";
}

}  // namespace

bool IsAttributeByte(char c) {
  const unsigned char u = static_cast<unsigned char>(c);
  if (u >= 0x80) return true;
  if (u <= ' ' || u == 0x7f) return false;
  static constexpr std::string_view kEnds = "{}()=~!<>&|,+*%^";
  return kEnds.find(c) == std::string_view::npos;
}

absl::Status Lexer::Error(size_t offset, std::string_view what) const {
  return absl::InvalidArgumentError(
      absl::StrCat("TraceQL: at column ", offset + 1, ": ", Absl(what)));
}

void Lexer::SkipSpaceAndComments() {
  while (pos_ < text_.size()) {
    const char c = text_[pos_];
    if (c == ' ' || c == '\t' || c == '\n' || c == '\r') {
      ++pos_;
    } else if (c == '/' && pos_ + 1 < text_.size() && text_[pos_ + 1] == '/') {
      const size_t end = text_.find('\n', pos_);
      pos_ = end == std::string_view::npos ? text_.size() : end + 1;
    } else {
      return;
    }
  }
}

absl::StatusOr<Token> Lexer::Next() {
  SkipSpaceAndComments();
  Token token;
  token.offset = pos_;
  if (pos_ >= text_.size()) {
    token.kind = TokenKind::kEnd;
    return token;
  }
  const size_t start = pos_;
  const char c = text_[pos_];
  if (c == '"' || c == '`') return LexString(start);
  if (IsDigit(c)) return LexNumber(start);
  if (IsWordStart(c)) return LexWord(start);
  if (c == '.') {
    ++pos_;
    absl::StatusOr<std::string> name = LexAttributeName(start);
    if (!name.ok()) return name.status();
    token.kind = TokenKind::kAttribute;
    token.value = *std::move(name);
    token.text = text_.substr(start, pos_ - start);
    return token;
  }
  for (const Operator& op : kOperators) {
    if (text_.substr(pos_, op.text.size()) == op.text) {
      pos_ += op.text.size();
      token.kind = op.kind;
      token.text = text_.substr(start, op.text.size());
      return token;
    }
  }
  if (static_cast<unsigned char>(c) >= 0x80)
    return Error(start, "a character TraceQL does not use");
  return Error(start, absl::StrCat("unexpected '", std::string(1, c), "'"));
}

absl::StatusOr<Token> Lexer::LexString(size_t start) {
  const char quote = text_[start];
  pos_ = start + 1;
  Token token;
  token.kind = TokenKind::kString;
  token.offset = start;
  while (pos_ < text_.size()) {
    const char c = text_[pos_];
    if (c == quote) {
      ++pos_;
      token.text = text_.substr(start, pos_ - start);
      return token;
    }
    if (c == '\\' && quote == '"') {
      if (pos_ + 1 >= text_.size()) break;
      const char escaped = text_[pos_ + 1];
      if (escaped != '"' && escaped != '\\') {
        return Error(pos_, "only \\\" and \\\\ are escapes in a \"string\" (use a `raw` string)");
      }
      token.value.push_back(escaped);
      pos_ += 2;
      continue;
    }
    token.value.push_back(c);
    ++pos_;
  }
  return Error(start, "a string that does not end");
}

absl::StatusOr<Token> Lexer::LexNumber(size_t start) {
  Token token;
  token.offset = start;
  token.kind = TokenKind::kInt;
  while (pos_ < text_.size() && IsDigit(text_[pos_])) ++pos_;
  if (pos_ + 1 < text_.size() && text_[pos_] == '.' && IsDigit(text_[pos_ + 1])) {
    token.kind = TokenKind::kFloat;
    ++pos_;
    while (pos_ < text_.size() && IsDigit(text_[pos_])) ++pos_;
  }
  for (std::string_view unit : kUnits) {
    if (text_.substr(pos_, unit.size()) == unit) {
      pos_ += unit.size();
      token.kind = TokenKind::kDuration;
      break;
    }
  }
  token.text = text_.substr(start, pos_ - start);
  return token;
}

absl::StatusOr<std::string> Lexer::LexAttributeName(size_t dot) {
  if (pos_ < text_.size() && text_[pos_] == '"') {
    absl::StatusOr<Token> quoted = LexString(pos_);
    if (!quoted.ok()) return quoted.status();
    if (quoted->value.empty()) return Error(dot, "an attribute name must not be empty");
    return std::move(quoted->value);
  }
  const size_t begin = pos_;
  if (pos_ >= text_.size() || !IsAttributeByte(text_[pos_]) || IsDigit(text_[pos_]) ||
      text_[pos_] == '-' || text_[pos_] == '"' || text_[pos_] == '.') {
    return Error(dot, "an attribute name must follow '.'");
  }
  while (pos_ < text_.size() && IsAttributeByte(text_[pos_])) ++pos_;
  return std::string(text_.substr(begin, pos_ - begin));
}

absl::StatusOr<Token> Lexer::LexWord(size_t start) {
  while (pos_ < text_.size() && IsWordByte(text_[pos_])) ++pos_;
  const std::string_view word = text_.substr(start, pos_ - start);
  Token token;
  token.offset = start;
  if (pos_ < text_.size() && text_[pos_] == '.' && IsAttributeScope(word)) {
    token.kind = TokenKind::kAttribute;
    token.scope = std::string(word);
    ++pos_;
    if (word == "parent") {
      // parent.<attribute or intrinsic>: kept as written for the parser to
      // refuse; parent.parent is no TraceQL.
      const size_t rest = pos_;
      if (pos_ < text_.size() && IsWordStart(text_[pos_])) {
        absl::StatusOr<Token> inner = LexWord(pos_);
        if (!inner.ok()) return inner.status();
        if (inner->kind == TokenKind::kAttribute && inner->scope == "parent") {
          return Error(start, "parent.parent is not TraceQL");
        }
        if (inner->kind == TokenKind::kScoped) return Error(start, "parent. before span:");
      } else {
        absl::StatusOr<std::string> name = LexAttributeName(start);
        if (!name.ok()) return name.status();
      }
      token.value = std::string(text_.substr(rest, pos_ - rest));
    } else {
      absl::StatusOr<std::string> name = LexAttributeName(start);
      if (!name.ok()) return name.status();
      token.value = *std::move(name);
    }
    token.text = text_.substr(start, pos_ - start);
    return token;
  }
  if (pos_ < text_.size() && text_[pos_] == ':' && IsIntrinsicScope(word)) {
    ++pos_;
    const size_t name_start = pos_;
    while (pos_ < text_.size() && absl::ascii_isalpha(static_cast<unsigned char>(text_[pos_]))) {
      ++pos_;
    }
    if (pos_ == name_start)
      return Error(start, absl::StrCat("an intrinsic must follow ", Absl(word), ":"));
    token.kind = TokenKind::kScoped;
    token.scope = std::string(word);
    token.value = std::string(text_.substr(name_start, pos_ - name_start));
    token.text = text_.substr(start, pos_ - start);
    return token;
  }
  token.kind = TokenKind::kIdent;
  token.text = word;
  return token;
}

}  // namespace strata::compat::traceql
