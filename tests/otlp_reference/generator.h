#pragma once

// Seeded generators of OTLP export requests, built with libprotobuf's classes
// for the OTLP 0.38 protos. They feed the differential tests (random mode)
// and the decode benchmark (realistic mode).
//
// Random mode exercises every field the 0.38 protos have, with the corner
// cases a decoder gets wrong: absent and empty messages, every AnyValue kind
// nested below the decoders' depth limit, unicode and escape-heavy strings,
// extreme integers, NaN, infinities and negative zero, optional fields
// present or not, and oneofs set to a default value or unset. It never emits
// what a conforming OTLP decoder may reject: span trace and span ids are
// always 16 and 8 non-zero bytes, other ids are empty or full length, enum
// values are in range, strings are valid UTF-8, AnyValue nesting stays
// below 16, and histogram bucket counts match their bounds. The deprecated
// instrumentation_library_* fields are never set.
//
// Realistic mode builds what an instrumented service mesh sends: traces
// crossing five services with HTTP, RPC and database semantic-convention
// attributes, structured logs correlated with spans, and sums, gauges and
// histograms with a few attributes each.
//
// The same seed yields the same message on every platform (RandomSource).
// Thread-safety: the functions are reentrant. Errors: none.

#include <cstdint>

#include "opentelemetry/proto/collector/logs/v1/logs_service.pb.h"
#include "opentelemetry/proto/collector/metrics/v1/metrics_service.pb.h"
#include "opentelemetry/proto/collector/trace/v1/trace_service.pb.h"

namespace strata::otlp_reference {

using TraceRequest = opentelemetry::proto::collector::trace::v1::ExportTraceServiceRequest;
using LogsRequest = opentelemetry::proto::collector::logs::v1::ExportLogsServiceRequest;
using MetricsRequest = opentelemetry::proto::collector::metrics::v1::ExportMetricsServiceRequest;

// Random mode: small requests (up to about 20 spans, log records or data
// points) covering every field and corner case.
TraceRequest RandomTraceRequest(uint64_t seed);
LogsRequest RandomLogsRequest(uint64_t seed);
MetricsRequest RandomMetricsRequest(uint64_t seed);

// Realistic mode: about `span_count` spans in traces of 5 to 30 spans each,
// grouped by service (one ResourceSpans per service that has spans).
TraceRequest RealisticTraceRequest(uint64_t seed, int span_count);
// `record_count` log records from five services.
LogsRequest RealisticLogsRequest(uint64_t seed, int record_count);
// About `point_count` data points in sums, gauges and histograms.
MetricsRequest RealisticMetricsRequest(uint64_t seed, int point_count);

}  // namespace strata::otlp_reference
