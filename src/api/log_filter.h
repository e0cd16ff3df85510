#pragma once

// The filters of a log search (GET /api/v1/logs and GET
// /api/v1/logs/volume, docs/api.md): their query parameters, and the SQL
// condition over the view `logs` that both endpoints run, so the two always
// select the same records.
//
// Thread-safety: reentrant. Errors: InvalidArgument naming the bad
// parameter (params.h's form).

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "api/params.h"
#include "api/search.h"
#include "query/query_pool.h"

namespace strata::api {

// Most `body.<path>=` filters in one request, and most bytes of one path.
inline constexpr size_t kMaxBodyPathFilters = 16;
inline constexpr size_t kMaxBodyPathBytes = 512;

// Takes the filter parameters from `params` into `search`: start and end,
// service, severity_min, q, trace_id, every attr.<key> and every
// body.<path> (the path checked with otlp::ParseValuePath). Leaves limit and
// cursor to the caller.
[[nodiscard]] absl::Status TakeLogFilters(QueryParams& params, const NowFunction& now,
                                          LogSearch* search);

// As TakeLogFilters without the window: the record filters alone, which
// the live tail (GET /api/v1/logs/tail) applies to records as they arrive.
[[nodiscard]] absl::Status TakeLogRecordFilters(QueryParams& params, LogSearch* search);

namespace internal {

// The condition selecting `search`'s records (time window and every filter;
// not the cursor), binding values in `params` from $<params.size()+1> on.
std::string LogFilterSql(const LogSearch& search, std::vector<query::QueryParam>* params);

// " AND <condition>" for each record filter of `search` (every filter but
// the window; "" when there is none), binding values as LogFilterSql does.
std::string LogRecordFilterSql(const LogSearch& search, std::vector<query::QueryParam>* params);

}  // namespace internal
}  // namespace strata::api
