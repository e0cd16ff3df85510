#pragma once

// The LogQL syntax tree that parser.cc builds and the Loki endpoints
// evaluate (src/api/loki_*.cc).
//
// A query is one Expr. Log queries are Expr::Kind::kLog (a stream selector
// and its pipeline); metric queries are range aggregations over a log range
// (kRange), vector aggregations, binary operations, number literals,
// vector(n) and label_replace. The parser builds every shape Grafana's
// grammar accepts, including some Loki refuses (a log query as an operand
// of `+`, sum_over_time without unwrap); CheckLogQL (check.h) tells those
// apart.
//
// Values are owned: strings are decoded (escapes resolved), durations are
// nanoseconds, bytes are bytes.

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace strata::compat::logql {

// Stream selector and string label filter operators.
enum class MatchOp { kEq, kNe, kRegex, kNotRegex };

struct Matcher {
  std::string name;
  MatchOp op = MatchOp::kEq;
  std::string value;
};

// |= != |~ !~ |> !>
enum class LineFilterOp { kContains, kNotContains, kRegex, kNotRegex, kPattern, kNotPattern };

// One line filter: `|= "a" or "b"` keeps a line holding "a" or "b"; the
// negated forms drop a line holding any of them. `ip` marks |= ip("...").
struct LineFilter {
  LineFilterOp op = LineFilterOp::kContains;
  std::vector<std::string> values;
  bool ip = false;
};

enum class CompareOp { kEq, kNe, kGt, kGe, kLt, kLe };

// A label filter (after `|`): a tree of and/or over comparisons.
struct LabelFilter {
  enum class Kind { kAnd, kOr, kString, kNumber, kDuration, kBytes, kIp };
  Kind kind = Kind::kString;
  // kAnd, kOr
  std::unique_ptr<LabelFilter> lhs;
  std::unique_ptr<LabelFilter> rhs;
  // kString: matcher; kIp: matcher.name and matcher.value (the range), with
  // matcher.op kEq or kNe.
  Matcher matcher;
  // kNumber, kDuration (seconds), kBytes: name, op and value.
  std::string name;
  CompareOp op = CompareOp::kEq;
  double value = 0;
};

// `name` or `name="expression"` in json and logfmt parameters.
struct Extraction {
  std::string name;
  std::optional<std::string> expression;
};

// `name=other` (rename) or `name="{{ template }}"` in label_format.
struct LabelFormat {
  std::string name;
  bool rename = false;
  std::string value;  // the label renamed from, or the template
};

// A drop or keep item: a label name, or a matcher (the label is dropped or
// kept only where its value matches).
struct LabelSelection {
  std::string name;
  std::optional<Matcher> matcher;
};

struct Stage {
  enum class Kind {
    kLineFilter,
    kJson,
    kLogfmt,
    kRegexp,
    kPattern,
    kUnpack,
    kLabelFilter,
    kLineFormat,
    kLabelFormat,
    kDecolorize,
    kDrop,
    kKeep,
  };
  Kind kind = Kind::kLineFilter;
  LineFilter line_filter;                  // kLineFilter
  std::vector<Extraction> extractions;     // kJson, kLogfmt
  bool strict = false;                     // kLogfmt --strict
  bool keep_empty = false;                 // kLogfmt --keep-empty
  std::string text;                        // kRegexp, kPattern, kLineFormat
  std::unique_ptr<LabelFilter> filter;     // kLabelFilter
  std::vector<LabelFormat> formats;        // kLabelFormat
  std::vector<LabelSelection> selections;  // kDrop, kKeep
};

struct LogSelector {
  std::vector<Matcher> matchers;
  std::vector<Stage> stages;
};

enum class UnwrapConversion { kNone, kBytes, kDuration, kDurationSeconds };

struct Unwrap {
  std::string label;
  UnwrapConversion conversion = UnwrapConversion::kNone;
  // Label filters after the unwrap (`| unwrap x | __error__=""`).
  std::vector<std::unique_ptr<LabelFilter>> filters;
};

struct Grouping {
  bool present = false;
  bool without = false;
  std::vector<std::string> labels;
};

enum class BinaryOp {
  kOr,
  kAnd,
  kUnless,
  kAdd,
  kSub,
  kMul,
  kDiv,
  kMod,
  kPow,
  kEq,
  kNe,
  kGt,
  kGe,
  kLt,
  kLe,
};

// bool, on(...)/ignoring(...), group_left(...)/group_right(...).
struct VectorMatching {
  bool return_bool = false;
  bool on = false;
  bool ignoring = false;
  std::vector<std::string> labels;
  bool group_left = false;
  bool group_right = false;
  std::vector<std::string> include;
};

struct Expr {
  enum class Kind { kLog, kRange, kVectorAggregation, kBinary, kNumber, kVector, kLabelReplace };
  Kind kind = Kind::kLog;
  bool parenthesized = false;

  // kLog; kRange: the selector and pipeline under the range.
  LogSelector log;

  // kRange: count_over_time, rate, ..., with range and offset in
  // nanoseconds, the parameter of quantile_over_time, the unwrap.
  std::string function;
  std::optional<double> parameter;  // also topk/bottomk's k
  int64_t range_ns = 0;
  int64_t offset_ns = 0;
  std::optional<Unwrap> unwrap;
  Grouping grouping;  // kRange and kVectorAggregation

  // kVectorAggregation (function: sum, avg, ..., lower case), kBinary
  // (lhs, rhs), kLabelReplace (lhs).
  std::unique_ptr<Expr> lhs;
  std::unique_ptr<Expr> rhs;
  BinaryOp op = BinaryOp::kAdd;
  VectorMatching matching;

  // kNumber, kVector
  double number = 0;

  // kLabelReplace: destination, replacement, source, regex.
  std::vector<std::string> replace_args;
};

}  // namespace strata::compat::logql
