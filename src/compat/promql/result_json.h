#pragma once

// Query results as Prometheus's HTTP API writes them: float values as
// Prometheus's text, and the `data` member of /api/v1/query and
// /api/v1/query_range ({"resultType": ..., "result": ...}).
//
// Thread-safety: pure functions.

#include <cstdint>
#include <string>

#include "compat/promql/value.h"

namespace strata::compat::promql {

// Go's strconv.FormatFloat(v, 'f', -1, 64) for finite values (the shortest
// text that reads back as v, never an exponent), "NaN", "+Inf", "-Inf".
std::string FormatFloat(double v);

// A time in milliseconds as Prometheus writes it in results: seconds with
// the milliseconds, if any, as exactly three decimals (1.5 s is 1.500).
std::string FormatTimestamp(int64_t t_ms);

// {"resultType":"vector","result":[{"metric":{...},"value":[t,"v"]},...]}
// and the matrix, scalar and string forms.
std::string ResultDataJson(const QueryResult& result);

// A JSON string literal, escaped as Go's encoding/json does (including
// <, > and & as \u003c, \u003e, \u0026).
void AppendJsonString(absl::string_view s, std::string* out);

}  // namespace strata::compat::promql
