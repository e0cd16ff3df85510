#pragma once

// LineTemplate: the subset of Go's text/template that line_format and
// label_format templates use in practice: literal text, {{.label}}
// actions (with `{{-`/`-}}` trimming), string literals, and pipelines
// through the functions upper/ToUpper, lower/ToLower, title/Title,
// trimSpace/TrimSpace, plus __line__ (the current line) and __timestamp__
// is refused. A missing label renders as "".
//
// Thread-safety: immutable after Parse. Errors: InvalidArgument for text
// that is no template, Unimplemented for actions outside the subset.

#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"

namespace strata::compat::logql {

struct LogLine;

class LineTemplate {
 public:
  [[nodiscard]] static absl::StatusOr<LineTemplate> Parse(std::string_view text);

  std::string Render(const LogLine& line) const;

 private:
  struct Action {
    enum class Source { kLiteral, kLabel, kLine };
    Source source = Source::kLiteral;
    std::string text;  // the literal text, or the label name
    std::vector<std::string> functions;
  };
  std::vector<Action> parts_;
};

}  // namespace strata::compat::logql
