#pragma once

// The compact form of a trace, GET /api/v1/traces/{trace_id}?format=columns
// (docs/api.md): what a trace view draws for every span (ids, service,
// name, kind, status, start and duration) as parallel arrays, with each
// distinct resource, service name and span name written once and referred
// to by index. A span's attributes, events and links are left out; the UI
// fetches them one span at a time (trace_span.h).
//
// Both functions read a TraceBatch as storage::LookupTrace returns it (one
// trace, spans ordered by start time then span id) and keep its span order.
// TraceColumnsJson reads no span attribute, event or link, so the lookup
// may leave them out (storage::TraceLookupDetail::kSkeleton).
//
// Thread-safety: reentrant; the batch is only read. Errors: none.

#include <string>

#include "otlp/batch.h"

namespace strata::api {

// Times in the compact form are offsets from the trace's earliest span
// start; an offset or duration whose magnitude passes this (2^53 - 1 ns,
// about 104 days) is written as a decimal string instead of a number, so
// a JavaScript client never reads a rounded value.
inline constexpr int64_t kMaxExactJsonInteger = (int64_t{1} << 53) - 1;

// The service name of resource row `resource`: the value of its first
// `service.name` attribute when that is a string (as the spans table's
// promoted service_name column takes it), else "".
std::string_view ResourceServiceName(const otlp::BatchBase& batch, size_t resource);

// The compact JSON of `trace`, which holds at least one span.
std::string TraceColumnsJson(const otlp::TraceBatch& trace);

}  // namespace strata::api
