#pragma once

// The requests storage_crash_child commits, rebuilt identically by
// sigkill_test.cc to check that every acknowledged one is stored.

#include <cstdint>

#include "storage/commit/write_request.h"
#include "workload/traffic_generator.h"

namespace strata::storage::testing {

inline int CrashChildRequestSpans(uint64_t index) { return 20 + static_cast<int>(index % 180); }

inline WriteRequest CrashChildRequest(uint64_t index) {
  workload::TrafficGenerator generator(workload::TrafficOptions{.seed = index + 1});
  WriteRequest request;
  request.traces = generator.Traces(CrashChildRequestSpans(index));
  request.rows = request.traces->spans.size();
  request.bytes = request.rows * 400;
  return request;
}

}  // namespace strata::storage::testing
