#pragma once

// How the MCP tools (docs/mcp.md) write what they answer: times in RFC 3339
// UTC, durations in milliseconds, and every answer held to a byte budget.
//
// Thread-safety: reentrant. Errors: none.

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "otlp/json_writer.h"

namespace strata::api {

// The most bytes of JSON one tool call answers (docs/mcp.md, "Budgets").
inline constexpr size_t kMcpOutputBudgetBytes = 24 * 1024;

// "2026-12-04T04:13:34.123Z" for unix nanoseconds (milliseconds kept).
std::string Rfc3339Utc(int64_t unix_ns);
// Nanoseconds as milliseconds, rounded to microseconds.
double Milliseconds(int64_t ns);

// A JSON array of `items` (each one JSON value) holding as many of them, in
// order, as fit in `budget` bytes; `*shown` gets how many.
std::string BoundedArray(const std::vector<std::string>& items, size_t budget, size_t* shown);

// Writes `json`, one JSON value already written out, as the next value of
// `w`, which writes into `out`.
void AppendJsonValue(otlp::JsonWriter& w, std::string* out, std::string_view json);

}  // namespace strata::api
