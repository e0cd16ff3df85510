#include "storage/index/batch_lookup_state.h"

#include <utility>

#include "common/path.h"
#include "common/status_macros.h"
#include "fmt/format.h"

namespace strata::storage {

bool LookupCacheBudget::TryCharge(size_t bytes, size_t headroom_bytes) {
  if (bytes > limit_bytes_ || headroom_bytes > limit_bytes_ - bytes) return false;
  const size_t room = limit_bytes_ - bytes - headroom_bytes;  // what may be used before
  size_t used = used_bytes_.load(std::memory_order_relaxed);
  do {
    if (used > room) return false;
  } while (!used_bytes_.compare_exchange_weak(used, used + bytes, std::memory_order_relaxed));
  return true;
}

void LookupCacheBudget::Release(size_t bytes) {
  used_bytes_.fetch_sub(bytes, std::memory_order_relaxed);
}

BatchLookupState::~BatchLookupState() {
  MutexLock lock(&mu_);
  if (charged_bytes_ > 0) budget_->Release(charged_bytes_);
}

std::shared_ptr<const parquet::FileLayout> BatchLookupState::spans_layout() const {
  MutexLock lock(&mu_);
  return spans_layout_;
}

void BatchLookupState::CacheSpansLayout(std::shared_ptr<const parquet::FileLayout> layout) const {
  if (budget_ == nullptr || layout == nullptr) return;
  const size_t bytes = layout->MemoryBytes();
  MutexLock lock(&mu_);
  if (spans_layout_ != nullptr || !budget_->TryCharge(bytes)) return;
  spans_layout_ = std::move(layout);
  charged_bytes_ += bytes;
}

size_t BatchLookupState::DictionaryChargeBytes(const parquet::DictionaryPage& page) {
  // The body's and the entry starts' allocations, the page with its
  // shared_ptr control block, and a map slot (key, pointer, control byte),
  // rounded up.
  return page.body.capacity() + 1 + page.starts.capacity() * sizeof(uint32_t) +
         sizeof(parquet::DictionaryPage) + 64;
}

std::shared_ptr<const parquet::DictionaryPage> BatchLookupState::FindDictionary(
    size_t chunk) const {
  MutexLock lock(&mu_);
  auto it = dictionaries_.find(chunk);
  return it == dictionaries_.end() ? nullptr : it->second;
}

void BatchLookupState::OfferDictionary(size_t chunk,
                                       std::shared_ptr<const parquet::DictionaryPage> page) const {
  if (budget_ == nullptr || page == nullptr) return;
  const size_t bytes = DictionaryChargeBytes(*page);
  MutexLock lock(&mu_);
  if (dictionaries_.contains(chunk) || !budget_->TryCharge(bytes, budget_->limit_bytes() / 4)) {
    return;
  }
  dictionaries_.emplace(chunk, std::move(page));
  charged_bytes_ += bytes;
}

size_t BatchLookupState::cached_dictionaries() const {
  MutexLock lock(&mu_);
  return dictionaries_.size();
}

size_t BatchLookupState::cached_bytes() const {
  MutexLock lock(&mu_);
  return charged_bytes_;
}

absl::StatusOr<std::shared_ptr<const void>> LoadBatchLookupState(
    FileSystem& fs, const std::string& batch_dir, const BatchMeta& meta,
    const std::shared_ptr<LookupCacheBudget>& budget) {
  if (!meta.spans_tidx.has_value()) return std::shared_ptr<const void>();
  STRATA_ASSIGN_OR_RETURN(std::unique_ptr<RandomAccessFile> file,
                          fs.NewRandomAccessFile(JoinPath(batch_dir, kTraceIndexFileName)));
  absl::StatusOr<TraceFilter> filter = TraceFilter::Open(*file);
  if (filter.ok()) {
    if (absl::Status s = filter->Validate(*meta.spans.traces, meta.spans.rows); !s.ok()) {
      filter = s;
    }
  }
  if (!filter.ok()) {
    return absl::Status(
        filter.status().code(),
        fmt::format("batch {}: {}", batch_dir, std::string(filter.status().message())));
  }
  return std::shared_ptr<const void>(
      std::make_shared<const BatchLookupState>(*std::move(filter), budget));
}

}  // namespace strata::storage
