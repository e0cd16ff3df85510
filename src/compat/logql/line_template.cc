#include "compat/logql/line_template.h"

#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "compat/logql/lexer.h"
#include "compat/logql/pipeline.h"

namespace strata::compat::logql {
namespace {

absl::string_view Absl(std::string_view text) { return {text.data(), text.size()}; }

bool KnownFunction(std::string_view name) {
  return name == "upper" || name == "ToUpper" || name == "lower" || name == "ToLower" ||
         name == "title" || name == "Title" || name == "trimSpace" || name == "TrimSpace";
}

std::string Apply(std::string_view function, std::string value) {
  if (function == "upper" || function == "ToUpper") return absl::AsciiStrToUpper(value);
  if (function == "lower" || function == "ToLower") return absl::AsciiStrToLower(value);
  if (function == "trimSpace" || function == "TrimSpace") {
    return std::string(absl::StripAsciiWhitespace(value));
  }
  // title: the first letter of each word in upper case.
  bool start = true;
  for (char& c : value) {
    if (absl::ascii_isspace(static_cast<unsigned char>(c))) {
      start = true;
    } else if (start) {
      c = absl::ascii_toupper(static_cast<unsigned char>(c));
      start = false;
    }
  }
  return value;
}

}  // namespace

absl::StatusOr<LineTemplate> LineTemplate::Parse(std::string_view text) {
  LineTemplate result;
  size_t i = 0;
  while (i < text.size()) {
    const size_t open = text.find("{{", i);
    std::string literal(
        text.substr(i, open == std::string_view::npos ? text.size() - i : open - i));
    if (open == std::string_view::npos) {
      result.parts_.push_back(Action{Action::Source::kLiteral, std::move(literal), {}});
      break;
    }
    const size_t close = text.find("}}", open + 2);
    if (close == std::string_view::npos) {
      return absl::InvalidArgumentError("LogQL: template: an unclosed {{ action");
    }
    std::string_view inside = text.substr(open + 2, close - open - 2);
    if (inside.starts_with("-")) {
      inside.remove_prefix(1);
      literal = std::string(absl::StripTrailingAsciiWhitespace(literal));
    }
    bool trim_after = false;
    if (inside.ends_with("-")) {
      inside.remove_suffix(1);
      trim_after = true;
    }
    result.parts_.push_back(Action{Action::Source::kLiteral, std::move(literal), {}});
    Action action;
    std::vector<std::string> commands = absl::StrSplit(Absl(inside), '|', absl::SkipWhitespace());
    if (commands.empty()) return absl::InvalidArgumentError("LogQL: template: an empty action");
    for (size_t c = 0; c < commands.size(); ++c) {
      std::vector<std::string> words = absl::StrSplit(commands[c], ' ', absl::SkipWhitespace());
      if (words.empty()) return absl::InvalidArgumentError("LogQL: template: an empty command");
      if (c == 0) {
        std::string operand = words.back();
        if (words.size() == 2) {
          if (!KnownFunction(words[0])) {
            return absl::UnimplementedError(
                absl::StrCat("LogQL: template function ", words[0], " is not supported by strata"));
          }
          action.functions.push_back(words[0]);
        } else if (words.size() > 2) {
          return absl::UnimplementedError(absl::StrCat(
              "LogQL: template action {{", std::string(inside), "}} is not supported by strata"));
        }
        if (operand.size() >= 2 && operand.front() == '.') {
          action.source = Action::Source::kLabel;
          action.text = operand.substr(1);
        } else if (operand == "__line__") {
          action.source = Action::Source::kLine;
        } else if (operand.size() >= 2 && (operand.front() == '"' || operand.front() == '`') &&
                   operand.back() == operand.front()) {
          action.source = Action::Source::kLiteral;
          action.text = operand.front() == '"'
                            ? UnescapeLogQL(operand.substr(1, operand.size() - 2))
                            : operand.substr(1, operand.size() - 2);
        } else {
          return absl::UnimplementedError(absl::StrCat(
              "LogQL: template action {{", std::string(inside), "}} is not supported by strata"));
        }
        // A function applied to the operand runs after it.
        std::reverse(action.functions.begin(), action.functions.end());
      } else {
        if (words.size() != 1 || !KnownFunction(words[0])) {
          return absl::UnimplementedError(absl::StrCat("LogQL: template function ", commands[c],
                                                       " is not supported by strata"));
        }
        action.functions.push_back(words[0]);
      }
    }
    result.parts_.push_back(std::move(action));
    i = close + 2;
    if (trim_after) {
      while (i < text.size() && absl::ascii_isspace(static_cast<unsigned char>(text[i]))) ++i;
    }
  }
  return result;
}

std::string LineTemplate::Render(const LogLine& line) const {
  std::string out;
  for (const Action& part : parts_) {
    std::string value;
    switch (part.source) {
      case Action::Source::kLiteral:
        value = part.text;
        break;
      case Action::Source::kLine:
        value = line.line;
        break;
      case Action::Source::kLabel: {
        const std::string* found = line.Find(part.text);
        if (found != nullptr) value = *found;
        break;
      }
    }
    for (const std::string& function : part.functions) value = Apply(function, std::move(value));
    absl::StrAppend(&out, value);
  }
  return out;
}

}  // namespace strata::compat::logql
