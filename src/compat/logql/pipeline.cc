#include "compat/logql/pipeline.h"

#include <cmath>
#include <cstdlib>
#include <optional>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "common/status_macros.h"
#include "compat/logql/line_template.h"
#include "compat/logql/log_parsers.h"
#include "re2/re2.h"

namespace strata::compat::logql {
namespace {

absl::string_view Absl(std::string_view text) { return {text.data(), text.size()}; }

std::unique_ptr<RE2> Compile(std::string_view pattern) {
  RE2::Options options;
  options.set_log_errors(false);
  return std::make_unique<RE2>(re2::StringPiece(pattern.data(), pattern.size()), options);
}

bool Matches(const Matcher& matcher, const RE2* re, const std::string& value) {
  switch (matcher.op) {
    case MatchOp::kEq:
      return value == matcher.value;
    case MatchOp::kNe:
      return value != matcher.value;
    case MatchOp::kRegex:
      return RE2::FullMatch(value, *re);
    case MatchOp::kNotRegex:
      return !RE2::FullMatch(value, *re);
  }
  return false;
}

void Erase(LogLine* line, const std::string& name) {
  line->parsed.erase(name);
  line->metadata.erase(name);
  line->stream.erase(name);
}

// Sets `name` where it already lives (stream, metadata), else as parsed.
void Assign(LogLine* line, const std::string& name, std::string value) {
  if (auto it = line->stream.find(name); it != line->stream.end()) {
    it->second = std::move(value);
  } else if (auto it = line->metadata.find(name); it != line->metadata.end()) {
    it->second = std::move(value);
  } else {
    line->parsed[name] = std::move(value);
  }
}

void SetError(LogLine* line, std::string_view error, std::string_view details) {
  if (line->parsed.contains("__error__")) return;  // the first error stays
  line->parsed["__error__"] = std::string(error);
  line->parsed["__error_details__"] = std::string(details);
}

std::string Decolorize(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '\x1b' && i + 1 < text.size() && text[i + 1] == '[') {
      size_t j = i + 2;
      while (j < text.size() &&
             (absl::ascii_isdigit(static_cast<unsigned char>(text[j])) || text[j] == ';')) {
        ++j;
      }
      if (j < text.size() && absl::ascii_isalpha(static_cast<unsigned char>(text[j]))) {
        i = j;
        continue;
      }
    }
    out.push_back(text[i]);
  }
  return out;
}

std::optional<double> ParseFullDouble(std::string_view text) {
  const std::string copy(absl::StripAsciiWhitespace(Absl(text)));
  if (copy.empty()) return std::nullopt;
  char* end = nullptr;
  const double value = std::strtod(copy.c_str(), &end);
  if (end != copy.c_str() + copy.size()) return std::nullopt;
  return value;
}

bool Compare(CompareOp op, double a, double b) {
  switch (op) {
    case CompareOp::kEq:
      return a == b;
    case CompareOp::kNe:
      return a != b;
    case CompareOp::kGt:
      return a > b;
    case CompareOp::kGe:
      return a >= b;
    case CompareOp::kLt:
      return a < b;
    case CompareOp::kLe:
      return a <= b;
  }
  return false;
}

// A label filter with its regular expressions compiled.
struct CompiledFilter {
  const LabelFilter* filter = nullptr;
  std::unique_ptr<RE2> re;
  std::unique_ptr<CompiledFilter> lhs;
  std::unique_ptr<CompiledFilter> rhs;
};

absl::StatusOr<std::unique_ptr<CompiledFilter>> CompileFilter(const LabelFilter& filter) {
  auto out = std::make_unique<CompiledFilter>();
  out->filter = &filter;
  switch (filter.kind) {
    case LabelFilter::Kind::kAnd:
    case LabelFilter::Kind::kOr: {
      STRATA_ASSIGN_OR_RETURN(out->lhs, CompileFilter(*filter.lhs));
      STRATA_ASSIGN_OR_RETURN(out->rhs, CompileFilter(*filter.rhs));
      break;
    }
    case LabelFilter::Kind::kIp:
      return absl::UnimplementedError("LogQL: ip() label filters are not supported by strata");
    case LabelFilter::Kind::kString:
      if (filter.matcher.op == MatchOp::kRegex || filter.matcher.op == MatchOp::kNotRegex) {
        out->re = Compile(filter.matcher.value);
        if (!out->re->ok()) {
          return absl::InvalidArgumentError(
              absl::StrCat("LogQL: invalid regular expression ", filter.matcher.value));
        }
      }
      break;
    default:
      break;
  }
  return out;
}

bool RunFilter(const CompiledFilter& compiled, LogLine* line) {
  const LabelFilter& filter = *compiled.filter;
  switch (filter.kind) {
    case LabelFilter::Kind::kAnd:
      return RunFilter(*compiled.lhs, line) && RunFilter(*compiled.rhs, line);
    case LabelFilter::Kind::kOr:
      return RunFilter(*compiled.lhs, line) || RunFilter(*compiled.rhs, line);
    case LabelFilter::Kind::kString: {
      const std::string* value = line->Find(filter.matcher.name);
      static const std::string kEmpty;
      return Matches(filter.matcher, compiled.re.get(), value == nullptr ? kEmpty : *value);
    }
    case LabelFilter::Kind::kNumber:
    case LabelFilter::Kind::kDuration:
    case LabelFilter::Kind::kBytes: {
      const std::string* value = line->Find(filter.name);
      if (value == nullptr) return false;
      std::optional<double> number;
      if (filter.kind == LabelFilter::Kind::kNumber) number = ParseFullDouble(*value);
      if (filter.kind == LabelFilter::Kind::kDuration) number = ParseGoDurationSeconds(*value);
      if (filter.kind == LabelFilter::Kind::kBytes) number = ParseHumanBytes(*value);
      if (!number.has_value()) {
        SetError(line, "LabelFilterErr",
                 absl::StrCat("cannot convert ", *value, " for label filter on ", filter.name));
        return true;
      }
      return Compare(filter.op, *number, filter.value);
    }
    case LabelFilter::Kind::kIp:
      return false;
  }
  return false;
}

}  // namespace

const std::string* LogLine::Find(std::string_view name) const {
  const std::string key(name);
  if (auto it = parsed.find(key); it != parsed.end()) return &it->second;
  if (auto it = metadata.find(key); it != metadata.end()) return &it->second;
  if (auto it = stream.find(key); it != stream.end()) return &it->second;
  return nullptr;
}

struct LogPipeline::Step {
  const Stage* stage = nullptr;
  std::vector<std::unique_ptr<RE2>> regexes;  // line filter values, regexp, drop/keep matchers
  std::vector<Pattern> patterns;              // |> !> values, pattern
  std::unique_ptr<CompiledFilter> filter;
  std::vector<LineTemplate> templates;  // line_format (one), label_format (one per template)
  std::vector<JsonPath> paths;          // json parameters
};

namespace {

// Adds a parsed label, renamed <name>_extracted when the stream or the
// metadata has the name.
void AddParsed(LogLine* line, std::string name, std::string value) {
  if (line->stream.contains(name) || line->metadata.contains(name)) {
    absl::StrAppend(&name, "_extracted");
  }
  line->parsed[std::move(name)] = std::move(value);
}

bool RunLineFilter(const LogPipeline::Step& step, LogLine* line);

}  // namespace

absl::StatusOr<LogPipeline> LogPipeline::Compile(const std::vector<Stage>& stages, size_t first) {
  LogPipeline pipeline;
  for (size_t i = first; i < stages.size(); ++i) {
    const Stage& stage = stages[i];
    auto step = std::make_shared<Step>();
    step->stage = &stage;
    switch (stage.kind) {
      case Stage::Kind::kLineFilter:
        if (stage.line_filter.ip) {
          return absl::UnimplementedError("LogQL: ip() line filters are not supported by strata");
        }
        for (const std::string& value : stage.line_filter.values) {
          if (stage.line_filter.op == LineFilterOp::kRegex ||
              stage.line_filter.op == LineFilterOp::kNotRegex) {
            step->regexes.push_back(logql::Compile(value));
            if (!step->regexes.back()->ok()) {
              return absl::InvalidArgumentError(
                  absl::StrCat("LogQL: invalid regular expression ", value));
            }
          } else if (stage.line_filter.op == LineFilterOp::kPattern ||
                     stage.line_filter.op == LineFilterOp::kNotPattern) {
            STRATA_ASSIGN_OR_RETURN(Pattern pattern, Pattern::Compile(value, false));
            step->patterns.push_back(std::move(pattern));
          }
        }
        break;
      case Stage::Kind::kRegexp: {
        step->regexes.push_back(logql::Compile(stage.text));
        const RE2& re = *step->regexes.back();
        if (!re.ok()) {
          return absl::InvalidArgumentError(
              absl::StrCat("LogQL: invalid regular expression ", stage.text));
        }
        if (re.NamedCapturingGroups().empty()) {
          return absl::InvalidArgumentError(
              "LogQL: at least one named capture must be supplied to regexp");
        }
        break;
      }
      case Stage::Kind::kPattern: {
        STRATA_ASSIGN_OR_RETURN(Pattern pattern, Pattern::Compile(stage.text, true));
        step->patterns.push_back(std::move(pattern));
        break;
      }
      case Stage::Kind::kJson:
        for (const Extraction& extraction : stage.extractions) {
          STRATA_ASSIGN_OR_RETURN(JsonPath path,
                                  JsonPath::Parse(extraction.expression.value_or(extraction.name)));
          step->paths.push_back(std::move(path));
        }
        break;
      case Stage::Kind::kLabelFilter: {
        STRATA_ASSIGN_OR_RETURN(step->filter, CompileFilter(*stage.filter));
        break;
      }
      case Stage::Kind::kLineFormat: {
        STRATA_ASSIGN_OR_RETURN(LineTemplate t, LineTemplate::Parse(stage.text));
        step->templates.push_back(std::move(t));
        break;
      }
      case Stage::Kind::kLabelFormat:
        for (const LabelFormat& format : stage.formats) {
          if (format.rename) continue;
          STRATA_ASSIGN_OR_RETURN(LineTemplate t, LineTemplate::Parse(format.value));
          step->templates.push_back(std::move(t));
        }
        break;
      case Stage::Kind::kDrop:
      case Stage::Kind::kKeep:
        for (const LabelSelection& selection : stage.selections) {
          if (selection.matcher.has_value() && (selection.matcher->op == MatchOp::kRegex ||
                                                selection.matcher->op == MatchOp::kNotRegex)) {
            step->regexes.push_back(logql::Compile(selection.matcher->value));
          } else {
            step->regexes.push_back(nullptr);
          }
        }
        break;
      default:
        break;
    }
    pipeline.steps_.push_back(std::move(step));
  }
  return pipeline;
}

namespace {

bool RunLineFilter(const LogPipeline::Step& step, LogLine* line) {
  const LineFilter& filter = step.stage->line_filter;
  bool any = false;
  for (size_t i = 0; i < filter.values.size() && !any; ++i) {
    switch (filter.op) {
      case LineFilterOp::kContains:
      case LineFilterOp::kNotContains:
        any = line->line.find(filter.values[i]) != std::string::npos;
        break;
      case LineFilterOp::kRegex:
      case LineFilterOp::kNotRegex:
        any = RE2::PartialMatch(line->line, *step.regexes[i]);
        break;
      case LineFilterOp::kPattern:
      case LineFilterOp::kNotPattern:
        any = step.patterns[i].Match(line->line, nullptr);
        break;
    }
  }
  const bool negated = filter.op == LineFilterOp::kNotContains ||
                       filter.op == LineFilterOp::kNotRegex ||
                       filter.op == LineFilterOp::kNotPattern;
  return negated ? !any : any;
}

void RunSelection(const LogPipeline::Step& step, LogLine* line) {
  const Stage& stage = *step.stage;
  auto matches = [&](size_t i, const std::string& value) {
    const LabelSelection& selection = stage.selections[i];
    return !selection.matcher.has_value() ||
           Matches(*selection.matcher, step.regexes[i].get(), value);
  };
  if (stage.kind == Stage::Kind::kDrop) {
    for (size_t i = 0; i < stage.selections.size(); ++i) {
      const std::string& name = stage.selections[i].name;
      const std::string* value = line->Find(name);
      if (value != nullptr && matches(i, *value)) Erase(line, name);
    }
    return;
  }
  for (Labels* labels : {&line->parsed, &line->metadata, &line->stream}) {
    for (auto it = labels->begin(); it != labels->end();) {
      bool kept = false;
      for (size_t i = 0; i < stage.selections.size() && !kept; ++i) {
        kept = stage.selections[i].name == it->first && matches(i, it->second);
      }
      it = kept ? std::next(it) : labels->erase(it);
    }
  }
}

}  // namespace

bool LogPipeline::Process(LogLine* line) const {
  for (const std::shared_ptr<const Step>& shared : steps_) {
    const Step& step = *shared;
    const Stage& stage = *step.stage;
    switch (stage.kind) {
      case Stage::Kind::kLineFilter:
        if (!RunLineFilter(step, line)) return false;
        break;
      case Stage::Kind::kJson: {
        std::vector<std::pair<std::string, std::string>> found;
        std::string error;
        if (!ParseJsonLabels(line->line, step.paths, stage.extractions, &found, &error)) {
          SetError(line, "JSONParserErr", error);
        }
        for (auto& [name, value] : found) AddParsed(line, std::move(name), std::move(value));
        break;
      }
      case Stage::Kind::kUnpack: {
        std::vector<std::pair<std::string, std::string>> found;
        std::string error;
        std::optional<std::string> entry;
        if (!ParseUnpack(line->line, &found, &entry, &error)) {
          SetError(line, "JSONParserErr", error);
        }
        for (auto& [name, value] : found) AddParsed(line, std::move(name), std::move(value));
        if (entry.has_value()) line->line = *std::move(entry);
        break;
      }
      case Stage::Kind::kLogfmt: {
        std::vector<std::pair<std::string, std::string>> found;
        std::string error;
        if (!ParseLogfmtLabels(line->line, stage.strict, stage.keep_empty, &found, &error)) {
          SetError(line, "LogfmtParserErr", error);
        }
        if (!stage.extractions.empty()) {
          std::vector<std::pair<std::string, std::string>> wanted;
          for (const Extraction& extraction : stage.extractions) {
            const std::string key = extraction.expression.value_or(extraction.name);
            for (const auto& [name, value] : found) {
              if (name == key) wanted.emplace_back(extraction.name, value);
            }
          }
          found = std::move(wanted);
        }
        for (auto& [name, value] : found) AddParsed(line, std::move(name), std::move(value));
        break;
      }
      case Stage::Kind::kRegexp: {
        const RE2& re = *step.regexes[0];
        const int groups = re.NumberOfCapturingGroups();
        std::vector<re2::StringPiece> pieces(static_cast<size_t>(groups) + 1);
        if (re.Match(line->line, 0, line->line.size(), RE2::UNANCHORED, pieces.data(),
                     groups + 1)) {
          for (const auto& [name, index] : re.NamedCapturingGroups()) {
            const re2::StringPiece& piece = pieces[static_cast<size_t>(index)];
            AddParsed(line, SanitizeLabelName(name), std::string(piece.data(), piece.size()));
          }
        }
        break;
      }
      case Stage::Kind::kPattern: {
        std::vector<std::pair<std::string, std::string>> found;
        if (step.patterns[0].Match(line->line, &found)) {
          for (auto& [name, value] : found) AddParsed(line, std::move(name), std::move(value));
        }
        break;
      }
      case Stage::Kind::kLabelFilter:
        if (!RunFilter(*step.filter, line)) return false;
        break;
      case Stage::Kind::kLineFormat:
        line->line = step.templates[0].Render(*line);
        break;
      case Stage::Kind::kLabelFormat: {
        // Every value is computed from the labels as they were before the
        // stage, then all are set.
        std::vector<std::pair<std::string, std::optional<std::string>>> updates;
        std::vector<std::string> renamed_from;
        size_t next_template = 0;
        for (const LabelFormat& format : stage.formats) {
          if (format.rename) {
            const std::string* value = line->Find(format.value);
            updates.emplace_back(
                format.name, value == nullptr ? std::nullopt : std::optional<std::string>(*value));
            if (format.value != format.name) renamed_from.push_back(format.value);
          } else {
            updates.emplace_back(format.name, step.templates[next_template++].Render(*line));
          }
        }
        for (const std::string& name : renamed_from) Erase(line, name);
        for (auto& [name, value] : updates) {
          if (value.has_value()) Assign(line, name, *std::move(value));
        }
        break;
      }
      case Stage::Kind::kDecolorize:
        line->line = Decolorize(line->line);
        break;
      case Stage::Kind::kDrop:
      case Stage::Kind::kKeep:
        RunSelection(step, line);
        break;
    }
  }
  return true;
}

bool PassesLabelFilter(const LabelFilter& filter, LogLine* line) {
  absl::StatusOr<std::unique_ptr<CompiledFilter>> compiled = CompileFilter(filter);
  if (!compiled.ok()) return false;
  return RunFilter(**compiled, line);
}

std::optional<double> ParseGoDurationSeconds(std::string_view text) {
  static constexpr std::pair<std::string_view, double> kUnits[] = {
      {"ns", 1e-9}, {"us", 1e-6}, {"\xC2\xB5s", 1e-6}, {"\xCE\xBCs", 1e-6},
      {"ms", 1e-3}, {"s", 1},     {"m", 60},           {"h", 3600}};
  if (text.empty()) return std::nullopt;
  double sign = 1;
  if (text[0] == '-' || text[0] == '+') {
    sign = text[0] == '-' ? -1 : 1;
    text.remove_prefix(1);
  }
  if (text == "0") return 0.0;
  if (text.empty()) return std::nullopt;
  double total = 0;
  while (!text.empty()) {
    size_t i = 0;
    while (i < text.size() &&
           (absl::ascii_isdigit(static_cast<unsigned char>(text[i])) || text[i] == '.')) {
      ++i;
    }
    if (i == 0) return std::nullopt;
    const std::optional<double> number = ParseFullDouble(text.substr(0, i));
    if (!number.has_value()) return std::nullopt;
    text.remove_prefix(i);
    bool found = false;
    for (const auto& [unit, seconds] : kUnits) {
      // "ms" before "m": the longer unit is listed first where it matters.
      if (text.starts_with(unit) && !(unit == "m" && text.starts_with("ms"))) {
        total += *number * seconds;
        text.remove_prefix(unit.size());
        found = true;
        break;
      }
    }
    if (!found) return std::nullopt;
  }
  return sign * total;
}

std::optional<double> ParseHumanBytes(std::string_view text) {
  const absl::string_view stripped = absl::StripAsciiWhitespace(Absl(text));
  text = std::string_view(stripped.data(), stripped.size());
  size_t i = 0;
  while (i < text.size() &&
         (absl::ascii_isdigit(static_cast<unsigned char>(text[i])) || text[i] == '.')) {
    ++i;
  }
  if (i == 0) return std::nullopt;
  const std::optional<double> number = ParseFullDouble(text.substr(0, i));
  if (!number.has_value()) return std::nullopt;
  std::string unit = absl::AsciiStrToLower(absl::StripAsciiWhitespace(Absl(text.substr(i))));
  static constexpr std::pair<std::string_view, double> kUnits[] = {{"", 1},
                                                                   {"b", 1},
                                                                   {"k", 1e3},
                                                                   {"kb", 1e3},
                                                                   {"kib", 1024.0},
                                                                   {"ki", 1024.0},
                                                                   {"m", 1e6},
                                                                   {"mb", 1e6},
                                                                   {"mib", 1048576.0},
                                                                   {"mi", 1048576.0},
                                                                   {"g", 1e9},
                                                                   {"gb", 1e9},
                                                                   {"gib", 1073741824.0},
                                                                   {"gi", 1073741824.0},
                                                                   {"t", 1e12},
                                                                   {"tb", 1e12},
                                                                   {"tib", 1099511627776.0},
                                                                   {"ti", 1099511627776.0},
                                                                   {"p", 1e15},
                                                                   {"pb", 1e15},
                                                                   {"pib", 1125899906842624.0},
                                                                   {"pi", 1125899906842624.0}};
  for (const auto& [name, factor] : kUnits) {
    if (unit == name) return *number * factor;
  }
  return std::nullopt;
}

std::string SanitizeLabelName(std::string_view name) {
  std::string out;
  out.reserve(name.size() + 1);
  if (!name.empty() && absl::ascii_isdigit(static_cast<unsigned char>(name[0]))) out.push_back('_');
  for (char c : name) {
    out.push_back(absl::ascii_isalnum(static_cast<unsigned char>(c)) || c == '_' ? c : '_');
  }
  return out;
}

}  // namespace strata::compat::logql
