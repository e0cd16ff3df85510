#pragma once

// The LogQL parsers a pipeline runs over a line (pipeline.cc): json (with
// and without parameters), unpack, logfmt and pattern, each giving
// (label name, value) pairs in Loki's way.
//
//   json: a line that is a JSON object gives one label per scalar member;
//     nested objects flatten with '_' between the keys (a.b -> a_b), arrays
//     are skipped, names are sanitized (SanitizeLabelName). Strings are
//     their text, numbers and booleans their JSON text, null is "". With
//     parameters, each gives its label from a path (JsonPath) and an object
//     or array value is its JSON text.
//   unpack: a JSON object's string members as labels; the member _entry,
//     when present, becomes the line.
//   logfmt: key=value pairs separated by spaces, values bare or "quoted"
//     with escapes; a standalone key has the empty value and is kept only
//     with --keep-empty; with --strict the first malformed pair is an error.
//   pattern: literal text and <name> captures (<_> captures nothing); a
//     capture takes the shortest text up to the next literal, the last one
//     the rest of the line.
//
// Thread-safety: reentrant; compiled Pattern and JsonPath are immutable.
// Errors: the Parse functions return false with a message (the line's
// __error_details__); Compile/Parse return InvalidArgument.

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "compat/logql/ast.h"

namespace strata::compat::logql {

using LabelPairs = std::vector<std::pair<std::string, std::string>>;

// A json parameter's path: `a.b`, `a[0].b`, `a["b c"]`, `.a`.
class JsonPath {
 public:
  [[nodiscard]] static absl::StatusOr<JsonPath> Parse(std::string_view text);

  struct Step {
    bool index = false;  // [n]
    size_t position = 0;
    std::string key;
  };
  const std::vector<Step>& steps() const { return steps_; }

 private:
  std::vector<Step> steps_;
};

class Pattern {
 public:
  // `named`: the pattern parser, which needs at least one named capture;
  // the |> filter takes <_> alone.
  [[nodiscard]] static absl::StatusOr<Pattern> Compile(std::string_view text, bool named);

  // Whether `line` matches; the captures are appended to `captures` (when
  // not null).
  bool Match(std::string_view line, LabelPairs* captures) const;

 private:
  struct Part {
    bool capture = false;
    std::string text;  // the literal, or the capture's name ("_": none)
  };
  std::vector<Part> parts_;
};

bool ParseJsonLabels(std::string_view line, const std::vector<JsonPath>& paths,
                     const std::vector<Extraction>& extractions, LabelPairs* out,
                     std::string* error);

bool ParseUnpack(std::string_view line, LabelPairs* out, std::optional<std::string>* entry,
                 std::string* error);

bool ParseLogfmtLabels(std::string_view line, bool strict, bool keep_empty, LabelPairs* out,
                       std::string* error);

}  // namespace strata::compat::logql
