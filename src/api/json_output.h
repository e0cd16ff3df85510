#pragma once

// The JSON bodies of the REST API (docs/api.md, "Responses"), written with
// otlp::JsonWriter, and the one JSON input it reads ({"sql": "..."}).
// Unix-nanosecond times and nanosecond durations are decimal strings (they
// do not fit a JSON number's exact range in JavaScript); counts are
// numbers.
//
// Thread-safety: reentrant. Errors: ParseSqlJson returns InvalidArgument
// naming what is wrong with the body.

#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "api/search.h"
#include "query/duckdb_engine.h"

namespace strata::api {

std::string ErrorJson(std::string_view message);
std::string TracesJson(const std::vector<TraceSummary>& traces);
std::string LogsJson(const LogPage& page);
// One entry of LogsJson's "logs" (the data of a live tail's event).
std::string LogEntryJson(const LogValues& values, const LogEntry& entry);
std::string MetricNamesJson(const std::vector<MetricName>& names);
std::string MetricSeriesJson(const MetricQuery& q, std::string_view aggregation,
                             const std::vector<MetricSeries>& series);

// {"columns":[{"name","type"}],"rows":[[...]],"truncated":bool} and, when
// truncated, "truncated_reason": `truncated_reason`. Values of integer,
// decimal and floating-point columns are JSON numbers (non-finite floats as
// the strings "NaN", "Infinity", "-Infinity"), BOOLEAN values true/false,
// NULL null, everything else strings.
std::string SqlResultJson(const query::QueryResult& result, std::string_view truncated_reason = {});

// The "sql" member of a JSON object body such as {"sql": "SELECT 1"}.
[[nodiscard]] absl::StatusOr<std::string> ParseSqlJson(std::string_view body);

}  // namespace strata::api
