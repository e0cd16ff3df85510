#pragma once

// The pieces of the log search (log_search.cc) that the live tail
// (log_tail.cc) shares, so both select the same columns and read rows into the same LogEntry: a
// tailed record is the same JSON as a GET /api/v1/logs entry.
//
// Thread-safety: reentrant. Errors: ReadLogEntry returns Internal or
// DataLoss when a cell does not hold what its column should.

#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "api/search.h"
#include "query/query_pool.h"

namespace strata::api::internal {

// The cells of a row SelectedColumnsSql() selects, in order.
namespace log_column {
enum : size_t {
  kTime,
  kObservedTime,
  kSeverityNumber,
  kSeverityText,
  kBodyType,
  kBody,
  kService,
  kTraceId,
  kSpanId,
  kAttributes,
  kScopeAttributes,
  kResourceAttributes,
  kRowKey,
  kCount,
};
}  // namespace log_column

// The SELECT list over the logs table's columns, ending with a column
// named row_key that the query itself must define.
std::string SelectedColumnsSql();

// One selected row, its typed values appended to `values`.
[[nodiscard]] absl::StatusOr<LogEntry> ReadLogEntry(
    const std::vector<std::optional<std::string>>& row, LogValues* values);

}  // namespace strata::api::internal
