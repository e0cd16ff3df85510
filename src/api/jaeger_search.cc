// FindJaegerTraces (jaeger_search.h).

#include "api/jaeger_search.h"

#include "api/params.h"
#include "common/status_macros.h"
#include "storage/trace_lookup.h"

namespace strata::api {

absl::StatusOr<std::vector<otlp::TraceBatch>> FindJaegerTraces(
    query::QueryPool& pool, FileSystem& fs, const std::string& data_dir,
    const storage::Snapshot& snapshot, const TraceSearch& search, const CallOptions& call,
    size_t max_spans) {
  STRATA_ASSIGN_OR_RETURN(const std::vector<TraceSummary> summaries,
                          SearchTraces(pool, snapshot, data_dir, search, call));
  std::vector<otlp::TraceBatch> traces;
  traces.reserve(summaries.size());
  size_t spans = 0;
  for (const TraceSummary& summary : summaries) {
    if (spans >= max_spans) break;
    STRATA_ASSIGN_OR_RETURN(const otlp::TraceId id, ParseTraceId("trace_id", summary.trace_id));
    STRATA_ASSIGN_OR_RETURN(std::optional<otlp::TraceBatch> batch,
                            storage::LookupTrace(fs, data_dir, snapshot, id, nullptr));
    if (!batch.has_value()) continue;
    spans += batch->spans.size();
    traces.push_back(*std::move(batch));
  }
  return traces;
}

}  // namespace strata::api
