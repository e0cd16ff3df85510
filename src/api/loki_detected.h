#pragma once

// Loki's detected fields (GET /loki/api/v1/detected_fields, docs/loki.md):
// the fields a log line carries beyond its stream labels, with a type and
// the number of distinct values, for Grafana's field browser.
//
// A field comes from the line's structured metadata (parsers: none), or
// from parsing the line: as JSON when it starts with '{' (parser "json",
// nested keys joined with '_'), else as logfmt (parser "logfmt"). A value's
// type is the first of boolean, int, float, duration, bytes that parses
// it, else string; a field whose values disagree is a string. Cardinality
// is exact: the distinct values seen.
//
// Memory is bounded by the caller's line limit and by `field_limit` (the
// fields past it are not tracked).
//
// Thread-safety: single owner. Errors: none.

#include <cstddef>
#include <map>
#include <set>
#include <string>
#include <string_view>

#include "compat/logql/pipeline.h"
#include "otlp/json_writer.h"

namespace strata::api {

class LokiFieldDetector {
 public:
  explicit LokiFieldDetector(size_t field_limit) : field_limit_(field_limit) {}

  void Add(const compat::logql::LogLine& line);

  // {"fields":[{"label","type","cardinality","parsers"}...],"limit":N},
  // the fields sorted by label.
  std::string Json() const;

  // The type name of one value ("boolean", "int", "float", "duration",
  // "bytes", "string").
  static std::string_view TypeOf(std::string_view value);

 private:
  struct Field {
    std::string type;
    std::set<std::string> values;
    std::set<std::string> parsers;
  };
  void AddField(const std::string& name, const std::string& value, std::string_view parser);

  const size_t field_limit_;
  std::map<std::string, Field> fields_;
};

}  // namespace strata::api
