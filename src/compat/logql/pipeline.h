#pragma once

// LogPipeline: the stages of a LogQL pipeline (ast.h's Stage list) run over
// one log line and its labels, with no storage behind them: line filters,
// the parsers json, logfmt, regexp, pattern and unpack, label filters,
// line_format and label_format templates, decolorize, drop and keep.
//
// Labels come in Loki's three categories (stream labels, structured
// metadata, labels parsed by the pipeline); a label filter or template sees
// the parsed label first, then the metadata, then the stream label of a
// name. A parsed label whose name a stream label or metadata already has is
// stored as <name>_extracted, as Loki does. Errors of a stage are Loki's:
// __error__ (JSONParserErr, LogfmtParserErr, LabelFilterErr, ...) and
// __error_details__ are set on the line and the line is kept; a later
// `| __error__=""` drops it.
//
// Templates are the subset of Go's text/template line_template.h describes;
// any other action is Unimplemented at Compile.
//
// Thread-safety: a compiled LogPipeline is immutable; Process may run on
// many threads at once. Errors: Compile returns InvalidArgument for a bad
// regular expression or pattern and Unimplemented for what strata does not
// run (ip() filters, unsupported template actions).

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "compat/logql/ast.h"

namespace strata::compat::logql {

using Labels = std::map<std::string, std::string>;

struct LogLine {
  int64_t time = 0;  // unix ns
  std::string line;
  Labels stream;
  Labels metadata;  // structured metadata
  Labels parsed;    // set by the pipeline (parsers, label_format, errors)

  // The label's value as a filter sees it: parsed, then metadata, then
  // stream; nullptr when absent.
  const std::string* Find(std::string_view name) const;
};

class LogPipeline {
 public:
  // Compiles `stages` (from `first` on; the ones before were applied in
  // SQL) and, for a metric query, the label filters after its unwrap.
  [[nodiscard]] static absl::StatusOr<LogPipeline> Compile(const std::vector<Stage>& stages,
                                                           size_t first = 0);

  // Runs the stages; false when the line is filtered out.
  bool Process(LogLine* line) const;

  // Whether there are no stages: every line passes unchanged.
  bool empty() const { return steps_.empty(); }

  struct Step;

 private:
  std::vector<std::shared_ptr<const Step>> steps_;
};

// Loki's label filter on one line (with its __error__ rules), exposed for
// the unwrap filters of metric queries.
bool PassesLabelFilter(const LabelFilter& filter, LogLine* line);

// Go's time.ParseDuration ("1h2m", "250ms", "-1.5s") in seconds.
std::optional<double> ParseGoDurationSeconds(std::string_view text);

// A byte size as Loki's label filters and bytes() read it ("10KB",
// "1.5 MiB", "42"), in bytes.
std::optional<double> ParseHumanBytes(std::string_view text);

// Loki's label name rule: every byte outside [A-Za-z0-9_] becomes '_', and
// a leading digit gets a '_' before it.
std::string SanitizeLabelName(std::string_view name);

}  // namespace strata::compat::logql
