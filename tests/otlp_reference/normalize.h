#pragma once

// Normalize() makes explicit the message presence that OTLP gives no
// meaning, so google::protobuf::util::MessageDifferencer compares exactly
// what a strata batch retains (otlp/batch.h).
//
// It sets, when absent, these singular message fields, which a batch stores
// without a presence bit and ToTraceRequest() and friends (to_message.h)
// therefore always write:
//   - Resource{Spans,Logs,Metrics}.resource
//   - Scope{Spans,Logs,Metrics}.scope
//   - Span.status
//   - KeyValue.value, at every nesting level (absent == empty AnyValue)
//   - LogRecord.body (absent == empty AnyValue)
//   - ExponentialHistogramDataPoint.positive and .negative (absent == empty)
// Nothing else changes: presence that carries meaning (optional sum, min and
// max, the value oneofs, Metric.data, optional ids) is left as it is.
//
// Thread-safety: reentrant; the message has a single owner. Errors: none.

#include "google/protobuf/message.h"

namespace strata::otlp_reference {

void Normalize(google::protobuf::Message* message);

}  // namespace strata::otlp_reference
