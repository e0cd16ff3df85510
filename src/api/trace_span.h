#pragma once

// One span of a trace on its own, GET /api/v1/traces/{trace_id}/spans/
// {span_id} (docs/api.md): the span with its attributes, events and links,
// its scope and its resource, as a TraceBatch that otlp's JSON encoder
// writes exactly as it writes the whole trace.
//
// Thread-safety: reentrant. Errors: none.

#include <optional>

#include "otlp/batch.h"

namespace strata::api {

// The rows of `trace` whose span id is `span_id` (usually one; a span
// stored twice, as a retried export can, comes back twice), in the order
// `trace` holds them, with their scopes and resources and every row those
// reach (attributes, events, links, entity refs, nested AnyValues) copied
// into a batch of their own. The result keeps `trace`'s bytes alive (its
// arena and retained buffers move into it), so `trace` is consumed.
// nullopt when no row has the id.
std::optional<otlp::TraceBatch> SelectSpan(otlp::TraceBatch trace, const otlp::SpanId& span_id);

}  // namespace strata::api
