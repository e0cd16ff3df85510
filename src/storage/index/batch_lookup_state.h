#pragma once

// What a live batch with spans carries in memory for trace lookups (its
// catalog attachment, BatchRecord::attachment): the trace filter of its
// spans.tidx, and a cache, filled by the lookups that read the batch, of
// its spans.parquet layout (the parsed footer and every column chunk's
// OffsetIndex, parquet::FileLayout) and of the decompressed dictionary
// pages those lookups needed (parquet::DictionaryPageCache), so later
// lookups read no footer and no index and decompress only data pages
// (docs/format/trace-index.md, "In memory").
//
// The cache is bounded by a LookupCacheBudget shared by every batch of a
// Storage: a layout or a dictionary page is kept only while the bytes of
// everything kept stay under the budget's limit (dictionary pages under
// three quarters of it, so layouts, which save more per byte, keep room);
// past it, a lookup reads what it needs as it did without a cache.
// Everything a state keeps is freed, and its bytes given back to the
// budget, when the state is destroyed: when the batch is retired and no
// Snapshot or reader names it any more.
//
// Invariants:
//   1. The budget's used bytes are the sum of charged_bytes_ over all
//      states.
//   2. A state's layout, once set, never changes; nor does a chunk's
//      dictionary page once kept.
//
// Thread-safety: LookupCacheBudget and BatchLookupState are safe for
// concurrent use (the state is shared through const pointers; its cache is
// mutable behind mu_). Errors: none; a layout that does not fit is simply
// not kept.

#include <atomic>
#include <cstddef>
#include <memory>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "common/mutex.h"
#include "io/file_system.h"
#include "parquet/file_reader.h"
#include "storage/format/batch_meta.h"
#include "storage/index/trace_index.h"

namespace strata::storage {

// The bytes all batches' cached layouts may hold together.
class LookupCacheBudget {
 public:
  explicit LookupCacheBudget(size_t limit_bytes) : limit_bytes_(limit_bytes) {}
  LookupCacheBudget(const LookupCacheBudget&) = delete;
  LookupCacheBudget& operator=(const LookupCacheBudget&) = delete;

  // Reserves `bytes` and returns true when they fit under the limit with
  // `headroom_bytes` still free after them.
  [[nodiscard]] bool TryCharge(size_t bytes, size_t headroom_bytes = 0);
  // Gives back bytes a TryCharge() reserved.
  void Release(size_t bytes);

  size_t limit_bytes() const { return limit_bytes_; }
  size_t used_bytes() const { return used_bytes_.load(std::memory_order_relaxed); }

 private:
  const size_t limit_bytes_;
  // A counter updated with compare-and-swap: no lock, since nothing else
  // has to change with it.
  std::atomic<size_t> used_bytes_{0};
};

class BatchLookupState final : public parquet::DictionaryPageCache {
 public:
  // `budget` may be null: the state then caches nothing.
  BatchLookupState(TraceFilter filter, std::shared_ptr<LookupCacheBudget> budget)
      : filter_(std::move(filter)), budget_(std::move(budget)) {}
  // Gives the cached layout's bytes back to the budget.
  ~BatchLookupState() override;
  BatchLookupState(const BatchLookupState&) = delete;
  BatchLookupState& operator=(const BatchLookupState&) = delete;

  const TraceFilter& filter() const { return filter_; }

  // The cached layout of the batch's spans.parquet, or null.
  std::shared_ptr<const parquet::FileLayout> spans_layout() const ABSL_LOCKS_EXCLUDED(mu_);
  // Keeps `layout` (read from this batch's spans.parquet) if no layout is
  // kept yet and its bytes fit in the budget; otherwise does nothing.
  void CacheSpansLayout(std::shared_ptr<const parquet::FileLayout> layout) const
      ABSL_LOCKS_EXCLUDED(mu_);
  // parquet::DictionaryPageCache, for readers of the batch's spans.parquet
  // (ReaderOptions::dictionary_cache). A page is kept if its chunk has none
  // yet and its bytes fit with a quarter of the budget's limit left free.
  std::shared_ptr<const parquet::DictionaryPage> FindDictionary(size_t chunk) const override
      ABSL_LOCKS_EXCLUDED(mu_);
  void OfferDictionary(size_t chunk,
                       std::shared_ptr<const parquet::DictionaryPage> page) const override
      ABSL_LOCKS_EXCLUDED(mu_);
  // The bytes this state holds in its cache (charged to the budget).
  size_t cached_bytes() const ABSL_LOCKS_EXCLUDED(mu_);
  size_t cached_dictionaries() const ABSL_LOCKS_EXCLUDED(mu_);

  // What one kept dictionary page is charged: its body and a fixed
  // allowance for the page, its control block and its map slot.
  static size_t DictionaryChargeBytes(const parquet::DictionaryPage& page);

 private:
  // Constant after construction.
  const TraceFilter filter_;
  const std::shared_ptr<LookupCacheBudget> budget_;

  mutable Mutex mu_;
  mutable std::shared_ptr<const parquet::FileLayout> spans_layout_ ABSL_GUARDED_BY(mu_);
  mutable absl::flat_hash_map<size_t, std::shared_ptr<const parquet::DictionaryPage>> dictionaries_
      ABSL_GUARDED_BY(mu_);
  mutable size_t charged_bytes_ ABSL_GUARDED_BY(mu_) = 0;
};

// The lookup state of a batch with spans: its trace filter, read from
// `batch_dir`'s spans.tidx and validated against `meta`, caching within
// `budget` (null: no cache). Null when the batch has no spans. Errors: the
// FileSystem's, or the trace index's checks, naming the batch.
[[nodiscard]] absl::StatusOr<std::shared_ptr<const void>> LoadBatchLookupState(
    FileSystem& fs, const std::string& batch_dir, const BatchMeta& meta,
    const std::shared_ptr<LookupCacheBudget>& budget);

}  // namespace strata::storage
