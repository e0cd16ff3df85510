#pragma once

// The get_trace tool's answer (docs/mcp.md): one trace summarised so an
// agent can read it within the output budget. The root span, the critical
// path (from the root, each time the child that ends last), the error
// spans with their status messages and exception events, the slowest
// spans, the span count of each service, and, only when asked, one page
// of the full span list ordered by start time.
//
// Thread-safety: reentrant. Errors: none.

#include <cstddef>
#include <cstdint>
#include <string>

#include "otlp/batch.h"

namespace strata::api {

struct TraceSummaryOptions {
  bool include_spans = false;
  size_t span_offset = 0;
  size_t span_limit = 100;  // 1..500
  size_t budget_bytes = 0;  // 0: kMcpOutputBudgetBytes
};

inline constexpr size_t kMaxSummarySpanLimit = 500;

// `trace` holds at least one span.
std::string TraceSummaryJson(const otlp::TraceBatch& trace, const TraceSummaryOptions& options);

}  // namespace strata::api
