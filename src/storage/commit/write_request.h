#pragma once

// WriteRequest: one decoded OTLP request on its way into storage. It owns its
// rows (any of the three batches may be null: a request carries one signal,
// and tests or replays may carry several) and says what it costs, so the
// group-commit writer can count it against its caps and its in-flight byte
// budget without looking inside the batches.
//
// Thread-safety: single owner. The submitter hands it to the writer; the
// writer's commit step may read or move out of it while it commits.

#include <cstdint>
#include <memory>

#include "otlp/batch.h"

namespace strata::storage {

struct WriteRequest {
  std::unique_ptr<otlp::TraceBatch> traces;
  std::unique_ptr<otlp::LogBatch> logs;
  std::unique_ptr<otlp::MetricBatch> metrics;

  // What the request counts against the in-flight budget and the per-batch
  // byte cap: the encoded request size or the batches' memory estimate,
  // whichever the caller can state cheaply (the same choice for every
  // request of one writer).
  uint64_t bytes = 0;
  // Top-level rows (spans + log records + metric data points), for the
  // per-batch row cap.
  uint64_t rows = 0;
};

}  // namespace strata::storage
