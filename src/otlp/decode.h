#pragma once

// OTLP request decoders: protobuf wire format and OTLP/JSON into columnar
// batches (batch.h).
//
// Each decoder appends the request's rows to `batch`; several requests can
// be decoded into one batch. On error the batch is left in a valid but
// unspecified state and must be discarded.
//
// Protobuf decoders keep strings and bytes as views into `bytes`: the caller
// keeps `bytes` alive as long as the batch, or hands it to
// BatchBase::Retain(). JSON decoders copy what they keep into the batch's
// arena, so `json` may be released after the call.
//
// Errors: InvalidArgument, with a message that names the field path (as
// "resource_spans[0].scope_spans[2].spans[7].trace_id") and the byte offset
// of the offending field in the input. Nothing else is returned.
//
// Thread-safety: the functions are reentrant; a batch has a single owner.

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "absl/status/status.h"
#include "otlp/batch.h"

namespace strata::otlp {

// Bounds that keep hostile input from costing unbounded time or memory.
struct DecodeLimits {
  // Deepest AnyValue nesting accepted (an attribute value that is an array
  // holding a kvlist is depth 2). Deeper input is InvalidArgument.
  uint32_t max_value_depth = 16;
  // Deepest JSON nesting accepted overall (objects and arrays).
  uint32_t max_json_depth = 128;
};

[[nodiscard]] absl::Status DecodeTracesProto(std::string_view bytes, TraceBatch* batch,
                                             const DecodeLimits& limits = {});
[[nodiscard]] absl::Status DecodeLogsProto(std::string_view bytes, LogBatch* batch,
                                           const DecodeLimits& limits = {});
[[nodiscard]] absl::Status DecodeMetricsProto(std::string_view bytes, MetricBatch* batch,
                                              const DecodeLimits& limits = {});

[[nodiscard]] absl::Status DecodeTracesJson(std::string_view json, TraceBatch* batch,
                                            const DecodeLimits& limits = {});
[[nodiscard]] absl::Status DecodeLogsJson(std::string_view json, LogBatch* batch,
                                          const DecodeLimits& limits = {});
[[nodiscard]] absl::Status DecodeMetricsJson(std::string_view json, MetricBatch* batch,
                                             const DecodeLimits& limits = {});

// Checks the invariants listed in batch.h. Returns Internal naming the first
// broken one; a decoder that produced such a batch has a bug.
[[nodiscard]] absl::Status ValidateBatch(const TraceBatch& batch);
[[nodiscard]] absl::Status ValidateBatch(const LogBatch& batch);
[[nodiscard]] absl::Status ValidateBatch(const MetricBatch& batch);

}  // namespace strata::otlp
