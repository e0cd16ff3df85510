#include "storage/trace_lookup.h"

#include <algorithm>
#include <cstring>
#include <memory>
#include <numeric>
#include <utility>
#include <vector>

#include "common/path.h"
#include "common/status_macros.h"
#include "fmt/format.h"
#include "parquet/file_reader.h"
#include "storage/format/object_layout.h"
#include "storage/index/trace_index.h"
#include "storage/offload/object_source.h"
#include "storage/storage.h"
#include "storage/table/file_source.h"
#include "storage/table/spans_table.h"

namespace strata::storage {
namespace {

// The directory of a batch. The catalog records it with the data directory
// in front (catalog.h); a relative one (a hand-built catalog) is taken as
// under `data_dir`.
std::string BatchPath(const std::string& data_dir, const std::string& dir) {
  if (data_dir.empty() || dir.starts_with('/') || dir.starts_with(data_dir + "/")) return dir;
  return JoinPath(data_dir, dir);
}

template <typename T>
void Reorder(const std::vector<uint32_t>& order, std::vector<T>* column) {
  std::vector<T> sorted;
  sorted.reserve(column->size());
  for (uint32_t i : order) sorted.push_back(std::move((*column)[i]));
  *column = std::move(sorted);
}

// Orders the span rows by (start time, span id). Their child rows stay
// where they are: a span's Ranges still name them.
void SortSpans(otlp::SpanColumns* spans) {
  std::vector<uint32_t> order(spans->size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [spans](uint32_t a, uint32_t b) {
    if (spans->start_time_unix_nano[a] != spans->start_time_unix_nano[b]) {
      return spans->start_time_unix_nano[a] < spans->start_time_unix_nano[b];
    }
    return spans->span_id[a] < spans->span_id[b];
  });
  if (std::is_sorted(order.begin(), order.end())) return;
  Reorder(order, &spans->scope);
  Reorder(order, &spans->trace_id);
  Reorder(order, &spans->span_id);
  Reorder(order, &spans->trace_state);
  Reorder(order, &spans->parent_span_id);
  Reorder(order, &spans->has_parent_span_id);
  Reorder(order, &spans->flags);
  Reorder(order, &spans->name);
  Reorder(order, &spans->kind);
  Reorder(order, &spans->start_time_unix_nano);
  Reorder(order, &spans->end_time_unix_nano);
  Reorder(order, &spans->attributes);
  Reorder(order, &spans->dropped_attributes_count);
  Reorder(order, &spans->events);
  Reorder(order, &spans->dropped_events_count);
  Reorder(order, &spans->links);
  Reorder(order, &spans->dropped_links_count);
  Reorder(order, &spans->status_message);
  Reorder(order, &spans->status_code);
}

std::string Hex(const otlp::TraceId& id) {
  std::string out;
  for (uint8_t b : id) out += fmt::format("{:02x}", b);
  return out;
}

// A reader of the batch's spans.parquet: through the layout its state
// caches, else by reading the footer and indexes, which the state then
// keeps if its budget allows. Either way the reader takes dictionary pages
// from the state's cache and offers it the ones it reads.
absl::StatusOr<std::unique_ptr<SpansRangeReader>> OpenSpans(const BatchLookupState& state,
                                                            parquet::RandomAccessSource* source,
                                                            const std::string& batch_id,
                                                            const std::string& path) {
  if (std::shared_ptr<const parquet::FileLayout> layout = state.spans_layout()) {
    return SpansRangeReader::Open(source, std::move(layout), path, &state);
  }
  STRATA_ASSIGN_OR_RETURN(std::shared_ptr<const parquet::FileLayout> layout,
                          ReadSpansLayout(source, batch_id, path));
  state.CacheSpansLayout(layout);
  return SpansRangeReader::Open(source, std::move(layout), path, &state);
}

// Appends the trace's rows of one batch to *out.
absl::Status ReadBatchRows(FileSystem& fs, const std::string& batch_dir, const LiveBatch& batch,
                           const BatchLookupState& state, const TraceLocation& location,
                           const otlp::TraceId& trace_id, TraceLookupDetail detail,
                           objectstore::BatchStore* object_store, otlp::TraceBatch* out) {
  const std::string batch_id = batch.id().ToString();
  std::string path = JoinPath(batch_dir, kSpansFileName);
  std::unique_ptr<parquet::RandomAccessSource> source;
  absl::StatusOr<std::unique_ptr<FileSource>> local = OpenFileSource(fs, path);
  if (local.ok()) {
    source = *std::move(local);
  } else if (absl::IsNotFound(local.status()) && object_store == nullptr &&
             InstalledDataFileResolver() != nullptr &&
             InstalledDataFileResolver()->IsEvicted(batch.id())) {
    // Evicted (offload/evictor.h): ranged reads from the store the
    // resolver reads from, which is offload's.
    path = BatchObjectKey(batch.day(), batch.id(), kSpansFileName);
    source = std::make_unique<ObjectSource>(InstalledDataFileResolver()->store(), path,
                                            batch.meta().spans_parquet->bytes);
  } else if (absl::IsNotFound(local.status()) && object_store != nullptr &&
             batch.meta().spans_parquet.has_value()) {
    // Offloaded and gone locally: ranged reads from the store.
    path = BatchObjectKey(batch.day(), batch.id(), kSpansFileName);
    source = std::make_unique<ObjectSource>(*object_store, path, batch.meta().spans_parquet->bytes);
  } else {
    return local.status();
  }
  STRATA_ASSIGN_OR_RETURN(std::unique_ptr<SpansRangeReader> reader,
                          OpenSpans(state, source.get(), batch_id, path));
  if (detail == TraceLookupDetail::kSkeleton) reader->SkipSpanDetails();
  const size_t first_span = out->spans.size();
  STRATA_RETURN_IF_ERROR(reader->ReadSpans(location.first_row, location.end_row, out));
  // The index and the file must agree on what the rows hold; a stale or
  // damaged entry must not hand back another trace's spans.
  for (size_t i = first_span; i < out->spans.size(); ++i) {
    if (out->spans.trace_id[i] != trace_id) {
      return absl::DataLossError(fmt::format(
          "{}/{}: the entry of trace {} names rows [{}, {}) of {}, but row {} holds trace {}",
          batch_dir, kTraceIndexFileName, Hex(trace_id), location.first_row, location.end_row, path,
          location.first_row + (i - first_span), Hex(out->spans.trace_id[i])));
    }
  }
  return absl::OkStatus();
}

// The trace's rows in the batch whose directory is `batch_dir`, by a
// binary search of its spans.tidx.
absl::StatusOr<std::optional<TraceLocation>> FindInIndex(FileSystem& fs,
                                                         const std::string& batch_dir,
                                                         const BatchLookupState& state,
                                                         const otlp::TraceId& trace_id) {
  STRATA_ASSIGN_OR_RETURN(std::unique_ptr<RandomAccessFile> index,
                          fs.NewRandomAccessFile(JoinPath(batch_dir, kTraceIndexFileName)));
  return state.filter().Find(*index, trace_id);
}

}  // namespace

absl::StatusOr<bool> BatchHoldsTrace(FileSystem& fs, const std::string& data_dir,
                                     const LiveBatch& batch, const otlp::TraceId& trace_id) {
  const BatchLookupState* state = BatchLookupStateOf(batch);
  // Without a lookup state there is nothing to test: only a batch with no
  // spans has none.
  if (state == nullptr) return batch.meta().spans_parquet.has_value();
  if (!state->filter().MayContain(trace_id)) return false;
  STRATA_ASSIGN_OR_RETURN(const std::optional<TraceLocation> location,
                          FindInIndex(fs, BatchPath(data_dir, batch.dir()), *state, trace_id));
  return location.has_value();
}

absl::StatusOr<std::optional<otlp::TraceBatch>> LookupTrace(
    FileSystem& fs, const std::string& data_dir, const Snapshot& snapshot,
    const otlp::TraceId& trace_id, TraceLookupStats* stats, TraceLookupDetail detail,
    objectstore::BatchStore* object_store) {
  TraceLookupStats local;
  TraceLookupStats& s = stats != nullptr ? *stats : local;
  s = TraceLookupStats{};
  s.batches = snapshot.size();
  otlp::TraceBatch result;
  for (const std::shared_ptr<const LiveBatch>& batch : snapshot.batches()) {
    const BatchLookupState* state = BatchLookupStateOf(*batch);
    if (state == nullptr || !state->filter().MayContain(trace_id)) continue;
    ++s.filter_matches;
    const std::string batch_dir = BatchPath(data_dir, batch->dir());
    STRATA_ASSIGN_OR_RETURN(const std::optional<TraceLocation> location,
                            FindInIndex(fs, batch_dir, *state, trace_id));
    if (!location.has_value()) continue;
    ++s.batches_read;
    s.rows_read += location->end_row - location->first_row;
    STRATA_RETURN_IF_ERROR(ReadBatchRows(fs, batch_dir, *batch, *state, *location, trace_id, detail,
                                         object_store, &result));
  }
  if (s.batches_read == 0) return std::nullopt;
  SortSpans(&result.spans);
  return std::optional<otlp::TraceBatch>(std::move(result));
}

}  // namespace strata::storage
