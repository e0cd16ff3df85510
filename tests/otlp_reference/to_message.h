#pragma once

// Converters from strata's columnar batches (otlp/batch.h) to libprotobuf
// messages of the OTLP 0.38 protos, so the differential tests can compare
// what a strata decoder produced with what libprotobuf parsed.
//
// The output is grouped as the batch is: one Resource{Spans,Logs,Metrics}
// per resource row, in order; below it one Scope{...} per scope row that
// names that resource, in order; below that the rows whose scope index names
// that scope, in order. Resources and scopes without children are kept.
//
// Presence the batch does not retain (batch.h) is written in one canonical
// form: resource, scope, span status, KeyValue.value, log body and the
// exponential histogram's positive and negative buckets are always set.
// Normalize() (normalize.h) brings a libprotobuf-parsed message to the same
// form.
//
// Errors: InvalidArgument when the batch carries a field the 0.38 protos
// cannot hold with a non-default value (scope attributes and their dropped
// count, resource entity refs, span and link flags, log event_name, metric
// metadata, exponential histogram zero_threshold, a temporality or
// monotonic flag on a metric type without one), so a comparison can never
// silently drop it. Internal when the batch breaks its own invariants
// (mismatched column lengths, a Range or index outside its table, a
// non-zero id marked absent, an unknown type tag).
//
// Thread-safety: reentrant; the batch is only read.

#include "absl/status/statusor.h"
#include "otlp/batch.h"
#include "otlp_reference/generator.h"

namespace strata::otlp_reference {

[[nodiscard]] absl::StatusOr<TraceRequest> ToTraceRequest(const otlp::TraceBatch& batch);
[[nodiscard]] absl::StatusOr<LogsRequest> ToLogsRequest(const otlp::LogBatch& batch);
[[nodiscard]] absl::StatusOr<MetricsRequest> ToMetricsRequest(const otlp::MetricBatch& batch);

}  // namespace strata::otlp_reference
