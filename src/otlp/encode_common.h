#pragma once

// What the protobuf and JSON encoders share: the grouping of child rows under
// their parents (scopes under resources, items under scopes) and estimates
// of the output size used to reserve the output string once.
//
// A batch need not keep a parent's children together (the storage layer
// sorts spans by trace id), so the encoders never assume contiguity of the
// `resource` and `scope` columns; they bucket rows with a stable counting
// sort instead. Children covered by a Range are contiguous by batch.h's
// invariant 3 and are read directly.
//
// Precondition: the batch satisfies the invariants of batch.h (ValidateBatch
// accepts it). A parent index out of range is a bug in the caller and aborts.
//
// Thread-safety: reentrant.

#include <cstdint>
#include <span>
#include <vector>

#include "otlp/batch.h"

namespace strata::otlp::internal {

// AnyValue nesting beyond this depth can only come from a cycle of child
// Ranges (decoders stop far earlier); the encoders abort on it.
inline constexpr int kMaxValueDepth = 4096;

// The child rows of every parent row, each parent's children in row order.
class RowGroups {
 public:
  // Groups rows 0..parent_of.size()-1 by parent_of[row] < parent_count.
  RowGroups(const std::vector<uint32_t>& parent_of, size_t parent_count);

  std::span<const uint32_t> children(size_t parent) const {
    return {order_.data() + offsets_[parent], offsets_[parent + 1] - offsets_[parent]};
  }

 private:
  std::vector<uint32_t> offsets_;  // parent_count + 1 entries
  std::vector<uint32_t> order_;    // child rows, grouped by parent
};

// Whether a Resource or InstrumentationScope has only default fields. Such a
// message is omitted: batch.h does not retain its presence.
bool IsEmptyResource(const BatchBase& batch, size_t row);
bool IsEmptyScope(const BatchBase& batch, size_t row);

// Rough protobuf sizes of whole requests; JSON text is about twice as large.
size_t EstimateProtoBytes(const TraceBatch& batch);
size_t EstimateProtoBytes(const LogBatch& batch);
size_t EstimateProtoBytes(const MetricBatch& batch);

}  // namespace strata::otlp::internal
