#pragma once

// TraceRun: one trace id's run of rows in a sorted spans.parquet. The spans
// table writer produces one per distinct trace id, in file order (trace ids
// strictly increasing bytewise); the trace index writer (spans.tidx,
// docs/format/trace-index.md) consumes them. Plain values.

#include <cstdint>

#include "otlp/batch.h"

namespace strata::storage {

struct TraceRun {
  otlp::TraceId trace_id{};
  // Row of spans.parquet where the trace's spans start (placeholder rows
  // come first, so the first run starts at the file's first span row).
  uint32_t first_row = 0;
};

}  // namespace strata::storage
