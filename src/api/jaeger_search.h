#pragma once

// The Jaeger API's trace search (GET /jaeger/api/traces and the v3 search):
// SearchTraces, then the whole of each trace it finds through LookupTrace.
// Shared by the endpoints and `strata bench compat`.
//
// Thread-safety: reentrant. Errors: SearchTraces's and LookupTrace's.

#include <cstddef>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "api/search.h"
#include "io/file_system.h"
#include "otlp/batch.h"
#include "query/query_pool.h"
#include "storage/commit/catalog.h"

namespace strata::api {

// The whole of each trace `search` finds, newest first, as Jaeger answers
// (not only its spans in the window). A trace deleted since the search is
// left out, and so are the traces after the one that brings the answer to
// `max_spans` (whole traces of a large limit could be gigabytes).
[[nodiscard]] absl::StatusOr<std::vector<otlp::TraceBatch>> FindJaegerTraces(
    query::QueryPool& pool, FileSystem& fs, const std::string& data_dir,
    const storage::Snapshot& snapshot, const TraceSearch& search, const CallOptions& call,
    size_t max_spans);

}  // namespace strata::api
