#include "compat/logql/log_parsers.h"

#include <string>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "compat/logql/lexer.h"
#include "compat/logql/pipeline.h"
#include "simdjson.h"

namespace strata::compat::logql {
namespace {

// Most members one json stage takes from a line (a bound on labels per
// line whatever the line holds).
constexpr size_t kMaxJsonLabels = 1000;
constexpr size_t kMaxJsonDepth = 64;

std::string ScalarText(simdjson::dom::element value) {
  switch (value.type()) {
    case simdjson::dom::element_type::STRING:
      return std::string(std::string_view(value.get_string().value_unsafe()));
    case simdjson::dom::element_type::NULL_VALUE:
      return "";
    default:
      return simdjson::minify(value);
  }
}

void Flatten(simdjson::dom::object object, const std::string& prefix, size_t depth,
             LabelPairs* out) {
  if (depth > kMaxJsonDepth) return;
  for (auto field : object) {
    if (out->size() >= kMaxJsonLabels) return;
    const std::string name = prefix.empty()
                                 ? SanitizeLabelName(field.key)
                                 : absl::StrCat(prefix, "_", SanitizeLabelName(field.key));
    switch (field.value.type()) {
      case simdjson::dom::element_type::OBJECT:
        Flatten(field.value.get_object().value_unsafe(), name, depth + 1, out);
        break;
      case simdjson::dom::element_type::ARRAY:
        break;
      default:
        out->emplace_back(name, ScalarText(field.value));
    }
  }
}

bool ParseObject(std::string_view line, simdjson::dom::parser* parser,
                 simdjson::dom::object* object, std::string* error,
                 simdjson::dom::element* root_out = nullptr) {
  simdjson::dom::element root;
  if (parser->parse(line.data(), line.size()).get(root) != simdjson::SUCCESS) {
    *error = "the line is not valid JSON";
    return false;
  }
  if (root_out != nullptr) *root_out = root;
  if (root.get_object().get(*object) != simdjson::SUCCESS) {
    *error = "the line is not a JSON object";
    return false;
  }
  return true;
}

}  // namespace

absl::StatusOr<JsonPath> JsonPath::Parse(std::string_view text) {
  JsonPath path;
  size_t i = 0;
  auto bad = [&](std::string_view why) {
    return absl::InvalidArgumentError(
        absl::StrCat("LogQL: json expression ", std::string(text), ": ", std::string(why)));
  };
  if (text.empty()) return bad("empty");
  while (i < text.size()) {
    if (text[i] == '.') {
      ++i;
      continue;
    }
    if (text[i] == '[') {
      const size_t close = text.find(']', i);
      if (close == std::string_view::npos) return bad("an unclosed [");
      std::string_view inside = text.substr(i + 1, close - i - 1);
      Step step;
      if (inside.size() >= 2 && (inside.front() == '"' || inside.front() == '\'') &&
          inside.back() == inside.front()) {
        step.key = UnescapeLogQL(inside.substr(1, inside.size() - 2));
      } else {
        uint64_t position = 0;
        if (!absl::SimpleAtoi(std::string(inside), &position)) return bad("a bad index");
        step.index = true;
        step.position = position;
      }
      path.steps_.push_back(std::move(step));
      i = close + 1;
      continue;
    }
    size_t end = i;
    while (end < text.size() && text[end] != '.' && text[end] != '[') ++end;
    Step step;
    step.key = std::string(text.substr(i, end - i));
    path.steps_.push_back(std::move(step));
    i = end;
  }
  if (path.steps_.empty()) return bad("no path");
  return path;
}

absl::StatusOr<Pattern> Pattern::Compile(std::string_view text, bool named) {
  Pattern pattern;
  size_t i = 0;
  bool has_named = false;
  while (i < text.size()) {
    if (text[i] == '<') {
      const size_t close = text.find('>', i);
      if (close != std::string_view::npos) {
        const std::string_view name = text.substr(i + 1, close - i - 1);
        bool word = !name.empty();
        for (char c : name) {
          if (!absl::ascii_isalnum(static_cast<unsigned char>(c)) && c != '_') word = false;
        }
        if (word) {
          if (!pattern.parts_.empty() && pattern.parts_.back().capture) {
            return absl::InvalidArgumentError("LogQL: a pattern cannot have two captures in a row");
          }
          pattern.parts_.push_back(Part{true, std::string(name)});
          if (name != "_") has_named = true;
          i = close + 1;
          continue;
        }
      }
    }
    if (pattern.parts_.empty() || pattern.parts_.back().capture) pattern.parts_.push_back(Part{});
    pattern.parts_.back().text.push_back(text[i]);
    ++i;
  }
  if (named && !has_named) {
    return absl::InvalidArgumentError("LogQL: a pattern needs at least one named capture");
  }
  if (pattern.parts_.empty()) return absl::InvalidArgumentError("LogQL: an empty pattern");
  return pattern;
}

bool Pattern::Match(std::string_view line, LabelPairs* captures) const {
  size_t pos = 0;
  for (size_t i = 0; i < parts_.size(); ++i) {
    const Part& part = parts_[i];
    if (!part.capture) {
      if (line.substr(pos, part.text.size()) != part.text) return false;
      pos += part.text.size();
      continue;
    }
    size_t end = line.size();
    if (i + 1 < parts_.size()) {
      end = line.find(parts_[i + 1].text, pos);
      if (end == std::string_view::npos) return false;
    }
    if (captures != nullptr && part.text != "_") {
      captures->emplace_back(part.text, std::string(line.substr(pos, end - pos)));
    }
    pos = end;
  }
  return true;
}

bool ParseJsonLabels(std::string_view line, const std::vector<JsonPath>& paths,
                     const std::vector<Extraction>& extractions, LabelPairs* out,
                     std::string* error) {
  simdjson::dom::parser parser;
  simdjson::dom::object object;
  simdjson::dom::element root;
  if (!ParseObject(line, &parser, &object, error, &root)) return false;
  if (paths.empty()) {
    Flatten(object, "", 0, out);
    return true;
  }
  for (size_t p = 0; p < paths.size(); ++p) {
    simdjson::dom::element current = root;
    bool found = true;
    for (const JsonPath::Step& step : paths[p].steps()) {
      if (step.index) {
        simdjson::dom::array array;
        if (current.get_array().get(array) != simdjson::SUCCESS ||
            array.at(step.position).get(current) != simdjson::SUCCESS) {
          found = false;
          break;
        }
      } else {
        simdjson::dom::object inner;
        if (current.get_object().get(inner) != simdjson::SUCCESS ||
            inner.at_key(step.key).get(current) != simdjson::SUCCESS) {
          found = false;
          break;
        }
      }
    }
    out->emplace_back(extractions[p].name, found ? ScalarText(current) : "");
  }
  return true;
}

bool ParseUnpack(std::string_view line, LabelPairs* out, std::optional<std::string>* entry,
                 std::string* error) {
  simdjson::dom::parser parser;
  simdjson::dom::object object;
  if (!ParseObject(line, &parser, &object, error)) return false;
  for (auto field : object) {
    std::string_view value;
    if (field.value.get_string().get(value) != simdjson::SUCCESS) continue;
    if (field.key == "_entry") {
      *entry = std::string(value);
    } else if (out->size() < kMaxJsonLabels) {
      out->emplace_back(SanitizeLabelName(field.key), std::string(value));
    }
  }
  return true;
}

bool ParseLogfmtLabels(std::string_view line, bool strict, bool keep_empty, LabelPairs* out,
                       std::string* error) {
  size_t i = 0;
  while (i < line.size()) {
    while (i < line.size() && line[i] == ' ') ++i;
    if (i >= line.size()) break;
    const size_t key_start = i;
    while (i < line.size() && line[i] != '=' && line[i] != ' ' && line[i] != '"') ++i;
    const std::string_view key = line.substr(key_start, i - key_start);
    std::string value;
    bool has_value = false;
    if (i < line.size() && line[i] == '=') {
      ++i;
      has_value = true;
      if (i < line.size() && line[i] == '"') {
        ++i;
        std::string raw;
        bool closed = false;
        while (i < line.size()) {
          if (line[i] == '\\' && i + 1 < line.size()) {
            raw.push_back(line[i]);
            raw.push_back(line[i + 1]);
            i += 2;
            continue;
          }
          if (line[i] == '"') {
            closed = true;
            ++i;
            break;
          }
          raw.push_back(line[i++]);
        }
        if (!closed) {
          *error = absl::StrCat("logfmt syntax error at pos ", i, ": unterminated quoted value");
          return false;
        }
        value = UnescapeLogQL(raw);
      } else {
        const size_t value_start = i;
        while (i < line.size() && line[i] != ' ') ++i;
        value = std::string(line.substr(value_start, i - value_start));
      }
    } else if (i < line.size() && line[i] == '"') {
      if (strict) {
        *error = absl::StrCat("logfmt syntax error at pos ", i + 1, ": unexpected '\"'");
        return false;
      }
      ++i;
      continue;
    }
    if (key.empty()) {
      if (strict) {
        *error = absl::StrCat("logfmt syntax error at pos ", key_start + 1, ": unexpected '='");
        return false;
      }
      while (i < line.size() && line[i] != ' ') ++i;
      continue;
    }
    if (!has_value && !keep_empty) continue;
    if (value.empty() && !keep_empty && has_value) continue;
    out->emplace_back(SanitizeLabelName(key), std::move(value));
  }
  return true;
}

}  // namespace strata::compat::logql
