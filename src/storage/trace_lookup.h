#pragma once

// Trace by id with no time range (docs/format/trace-index.md, "Lookup"):
//
//   every batch of the pinned Snapshot: its in-memory trace filter
//     -> the few that may hold the id: binary search of their spans.tidx
//     -> the batches that hold it: read only its rows of spans.parquet
//        (only the pages that cover them) with the native Parquet reader,
//        through the footer and OffsetIndexes the batch's lookup state
//        caches (batch_lookup_state.h; the first read of a batch fills it)
//     -> one TraceBatch with every span of the trace
//
// The result holds the trace's spans from every batch that has some, so a
// trace whose spans arrived in many requests comes back whole. Its spans
// are ordered by (start time, span id); resources and scopes keep the
// attributes they were stored with (rows from different batches never
// share a resource row). The batch owns all its bytes.
//
// Thread-safety: reentrant; the Snapshot and FileSystem are only read (a
// batch's lookup cache is safe for concurrent use).
// Errors: DataLoss naming the batch and file when an index or Parquet file
// is corrupt; the FileSystem's error when a read fails.

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "io/file_system.h"
#include "objectstore/batch_store.h"
#include "otlp/batch.h"
#include "storage/commit/catalog.h"

namespace strata::storage {

struct TraceLookupStats {
  size_t batches = 0;         // batches in the Snapshot
  size_t filter_matches = 0;  // batches whose filter said "maybe"
  size_t batches_read = 0;    // batches that held the trace
  uint64_t rows_read = 0;     // span rows decoded
};

// How much of each span a lookup reads.
enum class TraceLookupDetail {
  kFull,
  // Without attributes, events and links (their columns are not read; the
  // spans have empty ranges and keep their dropped counts): what the REST
  // API's compact trace form shows, read several times faster for a large
  // trace (SpansRangeReader::SkipSpanDetails).
  kSkeleton,
};

// The spans of `trace_id` in the batches `snapshot` names under
// `data_dir`, or nullopt when none holds it. A batch's dir() is taken as
// relative to `data_dir` unless it is absolute or already starts with
// `data_dir` (the committer and recovery record it with the data
// directory in front).
//
// With `object_store` (offload), a batch whose local spans.parquet is gone
// is read from the store instead, by ranged gets of only the footer,
// indexes and pages the lookup needs (its filter and spans.tidx stay
// local); its key is the object layout's. Without it such a batch fails
// the lookup with the file system's NotFound, as before offload.
[[nodiscard]] absl::StatusOr<std::optional<otlp::TraceBatch>> LookupTrace(
    FileSystem& fs, const std::string& data_dir, const Snapshot& snapshot,
    const otlp::TraceId& trace_id, TraceLookupStats* stats = nullptr,
    TraceLookupDetail detail = TraceLookupDetail::kFull,
    objectstore::BatchStore* object_store = nullptr);

// Whether `batch` holds a span of `trace_id`: its in-memory filter, then,
// on "maybe", a binary search of its spans.tidx (no Parquet is read). A
// batch with spans but no lookup state answers true (it cannot be ruled
// out). Errors: as LookupTrace's for the index.
[[nodiscard]] absl::StatusOr<bool> BatchHoldsTrace(FileSystem& fs, const std::string& data_dir,
                                                   const LiveBatch& batch,
                                                   const otlp::TraceId& trace_id);

}  // namespace strata::storage
